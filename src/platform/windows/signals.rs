//! The console control events that ask retry to stop (Ctrl-C, Ctrl-Break,
//! the console closed, logoff, shutdown), turned into a count and an event
//! object by `SetConsoleCtrlHandler`'s handler (which Windows runs on a
//! thread of its own), so that one `WaitForMultipleObjects` waits for "a
//! command ended", "an event arrived", "a thread of retry's woke us" and
//! "the deadline passed" at once.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::Console::{
    CTRL_BREAK_EVENT, CTRL_C_EVENT, CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT,
    SetConsoleCtrlHandler,
};
use windows_sys::Win32::System::Threading::{
    CreateEventW, INFINITE, SetEvent, WaitForMultipleObjects,
};
use windows_sys::core::BOOL;

use crate::platform::{SIGBREAK, SIGHUP, SIGINT};

/// The longest single wait: a deadline further away is waited for in
/// steps (the timeout is a u32 of milliseconds, INFINITE excluded).
const LONGEST_WAIT: Duration = Duration::from_secs(86_400);

/// Where the handler reports: the event it sets, the events since the last
/// look and the latest one's number.
static TERMINATE: AtomicPtr<core::ffi::c_void> = AtomicPtr::new(std::ptr::null_mut());
static RECEIVED: AtomicUsize = AtomicUsize::new(0);
static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// How long the handler holds a closing console open: Windows ends the
/// process when the handler returns (and after 5 s regardless); retry
/// reports and exits meanwhile.
const CLOSE_GRACE: Duration = Duration::from_secs(10);

unsafe extern "system" fn on_console_event(event: u32) -> BOOL {
    let signal = match event {
        CTRL_C_EVENT => SIGINT,
        CTRL_BREAK_EVENT => SIGBREAK,
        CTRL_CLOSE_EVENT | CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT => SIGHUP,
        _ => return 0,
    };
    LAST_SIGNAL.store(signal, Ordering::SeqCst);
    RECEIVED.fetch_add(1, Ordering::SeqCst);
    let event = TERMINATE.load(Ordering::SeqCst);
    if !event.is_null() {
        // SAFETY: the event lives for good (`Signals` leaks its handle
        // into `TERMINATE`).
        unsafe { SetEvent(event) };
    }
    if signal == SIGHUP {
        // No time for a gentle stop: Windows ends retry within 5 s, and a
        // tree it left would run on. retry exits (die_by) while this
        // thread waits.
        super::stop_all();
        std::thread::sleep(CLOSE_GRACE);
    }
    1
}

/// An auto-reset event object.
fn new_event() -> io::Result<OwnedHandle> {
    // SAFETY: no attributes, no name; a null handle is the error.
    let handle = unsafe { CreateEventW(std::ptr::null(), 0, 0, std::ptr::null()) };
    if handle.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new handle that nothing else owns.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
}

pub struct Signals {
    terminate: HANDLE,
    wake: Arc<OwnedHandle>,
}

/// Wakes a `Signals::wait` that listens for children, from any thread.
#[derive(Clone)]
pub struct Waker(Arc<OwnedHandle>);

impl Waker {
    pub fn wake(&self) {
        // SAFETY: a live event handle.
        unsafe { SetEvent(self.0.as_raw_handle()) };
    }
}

pub use crate::platform::seam::Wake;

impl Signals {
    /// Installs the console handler. A process with no console installs it
    /// all the same: it then receives nothing.
    pub fn install() -> io::Result<Self> {
        let terminate = new_event()?;
        let wake = Arc::new(new_event()?);
        // The handler may run until the process ends: the event is never closed.
        let terminate = std::os::windows::io::IntoRawHandle::into_raw_handle(terminate);
        TERMINATE.store(terminate, Ordering::SeqCst);
        // SAFETY: a handler that only touches atomics and a live event.
        unsafe { SetConsoleCtrlHandler(Some(on_console_event), 1) };
        Ok(Self { terminate, wake })
    }

    pub fn waker(&self) -> Waker {
        Waker(Arc::clone(&self.wake))
    }

    /// Blocks until an event arrives, `until` passes, or (with `child`) a
    /// command ends or a `Waker` fires. It may also return early; callers
    /// re-check.
    pub fn wait(&self, until: Option<Instant>, child: bool) -> Wake {
        if RECEIVED.load(Ordering::SeqCst) == 0 {
            let left = until.map(|t| {
                t.saturating_duration_since(Instant::now())
                    .min(LONGEST_WAIT)
            });
            let timeout = match left {
                None => INFINITE,
                // Whole milliseconds rounded up, so a wait never ends early and spins.
                Some(left) => left.as_nanos().div_ceil(1_000_000) as u32,
            };
            let mut handles: Vec<HANDLE> = vec![self.terminate];
            if child {
                handles.push(self.wake.as_raw_handle());
                // At most 64 in all: retry runs one command at a time.
                handles.extend(
                    super::running_handles()
                        .into_iter()
                        .take(62)
                        .map(|h| h as HANDLE),
                );
            }
            // SAFETY: live handles (events, and processes kept until this
            // thread forgets them).
            unsafe { WaitForMultipleObjects(handles.len() as u32, handles.as_ptr(), 0, timeout) };
        }
        self.take()
    }

    /// The events received since the last look, without waiting.
    pub fn take(&self) -> Wake {
        Wake {
            signals: RECEIVED.swap(0, Ordering::SeqCst),
            last_signal: LAST_SIGNAL.load(Ordering::SeqCst),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_on_deadline_and_on_a_waker() {
        let signals = Signals::install().unwrap();
        let start = Instant::now();
        let wake = signals.wait(Some(start + Duration::from_millis(5)), false);
        assert!(start.elapsed() >= Duration::from_millis(5));
        assert_eq!(wake.signals, 0);

        let waker = signals.waker();
        std::thread::spawn(move || waker.wake());
        let start = Instant::now();
        signals.wait(Some(start + Duration::from_secs(20)), true);
        assert!(start.elapsed() < Duration::from_secs(10));
    }
}
