//! Everything that may stand between the command and retry's own stdio:
//! `--stdin null|replay`, `--stdout-once`, the output conditions
//! (`--retry-if-output`, `--stop-if-output`, `--throttle-if-output`,
//! `--delay-from-output`) and the output's tail kept for `--on-exit-stdin
//! tail`. Without those flags nothing here exists and the command inherits
//! retry's stdio: no pipe, no thread.
//!
//! What cannot be carried faithfully (stdin that cannot be kept whole,
//! stdout that cannot be held back or written) is never passed off as if
//! it had been: it is a `failure` that ends the run with exit status 125.

mod failure;
mod lines;
mod output;
mod replay;
mod spool;
mod tail;
mod watch;

use std::io::{self, PipeReader, PipeWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::os_error::describe;
pub use lines::Matchers;
pub use output::take_open_line;
pub use spool::Spool;

use crate::platform::spawn::{Child, Io, Spawn};
use crate::size::Size;
use failure::Failure;
use lines::Patterns;
use output::{OwnStdio, Sink, Target};
use replay::Replay;
use watch::{Collected, Peek, Pump};

/// Bytes kept in memory before a spool spills to a temporary file.
const MEMORY_LIMIT: usize = 64 << 20;

/// `--stdin-limit` unless given: room for the usual payloads (a dump, an
/// archive, a request body) while an endless or mistaken stdin (`yes`, a
/// log followed forever) fails within seconds instead of filling TMPDIR,
/// often a tmpfs in memory and on CI runners only a few GiB.
pub const DEFAULT_STDIN_LIMIT: &str = "1GiB";

/// How long the end of an attempt waits for its output pipes to close: a
/// background process it left behind may hold them open indefinitely.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// How long the end of an attempt waits for the pipes still held open by a
/// background process to be handed to a `cat`.
const HAND_OFF_WAIT: Duration = Duration::from_secs(1);

/// What `--retry-if-output`, `--stop-if-output`, `--throttle-if-output`
/// and `--delay-from-output` found in an attempt's output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputSeen {
    pub retry_if: bool,
    pub stop_if: bool,
    /// The first line `--stop-if-output` matched, quoted (`lines::quoted`).
    pub stop_line: Option<Box<str>>,
    /// `--throttle-if-output` (or a preset's) matched: the server asked to
    /// slow down.
    pub throttle: bool,
    /// The attempt printed a line (or part of one), on either stream.
    pub printed: bool,
    /// A preset's `transient-if-output` matched: the program met a
    /// transient failure and retried it itself, so its last words (pip's
    /// "No matching distribution") are a consequence, not the cause.
    pub transient: bool,
    /// The server's hint on its last line that had one (stdout's before stderr's).
    pub hint: Option<crate::run::hint::Hint>,
    /// retry's stdout reader went away (EPIPE) while this attempt's output
    /// was passed on: some of it was lost, and later output would be too.
    pub stdout_closed: bool,
}

/// `--stdin`: what each attempt reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StdinMode {
    /// retry's own stdin.
    Inherit,
    /// The same bytes, kept from the first read.
    Replay,
    /// `/dev/null`.
    Null,
}

#[derive(Debug)]
pub struct Settings {
    pub stdin: StdinMode,
    /// `--stdin-limit`: the most bytes of stdin `--stdin replay` keeps.
    pub stdin_limit: Size,
    pub stdout_once: bool,
    pub matchers: Matchers,
    /// Keep the last attempt's output tail (`--on-exit-stdin tail`).
    pub tail: bool,
}

pub struct Pipes {
    stdin: StdinMode,
    stdout_once: bool,
    /// The patterns of the attempt in progress (`choose`).
    patterns: Arc<Patterns>,
    /// Each entry's patterns (COMMAND's first), when an `--alternate` is
    /// judged by rules of its own; else empty.
    by_entry: Vec<Arc<Patterns>>,
    replay: Option<Replay>,
    running: Option<Running>,
    failure: Arc<Failure>,
    /// The last held stdout, written and given back (`recycle`): the next
    /// attempt holds its output in the same room.
    spare: Option<Spool>,
    /// The last attempt's output tail, for `--on-exit-stdin tail`.
    tail: Option<tail::Shared>,
}

