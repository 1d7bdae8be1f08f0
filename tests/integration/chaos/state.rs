//! The state that outlives a run and the sinks that report it, under the
//! faults issue 40 found by hand: `--breaker` and `--budget` with their
//! record replaced by a FIFO, a device or another user's file; a breaker
//! record a clock far ahead wrote; `--metrics-dir` holding a FIFO or another
//! user's `.prom`, or open to other users; `--statsd` to a loopback port
//! nobody reads; traces to a loopback collector that accepts and never
//! answers, or answers and keeps the connection. Each comes with its promise
//! (`check`): no hang beyond a stated bound, the status unchanged (a circuit
//! open far ahead: 75, nothing run, its end brought in), one warning, no
//! secret, nothing another user can decide.
//!
//! Every server is on 127.0.0.1, lives with the run (`Live`) and is stopped
//! when it is dropped, however `execute` ends.

use std::fmt;
use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::run::{Exit, Observed};
use super::scenario::{LogFault, Scenario};
use crate::harness::retry;

/// The breaker's, the budget's and the job's name.
pub const NAME: &str = "chaos";
/// Sent in the trace export's headers, as an API key is: never on stderr.
const SECRET: &str = "chaos-secret-0d41d8cd98f00b204";
/// A last success (2100) another user forged in the job's `.prom`.
const FORGED: &str = "4102444800";
/// The export's wait once the caller's signal came (trace/export.rs).
const AFTER_SIGNAL: Duration = Duration::from_millis(200);
/// Its wait without `OTEL_EXPORTER_OTLP_TIMEOUT` (docs/behaviour.md, Traces).
const EXPORT_DEFAULT: Duration = Duration::from_secs(2);
/// What a bounded wait may overrun by on a loaded machine (retry's exit).
const SLACK: Duration = Duration::from_millis(1500);

/// The faults of one run (each independent; `None`: not asked for).
#[derive(Debug, Default)]
pub struct Faults {
    pub breaker: Option<Breaker>,
    /// `--budget` whose record is this.
    pub budget_record: Option<FileFault>,
    pub metrics: Option<Metrics>,
    pub statsd: Option<Statsd>,
    pub trace: Option<Trace>,
}

/// `--breaker chaos`, and what its record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breaker {
    /// Not a record: one warning, the run goes on without the breaker.
    Record(FileFault),
    /// An open circuit whose end a clock this far ahead wrote: the run is
    /// skipped (75), once, and the end brought in to the horizon.
    FarAhead(FarEnd),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FarEnd {
    /// A day ahead (a clock a day fast, reproduced).
    Day,
    /// The largest end a record holds (the year 2554).
    Max,
}

/// A state file that must never be opened, nor hang the open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFault {
    /// A FIFO nobody writes to.
    Fifo,
    /// `/dev/zero`: a device node as root, else a symlink to it.
    Device,
    /// Another user's (as root: nobody's; else one others may write).
    OtherUsers,
}

/// `--metrics-dir`, and what is wrong in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metrics {
    /// The job's `.prom` is a FIFO.
    Fifo,
    /// The job's `.prom` is another user's and says the job last succeeded
    /// in 2100.
    OtherUsers,
    /// The directory is writable by everyone.
    SharedDir,
}

/// `--statsd` to a loopback port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Statsd {
    /// A socket is bound there that never reads; else nothing is (refused).
    pub bound: bool,
    /// Named `localhost` (a lookup on a thread) rather than `127.0.0.1`.
    pub by_name: bool,
}

/// `OTEL_EXPORTER_OTLP_ENDPOINT` to a loopback collector of the run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trace {
    /// Answers 200 once the request came, and keeps the connection open;
    /// else accepts and never answers.
    pub answers: bool,
    /// `OTEL_EXPORTER_OTLP_TIMEOUT`; `None`: unset (2 s).
    pub timeout_ms: Option<u64>,
}

impl Trace {
    fn timeout(self) -> Duration {
        self.timeout_ms
            .map_or(EXPORT_DEFAULT, Duration::from_millis)
    }
}

