//! Opening `--log-file` to append retry's lines, so that opening it can
//! never hang retry before the command has even run.
//!
//! - It is opened with `O_NONBLOCK`: a FIFO that has no reader is refused
//!   at once (`ENXIO`) instead of waiting for one, and so is a device that
//!   would wait (a serial line's carrier). A FIFO or pipe that has a reader
//!   is taken (`--log-file /dev/fd/3` into `| jq`).
//! - What was opened must take appended lines: a regular file, a character
//!   device (a terminal, `/dev/null`, `/dev/stderr`) or a pipe. A block
//!   device or a socket is refused.
//! - Once open, a pipe or device is made blocking again: a slow reader
//!   slows retry's lines as it would on stderr, rather than losing them.
//! - `O_NOCTTY`: a terminal opened as the log never becomes retry's
//!   controlling terminal.
//!
//! All of it is POSIX: every Unix takes the same path.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::{FcntlArg, OFlag, fcntl};

/// Opens `path` for appending, created `0600` if missing (the command
/// line it records may hold a token). Refusals are errors whose message
/// ends a line: "a FIFO with no reader; retry does not wait for one".
pub fn open(path: &Path) -> io::Result<File> {
    let file = File::options()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|error| explain(path, error))?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        // O_NONBLOCK means nothing to a regular file.
        return Ok(file);
    }
    if !(kind.is_fifo() || kind.is_char_device()) {
        return Err(refused(match () {
            () if kind.is_block_device() => "a block device",
            () if kind.is_socket() => "a socket",
            () => "an unknown kind of file",
        }));
    }
    let flags = fcntl(&file, FcntlArg::F_GETFL)?;
    let flags = OFlag::from_bits_truncate(flags) - OFlag::O_NONBLOCK;
    fcntl(&file, FcntlArg::F_SETFL(flags))?;
    Ok(file)
}

/// A refusal: what the path is, and what a log can go to.
fn refused(what: &str) -> io::Error {
    io::Error::other(format!(
        "it is {what}; a log goes to a file, a character device (a terminal, /dev/null) or a pipe"
    ))
}

/// Words for the errors a non-blocking open adds: `ENXIO` is "No such
/// device or address" to the reader, who asked for a FIFO or a socket.
fn explain(path: &Path, error: io::Error) -> io::Error {
    if error.raw_os_error() != Some(libc::ENXIO) {
        return error;
    }
    match path.metadata().map(|meta| meta.file_type()) {
        Ok(kind) if kind.is_fifo() => {
            io::Error::other("a FIFO with no reader; retry does not wait for one")
        }
        Ok(kind) if kind.is_socket() => refused("a socket"),
        _ => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    }

    #[test]
    fn a_fifo_needs_a_reader_and_is_then_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        mkfifo(&fifo);
        let err = open(&fifo).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a FIFO with no reader; retry does not wait for one"
        );
        let _reader = File::options()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let file = open(&fifo).unwrap();
        let flags = OFlag::from_bits_truncate(fcntl(&file, FcntlArg::F_GETFL).unwrap());
        assert!(!flags.contains(OFlag::O_NONBLOCK), "{flags:?}");
        assert!(flags.contains(OFlag::O_APPEND), "{flags:?}");
    }

    #[test]
    fn devices_and_files_are_taken_and_others_refused() {
        open(Path::new("/dev/null")).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        open(&tmp.path().join("new.log")).unwrap();
        // A directory cannot be opened for writing at all.
        assert!(open(tmp.path()).is_err());
        let socket = tmp.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let err = open(&socket).unwrap_err().to_string();
        assert!(err.starts_with("it is a socket; a log goes to"), "{err}");
        // A block device, where one is there to try (root may open it).
        let loop0 = Path::new("/dev/loop0");
        if loop0
            .metadata()
            .is_ok_and(|m| m.file_type().is_block_device())
        {
            match open(loop0) {
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {}
                Err(e) => assert!(e.to_string().starts_with("it is a block device"), "{e}"),
                Ok(_) => panic!("a block device was taken"),
            }
        }
    }
}
