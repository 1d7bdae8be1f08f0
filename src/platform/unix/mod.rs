//! The Unix implementation of the platform seam. The few `unsafe` blocks
//! are plain libc calls without memory to get wrong (`kill`, `raise`,
//! `write`, setting or querying one signal's disposition, reading the
//! C runtime's `argv` in `start`); each says why it is sound.
#![allow(unsafe_code)]

pub mod append;
pub mod owner;
pub mod ready;
#[cfg(target_os = "linux")]
#[cfg_attr(feature = "portable", allow(dead_code))] // still unit-tested
pub mod reaper_linux;
pub mod reaper_portable;
#[cfg(target_os = "linux")]
#[cfg_attr(feature = "portable", allow(dead_code))] // still unit-tested
pub mod signalfd_linux;
pub mod signals;
pub mod spawn;
pub mod tree;

use std::ffi::{OsStr, OsString};
use std::io::{self, IsTerminal};
#[cfg(not(signalfd))]
use std::os::fd::{IntoRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, AtomicU64, Ordering};

use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::unistd::Pid;

/// The signals retry sends or names by number elsewhere in the crate.
pub use libc::{SIGCONT, SIGHUP, SIGINT, SIGKILL, SIGPIPE, SIGQUIT, SIGTERM};

/// The largest exit code a Unix parent sees: the status's low byte.
pub const EXIT_CODE_MAX: u32 = 255;

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
/// ignored as `start` sets it: a closed reader is an EPIPE to handle.
pub fn terminating_signals() -> Vec<i32> {
    let portable = [
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
    let more = [libc::SIGIO, libc::SIGPWR, libc::SIGSTKFLT]
        .into_iter()
        .chain(libc::SIGRTMIN()..=libc::SIGRTMAX());
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let more = std::iter::empty();
    portable.into_iter().chain(more).collect()
}

/// Where the handlers write one byte per signal: the write ends of the
/// self-pipes (non-blocking; -1 before `catch_signals`).
#[cfg(not(signalfd))]
static TERMINATE_FD: AtomicI32 = AtomicI32::new(-1);
#[cfg(not(signalfd))]
static CHILD_FD: AtomicI32 = AtomicI32::new(-1);
/// The number of the latest terminating signal (0 before any).
static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The signals `catch_signals` set a handler for: bit N-1 for signal N.
static CAUGHT: AtomicU64 = AtomicU64::new(0);
/// Whether retry's caller left SIGCHLD ignored: retry catches it all the
/// same, and gives the commands it starts the caller's disposition back.
static SIGCHLD_WAS_IGNORED: AtomicBool = AtomicBool::new(false);

#[cfg(not(signalfd))]
extern "C" fn on_terminating(signal: libc::c_int) {
    LAST_SIGNAL.store(signal, Ordering::SeqCst);
    write_byte(&TERMINATE_FD);
}

#[cfg(not(signalfd))]
extern "C" fn on_child(_: libc::c_int) {
    write_byte(&CHILD_FD);
}

/// Async-signal-safe: an atomic load and write(2), with errno kept intact
/// for whatever the handler interrupted.
#[cfg(not(signalfd))]
fn write_byte(fd: &AtomicI32) {
    let saved = Errno::last_raw();
    let fd = fd.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: writes one byte from a live one-byte buffer; a full pipe
        // (non-blocking) or a closed fd is an error code, not UB.
        unsafe {
            libc::write(fd, [1u8].as_ptr().cast(), 1);
        }
    }
    Errno::set_raw(saved);
}

/// Catches every terminating signal that is not ignored (see
/// `terminating_signals`) and SIGCHLD: each delivery writes a byte to
/// `terminate` or `child` (non-blocking write ends, kept open for good).
/// A signal the caller left ignored stays ignored, with no window in which
/// it would be caught: everything is blocked meanwhile, and a pending
/// signal that is ignored again is discarded. SIGCHLD is the exception:
/// ignored, the kernel would reap every child itself and retry would wait
/// for an end it never sees, so it is caught whatever the caller left
/// (`restore_in_child` gives commands the caller's disposition back).
/// A terminating signal that cannot be caught (valgrind and qemu-user
/// keep some real-time signals for themselves) is left as it is.
/// Ends with an empty mask, so a blocked SIGCHLD inherited from the caller
/// cannot hang retry.
/// One handler and no allocation per signal: start-up is a product feature.
#[cfg(not(signalfd))]
pub fn catch_signals(terminate: OwnedFd, child: OwnedFd, signals: &[i32]) -> io::Result<()> {
    TERMINATE_FD.store(terminate.into_raw_fd(), Ordering::SeqCst);
    CHILD_FD.store(child.into_raw_fd(), Ordering::SeqCst);
    nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::all()), None)?;
    let result = install(libc::SIGCHLD, on_child, Ignored::Override).map(|old| {
        SIGCHLD_WAS_IGNORED.store(old == libc::SIG_IGN, Ordering::SeqCst);
    });
    for &signal in signals {
        // An error is a signal the kernel (or an emulator) keeps: not ours.
        let _ = install(signal, on_terminating, Ignored::Keep);
    }
    reset_signal_mask()?;
    result
}

