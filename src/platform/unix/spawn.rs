//! Starting a command: an attempt or a hook, in a process group of its own
//! or not, with its stdio and environment, and with every signal at its
//! default action except those retry's caller left ignored.
//!
//! Where the platform has it, `posix_spawn` does it: the parent stays
//! suspended until the exec, with no page tables to copy and no
//! copy-on-write faults afterwards, which saves 13 % of the time of each
//! attempt and 10 % of start-up over fork and exec (bench/tricks.sh).
//! Its twin, `forked`, is std's fork and `execvp`. It serves the Unixes
//! without `posix_spawn` in nix and the `portable` feature (so CI here
//! runs it).
//!
//! A file without a `#!` line is run with `/bin/sh`, as POSIX `execvp`
//! and shells do, by retry itself: `posix_spawn` reports ENOEXEC for it,
//! and so does musl's `execvp` (glibc's alone falls back), so the musl
//! binary that ships would otherwise fail where the glibc one runs it.
//!
//! A `Spawn` is made to be started again and again (every attempt): a
//! variable set again is rewritten in place, and `posix_spawn`'s argument
//! and environment arrays are built at the first start and kept, so a
//! start that changes only values allocates nothing (issue 26).
#![allow(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;

pub use crate::platform::seam::{Child, Command, Io};

/// A command to start, described as `std::process::Command` would.
#[derive(Debug)]
pub struct Spawn {
    program: OsString,
    args: Vec<OsString>,
    /// Variables set or removed in retry's environment, one entry per name.
    env: Vec<Change>,
    pub stdin: Io,
    pub stdout: Io,
    pub stderr: Io,
    /// Lead a process group of its own (else stay in retry's).
    pub own_group: bool,
    /// A signal the forked child raises before anything else (a signal
    /// arriving between fork and exec).
    #[cfg(test)]
    pub(super) raise_in_child: Option<i32>,
    /// What `posix_spawn` is handed, kept from one start to the next.
    #[cfg(posix_spawn)]
    prepared: std::cell::RefCell<posix::Prepared>,
}

/// One variable's change: `NAME=VALUE` and a NUL, as a C environment holds
/// it, in a buffer that a new value overwrites (it allocates only when the
/// value outgrows the room left at first).
#[derive(Debug)]
struct Change {
    entry: Vec<u8>,
    /// Where the value starts (after the `=`).
    value_at: usize,
    /// Set (else removed).
    set: bool,
}

/// Room for a value beyond its first length: a counter's digits grow
/// (`RETRY_ATTEMPT` 9 to 10 to 100) without moving the buffer.
const VALUE_ROOM: usize = 24;

impl Change {
    fn new(key: &str) -> Self {
        let mut entry = Vec::with_capacity(key.len() + 1 + VALUE_ROOM);
        entry.extend_from_slice(key.as_bytes());
        entry.push(b'=');
        Change {
            value_at: entry.len(),
            entry,
            set: false,
        }
    }

    fn key(&self) -> &OsStr {
        OsStr::from_bytes(&self.entry[..self.value_at - 1])
    }

    fn set(&mut self, value: Option<&OsStr>) {
        self.entry.truncate(self.value_at);
        self.set = value.is_some();
        if let Some(value) = value {
            self.entry.reserve(value.len() + 1 + VALUE_ROOM);
            self.entry.extend_from_slice(value.as_bytes());
            self.entry.push(0);
        }
    }

