//! Files retry publishes for another program to read (node_exporter's
//! textfile collector): a directory checked before the run, a file read
//! back without waiting and only if no other user could have written it,
//! and a file replaced whole. The same rules on every OS, on `owner.rs`.
//!
//! The file is replaced by a rename, so a reader sees the old file or the
//! new one, never half of either: the new text goes to a temporary file in
//! the same directory (a rename does not cross file systems), named
//! `.<name>.<random>.tmp` (a collector reading `*.prom` skips it) and
//! created exclusively (`tempfile`, as `mkstemp`), so neither another run
//! nor another user who may write the directory can take its name or put
//! a link there first. It is created `0644` less the umask: readable by
//! the collector, and writable by no one else, as its read-back requires.
//! A run killed between creating it and the rename leaves it there: the
//! next replacement of that name removes it, once it is a minute old.
//!
//! A file whose new text is made from its old one (counters) is replaced
//! under the kernel's lock on a file beside it (`lock_file`): the file
//! itself cannot carry the lock, since each rename puts a new one there.
//! A lock file removed while held guards nothing from then on: a run
//! checks that it is still there (`still_locked`) just before its rename
//! (`replace_if`).

use std::fs::{self, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::owner;
use super::regular::{self, How};

/// Random characters in a temporary name (tempfile's alphabet: 62).
const RANDOM_CHARS: usize = 12;

/// How old a temporary file named as `replace_if` names them must be to be
/// taken for one that a run killed (`SIGKILL`, between creating it and
/// renaming it) left behind: a write takes milliseconds.
const LEFTOVER_AGE: Duration = Duration::from_secs(60);

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
    owner::check_writable(dir)
}

/// Why another user could write in `dir` (`shown` in the clause): it is
/// theirs or open to them, as `trusted.rs` says of a directory of rules.
/// `None` when only this user or root can.
pub fn shared_dir(dir: &Path, shown: &str) -> Option<String> {
    let meta = dir.metadata().ok()?;
    owner::check_trusted(&meta, shown).err()
}

/// `path`'s text, at most `limit` bytes of it (lossily UTF-8), if it is
/// there: `Ok(None)` if not. Only a regular file (opened as `regular.rs`
/// says: never waited on, never through a symlink) that this user or root
/// owns and no one else may write: in a directory others may write, a file
/// of theirs is theirs to say. `Err` is why not, a clause about "it".
pub fn read(path: &Path, limit: u64) -> Result<Option<String>, String> {
    let Some((file, meta)) = regular::open(path, &"it", How::Read)? else {
        return Ok(None);
    };
    owner::check_trusted(&meta, "it")?;
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The file `dir/name` whose kernel lock stands for the right to replace
/// a file beside it: created if missing (`0600`, as `regular.rs` creates),
/// and only a regular file, opened without following a link, so no one
/// else's link in a shared directory points the lock elsewhere. `Err` is
/// why not, a clause about "it".
///
/// Another user's that this one may not open (left by a run of the job
/// as root by hand, say) would keep every run of the job's own user from
/// writing, for ever: it is replaced with this user's, as their file
/// beside it is. A lock file holds nothing to lose, and a run that held
/// it meanwhile sees it gone before its rename (`still_locked`). Where
/// the directory lets no one replace another's file (`/tmp`'s sticky
/// bit), it stays refused.
pub fn lock_file(dir: &Path, name: &str) -> Result<fs::File, String> {
    let path = dir.join(name);
    let open = || match regular::open(&path, &"it", How::Create)? {
        Some((file, _)) => Ok(file),
        None => Err("it cannot be created".to_owned()),
    };
    let refused = match open() {
        Ok(file) => return Ok(file),
        Err(why) => why,
    };
    let theirs = path
        .symlink_metadata()
        .is_ok_and(|meta| meta.is_file() && owner::check_owner(&meta, &path, 0o600).is_err());
    if theirs && write_file(dir, name, b"", 0o600, None, || true).is_err() {
        return Err(refused);
    }
    // Replaced, by this run or by another of this user's since the open
    // (else refused again, as before).
    open()
}

/// Whether `dir/name` is still the lock file `file` (from `lock_file`).
/// One removed or replaced while held (by hand: "a stale lock") keeps no
/// run out any more, since the next creates and locks a new one there.
pub fn still_locked(dir: &Path, name: &str, file: &fs::File) -> bool {
    owner::same_file(file, &dir.join(name))
}

/// Replaces `dir/name` with `bytes`, whole, and removes what killed runs
/// left of their own replacements (`sweep`), if `still()` holds just
/// before the rename, as late as it can be asked (a lock file still
/// there, `still_locked`): `Ok(false)`, and nothing replaced, if not.
pub fn replace_if(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    still: impl FnOnce() -> bool,
) -> io::Result<bool> {
    write_file(dir, name, bytes, 0o644, None, still)
}

/// `replace_if`, the new file dated `when` (its modification time): what it
/// says was true then (`dated_after`).
pub fn replace_dated(dir: &Path, name: &str, bytes: &[u8], when: SystemTime) -> io::Result<()> {
    write_file(dir, name, bytes, 0o644, Some(when), || true).map(|_| ())
}

/// Whether the file at `path` is dated (`replace_dated`) after `when`,
/// and not after now: a date ahead of the clock (a clock that went back,
/// a `touch`) is no date, or no run would replace the file until then.
pub fn dated_after(path: &Path, when: SystemTime) -> bool {
    let modified = path
        .symlink_metadata()
        .ok()
        .filter(fs::Metadata::is_file)
        .and_then(|meta| meta.modified().ok());
    modified.is_some_and(|date| date > when && date <= SystemTime::now())
}

/// `replace_if`, the new file created `mode` (less the umask) on Unix and
/// dated `when` if given.
fn write_file(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    #[cfg_attr(not(unix), allow(unused_variables))] mode: u32,
    when: Option<SystemTime>,
    still: impl FnOnce() -> bool,
) -> io::Result<bool> {
    let prefix = format!(".{name}.");
    sweep(dir, &prefix);
    let mut builder = tempfile::Builder::new();
    builder
        .prefix(&prefix)
        .suffix(".tmp")
        .rand_bytes(RANDOM_CHARS);
    // Opened as any new file (not tempfile's own way, which on Windows
    // marks it temporary: wine then refuses to rename it over the old).
    let mut file = builder.make_in(dir, |path| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
        options.open(path)
    })?;
    file.write_all(bytes)?;
    if let Some(when) = when {
        file.as_file().set_modified(when)?;
    }
    // Closed before the rename (Windows renames no open file); removed if
    // the rename fails or is not made, when `temporary` is dropped.
    let temporary = file.into_temp_path();
    if !still() {
        return Ok(false);
    }
    rename_over(&temporary, &dir.join(name))?;
    // Renamed: nothing is left at its name to remove.
    let _ = temporary.keep();
    Ok(true)
}

