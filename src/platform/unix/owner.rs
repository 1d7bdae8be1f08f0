//! Who owns a file, and the calls that make and open one only its owner
//! may use, on Unix: the effective user id, modes `0700` and `0600`,
//! `O_NOFOLLOW`, and an open that never waits (`O_NONBLOCK`).
//! `regular.rs`, `private.rs`, `trusted.rs` and `publish.rs` write the
//! rules once from these; `windows/owner.rs` is the twin.

use std::fs::{DirBuilder, File, FileType, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The effective user id: the owner of every file this process creates.
pub fn user_id() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Creates the directory `path`, `0700`.
pub fn create_dir(path: &Path) -> io::Result<()> {
    DirBuilder::new().mode(0o700).create(path)
}

/// Options that never wait: a FIFO opens at once (`O_NONBLOCK`), and a
/// terminal never becomes retry's controlling terminal (`O_NOCTTY`); a file
/// they create is `0600`; unless `follow`, a final symlink is not followed
/// (`O_NOFOLLOW`). `O_NONBLOCK` means nothing to the regular file that
/// `regular.rs` then insists on.
pub fn open_options(follow: bool) -> OpenOptions {
    let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
    let mut options = OpenOptions::new();
    options
        .mode(0o600)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | nofollow);
    options
}

/// Whether `path` names `file` now (its device and inode), following a
/// link: not if it was removed or another file was put in its place.
pub fn same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), path.metadata()) {
        (Ok(opened), Ok(named)) => opened.dev() == named.dev() && opened.ino() == named.ino(),
        _ => false,
    }
}

/// Whether two paths name one file (its device and inode), through links:
/// a hard link to BusyBox is BusyBox. Neither is opened, so a file that
/// may be run but not read is compared too.
pub fn same_path(a: &Path, b: &Path) -> bool {
    match (a.metadata(), b.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether an open failed because the path is a symlink (`O_NOFOLLOW`).
pub fn is_symlink_error(error: &io::Error) -> bool {
    error.raw_os_error() == Some(libc::ELOOP)
}

/// Checks that `path` (whose `meta` this is) belongs to this user and
/// that no one else may write to it; `private_mode` is the mode to ask for.
pub fn check_owner(meta: &Metadata, path: &Path, private_mode: u32) -> Result<(), String> {
    check(meta, &path.display(), false, private_mode)
}

/// Checks that the file `shown` ("it", or its path), whose `meta` this
/// is, belongs to this user or root and that no one else may write to
/// it: a file retry takes rules from.
pub fn check_trusted(meta: &Metadata, shown: &str) -> Result<(), String> {
    check(meta, &shown, true, meta.mode() & 0o755)
}

fn check(
    meta: &Metadata,
    shown: &dyn std::fmt::Display,
    root_too: bool,
    fixed_mode: u32,
) -> Result<(), String> {
    let (owner, me) = (meta.uid(), user_id());
    if owner != me && !(root_too && owner == 0) {
        let or_root = if root_too { " or root" } else { "" };
        return Err(format!(
            "{shown} is owned by user id {owner}, not by you ({me}){or_root}"
        ));
    }
    // Group or others may write: as good as someone else's.
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{shown} is writable by other users (mode {:o}); make it {fixed_mode:04o}",
            // The sticky bit too: /tmp's 1777 is not 777.
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

/// Whether this user may create files in the directory `dir` (`access`
/// with `W_OK` and `X_OK`): a read-only mount or mode says so before the run.
pub fn check_writable(dir: &Path) -> io::Result<()> {
    use nix::unistd::{AccessFlags, access};
    access(dir, AccessFlags::W_OK | AccessFlags::X_OK).map_err(io::Error::from)
}

/// What a file that is not a regular one is, in words, where it has a name.
pub fn kind(file_type: FileType) -> Option<&'static str> {
    Some(match () {
        () if file_type.is_dir() => "a directory",
        () if file_type.is_fifo() => "a FIFO",
        () if file_type.is_char_device() => "a character device",
        () if file_type.is_block_device() => "a block device",
        () if file_type.is_socket() => "a socket",
        () => return None,
    })
}
