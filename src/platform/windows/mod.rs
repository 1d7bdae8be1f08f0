//! The Windows twin of `unix/mod.rs`, and the folder of the other files'
//! twins (same names, same functions), through `windows-sys`.
//!
//! Windows has no signals: retry's caller asks it to stop with a console
//! control event (Ctrl-C, Ctrl-Break, the console closed), which
//! `signals.rs` turns into the numbers the rest of the crate knows
//! (`SIGINT`, `SIGBREAK`, `SIGHUP`). Each attempt runs in a Job Object of
//! its own (`spawn.rs`), so stopping it stops every process it started:
//! the gentle stop is a Ctrl-Break to the command's own console process
//! group, the hard one `TerminateJobObject`. Exit codes pass through whole
//! (32 bits); there is no 128+N, and retry stopped by Ctrl-C exits with
//! `STATUS_CONTROL_C_EXIT` (0xC000013A), as any console program does.
//!
//! The processes retry started are kept here, by pid, with their job:
//! `run/` names a command by its pid, as on Unix.
#![allow(unsafe_code)]

pub mod append;
pub mod owner;
pub mod ready;
pub mod signals;
pub mod spawn;
pub mod tree;

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, IsTerminal};
use std::os::windows::fs::FileExt;
use std::os::windows::io::{AsHandle, AsRawHandle, OwnedHandle};
use std::sync::{Mutex, MutexGuard};

use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, GenerateConsoleCtrlEvent};
use windows_sys::Win32::System::JobObjects::TerminateJobObject;

/// The numbers the rest of the crate uses for what asks a command to stop.
/// Windows delivers none of them as signals: `signals.rs` maps console
/// events to the first three, and `send` carries the others out.
pub const SIGHUP: i32 = 1;
pub const SIGINT: i32 = 2;
pub const SIGQUIT: i32 = 3;
pub const SIGKILL: i32 = 9;
pub const SIGPIPE: i32 = 13;
pub const SIGTERM: i32 = 15;
pub const SIGCONT: i32 = 18;
/// Ctrl-Break, with the number the C runtime gives it.
pub const SIGBREAK: i32 = 21;

/// Windows exit codes are whole 32-bit numbers (`0xC0000005`, `-1`).
pub const EXIT_CODE_MAX: u32 = u32::MAX;

/// What a console program stopped by Ctrl-C exits with (cmd.exe shows it
/// as `-1073741510`); retry exits with it when a console event stopped it.
pub const STATUS_CONTROL_C_EXIT: u32 = 0xC000_013A;

/// The exit code `TerminateJobObject` gives every process of a stopped
/// attempt (retry reports the stop itself: 124 for a timeout).
const TERMINATED: u32 = 1;

/// How a reaped child ended. Windows has no job control and no death by a
/// signal: only `Running` and `Exited` occur.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code)] // the Unix variants, matched by `run/`
pub enum Waited {
    Running,
    Stopped,
    Exited(i32),
    Killed(i32),
}

/// One started command: the process, its Job Object, and whether it leads
/// a console process group of its own.
struct Started {
    pid: i32,
    child: std::process::Child,
    job: OwnedHandle,
    own_group: bool,
    ended: bool,
}

static STARTED: Mutex<Vec<Started>> = Mutex::new(Vec::new());

fn started() -> MutexGuard<'static, Vec<Started>> {
    STARTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps a command `spawn.rs` started; forgets those that ended earlier
/// (their jobs close: what they left running goes on, as on Unix after a
/// command that was not stopped).
fn keep(pid: i32, child: std::process::Child, job: OwnedHandle, own_group: bool) {
    let mut list = started();
    list.retain(|s| !s.ended);
    list.push(Started {
        pid,
        child,
        job,
        own_group,
        ended: false,
    });
}

/// The process handles of the commands still running, for `signals.rs`'s
/// wait (valid while they are kept: only this thread forgets them).
fn running_handles() -> Vec<isize> {
    started()
        .iter()
        .filter(|s| !s.ended)
        .map(|s| s.child.as_raw_handle() as isize)
        .collect()
}

/// Reports on `leader` without blocking.
pub fn reap(leader: i32) -> Waited {
    let mut list = started();
    let Some(entry) = list.iter_mut().find(|s| s.pid == leader) else {
        return Waited::Running;
    };
    match entry.child.try_wait() {
        Ok(Some(status)) => {
            entry.ended = true;
            Waited::Exited(status.code().unwrap_or(1))
        }
        Ok(None) | Err(_) => Waited::Running,
    }
}

