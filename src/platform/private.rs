//! Files only this user can touch: the records of the shared retry budget
//! and of the circuit breaker. A
//! directory or file another user owns or may write, or a symlink in its
//! place, is refused, so no other user can drain, fill or redirect it.
//!
//! The rules are written once, here, for every platform. `owner.rs` (and
//! its Windows twin) gives the answers each OS has its own calls for: who
//! am I (`geteuid`), create owner-only (`0700`/`0600`, on Windows an
//! owner-only access list), open without following a link (`O_NOFOLLOW`,
//! `FILE_FLAG_OPEN_REPARSE_POINT`), and who may write a file; `regular.rs`
//! opens the file, never waiting, and only a regular one. A record is
//! read and written with the seam's positioned `read_at` and `write_at`.

use std::fs::File;
use std::io;
use std::path::Path;

use super::owner;
pub use super::owner::user_id;
use super::regular::{self, How};

/// Creates `path` as a directory only this user may use (`0700`), or
/// checks the one already there as `check_dir` does.
pub fn private_dir(path: &Path) -> Result<(), String> {
    match owner::create_dir(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(format!(
                "cannot create the directory {}: {e}",
                path.display()
            ));
        }
    }
    match check_dir(path)? {
        true => Ok(()),
        false => Err(format!("{} was removed as it was created", path.display())),
    }
}

/// Checks, creating nothing, that `path` is a directory only this user may
/// use: a real directory (not a symlink), owned by this user, that no one
/// else may write to. `Ok(false)` if there is nothing there.
pub fn check_dir(path: &Path) -> Result<bool, String> {
    let shown = path.display();
    let meta = match path.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(format!("cannot inspect {shown}: {e}")),
    };
    if meta.file_type().is_symlink() {
        return Err(format!("{shown} is a symlink; refusing to follow it"));
    }
    if !meta.is_dir() {
        return Err(format!("{shown} is not a directory"));
    }
    owner::check_owner(&meta, path, 0o700)?;
    Ok(true)
}

/// Opens `path` for reading and writing, creating it `0600`, if `create`;
/// else for reading only, `Ok(None)` when it does not exist (a look that
/// must change nothing). Opened as `regular.rs` opens a state file: never
/// waiting, never through a symlink, only a regular file; and it must be
/// one this user owns that no one else may write to.
pub fn open_private(path: &Path, create: bool) -> Result<Option<File>, String> {
    let how = if create { How::Create } else { How::Read };
    let Some((file, meta)) = regular::open(path, &path.display(), how)? else {
        return Ok(None);
    };
    owner::check_owner(&meta, path, 0o600)?;
    Ok(Some(file))
}

/// Reads from the start up to `buf`'s length (a longer file is not a record).
pub fn read_at_most(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = 0;
    while len < buf.len() {
        match super::read_at(file, &mut buf[len..], len as u64) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(len)
}

/// Writes `bytes` at the file's start, in positioned writes (a record of
/// fixed length: a kill leaves the old one or the new).
pub fn write_at_start(file: &File, bytes: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < bytes.len() {
        match super::write_at(file, &bytes[done..], done as u64) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn creates_owner_only_and_accepts_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("d");
        assert_eq!(check_dir(&dir), Ok(false));
        assert!(!dir.exists(), "a check creates nothing");
        private_dir(&dir).unwrap();
        private_dir(&dir).unwrap();
        assert_eq!(check_dir(&dir), Ok(true));
        let file = dir.join("f");
        assert!(open_private(&file, false).unwrap().is_none());
        let created = open_private(&file, true).unwrap().unwrap();
        assert!(open_private(&file, false).unwrap().is_some());
        #[cfg(unix)]
        {
            let mode = |p: &Path| p.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&dir), 0o700);
            assert_eq!(mode(&file), 0o600);
        }
        // A record written at the start and read back, whole or cut short.
        write_at_start(&created, b"0123456789").unwrap();
        write_at_start(&created, b"abc").unwrap();
        let mut buf = [0; 16];
        assert_eq!(read_at_most(&created, &mut buf).unwrap(), 10);
        assert_eq!(&buf[..10], b"abc3456789");
        let mut short = [0; 4];
        assert_eq!(read_at_most(&created, &mut short).unwrap(), 4);
        assert_eq!(&short, b"abc3");
    }

    #[test]
    #[cfg(unix)] // symlinks and modes as Unix makes them
    fn refuses_symlinks_and_open_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = private_dir(&link).unwrap_err();
        assert!(
            err.ends_with("is a symlink; refusing to follow it"),
            "{err}"
        );

        let target = real.join("target");
        std::fs::write(&target, "").unwrap();
        let file_link = real.join("budget");
        std::os::unix::fs::symlink(&target, &file_link).unwrap();
        for create in [true, false] {
            let err = open_private(&file_link, create).unwrap_err();
            assert!(err.contains("is a symlink"), "{err}");
        }

        // A file others may write: anyone could drain or fill it.
        for mode in [0o620, 0o602, 0o666] {
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode)).unwrap();
            for create in [true, false] {
                let err = open_private(&target, create).unwrap_err();
                let want = format!("writable by other users (mode {mode:o}); make it 0600");
                assert!(err.ends_with(&want), "{err}");
            }
        }
        // Others reading it is their business (it holds only a count).
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(open_private(&target, false).unwrap().is_some());

        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = private_dir(&real).unwrap_err();
        assert!(err.contains("writable by other users (mode 777)"), "{err}");
        // A shared directory as /tmp is: its sticky bit shown, not hidden.
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let err = private_dir(&real).unwrap_err();
        assert!(err.contains("writable by other users (mode 1777)"), "{err}");

        let err = open_private(&real, false).unwrap_err();
        assert!(
            err.contains("cannot open") || err.contains("not a regular"),
            "{err}"
        );
    }

    /// A look at a record that was a FIFO waited for a writer for ever
    /// (the breaker's, before the command ran): bounded here, so that a
    /// regression fails rather than hangs.
    #[test]
    #[cfg(unix)] // FIFOs
    fn a_fifo_or_a_device_as_record_is_refused_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let opened = [false, true].map(|create| open_private(&fifo, create).map(|_| ()));
            let _ = tx.send(opened);
        });
        let opened = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("opening a FIFO as a record hung");
        for result in opened {
            let err = result.unwrap_err();
            assert!(err.ends_with("fifo is a FIFO, not a regular file"), "{err}");
        }
        for create in [false, true] {
            let err = open_private(Path::new("/dev/null"), create).unwrap_err();
            assert_eq!(err, "/dev/null is a character device, not a regular file");
        }
    }

    #[test]
    #[cfg(unix)] // user ids
    fn refuses_what_another_user_owns() {
        if user_id() != 0 {
            // `/` belongs to root.
            let err = private_dir(Path::new("/")).unwrap_err();
            assert!(err.contains("is owned by user id 0"), "{err}");
            return;
        }
        // As root: hand a directory and a file to `nobody`.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("d");
        let file = tmp.path().join("f");
        private_dir(&dir).unwrap();
        open_private(&file, true).unwrap();
        for path in [&dir, &file] {
            std::os::unix::fs::chown(path, Some(65534), None).unwrap();
        }
        let err = private_dir(&dir).unwrap_err();
        assert!(
            err.ends_with("is owned by user id 65534, not by you (0)"),
            "{err}"
        );
        let err = open_private(&file, false).unwrap_err();
        assert!(
            err.ends_with("is owned by user id 65534, not by you (0)"),
            "{err}"
        );
    }
}