/// Removes from `dir` the temporary files of a name (`prefix`, as
/// `replace_if` makes it) that killed runs left, which no collector reads
/// and nothing else would remove: each is one run's, so a fleet whose
/// jobs are killed now and then (`timeout -s KILL`, the OOM killer) would
/// gather them for ever. Only names of exactly that shape (another name's
/// `.<name>.<more>.` differs in length), regular files (a link is not
/// ours) and older than `LEFTOVER_AGE`, so a run still writing keeps its
/// own. Whatever fails (another run removed it first) is let be.
fn sweep(dir: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let random = name
            .to_str()
            .and_then(|name| name.strip_prefix(prefix))
            .and_then(|rest| rest.strip_suffix(".tmp"));
        let ours = random.is_some_and(|random| {
            random.len() == RANDOM_CHARS && random.bytes().all(|b| b.is_ascii_alphanumeric())
        });
        // `DirEntry::metadata` does not follow a link.
        let old = || {
            let meta = entry.metadata().ok().filter(fs::Metadata::is_file)?;
            let age = meta.modified().ok()?.elapsed().ok()?;
            Some(age >= LEFTOVER_AGE)
        };
        if ours && old() == Some(true) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// `fs::rename`, which replaces `to` at once on Unix; on Windows, waited
/// for while another holds `to` open (`RENAME_WAITS`).
fn rename_over(from: &Path, to: &Path) -> io::Result<()> {
    let mut waits = if cfg!(windows) { RENAME_WAITS } else { 0 };
    loop {
        match fs::rename(from, to) {
            Err(error) if error.kind() == io::ErrorKind::PermissionDenied && waits > 0 => {
                waits -= 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            renamed => return renamed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replace(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
        replace_if(dir, name, bytes, || true).map(|_| ())
    }

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
        replace(dir.path(), "a.prom", b"two\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two\n");
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
        // A rename that fails leaves no temporary file either.
        let taken = dir.path().join("b.prom");
        fs::create_dir(&taken).unwrap();
        fs::write(taken.join("x"), "").unwrap();
        assert!(replace(dir.path(), "b.prom", b"one\n").is_err());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    /// Runs killed between creating their temporary file and renaming it
    /// (2 % of 300 runs killed at random) left it for ever: the next
    /// replacement of that name removes those a minute old, and nothing
    /// else: not a younger one (a run still writing), not another name's.
    #[test]
    fn temporary_files_killed_runs_left_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let make = |name: &str, age: u64| {
            let path = dir.path().join(name);
            let file = fs::File::create(&path).unwrap();
            let then = std::time::SystemTime::now() - Duration::from_secs(age);
            file.set_modified(then).unwrap();
        };
        let left = [
            ".retry_a.prom.Ab3dEf6hIj9L.tmp",
            ".retry_a.prom.000000000000.tmp",
        ];
        for name in left {
            make(name, 61);
        }
        let kept = [
            // A run still writing its own.
            ".retry_a.prom.Zy3dEf6hIj9L.tmp",
            // Other names': of the job `a.prom.x`, of the circuit `a`.
            ".retry_a.prom.x.prom.Ab3dEf6hIj9L.tmp",
            ".retry-breaker-a.prom.Ab3dEf6hIj9L.tmp",
            // Not of tempfile's alphabet or length; the job's lock.
            ".retry_a.prom.Ab3d-f6hIj9L.tmp",
            ".retry_a.prom.Ab3dEf6hIj9.tmp",
            ".retry_a.prom.lock",
        ];
        make(kept[0], 5);
        for name in &kept[1..] {
            make(name, 3600);
        }
        replace(dir.path(), "retry_a.prom", b"one\n").unwrap();
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let mut expected: Vec<String> = kept.iter().map(|s| s.to_string()).collect();
        expected.push("retry_a.prom".into());
        expected.sort();
        assert_eq!(names, expected);
    }

    /// Another user who may write the directory could once take every
    /// temporary name a run would try (they followed from its pid), so its
    /// series were never written, or put links there: the names are
    /// random now, and what is there is neither used nor followed.
    #[test]
    #[cfg(unix)] // symlinks and modes as Unix has them
    fn temporary_names_cannot_be_taken_in_advance() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "mine").unwrap();
        let pid = std::process::id();
        for n in 0..=16 {
            let name = dir.path().join(format!(".a.prom.{pid}.{n}.tmp"));
            std::os::unix::fs::symlink(&victim, name).unwrap();
        }
        replace(dir.path(), "a.prom", b"one\n").unwrap();
        let path = dir.path().join("a.prom");
        assert_eq!(fs::read_to_string(&path).unwrap(), "one\n");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "mine");
        // Writable by no one else, so that it is read back.
        let mode = path.metadata().unwrap().permissions().mode();
        assert_eq!(mode & 0o022, 0, "{mode:o}");
        assert_eq!(read(&path, 10).unwrap().as_deref(), Some("one\n"));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 17 + 2);
    }

    /// A file another user could have written is not read back; the
    /// directory that lets them is named.
    #[test]
    #[cfg(unix)] // modes and owners
    fn what_another_user_could_write_is_not_read() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.prom");
        fs::write(&path, "x").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o664)).unwrap();
        assert_eq!(
            read(&path, 10),
            Err("it is writable by other users (mode 664); make it 0644".into())
        );
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(shared_dir(dir.path(), "d"), None);
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o1777)).unwrap();
        assert_eq!(
            shared_dir(dir.path(), "d").as_deref(),
            Some("d is writable by other users (mode 1777); make it 0755")
        );
        let link = dir.path().join("link.prom");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(
            read(&link, 10),
            Err("it is a symlink; refusing to follow it".into())
        );
        if owner::user_id() != 0 {
            eprintln!("skipped in part: a file of another user's (only root can chown it to one)");
            return;
        }
        std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
        assert_eq!(
            read(&path, 10),
            Err("it is owned by user id 65534, not by you (0) or root".into())
        );
        std::os::unix::fs::chown(dir.path(), Some(65534), None).unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            shared_dir(dir.path(), "d").as_deref(),
            Some("d is owned by user id 65534, not by you (0) or root")
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
        // On Windows writers take turns, as a job's runs do under the
        // textfile's lock: there four renames over one file can keep one
        // refused past its waits on a loaded machine (wine, in .ci/run).
        let turn = std::sync::Mutex::new(());
        std::thread::scope(|scope| {
            for text in &texts {
                let (dir, turn) = (dir.path(), &turn);
                scope.spawn(move || {
                    for _ in 0..50 {
                        let _turn = cfg!(windows).then(|| turn.lock().unwrap());
                        replace(dir, "job.prom", text.as_bytes()).unwrap();
                    }
                });
            }
            for _ in 0..200 {
                // A collector reads now and then, not in a tight loop: on
                // Windows one that never lets go of the file keeps every
                // rename refused past its waits.
                if cfg!(windows) {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
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
