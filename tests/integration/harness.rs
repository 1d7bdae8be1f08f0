//! A small builder around the real binary: `retry(&[..]).stdin(..).run()`
//! and assertions on the result that print everything when they fail.
//! On every platform but what is about Unix (signals, pids, `sh`
//! snippets), so that a test that runs the helper runs under wine too.

// Off Unix, some of these serve only tests that are still Unix-only.
#![cfg_attr(not(unix), allow(dead_code))]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

#[cfg(unix)]
use nix::sys::signal::Signal;

pub mod c_library;
#[cfg(unix)]
pub mod claimed;
#[cfg(unix)]
pub mod loopback;
#[cfg(unix)]
pub mod pings;
#[cfg(unix)]
pub mod stored;

/// Whether every program in `tools` is on the PATH, for a test that runs
/// them for `what`: if not, the test says so and skips, unless the
/// variable `need` is set (`.ci/run` installs them and sets it), where a
/// missing one fails it.
pub fn tools_for(what: &str, tools: &[&str], need: &str) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|tool| {
            Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .stdout(Stdio::null())
                .status()
                .map_or(true, |status| !status.success())
        })
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os(need).is_none(),
        "missing for {what}: {missing:?}"
    );
    eprintln!("missing for {what}: {missing:?}: skipped");
    false
}

pub const BIN: &str = env!("CARGO_BIN_EXE_retry");

/// The binary under test: `RETRY_BIN_UNDER_TEST` names another build (an
/// older one, to see a new test fail against it; or .ci/cross's script
/// that runs the aarch64 build under qemu), else this crate's. Every test
/// that starts retry takes it from here, never from `BIN` itself.
pub fn bin() -> String {
    std::env::var("RETRY_BIN_UNDER_TEST").unwrap_or_else(|_| BIN.to_owned())
}

pub struct Retry {
    command: Command,
    /// Bytes written to retry's stdin (from a thread, so large inputs cannot deadlock).
    input: Option<Vec<u8>>,
    /// Files put back as they were before a run that wine spoiled is run
    /// again (see `wine_spoiled`).
    restores: Vec<PathBuf>,
}

/// Under wine (.ci/windows sets `RETRY_TESTS_UNDER_WINE`), a process start
/// now and then fails inside wine itself when the machine is loaded:
/// `CreateProcess` gives ERROR_INTERNAL_ERROR (os error 1359), which
/// Windows does not give for a program that exists. retry rightly stops
/// on it (126: the command could not run), and must keep doing so on
/// Windows, so the tests run again what wine spoiled, at most this often.
pub const WINE_RERUNS: u32 = 3;

pub fn under_wine() -> bool {
    cfg!(windows) && std::env::var_os("RETRY_TESTS_UNDER_WINE").is_some()
}

/// Whether wine failed to start a process during this run of retry: one
/// of retry's attempts or the helper's grandchild (`(os error 1359)` in
/// the stderr they share), or the `--on-retry` command (cmd.exe, which is
/// always there: its 126 is a failed start, whose reason the line leaves
/// out). Never under Unix or real Windows.
pub fn wine_spoiled(stderr: &[u8]) -> bool {
    let stderr = String::from_utf8_lossy(stderr);
    under_wine()
        && (stderr.contains("(os error 1359)")
            || stderr.contains("--on-retry command failed with exit code 126 "))
}

/// What a run that wine spoiled returns: it is run again.
pub struct Spoiled;

/// Runs `once` until wine does not spoil it, at most `WINE_RERUNS` times
/// more, saying on stderr (the test's own, shown when it fails) each time
/// it runs again. The one place where the suite reruns what wine spoiled.
pub fn again_if_wine_spoiled<T>(what: &str, mut once: impl FnMut() -> Result<T, Spoiled>) -> T {
    for rerun in 1..=WINE_RERUNS {
        match once() {
            Ok(done) => return done,
            Err(Spoiled) => eprintln!(
                "harness: wine failed to start a process (os error 1359); running again ({rerun}/{WINE_RERUNS}): {what}"
            ),
        }
    }
    once().unwrap_or_else(|Spoiled| {
        panic!(
            "wine failed to start a process in {} runs in a row: {what}",
            WINE_RERUNS + 1
        )
    })
}

