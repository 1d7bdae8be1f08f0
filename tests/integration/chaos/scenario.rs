//! One run's scenario, drawn from its seed: the command's script, retry's
//! arguments, the faults, and what the attempts print and exit with.

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};
use std::fs;
use std::path::{Path, PathBuf};

use nix::sys::signal::Signal;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::harness::c_library;

/// Bytes a spool keeps in memory before it spills to TMPDIR (src/pipes).
const SPILL_LIMIT: usize = 64 << 20;
const MARKER: &str = "RATE LIMIT";
const MARKER_REGEX: &str = "^RATE LIMIT$";
/// Retried by default; 3 is fatal when `--fatal-on 3` is drawn.
const FAILURE_CODES: [i32; 5] = [1, 2, 3, 75, 124];
const SIGNALS: [Signal; 5] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGUSR1,
    Signal::SIGALRM,
];

/// Every signal a run may send to retry: `SIGNALS` and the real-time ones
/// (outside nix's `Signal` enum, so numbers), whose deaths retry once lost.
pub fn signals() -> impl Iterator<Item = i32> {
    SIGNALS
        .into_iter()
        .map(|signal| signal as i32)
        .chain(c_library::sigrtmin()..=libc::SIGRTMAX())
}

/// A real-time signal drawn from the whole range, as retry's C library
/// has it (not this test's: `harness::c_library`).
fn realtime(rng: &mut ChaCha8Rng) -> i32 {
    rng.random_range(c_library::sigrtmin()..=libc::SIGRTMAX())
}
const JITTERS: [&str; 4] = ["none", "full", "equal", "decorrelated"];

#[derive(Debug)]
pub struct Scenario {
    pub seed: u64,
    /// One per allowed attempt (`-n`).
    pub attempts: Vec<Attempt>,
    jitter: &'static str,
    pub stdout_once: bool,
    retry_if: bool,
    fatal_on_3: bool,
    pub stdin: Input,
    timeout_ms: Option<u64>,
    kill_after_ms: u64,
    /// Sent to retry this long after it started, if it still runs.
    pub signal: Option<(i32, u64)>,
    pub tmpdir: Tmp,
    pub reader: Reader,
    /// Fault: retry's caller ignores SIGCHLD (perl's `$SIG{CHLD}='IGNORE'`).
    pub sigchld_ignored: bool,
    /// Fault: retry's parent leaves a process behind that starts a daemon
    /// this long after retry started and dies, so retry (the subreaper)
    /// adopts a process that is not the command's, which it must not stop.
    pub bystander_ms: Option<u64>,
    pub log: Option<LogFault>,
    /// Fault: `--budget` in a directory that cannot be used (XDG_RUNTIME_DIR
    /// is a file): one warning, and the run goes on without the budget.
    pub budget_unusable: bool,
    /// Fault: `--on-retry` dies of this real-time signal each time.
    pub hook_dies_of: Option<i32>,
    /// Fault: `--budget` in a fleet store (`--budget-store`, a loopback
    /// server of the test's) that answers one byte every 50 ms: given up
    /// on within `--budget-timeout`, with one warning.
    pub store_trickles: bool,
    /// Fault: the user's presets file, read by the lookup of a preset for
    /// the program before the run: ignored at once, with one warning.
    pub presets: Option<PresetsFault>,
    /// Faults in the state that outlives a run and in the metrics and
    /// traces that report it (`state.rs`).
    pub state: super::state::Faults,
}

/// Fault: what `$XDG_CONFIG_HOME/retry/presets.ini` is. Where it holds
/// text, a preset claiming `sh` that must never be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PresetsFault {
    /// A FIFO nobody writes to: a read would wait forever.
    Fifo,
    /// A symlink to `/dev/zero`: a read would never end.
    DevZero,
    Directory,
    /// Writable by its group.
    GroupWritable,
    /// Another user's (as root; else writable by others).
    OtherUsers,
}

/// Fault: where `--log-file` points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFault {
    /// A FIFO nobody reads: refused at once (exit 2), nothing runs.
    Fifo,
    /// `/dev/full`: every line fails; one warning, the status unchanged.
    Full,
}

