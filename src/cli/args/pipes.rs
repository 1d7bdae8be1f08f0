//! What passes through an attempt: its stdin, its stdout held back, its
//! output's lines read. (`--delay-from-output` closes the group, under its
//! own help heading: clap lists options in the order they are defined,
//! and the completions and the man page keep that order.)

use clap::{Args, ValueHint};
use regex::bytes::Regex;

use crate::cli::args::PROGRAMS;
use crate::cli::choices::StdinChoice;
use crate::cli::values::{parse_hint_regex, parse_regex, parse_switch};
use crate::run::pipes::{Matchers, Settings};
use crate::size::Size;

#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct PipesArgs {
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

    /// A line matching REGEX: the server asked to slow down (throttled)
    ///
    /// A line of the attempt's stdout or stderr, as for --retry-if-output,
    /// that shows the server asked to slow down (HTTP 429, "rate limit"):
    /// the failure is throttled, not transient. Its sleep is drawn on
    /// --throttle-base and its retry costs --budget-throttle-cost. It never
    /// stops a run: it makes a failure retryable whose exit code is not
    /// (but a --fatal-on code), and it leaves a success a success
    #[arg(long, env = "RETRY_THROTTLE_IF_OUTPUT", value_name = "REGEX",
          value_parser = parse_regex, value_hint = ValueHint::Other, help_heading = "Pipelines",
          hide_short_help = true)]
    pub throttle_if_output: Option<Regex>,

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
}

impl PipesArgs {
    /// The pipes of each attempt, with the preset's output rule that is no
    /// flag (`transient`), and whether `--on-exit` wants the output's tail.
    /// The parsers checked every value.
    pub fn resolve(self, transient: Option<Regex>, tail: bool) -> Settings {
        Settings {
            stdin: self.stdin.into(),
            stdin_limit: self.stdin_limit,
            stdout_once: self.stdout_once,
            matchers: Matchers {
                retry_if: self.retry_if_output,
                stop_if: self.stop_if_output,
                throttle_if: self.throttle_if_output,
                delay_from: self.delay_from_output,
                transient,
            },
            tail,
        }
    }
}
