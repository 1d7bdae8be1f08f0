//! One output stream of an attempt (stdout or stderr) read through a pipe:
//! each read is passed on at once (or held back for `--stdout-once`) and
//! its lines are matched against `--retry-if-output` / `--stop-if-output`.
//!
//! A stream still open when its attempt is over (a background process
//! holds it) is handed to a `cat` (see `output::hand_off`).
//!
//! When the bytes cannot go where they should, the pipe is closed so the
//! command learns on its next write, as it would without retry: a reader
//! that went away (EPIPE) leaves the command its SIGPIPE; output that
//! cannot be held back or written to stdout is also a failure of the run
//! (exit 125). Errors writing to stderr other than EPIPE are ignored, as
//! for retry's own messages: the stream is still read and matched.

use std::io::{self, PipeReader, Read};
use std::sync::{Arc, Mutex};

use super::failure::{Failure, temp_dir_note};
use super::lines::{Lines, MAX_LINE, Patterns};
use super::output::{Sink, Target, hand_off};
use super::spool::Spool;
use crate::os_error::describe;
use crate::run::pipes::OutputSeen;

/// A stream's route and what it produced so far; shared with the reader so
/// that a stream still open after the command exited (a background process
/// holds it) can be settled anyway.
#[derive(Debug)]
pub struct Collected {
    pub seen: OutputSeen,
    /// The held-back bytes, with `--stdout-once`; else bytes go to `target`.
    pub held: Option<Spool>,
    pub target: Target,
    /// A write to stdout met EPIPE: its reader is gone.
    pub stdout_closed: bool,
}

impl Collected {
    pub fn new(target: Target, held: Option<Spool>) -> Self {
        Self {
            seen: OutputSeen::default(),
            held,
            target,
            stdout_closed: false,
        }
    }
}

/// Everything one stream's reader needs.
pub struct Pump {
    pub patterns: Arc<Patterns>,
    pub collected: Arc<Mutex<Collected>>,
    pub failure: Arc<Failure>,
    pub sink: Arc<dyn Sink>,
    /// Becomes readable (its writer dropped) when the attempt is over and
    /// the stream is to be handed off; `None` to read to the end regardless.
    pub over: Option<PipeReader>,
    /// Another copy of the read end (the end of the attempt looks at it),
    /// dropped with ours so that closing the pipe on the command works.
    pub peek: Peek,
    /// Where each read is kept too, for `--on-exit-stdin tail`.
    pub tail: Option<super::tail::Shared>,
}

/// A shared copy of a pipe's read end, to see whether it is still held open.
pub type Peek = Arc<Mutex<Option<PipeReader>>>;

/// Why a pump stopped reading.
#[derive(Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The pipe reached its end (or failed to read).
    Ended,
    /// The bytes could go nowhere: the pipe was closed on the command.
    Closed,
    /// The attempt was over: a `cat` goes on copying the pipe.
    HandedOff,
}

