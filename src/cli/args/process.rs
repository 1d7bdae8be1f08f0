//! How long an attempt and the run may take, the random seed, the delay
//! before the first attempt (`--splay`) and when a long attempt starts the
//! attempts anew (`--reset-after`).

use std::time::Duration;

use clap::{Args, ValueHint};

use crate::cli::id;
use crate::cli::provenance::Provenance;
use crate::cli::refuse::{fmt, usage};
use crate::cli::values::parse_switch;
use crate::duration::parse as parse_duration;
use crate::run::Limits;
use crate::run::splay::Splay;

#[derive(Debug, Args)]
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

    /// Sleep a random time below DURATION before the first attempt
    ///
    /// So that hosts whose cron fires at one instant reach a service
    /// spread over DURATION (systemd's RandomizedDelaySec=). Counted in
    /// --max-time, which must be longer; a signal ends it and the run.
    #[arg(long, env = "RETRY_SPLAY", value_name = "DURATION",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          hide_short_help = true)]
    pub splay: Option<Duration>,

    /// Make --splay's delay this host's own, the same every run
    ///
    /// Derived from the host's name and the command line by a fixed hash,
    /// not drawn (systemd's FixedRandomDelay=): each host keeps its slot.
    #[arg(long, env = "RETRY_SPLAY_STABLE", value_parser = parse_switch, hide_short_help = true)]
    pub splay_stable: bool,

    /// An attempt that ran this long before failing starts the attempts anew
    ///
    /// The next sleep is the first sleep again and the next attempt is
    /// attempt 1 ($RETRY_ATTEMPT too): --max-attempts then bounds failures
    /// in a row. --max-time still bounds the whole run, and --on-exit's
    /// RETRY_ATTEMPTS, the metrics and the budget count every attempt.
    #[arg(long, env = "RETRY_RESET_AFTER", value_name = "DURATION",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          hide_short_help = true)]
    pub reset_after: Option<Duration>,
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
            splay: self.splay(provenance)?,
            reset_after: self.reset_after(provenance)?,
        })
    }

    /// `--splay`, below `--max-time` (the run's time would be gone before
    /// its first attempt); `--splay-stable` only with it.
    fn splay(&self, provenance: &Provenance) -> Result<Option<Splay>, clap::Error> {
        let Some(max) = self.splay else {
            return match self.splay_stable {
                true => Err(usage(format!(
                    "{} needs --splay: it makes --splay's delay this host's own",
                    provenance.option(id::SPLAY_STABLE)
                ))),
                false => Ok(None),
            };
        };
        if let Some(max_time) = self.max_time
            && max >= max_time
        {
            return Err(usage(format!(
                "{} is not below {}: the splay would use up the run's time before its first attempt",
                provenance.name(id::SPLAY, &fmt(max)),
                provenance.name(id::MAX_TIME, &fmt(max_time)),
            )));
        }
        // No splay is no delay, and no draw.
        Ok((!max.is_zero()).then_some(Splay {
            max,
            stable: self.splay_stable,
        }))
    }

    /// `--reset-after`: not zero (every failure would reset, and the run
    /// never end), and below `--max-time` (no attempt could run that long).
    fn reset_after(&self, provenance: &Provenance) -> Result<Option<Duration>, clap::Error> {
        let Some(after) = self.reset_after else {
            return Ok(None);
        };
        if after.is_zero() {
            return Err(usage(format!(
                "{} would start the attempts anew after every failure, and the run would never give up; leave it out to never reset",
                provenance.name(id::RESET_AFTER, &"0s")
            )));
        }
        if let Some(max_time) = self.max_time
            && after >= max_time
        {
            return Err(usage(format!(
                "{} is not below {}: no attempt could run that long, so it would never apply",
                provenance.name(id::RESET_AFTER, &fmt(after)),
                provenance.name(id::MAX_TIME, &fmt(max_time)),
            )));
        }
        Ok(Some(after))
    }
}
