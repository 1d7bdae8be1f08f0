//! `--stdin replay`: retry's stdin is read once, in the background, into a
//! spool; every attempt is fed the same bytes. The first attempt starts at
//! once and is fed as the bytes arrive (a producer upstream may be slow);
//! later attempts get what was recorded, then whatever still comes.

use std::io::{self, Read, Write};
use std::process::ChildStdin;
use std::sync::{Arc, Condvar, Mutex};

use super::spool::Spool;

struct State {
    spool: Spool,
    /// Stdin has ended (or failed): no more bytes will come.
    done: bool,
}

#[derive(Clone)]
pub struct Replay {
    shared: Arc<(Mutex<State>, Condvar)>,
}

const CHUNK: usize = 64 * 1024;

impl Replay {
    /// Starts recording retry's stdin.
    pub fn start(memory_limit: usize) -> Self {
        let replay = Replay {
            shared: Arc::new((
                Mutex::new(State {
                    spool: Spool::new(memory_limit),
                    done: false,
                }),
                Condvar::new(),
            )),
        };
        let recorder = replay.clone();
        std::thread::spawn(move || recorder.record(io::stdin().lock()));
        replay
    }

    fn record(&self, mut input: impl Read) {
        let (state, grown) = &*self.shared;
        let mut buf = vec![0u8; CHUNK];
        let failure = loop {
            let n = match input.read(&mut buf) {
                Ok(0) => break None,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break Some(format!("reading stdin failed: {e}")),
            };
            let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = state.spool.append(&buf[..n]) {
                break Some(format!("keeping stdin failed: {e}"));
            }
            grown.notify_all();
        };
        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = failure {
            // Attempts go on with what was kept: say so rather than hide a short input.
            let kept = state.spool.len();
            let _ = writeln!(
                io::stderr(),
                "retry: --stdin replay: {why}; every attempt gets the {kept} bytes kept before it"
            );
        }
        state.done = true;
        grown.notify_all();
    }

    /// Feeds one attempt's stdin in the background, from the first byte.
    pub fn feed(&self, pipe: ChildStdin) {
        let replay = self.clone();
        std::thread::spawn(move || replay.feed_all(pipe));
    }

    fn feed_all(&self, mut pipe: impl Write) {
        let (state, grown) = &*self.shared;
        let mut buf = vec![0u8; CHUNK];
        let mut offset = 0u64;
        loop {
            let n = {
                let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                while offset == state.spool.len() && !state.done {
                    state = grown.wait(state).unwrap_or_else(|e| e.into_inner());
                }
                match state.spool.read_at(offset, &mut buf) {
                    Ok(0) | Err(_) => return, // all fed: dropping the pipe is EOF
                    Ok(n) => n,
                }
            };
            // EPIPE: the attempt closed its stdin or ended; nothing more to do.
            if pipe.write_all(&buf[..n]).is_err() {
                return;
            }
            offset += n as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(input: &[u8], limit: usize) -> Replay {
        let replay = Replay {
            shared: Arc::new((
                Mutex::new(State {
                    spool: Spool::new(limit),
                    done: false,
                }),
                Condvar::new(),
            )),
        };
        replay.record(input);
        replay
    }

    #[test]
    fn every_feed_gets_every_byte() {
        let input: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let replay = recorded(&input, 1000);
        for _ in 0..3 {
            let mut fed = Vec::new();
            replay.feed_all(&mut fed);
            assert_eq!(fed, input);
        }
    }

    /// A reader that fails after its bytes.
    struct Failing(&'static [u8]);

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::other("disk on fire"));
            }
            let n = self.0.len().min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_read_error_ends_the_input_with_what_was_kept() {
        let replay = Replay {
            shared: Arc::new((
                Mutex::new(State {
                    spool: Spool::new(10),
                    done: false,
                }),
                Condvar::new(),
            )),
        };
        replay.record(Failing(b"kept"));
        let mut fed = Vec::new();
        replay.feed_all(&mut fed);
        assert_eq!(fed, b"kept");
    }

    #[test]
    fn empty_input_feeds_nothing() {
        let mut fed = Vec::new();
        recorded(b"", 10).feed_all(&mut fed);
        assert!(fed.is_empty());
    }
}
