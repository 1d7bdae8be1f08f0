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
        loop {
            let n = match input.read(&mut buf) {
                Ok(0) | Err(_) => 0,
                Ok(n) => n,
            };
            let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
            if n == 0 || state.spool.append(&buf[..n]).is_err() {
                state.done = true;
                grown.notify_all();
                return;
            }
            grown.notify_all();
        }
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

    #[test]
    fn empty_input_feeds_nothing() {
        let mut fed = Vec::new();
        recorded(b"", 10).feed_all(&mut fed);
        assert!(fed.is_empty());
    }
}