impl Faults {
    /// Drawn after everything else, so that older seeds keep their runs.
    /// No breaker nor budget record where the run's budget already has a
    /// fault (its runtime directory is a file, or the store is a server).
    pub fn draw(rng: &mut ChaCha8Rng, budget_taken: bool) -> Self {
        use FileFault::*;
        let file = |rng: &mut ChaCha8Rng| [Fifo, Device, OtherUsers][rng.random_range(0..3)];
        let breaker = rng.random_bool(0.2).then(|| match rng.random_range(0..5) {
            0..=2 => Breaker::Record(file(rng)),
            3 => Breaker::FarAhead(FarEnd::Day),
            _ => Breaker::FarAhead(FarEnd::Max),
        });
        let budget_record = rng.random_bool(0.1).then(|| file(rng));
        let metrics = rng.random_bool(0.2).then(|| {
            [Metrics::Fifo, Metrics::OtherUsers, Metrics::SharedDir][rng.random_range(0..3)]
        });
        let statsd = rng.random_bool(0.15).then(|| Statsd {
            bound: rng.random_bool(0.7),
            by_name: rng.random_bool(0.3),
        });
        let trace = rng.random_bool(0.2).then(|| Trace {
            answers: rng.random_bool(0.3),
            timeout_ms: match rng.random_range(0..10) {
                0..=5 => Some(200),
                6..=8 => Some(500),
                _ => None,
            },
        });
        Faults {
            breaker: breaker.filter(|_| !budget_taken),
            budget_record: budget_record.filter(|_| !budget_taken),
            metrics,
            statsd,
            trace,
        }
    }

    /// Whether the circuit is open far ahead: nothing may run.
    pub fn skips(&self) -> bool {
        matches!(self.breaker, Some(Breaker::FarAhead(_)))
    }

    /// retry's arguments for these faults (where they are is in the
    /// environment `Live::start` sets: ports and directories are the run's).
    pub fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if self.breaker.is_some() {
            args.extend(["--breaker".into(), NAME.into()]);
        }
        if self.metrics.is_some() || self.statsd.is_some() {
            args.extend(["--job".into(), NAME.into()]);
        }
        args
    }
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(breaker) = self.breaker {
            write!(f, "; breaker record {breaker:?}")?;
        }
        if let Some(record) = self.budget_record {
            write!(f, "; budget record {record:?}")?;
        }
        if let Some(metrics) = self.metrics {
            write!(f, "; --metrics-dir {metrics:?}")?;
        }
        if let Some(statsd) = self.statsd {
            write!(f, "; {statsd:?}")?;
        }
        if let Some(trace) = self.trace {
            write!(f, "; {trace:?}")?;
        }
        Ok(())
    }
}

/// A run's faults in place: files made, servers listening.
pub struct Live {
    breaker_record: PathBuf,
    metrics_dir: PathBuf,
    udp: Option<UdpSocket>,
    collector: Option<Collector>,
}

/// What the faults left after the run.
#[derive(Default)]
pub struct Seen {
    /// When the collector accepted retry's first connection.
    pub accepted: Option<Instant>,
    /// Datagrams the socket nobody read holds.
    pub datagrams: usize,
    /// The job's `.prom`, if it is a regular file.
    pub prom: Option<String>,
    /// Temporary files of the job's left in the metrics directory.
    pub prom_temporaries: Vec<String>,
    /// The breaker's record, if it is a regular file.
    pub breaker_record: Option<Vec<u8>>,
}

