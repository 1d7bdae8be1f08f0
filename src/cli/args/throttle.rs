//! `--throttle` and its rule's parameters: reject attempts locally while
//! the service accepts too few of them; and `--throttle-status`.
//!
//! Not a part of a run's lean command (`cli::parse_from`): a run that
//! uses no throttle pays nothing for its options (each option clap builds
//! is some 3,000 instructions of `retry -- true`). A line that names one,
//! or a `RETRY_THROTTLE*` variable, is parsed in full.

use std::time::Duration;

use clap::{Args, ValueHint};

use crate::cli::args::store::Kept;
use crate::cli::args::{MODES, THROTTLE};
use crate::cli::id;
use crate::cli::provenance::Provenance;
use crate::cli::refuse::{fmt, usage};
use crate::cli::values::parse_throttle_k;
use crate::duration::parse as parse_duration;
use crate::state::throttle::{DEFAULT_K, DEFAULT_WINDOW, MAX_WINDOW, MIN_WINDOW, Params, Settings};

#[derive(Clone, Debug, Default, Args)]
#[group(skip)]
pub struct ThrottleArgs {
    /// Reject attempts locally while the service accepts too few: a throttle shared by every retry naming it
    ///
    /// Client-side adaptive throttling (the SRE book's), shared by every
    /// retry on this host (or, with --store, in the fleet) that names it:
    /// over a sliding window it counts the attempts made and those the
    /// service accepted (not failed and retried), and rejects each attempt,
    /// first ones included, with probability max(0, (requests - K ×
    /// accepts) / (requests + 1)). A rejected attempt is not run: it counts
    /// as a throttled failure and is retried on --throttle-base. A run whose every
    /// attempt was rejected exits 75 (--breaker-exit-code). State that
    /// cannot be used safely or trusted, or a store that fails, is skipped
    /// with one warning, and the attempts run
    #[arg(long, env = "RETRY_THROTTLE", value_name = "NAME",
          value_parser = crate::state::throttle::parse_name,
          value_hint = ValueHint::Other, help_heading = THROTTLE, hide_short_help = true)]
    pub throttle: Option<String>,

    /// K: how many attempts per accepted one the throttle lets through
    /// before it rejects any (a number above 0; larger rejects less; the
    /// SRE book's is 2) [default: 4]
    // No clap default (its default is said above, and held to
    // `throttle::DEFAULT_K` by a test): a run without --throttle parses
    // nothing for it, so start-up does not pay for the throttle.
    #[arg(long, env = "RETRY_THROTTLE_K", value_name = "K",
          value_parser = parse_throttle_k, value_hint = ValueHint::Other,
          allow_hyphen_values = true, help_heading = THROTTLE, hide_short_help = true)]
    pub throttle_k: Option<f64>,

    /// The sliding window over which the throttle counts attempts and
    /// accepts (1s to 24h) [default: 2m]
    // No clap default, as --throttle-k.
    #[arg(long, env = "RETRY_THROTTLE_WINDOW", value_name = "DURATION",
          value_parser = parse_duration, value_hint = ValueHint::Other,
          allow_hyphen_values = true, help_heading = THROTTLE, hide_short_help = true)]
    pub throttle_window: Option<Duration>,

    /// Print the state of the adaptive throttle NAME, and run nothing
    ///
    /// The probability that it rejects an attempt now, and the attempts and
    /// accepts it counted over its window; with --store, the fleet's. With
    /// --metrics-dir or --statsd, the throttle's series too (as every run
    /// with --throttle writes them).
    #[arg(long, value_name = "NAME", group = "mode", conflicts_with = "command",
          value_parser = crate::state::throttle::parse_name,
          value_hint = ValueHint::Other, help_heading = MODES, hide_short_help = true)]
    pub throttle_status: Option<String>,
}

/// The variables of the throttle's options: a run whose environment sets
/// one is parsed in full, as one that names an option does.
pub const VARIABLE_PREFIX: &str = "RETRY_THROTTLE";

/// A throttle's rule, checked, before it has a name and a store.
#[derive(Clone, Debug)]
pub struct Throttle {
    pub params: Params,
}

impl ThrottleArgs {
    /// The throttle's rule, for a run and for `--throttle-status` alike: a
    /// window under a second (it would forget between two attempts) or over
    /// a day is refused.
    pub fn resolve(&self, provenance: &Provenance) -> Result<Throttle, clap::Error> {
        let window = self.throttle_window.unwrap_or(DEFAULT_WINDOW);
        if window < MIN_WINDOW {
            return Err(usage(format!(
                "{} is under {}: the throttle would forget what it counted between two attempts",
                provenance.name(id::THROTTLE_WINDOW, &fmt(window)),
                fmt(MIN_WINDOW)
            )));
        }
        if window > MAX_WINDOW {
            return Err(usage(format!(
                "{} is over 24h: a run would be throttled by what happened that long ago",
                provenance.name(id::THROTTLE_WINDOW, &fmt(window)),
            )));
        }
        Ok(Throttle {
            params: Params {
                k: self.throttle_k.unwrap_or(DEFAULT_K),
                window_ms: u64::try_from(window.as_millis()).unwrap_or(u64::MAX),
            },
        })
    }
}

impl Throttle {
    /// The throttle called `name` (`--throttle` or `--throttle-status`),
    /// kept in `kept`; a run every attempt of which it rejects exits
    /// `exit_code` (`--breaker-exit-code`).
    pub fn named(self, name: String, kept: Kept, exit_code: i32) -> Settings {
        Settings {
            name,
            params: self.params,
            store: kept.store,
            timeout: kept.timeout,
            exit_code,
        }
    }
}
