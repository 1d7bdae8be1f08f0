//! retry's own log lines: their format, where they go, how many.

use clap::{Args, ValueHint};

use crate::cli::choices::LogFormatChoice;
use crate::cli::values::parse_switch;
use crate::sinks::log::{Settings, Verbosity};

#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct LoggingArgs {
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
}

impl LoggingArgs {
    /// A run's log; `auto` asks whether it runs in GitHub Actions. clap
    /// refuses -q with -v, so nothing is left to check.
    pub fn resolve(self) -> Settings {
        Settings {
            format: (self.log_format)
                .resolve(std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")),
            file: self.log_file,
            verbosity: match (self.quiet, self.verbose) {
                (true, _) => Verbosity::Quiet,
                (_, true) => Verbosity::Verbose,
                _ => Verbosity::Normal,
            },
        }
    }
}
