//! The host's store: one owner-only file per piece of state in a per-user
//! directory (`$XDG_RUNTIME_DIR/retry/`, else `$TMPDIR/retry-UID/`), read
//! and written under the kernel's lock (`platform/lock.rs`) as one record of fixed
//! length with a checksum, so a process killed at any instant leaves the
//! old record or the new one, and a torn or edited one is refused.
//!
//! The budget and the breaker keep their own records in these files; the
//! rules of the file (who may own it, how it is locked, read and written,
//! how a record is sealed) are written once, here.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::platform::private;

pub use crate::platform::lock::Lock;

/// How long an update waits for the lock before it goes ahead without the
/// state (budget or breaker): a holder that is stopped (^Z, a debugger) must not stall
/// everyone. Updates take microseconds; a crash releases the lock.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Where the state lives: `$XDG_RUNTIME_DIR/retry` (the user's own, emptied
/// at logout), else a directory with the user id in its name in `temp`.
pub fn dir(runtime: Option<OsString>, temp: &Path, uid: u32) -> PathBuf {
    match runtime.map(PathBuf::from).filter(|d| d.is_absolute()) {
        Some(runtime) => runtime.join("retry"),
        None => temp.join(format!("retry-{uid}")),
    }
}

/// On Windows the user's own `%LOCALAPPDATA%\\retry` takes the place of
/// `$XDG_RUNTIME_DIR/retry`.
pub fn default_dir() -> PathBuf {
    #[cfg(windows)]
    let runtime = std::env::var_os("LOCALAPPDATA");
    #[cfg(not(windows))]
    let runtime = std::env::var_os("XDG_RUNTIME_DIR");
    dir(runtime, &std::env::temp_dir(), private::user_id())
}

/// Opens `dir/name` (creating both owner-only if `create`; else for
/// reading only, `None` if either is missing). The error is the reason,
/// for a message.
pub fn open(dir: &Path, name: &str, create: bool) -> Result<Option<(PathBuf, File)>, String> {
    if create {
        private::private_dir(dir)?;
    } else if !private::check_dir(dir)? {
        return Ok(None);
    }
    let path = dir.join(name);
    Ok(private::open_private(&path, create)?.map(|file| (path, file)))
}

/// Opens the state `name` of one kind (the breaker's, the throttle's),
/// kept in the folder `kind` (`.breakers`, `.throttles`) of the store's
/// directory `store`, as `open` does, that directory checked (or created,
/// if `create`) as this user's own first: `None` without it when not
/// creating. A kind's folder starts with `.`, which no budget's name may,
/// so no budget's file can take its place.
pub fn open_kind(
    store: &Path,
    kind: &str,
    name: &str,
    create: bool,
) -> Result<Option<(PathBuf, File)>, String> {
    if create {
        private::private_dir(store)?;
    } else if !private::check_dir(store)? {
        return Ok(None);
    }
    open(&store.join(kind), name, create)
}

/// Reads the file from its start into `buf`, the lock held: how many bytes
/// it had (a file longer than a record fills `buf`, one byte more than a
/// record, and is not one).
pub fn read(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    private::read_at_most(file, buf)
}

/// Writes `record` over the file's start in one positioned write of a
/// fixed length, the lock held, and cuts a longer file (`len` bytes) back.
pub fn write(file: &File, record: &[u8], len: usize) -> io::Result<()> {
    private::write_at_start(file, record)?;
    if len > record.len() {
        file.set_len(record.len() as u64)?;
    }
    Ok(())
}

/// A record's line: its body and a checksum of it.
pub fn seal(body: &str) -> String {
    format!("{body} {:016x}\n", fnv1a(body.as_bytes()))
}

/// The body of a sealed line of `len` bytes, if `bytes` is one: the right
/// length, ending, and sum.
pub fn unseal(bytes: &[u8], len: usize) -> Option<&str> {
    if bytes.len() != len {
        return None;
    }
    let line = std::str::from_utf8(bytes).ok()?.strip_suffix('\n')?;
    let (body, sum) = line.rsplit_once(' ')?;
    (u64::from_str_radix(sum, 16).ok()? == fnv1a(body.as_bytes())).then_some(body)
}

/// FNV-1a, 64 bits: enough to tell a record from a torn or edited one.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The host's clock, in nanoseconds since the epoch (0 before it).
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_line_is_refused_when_cut_or_changed() {
        let line = seal("retry-x 1 0042");
        let len = line.len();
        assert_eq!(unseal(line.as_bytes(), len), Some("retry-x 1 0042"));
        assert_eq!(unseal(line.as_bytes(), len + 1), None);
        for cut in 0..len {
            assert_eq!(unseal(&line.as_bytes()[..cut], cut), None, "cut at {cut}");
        }
        for at in 0..len {
            let mut damaged = line.clone().into_bytes();
            damaged[at] = if damaged[at] == b'1' { b'2' } else { b'1' };
            assert_eq!(unseal(&damaged, len), None, "byte {at}");
        }
    }
}
