//! A throttle on this host: one owner-only file per throttle in the host's
//! store (`state::store::file`), under `.throttles/` in the per-user
//! directory, beside the budgets and the circuits and on their rules (a
//! file or directory of another user's, a symlink, a FIFO is refused).
//! Each decision is one update under the file's lock: read the record,
//! apply `window.rs`'s rule, write the record back in one write of a fixed
//! length (`record.rs`).
//!
//! The lock is waited for no longer than the store's timeout: the throttle
//! is asked before every attempt, first ones included, so a holder that is
//! stopped (^Z, a debugger) must cost a run no more than a fleet's store
//! that does not answer.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::record::{RECORD_LEN, decode, encode};
use super::window::{Params, Window};
use crate::state::store::file::{self, Lock};

/// The folder of throttles in the host's store directory.
const KIND: &str = ".throttles";

/// A throttle's file, open.
#[derive(Debug)]
pub struct HostThrottle {
    pub path: PathBuf,
    file: File,
    /// How long an update waits for the lock.
    wait: Duration,
}

/// What an update read.
#[derive(Debug, PartialEq)]
pub enum Read<T> {
    /// A record it could trust (or none yet): what `change` returned and
    /// the window after it.
    Trusted(T, Window),
    /// A record it could not trust, and why: reset to an empty window if
    /// the update writes, left as it was if it only looks.
    Untrusted(String),
}

impl HostThrottle {
    /// The throttle `name` under `store` (the host store's directory),
    /// created if `create`; else opened for reading, `None` if it was never
    /// used. Each update waits for the lock at most `wait`.
    pub fn open(
        store: &Path,
        name: &str,
        create: bool,
        wait: Duration,
    ) -> Result<Option<Self>, String> {
        let opened = file::open_kind(store, KIND, name, create)?;
        Ok(opened.map(|(path, file)| HostThrottle { path, file, wait }))
    }

    /// Where a throttle `name` under `store` is kept, for messages.
    pub fn path_of(store: &Path, name: &str) -> PathBuf {
        store.join(KIND).join(name)
    }

    /// Under the lock: the window as of `now_ms` (an empty one if the file
    /// is new), given to `change`, and written back if `write`. A record
    /// that is not valid, or that `super::distrust` refuses, is not given to
    /// `change`: it is reset if `write`. The error is the reason alone.
    pub fn update<T>(
        &self,
        write: bool,
        params: &Params,
        now_ms: u64,
        change: impl FnOnce(&mut Window) -> T,
    ) -> Result<Read<T>, String> {
        let fail =
            |what: &str, e: std::io::Error| format!("cannot {what} {}: {e}", self.path.display());
        let _lock = Lock::take(&self.file, self.wait).map_err(|e| fail("lock", e))?;
        let mut buf = [0u8; RECORD_LEN + 1];
        let len = file::read(&self.file, &mut buf).map_err(|e| fail("read", e))?;
        let found = match len {
            0 => Ok(Window::default()),
            _ => decode(&buf[..len]).ok_or_else(|| "is not a valid throttle record".to_owned()),
        };
        let found = found.and_then(|window| match super::distrust(&window, params, now_ms) {
            Some(why) => Err(why),
            None => Ok(window),
        });
        let (read, next) = match found {
            Ok(window) => {
                let mut window = window.at(params, now_ms);
                let value = change(&mut window);
                (Read::Trusted(value, window), window)
            }
            Err(why) => (
                Read::Untrusted(format!("{} {why}", self.path.display())),
                Window::default(),
            ),
        };
        if write {
            // One write of a fixed length: a kill leaves the old or the new.
            file::write(&self.file, encode(&next).as_bytes(), len).map_err(|e| fail("write", e))?;
        }
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Params = Params {
        k: 2.0,
        window_ms: 120_000,
    };
    const NOW: u64 = 1_792_567_690_000;
    const WAIT: Duration = Duration::from_millis(50);

    #[test]
    fn a_look_writes_nothing_and_an_update_keeps_its_counts() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("retry");
        assert!(
            HostThrottle::open(&dir, "api", false, WAIT)
                .unwrap()
                .is_none()
        );
        let throttle = HostThrottle::open(&dir, "api", true, WAIT)
            .unwrap()
            .unwrap();
        assert_eq!(throttle.path, dir.join(".throttles").join("api"));
        let read = throttle
            .update(true, &P, NOW, |w| w.request(&P, NOW, 0.5))
            .unwrap();
        let Read::Trusted(true, window) = read else {
            panic!("{read:?}")
        };
        assert_eq!(window.current.requests, 1);
        let look = HostThrottle::open(&dir, "api", false, WAIT)
            .unwrap()
            .unwrap();
        look.update(false, &P, NOW, |w| w.accept(&P, NOW)).unwrap();
        let Read::Trusted((), again) = look.update(false, &P, NOW, |_| ()).unwrap() else {
            panic!()
        };
        assert_eq!(again, window, "a look wrote");
    }

    #[test]
    fn a_record_that_cannot_be_trusted_is_reset_by_an_update_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("retry");
        let throttle = HostThrottle::open(&dir, "api", true, WAIT)
            .unwrap()
            .unwrap();
        std::fs::write(&throttle.path, "retry-throttle 1 garbage\n").unwrap();
        let look = throttle.update(false, &P, NOW, |_| ()).unwrap();
        let Read::Untrusted(why) = look else {
            panic!("{look:?}")
        };
        assert!(why.ends_with("api is not a valid throttle record"), "{why}");
        assert!(
            std::fs::read(&throttle.path)
                .unwrap()
                .starts_with(b"retry-throttle 1 garbage")
        );
        // A window a day ahead of the clock: a clock that went back.
        let ahead = Window {
            start_ms: NOW + 86_400_000,
            ..Window::default()
        };
        std::fs::write(&throttle.path, encode(&ahead)).unwrap();
        let Read::Untrusted(why) = throttle.update(true, &P, NOW, |_| ()).unwrap() else {
            panic!()
        };
        assert!(why.contains("ahead of the clock"), "{why}");
        let reset = std::fs::read(&throttle.path).unwrap();
        assert_eq!(decode(&reset), Some(Window::default()));
        assert!(matches!(
            throttle.update(true, &P, NOW, |_| ()).unwrap(),
            Read::Trusted((), _)
        ));
    }

    #[test]
    fn a_lock_held_longer_than_the_wait_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("retry");
        let throttle = HostThrottle::open(&dir, "api", true, WAIT)
            .unwrap()
            .unwrap();
        let other = File::open(&throttle.path).unwrap();
        other.lock().unwrap();
        let started = std::time::Instant::now();
        let error = throttle.update(true, &P, NOW, |_| ()).unwrap_err();
        assert!(error.starts_with("cannot lock "), "{error}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