#[derive(Debug)]
pub struct Attempt {
    /// Pattern bytes printed after the header.
    len: usize,
    /// Prints a line matching `--retry-if-output` there.
    marker: Option<Stream>,
    code: i32,
    /// After its output, waits to be stopped instead of exiting.
    hang: bool,
    pub ignores_term: bool,
    pub children: Vec<Background>,
    /// A background process writes a line to stdout this long after the
    /// attempt exits.
    pub late_ms: Option<u64>,
}

impl Attempt {
    /// Whether it ends by a real-time signal (its code is then 128+N).
    pub fn dies_of_a_signal(&self) -> bool {
        !self.hang && self.code > 128
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

#[derive(Debug)]
pub struct Background {
    pub setsid: bool,
    pub ignores_term: bool,
    /// Keeps the attempt's stdout and stderr open while it lives.
    holds_output: bool,
    /// `None`: lives until stopped (only in attempts that are stopped).
    life_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Inherit,
    Null,
    Replay(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tmp {
    Fresh,
    /// Fault: the directory does not exist.
    Missing,
    /// Fault: a regular file.
    NotADirectory,
    /// Fault: `/proc`, where nobody (root included) can create a file.
    Unwritable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Fast,
    /// Fault: reads 4 KiB at a time with pauses, until the budget is spent.
    Slow {
        pause_ms: u64,
        budget_ms: u64,
    },
    /// Fault: closes retry's stdout after this many bytes (0: before retry starts).
    ClosesAfter(usize),
    /// Fault: stdout is `/dev/full` (every write fails with ENOSPC).
    Full,
}

impl Scenario {
    pub fn generate(seed: u64) -> Self {
        let rng = &mut ChaCha8Rng::seed_from_u64(seed);
        // Past the spill limit: rare, so that a run stays quick.
        let big = rng.random_bool(0.05);
        let n = rng.random_range(1..=if big { 3 } else { 5 });
        let failures = rng.random_range(0..=n);
        let timeout_ms = rng.random_bool(0.35).then(|| rng.random_range(100..=300));
        let signal = rng.random_bool(0.3).then(|| {
            let signal = SIGNALS[rng.random_range(0..SIGNALS.len())];
            (signal as i32, rng.random_range(0..=300))
        });
        let stdout_once = rng.random_bool(0.4);
        let retry_if = rng.random_bool(0.3);
        let stdin = match rng.random_range(0..10) {
            0..=4 => Input::Inherit,
            5 | 6 => Input::Null,
            _ if big && rng.random_bool(0.5) => Input::Replay(over_limit(rng)),
            _ => Input::Replay(ordinary_len(rng)),
        };
        let reader = match rng.random_range(0..20) {
            0..=11 => Reader::Fast,
            12..=15 => Reader::Slow {
                pause_ms: rng.random_range(1..=10),
                budget_ms: rng.random_range(100..=800),
            },
            16..=18 => Reader::ClosesAfter(match rng.random_range(0..3) {
                0 => 0,
                1 => rng.random_range(1..=4096),
                _ => rng.random_range(4097..=256 << 10),
            }),
            _ => Reader::Full,
        };
        let stoppable = timeout_ms.is_some() || signal.is_some();
        // Late output is checked only where it can arrive: nothing kills its
        // writer, and stdout takes it.
        let late_allowed = signal.is_none() && matches!(reader, Reader::Fast | Reader::Slow { .. });
        let attempts = (1..=n)
            .map(|number| {
                let hang = stoppable && rng.random_bool(0.15);
                let children = (0..rng.random_range(0..=2))
                    .map(|_| Background {
                        setsid: rng.random_bool(0.4),
                        ignores_term: rng.random_bool(0.3),
                        holds_output: rng.random_bool(0.4),
                        life_ms: (!hang || rng.random_bool(0.3))
                            .then(|| rng.random_range(20..=250)),
                    })
                    .collect();
                Attempt {
                    len: if big && rng.random_bool(0.6) {
                        over_limit(rng)
                    } else {
                        ordinary_len(rng)
                    },
                    marker: (retry_if && rng.random_bool(0.3)).then(|| {
                        if rng.random_bool(0.5) {
                            Stream::Stdout
                        } else {
                            Stream::Stderr
                        }
                    }),
                    code: if number <= failures {
                        FAILURE_CODES[rng.random_range(0..FAILURE_CODES.len())]
                    } else {
                        0
                    },
                    hang,
                    ignores_term: rng.random_bool(0.15),
                    children,
                    late_ms: (late_allowed && !hang && rng.random_bool(0.1))
                        .then(|| rng.random_range(100..=700)),
                }
            })
            .collect();
        let mut scenario = Scenario {
            seed,
            attempts,
            jitter: JITTERS[rng.random_range(0..JITTERS.len())],
            stdout_once,
            retry_if,
            fatal_on_3: rng.random_bool(0.15),
            stdin,
            timeout_ms,
            kill_after_ms: rng.random_range(50..=200),
            signal,
            tmpdir: Tmp::Fresh,
            reader,
            sigchld_ignored: false,
            bystander_ms: None,
            log: None,
            budget_unusable: false,
            hook_dies_of: None,
            store_trickles: false,
            presets: None,
            state: Default::default(),
        };
        // A broken TMPDIR matters only where a spool spills: inject it most there.
        let odds = if scenario.spills() { 0.5 } else { 0.1 };
        if rng.random_bool(odds) {
            scenario.tmpdir =
                [Tmp::Missing, Tmp::NotADirectory, Tmp::Unwritable][rng.random_range(0..3)];
        }
        // Drawn last, so the draws above stay those of earlier versions.
        scenario.sigchld_ignored = rng.random_bool(0.15);
        scenario.bystander_ms = rng.random_bool(0.15).then(|| rng.random_range(0..=300));
        scenario.log = match rng.random_range(0..20) {
            0 => Some(LogFault::Fifo),
            1 | 2 => Some(LogFault::Full),
            _ => None,
        };
        scenario.budget_unusable = rng.random_bool(0.1);
        // Real-time signals: sent to retry, the death of a failing attempt
        // (exit status 128+N), the death of the hook.
        if let Some((signal, _)) = &mut scenario.signal
            && rng.random_bool(0.3)
        {
            *signal = realtime(rng);
        }
        // (Not under qemu-user, which renumbers them between the native
        // `sh` and retry: .ci/cross says so.)
        let renumbered = std::env::var_os("RETRY_TESTS_UNDER_QEMU").is_some();
        for attempt in &mut scenario.attempts {
            if attempt.code != 0 && rng.random_bool(0.15) && !renumbered {
                attempt.code = 128 + realtime(rng);
            }
        }
        scenario.hook_dies_of = rng.random_bool(0.15).then(|| realtime(rng));
        // (Only where retry has a Redis client: else the store is refused.)
        scenario.store_trickles = rng.random_bool(0.1) && cfg!(feature = "redis");
        scenario.presets = rng.random_bool(0.3).then(|| {
            use PresetsFault::*;
            [Fifo, DevZero, Directory, GroupWritable, OtherUsers][rng.random_range(0..5)]
        });
        scenario.state =
            super::state::Faults::draw(rng, scenario.budget_unusable || scenario.store_trickles);
        scenario
    }

    /// Whether retry must keep more than its memory limit in a temporary
    /// file: held-back stdout or replayed stdin.
    pub fn spills(&self) -> bool {
        let held = self.stdout_once && self.attempts.iter().any(|a| a.len > SPILL_LIMIT);
        held || matches!(self.stdin, Input::Replay(len) if len > SPILL_LIMIT)
    }

    /// The most pattern bytes any part of the run reads.
    pub fn longest(&self) -> usize {
        let input = match self.stdin {
            Input::Replay(len) => len,
            _ => 0,
        };
        self.attempts.iter().map(|a| a.len).fold(input, usize::max)
    }

    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = ["--base", "1ms", "--cap", "10ms", "--jitter", self.jitter]
            .map(str::to_owned)
            .into();
        args.push("-n".into());
        args.push(self.attempts.len().to_string());
        args.push("--kill-after".into());
        args.push(format!("{}ms", self.kill_after_ms));
        if let Some(ms) = self.timeout_ms {
            args.push("-t".into());
            args.push(format!("{ms}ms"));
        }
        if self.stdout_once {
            args.push("--stdout-once".into());
        }
        if self.retry_if {
            args.push("--retry-if-output".into());
            args.push(MARKER_REGEX.into());
        }
        if self.fatal_on_3 {
            args.push("--fatal-on".into());
            args.push("3".into());
        }
        if self.budget_unusable || self.store_trickles || self.state.budget_record.is_some() {
            args.extend(["--budget".into(), "chaos".into()]);
        }
        if self.store_trickles {
            // The store itself is named by run.rs (its port is the run's).
            args.extend(["--budget-timeout".into(), "100ms".into()]);
        }
        if let Some(signal) = self.hook_dies_of {
            args.extend(["--on-retry".into(), format!("kill -{signal} $$")]);
        }
        args.extend(self.state.args());
        match self.stdin {
            Input::Inherit => {}
            Input::Null => args.extend(["--stdin".into(), "null".into()]),
            Input::Replay(_) => args.extend(["--stdin".into(), "replay".into()]),
        }
        args
    }

    /// The command's script. Numbers are literal in each attempt's branch,
    /// so the background `sh -c '...'` strings need no variables.
    pub fn script(&self, dir: &Path, pattern: &Path) -> String {
        let plain = |p: &Path| {
            let text = p.display().to_string();
            assert!(!text.contains([' ', '\'', '"', '$', '\\']), "{text}");
            text
        };
        let (pids, state) = (plain(&dir.join("pids")), plain(&dir.join("state")));
        let (input, pattern) = (plain(&dir.join("input")), plain(pattern));
        let mut s = format!(
            "echo $$ >> {pids}\necho \"start $RETRY_ATTEMPT\" >> {state}\ncase $RETRY_ATTEMPT in\n"
        );
        for (i, attempt) in self.attempts.iter().enumerate() {
            let n = i + 1;
            let _ = writeln!(s, "{n})");
            if attempt.ignores_term {
                s.push_str("  trap '' TERM\n");
            }
            // An attempt that hangs does so even if its stdout is closed or
            // full: only a stop may end it, so its children are stopped too.
            let check = if attempt.hang {
                s.push_str("  trap '' PIPE\n");
                ""
            } else {
                " || exit $?"
            };
            if let Input::Replay(_) = self.stdin {
                // cmp's 1 is a difference; a cmp killed with its attempt says nothing.
                let _ = writeln!(
                    s,
                    "  cmp -s - {input}; r=$?\n  if [ $r != 0 ]; then [ $r = 1 ] && echo \"stdin-mismatch {n}\" >> {state}; exit 99; fi"
                );
            }
            for child in &attempt.children {
                // The pid is written before setsid: no window where it left the group unrecorded.
                let _ = writeln!(
                    s,
                    "  sh -c 'echo $$ >> {pids}; {}exec {}sleep {}'{} &",
                    if child.ignores_term {
                        "trap \"\" TERM; "
                    } else {
                        ""
                    },
                    if child.setsid { "setsid " } else { "" },
                    child.life_ms.map_or("30".to_owned(), seconds),
                    if child.holds_output {
                        ""
                    } else {
                        " >/dev/null 2>&1"
                    },
                );
            }
            let _ = writeln!(s, "  printf '#a{n}\\n'{check}");
            match attempt.marker {
                Some(Stream::Stdout) => {
                    let _ = writeln!(s, "  echo '{MARKER}'{check}");
                }
                Some(Stream::Stderr) => {
                    let _ = writeln!(s, "  echo '{MARKER}' >&2");
                }
                None => {}
            }
            if attempt.len > 0 {
                let _ = writeln!(s, "  head -c {} {pattern}{check}", attempt.len);
            }
            let _ = writeln!(s, "  echo \"done {n}\" >> {state}");
            if let Some(ms) = attempt.late_ms {
                // SIGPIPE ignored, so a write to a pipe nobody reads says so.
                let _ = writeln!(
                    s,
                    "  sh -c 'echo $$ >> {pids}; trap \"\" PIPE; sleep {}; t=$(date +%s%N); if printf \"@late{n}\\n\"; then echo \"late-written {n} $t\" >> {state}; else echo \"late-lost {n} $t\" >> {state}; fi' 2>/dev/null &",
                    seconds(ms)
                );
            }
            if attempt.hang {
                s.push_str("  exec sleep 30\n  ;;\n");
            } else if attempt.dies_of_a_signal() {
                // Death by a signal; 97 if the kill did not take.
                let _ = writeln!(s, "  kill -{} $$; exit 97\n  ;;", attempt.code - 128);
            } else {
                let _ = writeln!(s, "  exit {}\n  ;;", attempt.code);
            }
        }
        s.push_str("*) exit 98\n  ;;\nesac\n");
        s
    }

    /// The exit codes the run may end with, if stdout takes every byte: the
    /// last attempt's, or an earlier success, a fatal code, 124 where an
    /// attempt may time out (any attempt may, under load, with `--timeout`).
    pub fn possible_codes(&self) -> BTreeSet<i32> {
        let mut codes = BTreeSet::new();
        self.follow(1, &mut codes);
        codes
    }

    fn follow(&self, number: usize, codes: &mut BTreeSet<i32>) {
        let attempt = &self.attempts[number - 1];
        let mut endings = Vec::new();
        if !attempt.hang {
            endings.push(attempt.code);
        }
        if self.timeout_ms.is_some() {
            endings.push(124);
        }
        let last = number == self.attempts.len();
        for code in endings {
            let matched = self.retry_if && attempt.marker.is_some() && code != 124;
            match code {
                0 if !matched => {
                    codes.insert(0);
                }
                // Matching output turns a success into a retried exit code 1.
                0 => {
                    if last {
                        codes.insert(1);
                    } else {
                        self.follow(number + 1, codes);
                    }
                }
                3 if self.fatal_on_3 => {
                    codes.insert(3);
                }
                code if last => {
                    codes.insert(code);
                }
                _ => self.follow(number + 1, codes),
            }
        }
    }

    /// The bytes attempt `number` prints on stdout, if it runs to its end.
    pub fn output<'p>(&self, number: usize, pattern: &'p [u8]) -> Expected<'p> {
        let attempt = &self.attempts[number - 1];
        let mut head = format!("#a{number}\n").into_bytes();
        if attempt.marker == Some(Stream::Stdout) {
            head.extend_from_slice(MARKER.as_bytes());
            head.push(b'\n');
        }
        Expected {
            head,
            body: &pattern[..attempt.len],
        }
    }

    pub fn has_late_output(&self) -> bool {
        self.attempts.iter().any(|a| a.late_ms.is_some())
    }
}

fn ordinary_len(rng: &mut ChaCha8Rng) -> usize {
    match rng.random_range(0..20) {
        0 | 1 => 0,
        2..=8 => rng.random_range(1..=4096),
        9..=17 => rng.random_range(4097..=1 << 20),
        _ => rng.random_range((1 << 20) + 1..=8 << 20),
    }
}

fn over_limit(rng: &mut ChaCha8Rng) -> usize {
    SPILL_LIMIT + rng.random_range(1..=2 << 20)
}

pub fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "retry {}", self.args().join(" "))?;
        if let Input::Replay(len) = self.stdin {
            write!(f, " <{len} bytes")?;
        }
        if let Some((signal, ms)) = self.signal {
            write!(f, "; signal {signal} after {ms} ms")?;
        }
        if self.tmpdir != Tmp::Fresh {
            write!(f, "; TMPDIR {:?}", self.tmpdir)?;
        }
        if self.reader != Reader::Fast {
            write!(f, "; stdout {:?}", self.reader)?;
        }
        if self.sigchld_ignored {
            write!(f, "; SIGCHLD ignored by the caller")?;
        }
        if let Some(ms) = self.bystander_ms {
            write!(f, "; a bystander daemon adopted after {ms} ms")?;
        }
        if let Some(log) = self.log {
            write!(f, "; --log-file on a {log:?}")?;
        }
        if let Some(presets) = self.presets {
            write!(f, "; presets file {presets:?}")?;
        }
        write!(f, "{}", self.state)?;
        for (i, a) in self.attempts.iter().enumerate() {
            let ending = if a.hang {
                "hangs".to_owned()
            } else if a.code > 128 {
                format!("dies of signal {}", a.code - 128)
            } else {
                format!("exit {}", a.code)
            };
            write!(f, "\n      attempt {}: {} bytes, {ending}", i + 1, a.len)?;
            if let Some(stream) = a.marker {
                write!(f, ", marker on {stream:?}")?;
            }
            if a.ignores_term {
                write!(f, ", ignores TERM")?;
            }
            for c in &a.children {
                let life = c
                    .life_ms
                    .map_or("until stopped".to_owned(), |ms| format!("{ms} ms"));
                write!(
                    f,
                    ", child ({life}{}{}{})",
                    if c.setsid { ", setsid" } else { "" },
                    if c.ignores_term { ", ignores TERM" } else { "" },
                    if c.holds_output { ", holds output" } else { "" },
                )?;
            }
            if let Some(ms) = a.late_ms {
                write!(f, ", late output after {ms} ms")?;
            }
        }
        Ok(())
    }
}

