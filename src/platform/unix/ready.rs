//! Whether a pipe has something to read, for `run/pipes`: on Unix `poll`
//! on its descriptor (`windows/ready.rs` asks `PeekNamedPipe`).

use std::io::{self, PipeReader};
use std::os::fd::AsFd;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// Whether every writer of `pipe` has closed its end (checked without
/// waiting). A pipe that cannot be asked counts as still open.
pub fn writers_gone(pipe: &PipeReader) -> bool {
    let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(_) => fds[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLHUP)),
        Err(_) => false,
    }
}

/// Waits until `first` or `second` has bytes to read (or its end); which
/// of them do.
pub fn wait_readable(first: &PipeReader, second: &PipeReader) -> io::Result<[bool; 2]> {
    let mut fds = [
        PollFd::new(first.as_fd(), PollFlags::POLLIN),
        PollFd::new(second.as_fd(), PollFlags::POLLIN),
    ];
    loop {
        match poll(&mut fds, PollTimeout::NONE) {
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
            Ok(_) => return Ok(fds.map(|fd| fd.any().unwrap_or(false))),
        }
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
        drop(writer);
        // A process another test forks at this moment holds a copy of the
        // writer until its exec closes it: the end shows soon, not at once.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !writers_gone(&reader) {
            assert!(
                std::time::Instant::now() < deadline,
                "the writer's end never showed"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
