//! Reading a file retry takes rules from (the user's presets), so that it
//! can neither hang retry nor exhaust it, nor let another user set them:
//! only a regular file of bounded size, owned by this user or root and
//! writable by no one else, in a directory of the same kind (the rule of
//! the budget's state and `--log-file`, with root's trusted as root could
//! write any file itself). Anything else is refused with a reason.
//!
//! Written once for every OS on `owner.rs`, and opened as `regular.rs`
//! opens every state file (a device is never even opened: opening a tape
//! rewinds it; a FIFO is never waited on); what was opened is what is
//! checked and read, at most `limit` bytes and one more to tell a longer
//! file.

use std::io::Read;
use std::path::Path;

use super::owner;
use super::regular::{self, How};

/// The contents of `path`, `Ok(None)` if there is nothing there; `Err` is
/// why it was not read, a clause such as "it is a FIFO, not a regular file".
pub fn read(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, String> {
    let Some((file, meta)) = regular::open(path, &"it", How::ReadFollowing)? else {
        return Ok(None);
    };
    owner::check_trusted(&meta, "it")?;
    // Whoever may write the directory may put their own file in its place.
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        let shown = dir.display().to_string();
        let meta = dir
            .metadata()
            .map_err(|e| format!("cannot inspect {shown}: {e}"))?;
        owner::check_trusted(&meta, &shown)?;
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > limit {
        let limit = crate::size::Size::from_bytes(limit);
        return Err(format!("it is larger than {limit}"));
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_of_ones_own_is_read_up_to_the_limit() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        assert_eq!(read(&file, 4), Ok(None));
        std::fs::write(&file, "1234").unwrap();
        assert_eq!(read(&file, 4), Ok(Some(b"1234".to_vec())));
        std::fs::write(&file, "12345").unwrap();
        assert_eq!(read(&file, 4), Err("it is larger than 4 bytes".into()));
        assert_eq!(
            read(tmp.path(), 4),
            Err("it is a directory, not a regular file".into())
        );
    }

    #[test]
    #[cfg(unix)] // FIFOs, devices, modes and owners as Unix has them
    fn what_could_hang_exhaust_or_steer_retry_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("retry");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A FIFO with no writer: refused at once, not waited on.
        let fifo = dir.join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(
            read(&fifo, 10),
            Err("it is a FIFO, not a regular file".into())
        );
        // Endless bytes behind a symlink: refused before a byte is read.
        let zero = dir.join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert_eq!(
            read(&zero, 10),
            Err("it is a character device, not a regular file".into())
        );
        // A symlink to a regular file of one's own is followed.
        let real = dir.join("real");
        std::fs::write(&real, "x").unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(read(&link, 10), Ok(Some(b"x".to_vec())));
        // A file, or its directory, that others may write.
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o664)).unwrap();
        let err = read(&real, 10).unwrap_err();
        assert_eq!(
            err,
            "it is writable by other users (mode 664); make it 0644"
        );
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = read(&real, 10).unwrap_err();
        let want = format!(
            "{} is writable by other users (mode 777); make it 0755",
            dir.display()
        );
        assert_eq!(err, want);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(read(&real, 10), Ok(Some(b"x".to_vec())));
        if owner::user_id() != 0 {
            return;
        }
        // As root: root's own are trusted, `nobody`'s file or directory not.
        std::os::unix::fs::chown(&real, Some(65534), None).unwrap();
        let err = read(&real, 10).unwrap_err();
        assert_eq!(err, "it is owned by user id 65534, not by you (0) or root");
        std::os::unix::fs::chown(&real, Some(0), None).unwrap();
        std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
        let err = read(&real, 10).unwrap_err();
        let want = format!(
            "{} is owned by user id 65534, not by you (0) or root",
            dir.display()
        );
        assert_eq!(err, want);
    }
}
