//! How long an attempt and the run may take, and the random seed.

use std::time::Duration;

use clap::{Args, ValueHint};

use crate::cli::id;
use crate::cli::provenance::Provenance;
use crate::cli::refuse::usage;
use crate::duration::parse as parse_duration;
use crate::run::Limits;

#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct ProcessArgs {
    /// Limit for one attempt, which then counts as exit code 124
    ///
    /// On expiry the command and its descendants get SIGTERM, then SIGKILL
    /// after --kill-after (Windows: Ctrl-Break to its console process group,
    /// then its Job Object ended; without a console, the job at once).
    #[arg(short, long, env = "RETRY_TIMEOUT", value_name = "DURATION",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true)]
    pub timeout: Option<Duration>,

    /// Grace between SIGTERM and SIGKILL when an attempt is stopped
    #[arg(long, env = "RETRY_KILL_AFTER", value_name = "DURATION", default_value = "5s",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          hide_short_help = true)]
    pub kill_after: Duration,

    /// Limit for the whole run, its sleeps included
    ///
    /// A sleep that would end past it is not taken, and at the limit the
    /// running attempt is stopped as by --timeout.
    #[arg(short, long, env = "RETRY_MAX_TIME", value_name = "DURATION",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true)]
    pub max_time: Option<Duration>,

    /// Fixed random seed, for reproducible schedules and tests only: clients
    /// sharing a seed sleep in lockstep, which defeats jitter
    #[arg(
        long,
        env = "RETRY_SEED",
        value_name = "U64",
        allow_hyphen_values = true,
        value_hint = ValueHint::Other,
        hide_short_help = true
    )]
    pub seed: Option<u64>,
}

impl ProcessArgs {
    /// The limits and the seed: zero is no limit but a run that could not
    /// start, so it is refused (no limit is the option left out).
    pub fn resolve(&self, provenance: &Provenance) -> Result<Limits, clap::Error> {
        if self.timeout == Some(Duration::ZERO) {
            return Err(usage(format!(
                "{} would stop every attempt before it starts; leave it out for no limit",
                provenance.name(id::TIMEOUT, &"0s")
            )));
        }
        if self.max_time == Some(Duration::ZERO) {
            return Err(usage(format!(
                "{} would stop the run before it starts; leave it out for no limit",
                provenance.name(id::MAX_TIME, &"0s")
            )));
        }
        Ok(Limits {
            timeout: self.timeout,
            kill_after: self.kill_after,
            max_time: self.max_time,
            seed: self.seed,
        })
    }
}
