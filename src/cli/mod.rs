//! The command line as clap sees it: every flag, its help text, its
//! `RETRY_*` environment variable and its value parser. Cross-field rules
//! (`--cap` below `--base`, overlapping code lists) live in `config`.

pub mod choices;
pub mod config;
pub mod generate;
pub mod help;
pub mod id;
pub mod provenance;
pub mod simulation;
pub mod usage;

use std::ffi::OsString;
use std::time::Duration;

use clap::{Args, Parser, ValueEnum, ValueHint};
use regex::bytes::{Regex, RegexBuilder};

use crate::cli::choices::{
    ForegroundChoice, FormatChoice, LogFormatChoice, ModelChoice, StdinChoice,
};
use crate::cli::generate::Shell;
use crate::cli::provenance::Provenance;
use crate::cli::simulation::{ClientCounts, parse_clients, parse_max_work};
use crate::codes::CodeSet;
use crate::duration::parse as parse_duration;
use crate::policy::Attempts;
use crate::preset::{Preset, Rule};
use crate::size::Size;
use crate::strategy::Jitter;

#[derive(Debug, Parser)]
#[command(
    name = "retry",
    // The crate name tells this retry from Debian's unrelated /usr/bin/retry.
    version = concat!(env!("CARGO_PKG_VERSION"), " (retry-jitter)"),
    about = "Rerun a failing command with exponential backoff and jitter",
    long_about = "Rerun a failing command with exponential backoff and jitter.\n\n\
        Runs COMMAND; when its exit status is retryable, sleeps for a delay computed by the \
        chosen jitter strategy and runs it again, up to --max-attempts times. The command's \
        stdout and stderr pass through untouched; retry's own messages go to stderr, and retry \
        exits with the command's status (the others are below).",
    override_usage = help::USAGE,
    after_help = help::short_after(),
    after_long_help = help::long_after(),
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub run: RunArgs,

    #[command(flatten)]
    pub simulation: SimulationArgs,
}

/// Every option but those of `SimulationArgs`: what a run reads, the budget's
/// and the modes' switches. Parsed alone when neither --plan nor --simulate
/// is asked for (see `parse_from`).
#[derive(Debug, Args)]
#[group(skip)]
pub struct RunArgs {
    /// Backoff strategy for the sleep between attempts (`all` only with --simulate)
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

    /// Exit codes that are retried; any other failing code stops at once
    /// [default: every code that is not a success, except 126 and 127 (the
    /// command cannot run) and 141 (killed by SIGPIPE: its reader went away)]
    #[arg(long, env = "RETRY_RETRY_ON", value_name = "CODES", value_hint = ValueHint::Other)]
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

    /// Limit for one attempt; on expiry the command and its descendants get
    /// SIGTERM, then SIGKILL after --kill-after, and the attempt counts as
    /// exit code 124 (Windows: Ctrl-Break to its console process group, then
    /// its Job Object ended; without a console, the job at once)
    #[arg(short, long, env = "RETRY_TIMEOUT", value_name = "DURATION",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true)]
    pub timeout: Option<Duration>,

    /// Grace between SIGTERM and SIGKILL when an attempt is stopped
    #[arg(long, env = "RETRY_KILL_AFTER", value_name = "DURATION", default_value = "5s",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          hide_short_help = true)]
    pub kill_after: Duration,

    /// Limit for the whole run: a sleep that would end past it is not taken,
    /// and at the limit the running attempt is stopped as by --timeout
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

    /// Stop the run at once, with the attempt's own status, when its stdout
    /// or stderr has a line matching REGEX (lines as for --retry-if-output)
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

