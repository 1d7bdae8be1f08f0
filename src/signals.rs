//! Termination signals sent to retry (SIGINT, SIGTERM, SIGHUP, SIGQUIT) and
//! SIGCHLD, turned into bytes on two self-pipes so that one `ppoll` waits
//! for "the child exited", "a signal arrived" and "the deadline passed" at
//! once: no thread, no busy polling, and the handlers only write a byte.

use std::io::{self, Read};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::time::TimeSpec;
use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM};

pub const TERMINATING: [i32; 4] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT];

pub struct Signals {
    terminate: UnixStream,
    child: UnixStream,
    /// The number of the latest terminating signal (0 before any).
    last: Arc<AtomicUsize>,
}

/// What woke a wait.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Wake {
    /// Terminating signals received since the last wait, and the latest one.
    pub signals: usize,
    pub last_signal: i32,
}

impl Signals {
    /// Installs the handlers. Call before spawning, so no SIGCHLD is missed.
    pub fn install() -> io::Result<Self> {
        let last = Arc::new(AtomicUsize::new(0));
        let (terminate, terminate_tx) = UnixStream::pair()?;
        for signal in TERMINATING {
            // Registered in this order, so the flag is set before the byte wakes us.
            signal_hook::flag::register_usize(signal, Arc::clone(&last), signal as usize)?;
            signal_hook::low_level::pipe::register(signal, terminate_tx.try_clone()?)?;
        }
        let (child, child_tx) = UnixStream::pair()?;
        signal_hook::low_level::pipe::register(SIGCHLD, child_tx)?;
        terminate.set_nonblocking(true)?;
        child.set_nonblocking(true)?;
        Ok(Self {
            terminate,
            child,
            last,
        })
    }

    /// Blocks until a signal arrives, `until` passes, or (with `child`) a
    /// SIGCHLD arrives. Returns at once if any of these is already pending.
    pub fn wait(&self, until: Option<Instant>, child: bool) -> Wake {
        let timeout =
            until.map(|t| TimeSpec::from_duration(t.saturating_duration_since(Instant::now())));
        let mut fds = vec![PollFd::new(self.terminate.as_fd(), PollFlags::POLLIN)];
        if child {
            fds.push(PollFd::new(self.child.as_fd(), PollFlags::POLLIN));
        }
        // EINTR is a wake like any other: the caller re-checks its state.
        let _ = ppoll(&mut fds, timeout, None);
        if child {
            // Only a wake-up: the caller asks waitpid. Left unread, it would
            // keep every later ppoll returning at once.
            drain(&self.child);
        }
        self.take()
    }

    /// The terminating signals received since the last look, without waiting.
    pub fn take(&self) -> Wake {
        Wake {
            signals: drain(&self.terminate),
            last_signal: self.last.load(Ordering::SeqCst) as i32,
        }
    }
}

/// Reads every pending byte; each byte is one delivered signal.
fn drain(mut pipe: &UnixStream) -> usize {
    let mut buf = [0u8; 64];
    let mut total = 0;
    loop {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    // One test, not two: handlers are process-wide, so a raise in a parallel
    // test would wake every `Signals` in the test binary.
    #[test]
    fn wakes_on_deadline_then_on_a_signal() {
        let signals = Signals::install().unwrap();
        let start = Instant::now();
        let wake = signals.wait(Some(start + Duration::from_millis(5)), false);
        assert!(start.elapsed() >= Duration::from_millis(5));
        assert_eq!(wake.signals, 0);

        signal_hook::low_level::raise(SIGHUP).unwrap();
        let wake = signals.wait(Some(Instant::now() + Duration::from_secs(5)), false);
        assert_eq!((wake.signals, wake.last_signal), (1, SIGHUP));
    }
}
