//! Files retry publishes for another program to read (node_exporter's
//! textfile collector): a directory checked before the run, a file read
//! back without waiting (only a regular file), and a file replaced whole. The same rules on
//! every OS, on `owner.rs`.
//!
//! The file is replaced by a rename, so a reader sees the old file or the
//! new one, never half of either: the new text goes to a temporary file in
//! the same directory (a rename does not cross file systems), named
//! `.<name>.<pid>.<n>.tmp` (a collector reading `*.prom` skips it) and
//! created exclusively, so two runs never share one. Its permissions are
//! the umask's, as any file a user writes for others to read.

use std::fs::{self, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::path::Path;

use super::regular::{self, How};

/// Temporary names tried before giving up (one left by a crash with the
/// same pid is the only way a name can be taken).
const TRIES: u32 = 16;

/// Windows refuses to replace a file that is open (a collector reading it,
/// another run replacing it) with "access denied", for as long as it stays
/// open: the rename is tried again after a short wait, at most this many
/// times (200 ms in all), then fails as any other write does.
const RENAME_WAITS: u32 = 40;

/// Whether `dir` is a directory this user may create files in.
pub fn check_dir(dir: &Path) -> io::Result<()> {
    if !fs::metadata(dir)?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            "not a directory",
        ));
    }
    super::owner::check_writable(dir)
}

/// `path`'s text, at most `limit` bytes of it (lossily UTF-8), if it is
/// there: `Ok(None)` if not. Only a regular file, opened as `regular.rs`
/// says: never waited on, never through a symlink. `Err` is why not, a
/// clause about "it".
pub fn read(path: &Path, limit: u64) -> Result<Option<String>, String> {
    let Some((file, _)) = regular::open(path, &"it", How::Read)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// Replaces `dir/name` with `bytes`, whole.
pub fn replace(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let pid = std::process::id();
    let mut n = 0;
    let (temporary, mut file) = loop {
        let temporary = dir.join(format!(".{name}.{pid}.{n}.tmp"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(file) => break (temporary, file),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists && n < TRIES => n += 1,
            Err(error) => return Err(error),
        }
    };
    let written = file.write_all(bytes).and_then(|()| {
        drop(file);
        rename_over(&temporary, &dir.join(name))
    });
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

/// `fs::rename`, which replaces `to` at once on Unix; on Windows, waited
/// for while another holds `to` open (`RENAME_WAITS`).
fn rename_over(from: &Path, to: &Path) -> io::Result<()> {
    let mut waits = if cfg!(windows) { RENAME_WAITS } else { 0 };
    loop {
        match fs::rename(from, to) {
            Err(error) if error.kind() == io::ErrorKind::PermissionDenied && waits > 0 => {
                waits -= 1;
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            renamed => return renamed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_we_may_write_to_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_dir(dir.path()).is_ok());
        let missing = check_dir(&dir.path().join("missing")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let file = dir.path().join("file");
        fs::write(&file, "").unwrap();
        assert_eq!(check_dir(&file).unwrap_err().to_string(), "not a directory");
        // Root may write anywhere: the refusal shows only for another user.
        #[cfg(unix)]
        if super::super::owner::user_id() != 0 {
            use std::os::unix::fs::PermissionsExt;
            let locked = dir.path().join("locked");
            fs::create_dir(&locked).unwrap();
            fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
            let error = check_dir(&locked).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::PermissionDenied);
        }
    }

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.prom");
        replace(dir.path(), "a.prom", b"one\n").unwrap();
        // A temporary name a crashed run left behind is passed over.
        let stale = dir
            .path()
            .join(format!(".a.prom.{}.0.tmp", std::process::id()));
        fs::write(&stale, "stale").unwrap();
        replace(dir.path(), "a.prom", b"two\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two\n");
        assert_eq!(fs::read_to_string(&stale).unwrap(), "stale");
        fs::remove_file(&stale).unwrap();
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.prom"]);
        assert_eq!(read(&path, 2).unwrap().as_deref(), Some("tw"));
        assert_eq!(read(&dir.path().join("none"), 2), Ok(None));
        assert_eq!(
            read(dir.path(), 10),
            Err("it is a directory, not a regular file".into())
        );
    }

    /// Threads replacing the same file while others read it: every read
    /// sees one writer's whole text, never a mix or a part.
    #[test]
    fn concurrent_replacements_leave_one_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let texts: Vec<String> = (0..4)
            .map(|i| format!("{i}\n").repeat(4096 + i * 1000))
            .collect();
        replace(dir.path(), "job.prom", texts[0].as_bytes()).unwrap();
        let path = dir.path().join("job.prom");
        std::thread::scope(|scope| {
            for text in &texts {
                let dir = dir.path();
                scope.spawn(move || {
                    for _ in 0..50 {
                        replace(dir, "job.prom", text.as_bytes()).unwrap();
                    }
                });
            }
            for _ in 0..200 {
                // Windows may refuse the open while a rename replaces the
                // file: no text, so no mixed one either.
                let seen = match fs::read_to_string(&path) {
                    Err(e) if cfg!(windows) && e.kind() == io::ErrorKind::PermissionDenied => {
                        continue;
                    }
                    seen => seen.unwrap(),
                };
                assert!(texts.contains(&seen), "a mixed or partial file");
            }
        });
        assert!(texts.contains(&fs::read_to_string(&path).unwrap()));
    }
}