/// What `install` does with a signal the caller left ignored.
#[cfg(not(signalfd))]
#[derive(PartialEq)]
enum Ignored {
    Keep,
    Override,
}

/// Sets `handler` for `signal`, unless it was ignored and `ignored` says
/// to keep it so; returns the disposition it found.
#[cfg(not(signalfd))]
fn install(
    signal: i32,
    handler: extern "C" fn(libc::c_int),
    ignored: Ignored,
) -> io::Result<libc::sighandler_t> {
    // SAFETY: zeroed is a valid `sigaction` (no handler, empty flags).
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = handler as libc::sighandler_t;
    // Reads of stdin (replay) restart; the wait's ppoll returns EINTR anyway.
    action.sa_flags = libc::SA_RESTART;
    // SAFETY: as above, a valid value to write the old action into.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live, initialised `sigaction`s, and the
    // handler only does async-signal-safe work (`write_byte`).
    if unsafe { libc::sigaction(signal, &action, &mut old) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if old.sa_sigaction == libc::SIG_IGN && ignored == Ignored::Keep {
        // SAFETY: puts back exactly what was there.
        unsafe {
            libc::sigaction(signal, &old, std::ptr::null_mut());
        }
    } else if let Some(bit) = u32::try_from(signal - 1)
        .ok()
        .filter(|&bit| bit < u64::BITS)
    {
        CAUGHT.fetch_or(1 << bit, Ordering::SeqCst);
    }
    Ok(old.sa_sigaction)
}

/// Whether a command must start with SIGCHLD ignored, as retry's caller
/// left it (`posix_spawn` can only reset a signal to its default).
pub fn sigchld_was_ignored() -> bool {
    SIGCHLD_WAS_IGNORED.load(Ordering::SeqCst)
}

/// Blocks every signal in this thread until the guard is dropped: across a
/// fork, so no handler of retry's runs in the child before it execs (it
/// would write to retry's self-pipes, as if retry had been signalled).
pub fn block_signals() -> io::Result<SignalsBlocked> {
    let mut old = SigSet::empty();
    nix::sys::signal::pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut old),
    )?;
    Ok(SignalsBlocked(old))
}

/// The mask to put back (see `block_signals`).
pub struct SignalsBlocked(SigSet);

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        let _ = self.0.thread_set_mask();
    }
}

/// In a forked child, before exec, with every signal blocked
/// (`block_signals`): the signals retry catches go back to their default
/// action (SIGCHLD to the caller's), then the mask is emptied (which also
/// unblocks what the signalfd reads), so a signal
/// that arrived since the fork acts on the command as its default says.
/// Async-signal-safe: `sigaction` and `sigprocmask` only.
pub fn restore_in_child() -> io::Result<()> {
    for signal in caught_signals() {
        // SAFETY: sets one signal's disposition, no memory of ours involved.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
        }
    }
    // Caught (the handlers) or set to its default (the signalfd) whatever
    // the caller left: the command gets the caller's ignored SIGCHLD back.
    if sigchld_was_ignored() {
        // SAFETY: as above.
        unsafe {
            libc::signal(libc::SIGCHLD, libc::SIG_IGN);
        }
    }
    // SAFETY: an empty set built on the stack, and no old mask asked for.
    let empty = unsafe {
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        set.assume_init()
    };
    // SAFETY: a valid, initialised set.
    if unsafe { libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The signals retry has a handler for (below 65), which a command it
/// starts must get at their default action (`posix_spawn` asks).
pub fn caught_signals() -> impl Iterator<Item = i32> {
    let caught = CAUGHT.load(Ordering::SeqCst);
    (1..=64).filter(move |signal| caught & (1 << (signal - 1)) != 0)
}

/// The latest terminating signal a handler saw (0 before any).
pub fn last_signal() -> i32 {
    LAST_SIGNAL.load(Ordering::SeqCst)
}

/// Starts from a known signal mask: a blocked SIGCHLD inherited from the
/// caller would keep retry from ever noticing that the command ended.
/// Threads started later inherit this (empty) mask.
#[cfg(not(signalfd))]
pub fn reset_signal_mask() -> io::Result<()> {
    SigSet::empty().thread_set_mask().map_err(io::Error::from)
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
///
/// libc's `waitpid`, not nix's: nix reaps a child killed by a real-time
/// signal (outside its `Signal` enum) and then returns an error, so the
/// status was lost and retry waited for ever (issue 31). The raw status
/// is decoded here for every signal number.
pub fn reap(leader: i32) -> Waited {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid writes one c_int through a pointer to a local.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::WUNTRACED) };
        if pid <= 0 {
            // 0: none ended; -1: no children left (ECHILD) or EINTR, which
            // the caller's next wake-up retries.
            return Waited::Running;
        }
        if pid != leader {
            continue;
        }
        if let Some(waited) = decode(status) {
            return waited;
        }
    }
}

