//! Starting a command on Windows: std's `CreateProcessW` (arguments quoted
//! as the C runtime parses them), started suspended, put in a Job Object of
//! its own and only then resumed, so nothing it starts escapes the job.
//! `own_group` gives it a console process group of its own
//! (`CREATE_NEW_PROCESS_GROUP`), which a Ctrl-Break can reach alone.
//!
//! `cmd /d /s /c SCRIPT` (`platform::shell`) gets its script as written:
//! cmd does not parse its command line as the C runtime does, so the
//! usual quoting would change it; `/s` strips the one pair of quotes put
//! around it.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::os::windows::process::CommandExt;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{AssignProcessToJobObject, CreateJobObjectW};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED, OpenThread, ResumeThread, THREAD_SUSPEND_RESUME,
};

pub use crate::platform::seam::{Child, Command, Io};

/// A command to start, described as `std::process::Command` would.
#[derive(Debug)]
pub struct Spawn {
    program: OsString,
    args: Vec<OsString>,
    /// Variables to set (`Some`) or remove (`None`) in retry's environment,
    /// one entry per name.
    env: Vec<(OsString, Option<OsString>)>,
    pub stdin: Io,
    pub stdout: Io,
    pub stderr: Io,
    /// Lead a console process group of its own (else stay in retry's).
    pub own_group: bool,
    /// Never waited for (`platform::copier`): not kept, so no wait of
    /// retry's wakes for its end.
    pub(super) detached: bool,
}

impl Spawn {
    pub fn new(program: impl Into<OsString>) -> Self {
        Spawn {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            stdin: Io::Inherit,
            stdout: Io::Inherit,
            stderr: Io::Inherit,
            own_group: false,
            detached: false,
        }
    }

    pub fn program(&self) -> &OsStr {
        &self.program
    }

    /// Whether this is `platform::shell`'s `cmd /d /s /c SCRIPT`.
    fn cmd_script(&self) -> Option<&OsStr> {
        let name = std::path::Path::new(&self.program).file_name()?;
        let cmd = name.eq_ignore_ascii_case("cmd.exe") || name.eq_ignore_ascii_case("cmd");
        match self.args.as_slice() {
            [d, s, c, script] if cmd && [d, s, c] == ["/d", "/s", "/c"] => Some(script),
            _ => None,
        }
    }

    /// Starts the command in a Job Object of its own. Errors are
    /// `CreateProcessW`'s (not found, access denied), or the job's.
    pub fn spawn(&self) -> io::Result<Child> {
        let child = match self.command(&self.program)?.spawn() {
            // `npm`, `gradlew`: a script found through PATHEXT, which std
            // does not search (it finds `.exe` files only).
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                let path = std::env::var_os("PATH").unwrap_or_default();
                let extensions = std::env::var_os("PATHEXT").unwrap_or_default();
                match with_extension(&self.program, &path, &extensions) {
                    Some(found) => self.command(found.as_os_str())?.spawn()?,
                    None => return Err(error),
                }
            }
            started => started?,
        };
        self.start(child)
    }

    /// The std `Command` for `program` (this one's, or the file PATHEXT
    /// found for it), started suspended.
    fn command(&self, program: &OsStr) -> io::Result<std::process::Command> {
        let mut command = std::process::Command::new(program);
        match self.cmd_script() {
            Some(script) => {
                command.args(&self.args[..3]);
                let mut raw = OsString::from("\"");
                raw.push(script);
                raw.push("\"");
                command.raw_arg(raw);
            }
            None => {
                command.args(&self.args);
            }
        }
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command
            .stdin(std_stdio(&self.stdin)?)
            .stdout(std_stdio(&self.stdout)?)
            .stderr(std_stdio(&self.stderr)?);
        let group = if self.own_group {
            CREATE_NEW_PROCESS_GROUP
        } else {
            0
        };
        command.creation_flags(CREATE_SUSPENDED | group);
        Ok(command)
    }

    /// Starts the command in a Job Object of its own (see `spawn`).
    fn start(&self, mut child: std::process::Child) -> io::Result<Child> {
        let pid = child.id();
        let job = match in_new_job(&child).and_then(|job| resume(pid).map(|()| job)) {
            Ok(job) => job,
            Err(error) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(error);
            }
        };
        let started = Child {
            pid: pid as i32,
            stdin: child.stdin.take().map(|p| OwnedHandle::from(p).into()),
            stdout: child.stdout.take().map(|p| OwnedHandle::from(p).into()),
            stderr: child.stderr.take().map(|p| OwnedHandle::from(p).into()),
        };
        if !self.detached {
            super::keep(pid as i32, child, job, self.own_group);
        }
        Ok(started)
    }
}

