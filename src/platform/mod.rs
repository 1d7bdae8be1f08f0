//! Everything retry asks of the operating system about processes and
//! signals, in one place: starting a command in a process group of its own,
//! signalling that group, reaping children, the terminal's foreground group,
//! signal dispositions and masks, dying by a signal, and collecting the
//! descendants that escaped the group. The rest of the crate names no OS call.
//!
//! `private.rs` creates and opens files only this user may touch (the
//! shared retry budget's state); `append.rs` opens `--log-file` without
//! ever waiting, only what can take appended lines, and through no
//! symlink another user owns.
//!
//! `unix.rs` is the implementation for every Unix; `spawn.rs` starts a
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
//! What a Windows port would need, as a new sibling file with the same
//! functions: a Job Object per attempt (`CreateJobObject`,
//! `AssignProcessToJobObject` with `CREATE_SUSPENDED`, then
//! `TerminateJobObject`) as the `ProcessTree`, in place of process groups
//! and the subreaper; `SetConsoleCtrlHandler` for Ctrl-C/Ctrl-Break and
//! `GenerateConsoleCtrlEvent` to forward them (a new process group via
//! `CREATE_NEW_PROCESS_GROUP`); `WaitForMultipleObjects` on the process
//! handle and an event in place of the self-pipes and `poll` of
//! `signals.rs` and `ready.rs`; and exit codes as they are (no 128+N: a
//! Windows process does not die "by a signal").

pub mod append;
pub mod private;
pub mod ready;
pub mod reaper_portable;
pub mod signals;
pub mod spawn;
pub mod tree;
mod unix;

#[cfg(target_os = "linux")]
#[cfg_attr(feature = "portable", allow(dead_code))] // still unit-tested
pub mod reaper_linux;

pub use unix::*;

/// The subreaper of this platform: Linux's, or the portable twin (also on
/// Linux with the `portable` feature, so that path is tested here).
#[cfg(subreaper)]
pub use reaper_linux as reaper;
#[cfg(not(subreaper))]
pub use reaper_portable as reaper;
