//! `--stdin replay`: retry's stdin is read once, in the background, into a
//! spool; every attempt is fed the same bytes. The first attempt starts at
//! once and is fed as the bytes arrive (a producer upstream may be slow);
//! later attempts get what was recorded, then whatever still comes.
//!
//! Input past what can be kept (`--stdin-limit`, no room for the spill
//! file) still reaches the attempt being fed as it arrives: the first
//! attempt to read up to the end of what was kept gets the rest straight
//! from stdin, so a command that succeeds on the first try never notices
//! the limit. Only a retry that would need that rest cannot be fed it: the
//! run then fails (125) before it starts (`before_attempt`).
//!
//! Input that cannot be had at all (unreadable stdin) is never passed off
//! as complete: the failure is reported, and no attempt's stdin is closed
//! from then on. A closed pipe is the one thing a command takes for "that
//! was all", so the pipes stay open, undelivered, until the supervisor has
//! stopped the attempt and retry exits.

use std::io::{self, PipeWriter, Read, Write};
use std::sync::{Arc, Condvar, Mutex};

use super::failure::{Failure, temp_dir_note};
use super::spool::Spool;
use crate::os_error::describe;
use crate::size::Size;

struct State {
    spool: Spool,
    /// Stdin has ended: no more bytes will come, and they were all kept.
    done: bool,
    /// The recording failed: what was kept is not the whole input.
    failed: bool,
    /// Why stdin stopped being kept (the limit, the spill file): what
    /// comes after the spool goes only to the live feeder.
    overflow: Option<String>,
    /// Input past the spool, on its way from the recorder to the live feeder.
    live: Vec<u8>,
    /// A feeder has taken input past the spool: no later one can have it.
    live_taken: bool,
    /// The live feeder is gone (its attempt closed stdin): stop reading.
    live_gone: bool,
    /// Attempts' stdin pipes held open after a failure, so that no command
    /// (nor a background process it left) reads an end that is not one.
    withheld: Vec<PipeWriter>,
}

struct Shared {
    state: Mutex<State>,
    grown: Condvar,
    /// `--stdin-limit`: the most bytes kept.
    limit: Size,
    failure: Arc<Failure>,
}

#[derive(Clone)]
pub struct Replay {
    shared: Arc<Shared>,
}

const CHUNK: usize = 64 * 1024;

/// The end of every failure message: what the failure means for the command.
const CONSEQUENCE: &str = "the attempt was stopped so it never sees a truncated input";