/// What an attempt prints: a header (and marker line), then pattern bytes.
pub struct Expected<'p> {
    pub head: Vec<u8>,
    body: &'p [u8],
}

impl Expected<'_> {
    pub fn len(&self) -> usize {
        self.head.len() + self.body.len()
    }

    /// How many leading bytes of `bytes` this output explains.
    pub fn common_prefix(&self, bytes: &[u8]) -> usize {
        let head = common_prefix(&self.head, bytes);
        if head < self.head.len() {
            return head;
        }
        head + common_prefix(self.body, &bytes[head..])
    }
}

/// The length of the common prefix, a page at a time (a slice comparison
/// is a memcmp even in a debug build).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let mut at = 0;
    while at < len {
        let end = (at + 4096).min(len);
        if a[at..end] != b[at..end] {
            return at
                + a[at..end]
                    .iter()
                    .zip(&b[at..end])
                    .take_while(|(x, y)| x == y)
                    .count();
        }
        at = end;
    }
    len
}

/// The bytes attempts print after their header, in a file for `head -c`:
/// lines of 63 hex digits. No `#` (headers), `@` (late output) or `:` (so
/// no `retry:`), and no line matches the marker.
pub struct Pattern {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

impl Pattern {
    pub fn write(dir: &Path, len: usize) -> Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let bytes: Vec<u8> = (0..len)
            .map(|i| match i % 64 {
                63 => b'\n',
                col => HEX[(i / 64 + col * 7) % 16],
            })
            .collect();
        let path = dir.join("pattern");
        fs::write(&path, &bytes).expect("the pattern file");
        Pattern { path, bytes }
    }
}

