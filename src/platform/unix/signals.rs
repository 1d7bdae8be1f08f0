//! The signals that ask retry to stop (every catchable signal whose default
//! action ends a process, see `platform::terminating_signals`) and SIGCHLD,
//! made readable descriptors so that one wait (`poll`, which every Unix
//! has, or `ppoll` where it exists: see `wait_ready`) waits for "a child
//! changed state", "a signal arrived" and "the deadline passed" at once: no
//! busy polling. On Linux they are blocked and read from two signalfds
//! (`signalfd_linux.rs`: no handler to install per signal); elsewhere, and
//! with `--features portable`, handlers write a byte to two self-pipes
//! (`platform::catch_signals`).
//!
//! A signal the caller left ignored (`nohup`, a shell's background job) is
//! not caught: it stays ignored, and the command inherits that. Threads of
//! retry's own (the pipes) wake the same wait through a `Waker`.

use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags};

use crate::platform;

/// The longest single wait: a deadline further away is waited for in steps,
/// so no timeout can overflow the kernel's time type (poll's milliseconds
/// are an i32: 24.8 days).
const LONGEST_WAIT: Duration = Duration::from_secs(86_400);

pub struct Signals {
    /// Readable when a terminating signal came: a self-pipe's read end, or
    /// a signalfd.
    terminate: OwnedFd,
    /// Readable when SIGCHLD came: a self-pipe's read end, or a signalfd.
    child: OwnedFd,
    /// Readable when a `Waker` fired: the child self-pipe itself, or (with
    /// the signalfd, which no thread can write to) a pipe of its own.
    #[cfg(signalfd)]
    wakes: UnixStream,
    /// The write end `Waker`s write to.
    wake_tx: Arc<UnixStream>,
}

/// Wakes a `Signals::wait` that listens for children, from any thread.
#[derive(Clone)]
pub struct Waker(Arc<UnixStream>);

impl Waker {
    pub fn wake(&self) {
        // Full pipe: a wake-up is already pending, which is all this says.
        let _ = (&*self.0).write(&[1]);
    }
}

pub use crate::platform::seam::Wake;

impl Signals {
    /// Starts from an empty signal mask and installs the handlers. Call
    /// before spawning anything, so no SIGCHLD is missed.
    pub fn install() -> io::Result<Self> {
        Self::catching(&platform::terminating_signals())
    }

    #[cfg(signalfd)]
    fn catching(signals: &[i32]) -> io::Result<Self> {
        let (wakes, wake_tx) = UnixStream::pair()?;
        wakes.set_nonblocking(true)?;
        wake_tx.set_nonblocking(true)?;
        let (terminate, child) = platform::signalfd_linux::catch(signals)?;
        Ok(Self {
            terminate,
            child,
            wakes,
            wake_tx: Arc::new(wake_tx),
        })
    }

    #[cfg(not(signalfd))]
    fn catching(signals: &[i32]) -> io::Result<Self> {
        let (terminate, terminate_tx) = UnixStream::pair()?;
        let (child, child_tx) = UnixStream::pair()?;
        for end in [&terminate, &terminate_tx, &child, &child_tx] {
            end.set_nonblocking(true)?;
        }
        let wake_tx = Arc::new(child_tx.try_clone()?);
        platform::catch_signals(
            OwnedFd::from(terminate_tx),
            OwnedFd::from(child_tx),
            signals,
        )?;
        Ok(Self {
            terminate: terminate.into(),
            child: child.into(),
            wake_tx,
        })
    }

    pub fn waker(&self) -> Waker {
        Waker(Arc::clone(&self.wake_tx))
    }

    /// Blocks until a signal arrives, `until` passes, or (with `child`) a
    /// SIGCHLD or a `Waker` fires. Returns at once if any of these is
    /// already pending. It may also return early; callers re-check.
    pub fn wait(&self, until: Option<Instant>, child: bool) -> Wake {
        let left = until.map(|t| {
            t.saturating_duration_since(Instant::now())
                .min(LONGEST_WAIT)
        });
        // On the stack: a wait allocates nothing (issue 26).
        let mut fds = [
            PollFd::new(self.terminate.as_fd(), PollFlags::POLLIN),
            PollFd::new(self.child.as_fd(), PollFlags::POLLIN),
            #[cfg(signalfd)]
            PollFd::new(self.wakes.as_fd(), PollFlags::POLLIN),
        ];
        let listened = if child { fds.len() } else { 1 };
        // EINTR is a wake like any other: the caller re-checks its state.
        wait_ready(&mut fds[..listened], left);
        if child {
            // Only a wake-up: the caller asks waitpid. Left unread, it would
            // keep every later poll returning at once.
            drain(&self.child);
            #[cfg(signalfd)]
            drain(&self.wakes);
        }
        self.take()
    }

    /// The terminating signals received since the last look, without waiting.
    pub fn take(&self) -> Wake {
        #[cfg(signalfd)]
        let signals = platform::signalfd_linux::drain(&self.terminate);
        #[cfg(not(signalfd))]
        let signals = drain(&self.terminate);
        Wake {
            signals,
            last_signal: platform::last_signal(),
        }
    }
}