    /// Draw retries from a budget shared by every retry on this host that names it
    ///
    /// Share one retry budget with every retry on this host that names it:
    /// a retry costs tokens, and when the budget cannot pay retry gives up
    /// at once with the command's last status (first attempts always run).
    /// A budget that cannot be used safely (a directory another user owns
    /// or may write, a symlink) is skipped with a warning
    #[arg(long, env = "RETRY_BUDGET", value_name = "NAME", value_parser = crate::run::budget::parse_name,
          value_hint = ValueHint::Other, help_heading = BUDGET)]
    pub budget: Option<String>,

    /// The budget's size, and what a full one holds (AWS SDK retry quota: 500);
    /// a bucket in use keeps the size it was given until it is full again
    #[arg(long, env = "RETRY_BUDGET_TOKENS", value_name = "N",
          default_value_t = crate::run::budget::bucket::DEFAULT_TOKENS,
          value_parser = clap::value_parser!(u32).range(1..), value_hint = ValueHint::Other,
          help_heading = BUDGET, hide_short_help = true)]
    pub budget_tokens: u32,

    /// Tokens one retry costs, twice that after a timeout; a success after
    /// retries gives the last one's cost back (a first-try success never
    /// touches the budget)
    #[arg(long, env = "RETRY_BUDGET_COST", value_name = "N",
          default_value_t = crate::run::budget::bucket::DEFAULT_COST,
          value_parser = clap::value_parser!(u32).range(1..), value_hint = ValueHint::Other,
          help_heading = BUDGET, hide_short_help = true)]
    pub budget_cost: u32,

    /// Tokens the budget regains per second (0: only successes refill it)
    #[arg(long, env = "RETRY_BUDGET_REFILL", value_name = "PER_SECOND",
          default_value_t = crate::run::budget::bucket::DEFAULT_REFILL,
          value_parser = parse_refill, value_hint = ValueHint::Other,
          help_heading = BUDGET, hide_short_help = true)]
    pub budget_refill: f64,

    /// Where the budget lives: `host` (this host's file), or a Redis server
    /// that a whole fleet shares: redis://[user:password@]host[:port][/db]
    /// or unix:///path/to/redis.sock (set the password through the variable,
    /// not the flag: a command line is visible to every user). A store that
    /// fails lets the run go on without the budget, with one warning
    #[arg(long, env = crate::run::budget::store::VARIABLE, value_name = "URL",
          value_parser = crate::run::budget::store::parse, hide_env_values = true,
          value_hint = ValueHint::Url, help_heading = BUDGET, hide_short_help = true)]
    pub budget_store: Option<crate::run::budget::Store>,

    /// The most one exchange with a Redis store (connecting, the script, its
    /// whole answer) may take before the run goes on without the budget
    /// (250ms if not given)
    // No clap default: a run without a Redis store parses nothing for it.
    #[arg(long, env = "RETRY_BUDGET_TIMEOUT", value_name = "DURATION",
          value_parser = parse_duration, value_hint = ValueHint::Other,
          help_heading = BUDGET, hide_short_help = true)]
    pub budget_timeout: Option<Duration>,

    /// Judge failures as one program reports them (retry --presets shows the rules)
    ///
    /// Its transient exit codes are retried, its permanent ones fatal, its
    /// messages and server hints read, as plain flags would (--presets
    /// prints them). A rule given as a flag or by its variable wins over
    /// the preset's. Presets of your own, in the same format as `retry
    /// --presets` shows, go in $XDG_CONFIG_HOME/retry/presets.ini
    /// (~/.config/retry/presets.ini)
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
          required_unless_present_any = ["plan", "simulate", "completions", "man", "presets", "budget_status"],
          conflicts_with_all = ["simulate", "completions", "man", "presets", "budget_status"],
          value_hint = ValueHint::CommandWithArguments,
          value_parser = clap::value_parser!(OsString))]
    pub command: Vec<OsString>,

    /// Print the sleeps a run with these options would take, and run nothing
    ///
    /// Print the sleeps a run with these options would take, and run nothing.
    /// A COMMAND after the options is named (on stderr), never run:
    /// `retry --plan -n 6 --base 1s -- make deploy`.
    #[arg(long, group = "mode", help_heading = MODES)]
    pub plan: bool,

    /// Simulate competing clients as in the AWS "Exponential Backoff And
    /// Jitter" post (work and completion time per strategy), and run nothing.
    /// Without --base/--cap it uses the post's: 10ms (5ms for decorrelated), 2s
    #[arg(long, group = "mode", help_heading = MODES)]
    pub simulate: bool,

    /// Print a completion script for SHELL to stdout, and run nothing
    #[arg(long, value_name = "SHELL", value_enum, group = "mode", help_heading = MODES,
          hide_short_help = true)]
    pub completions: Option<Shell>,

    /// Print the man page (roff) to stdout, and run nothing
    #[arg(long, group = "mode", help_heading = MODES, hide_short_help = true)]
    pub man: bool,

    /// Print every preset as the plain flags it stands for, with the
    /// documentation it rests on, and run nothing
    #[arg(long, group = "mode", help_heading = MODES)]
    pub presets: bool,

    /// Print the state of the shared retry budget NAME, and run nothing
    #[arg(long, value_name = "NAME", group = "mode", value_parser = crate::run::budget::parse_name,
          value_hint = ValueHint::Other, help_heading = MODES, hide_short_help = true)]
    pub budget_status: Option<String>,

    /// Where each value came from, so errors name what the user set and a
    /// preset leaves what was given be.
    #[arg(skip)]
    pub provenance: Provenance,
}

