//! The kernel's lock on a budget's file, taken for each update and given
//! up after a bounded wait, so a stopped holder cannot stall every retry.

use std::fs::{File, TryLockError};
use std::io;
use std::time::{Duration, Instant};

/// How long an update waits for the lock before it goes ahead without the
/// budget: a holder that is stopped (^Z, a debugger) must not stall
/// everyone. Updates take microseconds; a crash releases the lock.
pub(super) const LOCK_WAIT: Duration = Duration::from_secs(2);

/// An exclusive lock on the open file, released when dropped (or when the
/// process dies: it is the kernel's, `flock` on Unix).
pub(super) struct Lock<'a>(&'a File);

impl<'a> Lock<'a> {
    pub(super) fn take(file: &'a File, wait: Duration) -> io::Result<Self> {
        let until = Instant::now() + wait;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Lock(file)),
                Err(TryLockError::Error(e)) => return Err(e),
                Err(TryLockError::WouldBlock) if Instant::now() >= until => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("another retry has held its lock for {wait:?}"),
                    ));
                }
                Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_micros(200)),
            }
        }
    }
}

impl Drop for Lock<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}
