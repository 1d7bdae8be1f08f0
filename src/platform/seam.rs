//! The seam's own types, the same on every platform: what a started
//! command hands back (`Child`), where its stdio goes (`Io`), what woke a
//! wait (`Wake`), and the builder methods of a command to start
//! (`Command`). The twins (`spawn.rs`, `signals.rs` and their Windows
//! files) re-export them, so `run/` names one type on every OS.

use std::ffi::{OsStr, OsString};
use std::io::{PipeReader, PipeWriter};

/// An open file descriptor (Unix) or handle (Windows), owned.
#[cfg(unix)]
pub type Owned = std::os::fd::OwnedFd;
#[cfg(windows)]
pub type Owned = std::os::windows::io::OwnedHandle;

/// Where one of the command's stdio streams goes.
#[derive(Debug, Default)]
pub enum Io {
    /// retry's own stream, shared.
    #[default]
    Inherit,
    /// The null device (`/dev/null`, `NUL`).
    Null,
    /// A new pipe whose other end is returned in `Child`.
    Pipe,
    /// This descriptor (a handle on Windows).
    Fd(Owned),
}

/// A started command: its pid and retry's ends of the pipes asked for.
#[derive(Debug)]
pub struct Child {
    pub pid: i32,
    pub stdin: Option<PipeWriter>,
    pub stdout: Option<PipeReader>,
    pub stderr: Option<PipeReader>,
}

/// How long retry's stderr may take nothing once a signal asked retry to
/// stop: then the rest is dropped, so a reader that stopped reading cannot
/// keep retry alive after SIGTERM (issue 31).
pub const STALL_AFTER_SIGNAL: std::time::Duration = std::time::Duration::from_secs(1);

/// What woke a wait.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Wake {
    /// Terminating signals (on Windows, console events) received since
    /// the last wait, and the latest one.
    pub signals: usize,
    pub last_signal: i32,
}

/// The builder methods of each platform's `Spawn`, written once, as
/// `std::process::Command` has them. Each twin keeps its arguments and its
/// environment its own way: Unix's as the C entries `posix_spawn` takes,
/// rewritten in place from one attempt to the next.
pub trait Command: Sized {
    /// The arguments after the program.
    fn arg_list(&mut self) -> &mut Vec<OsString>;

    /// Sets `key` to `value` in the command's environment (`None`:
    /// removes it); set again, the new value replaces the old.
    fn change(&mut self, key: &str, value: Option<&OsStr>) -> &mut Self;

    fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.arg_list().push(arg.as_ref().to_owned());
        self
    }

    fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&mut self, args: I) -> &mut Self {
        (self.arg_list()).extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    fn env(&mut self, key: &str, value: impl AsRef<OsStr>) -> &mut Self {
        self.change(key, Some(value.as_ref()))
    }

    fn env_remove(&mut self, key: &str) -> &mut Self {
        self.change(key, None)
    }
}
