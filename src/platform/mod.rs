//! Everything retry asks of the operating system, in one place: about the
//! files it keeps or reads state in (below), and about processes and
//! signals: starting a command in a process group of its own,
//! signalling that group, reaping children, the terminal's foreground group,
//! signal dispositions and masks, dying by a signal, and collecting the
//! descendants that escaped the group. The rest of the crate names no OS call.
//!
//! `regular.rs` is the one way a file of state is opened: only a regular
//! file, never waiting on a FIFO or a device. On it, `private.rs` creates
//! and opens files only this user may touch (the budget's and the
//! breaker's records), its rules written once for every OS on `owner.rs`
//! (the user id, owner-only creation, opening without following a link);
//! `trusted.rs` reads a file retry takes rules from (the user's presets):
//! bounded, and only this user's or root's; `publish.rs` replaces a file
//! others read (the Prometheus textfile) whole, by a rename, and reads the
//! old one back only if it is this user's or root's. `lock.rs` is the
//! kernel's lock those files are updated under, waited for a bounded time.
//! `append.rs` opens
//! `--log-file` without ever waiting, only what can take appended lines,
//! and through no symlink another user owns.
//! `seam.rs` holds the types every twin shares (`Child`, `Io`, `Wake`),
//! and `Command`, the builder methods both `Spawn`s share.
//!
//! `unix/` holds what is Unix-only: `unix/mod.rs` is the implementation
//! for every Unix (groups, reaping, dispositions); `spawn.rs` starts a
//! command (`posix_spawn`, with std's fork and exec as its twin, which the
//! `portable` feature selects on Linux too); `signals.rs` is the one
//! wait for a child, a signal or a deadline (self-pipes, and `ppoll` where
//! it exists, else `poll`); `tree.rs` stops what is left of an attempt
//! (its process group and the descendants that escaped it); `ready.rs`
//! asks whether a pipe has bytes; `reaper_linux.rs` adds the Linux child
//! subreaper, and `reaper_portable.rs` is its twin for other Unixes (it
//! finds nothing), compiled and tested on Linux too. Which platforms take
//! which path is named once, in `build.rs` (`posix_spawn`,
//! `precise_wait`, `subreaper`).
//!
//! `windows/` holds the Windows twins, one per file in `unix/`, through
//! `windows-sys` (see `windows/mod.rs`): a Job Object per attempt as the
//! `ProcessTree`, console control events in place of signals, and
//! `WaitForMultipleObjects` in place of the self-pipes and `poll`.

// The shared files beside this one; the OS-specific ones in `unix/` and
// `windows/`, with the same names and functions, so `run/` is the same on
// both.
pub mod lock;
pub mod private;
pub mod publish;
pub mod regular;
mod seam;
pub mod trusted;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{append, owner, ready, signals, spawn, tree};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{append, owner, ready, reaper, signals, spawn, tree};

#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
pub use windows::*;

/// The subreaper of this platform: Linux's, or the portable twin (also on
/// Linux with the `portable` feature, so that path is tested here).
#[cfg(subreaper)]
pub use unix::reaper_linux as reaper;
#[cfg(all(unix, not(subreaper)))]
pub use unix::reaper_portable as reaper;