/// Waits until one of `fds` is ready or `left` has passed (`None`: no
/// limit). Where nix offers it, `ppoll` waits to the nanosecond: a sleep
/// ends within about 0.2 ms of its time (bench/RESULTS.md, sleep accuracy)
/// instead of up to 1 ms late with poll's whole milliseconds.
#[cfg(precise_wait)]
fn wait_ready(fds: &mut [PollFd], left: Option<Duration>) {
    let timeout = left.map(nix::sys::time::TimeSpec::from_duration);
    let _ = nix::poll::ppoll(fds, timeout, None);
}

/// Every other Unix (and `--features portable`): `poll`, in milliseconds
/// rounded up, so a wait never ends early and spins.
#[cfg(not(precise_wait))]
fn wait_ready(fds: &mut [PollFd], left: Option<Duration>) {
    let timeout = match left {
        None => nix::poll::PollTimeout::NONE,
        Some(left) => {
            let ms = left.as_nanos().div_ceil(1_000_000);
            nix::poll::PollTimeout::try_from(ms).unwrap_or(nix::poll::PollTimeout::MAX)
        }
    };
    let _ = nix::poll::poll(fds, timeout);
}

/// Reads every pending byte of a self-pipe (each one delivered signal),
/// or every pending signal of a signalfd (for SIGCHLD only a wake-up: what
/// ended, waitpid says).
fn drain(fd: &impl AsFd) -> usize {
    // A signalfd takes no read shorter than one signal's record (128 bytes).
    let mut buf = [0u8; 1024];
    let mut total = 0;
    loop {
        match nix::unistd::read(fd.as_fd(), &mut buf) {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test, not several: handlers are process-wide, so a raise in a
    // parallel test would wake every `Signals` in the test binary.
    #[test]
    fn wakes_on_deadline_on_a_waker_and_on_a_signal() {
        // A signal that cannot be caught (valgrind keeps one of the
        // real-time signals) is skipped, not a failure to start.
        let mut list = platform::terminating_signals();
        list.insert(0, libc::SIGKILL);
        list.push(libc::SIGSTOP);
        let signals = Signals::catching(&list).unwrap();

        // A signal between fork and exec is the command's, at its default
        // action: it never reaches retry's handler (and self-pipe).
        let mut spawn = crate::platform::spawn::Spawn::new("true");
        spawn.raise_in_child = Some(libc::SIGHUP);
        let child = spawn.forked().unwrap();
        let status = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(child.pid), None);
        assert_eq!(
            status.unwrap(),
            nix::sys::wait::WaitStatus::Signaled(
                nix::unistd::Pid::from_raw(child.pid),
                nix::sys::signal::Signal::SIGHUP,
                false
            )
        );
        assert_eq!(
            signals.take().signals,
            0,
            "the child's signal reached retry"
        );
        // A deadline ends the wait. Another test's child ending (SIGCHLD,
        // process-wide) interrupts it early, as callers allow for: wait
        // again until the deadline, in a few wakes, not a spin.
        let deadline = Instant::now() + Duration::from_millis(5);
        let mut wakes = 0;
        while Instant::now() < deadline {
            let wake = signals.wait(Some(deadline), false);
            assert_eq!(wake.signals, 0);
            wakes += 1;
            assert!(
                wakes <= 50,
                "a wait with a deadline returned at once {wakes} times"
            );
        }

        // A waker ends a wait for children long before its deadline.
        let waker = signals.waker();
        std::thread::spawn(move || waker.wake());
        let start = Instant::now();
        signals.wait(Some(start + Duration::from_secs(20)), true);
        assert!(start.elapsed() < Duration::from_secs(10));

        // A deadline centuries away is waited for in steps, not refused.
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGHUP).unwrap();
        let far = Instant::now().checked_add(Duration::from_secs(1 << 40));
        let wake = signals.wait(far, false);
        assert_eq!((wake.signals, wake.last_signal), (1, libc::SIGHUP));

        // Linux reads them from a signalfd: no handler is installed for
        // any (each one is a `sigaction` call at start-up, and another in
        // every command's `posix_spawn`), and one ignored is dropped.
        #[cfg(signalfd)]
        {
            let handler = |signal| {
                // SAFETY: only reads a disposition into a zeroed value.
                let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
                assert_eq!(
                    unsafe { libc::sigaction(signal, std::ptr::null(), &mut old) },
                    0
                );
                old.sa_sigaction
            };
            for signal in platform::terminating_signals() {
                assert!(
                    [libc::SIG_DFL, libc::SIG_IGN].contains(&handler(signal)),
                    "a handler for signal {signal}"
                );
            }
            assert_eq!(handler(libc::SIGCHLD), libc::SIG_DFL);
            // SAFETY: dispositions only; this thread has both blocked, and
            // SIGUSR2 goes back to its default once the test is done.
            unsafe { libc::signal(libc::SIGUSR2, libc::SIG_IGN) };
            nix::sys::signal::raise(nix::sys::signal::Signal::SIGUSR2).unwrap();
            assert_eq!(signals.take().signals, 0, "an ignored signal counted");
            unsafe { libc::signal(libc::SIGUSR2, libc::SIG_DFL) };
        }
    }
}