mod tests {
    use super::*;

    fn attempt(code: i32) -> Attempt {
        Attempt {
            len: 0,
            marker: None,
            code,
            hang: false,
            ignores_term: false,
            children: Vec::new(),
            late_ms: None,
        }
    }

    fn scenario(attempts: Vec<Attempt>) -> Scenario {
        Scenario {
            attempts,
            ..Scenario::generate(0)
        }
    }

    #[test]
    fn possible_codes_follow_the_policy_and_timeouts() {
        let mut s = scenario(vec![attempt(75), attempt(0)]);
        (s.timeout_ms, s.retry_if, s.fatal_on_3) = (None, false, false);
        assert_eq!(s.possible_codes(), BTreeSet::from([0]));
        // A matching line makes the success a retried exit 1.
        (s.retry_if, s.attempts[1].marker) = (true, Some(Stream::Stderr));
        assert_eq!(s.possible_codes(), BTreeSet::from([1]));
        // Any attempt may time out; a hang only does.
        s.timeout_ms = Some(100);
        s.attempts[0].hang = true;
        assert_eq!(s.possible_codes(), BTreeSet::from([1, 124]));
        // A fatal code ends the run at once.
        let mut s = scenario(vec![attempt(3), attempt(0)]);
        (s.timeout_ms, s.retry_if, s.fatal_on_3) = (None, false, true);
        assert_eq!(s.possible_codes(), BTreeSet::from([3]));
    }
}