/// `command.spawn()`, started again when wine itself failed to start it
/// (nothing ran: there is nothing to put back).
pub fn spawn_under_wine(command: &mut Command) -> std::process::Child {
    let what = format!("{command:?}");
    again_if_wine_spoiled(&what, || match command.spawn() {
        Err(error) if under_wine() && error.raw_os_error() == Some(1359) => Err(Spoiled),
        started => Ok(started.expect("the retry binary starts")),
    })
}

/// `retry ARGS...` with no RETRY_* variables (nor GitHub's step files, nor OTEL_*)
/// inherited from the test's environment, and no user presets (`$XDG_CONFIG_HOME/retry/presets.ini`)
/// from the machine's own configuration.
pub fn retry(args: &[&str]) -> Retry {
    #[cfg(unix)]
    default_interrupts();
    let mut command = Command::new(bin());
    command.args(args).stdin(Stdio::null());
    command.env("XDG_CONFIG_HOME", "/nonexistent/retry-tests");
    for (key, _) in std::env::vars_os() {
        // Nor the machine's OpenTelemetry settings: a trace test sets its own.
        let key_text = key.to_string_lossy();
        if key_text.starts_with("RETRY_")
            || key_text.starts_with("OTEL_")
            || key_text == "TRACEPARENT"
            || key_text == "TRACESTATE"
        {
            command.env_remove(key);
        }
    }
    // Nor the step summary and outputs of a GitHub job the tests run in.
    command.env_remove("GITHUB_STEP_SUMMARY");
    command.env_remove("GITHUB_OUTPUT");
    Retry {
        command,
        input: None,
        restores: Vec::new(),
    }
}

/// SIGINT and SIGQUIT at their default for the retry the tests start
/// (which inherits them), whoever started the suite: a non-interactive
/// shell starts a background job (`.ci/run &`) with both ignored, and
/// retry rightly leaves a signal its caller ignored ignored, so the tests
/// that interrupt it would fail, or wait for ever, for want of a signal.
#[cfg(unix)]
fn default_interrupts() {
    use nix::sys::signal::{SigHandler, signal};
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        for sig in [Signal::SIGINT, Signal::SIGQUIT] {
            // SAFETY: no handler is installed, only the default action,
            // which runs no code of this process.
            #[allow(unsafe_code)]
            unsafe { signal(sig, SigHandler::SigDfl) }.expect("SIG_DFL");
        }
    });
}