/// The options only --plan and --simulate read.
#[derive(Debug, Args)]
#[group(skip)]
pub struct SimulationArgs {
    /// Output of --plan and --simulate
    #[arg(long, env = "RETRY_FORMAT", value_enum, default_value_t = FormatChoice::Table,
          help_heading = MODES, hide_short_help = true)]
    pub format: FormatChoice,

    /// Client counts, as counts and ranges with a step (`1,2,5,10-190:10`)
    #[arg(long, env = "RETRY_CLIENTS", value_name = "LIST", default_value = "10-190:10",
          value_parser = parse_clients, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub clients: ClientCounts,

    /// Repetitions per strategy and client count
    #[arg(long, env = "RETRY_REPS", value_name = "R", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..), value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub reps: u32,

    /// Mean one-way network delay
    #[arg(long, env = "RETRY_NET_DELAY", value_name = "DURATION", default_value = "10ms",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = SIMULATION, hide_short_help = true)]
    pub net_delay: Duration,

    /// Standard deviation of the network delay
    #[arg(long, env = "RETRY_NET_SD", value_name = "DURATION", default_value = "2ms",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = SIMULATION, hide_short_help = true)]
    pub net_sd: Duration,

    /// The experiment: `occ` is the AWS post's (optimistic concurrency on
    /// one row); `busy` a server that serves one request at a time and
    /// rejects the others at once
    #[arg(long, env = "RETRY_MODEL", value_enum, default_value_t = ModelChoice::Occ,
          help_heading = SIMULATION, hide_short_help = true)]
    pub model: ModelChoice,

    /// --model busy: mean time the server takes to serve one request
    #[arg(long, env = "RETRY_SERVICE_TIME", value_name = "DURATION", default_value = "10ms",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = SIMULATION, hide_short_help = true)]
    pub service_time: Duration,

    /// --model busy: standard deviation of the service time
    #[arg(long, env = "RETRY_SERVICE_SD", value_name = "DURATION", default_value = "4ms",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = SIMULATION, hide_short_help = true)]
    pub service_sd: Duration,

    /// Stop a repetition once the server has handled this many requests
    /// (its row then counts it under `capped`), or `unlimited`; without
    /// backoff, 100,000 clients would take hours
    #[arg(long, env = "RETRY_MAX_WORK", value_name = "N|unlimited", default_value = "100000000",
          value_parser = parse_max_work, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub max_work: u64,

    /// Also draw the post's two charts (work and completion time against
    /// clients) into this SVG file
    #[arg(long, env = "RETRY_SVG", value_name = "FILE", value_hint = ValueHint::FilePath,
          help_heading = SIMULATION, hide_short_help = true)]
    pub svg: Option<std::path::PathBuf>,
}

const MODES: &str = "Modes (run no command)";
const SIMULATION: &str = "Simulation (--simulate only)";
const BUDGET: &str = "Shared retry budget (--budget)";
/// Failures as a program reports them: a preset, a server's requested wait.
const PROGRAMS: &str = "Programs and servers (curl, apt, git…)";

/// A parsed command line.
#[derive(Debug)]
pub enum Parsed {
    /// Neither --plan nor --simulate: the simulation's options were not
    /// parsed, their defaults and variables not read.
    Lean(RunArgs),
    /// Every option, --plan and --simulate possible.
    Full(Cli),
}

