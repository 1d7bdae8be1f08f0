//! Opening `--log-file` to append retry's lines, on Windows: created if
//! missing, opened for appending only. Windows opens no FIFO that waits
//! for a reader and follows a symbolic link only where its owner (an
//! administrator, or developer mode) allowed links, so the Unix checks
//! (`../unix/append.rs`) have no counterpart here.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Opens `path` for appending, creating it if missing.
pub fn open(path: &Path) -> io::Result<File> {
    OpenOptions::new().append(true).create(true).open(path)
}
