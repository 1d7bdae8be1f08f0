//! The twin of `owner.rs` on Windows. The budget's state lives under
//! `%LOCALAPPDATA%`, whose inherited access list already admits only the
//! user (and SYSTEM and administrators); retry's own directory is created
//! with a protected access list that admits its owner alone, so it stays
//! private wherever it is. A reparse point (a symbolic link or junction)
//! is opened as itself, never followed, and `regular.rs` refuses it.

use std::fs::{File, FileType, Metadata, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use std::os::windows::ffi::OsStrExt;

use windows_sys::Win32::Foundation::LocalFree;
use windows_sys::Win32::Security::Authorization::{
    ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, CreateDirectoryW, FILE_FLAG_OPEN_REPARSE_POINT,
    GetFileInformationByHandle,
};

/// Full access for the owner (OW), to the directory and what it holds
/// (OICI), and nothing inherited from above (P): the `0700` of Windows.
const OWNER_ONLY: &str = "D:P(A;OICI;FA;;;OW)";

/// Creates the directory `path` with the `OWNER_ONLY` access list.
pub fn create_dir(path: &Path) -> io::Result<()> {
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

/// Options that, unless `follow`, open a link as itself
/// (`FILE_FLAG_OPEN_REPARSE_POINT`), which `regular.rs` then refuses.
/// Windows has no FIFO whose open waits for a writer, and no controlling
/// terminal to take.
pub fn open_options(follow: bool) -> OpenOptions {
    let mut options = OpenOptions::new();
    if !follow {
        options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    }
    options
}

/// Whether `path` names `file` now (its volume and file index), as
/// `owner.rs` says: not if it was removed or another file put there.
pub fn same_file(file: &File, path: &Path) -> bool {
    // No access asked: only the file's identity is read.
    let named = OpenOptions::new().access_mode(0).open(path);
    match (identity(file), named.ok().as_ref().and_then(identity)) {
        (Some(opened), Some(named)) => opened == named,
        _ => false,
    }
}

/// Whether two paths name one file (its volume and file index), through
/// links: a hard link to busybox-w32 is it. Opened with no access asked.
pub fn same_path(a: &Path, b: &Path) -> bool {
    let open = |path: &Path| OpenOptions::new().access_mode(0).open(path).ok();
    match (
        open(a).as_ref().and_then(identity),
        open(b).as_ref().and_then(identity),
    ) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The volume's serial number and the file's index on it.
fn identity(file: &File) -> Option<(u32, u32, u32)> {
    // SAFETY: a plain C struct of integers, which all-zero bytes make valid.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is open for as long as `file` is borrowed, and
    // `info` is the struct the call fills.
    let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) };
    (ok != 0).then_some((
        info.dwVolumeSerialNumber,
        info.nFileIndexHigh,
        info.nFileIndexLow,
    ))
}

/// Never: a link is opened as itself, not refused by the open.
pub fn is_symlink_error(_: &io::Error) -> bool {
    false
}

/// Nothing to check: the access lists above keep other users out (an
/// existing directory's list is not read back).
pub fn check_owner(_: &Metadata, _: &Path, _: u32) -> Result<(), String> {
    Ok(())
}

/// Nothing to check, as for `check_owner`.
pub fn check_trusted(_: &Metadata, _: &str) -> Result<(), String> {
    Ok(())
}

/// Nothing to check: a directory's read-only attribute does not stop
/// writing in it, and its access list is not read; a write that fails
/// later says so then.
pub fn check_writable(_: &Path) -> io::Result<()> {
    Ok(())
}

/// What a file that is not a regular one is, in words, where it has a name.
pub fn kind(file_type: FileType) -> Option<&'static str> {
    file_type.is_dir().then_some("a directory")
}