/// The output streams of the attempt in progress.
struct Running {
    streams: Vec<Stream>,
    /// The index of each stream whose reader stopped.
    ended: mpsc::Receiver<usize>,
}

struct Stream {
    collected: Arc<Mutex<Collected>>,
    /// A copy of the read end, to see whether any writer still holds it.
    peek: Peek,
    /// Dropped to tell the reader the attempt is over: hand the pipe off.
    over: Option<PipeWriter>,
    open: bool,
}

impl Pipes {
    /// `None` when the command can simply inherit retry's stdio;
    /// `alternates`: each `--alternate`'s own output rules, if it has any
    /// (`None`: COMMAND's).
    pub fn new(settings: &Settings, alternates: &[Option<&Matchers>]) -> Option<Self> {
        let needed = settings.stdin != StdinMode::Inherit
            || settings.stdout_once
            || settings.matchers.any()
            || alternates.iter().flatten().any(|matchers| matchers.any())
            || settings.tail;
        let failure = Arc::new(Failure::default());
        let patterns = Arc::new(Patterns::new(&settings.matchers));
        let by_entry = match alternates.iter().any(Option::is_some) {
            true => std::iter::once(Arc::clone(&patterns))
                .chain(alternates.iter().map(|own| match own {
                    Some(matchers) => Arc::new(Patterns::new(matchers)),
                    None => Arc::clone(&patterns),
                }))
                .collect(),
            false => Vec::new(),
        };
        needed.then(|| Pipes {
            stdin: settings.stdin,
            stdout_once: settings.stdout_once,
            patterns,
            by_entry,
            // Recording starts now, so the first attempt streams rather than waits.
            replay: (settings.stdin == StdinMode::Replay)
                .then(|| Replay::start(MEMORY_LIMIT, settings.stdin_limit, Arc::clone(&failure))),
            running: None,
            spare: None,
            tail: settings
                .tail
                .then(|| tail::Tail::shared(crate::run::hooks::TAIL_BYTES)),
            failure,
        })
    }

    /// The last attempt's output, its last bytes (`--on-exit-stdin tail`);
    /// empty without one.
    pub fn tail(&self) -> Vec<u8> {
        self.tail.as_ref().map_or_else(Vec::new, |tail| {
            tail.lock().unwrap_or_else(|e| e.into_inner()).to_vec()
        })
    }

    /// The output rules of the attempt about to start: those of entry
    /// `entry` (0 COMMAND, `i` its `i`-th `--alternate`).
    pub fn choose(&mut self, entry: usize) {
        if let Some(patterns) = self.by_entry.get(entry) {
            self.patterns = Arc::clone(patterns);
        }
    }

    /// Whether a hook must keep off retry's stdin (the recorder reads it).
    pub fn owns_stdin(&self) -> bool {
        self.stdin == StdinMode::Replay
    }

    /// Gives the pipes' threads a way to wake the supervisor when they fail
    /// (see `failure`). Called at once if a failure came first.
    pub fn set_waker(&mut self, wake: Arc<dyn Fn() + Send + Sync>) {
        self.failure.set_waker(wake);
    }

    /// A failure that makes the running attempt's result untrustworthy, as
    /// one line without the `retry: ` prefix. Once set, it stays set: the
    /// run must give up (exit 125).
    pub fn failure(&self) -> Option<String> {
        self.failure.message()
    }

    /// Sets the attempt's stdio: a pipe only where retry has work to do.
    /// A replayed stdin that this attempt could not get whole is a failure
    /// (see `failure`), found before it starts.
    pub fn prepare(&self, command: &mut Spawn) {
        if let Some(replay) = &self.replay {
            replay.before_attempt();
        }
        command.stdin = match self.stdin {
            StdinMode::Inherit => Io::Inherit,
            StdinMode::Null => Io::Null,
            StdinMode::Replay => Io::Pipe,
        };
        let tail = self.tail.is_some();
        if self.stdout_once || self.patterns.any() || tail {
            command.stdout = Io::Pipe;
        }
        if self.patterns.any() || tail {
            command.stderr = Io::Pipe;
        }
    }

