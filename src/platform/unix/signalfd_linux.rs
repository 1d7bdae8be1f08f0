//! Linux: the signals that ask retry to stop, and SIGCHLD, blocked and read
//! from two `signalfd`s in the one wait retry already makes (`signals.rs`),
//! in place of a handler per signal (issue 45: 46 `sigaction` calls at
//! every start, and as many again in every command's `posix_spawn`, which
//! resets each signal that has a handler). Its twin, on every other Unix
//! and with `--features portable`, is the handlers and self-pipes of
//! `mod.rs` (`catch_signals`).
//!
//! Nothing's disposition changes, so a signal the caller left ignored stays
//! ignored, and the command inherits that; blocked, it is queued all the
//! same, so each one read is looked up and dropped if ignored. SIGCHLD is
//! the exception, as in the twin: ignored, the kernel would reap every
//! child itself, so it is set to its default (`sigchld_was_ignored`).
//! The mask is set before any thread starts, so every thread inherits it
//! and no signal reaches a thread that would take its default action.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::Ordering;

use super::{LAST_SIGNAL, SIGCHLD_WAS_IGNORED};

/// Blocks `signals` and SIGCHLD in this thread (and every thread it starts)
/// and returns a signalfd for each: the terminating ones, and SIGCHLD.
/// Three system calls and a fourth for SIGCHLD's disposition, whatever the
/// number of signals.
pub fn catch(signals: &[i32]) -> io::Result<(OwnedFd, OwnedFd)> {
    let terminating = set(signals);
    let child = set(&[libc::SIGCHLD]);
    // SIGCHLD to its default, and whether the caller had it ignored.
    // SAFETY: zeroed is a valid `sigaction` (SIG_DFL, empty mask, no
    // flags); both pointers are to live values.
    let ignored = unsafe {
        let default: libc::sigaction = std::mem::zeroed();
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGCHLD, &default, &mut old) != 0 {
            return Err(io::Error::last_os_error());
        }
        old.sa_sigaction == libc::SIG_IGN
    };
    SIGCHLD_WAS_IGNORED.store(ignored, Ordering::SeqCst);
    let mut both = terminating;
    // SAFETY: a valid, initialised set; SIGCHLD is a number it takes.
    unsafe { libc::sigaddset(&mut both, libc::SIGCHLD) };
    // Exactly these blocked: a blocked SIGCHLD or terminating signal
    // inherited from the caller is now read here, and anything else the
    // caller blocked is delivered again.
    // SAFETY: a valid set, and no old mask asked for.
    let error = unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &both, std::ptr::null_mut()) };
    if error != 0 {
        return Err(io::Error::from_raw_os_error(error));
    }
    Ok((open(&terminating)?, open(&child)?))
}

/// The set of `signals`; a number the C library refuses (one it keeps for
/// itself) is left out.
fn set(signals: &[i32]) -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set; sigaddset only reads and
    // writes it, and refuses (an error code) a number it rejects.
    unsafe {
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        let mut set = set.assume_init();
        for &signal in signals {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

/// A non-blocking signalfd for `mask`.
fn open(mask: &libc::sigset_t) -> io::Result<OwnedFd> {
    // SAFETY: a valid set; -1 asks for a new descriptor.
    let fd = unsafe { libc::signalfd(-1, mask, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reads every pending signal from `fd` without waiting: how many there
/// were, less those the caller left ignored. The latest is kept for
/// `last_signal`.
pub fn drain(fd: &OwnedFd) -> usize {
    // SAFETY: zeroed is a valid `signalfd_siginfo` (plain integers).
    let mut infos: [libc::signalfd_siginfo; 8] = unsafe { std::mem::zeroed() };
    let mut count = 0;
    loop {
        // SAFETY: reads into a live buffer of exactly the size given.
        let read = unsafe {
            libc::read(
                fd.as_raw_fd(),
                infos.as_mut_ptr().cast(),
                std::mem::size_of_val(&infos),
            )
        };
        let Ok(read) = usize::try_from(read) else {
            return count; // EAGAIN: nothing more pending
        };
        let got = read / std::mem::size_of::<libc::signalfd_siginfo>();
        for info in &infos[..got] {
            let signal = info.ssi_signo as i32;
            if signal == libc::SIGCHLD || ignored(signal) {
                continue;
            }
            LAST_SIGNAL.store(signal, Ordering::SeqCst);
            count += 1;
        }
        if got < infos.len() {
            return count;
        }
    }
}

/// Whether the caller left `signal` ignored: looked up when one arrives,
/// which is rare, rather than for every signal at start-up.
fn ignored(signal: i32) -> bool {
    // SAFETY: only reads the disposition into a live, zeroed value.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Whether a terminating signal waits to be read (`write_stderr` asks
/// when stderr stalls: nothing reads the signalfd meanwhile). Only the
/// terminating signals and SIGCHLD are blocked (`catch`), so any other
/// pending signal is one of them.
pub fn pending() -> bool {
    // SAFETY: sigpending fills a live set; sigismember only reads it.
    unsafe {
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        if libc::sigpending(set.as_mut_ptr()) != 0 {
            return false;
        }
        let set = set.assume_init();
        (1..=libc::SIGRTMAX()).any(|signal| {
            signal != libc::SIGCHLD && libc::sigismember(&set, signal) == 1 && !ignored(signal)
        })
    }
}
