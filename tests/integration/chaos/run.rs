//! Running one scenario: retry with its stdio wired as the scenario says,
//! the signal sent, a watchdog, then what is left of the run.

#![allow(unsafe_code)] // pre_exec (signals at their defaults) and fcntl (a pipe's capacity)

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::signal::Signal;

use super::scenario::{Input, LogFault, Pattern, PresetsFault, Reader, Scenario, Tmp, signals};
use super::state::{Live, Seen};
use crate::harness::{alive, retry};

/// A run still going after this hangs: a violation.
pub const WATCHDOG: Duration = Duration::from_secs(20);
/// How long after retry ended every process of the run must be gone (the
/// longest legitimate one, a late writer, lives under a second).
pub const GONE_WITHIN: Duration = Duration::from_secs(5);

/// Everything a run left to judge.
pub struct Observed {
    pub exit: Exit,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The reader closed retry's stdout before its end.
    pub closed_early: bool,
    /// The bytes stdout's pipe holds unread (its writer blocks past them).
    pub pipe_capacity: usize,
    pub signal_sent: bool,
    pub hung: bool,
    /// retry's stdout or stderr was still open 5 s after it ended.
    pub held_open: bool,
    pub survivors: Vec<String>,
    /// The bystander's pid, if it started, and whether it outlived the run.
    pub bystander: Option<(i32, bool)>,
    pub tmp_left: Vec<String>,
    pub state: State,
    pub elapsed: Duration,
    /// When retry was seen to have ended, and when the signal was sent.
    pub ended: Instant,
    pub signal_at: Option<Instant>,
    /// What the state faults left (`state.rs`).
    pub seen: Seen,
    /// When retry was seen to have ended, in ns since the epoch (the clock
    /// of `date +%s%N`, which stamps the late lines).
    pub ended_at: u128,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Exit::Code(code) => write!(f, "exit {code}"),
            Exit::Signal(n) => match Signal::try_from(n) {
                Ok(signal) => write!(f, "death by {signal:?}"),
                Err(_) => write!(f, "death by signal {n}"),
            },
        }
    }
}

impl fmt::Display for Observed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let retry_lines: Vec<String> = String::from_utf8_lossy(&self.stderr)
            .split("retry: ")
            .skip(1)
            .map(|line| format!("retry: {}", line.lines().next().unwrap_or("")))
            .collect();
        write!(
            f,
            "got: {}{} after {} ms; {} bytes on stdout; attempts started {:?}, finished their output {:?}; stderr said: {:?}",
            self.exit,
            if self.signal_sent {
                " (signal sent)"
            } else {
                ""
            },
            self.elapsed.as_millis(),
            self.stdout.len(),
            self.state.started,
            self.state.done,
            retry_lines
        )
    }
}

/// What the command's script recorded in the state file.
#[derive(Default, Debug)]
pub struct State {
    pub started: Vec<usize>,
    pub done: BTreeSet<usize>,
    pub mismatched: Vec<usize>,
    /// Late lines by attempt, with when they were written (ns since the epoch).
    pub late_written: Vec<(usize, u128)>,
    pub late_lost: Vec<(usize, u128)>,
}

impl State {
    fn read(path: &Path) -> Self {
        let mut state = State::default();
        for line in fs::read_to_string(path).unwrap_or_default().lines() {
            let mut words = line.split(' ');
            let (Some(what), Some(Ok(number))) = (words.next(), words.next().map(str::parse))
            else {
                continue;
            };
            let mut at = || words.next().and_then(|t| t.parse().ok()).unwrap_or(0);
            match what {
                "start" => state.started.push(number),
                "done" => {
                    state.done.insert(number);
                }
                "stdin-mismatch" => state.mismatched.push(number),
                "late-written" => state.late_written.push((number, at())),
                "late-lost" => state.late_lost.push((number, at())),
                _ => {}
            }
        }
        state
    }
}