/// Carries out `signal` for the command `pid` (and, `group`, the console
/// process group it leads): `SIGKILL` ends its whole job; `SIGTERM` is the
/// gentle stop, a Ctrl-Break to its own group, or the job's end where none
/// can be sent (no group of its own, no console: a service, wine); a
/// forwarded Ctrl-C or Ctrl-Break goes on as Ctrl-Break (a console cannot
/// send Ctrl-C to one group); `SIGCONT` has no Windows meaning.
pub fn send(pid: i32, signal: i32, group: bool) {
    let list = started();
    let Some(entry) = list.iter().find(|s| s.pid == pid) else {
        return;
    };
    let own_group = group && entry.own_group;
    let kill = || {
        // SAFETY: a live job handle; a job already empty is no error.
        unsafe { TerminateJobObject(entry.job.as_raw_handle(), TERMINATED) };
    };
    let brk = || {
        // SAFETY: no memory involved; a group that is gone is an error code.
        own_group && unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid as u32) } != 0
    };
    match signal {
        SIGKILL => kill(),
        SIGTERM if !brk() => kill(),
        SIGINT | SIGBREAK | SIGHUP | SIGQUIT => {
            brk();
        }
        _ => {}
    }
}

/// Ends the job of every command still running: the console is closing,
/// the user logging off or the system shutting down.
fn stop_all() {
    for entry in started().iter().filter(|s| !s.ended) {
        // SAFETY: a live job handle.
        unsafe { TerminateJobObject(entry.job.as_raw_handle(), TERMINATED) };
    }
}

/// Ends what is left of the job of `leader` and forgets it.
fn stop_job(leader: i32) {
    let mut list = started();
    if let Some(at) = list.iter().position(|s| s.pid == leader) {
        let entry = list.remove(at);
        // SAFETY: a live job handle, closed when `entry` drops.
        unsafe { TerminateJobObject(entry.job.as_raw_handle(), TERMINATED) };
    }
}

/// No job control on Windows.
pub fn stop_self() {}

/// Windows gives a process started without a stream no handle for it;
/// printing then fails rather than vanishing, so nothing is reopened.
pub fn stdout_was_closed() -> bool {
    false
}

/// The command line, from the wide API (`GetCommandLineW` through std)
/// (or, in the copy `copier` starts, the copy and nothing else):
/// the C runtime's `argv` is in the ANSI code page and would mangle
/// anything outside it.
pub fn start() -> Vec<OsString> {
    if std::env::var_os(COPY_STDIN).is_some() {
        let copied = io::copy(&mut io::stdin().lock(), &mut io::stdout().lock());
        std::process::exit(i32::from(copied.is_err()))
    }
    #[allow(clippy::disallowed_methods)] // std reads the wide command line on Windows
    std::env::args_os().collect()
}

/// Ends retry as the command would have ended: stopped by a console event,
/// with `STATUS_CONTROL_C_EXIT`, as a console program that Ctrl-C ends;
/// anything else (a closed stdout) with 128+N, the documented status.
pub fn die_by(signal: i32) -> ! {
    std::process::exit(signal_exit_code(signal))
}

/// Calls `each` with the name and value of every variable of retry's
/// environment (the Unix twin copies none; here std's copies serve).
pub fn each_variable(mut each: impl FnMut(&std::ffi::OsStr, &std::ffi::OsStr)) {
    for (name, value) in std::env::vars_os() {
        each(&name, &value);
    }
}

/// This host's name, the twin of Unix's `gethostname(2)`: the DNS host
/// name `GetComputerNameExW` gives (`--splay-stable`'s slot); `None` when
/// it gives none.
pub fn host_name() -> Option<OsString> {
    use std::os::windows::ffi::OsStringExt;
    use windows_sys::Win32::System::SystemInformation::{
        ComputerNamePhysicalDnsHostname, GetComputerNameExW,
    };
    // A DNS host name is at most 63 characters; 256 leaves room for any.
    let mut buffer = [0u16; 256];
    let mut len = buffer.len() as u32;
    // SAFETY: the buffer and its length in characters are the call's own;
    // on success `len` is the characters written, without the NUL.
    let ok = unsafe {
        GetComputerNameExW(
            ComputerNamePhysicalDnsHostname,
            buffer.as_mut_ptr(),
            &mut len,
        )
    };
    let len = (len as usize).min(buffer.len());
    (ok != 0 && len > 0).then(|| OsString::from_wide(&buffer[..len]))
}

pub fn stdin_is_terminal() -> bool {
    io::stdin().is_terminal()
}

/// The console event behind a number (see `signals.rs`).
pub fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        SIGINT => "CTRL_C_EVENT",
        SIGBREAK => "CTRL_BREAK_EVENT",
        SIGHUP => "CTRL_CLOSE_EVENT",
        SIGTERM => "SIGTERM",
        SIGKILL => "SIGKILL",
        SIGPIPE => "SIGPIPE",
        _ => return None,
    })
}

