//! Whether a pipe has something to read, on Windows: `PeekNamedPipe`,
//! which anonymous pipes answer too. Windows cannot wait on an anonymous
//! pipe with other objects, so `wait_readable` asks again, soon after
//! output and then less often (1 ms doubling to 20 ms): output waits 20 ms
//! at most, and a quiet command costs 50 wake-ups a second.
//!
//! Unlike `poll`'s POLLHUP, a pipe whose writers are gone but that still
//! holds bytes does not say so: `writers_gone` is true only once it is
//! read to its end.

use std::io::{self, PipeReader};
use std::os::windows::io::AsRawHandle;
use std::time::Duration;

use windows_sys::Win32::Foundation::{ERROR_BROKEN_PIPE, GetLastError};
use windows_sys::Win32::System::Pipes::PeekNamedPipe;

/// How soon, and how seldom, `wait_readable` asks again.
const FIRST_ROUND: Duration = Duration::from_millis(1);
const LONGEST_ROUND: Duration = Duration::from_millis(20);

/// What a pipe holds: `Some(bytes)` waiting, or `None` when every writer
/// has closed it and it is empty.
fn peek(pipe: &PipeReader) -> io::Result<Option<u32>> {
    let mut available = 0u32;
    // SAFETY: a live pipe handle; no buffer asked for, one u32 written.
    let ok = unsafe {
        PeekNamedPipe(
            pipe.as_raw_handle(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            &mut available,
            std::ptr::null_mut(),
        )
    };
    if ok != 0 {
        return Ok(Some(available));
    }
    // SAFETY: reads this thread's last error.
    match unsafe { GetLastError() } {
        ERROR_BROKEN_PIPE => Ok(None),
        code => Err(io::Error::from_raw_os_error(code as i32)),
    }
}

/// Whether every writer of `pipe` has closed its end and it is read to
/// its end. A pipe that cannot be asked counts as still open.
pub fn writers_gone(pipe: &PipeReader) -> bool {
    matches!(peek(pipe), Ok(None))
}

/// Waits until `first` or `second` has bytes to read (or its end); which
/// of them do.
pub fn wait_readable(first: &PipeReader, second: &PipeReader) -> io::Result<[bool; 2]> {
    let mut round = FIRST_ROUND;
    loop {
        let ready = |pipe| peek(pipe).map(|p| p.is_none_or(|n| n > 0));
        let both = [ready(first)?, ready(second)?];
        if both.contains(&true) {
            return Ok(both);
        }
        std::thread::sleep(round);
        round = (round * 2).min(LONGEST_ROUND);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_pipe_reports_its_writers_and_its_bytes() {
        let (reader, mut writer) = io::pipe().unwrap();
        let (other, _other_writer) = io::pipe().unwrap();
        assert!(!writers_gone(&reader));
        writer.write_all(b"x").unwrap();
        assert_eq!(wait_readable(&other, &reader).unwrap(), [false, true]);
    }
}
