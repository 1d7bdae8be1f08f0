//! The one failure of retry's own plumbing that ends a run: stdin that
//! cannot be kept for replay, stdout that cannot be held back or written.
//! Any pipes thread may report it; the first report wins and stays for the
//! rest of the run (a later attempt could not be fed or heard either), and
//! the supervisor's waker is called once, so it can stop the attempt
//! whose input or output is now untrustworthy.

use std::sync::{Arc, Mutex};

/// Called once by whichever thread reports the failure.
pub type Waker = Arc<dyn Fn() + Send + Sync>;

#[derive(Default)]
pub struct Failure {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    message: Option<String>,
    waker: Option<Waker>,
    woken: bool,
}

impl Failure {
    /// Records `message` unless a failure is already recorded, and wakes the supervisor.
    pub fn report(&self, message: String) {
        let mut state = self.lock();
        if state.message.is_none() {
            state.message = Some(message);
        }
        self.wake(state);
    }

    pub fn message(&self) -> Option<String> {
        self.lock().message.clone()
    }

    /// Installs the supervisor's waker; a failure reported before it was
    /// installed (stdin unreadable from the start) wakes it at once.
    pub fn set_waker(&self, waker: Waker) {
        let mut state = self.lock();
        state.waker = Some(waker);
        if state.message.is_some() {
            self.wake(state);
        }
    }

    fn wake(&self, mut state: std::sync::MutexGuard<'_, State>) {
        if state.woken {
            return;
        }
        let Some(waker) = state.waker.clone() else {
            return;
        };
        state.woken = true;
        // Called without the lock: the waker may well ask for the message.
        drop(state);
        waker();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Where spill files go, for messages about failing to write one: the
/// value of TMPDIR, which is also how to choose another place.
pub fn temp_dir_note() -> String {
    match std::env::var_os("TMPDIR") {
        Some(dir) => format!("TMPDIR={}", dir.to_string_lossy()),
        None => format!("TMPDIR unset, so {}", std::env::temp_dir().display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn counting() -> (Waker, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let waker: Waker = Arc::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        (waker, calls)
    }

    #[test]
    fn the_first_failure_stays_and_wakes_once() {
        let failure = Failure::default();
        let (waker, calls) = counting();
        failure.set_waker(waker);
        assert_eq!(failure.message(), None);
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        failure.report("first".into());
        failure.report("second".into());
        assert_eq!(failure.message().as_deref(), Some("first"));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_failure_before_the_waker_wakes_it_when_installed() {
        let failure = Failure::default();
        failure.report("early".into());
        let (waker, calls) = counting();
        failure.set_waker(waker);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        failure.report("later".into());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(failure.message().as_deref(), Some("early"));
    }
}
