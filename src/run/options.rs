//! What a run of COMMAND is given, validated by `cli::config`.

use std::ffi::OsString;
use std::time::Duration;

use crate::events;
use crate::policy::{Attempts, Policy};
use crate::run::log::{LogFormat, Verbosity};
use crate::run::supervisor::Foreground;
use crate::run::{decide, pipes};
use crate::state::{breaker, budget};
use crate::strategy::Backoff;

/// Everything a run of COMMAND needs, validated (`cli::config`).
#[derive(Debug)]
pub struct Options {
    pub backoff: Backoff,
    pub attempts: Attempts,
    pub policy: Policy,
    pub timeout: Option<Duration>,
    pub kill_after: Duration,
    pub max_time: Option<Duration>,
    pub seed: Option<u64>,
    pub log_format: LogFormat,
    /// `--log-file`: where retry's lines go instead of stderr.
    pub log_file: Option<std::path::PathBuf>,
    pub verbosity: Verbosity,
    pub foreground: Foreground,
    /// `--on-retry`: a shell command run between a failed attempt and its sleep.
    pub on_retry: Option<String>,
    /// `--stdin`, `--stdout-once` and the output conditions.
    pub pipes: pipes::Settings,
    /// `--budget`: the shared retry budget's name and parameters.
    pub budget: Option<budget::Settings>,
    /// `--breaker`: the shared circuit's name and parameters.
    pub breaker: Option<breaker::Settings>,
    /// `--metrics-dir`, `--statsd` and their job: the run's metrics (`lib.rs`
    /// feeds them its events).
    pub metrics: crate::metrics::Settings,
    /// The preset that judges the run, named or chosen by the program it
    /// wraps (`preset::choose`), and why: `-v` and the JSON log say so.
    pub preset: Option<events::PresetLine>,
    /// Said before the first attempt: why the user's presets file was
    /// ignored, a preset named for another program.
    pub preset_warnings: Vec<String>,
    /// The preset's words for the rules that stop a run (give-up lines).
    pub labels: decide::Labels,
    /// What to do when the server asked to slow down and no wait of its
    /// could be seen (the preset's `slow-down-if-output.advice`, as a
    /// warning's words): said once a run.
    pub slow_down_advice: Option<String>,
    /// What to execute: the program and its arguments (`/bin/sh -c …` with `--shell`).
    pub program: OsString,
    pub args: Vec<OsString>,
}
