//! The command line's words for the run's plain choices (`--stdin`,
//! `--foreground`): clap's `ValueEnum`, each value's help, and the map to
//! the type the run uses, so clap stays in `cli/`.

use crate::run::pipes::StdinMode;
use crate::run::supervisor::Foreground;

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