impl Retry {
    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.env_remove(key);
        self
    }

    pub fn current_dir(mut self, dir: &Path) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// More words after those given to `retry()` (the command, usually).
    pub fn args(mut self, args: &[&str]) -> Self {
        self.command.args(args);
        self
    }

    /// The project's helper program as the command, with its `steps`
    /// (see tests/helper/main.rs): after `retry()`'s words and a `--`.
    pub fn helper(mut self, steps: &[impl AsRef<OsStr>]) -> Self {
        self.command.arg(helper()).args(steps);
        self
    }

    pub fn stdin(mut self, stdin: impl Into<Stdio>) -> Self {
        self.command.stdin(stdin);
        self
    }

    pub fn input(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.input = Some(bytes.into());
        self.stdin(Stdio::piped())
    }

    /// A file the run changes (beyond the helper's `count` files and
    /// `--log-file`, which are found in the words): put back as it was
    /// before the run if wine spoils the run and it runs again.
    pub fn restores(mut self, file: impl Into<PathBuf>) -> Self {
        self.restores.push(file.into());
        self
    }

    /// Runs retry to its end; stdout and stderr as raw bytes. Under wine,
    /// a run in which wine failed to start a process runs again (see
    /// `again_if_wine_spoiled`), with the files it changed put back first.
    pub fn output(mut self) -> std::process::Output {
        self.command.stdout(Stdio::piped()).stderr(Stdio::piped());
        // Only under wine, and only regular files (or none yet): never a
        // FIFO or a device such as /dev/zero that a test logs to.
        let changed = if under_wine() {
            self.changed_files()
        } else {
            Vec::new()
        };
        let before: Vec<(PathBuf, Option<Vec<u8>>)> = changed
            .into_iter()
            .filter_map(|file| match std::fs::symlink_metadata(&file) {
                Ok(meta) if meta.is_file() => {
                    std::fs::read(&file).ok().map(|bytes| (file, Some(bytes)))
                }
                Ok(_) => None,
                Err(_) => Some((file, None)),
            })
            .collect();
        let what = format!("{:?}", self.command);
        again_if_wine_spoiled(&what, || {
            let output = self.output_once();
            if !wine_spoiled(&output.stderr) {
                return Ok(output);
            }
            for (file, content) in &before {
                let _ = match content {
                    Some(bytes) => std::fs::write(file, bytes),
                    None => std::fs::remove_file(file),
                };
            }
            Err(Spoiled)
        })
    }

    fn output_once(&mut self) -> std::process::Output {
        let mut child = spawn_under_wine(&mut self.command);
        if let (Some(bytes), Some(mut stdin)) = (self.input.clone(), child.stdin.take()) {
            std::thread::spawn(move || {
                use std::io::Write;
                // retry may stop reading early (--stdin inherit, null): not an error here.
                let _ = stdin.write_all(&bytes);
            });
        }
        child.wait_with_output().expect("the retry binary runs")
    }

    /// The files a run changes that a test reads: the helper's `count`
    /// files, `--log-file`, and those named by `restores`.
    fn changed_files(&self) -> Vec<PathBuf> {
        let words: Vec<&OsStr> = self.command.get_args().collect();
        let named = words
            .windows(2)
            .filter(|pair| pair[0] == "count" || pair[0] == "--log-file")
            .map(|pair| PathBuf::from(pair[1]));
        named.chain(self.restores.iter().cloned()).collect()
    }

    pub fn run(self) -> Finished {
        let start = Instant::now();
        let output = self.output();
        Finished {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            elapsed: start.elapsed(),
        }
    }

    /// Starts retry without waiting, with piped stdout and stderr.
    pub fn spawn(mut self) -> std::process::Child {
        self.command.stdout(Stdio::piped()).stderr(Stdio::piped());
        spawn_under_wine(&mut self.command)
    }

    /// The bare command, for a test that wires every stream itself (the
    /// chaos test: stdout on `/dev/full`, or read slowly, or closed early).
    pub fn into_command(self) -> Command {
        self.command
    }
}

#[derive(Debug)]
pub struct Finished {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Finished {
    #[track_caller]
    pub fn code(&self, expected: i32) -> &Self {
        assert_eq!(self.code, Some(expected), "wrong exit status\n{self:#?}");
        self
    }

    #[track_caller]
    pub fn stdout_is(&self, expected: &str) -> &Self {
        assert_eq!(self.stdout, expected, "wrong stdout\n{self:#?}");
        self
    }

    #[track_caller]
    pub fn stderr_has(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n{self:#?}"
        );
        self
    }

    #[track_caller]
    pub fn stderr_is(&self, expected: &str) -> &Self {
        assert_eq!(self.stderr, expected, "wrong stderr\n{self:#?}");
        self
    }

    #[track_caller]
    pub fn stderr_lines(&self, expected: usize) -> &Self {
        assert_eq!(
            self.stderr.lines().count(),
            expected,
            "wrong number of stderr lines\n{self:#?}"
        );
        self
    }
}

/// A scratch directory for pid files, counters and scripts.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

/// Waits (polling a file, bounded) until `path` exists with content; returns it.
#[track_caller]
pub fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// SIGKILL to a process a test left running on purpose (errors ignored:
/// it may be gone already).
#[cfg(unix)]
pub fn kill_pid(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
}

/// Sends `signal` to a retry started with `Retry::spawn`.
#[cfg(unix)]
pub fn send(child: &std::process::Child, signal: Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
}

/// Asserts that retry died of `signal` (as the shell sees it: 128+N), not
/// merely exited with that number: callers' scripts stop only on a real death.
#[cfg(unix)]
#[track_caller]
pub fn assert_died_of(
    status: std::process::ExitStatus,
    signal: Signal,
    context: &dyn std::fmt::Debug,
) {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(signal as i32),
        "retry did not die of {signal:?}: {status:?}\n{context:?}"
    );
}