    /// The value, if set.
    fn value(&self) -> Option<&OsStr> {
        let end = self.entry.len().saturating_sub(1);
        self.set
            .then(|| OsStr::from_bytes(&self.entry[self.value_at..end]))
    }
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
            #[cfg(test)]
            raise_in_child: None,
            #[cfg(posix_spawn)]
            prepared: Default::default(),
        }
    }

    pub fn program(&self) -> &OsStr {
        &self.program
    }

    /// Starts the command. Errors are the exec's own (ENOENT, EACCES, …),
    /// reported before this returns.
    pub fn spawn(&self) -> io::Result<Child> {
        let path = || std::env::var_os("PATH");
        with_shell_fallback(&self.program, &self.args, path, |program, args| {
            self.start(program, args)
        })
    }

    fn start(&self, program: &OsStr, args: &[OsString]) -> io::Result<Child> {
        #[cfg(posix_spawn)]
        if !crate::platform::sigchld_was_ignored() {
            return posix::spawn(self, program, args);
        }
        self.forked_as(program, args)
    }

    /// The command started by `forked_as` (the signals' tests).
    #[cfg(test)]
    pub(super) fn forked(&self) -> io::Result<Child> {
        self.forked_as(&self.program, &self.args)
    }

    /// std's fork and exec. A `pre_exec` is what makes std fork rather
    /// than call `posix_spawn` itself (whose child, on glibc, would have
    /// signals 32 and 33 ignored). Every signal is blocked across the
    /// fork, so that none runs retry's handler in the child; there
    /// `restore_in_child` gives the caught signals their default action
    /// (SIGCHLD the caller's) and unblocks them before the exec. SIGPIPE
    /// is reset by std.
    fn forked_as(&self, program: &OsStr, args: &[OsString]) -> io::Result<Child> {
        let mut command = std::process::Command::new(program);
        command.args(args);
        for change in &self.env {
            match change.value() {
                Some(value) => command.env(change.key(), value),
                None => command.env_remove(change.key()),
            };
        }
        command
            .stdin(std_stdio(&self.stdin)?)
            .stdout(std_stdio(&self.stdout)?)
            .stderr(std_stdio(&self.stderr)?);
        if self.own_group {
            command.process_group(0);
        }
        #[cfg(test)]
        let raise = self.raise_in_child;
        // SAFETY: `restore_in_child` is async-signal-safe (sigaction and
        // sigprocmask), as is the tests' `raise`.
        unsafe {
            command.pre_exec(move || {
                #[cfg(test)]
                if let Some(signal) = raise {
                    libc::raise(signal);
                }
                crate::platform::restore_in_child()
            });
        }
        let blocked = crate::platform::block_signals()?;
        let spawned = command.spawn();
        drop(blocked);
        let mut child = spawned?;
        Ok(Child {
            pid: child.id() as i32,
            stdin: child.stdin.take().map(|p| OwnedFd::from(p).into()),
            stdout: child.stdout.take().map(|p| OwnedFd::from(p).into()),
            stderr: child.stderr.take().map(|p| OwnedFd::from(p).into()),
        })
    }
}

impl Command for Spawn {
    fn arg_list(&mut self) -> &mut Vec<OsString> {
        &mut self.args
    }

    /// In place: a value rewritten in its entry's buffer.
    fn change(&mut self, key: &str, value: Option<&OsStr>) -> &mut Self {
        let index = match self.env.iter().position(|c| c.key() == key) {
            Some(index) => index,
            None => {
                // A new name leaves retry's environment without it.
                #[cfg(posix_spawn)]
                self.prepared.get_mut().forget_environment();
                self.env.push(Change::new(key));
                self.env.len() - 1
            }
        };
        self.env[index].set(value);
        self
    }
}

/// Starts `program` with `start`, and if the kernel will not run it
/// (ENOEXEC: no `#!` line, no known binary format) starts it again as POSIX
/// `execvp` specifies: `/bin/sh FILE ARGS...`, FILE the program as found
/// on `path` (retry's own `PATH`, which `posix_spawnp` searched too; read
/// only then, so a start that works costs nothing more).
fn with_shell_fallback(
    program: &OsStr,
    args: &[OsString],
    path: impl FnOnce() -> Option<OsString>,
    mut start: impl FnMut(&OsStr, &[OsString]) -> io::Result<Child>,
) -> io::Result<Child> {
    match start(program, args) {
        Err(error) if error.raw_os_error() == Some(libc::ENOEXEC) => {
            let Some(file) = find_program(program, path().as_deref()) else {
                return Err(error);
            };
            let shell_args: Vec<OsString> = std::iter::once(file.into_os_string())
                .chain(args.iter().cloned())
                .collect();
            start(OsStr::new("/bin/sh"), &shell_args)
        }
        started => started,
    }
}

