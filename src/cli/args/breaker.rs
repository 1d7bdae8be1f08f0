//! `--breaker` and its circuit's rules: stop calling a failing service.

use std::time::Duration;

use clap::{Args, ValueHint};

use crate::cli::args::BREAKER;
use crate::cli::args::store::Kept;
use crate::cli::id;
use crate::cli::provenance::Provenance;
use crate::cli::refuse::{fmt, usage};
use crate::cli::values::parse_breaker_exit_code;
use crate::duration::parse as parse_duration;
use crate::state::breaker::{
    DEFAULT_AFTER, DEFAULT_COOLDOWN, DEFAULT_COOLDOWN_MAX, EXIT_OPEN, MAX_COOLDOWN, Params,
    Settings,
};

#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct BreakerArgs {
    /// Stop calling a failing service: a circuit shared by every retry naming it
    ///
    /// A circuit breaker shared by every retry on this host (or, with
    /// --store, in the fleet) that names it. After --breaker-after runs in a
    /// row gave up on transient failures, the circuit opens: a run does not
    /// start COMMAND and exits 75 (--breaker-exit-code) at once, saying when
    /// a probe may run. After
    /// the cooldown one run, circuit-wide, probes: its success closes the
    /// circuit, its failure opens it again for a longer cooldown. A probe
    /// that dies holds the circuit no longer (on a host the kernel frees its
    /// lock; in Redis its 30s lease, renewed while it lives, runs out); one
    /// that hangs, for its --max-time at most, else 10m. A success anywhere
    /// closes it. State that cannot be used safely (another user's)
    /// or a store that fails is skipped with one warning, and the run goes
    /// ahead
    #[arg(long, env = "RETRY_BREAKER", value_name = "NAME",
          value_parser = crate::state::breaker::parse_name,
          value_hint = ValueHint::Other, help_heading = BREAKER, hide_short_help = true)]
    pub breaker: Option<String>,

    /// Runs in a row that gave up on transient failures (attempts or time ran
    /// out, the budget refused a retry) before the circuit opens [default: 3]
    // No clap default (its default is said above, and held to
    // `breaker::DEFAULT_AFTER` by a test): a run without --breaker parses
    // nothing for it, so start-up does not pay for the breaker.
    #[arg(long, env = "RETRY_BREAKER_AFTER", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..), value_hint = ValueHint::Other,
          allow_hyphen_values = true, help_heading = BREAKER, hide_short_help = true)]
    pub breaker_after: Option<u32>,

    /// How long an open circuit stays open before one run may probe; after
    /// each failed probe longer (doubled, equal jitter, up to
    /// --breaker-cooldown-max) [default: 30s]
    // No clap default, as --breaker-after.
    #[arg(long, env = "RETRY_BREAKER_COOLDOWN", value_name = "DURATION",
          value_parser = parse_duration, value_hint = ValueHint::Other,
          allow_hyphen_values = true, help_heading = BREAKER, hide_short_help = true)]
    pub breaker_cooldown: Option<Duration>,

    /// The longest cooldown failed probes grow it to (given, at least
    /// --breaker-cooldown, and at most 24h, as the cooldown; a longer
    /// cooldown is not grown): the last host resumes within about this and
    /// one period of its job after the service is back [default: 4m]
    // No clap default, as --breaker-after.
    #[arg(long, env = "RETRY_BREAKER_COOLDOWN_MAX", value_name = "DURATION",
          value_parser = parse_duration, value_hint = ValueHint::Other,
          allow_hyphen_values = true, help_heading = BREAKER, hide_short_help = true)]
    pub breaker_cooldown_max: Option<Duration>,

    /// The exit status of a run the open circuit did not let start, or
    /// whose every attempt --throttle rejected (1 to 255, but not retry's
    /// own 2 and 124 to 127): one no command of yours exits with, to tell a
    /// skipped run from a command's own 75 without reading the log
    /// [default: 75]
    // No clap default, as --breaker-after.
    #[arg(long, env = "RETRY_BREAKER_EXIT_CODE", value_name = "CODE",
          value_parser = parse_breaker_exit_code, value_hint = ValueHint::Other,
          allow_hyphen_values = true, help_heading = BREAKER, hide_short_help = true)]
    pub breaker_exit_code: Option<u8>,
}

