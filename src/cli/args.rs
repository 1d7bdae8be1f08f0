//! Every option of a run (and the modes' switches): its help, its
//! `RETRY_*` variable and its parser. `simulation` holds the options only
//! --plan and --simulate read.

pub mod breaker;
pub mod budget;
pub mod metrics;
pub mod store;

use std::ffi::OsString;
use std::time::Duration;

use clap::{Args, ValueHint};
use regex::bytes::Regex;

use crate::cli::args::breaker::BreakerArgs;
use crate::cli::args::budget::BudgetArgs;
use crate::cli::args::metrics::MetricsArgs;
use crate::cli::args::store::StoreArgs;
use crate::cli::choices::{ForegroundChoice, JitterChoice, LogFormatChoice, StdinChoice};
use crate::cli::generate::Shell;
use crate::cli::provenance::Provenance;
use crate::cli::values::{
    PresetName, parse_attempts, parse_factor, parse_hint_regex, parse_regex, parse_retry_on,
    parse_switch,
};
use crate::codes::CodeSet;
use crate::duration::parse as parse_duration;
use crate::policy::Attempts;
use crate::size::Size;

/// Every option but those of `SimulationArgs`: what a run reads, the budget's
/// and the modes' switches. Parsed alone when neither --plan nor --simulate
/// is asked for (see `parse_from`).
#[derive(Debug, Args)]
#[group(skip)]
pub struct RunArgs {
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