/// Waits (bounded) for every pid in `text` (whitespace-separated) to be gone.
#[cfg(unix)]
#[track_caller]
pub fn assert_all_gone(text: &str, after: &str) {
    for pid in text.split_whitespace().map(|p| p.parse::<i32>().unwrap()) {
        assert!(gone_soon(pid), "{pid} survived {after}");
    }
}

/// Whether a process with this pid still exists (and is not a zombie):
/// `kill(pid, 0)` on every Unix, then its state for a zombie, so that off
/// Linux a "nothing left behind" check still looks.
#[cfg(unix)]
pub fn alive(pid: i32) -> bool {
    use nix::errno::Errno;
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Err(Errno::ESRCH) => false,
        Ok(()) | Err(Errno::EPERM) => state(pid).is_some_and(|s| s != 'Z'),
        Err(error) => panic!("kill({pid}, 0): {error}"),
    }
}

/// The state letter of a process (`R`, `S`, `T` for stopped, `Z`, ...):
/// from /proc on Linux, from `ps` elsewhere (the same letters).
#[cfg(unix)]
pub fn state(pid: i32) -> Option<char> {
    #[cfg(target_os = "linux")]
    return state_in_proc(pid);
    #[cfg(not(target_os = "linux"))]
    return state_by_ps(pid);
}

