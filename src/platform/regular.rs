//! The one way retry opens a file it keeps state in or takes state from
//! (the budget's and the breaker's records, the user's presets, the old
//! metrics textfile): only a regular file, and never waiting on anything
//! else. A FIFO in its place would hold the open until a writer came (for
//! ever, and past SIGTERM, since the run had not started), and a device
//! may wait, rewind a tape or feed endless bytes.
//!
//! Written once for every OS on `owner.rs`: the path is inspected first,
//! so what is not a regular file is never even opened; then it is opened
//! without waiting (`O_NONBLOCK`: a FIFO swapped in meanwhile opens at
//! once) and what was opened is checked again. The callers add who may
//! own it (`private.rs`, `trusted.rs`, `publish.rs`).

use std::fmt::Display;
use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

use super::owner;

/// How a file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// To read; a symlink in its place is refused.
    Read,
    /// To read, through a symlink (the user's presets may be one).
    ReadFollowing,
    /// To read and write, created `0600` if missing; a symlink is refused.
    Create,
}

/// Opens `path` as `how` says, if it is a regular file: the file and what
/// it is, `Ok(None)` if nothing is there (never for `Create`). `Err` is
/// why not, in one clause about `shown` (the path, or "it"): "… is a
/// FIFO, not a regular file".
pub fn open(
    path: &Path,
    shown: &dyn Display,
    how: How,
) -> Result<Option<(File, Metadata)>, String> {
    let follow = how == How::ReadFollowing;
    let create = how == How::Create;
    let inspected = match follow {
        true => path.metadata(),
        false => path.symlink_metadata(),
    };
    match inspected {
        Ok(meta) => regular(&meta, shown)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound && !create => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot inspect {shown}: {e}")),
    }
    let opened = owner::open_options(follow)
        .read(true)
        .write(create)
        .create(create)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if owner::is_symlink_error(&e) => return Err(symlink(shown)),
        // Removed since it was inspected: nothing there, as for a look.
        Err(e) if e.kind() == io::ErrorKind::NotFound && !create => return Ok(None),
        Err(e) => return Err(format!("cannot open {shown}: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot inspect {shown}: {e}"))?;
    regular(&meta, shown)?;
    Ok(Some((file, meta)))
}

/// Whether `meta` is a regular file's; else what it is, in a clause.
fn regular(meta: &Metadata, shown: &dyn Display) -> Result<(), String> {
    let kind = meta.file_type();
    match (kind.is_file(), kind.is_symlink(), owner::kind(kind)) {
        (true, _, _) => Ok(()),
        // Where the open does not refuse a link, it opens the link itself.
        (false, true, _) => Err(symlink(shown)),
        (false, false, Some(what)) => Err(format!("{shown} is {what}, not a regular file")),
        (false, false, None) => Err(format!("{shown} is not a regular file")),
    }
}

fn symlink(shown: &dyn Display) -> String {
    format!("{shown} is a symlink; refusing to follow it")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_as(path: &Path, how: How) -> Result<Option<String>, String> {
        open(path, &"it", how).map(|opened| {
            opened.map(|(file, meta)| {
                assert!(meta.is_file());
                let mut text = String::new();
                io::Read::read_to_string(&mut &file, &mut text).unwrap();
                text
            })
        })
    }

    #[test]
    fn a_regular_file_is_opened_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        for how in [How::Read, How::ReadFollowing] {
            assert_eq!(open_as(&file, how), Ok(None));
        }
        assert!(!file.exists(), "a look created it");
        assert_eq!(open_as(&file, How::Create), Ok(Some(String::new())));
        std::fs::write(&file, "x").unwrap();
        for how in [How::Read, How::ReadFollowing, How::Create] {
            assert_eq!(open_as(&file, how), Ok(Some("x".into())));
            assert_eq!(
                open_as(tmp.path(), how),
                Err("it is a directory, not a regular file".into())
            );
        }
    }

    /// A FIFO with no writer used to hold a look at a breaker's record for
    /// ever: each way of opening refuses it at once, and refuses what
    /// stands for a device (never opened: the path is inspected first).
    #[test]
    #[cfg(unix)] // FIFOs, devices and symlinks as Unix has them
    fn fifos_devices_and_links_are_refused_without_waiting() {
        use std::os::unix::fs::symlink as link;
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let zero = tmp.path().join("zero");
        link("/dev/zero", &zero).unwrap();
        let to_fifo = tmp.path().join("to-fifo");
        link(&fifo, &to_fifo).unwrap();
        let real = tmp.path().join("real");
        std::fs::write(&real, "x").unwrap();
        let to_real = tmp.path().join("to-real");
        link(&real, &to_real).unwrap();
        let refused = |path: &Path, how| open_as(path, how).unwrap_err();
        for how in [How::Read, How::ReadFollowing, How::Create] {
            assert_eq!(refused(&fifo, how), "it is a FIFO, not a regular file");
            assert_eq!(
                refused(Path::new("/dev/null"), how),
                "it is a character device, not a regular file"
            );
        }
        // A link is followed only where asked, and then only to a regular file.
        assert_eq!(
            refused(&zero, How::ReadFollowing),
            "it is a character device, not a regular file"
        );
        assert_eq!(
            refused(&to_fifo, How::ReadFollowing),
            "it is a FIFO, not a regular file"
        );
        assert_eq!(open_as(&to_real, How::ReadFollowing), Ok(Some("x".into())));
        for how in [How::Read, How::Create] {
            for path in [&zero, &to_fifo, &to_real] {
                assert_eq!(refused(path, how), "it is a symlink; refusing to follow it");
            }
        }
        // A FIFO swapped in after the look is still not waited on, and
        // still refused (the open itself, then the check of what it opened).
        let swapped = tmp.path().join("swapped");
        nix::unistd::mkfifo(&swapped, nix::sys::stat::Mode::S_IRWXU).unwrap();
        for follow in [false, true] {
            let file = owner::open_options(follow)
                .read(true)
                .open(&swapped)
                .unwrap();
            let err = regular(&file.metadata().unwrap(), &"it").unwrap_err();
            assert_eq!(err, "it is a FIFO, not a regular file");
        }
    }
}