impl Command for Spawn {
    fn arg_list(&mut self) -> &mut Vec<OsString> {
        &mut self.args
    }

    /// One entry a name, as Windows names variables: without regard to
    /// case.
    fn change(&mut self, key: &str, value: Option<&OsStr>) -> &mut Self {
        let value = value.map(OsStr::to_owned);
        match self
            .env
            .iter_mut()
            .find(|(name, _)| name.eq_ignore_ascii_case(key))
        {
            Some((_, old)) => *old = value,
            None => self.env.push((key.into(), value)),
        }
        self
    }
}

/// Why `program` could not be started, for a shell's 126 and 127: `cmd`
/// has no such codes (it says 9009, and its own words, for a program it
/// cannot find), so nothing is added to what it said.
pub fn why_not_startable(_program: &OsStr, _path: Option<&OsStr>) -> Option<io::Error> {
    None
}

/// The file a start of `program` runs (on `path`, a wrapper's `PATH=`, or
/// retry's own): itself if it names a path, else
/// `PROGRAM.exe` (or `PROGRAM` with its own extension) in the first
/// directory of `PATH` that has it, as std searches, else the script
/// PATHEXT finds. For the preset lookup, which must judge the program that
/// really runs (busybox-w32's `wget`).
pub fn program_file(program: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    let path = path.map_or_else(|| std::env::var_os("PATH").unwrap_or_default(), Into::into);
    let extensions = std::env::var_os("PATHEXT").unwrap_or_default();
    find_program(program, &path, &extensions)
}

/// `program_file` on `path` and `extensions` (PATHEXT).
fn find_program(program: &OsStr, path: &OsStr, extensions: &OsStr) -> Option<PathBuf> {
    let bare = Path::new(program);
    if bare.components().count() != 1 {
        return Some(bare.to_path_buf());
    }
    let mut name = program.to_owned();
    if bare.extension().is_none() {
        name.push(".exe");
    }
    std::env::split_paths(path)
        .map(|dir| dir.join(&name))
        .find(|file| file.is_file())
        .or_else(|| with_extension(program, path, extensions))
}

/// The script `cmd` would run for a bare `program` (no directory, no
/// extension): the first `DIR\PROGRAM.EXT` in `path` for each extension of
/// `extensions` (PATHEXT; `.COM;.EXE;.BAT;.CMD` when unset). std runs a
/// `.bat` or `.cmd` through cmd.exe with its arguments escaped for it.
fn with_extension(program: &OsStr, path: &OsStr, extensions: &OsStr) -> Option<PathBuf> {
    let bare = Path::new(program);
    if bare.extension().is_some() || bare.components().count() != 1 {
        return None;
    }
    let extensions = match extensions.to_str().filter(|e| !e.is_empty()) {
        Some(list) => list.to_owned(),
        None => ".COM;.EXE;.BAT;.CMD".to_owned(),
    };
    std::env::split_paths(path).find_map(|dir| {
        extensions
            .split(';')
            .filter(|ext| !ext.is_empty())
            .map(|ext| {
                let mut name = program.to_owned();
                name.push(ext);
                dir.join(name)
            })
            .find(|file| file.is_file())
    })
}

/// A new Job Object holding the (suspended) `child`.
fn in_new_job(child: &std::process::Child) -> io::Result<OwnedHandle> {
    // SAFETY: no attributes, no name; a null handle is the error.
    let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if job.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new handle that nothing else owns.
    let job = unsafe { OwnedHandle::from_raw_handle(job) };
    // SAFETY: two live handles.
    if unsafe { AssignProcessToJobObject(job.as_raw_handle(), child.as_raw_handle()) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(job)
}

/// Resumes the threads of the suspended process `pid` (its one main
/// thread: std does not hand out the thread handle `CreateProcessW` gave).
fn resume(pid: u32) -> io::Result<()> {
    // SAFETY: a snapshot of every thread; INVALID_HANDLE_VALUE is the error.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new handle that nothing else owns, closed on return.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(snapshot) };
    let mut entry = THREADENTRY32 {
        dwSize: size_of::<THREADENTRY32>() as u32,
        cntUsage: 0,
        th32ThreadID: 0,
        th32OwnerProcessID: 0,
        tpBasePri: 0,
        tpDeltaPri: 0,
        dwFlags: 0,
    };
    let mut resumed = false;
    // SAFETY: a live snapshot and an entry whose size is set.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle(), &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: opens a thread by id; a null handle is the error.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if !thread.is_null() {
                // SAFETY: a live thread handle, closed right after.
                unsafe {
                    resumed |= ResumeThread(thread) != u32::MAX;
                    CloseHandle(thread);
                }
            }
        }
        // SAFETY: as above.
        more = unsafe { Thread32Next(snapshot.as_raw_handle(), &mut entry) } != 0;
    }
    match resumed {
        true => Ok(()),
        false => Err(io::Error::other("cannot resume the command's thread")),
    }
}