/// What a raw wait status says about a child, or `None` for a status that
/// is not the end of it nor a job-control stop (a plain SIGSTOP, which
/// whoever sent it continues; a `WCONTINUED` report).
fn decode(status: libc::c_int) -> Option<Waited> {
    if libc::WIFEXITED(status) {
        Some(Waited::Exited(libc::WEXITSTATUS(status)))
    } else if libc::WIFSIGNALED(status) {
        Some(Waited::Killed(libc::WTERMSIG(status)))
    } else if libc::WIFSTOPPED(status) && libc::WSTOPSIG(status) != libc::SIGSTOP {
        Some(Waited::Stopped)
    } else {
        None
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

/// Which of stdin, stdout and stderr were closed when retry started: bit N
/// for fd N (see `start`).
static CLOSED_AT_START: AtomicU8 = AtomicU8::new(0);

/// Whether stdout was closed when retry started (`retry --plan >&-`): it
/// is /dev/null now, and a mode that only prints has nowhere to print.
pub fn stdout_was_closed() -> bool {
    CLOSED_AT_START.load(Ordering::Relaxed) & 0b010 != 0
}

/// What std's own entry point would do before `main` that retry relies on,
/// for the C `main` of `src/main.rs`, which skips it (start-up: std's
/// probe of the main thread's stack reads /proc/self/maps). Returns the
/// command line.
///
/// - A closed stdin, stdout or stderr is opened on /dev/null, so that no
///   file retry opens later (a self-pipe, a log file) takes its number and
///   receives what was meant for the terminal, and a command inherits the
///   three open.
/// - SIGPIPE is ignored, as std does: a reader gone away is an EPIPE to
///   handle, not retry's death. Commands get it back (`spawn.rs`).
///
/// # Safety
/// `argv` must hold `argc` pointers to NUL-terminated strings, as the C
/// runtime passes them to `main`.
pub unsafe fn start(argc: libc::c_int, argv: *const *const libc::c_char) -> Vec<OsString> {
    for fd in 0..3 {
        // SAFETY: F_GETFD reads no memory; EBADF says the number is free.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            CLOSED_AT_START.fetch_or(1 << fd, Ordering::Relaxed);
            // The lowest free number: `fd` itself, open for good and
            // without close-on-exec, so commands inherit it.
            // SAFETY: opens a constant, NUL-terminated path.
            unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        }
    }
    // SAFETY: sets one signal's disposition, no memory of ours involved.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    (0..usize::try_from(argc).unwrap_or(0))
        .map(|i| {
            // SAFETY: the caller promises `argc` valid C strings in `argv`.
            let arg = unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) };
            OsString::from_vec(arg.to_bytes().to_vec())
        })
        .collect()
}

/// Ends retry by `signal`, so the caller sees a signal death (bash stops a
/// script only when its child *died* of SIGINT). Core dumps are turned off
/// first, as coreutils `timeout` does: a SIGQUIT passed on is no crash of ours.
pub fn die_by(signal: i32) -> ! {
    use nix::sys::resource::{Resource, setrlimit};
    let _ = setrlimit(Resource::RLIMIT_CORE, 0, 0);
    // SAFETY: resetting one signal to its default action and raising it
    // involves no memory of ours; it is unblocked so it is delivered (it
    // alone: another one pending, blocked for the signalfd, is not the
    // signal retry dies by).
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
    }
    // SAFETY: a set built on the stack, initialised by sigemptyset before
    // sigaddset; no old mask asked for.
    unsafe {
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), signal);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, set.as_ptr(), std::ptr::null_mut());
    }
    // SAFETY: as above.
    unsafe {
        libc::raise(signal);
    }
    // A signal whose default action does not end the process (or a raise
    // that failed): the documented status is the next best thing.
    std::process::exit(128 + signal)
}