/// A circuit's rules, checked, before it has a name and a store.
#[derive(Clone, Debug)]
pub struct Circuit {
    pub params: Params,
    exit_code: i32,
}

impl BreakerArgs {
    /// No breaker, as a run that sets none parses (`RunArgs::from`).
    pub fn unset() -> Self {
        BreakerArgs {
            breaker: None,
            breaker_after: None,
            breaker_cooldown: None,
            breaker_cooldown_max: None,
            breaker_exit_code: None,
        }
    }
}

impl BreakerArgs {
    /// The circuit's rules, for a run and for `--breaker-status` alike: a
    /// cooldown of zero, or a longest cooldown below the first, is refused.
    pub fn resolve(&self, provenance: &Provenance) -> Result<Circuit, clap::Error> {
        if self.breaker_cooldown == Some(Duration::ZERO) {
            return Err(usage(format!(
                "{} would close the circuit as soon as it opens; give a cooldown such as 1m",
                provenance.name(id::BREAKER_COOLDOWN, &"0s")
            )));
        }
        let given = [
            (id::BREAKER_COOLDOWN, self.breaker_cooldown),
            (id::BREAKER_COOLDOWN_MAX, self.breaker_cooldown_max),
        ];
        for (id, cooldown) in given {
            if let Some(cooldown) = cooldown.filter(|c| *c > MAX_COOLDOWN) {
                return Err(usage(format!(
                    "{} is over 24h, the longest a circuit may stay open (every run would be \
                     skipped for longer; other hosts trust a record no further)",
                    provenance.name(id, &fmt(cooldown)),
                )));
            }
        }
        if let Some(message) = self.max_short(provenance) {
            return Err(usage(message));
        }
        Ok(Circuit {
            params: Params {
                after: self.breaker_after.unwrap_or(DEFAULT_AFTER),
                cooldown: self.breaker_cooldown.unwrap_or(DEFAULT_COOLDOWN),
                max: self.breaker_cooldown_max.unwrap_or(DEFAULT_COOLDOWN_MAX),
            },
            exit_code: self.breaker_exit_code.map_or(EXIT_OPEN, i32::from),
        })
    }

    /// `--breaker-cooldown-max` below the first cooldown (given, or the
    /// default): the cooldown could not grow to it.
    fn max_short(&self, provenance: &Provenance) -> Option<String> {
        let max = self.breaker_cooldown_max?;
        let cooldown = self.breaker_cooldown.unwrap_or(DEFAULT_COOLDOWN);
        (max < cooldown).then(|| {
            let (first, fix) = match self.breaker_cooldown {
                Some(_) => (
                    provenance.name(id::BREAKER_COOLDOWN, &fmt(cooldown)),
                    String::new(),
                ),
                None => (
                    format!("the default --breaker-cooldown, {}", fmt(cooldown)),
                    format!("; set --breaker-cooldown-max to {} or more", fmt(cooldown)),
                ),
            };
            format!(
                "{} is below {first}: the longest cooldown must be at least the first{fix}",
                provenance.name(id::BREAKER_COOLDOWN_MAX, &fmt(max)),
            )
        })
    }
}

impl Circuit {
    /// The exit status of a skipped run (`--breaker-exit-code`), which a
    /// run the throttle let no attempt of exits with too.
    pub fn exit_code(&self) -> i32 {
        self.exit_code
    }

    /// The circuit called `name` (`--breaker` or `--breaker-status`), kept
    /// in `kept`; a probe holds it for the run's `--max-time` at most.
    pub fn named(self, name: String, max_time: Option<Duration>, kept: Kept) -> Settings {
        Settings {
            name,
            params: self.params,
            lease: crate::state::breaker::lease(max_time),
            exit_code: self.exit_code,
            store: kept.store,
            timeout: kept.timeout,
        }
    }
}