impl Replay {
    fn new(spool: Spool, limit: Size, failure: Arc<Failure>) -> Self {
        Replay {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    spool,
                    done: false,
                    failed: false,
                    overflow: None,
                    live: Vec::new(),
                    live_taken: false,
                    live_gone: false,
                    withheld: Vec::new(),
                }),
                grown: Condvar::new(),
                limit,
                failure,
            }),
        }
    }

    /// Starts recording retry's stdin, keeping up to `limit` bytes.
    pub fn start(memory_limit: usize, limit: Size, failure: Arc<Failure>) -> Self {
        let replay = Replay::new(Spool::new(memory_limit), limit, failure);
        let recorder = replay.clone();
        std::thread::spawn(move || recorder.record(io::stdin().lock()));
        replay
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads `input` to its end into the spool, or until it cannot be kept:
    /// then the rest goes to the live feeder only (`stream_live`).
    fn record(&self, mut input: impl Read) {
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = match read(&mut input, &mut buf) {
                Ok(0) => return self.end(),
                Ok(n) => n,
                Err(why) => return self.fail(&why),
            };
            let mut state = self.lock();
            let overflow = if state.spool.len() + n as u64 > self.shared.limit.bytes() {
                Some(format!(
                    "stdin is longer than --stdin-limit {}",
                    self.shared.limit
                ))
            } else {
                let kept = state.spool.append(&buf[..n]);
                kept.err()
                    .map(|e| format!("cannot keep stdin: {} ({})", describe(&e), temp_dir_note()))
            };
            if let Some(why) = overflow {
                state.overflow = Some(why);
                state.live.extend_from_slice(&buf[..n]);
                self.shared.grown.notify_all();
                drop(state);
                return self.stream_live(input, buf);
            }
            self.shared.grown.notify_all();
        }
    }

    /// Past what can be kept: each chunk is handed to the live feeder, the
    /// next read only once it has taken the last, so nothing piles up in
    /// memory. Reading stops when the live feeder is gone.
    fn stream_live(&self, mut input: impl Read, mut buf: Vec<u8>) {
        loop {
            let mut state = self.lock();
            while !state.live.is_empty() && !state.live_gone {
                state = self.wait(state);
            }
            if state.live_gone {
                return;
            }
            drop(state);
            let n = match read(&mut input, &mut buf) {
                Ok(0) => return self.end(),
                Ok(n) => n,
                Err(why) => return self.fail(&why),
            };
            self.lock().live.extend_from_slice(&buf[..n]);
            self.shared.grown.notify_all();
        }
    }

    /// Stdin has ended, every byte passed on.
    fn end(&self) {
        self.lock().done = true;
        self.shared.grown.notify_all();
    }

    fn wait<'a>(
        &self,
        state: std::sync::MutexGuard<'a, State>,
    ) -> std::sync::MutexGuard<'a, State> {
        self.shared
            .grown
            .wait(state)
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Before an attempt is fed: if an earlier one took input past what was
    /// kept, this one cannot have it whole, and the run fails instead.
    pub fn before_attempt(&self) {
        let state = self.lock();
        if !state.live_taken {
            return;
        }
        let why = state.overflow.clone().unwrap_or_default();
        drop(state);
        self.shared.failure.report(format!(
            "--stdin replay: {why}: an earlier attempt read it as it came, but a retry would \
             get only the part that was kept, so none is run with a truncated input"
        ));
    }

    /// Marks the input as incomplete for every feeder, then reports it.
    fn fail(&self, why: &str) {
        self.lock().failed = true;
        self.shared.grown.notify_all();
        self.shared
            .failure
            .report(format!("--stdin replay: {why}; {CONSEQUENCE}"));
    }

    /// Feeds one attempt's stdin in the background, from the first byte.
    /// Where no thread can be started (`ulimit -v` reached, or the process
    /// limit), the pipe is kept open, never closed on a truncated input,
    /// and the attempt is stopped.
    pub fn feed(&self, pipe: PipeWriter) {
        let replay = self.clone();
        // The pipe is handed over once the thread runs.
        let (give, take) = std::sync::mpsc::channel::<PipeWriter>();
        let spawned = std::thread::Builder::new().spawn(move || {
            let Ok(pipe) = take.recv() else { return };
            if let Some(pipe) = replay.feed_all(pipe) {
                replay.lock().withheld.push(pipe);
            }
        });
        match spawned {
            Ok(_) => {
                let _ = give.send(pipe);
            }
            Err(error) => {
                self.lock().withheld.push(pipe);
                self.fail(&format!(
                    "no thread could be started to feed the attempt: {}",
                    describe(&error)
                ));
            }
        }
    }

    /// Writes the input to `pipe` as it is recorded. Returns the pipe when
    /// it must stay open (the input is incomplete); dropping it is EOF.
    fn feed_all<W: Write>(&self, mut pipe: W) -> Option<W> {
        let mut buf = vec![0u8; CHUNK];
        let mut offset = 0u64;
        let mut live = false;
        loop {
            let n = {
                let mut state = self.lock();
                while !state.failed
                    && !state.done
                    && state.overflow.is_none()
                    && offset == state.spool.len()
                {
                    state = self.wait(state);
                }
                if state.failed {
                    return Some(pipe);
                }
                if state.overflow.is_some() && offset == state.spool.len() {
                    // The end of what was kept: the rest only as it comes,
                    // and only to the first feeder here.
                    if state.live_taken && !live {
                        return Some(pipe);
                    }
                    state.live_taken = true;
                    live = true;
                    while state.live.is_empty() && !state.done && !state.failed {
                        state = self.wait(state);
                    }
                    if state.failed {
                        return Some(pipe);
                    }
                    let chunk = std::mem::take(&mut state.live);
                    self.shared.grown.notify_all();
                    drop(state);
                    if chunk.is_empty() {
                        return None; // stdin ended: dropping the pipe is EOF
                    }
                    if pipe.write_all(&chunk).is_err() {
                        self.lock().live_gone = true;
                        self.shared.grown.notify_all();
                        return None;
                    }
                    continue;
                }
                match state.spool.read_at(offset, &mut buf) {
                    Ok(0) => return None, // all fed: dropping the pipe is EOF
                    Ok(n) => n,
                    Err(e) => {
                        drop(state);
                        self.fail(&format!("cannot read kept stdin back: {}", describe(&e)));
                        return Some(pipe);
                    }
                }
            };
            // EPIPE: the attempt closed its stdin or ended; nothing more to do.
            if pipe.write_all(&buf[..n]).is_err() {
                return None;
            }
            offset += n as u64;
        }
    }
}

