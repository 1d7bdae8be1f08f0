//! Everything retry asks of the operating system about processes and
//! signals, in one place: starting a command in a process group of its own,
//! signalling that group, reaping children, the terminal's foreground group,
//! signal dispositions and masks, dying by a signal, and collecting the
//! descendants that escaped the group. The rest of the crate names no OS call.
//!
//! `private.rs` creates and opens files only this user may touch (the
//! shared retry budget's state).
//!
//! `unix.rs` is the implementation for every Unix; `reaper_linux.rs` adds
//! the Linux child subreaper, and `reaper_portable.rs` is its twin for
//! other Unixes (it finds nothing), compiled and tested on Linux too.
//!
//! What a Windows port would need, as a new sibling file with the same
//! functions: a Job Object per attempt (`CreateJobObject`,
//! `AssignProcessToJobObject` with `CREATE_SUSPENDED`, then
//! `TerminateJobObject`) in place of process groups and the subreaper;
//! `SetConsoleCtrlHandler` for Ctrl-C/Ctrl-Break and
//! `GenerateConsoleCtrlEvent` to forward them (a new process group via
//! `CREATE_NEW_PROCESS_GROUP`); `WaitForMultipleObjects` on the process
//! handle and an event in place of the self-pipe and `ppoll`; and exit codes
//! as they are (no 128+N: a Windows process does not die "by a signal").

pub mod private;
pub mod reaper_portable;
mod unix;

#[cfg(target_os = "linux")]
pub mod reaper_linux;

pub use unix::*;

/// The subreaper of this platform: Linux's, or the portable twin.
#[cfg(target_os = "linux")]
pub use reaper_linux as reaper;
#[cfg(not(target_os = "linux"))]
pub use reaper_portable as reaper;