/// This host's name, as `gethostname(2)` gives it (`--splay-stable`'s
/// slot); `None` when the OS gives none.
pub fn host_name() -> Option<OsString> {
    nix::unistd::gethostname()
        .ok()
        .filter(|name| !name.is_empty())
}

/// Whether stdin is a terminal: an interactive command may want to read it,
/// so by default it stays in retry's process group (job control then stops
/// and continues retry and the command together).
pub fn stdin_is_terminal() -> bool {
    io::stdin().is_terminal()
}

/// Calls `each` with the name and value of every variable of retry's
/// environment, copying none: `cli::empty_variables_unset` scans it at
/// every start, and `std::env::vars_os` copied each variable into two
/// allocations (6 % of the instructions of `retry -- true`, issue 52).
/// Called while parsing the command line, before retry starts a thread.
#[cfg(all(environ, not(retry_without = "environ")))]
pub fn each_variable(mut each: impl FnMut(&OsStr, &OsStr)) {
    use std::os::unix::ffi::OsStrExt;
    unsafe extern "C" {
        static environ: *const *const libc::c_char;
    }
    // SAFETY: `environ` is the C library's NULL-terminated array of
    // NUL-terminated strings; nothing changes it while retry parses (no
    // other thread, and retry never sets a variable of its own).
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let bytes = std::ffi::CStr::from_ptr(*entry).to_bytes();
            // As std reads it: a name may start with `=`, the first `=` after it ends it.
            if let Some(at) = bytes.iter().skip(1).position(|&b| b == b'=') {
                let (name, value) = (&bytes[..=at], &bytes[at + 2..]);
                each(OsStr::from_bytes(name), OsStr::from_bytes(value));
            }
            entry = entry.add(1);
        }
    }
}

/// The twin for the other Unixes (macOS has no `environ` to link with),
/// and for a build without the trick (bench/tricks.sh).
#[cfg(not(all(environ, not(retry_without = "environ"))))]
pub fn each_variable(mut each: impl FnMut(&OsStr, &OsStr)) {
    for (name, value) in std::env::vars_os() {
        each(&name, &value);
    }
}

/// A program that copies its stdin to its stdout until the end: `cat`.
pub fn copier() -> io::Result<crate::platform::spawn::Spawn> {
    Ok(crate::platform::spawn::Spawn::new("cat"))
}

/// The exit status for a command's `code` (0..255 on Unix).
pub fn exit_code(code: i32) -> u8 {
    u8::try_from(code).unwrap_or(u8::MAX)
}

/// What retry exits with when a signal stopped it and it cannot die by
/// it: 128+N, as shells report it.
pub fn signal_exit_code(signal: i32) -> i32 {
    128 + signal
}

/// Why a command could not be started that says nothing about the command:
/// the process limit (EAGAIN), file descriptors (EMFILE, ENFILE) or memory
/// (ENOMEM) ran short. They pass, so the attempt is retried (status 125).
pub fn shortage(error: &io::Error) -> Option<i32> {
    const SHORTAGES: [i32; 4] = [libc::EAGAIN, libc::EMFILE, libc::ENFILE, libc::ENOMEM];
    error.raw_os_error().filter(|e| SHORTAGES.contains(e))
}

/// Whether a terminal on stderr takes ANSI escapes (`\x1b[K`): every
/// Unix terminal does.
pub fn stderr_takes_escapes() -> bool {
    true
}

/// A descriptor of retry's own stdout, written without std's buffer.
pub fn dup_stdout() -> io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    Ok(io::stdout().as_fd().try_clone_to_owned()?.into())
}

/// A descriptor of retry's own stderr.
pub fn dup_stderr() -> io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    Ok(io::stderr().as_fd().try_clone_to_owned()?.into())
}

pub use crate::platform::seam::STALL_AFTER_SIGNAL;

/// Whether a write to stderr has given up on a stalled reader after a
/// signal (see `write_stderr`).
static STDERR_GAVE_UP: AtomicBool = AtomicBool::new(false);

