//! The command line's words for the plain choices (`--jitter`, `--stdin`,
//! `--on-exit-stdin`, `--foreground`, `--log-format`, `--format`, `--model`): clap's
//! `ValueEnum`, each value's help, and the map to the type the program
//! uses, so clap stays in `cli/`.

use crate::run::alternates::Repeat;
use crate::run::hooks::ExitStdin;
use crate::run::options::Foreground;
use crate::run::pipes::StdinMode;
use crate::sinks::log::LogFormat;
use crate::strategy::Jitter;

/// `--stdin MODE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StdinChoice {
    /// Pass retry's stdin on as is: a later attempt may find it already consumed
    Inherit,
    /// Read stdin once (as it arrives) and feed the same bytes to every attempt
    Replay,
    /// Give every attempt an empty stdin, so a command waiting for input fails fast
    Null,
}

impl From<StdinChoice> for StdinMode {
    fn from(choice: StdinChoice) -> Self {
        match choice {
            StdinChoice::Inherit => StdinMode::Inherit,
            StdinChoice::Replay => StdinMode::Replay,
            StdinChoice::Null => StdinMode::Null,
        }
    }
}

/// `--on-exit-stdin WHAT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExitStdinChoice {
    /// An empty stdin
    Null,
    /// The last attempt's stdout and stderr, their last 10 KiB
    Tail,
}

impl From<ExitStdinChoice> for ExitStdin {
    fn from(choice: ExitStdinChoice) -> Self {
        match choice {
            ExitStdinChoice::Null => ExitStdin::Null,
            ExitStdinChoice::Tail => ExitStdin::Tail,
        }
    }
}

/// `--alternate-repeat WHICH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RepeatChoice {
    /// COMMAND again after the last alternate, then each alternate again (mirrors in turn)
    All,
    /// The last alternate on every later attempt (nick-fields/retry's new_command_on_retry)
    Last,
}

impl From<RepeatChoice> for Repeat {
    fn from(choice: RepeatChoice) -> Self {
        match choice {
            RepeatChoice::All => Repeat::All,
            RepeatChoice::Last => Repeat::Last,
        }
    }
}

/// `--foreground WHEN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ForegroundChoice {
    /// retry's group when stdin is a terminal, else a group of its own
    Auto,
    /// Always share retry's process group (interactive commands)
    Always,
    /// Always give the command a process group of its own
    Never,
}

impl From<ForegroundChoice> for Foreground {
    fn from(choice: ForegroundChoice) -> Self {
        match choice {
            ForegroundChoice::Auto => Foreground::Auto,
            ForegroundChoice::Always => Foreground::Always,
            ForegroundChoice::Never => Foreground::Never,
        }
    }
}

/// `--log-format FORMAT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormatChoice {
    /// `github` when GITHUB_ACTIONS=true, else `text`
    Auto,
    /// One readable line per event
    Text,
    /// One JSON object per line
    Json,
    /// GitHub Actions workflow commands: retries as warnings, giving up as an error
    Github,
}

impl LogFormatChoice {
    /// The format a run writes; `auto` asks whether it runs in GitHub Actions.
    pub fn resolve(self, in_github_actions: bool) -> LogFormat {
        match self {
            LogFormatChoice::Auto if in_github_actions => LogFormat::Github,
            LogFormatChoice::Auto | LogFormatChoice::Text => LogFormat::Text,
            LogFormatChoice::Json => LogFormat::Json,
            LogFormatChoice::Github => LogFormat::Github,
        }
    }
}

/// `--format FORMAT` of `--plan` and `--simulate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatChoice {
    /// Aligned columns for people
    Table,
    /// Comma-separated values with a header row
    Csv,
    /// One JSON array of objects
    Json,
}

#[cfg(feature = "preview")]
impl From<FormatChoice> for crate::table::Format {
    fn from(choice: FormatChoice) -> Self {
        use crate::table::Format;
        match choice {
            FormatChoice::Table => Format::Table,
            FormatChoice::Csv => Format::Csv,
            FormatChoice::Json => Format::Json,
        }
    }
}

/// `--model MODEL` of `--simulate`: its parameters come from their own flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ModelChoice {
    /// The AWS post's: optimistic concurrency on one row (version conflicts)
    Occ,
    /// A server that serves one request at a time and rejects the rest at once
    Busy,
    /// A cron fleet against a service that is down, then back with a limited capacity
    Outage,
    /// A cron fleet or looping clients against a service that throttles past its capacity
    Throttle,
}

/// `--jitter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
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
