//! The Unix implementation of the platform seam. The few `unsafe` blocks
//! are plain libc calls without memory to get wrong (`kill`, `raise`,
//! querying or resetting one signal's disposition); each says why it is sound.
#![allow(unsafe_code)]

use std::io::{self, IsTerminal};
use std::os::unix::process::CommandExt;
use std::process::Command;

use nix::sys::signal::{SigSet, Signal};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// How a reaped child ended, or that it was stopped (job control).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    Running,
    /// Stopped by job control (SIGTSTP, SIGTTIN, SIGTTOU): it waits for
    /// SIGCONT. A plain SIGSTOP (a debugger, `kill -STOP`) is not reported:
    /// whoever sent it continues it.
    Stopped,
    Exited(i32),
    Killed(i32),
}

/// The signals whose default action ends a process and that a process may
/// catch: retry stops the command and dies by the same signal. Faults
/// (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS) and SIGABRT are left
/// alone: they are retry's own crash, not a request to stop. SIGPIPE stays
/// ignored as Rust sets it: a closed reader is an EPIPE to handle.
pub fn terminating_signals() -> Vec<i32> {
    let mut signals = vec![
        libc::SIGHUP,
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGTERM,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGVTALRM,
        libc::SIGPROF,
        libc::SIGXCPU,
        libc::SIGXFSZ,
    ];
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        signals.extend([libc::SIGIO, libc::SIGPWR, libc::SIGSTKFLT]);
        signals.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
    }
    signals
}

/// Whether `signal` is ignored (SIG_IGN) in this process: a parent such as
/// `nohup` or a shell's background job chose that, and the command must
/// inherit it rather than find a handler of retry's in its place.
pub fn is_ignored(signal: i32) -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: a null new action only reads the current one into `old`,
    // which is zero-initialised and large enough; nothing else is touched.
    let ok = unsafe { libc::sigaction(signal, std::ptr::null(), old.as_mut_ptr()) } == 0;
    // SAFETY: sigaction filled `old` on success; zeroed is a valid value too.
    ok && unsafe { old.assume_init() }.sa_sigaction == libc::SIG_IGN
}

/// Starts from a known signal mask: a blocked SIGCHLD inherited from the
/// caller would keep retry from ever noticing that the command ended.
/// Threads started later inherit this (empty) mask.
pub fn reset_signal_mask() -> io::Result<()> {
    SigSet::empty().thread_set_mask().map_err(io::Error::from)
}

/// Sets up how `command` starts: in a process group of its own or not, and
/// with default dispositions for every signal retry did not inherit as
/// ignored (std's fork path resets the mask and SIGPIPE; exec resets the
/// signals retry catches).
pub fn prepare(command: &mut Command, own_group: bool) {
    if own_group {
        command.process_group(0);
    }
    // SAFETY: the closure does nothing, so it is async-signal-safe after fork.
    // Its presence makes std fork and exec instead of calling posix_spawn:
    // glibc's posix_spawn (2.36 here) leaves its internal signals 32 and 33
    // *ignored* in the child, and std offers no way to reset them there.
    unsafe {
        command.pre_exec(|| Ok(()));
    }
}

/// Sends `signal` to `pid`, or to the process group it leads. Errors
/// (ESRCH: already gone) are the expected race, not a failure.
pub fn send(pid: i32, signal: i32, group: bool) {
    let target = if group { -pid } else { pid };
    if target == 0 || target == -1 || pid <= 0 {
        return; // never "every process" or "my own group"
    }
    // SAFETY: kill has no memory arguments; a bad pid or signal is an error code.
    unsafe {
        libc::kill(target, signal);
    }
}

/// Whether any process of the group `pgid` is still alive (zombies count
/// until reaped).
pub fn group_exists(pgid: i32) -> bool {
    pgid > 0 && nix::sys::signal::killpg(Pid::from_raw(pgid), None).is_ok()
}

/// Reaps whatever children have ended, without blocking, and reports on
/// `leader`. Other children are adopted orphans (see `reaper`): they are
/// reaped here so they never linger as zombies.
pub fn reap(leader: i32) -> Waited {
    let flags = WaitPidFlag::WNOHANG | WaitPidFlag::WUNTRACED;
    loop {
        let status = match waitpid(Pid::from_raw(-1), Some(flags)) {
            Ok(WaitStatus::StillAlive) | Err(_) => return Waited::Running,
            Ok(status) => status,
        };
        if status.pid() != Some(Pid::from_raw(leader)) {
            continue;
        }
        match status {
            WaitStatus::Exited(_, code) => return Waited::Exited(code),
            WaitStatus::Signaled(_, signal, _) => return Waited::Killed(signal as i32),
            WaitStatus::Stopped(_, signal) if signal != Signal::SIGSTOP => return Waited::Stopped,
            _ => {}
        }
    }
}

/// Reaps every child that has ended (adopted orphans), without blocking.
pub fn reap_orphans() {
    // No pid is 0: this reaps everything that has ended and reports nothing.
    let _ = reap(0);
}

/// Stops retry itself, as a stopped command would stop a shell's job; it
/// returns once something (`fg`, `bg`, `kill -CONT`) continues retry.
pub fn stop_self() {
    let _ = nix::sys::signal::raise(Signal::SIGSTOP);
}

/// Ends retry by `signal`, so the caller sees a signal death (bash stops a
/// script only when its child *died* of SIGINT). Core dumps are turned off
/// first, as coreutils `timeout` does: a SIGQUIT passed on is no crash of ours.
pub fn die_by(signal: i32) -> ! {
    use nix::sys::resource::{Resource, setrlimit};
    let _ = setrlimit(Resource::RLIMIT_CORE, 0, 0);
    // SAFETY: resetting one signal to its default action and raising it
    // involves no memory of ours; the mask is cleared so it is delivered.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
    }
    let _ = reset_signal_mask();
    // SAFETY: as above.
    unsafe {
        libc::raise(signal);
    }
    // A signal whose default action does not end the process (or a raise
    // that failed): the documented status is the next best thing.
    std::process::exit(128 + signal)
}

/// Whether stdin is a terminal: an interactive command may want to read it,
/// so by default it stays in retry's process group (job control then stops
/// and continues retry and the command together).
pub fn stdin_is_terminal() -> bool {
    io::stdin().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminating_signals_include_the_common_ones_and_no_faults() {
        let signals = terminating_signals();
        for wanted in [libc::SIGINT, libc::SIGTERM, libc::SIGUSR1, libc::SIGALRM] {
            assert!(signals.contains(&wanted), "{wanted}");
        }
        for fault in [libc::SIGSEGV, libc::SIGKILL, libc::SIGSTOP, libc::SIGABRT] {
            assert!(!signals.contains(&fault), "{fault}");
        }
    }

    #[test]
    fn sigpipe_is_ignored_in_a_rust_program_and_sigterm_is_not() {
        assert!(is_ignored(libc::SIGPIPE));
        assert!(!is_ignored(libc::SIGTERM));
    }
}