impl Live {
    /// Makes the faults of `s` under `dir` and points `command` at them.
    pub fn start(s: &Scenario, dir: &Path, command: &mut Command) -> Self {
        let faults = &s.state;
        let runtime = dir.join("runtime");
        let store = runtime.join("retry");
        let breakers = store.join(".breakers");
        let breaker_record = breakers.join(NAME);
        let metrics_dir = dir.join("metrics");
        if faults.breaker.is_some() || faults.budget_record.is_some() {
            for owner_only in [&runtime, &store, &breakers] {
                fs::create_dir_all(owner_only).unwrap();
                fs::set_permissions(owner_only, fs::Permissions::from_mode(0o700)).unwrap();
            }
            command.env("XDG_RUNTIME_DIR", &runtime);
        }
        match faults.breaker {
            Some(Breaker::Record(fault)) => plant(&breaker_record, fault, "not a record\n"),
            Some(Breaker::FarAhead(end)) => open_far_ahead(&runtime, &breaker_record, end),
            None => {}
        }
        if let Some(fault) = faults.budget_record {
            plant(&store.join(NAME), fault, "not a record\n");
        }
        if let Some(fault) = faults.metrics {
            fs::create_dir_all(&metrics_dir).unwrap();
            fs::set_permissions(&metrics_dir, fs::Permissions::from_mode(0o755)).unwrap();
            let prom = metrics_dir.join(format!("retry_{NAME}.prom"));
            let forged = forged();
            match fault {
                Metrics::Fifo => plant(&prom, FileFault::Fifo, ""),
                Metrics::OtherUsers => plant(&prom, FileFault::OtherUsers, &forged),
                Metrics::SharedDir => {
                    fs::set_permissions(&metrics_dir, fs::Permissions::from_mode(0o777)).unwrap();
                }
            }
            command.env("RETRY_METRICS_DIR", &metrics_dir);
        }
        let udp = faults.statsd.map(|statsd| {
            let socket = UdpSocket::bind("127.0.0.1:0").expect("a loopback UDP port");
            let port = socket.local_addr().unwrap().port();
            let host = if statsd.by_name {
                "localhost"
            } else {
                "127.0.0.1"
            };
            command.env("RETRY_STATSD", format!("{host}:{port}"));
            socket.set_nonblocking(true).unwrap();
            socket
        });
        // Refused: the port freed again, so nothing is bound there.
        let udp = udp.filter(|_| faults.statsd.is_some_and(|s| s.bound));
        let collector = faults.trace.map(|trace| {
            let collector = Collector::start(trace.answers);
            command.env(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://127.0.0.1:{}", collector.port),
            );
            command.env(
                "OTEL_EXPORTER_OTLP_HEADERS",
                format!("authorization=Bearer%20{SECRET}"),
            );
            if let Some(ms) = trace.timeout_ms {
                command.env("OTEL_EXPORTER_OTLP_TIMEOUT", ms.to_string());
            }
            collector
        });
        Live {
            breaker_record,
            metrics_dir,
            udp,
            collector,
        }
    }

    /// What the run left; the servers stopped.
    pub fn finish(self) -> Seen {
        let mut seen = Seen::default();
        if let Some(collector) = self.collector {
            seen.accepted = collector.stop();
        }
        if let Some(socket) = &self.udp {
            let mut buf = [0u8; 2048];
            while socket.recv(&mut buf).is_ok() {
                seen.datagrams += 1;
            }
        }
        let prom = self.metrics_dir.join(format!("retry_{NAME}.prom"));
        if fs::symlink_metadata(&prom).is_ok_and(|m| m.is_file()) {
            seen.prom = fs::read_to_string(&prom).ok();
        }
        let temporary = format!(".retry_{NAME}.prom.");
        seen.prom_temporaries = fs::read_dir(&self.metrics_dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    // The lock file beside the .prom stays, by design.
                    .filter(|name| name.starts_with(&temporary) && !name.ends_with(".lock"))
                    .collect()
            })
            .unwrap_or_default();
        if fs::symlink_metadata(&self.breaker_record).is_ok_and(|m| m.is_file()) {
            seen.breaker_record = fs::read(&self.breaker_record).ok();
        }
        seen
    }
}

/// Another user's `.prom` for the job, whose last success is `FORGED`.
fn forged() -> String {
    format!(
        "# TYPE retry_last_success_timestamp_seconds gauge\n\
         retry_last_success_timestamp_seconds{{retry_job=\"{NAME}\"}} {FORGED}\n"
    )
}

/// `fault` at `path` (`text`: what another user's file says).
fn plant(path: &Path, fault: FileFault, text: &str) {
    use nix::sys::stat::{Mode, SFlag, makedev, mknod};
    let root = nix::unistd::geteuid().is_root();
    match fault {
        FileFault::Fifo => nix::unistd::mkfifo(path, Mode::S_IRUSR | Mode::S_IWUSR).unwrap(),
        FileFault::Device if root => {
            let zero = makedev(1, 5);
            mknod(path, SFlag::S_IFCHR, Mode::S_IRUSR | Mode::S_IWUSR, zero).unwrap();
        }
        FileFault::Device => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        FileFault::OtherUsers => {
            fs::write(path, text).unwrap();
            if root {
                std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
            } else {
                // Not root: one that others may write, refused as theirs is.
                fs::set_permissions(path, fs::Permissions::from_mode(0o646)).unwrap();
            }
        }
    }
}

