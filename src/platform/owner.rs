//! Who owns a file, and the calls that make and open one only its owner
//! may use, on Unix: the effective user id, modes `0700` and `0600`, and
//! `O_NOFOLLOW`. `private.rs` writes the rules once from these;
//! `windows/owner.rs` is the twin.

use std::fs::{DirBuilder, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The effective user id: the owner of every file this process creates.
pub fn user_id() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Creates the directory `path`, `0700`.
pub fn create_dir(path: &Path) -> io::Result<()> {
    DirBuilder::new().mode(0o700).create(path)
}

/// Options that create a file `0600` and never follow a symlink.
pub fn open_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    options
}

/// Whether an open failed because the path is a symlink (`O_NOFOLLOW`).
pub fn is_symlink_error(error: &io::Error) -> bool {
    error.raw_os_error() == Some(libc::ELOOP)
}

/// Checks that `path` (whose `meta` this is) belongs to this user and
/// that no one else may write to it; `private_mode` is the mode to ask for.
pub fn check_owner(meta: &Metadata, path: &Path, private_mode: u32) -> Result<(), String> {
    let shown = path.display();
    if meta.uid() != user_id() {
        return Err(format!(
            "{shown} is owned by user id {}, not by you ({})",
            meta.uid(),
            user_id()
        ));
    }
    // Group or others may write: as good as someone else's.
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{shown} is writable by other users (mode {:o}); make it {private_mode:04o}",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}