/// Windows has no real-time signals.
pub fn realtime_offset(_signal: i32) -> Option<i32> {
    None
}

/// Set in the environment of the copy of retry that `copier` starts.
const COPY_STDIN: &str = "__RETRY_COPY_STDIN";

/// A program that copies its stdin to its stdout until the end, byte for
/// byte: retry itself, told so by a variable (`start`). Windows has no
/// `cat`, and `findstr`, `more` and `type` change what they copy.
pub fn copier() -> io::Result<spawn::Spawn> {
    use spawn::Command as _;
    let mut copy = spawn::Spawn::new(std::env::current_exe()?);
    copy.env(COPY_STDIN, "1");
    copy.detached = true;
    Ok(copy)
}

/// The exit status for a command's `code`: Windows codes are 32 bits
/// (0xC0000005, an access violation), passed on whole. One that does not
/// fit the caller's byte ends retry here, its output flushed.
pub fn exit_code(code: i32) -> u8 {
    u8::try_from(code).unwrap_or_else(|_| {
        let _ = std::io::Write::flush(&mut io::stdout());
        std::process::exit(code)
    })
}

/// What retry exits with when a console event stopped it (see `die_by`).
pub fn signal_exit_code(signal: i32) -> i32 {
    match signal {
        SIGINT | SIGBREAK | SIGHUP | SIGQUIT | SIGTERM => STATUS_CONTROL_C_EXIT as i32,
        other => 128 + other,
    }
}

/// Why a command could not be started that says nothing about the command:
/// handles (ERROR_TOO_MANY_OPEN_FILES), memory (ERROR_NOT_ENOUGH_MEMORY,
/// ERROR_OUTOFMEMORY) or system resources (ERROR_NO_SYSTEM_RESOURCES) ran
/// short. They pass, so the attempt is retried (status 125).
pub fn shortage(error: &io::Error) -> Option<i32> {
    const SHORTAGES: [i32; 4] = [4, 8, 14, 1450];
    error.raw_os_error().filter(|e| SHORTAGES.contains(e))
}

/// Whether the console on stderr takes ANSI escapes (`\x1b[K`): asks it
/// to (`ENABLE_VIRTUAL_TERMINAL_PROCESSING`, Windows 10 and later); an
/// older console that refuses would show them as text.
pub fn stderr_takes_escapes() -> bool {
    use windows_sys::Win32::System::Console::{
        ENABLE_VIRTUAL_TERMINAL_PROCESSING, GetConsoleMode, SetConsoleMode,
    };
    let console = io::stderr().as_raw_handle();
    let mut mode = 0;
    // SAFETY: a handle of this process's stderr, and one u32 written.
    if unsafe { GetConsoleMode(console, &mut mode) } == 0 {
        return false;
    }
    mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0
        // SAFETY: as above; only the console's mode changes.
        || unsafe { SetConsoleMode(console, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING) } != 0
}

/// A handle of retry's own stdout, written without std's buffer.
pub fn dup_stdout() -> io::Result<File> {
    Ok(File::from(io::stdout().as_handle().try_clone_to_owned()?))
}

pub use crate::platform::seam::STALL_AFTER_SIGNAL;

/// Writes `bytes` to retry's stderr; returns how many were written, and
/// the error that ended the write early. The
/// Unix twin bounds a stall after a signal with `poll`, which Windows
/// pipes lack: here it writes as std does, and a stalled reader after a
/// Ctrl-C is not bounded (a known gap, named in docs/behaviour.md).
pub fn write_stderr(bytes: &[u8]) -> (usize, io::Result<()>) {
    use std::io::Write;
    match io::stderr().write_all(bytes) {
        Ok(()) => (bytes.len(), Ok(())),
        Err(error) => (0, Err(error)),
    }
}

/// A handle of retry's own stderr.
pub fn dup_stderr() -> io::Result<File> {
    Ok(File::from(io::stderr().as_handle().try_clone_to_owned()?))
}

/// Reads at `offset` (Windows moves the file's cursor too; the spools that
/// use this never read sequentially).
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.seek_read(buf, offset)
}

/// Writes at `offset` (moving the cursor too, as `read_at` does).
pub fn write_at(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    file.seek_write(buf, offset)
}

/// `-s` and `--on-retry`: `cmd /d /s /c SCRIPT` (no AutoRun commands, the
/// script taken whole: `spawn.rs` passes it without quoting).
pub fn shell(script: OsString) -> (OsString, Vec<OsString>) {
    (
        "cmd.exe".into(),
        vec!["/d".into(), "/s".into(), "/c".into(), script],
    )
}

/// The subreaper's twin: Windows adopts nothing; the Job Object holds
/// every descendant instead.
pub mod reaper {
    pub fn become_subreaper() -> bool {
        false
    }
}