/// The file `execvp` runs for `program`: itself if it names a path (has a
/// `/`), else the first executable file of that name in `path`'s
/// directories (an empty entry is the current one; no `PATH`, POSIX's
/// usual `/bin:/usr/bin`).
fn find_program(program: &OsStr, path: Option<&OsStr>) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if program.as_bytes().contains(&b'/') {
        return Some(program.into());
    }
    let path = path.unwrap_or(OsStr::new("/bin:/usr/bin"));
    path.as_bytes()
        .split(|&b| b == b':')
        .map(|dir| match dir {
            b"" => std::path::Path::new(".").join(program),
            dir => std::path::Path::new(OsStr::from_bytes(dir)).join(program),
        })
        .find(|file| {
            std::fs::metadata(file)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The file a start of `program` runs: itself if it names a path, else
/// the first executable of that name on `path` (a wrapper's `PATH=`), or
/// on retry's own `PATH`, as `posix_spawnp` searches it. For the preset
/// lookup, which must judge the program that really runs (a `wget` that
/// is BusyBox's).
pub fn program_file(program: &OsStr, path: Option<&OsStr>) -> Option<std::path::PathBuf> {
    match path {
        Some(path) => find_program(program, Some(path)),
        None => find_program(program, std::env::var_os("PATH").as_deref()),
    }
}

/// Why `program` could not be started, as the exec that tried would say:
/// not found (for a name, in no directory of `path`), a directory or a
/// file that is not executable (permission denied); `None` when it could.
/// For the shell's 126 and 127, which say only that.
pub fn why_not_startable(program: &OsStr, path: Option<&OsStr>) -> Option<io::Error> {
    use std::os::unix::fs::PermissionsExt;
    let denied = || io::Error::from_raw_os_error(libc::EACCES);
    let runnable = |m: &std::fs::Metadata| m.is_file() && m.permissions().mode() & 0o111 != 0;
    if program.as_bytes().contains(&b'/') {
        return match std::fs::metadata(program) {
            Err(error) => Some(error),
            Ok(m) => (!runnable(&m)).then(denied),
        };
    }
    if find_program(program, path).is_some() {
        return None;
    }
    // Found only where it cannot run: the shell says permission denied.
    let path = path.unwrap_or(OsStr::new("/bin:/usr/bin"));
    let somewhere = path.as_bytes().split(|&b| b == b':').any(|dir| {
        let dir = if dir.is_empty() { b"." } else { dir };
        std::path::Path::new(OsStr::from_bytes(dir))
            .join(program)
            .exists()
    });
    Some(match somewhere {
        true => denied(),
        false => io::Error::from_raw_os_error(libc::ENOENT),
    })
}

fn std_stdio(io: &Io) -> io::Result<std::process::Stdio> {
    use std::process::Stdio;
    Ok(match io {
        Io::Inherit => Stdio::inherit(),
        Io::Null => Stdio::null(),
        Io::Pipe => Stdio::piped(),
        Io::Fd(fd) => Stdio::from(fd.try_clone()?),
    })
}

#[cfg(posix_spawn)]
mod posix {
    use std::ffi::{OsStr, OsString, c_char};
    use std::io;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;

    use nix::spawn::{PosixSpawnAttr, PosixSpawnFileActions, PosixSpawnFlags};
    use nix::sys::signal::SigSet;
    use nix::unistd::Pid;

    use super::{Child, Io, Spawn};

    /// What `posix_spawnp` is handed, built at a spawn's first start and
    /// kept: the strings while they stay the same, the pointer arrays'
    /// room always. Only the pointers are written again at each start.
    #[derive(Debug, Default)]
    pub struct Prepared {
        /// The command line as last started, each argument NUL-ended.
        argv: Vec<Vec<u8>>,
        /// retry's environment but for the variables the spawn changes,
        /// `NAME=VALUE` NUL-ended: read at the first start after a new
        /// name was changed (retry never changes its own environment).
        inherited: Option<Vec<Vec<u8>>>,
        /// The NULL-ended arrays of pointers into the above.
        argv_pointers: Vec<*const c_char>,
        envp_pointers: Vec<*const c_char>,
    }

    impl Prepared {
        pub fn forget_environment(&mut self) {
            self.inherited = None;
        }

        /// Makes `argv` `program` and `args`, unless it already is.
        fn command_line(&mut self, program: &OsStr, args: &[OsString]) -> io::Result<()> {
            let words = || std::iter::once(program).chain(args.iter().map(OsString::as_os_str));
            let same = self.argv.len() == 1 + args.len()
                && self
                    .argv
                    .iter()
                    .zip(words())
                    .all(|(kept, word)| &kept[..kept.len() - 1] == word.as_bytes());
            if !same {
                self.argv = words().map(nul_ended).collect::<io::Result<_>>()?;
            }
            Ok(())
        }

        /// Fills the pointer arrays for `spawn`'s start, in the room they kept.
        fn point(&mut self, spawn: &Spawn) -> io::Result<()> {
            if spawn.env.iter().any(|c| c.set && has_nul(&c.entry)) {
                return Err(nul_error());
            }
            let inherited = self.inherited.get_or_insert_with(|| {
                let changed = |key: &OsStr| spawn.env.iter().any(|c| c.key() == key);
                std::env::vars_os()
                    .filter(|(key, _)| !changed(key))
                    .map(|(key, value)| {
                        let mut entry = key.into_encoded_bytes();
                        entry.push(b'=');
                        entry.extend_from_slice(value.as_bytes());
                        entry.push(0);
                        entry
                    })
                    .collect()
            });
            let set = spawn.env.iter().filter(|c| c.set).map(|c| &c.entry);
            self.envp_pointers.clear();
            self.envp_pointers
                .extend(inherited.iter().chain(set).map(|e| e.as_ptr().cast()));
            self.envp_pointers.push(std::ptr::null());
            self.argv_pointers.clear();
            self.argv_pointers
                .extend(self.argv.iter().map(|a| a.as_ptr().cast()));
            self.argv_pointers.push(std::ptr::null());
            Ok(())
        }
    }

    /// The entry without its final NUL holds another (a C string would end there).
    fn has_nul(entry: &[u8]) -> bool {
        entry[..entry.len() - 1].contains(&0)
    }

    fn nul_ended(word: &OsStr) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(word.len() + 1);
        bytes.extend_from_slice(word.as_bytes());
        bytes.push(0);
        if has_nul(&bytes) {
            return Err(nul_error());
        }
        Ok(bytes)
    }

    fn nul_error() -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "an argument or variable contains a NUL byte",
        )
    }

    pub fn spawn(spawn: &Spawn, program: &OsStr, args: &[OsString]) -> io::Result<Child> {
        let mut actions = PosixSpawnFileActions::init()?;
        // The child's ends live until the spawn returns, then close here.
        let mut child_ends: [Option<OwnedFd>; 3] = [None, None, None];
        let mut child = Child {
            pid: 0,
            stdin: None,
            stdout: None,
            stderr: None,
        };
        for (target, io) in [(0, &spawn.stdin), (1, &spawn.stdout), (2, &spawn.stderr)] {
            let end = match io {
                Io::Inherit => continue,
                Io::Null => dev_null()?,
                Io::Fd(fd) => fd.try_clone()?,
                Io::Pipe => {
                    let (reader, writer) = io::pipe()?;
                    match target {
                        0 => {
                            child.stdin = Some(writer);
                            reader.into()
                        }
                        1 => {
                            child.stdout = Some(reader);
                            writer.into()
                        }
                        _ => {
                            child.stderr = Some(reader);
                            writer.into()
                        }
                    }
                }
            };
            // 0-2 are always open (`platform::start` opens /dev/null for a
            // closed one) and `try_clone` duplicates to 3 or above, so
            // every end here is 3 or above and dup2 never meets itself (a
            // case POSIX only lately defined).
            actions.add_dup2(end.as_raw_fd(), target)?;
            child_ends[target as usize] = Some(end);
        }

        let mut attr = PosixSpawnAttr::init()?;
        let mut flags =
            PosixSpawnFlags::POSIX_SPAWN_SETSIGMASK | PosixSpawnFlags::POSIX_SPAWN_SETSIGDEF;
        if spawn.own_group {
            flags |= PosixSpawnFlags::POSIX_SPAWN_SETPGROUP;
            attr.set_pgroup(Pid::from_raw(0))?;
        }
        attr.set_flags(flags)?;
        attr.set_sigmask(&SigSet::empty())?;
        attr.set_sigdefault(&reset_signals())?;

        let mut prepared = spawn.prepared.borrow_mut();
        prepared.command_line(program, args)?;
        prepared.point(spawn)?;
        let mut pid: libc::pid_t = 0;
        // SAFETY: nix's attribute and file-action types are
        // `repr(transparent)` over libc's, initialised above; the pointer
        // arrays are NULL-ended and point into NUL-ended strings of
        // `prepared`, borrowed (unchanged) until the call returns, and
        // `posix_spawnp` only reads them.
        let error = unsafe {
            libc::posix_spawnp(
                &mut pid,
                prepared.argv_pointers[0],
                (&raw const actions).cast(),
                (&raw const attr).cast(),
                prepared.argv_pointers.as_ptr().cast(),
                prepared.envp_pointers.as_ptr().cast(),
            )
        };
        if error != 0 {
            return Err(io::Error::from_raw_os_error(error));
        }
        drop(child_ends);
        child.pid = pid;
        Ok(child)
    }

    /// `/dev/null`, for reading and writing.
    fn dev_null() -> io::Result<OwnedFd> {
        let file = std::fs::File::options()
            .read(true)
            .write(true)
            .open("/dev/null")?;
        Ok(file.into())
    }

    /// The signals set to their default action in the child: SIGPIPE,
    /// which retry ignores (`platform::start`) and gives every child back; those retry
    /// has a handler for (none on Linux, where a signalfd reads them), which
    /// the child would reset anyway, but only after asking the kernel what
    /// each one is (one `sigaction` call per signal saved per spawn); and on Linux the signals the C
    /// library keeps for itself (32 up to SIGRTMIN), which glibc's and
    /// musl's `posix_spawn` otherwise leave *ignored* in the child. Their
    /// `sigaddset` refuses those numbers, so their bits are set directly.
    fn reset_signals() -> SigSet {
        with_default(crate::platform::caught_signals())
    }

    fn with_default(caught: impl Iterator<Item = i32>) -> SigSet {
        // SAFETY: sigemptyset initialises the set; sigaddset only reads
        // and writes it, and refuses (an error code) a number it rejects.
        let mut raw = unsafe {
            let mut raw = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(raw.as_mut_ptr());
            raw.assume_init()
        };
        for signal in std::iter::once(libc::SIGPIPE).chain(caught) {
            // SAFETY: as above.
            unsafe { libc::sigaddset(&mut raw, signal) };
        }
        #[cfg(target_os = "linux")]
        {
            const WORD: usize = libc::c_ulong::BITS as usize;
            let words = (&raw mut raw).cast::<libc::c_ulong>();
            for signal in 32..libc::SIGRTMIN() {
                let bit = (signal - 1) as usize;
                // SAFETY: on Linux a sigset_t is the kernel's bit array of
                // unsigned longs, 1024 bits long, bit N-1 for signal N; the
                // signals here are below 64.
                unsafe { *words.add(bit / WORD) |= 1 << (bit % WORD) };
            }
        }
        // SAFETY: a valid, initialised set.
        unsafe { SigSet::from_sigset_t_unchecked(raw) }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn reset_signals_name_sigpipe_the_caught_and_the_c_library_signals() {
            #[cfg(not(target_os = "linux"))]
            let caught = [libc::SIGTERM, libc::SIGUSR1];
            #[cfg(target_os = "linux")]
            let caught = [libc::SIGTERM, libc::SIGRTMIN() + 1];
            let set = super::with_default(caught.into_iter());
            let raw = set.as_ref();
            // SAFETY: sigismember reads a valid set.
            let member = |signal| unsafe { libc::sigismember(raw, signal) } == 1;
            assert!(member(libc::SIGPIPE) && caught.into_iter().all(member));
            assert!(!member(libc::SIGINT) && !member(libc::SIGHUP));
            #[cfg(target_os = "linux")]
            {
                assert!((32..libc::SIGRTMIN()).all(member));
                assert!(!member(libc::SIGRTMIN()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn output(spawn: &mut Spawn) -> String {
        spawn.stdout = Io::Pipe;
        let child = spawn.spawn().unwrap();
        let mut text = String::new();
        child.stdout.unwrap().read_to_string(&mut text).unwrap();
        wait(child.pid);
        text
    }

    fn wait(pid: i32) {
        nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None).unwrap();
    }

    #[test]
    fn arguments_environment_and_pipes_reach_the_command() {
        let mut spawn = Spawn::new("sh");
        spawn
            .args(["-c", "echo \"$0 $A ${HOME+home} ${B-unset}\""])
            .arg("zero")
            .env("A", "a")
            .env("B", "b")
            .env_remove("B")
            .env_remove("HOME");
        spawn.stdin = Io::Null;
        assert_eq!(output(&mut spawn), "zero a  unset\n");
    }

    #[test]
    fn a_file_without_a_shebang_line_runs_with_sh() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("plain");
        std::fs::write(&script, "echo plain $1\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        assert_eq!(output(Spawn::new(&script).arg("ok")), "plain ok\n");
    }

    /// On every libc, whatever its `execvp` does: a start that fails with
    /// ENOEXEC is made again as `/bin/sh FILE ARGS...`, FILE found on PATH.
    #[test]
    fn a_file_the_kernel_will_not_run_is_started_again_with_sh() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("plain");
        std::fs::write(&script, "echo plain\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let path = std::env::join_paths(["/nonexistent-dir".as_ref(), dir.path()]).unwrap();
        let mut starts = Vec::new();
        let args = [OsString::from("a"), OsString::from("b")];
        let error = with_shell_fallback(
            "plain".as_ref(),
            &args,
            || Some(path.clone()),
            |program, args| {
                starts.push((program.to_owned(), args.to_vec()));
                Err::<Child, _>(io::Error::from_raw_os_error(libc::ENOEXEC))
            },
        )
        .unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::ENOEXEC));
        let shell_args = vec![script.into_os_string(), "a".into(), "b".into()];
        assert_eq!(
            starts,
            [
                ("plain".into(), args.to_vec()),
                ("/bin/sh".into(), shell_args)
            ]
        );
        // Any other error is the start's own, with no second try.
        let mut tries = 0;
        let error = with_shell_fallback(
            "plain".as_ref(),
            &[],
            || Some(path.clone()),
            |_, _| {
                tries += 1;
                Err::<Child, _>(io::Error::from_raw_os_error(libc::EACCES))
            },
        )
        .unwrap_err();
        assert_eq!((error.raw_os_error(), tries), (Some(libc::EACCES), 1));
    }

    /// A directory with two empty files: `data`, and `tool`, executable.
    fn data_and_tool() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let exec = dir.path().join("tool");
        std::fs::write(dir.path().join("data"), "").unwrap();
        std::fs::write(&exec, "").unwrap();
        std::fs::set_permissions(&exec, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        (dir, exec)
    }

    #[test]
    fn find_program_takes_a_path_as_it_is_and_searches_path_for_a_name() {
        let (dir, exec) = data_and_tool();
        let path = dir.path().as_os_str();
        assert_eq!(find_program("tool".as_ref(), Some(path)), Some(exec));
        assert_eq!(find_program("data".as_ref(), Some(path)), None);
        assert_eq!(find_program("x/y".as_ref(), None), Some("x/y".into()));
        assert_eq!(find_program("sh".as_ref(), None), Some("/bin/sh".into()));
    }

    #[test]
    fn why_a_program_cannot_start_as_the_exec_would_say() {
        let (dir, exec) = data_and_tool();
        let path = Some(dir.path().as_os_str());
        let kind = |program: &std::path::Path, path| {
            why_not_startable(program.as_os_str(), path).map(|e| e.kind())
        };
        assert_eq!(kind(&exec, None), None);
        assert_eq!(kind("tool".as_ref(), path), None);
        assert_eq!(
            kind(&dir.path().join("data"), None),
            Some(io::ErrorKind::PermissionDenied)
        );
        assert_eq!(
            kind("data".as_ref(), path),
            Some(io::ErrorKind::PermissionDenied)
        );
        assert_eq!(
            kind(dir.path(), None),
            Some(io::ErrorKind::PermissionDenied)
        );
        let missing = dir.path().join("missing");
        assert_eq!(kind(&missing, None), Some(io::ErrorKind::NotFound));
        assert_eq!(
            kind("missing".as_ref(), path),
            Some(io::ErrorKind::NotFound)
        );
    }

    #[test]
    fn missing_and_unrunnable_programs_are_errors_of_the_exec() {
        let missing = Spawn::new("retry-test-no-such-program")
            .spawn()
            .unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let dir = tempfile::tempdir().unwrap();
        let denied = Spawn::new(dir.path()).spawn().unwrap_err();
        assert_eq!(denied.kind(), io::ErrorKind::PermissionDenied);
    }

    #[test]
    fn own_group_leads_a_new_process_group() {
        use nix::unistd::{Pid, getpgid};
        for own_group in [true, false] {
            // It waits for its stdin to close, meanwhile its group is read.
            let mut spawn = Spawn::new("sh");
            spawn.args(["-c", "read x"]).stdin = Io::Pipe;
            spawn.own_group = own_group;
            let child = spawn.spawn().unwrap();
            let group = getpgid(Some(Pid::from_raw(child.pid))).unwrap();
            drop(child.stdin);
            wait(child.pid);
            let expected = if own_group {
                Pid::from_raw(child.pid)
            } else {
                getpgid(None).unwrap()
            };
            assert_eq!(group, expected, "own_group {own_group}");
        }
    }
}
