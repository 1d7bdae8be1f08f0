//! The sleeps between attempts, and how many attempts: `--jitter`,
//! `--base`, `--throttle-base`, `--cap`, `--factor`, `--max-attempts`.

use std::time::Duration;

use clap::{Args, ValueHint};

use crate::cli::choices::JitterChoice;
use crate::cli::id;
use crate::cli::provenance::Provenance;
use crate::cli::refuse::{fmt, usage};
use crate::cli::values::{parse_attempts, parse_factor};
use crate::duration::parse as parse_duration;
use crate::policy::Attempts;
use crate::strategy::{Backoff, DEFAULT_THROTTLE_BASE, Jitter, Retries};

/// The shortest `--throttle-base`: a throttled failure's sleep is never
/// drawn on nothing.
const MIN_THROTTLE_BASE: Duration = Duration::from_millis(1);

#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct BackoffArgs {
    /// Backoff strategy of the sleeps between attempts
    ///
    /// `all` only with --simulate.
    #[arg(short, long, env = "RETRY_JITTER", value_enum, default_value_t = JitterChoice::Full)]
    pub jitter: JitterChoice,

    /// Base delay: the first sleep's ceiling
    #[arg(short, long, env = "RETRY_BASE", value_name = "DURATION", default_value = "1s",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true)]
    pub base: Duration,

    /// Base delay after a throttled failure (the server asked to slow down)
    ///
    /// The first sleep's ceiling after a throttled failure (a line of
    /// --throttle-if-output or of the preset's throttle rule, or a server's
    /// wait read by --delay-from-output), drawn with the same --cap, --factor
    /// and --jitter as --base's. 1ms at least; left at its default, it is at
    /// most --cap [default: 10s]
    // No clap default (said above, and held to `DEFAULT_THROTTLE_BASE` by a
    // test): a run that names no throttle base parses nothing for it, so
    // start-up does not pay for it.
    #[arg(long, env = "RETRY_THROTTLE_BASE", value_name = "DURATION",
          value_parser = parse_duration,
          value_hint = ValueHint::Other, allow_hyphen_values = true, hide_short_help = true)]
    pub throttle_base: Option<Duration>,

    /// The largest sleep
    #[arg(short, long, env = "RETRY_CAP", value_name = "DURATION", default_value = "20s",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true)]
    pub cap: Duration,

    /// Growth of the ceiling per attempt for none/full/equal (1 keeps it constant)
    #[arg(short, long, env = "RETRY_FACTOR", value_name = "F", default_value = "2",
          value_parser = parse_factor, value_hint = ValueHint::Other, allow_hyphen_values = true,
          hide_short_help = true)]
    pub factor: f64,

    /// Total runs of COMMAND, the first included, or `unlimited`
    #[arg(short = 'n', long, env = "RETRY_MAX_ATTEMPTS", value_name = "N|unlimited",
          default_value = "5", value_parser = parse_attempts, value_hint = ValueHint::Other, allow_hyphen_values = true)]
    pub max_attempts: Attempts,
}

/// The schedule, checked, before the mode says whether `--jitter all`
/// may stand.
#[derive(Clone, Copy, Debug)]
pub struct Pending {
    /// `None`: `all`.
    jitter: Option<Jitter>,
    base: Duration,
    cap: Duration,
    factor: f64,
    attempts: Attempts,
    throttle_base: Duration,
}

impl BackoffArgs {
    /// The schedule of a run, a plan or a simulation: a cap below the base
    /// or a throttle base given is refused, and so is a throttle base
    /// under 1 ms; the default throttle base is at most the cap (so that
    /// `--cap 2s` alone stands).
    pub fn resolve(&self, provenance: &Provenance) -> Result<Pending, clap::Error> {
        let throttle_base = self.throttle_base(provenance)?;
        if self.cap < self.base {
            let (cap, base) = (fmt(self.cap), fmt(self.base));
            let fix = if provenance.is_default(id::CAP) {
                format!("; set --cap to {base} or more")
            } else if provenance.is_default(id::BASE) {
                format!("; set --base to {cap} or less")
            } else {
                String::new()
            };
            return Err(usage(format!(
                "{} is below {}: the cap must be at least the base{fix}",
                provenance.name(id::CAP, &cap),
                provenance.name(id::BASE, &base),
            )));
        }
        Ok(Pending {
            jitter: self.jitter.single(),
            base: self.base,
            cap: self.cap,
            factor: self.factor,
            attempts: self.max_attempts,
            throttle_base,
        })
    }

    /// `--throttle-base`, checked as `--base` is against the cap.
    fn throttle_base(&self, provenance: &Provenance) -> Result<Duration, clap::Error> {
        let named = |value| provenance.name(id::THROTTLE_BASE, &fmt(value));
        let Some(throttle_base) = self.throttle_base else {
            return Ok(DEFAULT_THROTTLE_BASE.min(self.cap));
        };
        if throttle_base < MIN_THROTTLE_BASE {
            return Err(usage(format!(
                "{} is below 1ms: a throttled failure's sleep needs a base",
                named(throttle_base)
            )));
        }
        if self.cap < throttle_base {
            let fix = match provenance.is_default(id::CAP) {
                true => format!("; set --cap to {} or more", fmt(throttle_base)),
                false => String::new(),
            };
            return Err(usage(format!(
                "{} is below {}: the cap must be at least the throttle base{fix}",
                provenance.name(id::CAP, &fmt(self.cap)),
                named(throttle_base),
            )));
        }
        Ok(throttle_base)
    }
}

impl Pending {
    /// The backoff of the mode: `--jitter all` is refused outside
    /// `--simulate` (`simulate`), the one mode that compares every strategy.
    pub fn for_mode(self, provenance: &Provenance, simulate: bool) -> Result<Retries, clap::Error> {
        let jitter = match (self.jitter, simulate) {
            (Some(jitter), _) => jitter,
            // The run's own backoff is unused when every strategy is simulated.
            (None, true) => Jitter::Full,
            (None, false) => {
                return Err(usage(format!(
                    "{} compares strategies in --simulate; a run or a plan needs one of none, full, equal, decorrelated",
                    provenance.name(id::JITTER, &"all")
                )));
            }
        };
        Ok(Retries {
            backoff: Backoff {
                jitter,
                base: self.base,
                cap: self.cap,
                factor: self.factor,
            },
            attempts: self.attempts,
            throttle_base: self.throttle_base,
        })
    }
}