    /// Takes back an attempt's held stdout once it is written or dropped,
    /// emptied, for the next attempt to hold its own in.
    pub fn recycle(&mut self, mut spool: Spool) {
        spool.clear();
        self.spare = Some(spool);
    }

    /// Starts feeding and reading the pipes of a just-spawned attempt.
    pub fn attach(&mut self, child: &mut Child) {
        if let (Some(replay), Some(stdin)) = (&self.replay, child.stdin.take()) {
            replay.feed(stdin);
        }
        if let Some(tail) = &self.tail {
            tail.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
        let (done, ended) = mpsc::channel();
        let sink: Arc<dyn Sink> = Arc::new(OwnStdio::new());
        let mut streams = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            let spare = self.spare.take();
            let held = self
                .stdout_once
                .then(|| spare.unwrap_or_else(|| Spool::new(MEMORY_LIMIT)));
            streams.push(self.read(stdout, Target::Stdout, held, &sink, (done.clone(), 0)));
        }
        if let Some(stderr) = child.stderr.take() {
            let index = streams.len();
            streams.push(self.read(stderr, Target::Stderr, None, &sink, (done, index)));
        }
        self.running = Some(Running { streams, ended });
    }

    fn read(
        &self,
        pipe: PipeReader,
        target: Target,
        held: Option<Spool>,
        sink: &Arc<dyn Sink>,
        (done, index): (mpsc::Sender<usize>, usize),
    ) -> Stream {
        let collected = Arc::new(Mutex::new(Collected::new(target, held)));
        let mut pump = Pump::new(
            Arc::clone(&self.patterns),
            Arc::clone(&collected),
            Arc::clone(&self.failure),
            Arc::clone(sink),
        );
        let (over, over_writer) = io::pipe().map_or((None, None), |(r, w)| (Some(r), Some(w)));
        pump.over = over;
        pump.tail.clone_from(&self.tail);
        let peek = Arc::new(Mutex::new(pipe.try_clone().ok()));
        pump.peek = Arc::clone(&peek);
        let spawned = std::thread::Builder::new().spawn(move || {
            pump.run(pipe);
            let _ = done.send(index);
        });
        // No thread (`ulimit -v` reached, or the process limit): nothing
        // reads the stream, so the attempt is stopped, as for any output
        // retry cannot carry.
        if let Err(error) = &spawned {
            self.failure.report(format!(
                "cannot read the command's {}: no thread could be started for it: {}; \
                 the attempt was stopped",
                target.name(),
                describe(error)
            ));
        }
        Stream {
            collected,
            peek,
            over: over_writer,
            open: spawned.is_ok(),
        }
    }

