//! Files only this user can touch, on Windows: the shared retry budget's
//! state, under `%LOCALAPPDATA%`, whose inherited access list already
//! admits only the user (and SYSTEM and administrators). retry's own
//! directory is created with a protected access list that admits its
//! owner alone, so it stays private wherever it is. A reparse point (a
//! symbolic link or junction) in place of the directory or the file is
//! refused, never followed.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use std::os::windows::ffi::OsStrExt;

use windows_sys::Win32::Foundation::LocalFree;
use windows_sys::Win32::Security::Authorization::{
    ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES};
use windows_sys::Win32::Storage::FileSystem::{CreateDirectoryW, FILE_FLAG_OPEN_REPARSE_POINT};

/// Full access for the owner (OW), to the directory and what it holds
/// (OICI), and nothing inherited from above (P): the `0700` of Windows.
const OWNER_ONLY: &str = "D:P(A;OICI;FA;;;OW)";

/// Creates the directory `path` with the `OWNER_ONLY` access list.
fn create_owner_only(path: &Path) -> io::Result<()> {
    let wide = |text: &std::ffi::OsStr| -> Vec<u16> { text.encode_wide().chain([0]).collect() };
    let sddl = wide(OWNER_ONLY.as_ref());
    let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: a NUL-terminated string, and a pointer the call fills with a
    // descriptor it allocates (freed below).
    let ok = unsafe {
        ConvertStringSecurityDescriptorToSecurityDescriptorW(
            sddl.as_ptr(),
            SDDL_REVISION_1,
            &mut descriptor,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    let attributes = SECURITY_ATTRIBUTES {
        nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: descriptor,
        bInheritHandle: 0,
    };
    let path = wide(path.as_os_str());
    // SAFETY: a NUL-terminated path and live attributes.
    let created = unsafe { CreateDirectoryW(path.as_ptr(), &attributes) };
    let error = io::Error::last_os_error();
    // SAFETY: the descriptor the conversion allocated, freed once.
    unsafe { LocalFree(descriptor) };
    match created {
        0 => Err(error),
        _ => Ok(()),
    }
}

/// No user id on Windows; the per-user directory stands for it.
pub fn user_id() -> u32 {
    0
}

/// Creates `path` as a directory only its owner may use, or checks the
/// one already there.
pub fn private_dir(path: &Path) -> Result<(), String> {
    match create_owner_only(path) {
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

/// Checks, creating nothing, that `path` is a real directory (no link).
/// `Ok(false)` if there is nothing there.
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
    Ok(true)
}

/// Opens `path` for reading and writing, creating it, if `create`; else
/// for reading only, `Ok(None)` when it does not exist. A link is opened
/// as itself (`FILE_FLAG_OPEN_REPARSE_POINT`), then refused.
pub fn open_private(path: &Path, create: bool) -> Result<Option<File>, String> {
    let shown = path.display();
    let opened = OpenOptions::new()
        .read(true)
        .write(create)
        .create(create)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if !create && e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot open {shown}: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot inspect {shown}: {e}"))?;
    if meta.file_type().is_symlink() {
        return Err(format!("{shown} is a symlink; refusing to follow it"));
    }
    if !meta.is_file() {
        return Err(format!("{shown} is not a regular file"));
    }
    Ok(Some(file))
}

/// Reads from the start up to `buf`'s length (a longer file is not a record).
pub fn read_at_most(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = 0;
    while len < buf.len() {
        match file.seek_read(&mut buf[len..], len as u64) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(len)
}

/// Writes `bytes` at the file's start (a record of fixed length).
pub fn write_at_start(file: &File, bytes: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < bytes.len() {
        match file.seek_write(&bytes[done..], done as u64) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