pub fn execute(s: &Scenario, root: &Path, pattern: &Pattern) -> Observed {
    let dir = root.join(format!("run-{}", s.seed));
    let tmp = dir.join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    let tmpdir = match s.tmpdir {
        Tmp::Fresh => tmp.clone(),
        Tmp::Missing => PathBuf::from("/nonexistent/retry-chaos"),
        Tmp::NotADirectory => {
            let file = dir.join("not-a-directory");
            fs::write(&file, "").unwrap();
            file
        }
        Tmp::Unwritable => PathBuf::from("/proc"),
    };
    let input = match s.stdin {
        Input::Replay(len) => {
            let bytes = pattern.bytes[..len].to_vec();
            fs::write(dir.join("input"), &bytes).unwrap();
            Some(bytes)
        }
        _ => None,
    };
    let token = format!("{}-{}", std::process::id(), s.seed);
    let mut command = command(s, &dir, &tmpdir, &token, &pattern.path);
    let live = Live::start(s, &dir, &mut command);
    command.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });

    let start = Instant::now();
    let mut child = command.spawn().expect("the retry binary starts");
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        // retry may stop reading (it died, or a fault): not this thread's concern.
        std::thread::spawn(move || stdin.write_all(&bytes));
    }
    let pipe_capacity = child.stdout.as_ref().map_or(0, capacity);
    let stdout = child.stdout.take().map(|pipe| {
        let reader = s.reader;
        collect(move || read_stdout(pipe, reader))
    });
    let stderr = collect({
        let mut pipe = child.stderr.take().unwrap();
        move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            (bytes, false)
        }
    });

    let mut signal_sent = false;
    let mut signal_at = None;
    if let Some((signal, ms)) = s.signal {
        std::thread::sleep(
            (start + Duration::from_millis(ms)).saturating_duration_since(Instant::now()),
        );
        if child.try_wait().unwrap().is_none() {
            // SAFETY: kill has no memory arguments.
            unsafe { libc::kill(child.id() as i32, signal) };
            signal_sent = true;
            signal_at = Some(Instant::now());
        }
    }
    let (status, hung) = wait_bounded(&mut child, start + WATCHDOG);
    let elapsed = start.elapsed();
    let ended = Instant::now();
    let ended_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let exit = {
        use std::os::unix::process::ExitStatusExt;
        status
            .code()
            .map_or_else(|| Exit::Signal(status.signal().unwrap_or(0)), Exit::Code)
    };

    // Invariant 4 needs the output; a survivor holding a pipe keeps it from
    // ending, which is itself a violation (invariant 2 names the process).
    let outputs = stdout.as_ref().map_or(Some((Vec::new(), false)), |rx| {
        rx.recv_timeout(GONE_WITHIN.saturating_sub(ended.elapsed()))
            .ok()
    });
    let errors = stderr
        .recv_timeout(GONE_WITHIN.saturating_sub(ended.elapsed()))
        .ok();
    let held_open = outputs.is_none() || errors.is_none();
    let survivors = survivors(&token, &dir.join("pids"), ended + GONE_WITHIN);
    let bystander = s
        .bystander_ms
        .and_then(|_| bystander(&dir.join("bystander")));
    kill_all(&token);
    let finish = |got: Option<(Vec<u8>, bool)>, rx: Option<&mpsc::Receiver<(Vec<u8>, bool)>>| {
        got.or_else(|| rx?.recv_timeout(GONE_WITHIN).ok())
            .unwrap_or_default()
    };
    let (stdout, closed_early) = finish(outputs, stdout.as_ref());
    let closed_early = closed_early || s.reader == Reader::ClosesAfter(0);
    let (stderr, _) = finish(errors, Some(&stderr));

    let tmp_left = fs::read_dir(&tmp)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let state = State::read(&dir.join("state"));
    let seen = live.finish();
    let _ = fs::remove_dir_all(&dir);
    Observed {
        exit,
        stdout,
        stderr,
        closed_early,
        pipe_capacity,
        signal_sent,
        hung,
        held_open,
        survivors,
        bystander,
        tmp_left,
        state,
        elapsed,
        ended,
        signal_at,
        seen,
        ended_at,
    }
}

