//! `--stdin replay`: retry's stdin is read once, in the background, into a
//! spool; every attempt is fed the same bytes. The first attempt starts at
//! once and is fed as the bytes arrive (a producer upstream may be slow);
//! later attempts get what was recorded, then whatever still comes.
//!
//! An input that cannot be kept whole (unreadable, past `--stdin-limit`,
//! no room for the spill file) is never passed off as complete: recording
//! stops, the failure is reported, and no attempt's stdin is closed from
//! then on. A closed pipe is the one thing a command takes for "that was
//! all", so the pipes stay open, undelivered, until the supervisor has
//! stopped the attempt and retry exits.

use std::io::{self, PipeWriter, Read, Write};
use std::sync::{Arc, Condvar, Mutex};

use super::failure::{Failure, describe, temp_dir_note};
use super::spool::Spool;
use crate::size::Size;

struct State {
    spool: Spool,
    /// Stdin has ended: no more bytes will come, and they were all kept.
    done: bool,
    /// The recording failed: what was kept is not the whole input.
    failed: bool,
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
    /// then reading stops, since nothing after a gap could be replayed.
    fn record(&self, mut input: impl Read) {
        let mut buf = vec![0u8; CHUNK];
        let failure = loop {
            let n = match input.read(&mut buf) {
                Ok(0) => break None,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break Some(format!("cannot read stdin: {}", describe(&e))),
            };
            let mut state = self.lock();
            if state.spool.len() + n as u64 > self.shared.limit.bytes() {
                break Some(format!(
                    "stdin is longer than --stdin-limit {}",
                    self.shared.limit
                ));
            }
            if let Err(e) = state.spool.append(&buf[..n]) {
                break Some(format!(
                    "cannot keep stdin: {} ({})",
                    describe(&e),
                    temp_dir_note()
                ));
            }
            self.shared.grown.notify_all();
        };
        match failure {
            None => {
                self.lock().done = true;
                self.shared.grown.notify_all();
            }
            Some(why) => self.fail(&why),
        }
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
    pub fn feed(&self, pipe: PipeWriter) {
        let replay = self.clone();
        std::thread::spawn(move || {
            if let Some(pipe) = replay.feed_all(pipe) {
                replay.lock().withheld.push(pipe);
            }
        });
    }

    /// Writes the input to `pipe` as it is recorded. Returns the pipe when
    /// it must stay open (the input is incomplete); dropping it is EOF.
    fn feed_all<W: Write>(&self, mut pipe: W) -> Option<W> {
        let mut buf = vec![0u8; CHUNK];
        let mut offset = 0u64;
        loop {
            let n = {
                let mut state = self.lock();
                while !state.failed && !state.done && offset == state.spool.len() {
                    state = self
                        .shared
                        .grown
                        .wait(state)
                        .unwrap_or_else(|e| e.into_inner());
                }
                if state.failed {
                    return Some(pipe);
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

    #[test]
    fn a_spill_file_that_cannot_be_made_fails_the_run() {
        let (replay, failure) = replay(Spool::new_in(4, "/nonexistent".into()), u64::MAX);
        replay.record(&b"more than four"[..]);
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
    fn input_up_to_the_limit_is_kept_and_past_it_fails() {
        let (replay, failure) = replay(Spool::new(4), 5);
        replay.record(&b"12345"[..]);
        assert_eq!(failure.message(), None);
        let mut fed = Vec::new();
        assert!(replay.feed_all(&mut fed).is_none());
        assert_eq!(fed, b"12345");

        let (replay, failure) = super::tests::replay(Spool::new(4), 5);
        replay.record(&b"123456"[..]);
        assert_eq!(
            failure.message().as_deref(),
            Some(
                "--stdin replay: stdin is longer than --stdin-limit 5 bytes; the attempt was stopped so it never sees a truncated input"
            )
        );
        assert!(replay.feed_all(Vec::new()).is_some());
    }

    #[test]
    fn a_feeder_waiting_for_input_is_held_when_recording_fails() {
        let (replay, failure) = replay(Spool::new(1 << 20), 8);
        let feeder = replay.clone();
        let fed = std::thread::spawn(move || feeder.feed_all(Vec::new()));
        // Fed in pieces: the feeder passes the first on, then waits for more.
        let (reader, mut writer) = io::pipe().unwrap();
        let recorder = replay.clone();
        let recording = std::thread::spawn(move || recorder.record(reader));
        writer.write_all(b"1234").unwrap();
        writer.write_all(b"56789").unwrap();
        drop(writer);
        recording.join().unwrap();
        let held = fed.join().unwrap();
        assert!(failure.message().is_some());
        // It passed on at most what was kept, and kept the pipe open.
        let held = held.expect("the pipe was closed");
        assert!(b"12345678".starts_with(&held), "{held:?}");
    }

    #[test]
    fn empty_input_feeds_nothing() {
        let mut fed = Vec::new();
        assert!(recorded(b"", 10).feed_all(&mut fed).is_none());
        assert!(fed.is_empty());
    }
}