    /// After the attempt ended: waits for its output to drain and returns
    /// what the conditions saw and the held-back stdout (`None` after a
    /// failure: an untrustworthy attempt's output is dropped, not released).
    ///
    /// A stream the command's processes have all closed is read to its
    /// end, however slow the reader downstream: its every line counts. One
    /// still held open a grace after the command exited belongs to a
    /// background process: it is handed to a `cat` that copies the rest (to
    /// stderr, if it was held back) for as long as that process writes.
    pub fn finish(&mut self) -> (OutputSeen, Option<Spool>) {
        let Some(mut running) = self.running.take() else {
            return (OutputSeen::default(), None);
        };
        let until = Instant::now() + DRAIN_GRACE;
        while running.streams.iter().any(|s| s.open) {
            let left = until.saturating_duration_since(Instant::now());
            match running.ended.recv_timeout(left) {
                Ok(index) => running.streams[index].open = false,
                Err(_) => break,
            }
        }
        // Only draining: its writers are gone, so its end is near.
        while running.streams.iter().any(|s| s.open && !held_open(s)) {
            match running.ended.recv() {
                Ok(index) => running.streams[index].open = false,
                Err(_) => break,
            }
        }
        let mut seen = OutputSeen::default();
        let mut held = None;
        for stream in &mut running.streams {
            let mut state = stream.collected.lock().unwrap_or_else(|e| e.into_inner());
            seen.retry_if |= state.seen.retry_if;
            seen.stop_if |= state.seen.stop_if;
            seen.throttle |= state.seen.throttle;
            seen.transient |= state.seen.transient;
            seen.printed |= state.seen.printed;
            if seen.stop_line.is_none() {
                seen.stop_line = state.seen.stop_line.take();
            }
            seen.stdout_closed |= state.stdout_closed;
            if seen.hint.is_none() {
                seen.hint = state.seen.hint.take();
            }
            if let Some(spool) = state.held.take() {
                held = Some(spool);
                // Whatever a lingering process still writes is not this attempt's result.
                state.target = Target::Stderr;
            }
            drop(state);
            if stream.open {
                stream.over = None;
            }
        }
        let until = Instant::now() + HAND_OFF_WAIT;
        while running.streams.iter().any(|s| s.open) {
            let left = until.saturating_duration_since(Instant::now());
            match running.ended.recv_timeout(left) {
                Ok(index) => running.streams[index].open = false,
                Err(_) => break,
            }
        }
        if self.failure().is_some() {
            held = None;
        }
        (seen, held)
    }
}

/// Whether some process still holds the stream's pipe open for writing.
fn held_open(stream: &Stream) -> bool {
    let peek = stream.peek.lock().unwrap_or_else(|e| e.into_inner());
    let Some(peek) = &*peek else {
        return true;
    };
    !crate::platform::ready::writers_gone(peek)
}

/// Why held-back stdout could not be written.
#[derive(Debug, PartialEq, Eq)]
pub enum ReleaseError {
    /// stdout's reader went away (EPIPE).
    BrokenPipe,
    /// Any other error, as one line.
    Other(String),
}

/// How far a release got, shared with the thread that writes it: a signal
/// sets `abandon`, and what was not yet `written` is dropped.
#[derive(Debug, Default)]
pub struct Progress {
    pub written: AtomicU64,
    pub abandon: AtomicBool,
}

/// Writes an attempt's held-back stdout to stdout (the attempt that ended
/// the run) or to stderr (any other), so none of it is lost, in pieces,
/// stopping between two once `progress.abandon` is set. Errors on stdout
/// are reported: that output is the run's result. On stderr, as for
/// retry's own messages, an error or a stall after a signal ends it.
pub fn release(held: &Spool, to_stdout: bool, progress: &Progress) -> Result<(), ReleaseError> {
    let cannot_write = |error: io::Error| match error.kind() {
        io::ErrorKind::BrokenPipe => ReleaseError::BrokenPipe,
        _ => ReleaseError::Other(format!(
            "cannot write the command's output to stdout: {}",
            describe(&error)
        )),
    };
    // Unbuffered, so every error is seen here and no byte waits in a buffer.
    let mut out = match to_stdout {
        true => Some(crate::platform::dup_stdout().map_err(cannot_write)?),
        false => None,
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut offset = 0;
    while !progress.abandon.load(Ordering::Relaxed) {
        let n = held.read_at(offset, &mut buf).map_err(|error| {
            ReleaseError::Other(format!(
                "--stdout-once: cannot read the held-back output: {}",
                describe(&error)
            ))
        })?;
        if n == 0 {
            break;
        }
        let written = match &mut out {
            Some(out) => out.write_all(&buf[..n]).map(|()| n).map_err(cannot_write)?,
            None => {
                let (written, _) = crate::platform::write_stderr(&buf[..n]);
                output::wrote_to_stderr(&buf[..written]);
                written
            }
        };
        offset += written as u64;
        progress.written.store(offset, Ordering::Relaxed);
        if written < n {
            break; // stderr took no more
        }
    }
    Ok(())
}