/// A configuration directory whose `retry/presets.ini` is `fault`.
fn presets_config(dir: &Path, fault: PresetsFault) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let config = dir.join("config");
    let own = config.join("retry");
    fs::create_dir_all(&own).unwrap();
    fs::set_permissions(&own, fs::Permissions::from_mode(0o755)).unwrap();
    let file = own.join("presets.ini");
    // Claims sh: the lookup would choose it for every run, were it read.
    let text = "[chaos]\nprograms = sh\ncalls = *\nretry-if-output = .\nsource = chaos\n";
    let mode = |mode| fs::set_permissions(&file, fs::Permissions::from_mode(mode)).unwrap();
    match fault {
        PresetsFault::Fifo => {
            nix::unistd::mkfifo(&file, nix::sys::stat::Mode::S_IRWXU).unwrap();
        }
        PresetsFault::DevZero => std::os::unix::fs::symlink("/dev/zero", &file).unwrap(),
        PresetsFault::Directory => fs::create_dir(&file).unwrap(),
        PresetsFault::GroupWritable => {
            fs::write(&file, text).unwrap();
            mode(0o664);
        }
        PresetsFault::OtherUsers => {
            fs::write(&file, text).unwrap();
            match nix::unistd::geteuid().is_root() {
                true => std::os::unix::fs::chown(&file, Some(65534), None).unwrap(),
                false => mode(0o646),
            }
        }
    }
    config
}

/// retry with the scenario's arguments, environment and stdout (stdin is
/// the caller's: it has the input).
fn command(s: &Scenario, dir: &Path, tmpdir: &Path, token: &str, pattern: &Path) -> Command {
    let mut args = s.args();
    match s.log {
        Some(LogFault::Fifo) => {
            let fifo = dir.join("log.fifo");
            let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
            assert!(made.success(), "mkfifo {}", fifo.display());
            args.extend(["--log-file".into(), fifo.display().to_string()]);
        }
        Some(LogFault::Full) => args.extend(["--log-file".into(), "/dev/full".into()]),
        None => {}
    }
    args.extend(["sh".into(), "-c".into(), s.script(dir, pattern)]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut command = retry(&args)
        .env("TMPDIR", tmpdir)
        .env("CHAOS_TOKEN", token)
        .into_command();
    if s.budget_unusable {
        let file = dir.join("runtime-dir-is-a-file");
        fs::write(&file, "").unwrap();
        command.env("XDG_RUNTIME_DIR", file);
    }
    if let Some(fault) = s.presets {
        command.env("XDG_CONFIG_HOME", presets_config(dir, fault));
    }
    if s.store_trickles {
        let url = format!("redis://127.0.0.1:{}", trickling_store());
        command.env("RETRY_BUDGET_STORE", url);
    }
    if let Some(ms) = s.bystander_ms {
        command = with_a_bystander(&command, ms, &dir.join("bystander"));
    }
    let sigchld_ignored = s.sigchld_ignored;
    // The signals sent to retry must reach its handlers: were one ignored
    // in this process (a shell's background job ignores SIGINT and
    // SIGQUIT), retry would rightly keep it ignored and a run would hang.
    // SAFETY: only sigaction, async-signal-safe, between fork and exec.
    unsafe {
        command.pre_exec(move || {
            for signal in signals() {
                libc::signal(signal, libc::SIG_DFL);
            }
            if sigchld_ignored {
                let ignore = nix::sys::signal::SigHandler::SigIgn;
                nix::sys::signal::signal(Signal::SIGCHLD, ignore)?;
            }
            Ok(())
        });
    }
    command.stderr(Stdio::piped());
    match s.reader {
        Reader::Full => {
            let full = fs::OpenOptions::new().write(true).open("/dev/full");
            command.stdout(full.unwrap());
        }
        // Closed before retry starts: every write to it fails, provably.
        Reader::ClosesAfter(0) => {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            command.stdout(writer);
        }
        _ => {
            command.stdout(Stdio::piped());
        }
    }
    command
}

/// `retry` exec'd by a shell that first leaves a child behind: `ms` after
/// the start that child starts a daemon in a session of its own (its pid in
/// `pid_file`) and dies, so the kernel hands the daemon to retry, the
/// subreaper, in the middle of the run. The daemon has another token: it is
/// not the run's, and must outlive it.
fn with_a_bystander(retry: &Command, ms: u64, pid_file: &Path) -> Command {
    let script = format!(
        "sh -c 'sleep {}; CHAOS_TOKEN=bystander setsid sleep 30 >/dev/null 2>&1 & echo $! > {}' & exec \"$0\" \"$@\"",
        super::scenario::seconds(ms),
        pid_file.display()
    );
    let mut outer = Command::new("sh");
    outer.arg("-c").arg(script).arg(retry.get_program());
    outer.args(retry.get_args());
    for (key, value) in retry.get_envs() {
        match value {
            Some(value) => outer.env(key, value),
            None => outer.env_remove(key),
        };
    }
    outer
}

/// The bystander's pid once it has started (a second at most after the
/// run), and whether it is alive; then it is stopped, as the test's own.
fn bystander(pid_file: &Path) -> Option<(i32, bool)> {
    let deadline = Instant::now() + Duration::from_secs(2);
    let pid: i32 = loop {
        if let Some(pid) = fs::read_to_string(pid_file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            break pid;
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let alive = alive(pid);
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    Some((pid, alive))
}

/// How many bytes a pipe holds unread (`F_GETPIPE_SZ`); unknown: no limit.
fn capacity(pipe: &impl AsRawFd) -> usize {
    // SAFETY: F_GETPIPE_SZ only reads a number about an open descriptor.
    let size = unsafe { libc::fcntl(pipe.as_raw_fd(), libc::F_GETPIPE_SZ) };
    usize::try_from(size).unwrap_or(usize::MAX)
}

/// Runs `read` on a thread; its result arrives on the channel.
pub(super) fn collect(
    read: impl FnOnce() -> (Vec<u8>, bool) + Send + 'static,
) -> mpsc::Receiver<(Vec<u8>, bool)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read());
    });
    rx
}