    /// Exit codes that are retried (`none`: only on --retry-if-output);
    /// other failing codes stop at once
    ///
    /// [default: every code that is not a success, except 126 and 127 (the
    /// command cannot run) and 141 (killed by SIGPIPE: its reader went away)]
    #[arg(long, env = "RETRY_RETRY_ON", value_name = "CODES|none",
          value_parser = parse_retry_on, value_hint = ValueHint::Other)]
    pub retry_on: Option<CodeSet>,

    /// Exit codes that stop at once, even if --retry-on covers them
    #[arg(long, env = "RETRY_FATAL_ON", value_name = "CODES", value_hint = ValueHint::Other)]
    pub fatal_on: Option<CodeSet>,

    /// Exit codes that count as success
    #[arg(
        long,
        env = "RETRY_SUCCESS_ON",
        value_name = "CODES",
        default_value = "0",
        value_hint = ValueHint::Other,
        hide_short_help = true
    )]
    pub success_on: CodeSet,

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

    /// How retry's own log lines are written
    #[arg(long, env = "RETRY_LOG_FORMAT", value_enum, default_value_t = LogFormatChoice::Auto,
          help_heading = "Logging")]
    pub log_format: LogFormatChoice,

    /// Append retry's own log lines to this file instead of stderr
    ///
    /// Append retry's own log lines to this file instead of stderr, which
    /// then carries only the command's (`--log-file /dev/fd/3` for a
    /// descriptor the shell opened); created readable by its owner only.
    /// A file, a character device or a pipe; a FIFO must have its reader
    /// already, as retry never waits to open its log. A symlink is followed
    /// only if you or root own it
    #[arg(long, env = "RETRY_LOG_FILE", value_name = "PATH", value_hint = ValueHint::FilePath,
          help_heading = "Logging")]
    pub log_file: Option<std::path::PathBuf>,

    /// Log only when giving up
    #[arg(short, long, env = "RETRY_QUIET", conflicts_with = "verbose",
          value_parser = parse_switch, help_heading = "Logging")]
    pub quiet: bool,

    /// Also log each attempt's start and a first-try success
    #[arg(short, long, env = "RETRY_VERBOSE", value_parser = parse_switch,
          help_heading = "Logging")]
    pub verbose: bool,

    /// Shell command run with `sh -c` (Windows: `cmd /d /s /c`) after a failed attempt, before the
    /// sleep (cleanup); it sees RETRY_ATTEMPT and RETRY_EXIT_CODE, its output
    /// goes to stderr, and its failure is logged, not fatal
    #[arg(long, env = "RETRY_ON_RETRY", value_name = "SHELL COMMAND",
          value_parser = clap::builder::NonEmptyStringValueParser::new(), value_hint = ValueHint::CommandString, hide_short_help = true)]
    pub on_retry: Option<String>,

    /// What each attempt reads: `replay` the same stdin every time, `null` nothing
    ///
    /// What each attempt reads as stdin: `inherit` retry's own (a later
    /// attempt may find it already consumed), `replay` the same bytes every
    /// time, or `null` an empty one
    #[arg(long, env = "RETRY_STDIN", value_enum, default_value_t = StdinChoice::Inherit,
          value_name = "MODE", help_heading = "Pipelines")]
    pub stdin: StdinChoice,

    /// With --stdin replay: the most bytes of stdin kept to replay (past
    /// 64 MiB in a temporary file under TMPDIR). The attempt reading a longer
    /// stdin as it comes still gets all of it; a retry that would need more
    /// than was kept (or than a full disk kept) is not run: exit status 125
    /// rather than feed any attempt a truncated input
    #[arg(long, env = "RETRY_STDIN_LIMIT", value_name = "SIZE",
          default_value = crate::run::pipes::DEFAULT_STDIN_LIMIT, value_parser = crate::size::parse, value_hint = ValueHint::Other,
          help_heading = "Pipelines", hide_short_help = true)]
    pub stdin_limit: Size,

    /// Only an attempt that succeeds writes to stdout (failed ones: to stderr)
    ///
    /// Hold back each attempt's stdout (in memory, then in a temporary file)
    /// and write only an attempt that succeeds to stdout; the stdout of every
    /// failed attempt goes to stderr, the last one's too when retry gives up,
    /// so a pipe downstream sees nothing of a failed run; a signal during an
    /// attempt drops its
    /// held-back stdout, saying how much. Output that cannot be held back or
    /// written stops the run with exit status 125
    #[arg(long, env = "RETRY_STDOUT_ONCE", value_parser = parse_switch,
          help_heading = "Pipelines")]
    pub stdout_once: bool,

    /// Retry when a line of output matches REGEX, even after exit code 0
    ///
    /// Retry an attempt whose stdout or stderr has a line matching REGEX,
    /// even if its exit code counts as success (it then counts as 1; not if
    /// the code is fatal); \d \w \s and (?i) are ASCII-only. Lines are
    /// matched whole up to 1 MiB; a longer one only by a match that ends in
    /// its first 1 MiB, where `$` does not match
    #[arg(long, env = "RETRY_RETRY_IF_OUTPUT", value_name = "REGEX",
          value_parser = parse_regex, value_hint = ValueHint::Other, help_heading = "Pipelines")]
    pub retry_if_output: Option<Regex>,

    /// Stop at once, with the attempt's own status, on a line matching REGEX
    ///
    /// A line of the attempt's stdout or stderr, as for --retry-if-output.
    #[arg(long, env = "RETRY_STOP_IF_OUTPUT", value_name = "REGEX",
          value_parser = parse_regex, value_hint = ValueHint::Other, help_heading = "Pipelines")]
    pub stop_if_output: Option<Regex>,

    /// Sleep at least the wait a server asks for (Retry-After), read from the output
    ///
    /// Read the server's wait from the output: a line matching REGEX (lines
    /// as for --retry-if-output) with one capture group holding seconds
    /// (`120`, `1.5`), a duration (`250ms`) or an HTTP-date. The sleep after
    /// that failed attempt is then at least the hint, past --cap too. What
    /// bounds it is --max-time (a sleep that would end past it gives up), or
    /// without --max-time 5 min (or --cap if longer): a longer hint gives up
    /// rather than come back sooner than asked. Example:
    /// '(?i)^retry-after:\s*(.+)$'
    #[arg(long, env = "RETRY_DELAY_FROM_OUTPUT", value_name = "REGEX",
          value_parser = parse_hint_regex, value_hint = ValueHint::Other,
          help_heading = PROGRAMS)]
    pub delay_from_output: Option<Regex>,

    #[command(flatten)]
    pub budget: BudgetArgs,

    #[command(flatten)]
    pub breaker: BreakerArgs,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub metrics: MetricsArgs,

    /// Judge failures as one program reports them (retry --presets shows the rules)
    ///
    /// Its transient exit codes are retried, its permanent ones fatal, its
    /// messages and server hints read, as plain flags would (--presets
    /// NAME prints them). A rule given as a flag or by its variable wins
    /// over the preset's. Without --preset, the preset that claims the
    /// command's call is chosen by its program (curl, git fetch, apt-get
    /// install..., looked up through env, sudo, nice, nohup, timeout,
    /// stdbuf, ionice and time; never inside sh -c, never BusyBox's);
    /// chosen, it ends a run only on a line it recognises, never on an exit
    /// code alone; -v says which; --preset none turns the lookup off.
    /// Presets of your own, in the same
    /// format as `retry --presets NAME` shows, go in
    /// $XDG_CONFIG_HOME/retry/presets.ini (~/.config/retry/presets.ini)
    #[arg(long, env = "RETRY_PRESET", value_name = "NAME", value_parser = PresetName,
          value_hint = ValueHint::Other, help_heading = PROGRAMS)]
    pub preset: Option<String>,

    /// Run COMMAND and ARGS joined with spaces through `/bin/sh -c` (for pipelines;
    /// Windows: `cmd /d /s /c`)
    #[arg(short, long, env = "RETRY_SHELL", value_parser = parse_switch)]
    pub shell: bool,

    /// Whether the command stays in retry's process group (so it can read the
    /// terminal, and job control stops and continues both) or gets a process
    /// group of its own (so timeouts and signals reach all its descendants);
    /// `auto` keeps it in retry's group when stdin is a terminal (Windows: a
    /// console process group; there is no job control)
    #[arg(long, env = "RETRY_FOREGROUND", value_enum, default_value_t = ForegroundChoice::Auto,
          value_name = "WHEN", hide_short_help = true)]
    pub foreground: ForegroundChoice,

    /// The command to run and its arguments (`--` before it if it starts with `-`)
    #[arg(value_name = "COMMAND", trailing_var_arg = true,
          required_unless_present_any = ["plan", "simulate", "completions", "man", "presets", "budget_status", "breaker_status"],
          conflicts_with_all = ["simulate", "completions", "man", "presets", "budget_status", "breaker_status"],
          value_hint = ValueHint::CommandWithArguments,
          value_parser = clap::value_parser!(OsString))]
    pub command: Vec<OsString>,

    /// Print the sleeps a run with these options would take, and run nothing
    ///
    /// Print the sleeps a run with these options would take, and run nothing.
    /// A COMMAND after the options is named (on stderr), never run:
    /// `retry --plan -n 6 --base 1s -- make deploy`. With --max-time the
    /// rows stop at the first sleep that would end past it, where a run
    /// gives up at the latest.
    #[arg(long, group = "mode", help_heading = MODES)]
    pub plan: bool,

    /// Simulate competing clients as in the AWS post, and run nothing
    ///
    /// The experiment of the AWS "Exponential Backoff And Jitter" post: work
    /// and completion time per strategy. Without --base/--cap it uses the
    /// post's: 10ms (5ms for decorrelated), 2s.
    #[arg(long, group = "mode", help_heading = MODES)]
    pub simulate: bool,

    /// Print a completion script for SHELL to stdout, and run nothing
    #[arg(long, value_name = "SHELL", value_enum, group = "mode", help_heading = MODES,
          hide_short_help = true)]
    pub completions: Option<Shell>,

    /// Print the man page (roff) to stdout, and run nothing
    #[arg(long, group = "mode", help_heading = MODES, hide_short_help = true)]
    pub man: bool,

    /// Print the presets as a table, or preset NAME as flags, and run nothing
    ///
    /// Print the presets as a table: each preset's name, the programs it
    /// is for, what it retries and what stops at once, in words. With
    /// NAME, that preset as the plain flags it stands for, with the
    /// documentation it rests on; with --verbose, every preset so.
    // The names are the table's first column: one line in -h.
    #[arg(long, value_name = "NAME", num_args = 0..=1, value_parser = PresetName,
          hide_possible_values = true, value_hint = ValueHint::Other, group = "mode",
          help_heading = MODES)]
    pub presets: Option<Option<String>>,

    /// Print the state of the shared retry budget NAME, and run nothing
    #[arg(long, value_name = "NAME", group = "mode", value_parser = crate::state::budget::parse_name,
          value_hint = ValueHint::Other, help_heading = MODES, hide_short_help = true)]
    pub budget_status: Option<String>,

    /// Print the state of the circuit breaker NAME, and run nothing
    ///
    /// Closed, open or probing, the failed runs counted, the cooldown's level
    /// and when the next probe may run; with --store, the fleet's circuit.
    /// With --metrics-dir or --statsd, the circuit's series too (as every
    /// run with --breaker writes them), for a check run every minute.
    #[arg(long, value_name = "NAME", group = "mode", value_parser = crate::state::breaker::parse_name,
          value_hint = ValueHint::Other, help_heading = MODES, hide_short_help = true)]
    pub breaker_status: Option<String>,

    /// Where each value came from, so errors name what the user set and a
    /// preset leaves what was given be.
    #[arg(skip)]
    pub provenance: Provenance,
}

pub(crate) const MODES: &str = "Modes (run no command)";
pub(crate) const SIMULATION: &str = "Simulation (--simulate only)";
pub(crate) const BUDGET: &str = "Shared retry budget (--budget)";
pub(crate) const BREAKER: &str = "Circuit breaker (--breaker)";
pub(crate) const STORE: &str = "Where --budget and --breaker keep their state";
pub(crate) const METRICS: &str = "Metrics (Prometheus textfile, StatsD)";
/// Failures as a program reports them: a preset, a server's requested wait.
pub(crate) const PROGRAMS: &str = "Programs and servers (curl, apt, git…)";