#[cfg(target_os = "linux")]
fn state_in_proc(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// `ps -o stat= -p PID`'s first letter, None when ps lists no such
/// process; a `ps` that cannot run fails the test rather than answer None.
#[cfg(unix)]
fn state_by_ps(pid: i32) -> Option<char> {
    let out = Command::new("ps")
        .args(["-o", "stat=", "-p", &pid.to_string()])
        .output()
        .expect("ps runs (it tells which processes are left)");
    String::from_utf8_lossy(&out.stdout).trim().chars().next()
}

/// /proc and ps agree on a process that sleeps, is stopped, is a zombie
/// and is gone, so the ps path that macOS and the BSDs take is right.
#[test]
#[cfg(target_os = "linux")]
fn proc_and_ps_give_the_same_process_states() {
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    let mut child = Command::new("sleep").arg("100").spawn().unwrap();
    let pid = child.id() as i32;
    let settled = |want: char| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while state_in_proc(pid) != Some(want) {
            assert!(Instant::now() < deadline, "{pid} never reached {want}");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(state_by_ps(pid), Some(want), "ps and /proc differ");
    };
    settled('S');
    assert!(alive(pid));
    kill(Pid::from_raw(pid), Signal::SIGSTOP).unwrap();
    settled('T');
    assert!(alive(pid));
    kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    settled('Z');
    assert!(!alive(pid), "a zombie counts as gone");
    child.wait().unwrap();
    assert_eq!((state_in_proc(pid), state_by_ps(pid)), (None, None));
    assert!(!alive(pid));
}

/// Waits (bounded) for a spawned retry; fails instead of hanging.
#[track_caller]
pub fn wait_bounded(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("retry did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Everything a spawned retry wrote to its piped stdout and stderr.
pub fn outputs(child: &mut std::process::Child) -> (String, String) {
    use std::io::Read;
    let read = |pipe: Option<&mut dyn Read>| {
        let mut text = String::new();
        pipe.expect("a piped stream")
            .read_to_string(&mut text)
            .unwrap();
        text
    };
    let stdout = read(child.stdout.as_mut().map(|p| p as &mut dyn Read));
    let stderr = read(child.stderr.as_mut().map(|p| p as &mut dyn Read));
    (stdout, stderr)
}

/// Waits (bounded) for a process to be gone; true if it went.
#[cfg(unix)]
pub fn gone_soon(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

pub fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// A shell snippet that fails `n` times then succeeds, counting in `dir/count`.
#[cfg(unix)]
pub fn fail_times(dir: &Path, n: u32, code: i32) -> String {
    let count = dir.join("count");
    format!(
        "c=$(cat {c} 2>/dev/null || echo 0); c=$((c+1)); echo $c > {c}; [ $c -gt {n} ] || exit {code}",
        c = count.display()
    )
}

pub fn count(dir: &Path) -> u32 {
    std::fs::read_to_string(dir.join("count")).map_or(0, |t| t.trim().parse().unwrap_or(0))
}

/// The helper's steps that fail `n` times with `code`, then succeed,
/// counting in `dir/count` (read by `count`): `fail_times` without `sh`.
pub fn fails(dir: &Path, n: u32, code: i32) -> Vec<String> {
    let count = dir.join("count").to_string_lossy().into_owned();
    let n = (n + 1).to_string();
    let code = code.to_string();
    ["fail-code", &code, "count", &count, &n]
        .map(str::to_owned)
        .to_vec()
}

/// The project's test helper (tests/helper/main.rs). Under wine (Windows),
/// the example `cargo test` built next to retry. Natively, built here by
/// rustc when its source is newer (it uses std only, ~1 s): a focused run
/// (`cargo test --test integration portable`) does not build examples,
/// and cargo cannot be asked while it holds its build directory's lock.
pub fn helper() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let retry = Path::new(BIN);
            if cfg!(windows) {
                let name = format!("retry-test-helper{}", std::env::consts::EXE_SUFFIX);
                return retry.parent().unwrap().join("examples").join(name);
            }
            let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/helper/main.rs");
            let dir = retry.parent().unwrap().join("test-helper");
            let path = dir.join("retry-test-helper");
            let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
            if modified(&path) < modified(&source) {
                std::fs::create_dir_all(&dir).unwrap();
                // Built aside and renamed: another test run may be using it.
                let fresh = dir.join(format!("retry-test-helper.{}", std::process::id()));
                let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
                let status = Command::new(rustc)
                    .args(["--edition", "2024", "-O", "-o"])
                    .arg(&fresh)
                    .arg(&source)
                    .status()
                    .expect("rustc, to build the test helper");
                assert!(status.success(), "cannot build retry-test-helper");
                std::fs::rename(&fresh, &path).unwrap();
            }
            path
        })
        .clone()
}

/// Makes `dir/name` a program of its own: a copy of the helper that runs
/// `steps` whatever its arguments (see tests/helper/main.rs). Run by its
/// bare name with `on_path(dir)`, it is named `name` in retry's lines on
/// every platform (no `.exe`, no directory).
pub fn install(dir: &Path, name: &str, steps: &[&str]) {
    let exe = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    std::fs::copy(helper(), &exe).unwrap();
    std::fs::write(dir.join(format!("{name}.steps")), steps.join("\n")).unwrap();
}

/// `PATH` with `dir` first: for programs made by `install`.
pub fn on_path(dir: &Path) -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let paths = std::iter::once(dir.to_owned()).chain(std::env::split_paths(&rest));
    std::env::join_paths(paths).unwrap()
}

/// `PATH` with a directory first that holds `true` and `false` of the
/// helper's, so that `retry true` means the same on every platform. Made
/// next to the helper when older than it, each file written aside and
/// renamed: another test run may be running them.
pub fn stand_ins() -> std::ffi::OsString {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let helper = helper();
        let dir = helper.parent().unwrap().join("stand-ins");
        std::fs::create_dir_all(&dir).unwrap();
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let aside = |path: &Path| path.with_extension(format!("new{}", std::process::id()));
        for (name, steps) in [("true", ""), ("false", "exit\n1")] {
            let exe = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
            let listed = dir.join(format!("{name}.steps"));
            if modified(&exe) < modified(&helper) {
                std::fs::copy(&helper, aside(&exe)).unwrap();
                std::fs::rename(aside(&exe), &exe).unwrap();
            }
            if std::fs::read_to_string(&listed).ok().as_deref() != Some(steps) {
                std::fs::write(aside(&listed), steps).unwrap();
                std::fs::rename(aside(&listed), &listed).unwrap();
            }
        }
        dir
    });
    on_path(dir)
}