fn std_stdio(io: &Io) -> io::Result<std::process::Stdio> {
    use std::process::Stdio;
    Ok(match io {
        Io::Inherit => Stdio::inherit(),
        Io::Null => Stdio::null(),
        Io::Pipe => Stdio::piped(),
        Io::Fd(handle) => Stdio::from(handle.try_clone()?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::{Waited, reap, shell};
    use std::io::Read;

    /// Runs `spawn` to its end: its stdout and exit code.
    fn output(spawn: &mut Spawn) -> (String, i32) {
        spawn.stdout = Io::Pipe;
        spawn.stdin = Io::Null;
        let child = spawn.spawn().unwrap();
        let mut text = String::new();
        child.stdout.unwrap().read_to_string(&mut text).unwrap();
        loop {
            match reap(child.pid) {
                Waited::Exited(code) => return (text, code),
                _ => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
    }

    #[test]
    fn the_file_a_start_runs_is_found_as_std_finds_it() {
        let dir = tempfile::tempdir().unwrap();
        let (exe, cmd) = (dir.path().join("wget.exe"), dir.path().join("npm.cmd"));
        std::fs::write(&exe, "").unwrap();
        std::fs::write(&cmd, "").unwrap();
        let path = std::env::join_paths([dir.path().join("none"), dir.path().to_owned()]).unwrap();
        let find = |program: &str| find_program(OsStr::new(program), &path, OsStr::new(""));
        assert_eq!(find("wget"), Some(exe.clone()));
        assert_eq!(find("wget.exe"), Some(exe));
        // Through PATHEXT's default (wine's files keep no case: npm.CMD).
        let script = find("npm").unwrap();
        assert_eq!(script.parent(), cmd.parent());
        assert!(script.to_string_lossy().to_lowercase().ends_with("npm.cmd"));
        assert_eq!(find("curl"), None);
        let named = dir.path().join("x").join("wget");
        assert_eq!(find(named.to_str().unwrap()), Some(named));
    }

    #[test]
    fn a_script_reaches_cmd_as_written() {
        // Quotes, `&` and `%`: the C runtime's quoting would escape the
        // quotes, and cmd would print them escaped.
        let (program, args) = shell(r#"echo "a b"&& echo %RETRY_TEST_WORD%& exit 3"#.into());
        let mut spawn = Spawn::new(program);
        spawn.args(args).env("RETRY_TEST_WORD", "word");
        assert_eq!(output(&mut spawn), ("\"a b\"\r\nword\r\n".to_owned(), 3));
    }

    #[test]
    fn a_script_on_path_is_found_through_pathext() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tool.cmd"), "@echo %~1& exit /b 7\r\n").unwrap();
        let path = std::env::join_paths([Path::new(r"C:\no-such-dir"), dir.path()]).unwrap();
        let found = with_extension("tool".as_ref(), &path, ".exe;.cmd".as_ref());
        assert_eq!(found, Some(dir.path().join("tool.cmd")));
        // A name with an extension or a directory is taken as it is.
        assert_eq!(
            with_extension("tool.cmd".as_ref(), &path, "".as_ref()),
            None
        );
        assert_eq!(with_extension(r"x\tool".as_ref(), &path, "".as_ref()), None);
        // std runs the script through cmd, its argument quoted for it.
        let mut spawn = Spawn::new(found.unwrap());
        spawn.arg("a b");
        assert_eq!(output(&mut spawn), ("a b\r\n".to_owned(), 7));
    }

    #[test]
    fn exit_codes_are_whole() {
        // cmd reads a signed number: -1073741819 is 0xC0000005.
        let (program, args) = shell("exit -1073741819".into());
        let mut spawn = Spawn::new(program);
        spawn.args(args);
        assert_eq!(output(&mut spawn).1, 0xC000_0005_u32 as i32);
    }
}