/// One read, retried when a signal interrupts it; an error as a message.
fn read(input: &mut impl Read, buf: &mut [u8]) -> Result<usize, String> {
    loop {
        match input.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot read stdin: {}", describe(&e))),
            Ok(n) => return Ok(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(spool: Spool, limit: u64) -> (Replay, Arc<Failure>) {
        let failure = Arc::new(Failure::default());
        let replay = Replay::new(spool, Size::from_bytes(limit), Arc::clone(&failure));
        (replay, failure)
    }

    fn recorded(input: &[u8], memory_limit: usize) -> Replay {
        let (replay, _) = replay(Spool::new(memory_limit), u64::MAX);
        replay.record(input);
        replay
    }

    #[test]
    fn every_feed_gets_every_byte() {
        let input: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let replay = recorded(&input, 1000);
        for _ in 0..3 {
            let mut fed = Vec::new();
            assert!(
                replay.feed_all(&mut fed).is_none(),
                "the pipe was kept open"
            );
            assert_eq!(fed, input);
        }
    }

    /// A reader that fails after its bytes.
    struct Failing(&'static [u8]);

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::from_raw_os_error(21)); // EISDIR
            }
            let n = self.0.len().min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    #[cfg(unix)] // Unix paths, programs or errno wording
    fn a_read_error_fails_the_run_and_never_ends_an_attempts_input() {
        let (replay, failure) = replay(Spool::new(10), u64::MAX);
        replay.record(Failing(b"kept"));
        assert_eq!(
            failure.message().as_deref(),
            Some(
                "--stdin replay: cannot read stdin: Is a directory; the attempt was stopped so it never sees a truncated input"
            )
        );
        let mut fed = Vec::new();
        assert!(replay.feed_all(&mut fed).is_some(), "the pipe was closed");
    }

    /// Records `input` in a thread while one attempt is fed it live, as
    /// the first attempt is; returns what it got and whether it got an end.
    fn fed_live(replay: &Replay, input: &'static [u8]) -> (Vec<u8>, bool) {
        let recorder = replay.clone();
        let recording = std::thread::spawn(move || recorder.record(input));
        let mut fed = Vec::new();
        let ended = replay.feed_all(&mut fed).is_none();
        recording.join().unwrap();
        (fed, ended)
    }

    #[test]
    #[cfg(unix)] // Unix paths, programs or errno wording
    fn past_a_spill_file_that_cannot_be_made_only_the_live_attempt_is_fed() {
        let (replay, failure) = replay(Spool::new_in(4, "/nonexistent".into()), u64::MAX);
        let (fed, ended) = fed_live(&replay, b"more than four");
        assert_eq!((fed.as_slice(), ended), (&b"more than four"[..], true));
        assert_eq!(failure.message(), None);
        // A retry would get only what was kept: the run fails before it.
        replay.before_attempt();
        let message = failure.message().unwrap_or_default();
        assert!(
            message.starts_with(
                "--stdin replay: cannot keep stdin: No such file or directory (TMPDIR"
            ),
            "{message}"
        );
        assert!(replay.feed_all(Vec::new()).is_some(), "the pipe was closed");
    }

    #[test]
    fn input_up_to_the_limit_is_kept_and_past_it_only_the_live_attempt_is_fed() {
        let (replay, failure) = replay(Spool::new(4), 5);
        replay.record(&b"12345"[..]);
        replay.before_attempt();
        assert_eq!(failure.message(), None);
        let mut fed = Vec::new();
        assert!(replay.feed_all(&mut fed).is_none());
        assert_eq!(fed, b"12345");

        let (replay, failure) = super::tests::replay(Spool::new(4), 5);
        let (fed, ended) = fed_live(&replay, b"123456789");
        assert_eq!((fed.as_slice(), ended), (&b"123456789"[..], true));
        assert_eq!(failure.message(), None, "the live attempt failed");
        replay.before_attempt();
        assert_eq!(
            failure.message().as_deref(),
            Some(
                "--stdin replay: stdin is longer than --stdin-limit 5 bytes: an earlier attempt read it as it came, but a retry would get only the part that was kept, so none is run with a truncated input"
            )
        );
        assert!(replay.feed_all(Vec::new()).is_some(), "a retry got an end");
    }

    #[test]
    fn a_live_feed_whose_attempt_stopped_reading_ends_and_the_recorder_with_it() {
        let (replay, _) = replay(Spool::new(1 << 20), 4);
        let (reader, mut writer) = io::pipe().unwrap();
        let recorder = replay.clone();
        let recording = std::thread::spawn(move || recorder.record(reader));
        writer.write_all(b"123456").unwrap();
        // The attempt reads nothing more: its pipe is closed.
        let (attempt_reader, attempt_writer) = io::pipe().unwrap();
        drop(attempt_reader);
        assert!(replay.feed_all(attempt_writer).is_none());
        assert!(replay.lock().live_gone);
        // The recorder stops at its next chunk (or stdin's end); once it has,
        // this write finds no reader.
        let _ = writer.write_all(b"7");
        drop(writer);
        recording.join().unwrap();
        assert!(replay.lock().live.len() <= 1);
    }

    #[test]
    fn a_live_feeder_is_held_when_reading_stdin_fails() {
        let (replay, failure) = replay(Spool::new(1 << 20), 3);
        let recorder = replay.clone();
        let recording = std::thread::spawn(move || recorder.record(Failing(b"12345")));
        let held = replay.feed_all(Vec::new());
        recording.join().unwrap();
        assert!(failure.message().is_some());
        // It passed on what came before the error, and kept the pipe open.
        assert_eq!(held.expect("the pipe was closed"), b"12345");
    }

    #[test]
    fn empty_input_feeds_nothing() {
        let mut fed = Vec::new();
        assert!(recorded(b"", 10).feed_all(&mut fed).is_none());
        assert!(fed.is_empty());
    }
}