/// Reads retry's stdout as `reader` says; true if it closed before the end.
fn read_stdout(mut pipe: impl Read, reader: Reader) -> (Vec<u8>, bool) {
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut paused = 0;
    loop {
        let want = match reader {
            Reader::ClosesAfter(limit) if bytes.len() >= limit => return (bytes, true),
            Reader::ClosesAfter(limit) => (limit - bytes.len()).min(buf.len()),
            Reader::Slow { budget_ms, .. } if paused < budget_ms => 4096,
            _ => buf.len(),
        };
        match pipe.read(&mut buf[..want]) {
            Ok(0) => return (bytes, false),
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return (bytes, false),
        }
        if let Reader::Slow {
            pause_ms,
            budget_ms,
        } = reader
            && paused < budget_ms
        {
            std::thread::sleep(Duration::from_millis(pause_ms));
            paused += pause_ms;
        }
    }
}

/// Waits for retry until `deadline`; past it, kills it: (status, hung).
pub(super) fn wait_bounded(
    child: &mut Child,
    deadline: Instant,
) -> (std::process::ExitStatus, bool) {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, false);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return (child.wait().unwrap(), true);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The run's processes still alive at `deadline`, described.
pub(super) fn survivors(token: &str, pid_file: &Path, deadline: Instant) -> Vec<String> {
    let recorded: Vec<i32> = fs::read_to_string(pid_file)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    loop {
        let living = carriers(token);
        if living.is_empty() {
            return Vec::new();
        }
        if Instant::now() >= deadline {
            return living
                .into_iter()
                .map(|pid| {
                    let cmdline = fs::read(format!("/proc/{pid}/cmdline"))
                        .unwrap_or_default()
                        .split(|&b| b == 0)
                        .map(|w| String::from_utf8_lossy(w).into_owned())
                        .collect::<Vec<_>>()
                        .join(" ");
                    let how = if recorded.contains(&pid) {
                        "in the pid file"
                    } else {
                        "not in the pid file"
                    };
                    format!("process {pid} ({}; {how})", cmdline.trim())
                })
                .collect();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Living processes with this run's token in their environment (pids from
/// the pid file are among them; a reused pid lacks the token).
fn carriers(token: &str) -> Vec<i32> {
    let wanted = format!("CHAOS_TOKEN={token}").into_bytes();
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == wanted))
                && alive(pid)
        })
        .collect()
}

/// Cleans up after a violation: nothing of a run may outlive it.
pub(super) fn kill_all(token: &str) {
    for _ in 0..100 {
        let living = carriers(token);
        if living.is_empty() {
            return;
        }
        for pid in living {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The port of a fleet store on 127.0.0.1 that answers every connection
/// one byte every 50 ms, for 30 s (past the watchdog), or until retry
/// hangs up: each read of retry's gets a byte well within its timeout,
/// and only a bound on the whole exchange gives up in time. One for the
/// whole test, started at first use; it accepts on a thread that ends
/// with the test process.
fn trickling_store() -> u16 {
    use std::io::Write;
    use std::net::TcpListener;
    static PORT: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
    *PORT.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    for _ in 0..600 {
                        if stream.write_all(b"+").is_err() {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                });
            }
        });
        port
    })
}
