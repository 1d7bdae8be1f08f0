//! Opening `--log-file` to append retry's lines, so that opening it can
//! never hang retry before the command has even run, nor lead it (run as
//! root, say) into a file another user chose.
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
//! - A final symlink is followed only if this user or root owns it, and
//!   so is each link it leads to: root is not led by a link another user
//!   made into appending to `/etc/passwd`. Root's own are trusted (root
//!   could write any file itself; `/dev/stderr` is root's link). The rule
//!   is that of Linux's `fs.protected_symlinks`, but in every directory,
//!   not only in sticky world-writable ones, and without its exception for
//!   a link the directory's owner made: a home directory's owner is exactly
//!   who must not steer root. Links among the directories above the last
//!   component are followed as usual: that is where the user chose to write.
//!   The links are checked before the open and again after it, with the
//!   file opened compared to the one the path names then, so a link swapped
//!   in meanwhile is caught before a line is written (the open itself, in
//!   that moment, may still have created an empty file where it led).
//!
//! All of it is POSIX: every Unix takes the same path. `O_NOFOLLOW` fails
//! with `ELOOP` on Linux, macOS and OpenBSD, `EMLINK` on FreeBSD, `EFTYPE`
//! on NetBSD: whether the path is a symlink is asked with `lstat` instead.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::{FcntlArg, OFlag, fcntl};

use crate::platform::owner::same_file;
use crate::platform::private::user_id;

/// Links followed from one path at most, as Linux's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// Opens `path` for appending, created `0600` if missing (the command
/// line it records may hold a token). Refusals are errors whose message
/// ends a line: "a FIFO with no reader; retry does not wait for one".
pub fn open(path: &Path) -> io::Result<File> {
    let file = match open_with(path, libc::O_NOFOLLOW) {
        Ok(file) => file,
        Err(_) if is_symlink(path) => {
            links_allowed(path)?;
            let file = open_with(path, 0)?;
            links_allowed(path)?;
            if !same_file(&file, path) {
                return Err(io::Error::other(
                    "it changed while it was being opened; refusing it",
                ));
            }
            file
        }
        Err(error) => return Err(error),
    };
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

/// The open itself: appending, created `0600`, never waiting, never
/// taking a controlling terminal; `extra` adds `O_NOFOLLOW`.
fn open_with(path: &Path, extra: libc::c_int) -> io::Result<File> {
    File::options()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | extra)
        .open(path)
        .map_err(|error| explain(path, error))
}

fn is_symlink(path: &Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|meta| meta.file_type().is_symlink())
}

/// Whether every link from `path` on, as far as they go, is this user's
/// or root's. A path that is not there (yet) ends the chain: the open
/// creates a file there, not a link, or says why it cannot.
fn links_allowed(path: &Path) -> io::Result<()> {
    let me = user_id();
    let mut link = path.to_owned();
    for _ in 0..MAX_LINKS {
        let Ok(meta) = link.symlink_metadata() else {
            return Ok(());
        };
        if !meta.file_type().is_symlink() {
            return Ok(());
        }
        let owner = meta.uid();
        if owner != me && owner != 0 {
            let what = format!(
                "a symlink owned by user id {owner}, not by you ({me}) or root; refusing to follow it"
            );
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                match link == path {
                    true => format!("it is {what}"),
                    false => format!("it leads to '{}', {what}", link.display()),
                },
            ));
        }
        // A relative target is relative to the link's directory. (Linux's
        // `/proc/self/fd/N`, behind `/dev/stderr` and `/dev/fd/N`, reads
        // as `pipe:[…]` for a pipe: no such path, so the chain ends there
        // and the kernel's own following reaches the pipe.)
        let target = std::fs::read_link(&link)?;
        link = match link.parent() {
            Some(dir) => dir.join(target),
            None => target,
        };
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
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
    fn links_of_ones_own_or_roots_are_followed_and_others_refused() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        // A chain of one's own links, relative and absolute, to a file not there yet.
        symlink("b", dir.join("a")).unwrap();
        symlink(dir.join("c.log"), dir.join("b")).unwrap();
        open(&dir.join("a")).unwrap();
        assert!(dir.join("c.log").is_file());
        // A loop is an error, not a hang.
        symlink("loop2", dir.join("loop1")).unwrap();
        symlink("loop1", dir.join("loop2")).unwrap();
        let err = open(&dir.join("loop1")).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{err}");
        // Root's link to this process's stderr: taken by any user, whenever
        // the stderr itself may be opened (not when it is another user's
        // pipe, as under `setpriv` from a root shell).
        let plain = std::fs::OpenOptions::new().append(true).open("/dev/stderr");
        if let Err(error) = open(Path::new("/dev/stderr")) {
            assert!(plain.is_err(), "{error}");
        }
        if user_id() != 0 {
            return;
        }
        // As root: the same chain, its middle link handed to `nobody`.
        std::os::unix::fs::lchown(dir.join("b"), Some(65534), None).unwrap();
        let err = open(&dir.join("a")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(
            err.to_string(),
            format!(
                "it leads to '{}', a symlink owned by user id 65534, not by you (0) or root; refusing to follow it",
                dir.join("b").display()
            )
        );
        let err = open(&dir.join("b")).unwrap_err().to_string();
        assert!(
            err.starts_with("it is a symlink owned by user id 65534"),
            "{err}"
        );
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