/// What becomes of clap's parser, its `Command` (some 44 KB in hundreds of
/// small blocks), once it has parsed: the caller's choice, since only the
/// caller knows whether its process parses once and exits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterParsing {
    /// Free it: any process that parses more than once (the fuzz targets,
    /// the tests, a library user), or runs on for long after.
    Free,
    /// Never free it: the `retry` binary only, which parses once and exits.
    /// Freeing it costs start-up time (2.8 % of the instructions of `retry
    /// -- true` and 1.4 % of its time, bench/tricks.sh) for memory `exit`
    /// returns anyway; in a loop it is a leak (20,000 parses grew a process from
    /// 3 MB to 875 MB).
    Leak,
}

impl AfterParsing {
    fn finish(self, command: clap::Command) {
        match self {
            AfterParsing::Free => drop(command),
            AfterParsing::Leak => std::mem::forget(command),
        }
    }
}

/// Parses a command line (the program name first) and RETRY_* variables.
///
/// A run reads none of `SimulationArgs`, so it is parsed without them: a
/// command of `RunArgs` alone saves 47 % of retry's start-up instructions
/// and 13 % of its time (no simulation defaults to parse, no help text to
/// format; bench/tricks.sh). Any
/// other line, and any line the lean command refuses (help, --version, a
/// simulation option, a mistake), is parsed again in full, so help, errors
/// and the modes read exactly as the whole `Cli` defines them.
pub fn parse_from(args: &[OsString], after: AfterParsing) -> Result<Parsed, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let mut lean = empty_variables_unset(RunArgs::augment_args(clap::Command::new("retry")));
    let matches = lean.try_get_matches_from_mut(args);
    after.finish(lean);
    if let Ok(mut matches) = matches
        && !cfg!(retry_without = "lean_parse")
        && !matches.get_flag(id::PLAN)
        && !matches.get_flag(id::SIMULATE)
    {
        return Ok(Parsed::Lean(run_args(&mut matches, false)?));
    }
    let mut command = empty_variables_unset(Cli::command());
    let matches = command.try_get_matches_from_mut(args);
    after.finish(command);
    let mut matches = match matches {
        // Help as written for every option, each with its variable.
        Err(error) if usage::is_help_or_version(&error) => {
            let mut whole = Cli::command();
            let help = whole.try_get_matches_from_mut(args).err().unwrap_or(error);
            after.finish(whole);
            return Err(help);
        }
        matches => matches?,
    };
    let run = run_args(&mut matches, true)?;
    let simulation = SimulationArgs::from_arg_matches_mut(&mut matches)?;
    Ok(Parsed::Full(Cli { run, simulation }))
}

/// An empty `RETRY_*` variable counts as unset, as POSIX tools take an
/// empty `TMPDIR`: CI templates write `RETRY_X: ${{ vars.X }}`, and a
/// repository variable nobody set must not stop every job (nor an empty
/// `RETRY_RETRY_IF_OUTPUT` match every line). clap reads a variable when
/// the argument is built and has no such rule, so the argument of each
/// empty one forgets its variable before parsing.
pub(crate) fn empty_variables_unset(mut command: clap::Command) -> clap::Command {
    let empty: Vec<clap::Id> = command
        .get_arguments()
        .filter(|arg| {
            arg.get_env()
                .and_then(std::env::var_os)
                .is_some_and(|value| value.is_empty())
        })
        .map(|arg| arg.get_id().clone())
        .collect();
    for id in empty {
        command = command.mut_arg(id, |arg| arg.env(None));
    }
    command
}

/// `RunArgs` out of the matches, with where their values came from, once
/// no option is stray. `simulation`: the matches hold `SimulationArgs` too.
fn run_args(matches: &mut clap::ArgMatches, simulation: bool) -> Result<RunArgs, clap::Error> {
    use clap::FromArgMatches;
    // Read before the values are moved out: converting without a copy of
    // the matches is a sixth of retry's start-up instructions.
    let provenance = Provenance::of(matches);
    refuse_stray(matches, &provenance, simulation)?;
    let mut run = RunArgs::from_arg_matches_mut(matches)?;
    run.provenance = provenance;
    Ok(run)
}