/// Writes `bytes` to retry's stderr (fd 2, without std's lock, which a
/// thread stalled on a reader would hold), in pieces a pipe takes at once,
/// each after `poll` says stderr takes more. Before any signal it waits as
/// long as the reader needs (back-pressure, as for any program); once a
/// terminating signal has come, a stall of `STALL_AFTER_SIGNAL` ends the
/// write, and every later write takes only what stderr takes without a
/// wait: the stall is waited for once per run, not once per line. Returns
/// how many bytes were written, and the error that ended the write early
/// (a reader gone is EPIPE; a stall, `TimedOut`).
pub fn write_stderr(bytes: &[u8]) -> (usize, io::Result<()>) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::BorrowedFd;
    use std::time::Instant;
    /// A page: a pipe that polls writable has at least that much room.
    const PIECE: usize = 4096;
    /// How often a wait for a stalled reader looks whether a signal came
    /// (it may be delivered to another thread, which leaves poll asleep).
    const LOOK_MS: u8 = 50;
    // SAFETY: fd 2 is open for retry's whole life (`start` opens
    // /dev/null there if it was closed), and is never closed.
    let fd = unsafe { BorrowedFd::borrow_raw(libc::STDERR_FILENO) };
    let mut written = 0;
    // Since when stderr has taken nothing, counted from the signal on.
    let mut stalled_since: Option<Instant> = None;
    while written < bytes.len() {
        let gave_up = STDERR_GAVE_UP.load(Ordering::Relaxed);
        let look = match gave_up && signal_came() {
            true => PollTimeout::ZERO,
            false => PollTimeout::from(LOOK_MS),
        };
        let mut fds = [PollFd::new(fd, PollFlags::POLLOUT)];
        match poll(&mut fds, look) {
            Ok(0) | Err(Errno::EINTR) => {
                let ending = signal_came();
                if ending {
                    let since = *stalled_since.get_or_insert_with(Instant::now);
                    if gave_up || since.elapsed() >= STALL_AFTER_SIGNAL {
                        STDERR_GAVE_UP.store(true, Ordering::Relaxed);
                        let stalled = "stderr took nothing after a signal";
                        return (
                            written,
                            Err(io::Error::new(io::ErrorKind::TimedOut, stalled)),
                        );
                    }
                }
                continue;
            }
            Err(error) => return (written, Err(error.into())),
            Ok(_) => {}
        }
        let end = bytes.len().min(written + PIECE);
        match nix::unistd::write(fd, &bytes[written..end]) {
            Ok(n) => {
                written += n;
                stalled_since = None;
            }
            Err(Errno::EINTR | Errno::EAGAIN) => {}
            Err(error) => return (written, Err(error.into())),
        }
    }
    (written, Ok(()))
}

/// Whether a terminating signal has come: seen by a handler, or (the
/// signalfd) read or still waiting to be read.
fn signal_came() -> bool {
    #[cfg(signalfd)]
    return last_signal() != 0 || signalfd_linux::pending();
    #[cfg(not(signalfd))]
    return last_signal() != 0;
}

/// Reads at `offset` without moving the file's offset (`pread`).
pub fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

/// Writes at `offset` without moving the file's offset (`pwrite`).
pub fn write_at(file: &std::fs::File, buf: &[u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::write_at(file, buf, offset)
}

/// `-s` and `--on-retry`: `/bin/sh -c SCRIPT`.
pub fn shell(script: OsString) -> (OsString, Vec<OsString>) {
    ("/bin/sh".into(), vec!["-c".into(), script])
}

/// `SIGTERM` for 15; `None` for a number this platform does not name.
pub fn signal_name(signal: i32) -> Option<&'static str> {
    Signal::try_from(signal).ok().map(Signal::as_str)
}

/// N for the real-time signal `SIGRTMIN+N`, as `kill -l` names it; `None`
/// for any other number (and on systems without real-time signals).
pub fn realtime_offset(signal: i32) -> Option<i32> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if (libc::SIGRTMIN()..=libc::SIGRTMAX()).contains(&signal) {
        return Some(signal - libc::SIGRTMIN());
    }
    let _ = signal;
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Raw statuses as the kernel writes them (exit: code << 8; death:
    /// the signal; stop: signal << 8 | 0x7f), for every signal number.
    #[test]
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn every_wait_status_is_decoded_real_time_signals_too() {
        assert_eq!(decode(3 << 8), Some(Waited::Exited(3)));
        for signal in 1..=libc::SIGRTMAX() {
            assert_eq!(decode(signal), Some(Waited::Killed(signal)), "{signal}");
        }
        assert_eq!(decode((libc::SIGTSTP << 8) | 0x7f), Some(Waited::Stopped));
        assert_eq!(decode((libc::SIGSTOP << 8) | 0x7f), None);
        assert_eq!(realtime_offset(libc::SIGRTMIN() + 6), Some(6));
        assert_eq!(realtime_offset(libc::SIGTERM), None);
    }

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
}