impl Pump {
    pub fn new(
        patterns: Arc<Patterns>,
        collected: Arc<Mutex<Collected>>,
        failure: Arc<Failure>,
        sink: Arc<dyn Sink>,
    ) -> Self {
        Pump {
            patterns,
            collected,
            failure,
            sink,
            over: None,
            peek: Peek::default(),
            tail: None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Collected> {
        self.collected.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads `pipe` until its end, a hand-off, or a write that cannot be made.
    pub fn run(&self, mut pipe: PipeReader) -> Stopped {
        let mut buf = vec![0u8; 64 * 1024];
        let mut lines = Lines::new(MAX_LINE);
        let mut seen = OutputSeen::default();
        let mut over = self.over.as_ref();
        let stopped = loop {
            if over.is_some_and(|over| over_before_more(&pipe, over)) {
                let target = self.lock().target;
                if hand_off(&pipe, target).is_ok() {
                    break Stopped::HandedOff;
                }
                // No `cat`: pass the rest on while retry lives.
                over = None;
            }
            let n = match pipe.read(&mut buf) {
                Ok(0) => break Stopped::Ended,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break Stopped::Ended,
            };
            if !self.pass_on(&buf[..n]) {
                break Stopped::Closed;
            }
            if self.patterns.any() {
                lines.feed(&buf[..n], &mut |line| self.patterns.check(line, &mut seen));
                self.lock().seen.clone_from(&seen);
            }
        };
        // Dropping `pipe` closes it on the command (unless `cat` has it),
        // provided no other copy of it is left open.
        if stopped == Stopped::Closed {
            *self.peek.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
        if stopped == Stopped::Ended && self.patterns.any() {
            lines.finish(&mut |line| self.patterns.check(line, &mut seen));
            self.lock().seen = seen;
        }
        stopped
    }

    /// Holds back or writes one read; false when the pipe must be closed.
    fn pass_on(&self, chunk: &[u8]) -> bool {
        if let Some(tail) = &self.tail {
            tail.lock().unwrap_or_else(|e| e.into_inner()).push(chunk);
        }
        // The lock is not held while writing: a slow reader downstream must
        // not keep the end of the attempt from settling this stream.
        let target = {
            let mut state = self.lock();
            match &mut state.held {
                None => state.target,
                Some(spool) => {
                    let Err(error) = spool.append(chunk) else {
                        return true;
                    };
                    // Dropping what was held: none of a partial output may
                    // pass for the attempt's, and stderr is no place for it.
                    state.held = None;
                    drop(state);
                    self.failure.report(format!(
                        "--stdout-once: cannot hold back stdout: {} ({}); the attempt was stopped and its output dropped",
                        describe(&error),
                        temp_dir_note()
                    ));
                    return false;
                }
            }
        };
        match self.sink.write(target, chunk) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                if target == Target::Stdout {
                    self.lock().stdout_closed = true;
                }
                false
            }
            Err(_) if target == Target::Stderr => true,
            Err(e) => {
                self.failure.report(format!(
                    "cannot write the command's {}: {}",
                    target.name(),
                    describe(&e)
                ));
                false
            }
        }
    }
}

/// Waits until `pipe` has bytes (or its end) or `over` says the attempt
/// is over; true for the latter.
fn over_before_more(pipe: &PipeReader, over: &PipeReader) -> bool {
    // Cannot wait on both: read, as without a hand-off.
    crate::platform::ready::wait_readable(pipe, over).is_ok_and(|[_, over]| over)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::pipes::lines::Matchers;
    use std::io::Write;

    /// Records what is written, failing writes to `broken` with `error`.
    #[derive(Default)]
    struct Recorder {
        written: Mutex<Vec<(Target, Vec<u8>)>>,
        broken: Option<(Target, i32)>,
    }

    impl Sink for Recorder {
        fn write(&self, target: Target, bytes: &[u8]) -> io::Result<()> {
            if let Some((broken, errno)) = self.broken
                && broken == target
            {
                return Err(io::Error::from_raw_os_error(errno));
            }
            let mut written = self.written.lock().unwrap();
            written.push((target, bytes.to_vec()));
            Ok(())
        }
    }

    struct Setup {
        pump: Pump,
        sink: Arc<Recorder>,
    }

    fn make(target: Target, held: Option<Spool>, retry_if: &str, sink: Recorder) -> Setup {
        let matchers = Matchers {
            retry_if: Some(regex::bytes::Regex::new(retry_if).unwrap()),
            ..Matchers::default()
        };
        let sink = Arc::new(sink);
        let pump = Pump::new(
            Arc::new(Patterns::new(&matchers)),
            Arc::new(Mutex::new(Collected::new(target, held))),
            Arc::new(Failure::default()),
            Arc::clone(&sink) as Arc<dyn Sink>,
        );
        Setup { pump, sink }
    }

    /// Runs the pump over the bytes `write` puts into a real pipe.
    fn pump_bytes(
        setup: &Setup,
        write: impl FnOnce(&mut io::PipeWriter) + Send + 'static,
    ) -> Stopped {
        let (reader, mut writer) = io::pipe().unwrap();
        let writing = std::thread::spawn(move || write(&mut writer));
        let stopped = setup.pump.run(reader);
        writing.join().unwrap();
        stopped
    }

    #[test]
    fn held_bytes_are_kept_and_matched() {
        let setup = make(
            Target::Stdout,
            Some(Spool::new(1 << 20)),
            "rate limit",
            Recorder::default(),
        );
        let stopped = pump_bytes(&setup, |w| {
            w.write_all(b"ok\nrate li").unwrap();
            w.write_all(b"mit exceeded\n").unwrap();
        });
        assert_eq!(stopped, Stopped::Ended);
        let state = setup.pump.lock();
        assert!(state.seen.retry_if);
        let mut held = Vec::new();
        state.held.as_ref().unwrap().write_to(&mut held).unwrap();
        assert_eq!(held, b"ok\nrate limit exceeded\n");
        assert!(setup.sink.written.lock().unwrap().is_empty());
    }

    #[test]
    #[cfg(unix)] // Unix paths, programs or errno wording
    fn output_that_cannot_be_held_fails_the_run_and_closes_the_pipe() {
        let spool = Spool::new_in(4, "/nonexistent".into());
        let setup = make(Target::Stdout, Some(spool), "x", Recorder::default());
        // The writer sees the pipe closed (EPIPE) instead of writing forever.
        let stopped = pump_bytes(&setup, |w| {
            let mut result = Ok(());
            for _ in 0..1000 {
                result = result.and_then(|()| w.write_all(&[b'y'; 1024]));
            }
            assert_eq!(result.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        });
        assert_eq!(stopped, Stopped::Closed);
        let message = setup.pump.failure.message().unwrap();
        assert!(
            message.starts_with(
                "--stdout-once: cannot hold back stdout: No such file or directory (TMPDIR"
            ),
            "{message}"
        );
        // Nothing of it goes anywhere: not kept, not to stderr.
        assert!(setup.pump.lock().held.is_none());
        assert!(setup.sink.written.lock().unwrap().is_empty());
    }

    #[test]
    #[cfg(unix)] // Unix paths, programs or errno wording
    fn a_reader_gone_closes_the_pipe_without_a_failure() {
        for target in [Target::Stdout, Target::Stderr] {
            let recorder = Recorder {
                broken: Some((target, 32)), // EPIPE
                ..Recorder::default()
            };
            let setup = make(target, None, "x", recorder);
            let stopped = pump_bytes(&setup, |w| {
                let _ = w.write_all(b"first\n");
            });
            assert_eq!(stopped, Stopped::Closed, "{target:?}");
            assert_eq!(setup.pump.failure.message(), None);
        }
    }

    #[test]
    #[cfg(unix)] // Unix paths, programs or errno wording
    fn a_full_stdout_fails_the_run_but_a_full_stderr_does_not() {
        let full = |target| Recorder {
            broken: Some((target, 28)), // ENOSPC
            ..Recorder::default()
        };
        let setup = make(Target::Stdout, None, "x", full(Target::Stdout));
        assert_eq!(
            pump_bytes(&setup, |w| w.write_all(b"a\n").unwrap()),
            Stopped::Closed
        );
        assert_eq!(
            setup.pump.failure.message().as_deref(),
            Some("cannot write the command's stdout: No space left on device")
        );
        // stderr: read to the end and matched, the bytes lost as retry's own would be.
        let setup = make(Target::Stderr, None, "x", full(Target::Stderr));
        let stopped = pump_bytes(&setup, |w| w.write_all(b"a\nx\n").unwrap());
        assert_eq!(stopped, Stopped::Ended);
        assert_eq!(setup.pump.failure.message(), None);
        assert!(setup.pump.lock().seen.retry_if);
    }

    #[test]
    fn streamed_bytes_reach_their_target_in_order() {
        let setup = make(Target::Stderr, None, "never", Recorder::default());
        pump_bytes(&setup, |w| {
            w.write_all(b"one\n").unwrap();
            w.write_all(b"two").unwrap();
        });
        let written = setup.sink.written.lock().unwrap();
        let bytes: Vec<u8> = written
            .iter()
            .flat_map(|(t, b)| {
                assert_eq!(*t, Target::Stderr);
                b.clone()
            })
            .collect();
        assert_eq!(bytes, b"one\ntwo");
    }
}