/// A mode's options on the command line without the mode are a mistake
/// (from the environment they may be meant for another invocation).
/// `simulation`: the matches hold `SimulationArgs` too.
fn refuse_stray(
    matches: &clap::ArgMatches,
    provenance: &Provenance,
    simulation: bool,
) -> Result<(), clap::Error> {
    let typed = |id: &&&str| provenance.typed(id);
    let stray = if simulation && matches.get_flag(id::SIMULATE) {
        let busy = matches.get_one::<ModelChoice>(id::MODEL) == Some(&ModelChoice::Busy);
        id::BUSY_ONLY
            .iter()
            .find(typed)
            .filter(|_| !busy)
            .map(|id| (*id, "--simulate --model busy"))
    } else if let Some(id) = id::SIMULATE_ONLY.iter().filter(|_| simulation).find(typed) {
        Some((*id, "--simulate"))
    } else if simulation && !matches.get_flag(id::PLAN) && provenance.typed(id::FORMAT) {
        Some((id::FORMAT, "--plan or --simulate"))
    } else if !provenance.present(id::BUDGET) && !provenance.present(id::BUDGET_STATUS) {
        id::BUDGET_ONLY
            .iter()
            .find(typed)
            .map(|id| (*id, "--budget or --budget-status"))
    } else {
        None
    };
    match stray {
        None => Ok(()),
        Some((id, mode)) => {
            let flag = provenance::long(id);
            Err(config::usage(format!("`{flag}` is only for {mode}")))
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum JitterChoice {
    /// sleep = min(cap, base * factor^n)
    None,
    /// sleep = random_between(0, min(cap, base * factor^n))
    Full,
    /// t = min(cap, base * factor^n); sleep = t/2 + random_between(0, t/2)
    Equal,
    /// sleep = min(cap, random_between(base, previous sleep * 3))
    Decorrelated,
    /// --simulate only: every strategy side by side, plus no backoff at all
    All,
}

impl JitterChoice {
    /// The one strategy chosen, or `None` for `all`.
    pub fn single(self) -> Option<Jitter> {
        match self {
            JitterChoice::None => Some(Jitter::None),
            JitterChoice::Full => Some(Jitter::Full),
            JitterChoice::Equal => Some(Jitter::Equal),
            JitterChoice::Decorrelated => Some(Jitter::Decorrelated),
            JitterChoice::All => None,
        }
    }
}

fn parse_attempts(text: &str) -> Result<Attempts, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("unlimited") {
        return Ok(Attempts::Unlimited);
    }
    match text.parse::<u32>() {
        Ok(0) => Err("0 attempts would never run the command; for no limit use `unlimited`".into()),
        Ok(n) => Ok(Attempts::Limit(n)),
        Err(_) => Err("expected a positive whole number or `unlimited`".into()),
    }
}

/// A regex for the output conditions, matched against raw bytes with ASCII
/// classes and case folding (a non-ASCII literal still matches its UTF-8).
/// The parser's multi-line report shrinks to its last line, so the usage
/// error stays one line.
fn parse_regex(text: &str) -> Result<Regex, String> {
    // Empty matches every line: one empty quote would rerun every success.
    if text.is_empty() {
        return Err("an empty regex would match every line; leave the option out".into());
    }
    RegexBuilder::new(text)
        .unicode(false)
        .build()
        .map_err(|error| {
            let report = error.to_string();
            let last = report.lines().last().unwrap_or_default().trim();
            last.strip_prefix("error: ").unwrap_or(last).to_owned()
        })
}

/// A switch from the environment (`RETRY_QUIET=1`): what people write for
/// yes and no, in any case; empty is no, as if unset.
fn parse_switch(text: &str) -> Result<bool, String> {
    const YES: [&str; 5] = ["1", "true", "yes", "on", "y"];
    const NO: [&str; 6] = ["", "0", "false", "no", "off", "n"];
    let text = text.trim();
    if YES.iter().any(|word| text.eq_ignore_ascii_case(word)) {
        Ok(true)
    } else if NO.iter().any(|word| text.eq_ignore_ascii_case(word)) {
        Ok(false)
    } else {
        Err("expected 1 or 0, true or false, yes or no, on or off".into())
    }
}

/// `--delay-from-output`: an output regex whose one group is the hint.
fn parse_hint_regex(text: &str) -> Result<Regex, String> {
    let regex = parse_regex(text)?;
    match regex.captures_len() - 1 {
        1 => Ok(regex),
        0 => Err("the regex needs one capture group around the delay, as in `(?i)^retry-after:\\s*(.+)$`".into()),
        n => Err(format!(
            "the regex has {n} capture groups; it needs exactly one around the delay (group others with `(?:...)`)"
        )),
    }
}

/// `--preset`: a name the data or the user's file knows. Its possible
/// values (for help and completions, which are written once for every
/// machine) are the built-in names, read from the data only when asked
/// for, so a run without `--preset` never reads it.
#[derive(Clone, Debug)]
struct PresetName;

impl clap::builder::TypedValueParser for PresetName {
    type Value = String;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let known = |name: &str| {
            let catalog = crate::preset::Catalog::load();
            catalog
                .find(&catalog.presets(), name)
                .map(|p| p.name.to_owned())
        };
        clap::builder::TypedValueParser::parse_ref(&known, command, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let names = crate::preset::builtin().into_iter().map(|p| p.name);
        Some(Box::new(names.map(clap::builder::PossibleValue::new)))
    }
}

/// Every long option, `--base` and so on, with its `RETRY_*` variable if any.
pub fn long_options() -> Vec<(String, Option<String>)> {
    use clap::CommandFactory;
    Cli::command()
        .get_arguments()
        .filter_map(|arg| {
            let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
            Some((format!("--{}", arg.get_long()?), env))
        })
        .collect()
}

/// Sets each rule of `preset` whose flag was given neither on the command
/// line nor by its variable, through the flag's own parser.
pub(crate) fn apply_preset(run: &mut RunArgs, preset: &Preset<'_>) -> Result<(), String> {
    for &(rule, text) in &preset.rules {
        if run.provenance.given(rule_id(rule)) {
            continue;
        }
        set_rule(run, rule, text).map_err(|e| {
            let from = match preset.file {
                Some(file) => format!(" (from {})", file.display()),
                None => String::new(),
            };
            format!(
                "--preset {}{from}: --{} {text}: {e}",
                preset.name,
                rule.flag()
            )
        })?;
        run.provenance.set_by_preset(preset.name, rule_id(rule));
    }
    Ok(())
}

/// clap's id for the flag a preset's rule sets.
fn rule_id(rule: Rule) -> &'static str {
    match rule {
        Rule::RetryOn => id::RETRY_ON,
        Rule::FatalOn => id::FATAL_ON,
        Rule::SuccessOn => id::SUCCESS_ON,
        Rule::RetryIfOutput => id::RETRY_IF_OUTPUT,
        Rule::StopIfOutput => id::STOP_IF_OUTPUT,
        Rule::DelayFromOutput => id::DELAY_FROM_OUTPUT,
    }
}

fn set_rule(run: &mut RunArgs, rule: Rule, text: &str) -> Result<(), String> {
    match rule {
        Rule::RetryOn => run.retry_on = Some(text.parse()?),
        Rule::FatalOn => run.fatal_on = Some(text.parse()?),
        Rule::SuccessOn => run.success_on = text.parse()?,
        Rule::RetryIfOutput => run.retry_if_output = Some(parse_regex(text)?),
        Rule::StopIfOutput => run.stop_if_output = Some(parse_regex(text)?),
        Rule::DelayFromOutput => run.delay_from_output = Some(parse_hint_regex(text)?),
    }
    Ok(())
}

/// A rate the stores keep as given: 0, or within what they can hold.
fn parse_refill(text: &str) -> Result<f64, String> {
    use crate::run::budget::bucket::{MAX_REFILL, MIN_REFILL};
    match text.trim().parse::<f64>() {
        Ok(rate) if rate == 0.0 || (MIN_REFILL..=MAX_REFILL).contains(&rate) => Ok(rate.abs()),
        _ => Err(format!(
            "expected tokens per second: 0 (only successes refill), or from {MIN_REFILL:.6} \
             to {MAX_REFILL} (what a budget's store holds), such as `5` or `0.5`"
        )),
    }
}

fn parse_factor(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if f.is_finite() && f >= 1.0 => Ok(f),
        Ok(_) => Err(
            "the factor must be a finite number of at least 1 (1 keeps the delay constant)".into(),
        ),
        Err(_) => Err("expected a number such as `2` or `1.5`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn modes_need_no_command_and_refuse_one() {
        assert!(Cli::try_parse_from(["retry", "--plan"]).unwrap().run.plan);
        // A plan may name the command it is for; it is not run.
        assert!(Cli::try_parse_from(["retry", "--plan", "--", "make", "deploy"]).is_ok());
        assert!(Cli::try_parse_from(["retry", "--simulate", "--", "true"]).is_err());
        assert!(Cli::try_parse_from(["retry", "--plan", "--simulate"]).is_err());
        assert!(Cli::try_parse_from(["retry"]).is_err());
    }

    fn parse(args: &[&str]) -> Result<Parsed, clap::Error> {
        let args: Vec<OsString> = ["retry"].iter().chain(args).map(Into::into).collect();
        parse_from(&args, AfterParsing::Free)
    }

    /// The arguments of a lean parse, or `None` for a full one.
    fn lean(args: &[&str]) -> Option<RunArgs> {
        match parse(args).unwrap() {
            Parsed::Lean(run) => Some(run),
            Parsed::Full(_) => None,
        }
    }

    #[test]
    fn every_option_refuses_an_empty_value_typed() {
        // None takes '' to mean something, and `--retry-if-output ''` would
        // match every line: each says so, naming itself, before anything runs.
        let mut checked = 0;
        for arg in Cli::command().get_arguments() {
            let Some(long) = arg.get_long().filter(|_| arg.get_action().takes_values()) else {
                continue;
            };
            for typed in [vec![format!("--{long}="), "--".into(), "true".into()], {
                vec![
                    format!("--{long}"),
                    String::new(),
                    "--".into(),
                    "true".into(),
                ]
            }] {
                let typed: Vec<&str> = typed.iter().map(String::as_str).collect();
                let Err(error) = parse(&typed) else {
                    panic!("{typed:?} was taken");
                };
                let error = error.to_string();
                assert!(error.contains(&format!("'--{long} <")), "{error}");
                checked += 1;
            }
        }
        assert!(checked > 60, "{checked}");
    }

    #[test]
    fn definition_is_consistent() {
        Cli::command().debug_assert();
        RunArgs::augment_args(clap::Command::new("retry")).debug_assert();
    }

    #[test]
    fn only_plans_and_simulations_parse_the_simulations_options() {
        for run in [
            &["true"][..],
            &["-n", "2", "--budget", "b", "true"],
            &["--man"],
        ] {
            assert!(lean(run).is_some(), "{run:?}");
        }
        for full in [
            &["--plan"][..],
            &["--simulate", "--reps", "2"],
            &["--format", "csv", "--plan"],
        ] {
            assert!(lean(full).is_none(), "{full:?}");
        }
        // What the lean command refuses is refused, or helped, as in full.
        let error = |args| parse(args).unwrap_err().to_string();
        assert!(error(&["--reps", "2", "true"]).contains("`--reps` is only for --simulate"));
        assert!(error(&["--budget-cost", "2", "true"]).contains("only for --budget"));
        assert!(error(&["--help"]).contains("--net-delay <DURATION>"));
        assert!(error(&["--help"]).contains("Exit status:"));
    }

    #[test]
    fn a_lean_parse_reads_a_run_as_the_full_one_does() {
        for args in [
            &["true"][..],
            &[
                "-j",
                "equal",
                "-b",
                "5ms",
                "-c",
                "1s",
                "-f",
                "3",
                "-n",
                "unlimited",
                "x",
                "-y",
            ],
            &[
                "--retry-on",
                "1-9",
                "--fatal-on",
                "4",
                "--success-on",
                "0,10",
                "-t",
                "1s",
                "x",
            ],
            &[
                "--budget",
                "b",
                "--budget-tokens",
                "9",
                "--budget-refill",
                "0.5",
                "-q",
                "x",
            ],
            &[
                "--stdin",
                "replay",
                "--stdout-once",
                "--retry-if-output",
                "a.c",
                "-s",
                "x",
            ],
        ] {
            let Some(lean) = lean(args) else {
                panic!("{args:?}")
            };
            let all = ["retry"].iter().chain(args);
            let mut matches = Cli::command().try_get_matches_from(all).unwrap();
            let mut full = run_args(&mut matches, true).unwrap();
            let mut lean = lean;
            // The full record also holds the simulation's defaults.
            let (lean_record, full_record) = (
                std::mem::take(&mut lean.provenance),
                std::mem::take(&mut full.provenance),
            );
            assert_eq!(format!("{lean:?}"), format!("{full:?}"));
            for id in Cli::command().get_arguments().map(|a| a.get_id().as_str()) {
                let same = lean_record.typed(id) == full_record.typed(id)
                    && lean_record.given(id) == full_record.given(id)
                    && (lean_record.is_default(id) == full_record.is_default(id)
                        || id::SIMULATE_ONLY.contains(&id)
                        || id == id::FORMAT);
                assert!(same, "{args:?}: {id}");
            }
        }
    }

    #[test]
    fn every_option_but_the_modes_has_its_variable() {
        let mut command = Cli::command();
        command.build();
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
            if help::NOT_FROM_ENVIRONMENT.contains(&long) {
                assert_eq!(
                    env, None,
                    "--{long} is a mode, not read from the environment"
                );
            } else {
                let wanted = format!("RETRY_{}", long.replace('-', "_").to_uppercase());
                assert_eq!(env, Some(wanted), "--{long}");
            }
        }
    }

    #[test]
    fn switches_take_yes_and_no_in_their_usual_spellings() {
        for yes in ["1", "true", "Yes", "ON", "y", " on "] {
            assert_eq!(parse_switch(yes), Ok(true), "{yes}");
        }
        for no in ["0", "FALSE", "no", "off", "N", ""] {
            assert_eq!(parse_switch(no), Ok(false), "{no}");
        }
        assert!(parse_switch("2").is_err() && parse_switch("enabled").is_err());
    }

    #[test]
    fn attempts_accept_counts_and_unlimited() {
        assert_eq!(parse_attempts("3"), Ok(Attempts::Limit(3)));
        assert_eq!(parse_attempts("Unlimited"), Ok(Attempts::Unlimited));
        assert!(parse_attempts("0").unwrap_err().contains("unlimited"));
        assert!(parse_attempts("-1").is_err() && parse_attempts("many").is_err());
    }

    #[test]
    fn attempts_limit_the_next_one() {
        assert!(Attempts::Limit(2).allows_after(1));
        assert!(!Attempts::Limit(2).allows_after(2));
        assert!(Attempts::Unlimited.allows_after(u32::MAX));
    }

    #[test]
    fn regex_errors_are_one_line() {
        let regex = parse_regex(r"(?i)rate limit|\d{3} \w+|échec").unwrap();
        for line in ["RATE LIMIT", "429 Too", "échec"] {
            assert!(regex.is_match(line.as_bytes()), "{line}");
        }
        assert!(!regex.is_match(b"rate-limit"));
        assert_eq!(parse_regex("(unclosed").unwrap_err(), "unclosed group");
    }

    #[test]
    fn refills_are_what_the_stores_can_hold() {
        for (good, rate) in [("0", 0.0), ("-0", 0.0), ("0.000001", 1e-6), ("5", 5.0)] {
            assert_eq!(parse_refill(good), Ok(rate));
        }
        assert_eq!(parse_refill("4294967295"), Ok(4294967295.0));
        // Below a millionth the stores would keep 0; above, a bucket's size.
        for bad in [
            "0.0000001",
            "1e-9",
            "4294967296",
            "1e20",
            "inf",
            "NaN",
            "-1",
            "x",
        ] {
            let error = parse_refill(bad).unwrap_err();
            assert!(
                error.contains("from 0.000001 to 4294967295"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn factor_must_be_finite_and_at_least_one() {
        assert_eq!(parse_factor("1"), Ok(1.0));
        assert_eq!(parse_factor("2.5"), Ok(2.5));
        for bad in ["0.5", "inf", "NaN", "-2", "x"] {
            assert!(parse_factor(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn command_after_options_keeps_its_own_flags() {
        let cli = lean(&["-n", "3", "curl", "-fsS", "--retry", "x"]).unwrap();
        assert_eq!(cli.max_attempts, Attempts::Limit(3));
        assert_eq!(cli.command, ["curl", "-fsS", "--retry", "x"]);
        let dashed = lean(&["--", "-weird", "-n"]).unwrap();
        assert_eq!(dashed.command, ["-weird", "-n"]);
    }
}
