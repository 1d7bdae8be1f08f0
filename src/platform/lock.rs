//! The kernel's lock on a file retry keeps state in (the budget's and the
//! breaker's records, the textfile's lock file), given up after a bounded
//! wait, so a stopped holder cannot stall every run. How long to wait is
//! the caller's: each file's rules say.

use std::fs::{File, TryLockError};
use std::io;
use std::time::{Duration, Instant};

/// An exclusive lock on the open file, released when dropped (or when the
/// process dies: it is the kernel's, `flock` on Unix).
pub struct Lock<'a>(&'a File);

impl<'a> Lock<'a> {
    pub fn take(file: &'a File, wait: Duration) -> io::Result<Self> {
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
