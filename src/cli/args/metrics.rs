//! Where a run's metrics go: node_exporter's textfile collector, StatsD.

use clap::{Args, ValueHint};

use crate::cli::args::METRICS;
use crate::cli::values::parse_switch;
use crate::metrics::Settings;

#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct MetricsArgs {
    /// Write the job's series for node_exporter's textfile collector in this directory
    ///
    /// Write the job's series for node_exporter's textfile collector
    /// (`--collector.textfile.directory`) in this directory, as
    /// retry_<job>.prom, replaced whole at the end of each run: when its
    /// last run started, its last success, duration, attempts, sleep, exit
    /// status and outcome, and counters of runs, attempts, retries and
    /// sleep that each run adds to (under a lock beside the file); with
    /// --breaker, the circuit's series in retry-breaker-<name>.prom. The
    /// directory must exist and be writable; a write that fails at the end
    /// is one warning
    #[arg(long, env = "RETRY_METRICS_DIR", value_name = "DIR", value_hint = ValueHint::DirPath,
          help_heading = METRICS, hide_short_help = true)]
    pub metrics_dir: Option<std::path::PathBuf>,

    /// Send counters and timings to this StatsD server over UDP
    ///
    /// Send counters and timings to this StatsD server over UDP, fire and
    /// forget: per attempt retry.<job>.attempts and .attempt_duration, per
    /// run retry.<job>.runs.<outcome>, .retries, .run_duration and
    /// .sleep_duration. HOST is a name (looked up off the run's path; at
    /// most 100ms is waited for it at the end), an IPv4 address or an IPv6
    /// one in brackets; a server that is absent costs nothing
    #[arg(long, env = "RETRY_STATSD", value_name = "HOST:PORT",
          value_parser = crate::metrics::statsd::parse, value_hint = ValueHint::Hostname,
          help_heading = METRICS, hide_short_help = true)]
    pub statsd: Option<crate::metrics::statsd::Target>,

    /// Give the job and outcome as DogStatsD tags (|#retry_job:…,outcome:…), not in the names
    #[arg(long, env = "RETRY_STATSD_TAGS", value_parser = parse_switch,
          help_heading = METRICS, hide_short_help = true)]
    pub statsd_tags: bool,

    /// The job's name in the metrics [default: the program's name and a hash
    /// of the command line, e.g. curl-3f9a2c1b]
    ///
    /// The job's name in the metrics: the textfile's name and its retry_job
    /// label, StatsD's names or tags. 1 to 100 ASCII letters, digits, `_`,
    /// `-` and `.` [default: the program's base name and a hash of the whole
    /// command line, e.g. curl-3f9a2c1b, the same on every run of that line]
    #[arg(long, env = "RETRY_JOB", value_name = "NAME", value_parser = crate::metrics::job::parse,
          value_hint = ValueHint::Other, help_heading = METRICS, hide_short_help = true)]
    pub job: Option<crate::metrics::job::Job>,
}

impl MetricsArgs {
    /// No metrics, as a run that asks for none parses (`RunArgs::from`).
    pub fn unset() -> Self {
        MetricsArgs {
            metrics_dir: None,
            statsd: None,
            statsd_tags: false,
            job: None,
        }
    }
}

impl MetricsArgs {
    /// A run's metrics. Nothing to check here: each value's parser did
    /// (`--metrics-dir` is opened before the run, `Settings::check_dir`).
    pub fn resolve(self) -> Settings {
        Settings {
            job: self.job,
            dir: self.metrics_dir,
            statsd: self.statsd,
            statsd_tags: self.statsd_tags,
        }
    }
}