/// Opens the circuit as a run does (`--breaker-after 1`, one failure), then
/// moves its end far ahead, written by the library's own encoder.
fn open_far_ahead(runtime: &Path, record: &Path, end: FarEnd) {
    let opened = retry(&["--breaker", NAME, "--breaker-after", "1", "-n", "1"])
        .args(&["sh", "-c", "exit 1"])
        .env("XDG_RUNTIME_DIR", runtime)
        .into_command()
        .output()
        .expect("retry opens the circuit");
    assert_eq!(opened.status.code(), Some(1), "{opened:?}");
    let until = match end {
        FarEnd::Day => now_ns() + 86_400_000_000_000,
        FarEnd::Max => u64::MAX,
    };
    let bytes = fs::read(record).expect("the circuit's record");
    let far = retry_jitter::fuzzing::breaker_record_ending_at(&bytes, until)
        .unwrap_or_else(|| panic!("not an open circuit: {:?}", String::from_utf8_lossy(&bytes)));
    fs::write(record, far).unwrap();
}

fn now_ns() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    u64::try_from(since.as_nanos()).unwrap()
}

/// An OTLP collector on 127.0.0.1 that accepts, reads, and never answers
/// (or answers 200 and keeps the connection open); its connections are
/// held until `stop`, or its drop.
struct Collector {
    port: u16,
    stop: Arc<AtomicBool>,
    accepted: Arc<Mutex<Option<Instant>>>,
    thread: Option<JoinHandle<()>>,
}

