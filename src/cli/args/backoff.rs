//! The sleeps between attempts, and how many attempts: `--jitter`,
//! `--base`, `--cap`, `--factor`, `--max-attempts`.

use std::time::Duration;

use clap::{Args, ValueHint};

use crate::cli::choices::JitterChoice;
use crate::cli::id;
use crate::cli::provenance::Provenance;
use crate::cli::refuse::{fmt, usage};
use crate::cli::values::{parse_attempts, parse_factor};
use crate::duration::parse as parse_duration;
use crate::policy::Attempts;
use crate::strategy::{Backoff, Jitter, Retries};

#[derive(Debug, Args)]
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
}

impl BackoffArgs {
    /// The schedule of a run, a plan or a simulation: a cap below the base
    /// is refused.
    pub fn resolve(&self, provenance: &Provenance) -> Result<Pending, clap::Error> {
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
        })
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
        })
    }
}