impl Collector {
    fn start(answers: bool) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(Mutex::new(None));
        let thread = std::thread::spawn({
            let (stop, accepted) = (Arc::clone(&stop), Arc::clone(&accepted));
            move || serve(&listener, answers, &stop, &accepted)
        });
        Collector {
            port,
            stop,
            accepted,
            thread: Some(thread),
        }
    }

    /// When the first connection was accepted; the collector stopped.
    fn stop(mut self) -> Option<Instant> {
        self.halt();
        *self.accepted.lock().unwrap()
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The collector's loop: bounded by the stop flag, and by a minute (past
/// the watchdog) whatever happens; connections closed when it ends.
fn serve(
    listener: &TcpListener,
    answers: bool,
    stop: &AtomicBool,
    accepted: &Mutex<Option<Instant>>,
) {
    let give_up = Instant::now() + Duration::from_secs(60);
    let mut held: Vec<(TcpStream, bool)> = Vec::new();
    // A last accept after the stop: a connection still in the backlog counts.
    let mut last = false;
    while Instant::now() < give_up {
        last |= stop.load(Ordering::SeqCst);
        match listener.accept() {
            Ok((stream, _)) => {
                accepted.lock().unwrap().get_or_insert_with(Instant::now);
                stream.set_nonblocking(true).unwrap();
                held.push((stream, false));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(_) => {}
        }
        for (stream, answered) in &mut held {
            // Read whatever came; answer once the request's head did.
            let mut buf = [0u8; 16 << 10];
            if let Ok(n) = stream.read(&mut buf)
                && n > 0
                && answers
                && !*answered
            {
                *answered = true;
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            }
        }
        if last {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The faults' promises.
pub fn check(s: &Scenario, o: &Observed, violation: &mut dyn FnMut(String)) {
    let faults = &s.state;
    let seen = &o.seen;
    let stderr = String::from_utf8_lossy(&o.stderr);
    let on_stderr = s.log.is_none();
    let ran = !o.state.started.is_empty();
    let ended_by_code = matches!(o.exit, Exit::Code(_));
    if stderr.contains(SECRET) {
        violation("the trace export's header (a secret) is on stderr".into());
    }
    // A warning said at most once, and once where `must` (its words are
    // on stderr unless they went to a --log-file).
    let once = |violation: &mut dyn FnMut(String), what: &str, needle: &str, must: bool| {
        let said = stderr.matches(needle).count();
        if said > 1 || (must && on_stderr && said != 1) {
            violation(format!("{what} was said {said} times, not once"));
        }
    };
    match faults.breaker {
        Some(Breaker::Record(_)) => {
            // Asked before the first attempt: said once by a run that ran.
            once(
                violation,
                "the unusable breaker record",
                "running without the breaker",
                ran,
            );
        }
        Some(Breaker::FarAhead(_)) => {
            // (Replayed input that cannot be kept may end the run first.)
            let kept = s.tmpdir == super::scenario::Tmp::Fresh || !s.spills();
            if ran || (ended_by_code && o.exit != Exit::Code(75) && kept) {
                violation(format!(
                    "a circuit open far ahead let the command run: {}, attempts {:?}",
                    o.exit, o.state.started
                ));
            }
            let skipped = o.exit == Exit::Code(75);
            once(violation, "the far-ahead end", "lay further ahead", skipped);
            if skipped {
                let now = now_ns();
                match seen
                    .breaker_record
                    .as_deref()
                    .map(|bytes| retry_jitter::fuzzing::breaker_record(bytes, now))
                {
                    Some(Some(read)) if !read.status.contains("lay further ahead") => {}
                    Some(Some(read)) => violation(format!(
                        "the far-ahead end was not brought in: {:?}",
                        read.status
                    )),
                    _ => violation("the breaker's record is gone or no record".into()),
                }
            }
        }
        None => {}
    }
    if let Some(metrics) = faults.metrics {
        // (A run that died of a signal before its handlers leaves the
        // planted file as it was.)
        let planted = seen.prom.as_deref() == Some(forged().as_str());
        if !planted
            && seen
                .prom
                .as_deref()
                .is_some_and(|text| text.contains(FORGED))
        {
            violation("another user's forged last success (2100) was carried over".into());
        }
        if !seen.prom_temporaries.is_empty() {
            violation(format!(
                "the metrics directory holds {:?} after the run",
                seen.prom_temporaries
            ));
        }
        if ended_by_code && !o.hung && (seen.prom.is_none() || planted) {
            violation("the run ended, but the job's .prom was not replaced".into());
        }
        // The directory is said before the first attempt; an old file
        // when a run that did not succeed replaces it.
        let must = match metrics {
            Metrics::SharedDir => ran,
            _ => matches!(o.exit, Exit::Code(code) if code != 0) && !o.signal_sent,
        };
        once(violation, "the metrics fault", "--metrics-dir", must);
    }
    if let Some(statsd) = faults.statsd {
        if stderr.contains("statsd") {
            violation("--statsd, fire and forget, cost a message".into());
        }
        // An address: its datagrams leave at once, at least the run's.
        if statsd.bound && !statsd.by_name && ended_by_code && !o.signal_sent && seen.datagrams == 0
        {
            violation("--statsd to an address sent no datagram".into());
        }
    }
    if let Some(trace) = faults.trace {
        match seen.accepted {
            Some(accepted) => {
                let cut = o.signal_at.is_some_and(|at| at <= accepted);
                let bound = if cut {
                    AFTER_SIGNAL.min(trace.timeout())
                } else {
                    trace.timeout()
                };
                let waited = o.ended.saturating_duration_since(accepted);
                if waited > bound + SLACK {
                    violation(format!(
                        "the trace export took {} ms, past its bound of {} ms{}",
                        waited.as_millis(),
                        bound.as_millis(),
                        if cut { " (cut by the signal)" } else { "" }
                    ));
                }
                let must = !trace.answers && ended_by_code;
                once(violation, "the export's failure", "traces not sent", must);
                // An answer that came well within 2 s was an answer, though
                // the connection stays open (issue 40: a false "not sent").
                let answered = trace.answers && trace.timeout_ms.is_none() && !o.signal_sent;
                if answered && stderr.contains("traces not sent") {
                    violation("a collector that answered 200 was said not to".into());
                }
            }
            None if ended_by_code && !o.signal_sent && s.log != Some(LogFault::Fifo) => {
                violation("the run ended, but its traces were never sent".into());
            }
            None => {}
        }
    }
}
