//! One output stream of an attempt (stdout or stderr) read through a pipe:
//! each chunk is passed on at once (or held back for `--stdout-once`) and
//! matched, line by line, against `--retry-if-output` / `--stop-if-output`.

use std::io::{self, Read, Write};
use std::sync::Mutex;

use regex::bytes::Regex;

use super::spool::Spool;
use crate::runner::OutputSeen;

/// A line longer than this is matched as it stands and then dropped, so
/// output without newlines cannot grow the line buffer without bound.
const MAX_LINE: usize = 64 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Stdout,
    Stderr,
}

#[derive(Clone, Debug, Default)]
pub struct Matchers {
    pub retry_if: Option<Regex>,
    pub stop_if: Option<Regex>,
}

impl Matchers {
    pub fn any(&self) -> bool {
        self.retry_if.is_some() || self.stop_if.is_some()
    }

    /// Matches one line, without its line ending, so `$` anchors at its end.
    fn check(&self, line: &[u8], seen: &mut OutputSeen) {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        seen.retry_if |= self.retry_if.as_ref().is_some_and(|r| r.is_match(line));
        seen.stop_if |= self.stop_if.as_ref().is_some_and(|r| r.is_match(line));
    }
}

/// A stream's route and what it produced so far; shared with the reader so
/// that a stream still open after the command exited (a background process
/// holds it) can be settled anyway.
#[derive(Debug)]
pub struct Collected {
    pub seen: OutputSeen,
    /// The held-back bytes, with `--stdout-once`; else bytes go to `target`.
    pub held: Option<Spool>,
    pub target: Target,
}

impl Collected {
    pub fn new(target: Target, held: Option<Spool>) -> Self {
        Self {
            seen: OutputSeen::default(),
            held,
            target,
        }
    }
}

fn write_to(target: Target, bytes: &[u8]) -> io::Result<()> {
    match target {
        Target::Stdout => {
            let mut out = io::stdout().lock();
            out.write_all(bytes)?;
            out.flush() // stdout is line-buffered: pass partial lines on too
        }
        Target::Stderr => io::stderr().lock().write_all(bytes),
    }
}

/// Reads `pipe` to its end: passes each chunk on as it comes (or holds it
/// back) and matches complete lines, including lines split across reads.
pub fn pump(mut pipe: impl Read, matchers: &Matchers, collected: &Mutex<Collected>) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut seen = OutputSeen::default();
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let chunk = &buf[..n];
        // The lock is not held while writing: a slow reader downstream must
        // not keep the end of the attempt from settling this stream.
        let forward_to = {
            let mut state = collected.lock().unwrap_or_else(|e| e.into_inner());
            match &mut state.held {
                // A full disk: the bytes go to stderr rather than nowhere.
                Some(spool) => spool.append(chunk).err().map(|_| Target::Stderr),
                None => Some(state.target),
            }
        };
        if let Some(target) = forward_to {
            let _ = write_to(target, chunk);
        }
        if matchers.any() {
            for piece in chunk.split_inclusive(|&b| b == b'\n') {
                line.extend_from_slice(piece);
                if piece.ends_with(b"\n") || line.len() > MAX_LINE {
                    matchers.check(&line, &mut seen);
                    line.clear();
                }
            }
            collected.lock().unwrap_or_else(|e| e.into_inner()).seen = seen;
        }
    }
    if !line.is_empty() {
        matchers.check(&line, &mut seen);
        collected.lock().unwrap_or_else(|e| e.into_inner()).seen = seen;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that returns its chunks one read at a time.
    struct Chunks(Vec<&'static [u8]>);

    impl Read for Chunks {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let chunk = self.0.remove(0);
            buf[..chunk.len()].copy_from_slice(chunk);
            Ok(chunk.len())
        }
    }

    fn run(chunks: Vec<&'static [u8]>, retry_if: &str) -> (OutputSeen, Vec<u8>) {
        let matchers = Matchers {
            retry_if: Some(Regex::new(retry_if).unwrap()),
            stop_if: None,
        };
        let collected = Mutex::new(Collected::new(Target::Stdout, Some(Spool::new(1 << 20))));
        pump(Chunks(chunks), &matchers, &collected);
        let state = collected.lock().unwrap();
        let mut held = Vec::new();
        state.held.as_ref().unwrap().write_to(&mut held).unwrap();
        (state.seen, held)
    }

    #[test]
    fn a_match_split_across_reads_is_found() {
        let (seen, held) = run(vec![b"ok\nrate li", b"mit exceeded\n"], "rate limit");
        assert!(seen.retry_if && !seen.stop_if);
        assert_eq!(held, b"ok\nrate limit exceeded\n");
    }

    #[test]
    fn anchors_match_at_the_ends_of_a_line() {
        let (seen, _) = run(vec![b"x\r\nrate limit\r\n"], "^rate limit$");
        assert!(seen.retry_if);
    }

    #[test]
    fn matching_is_per_line() {
        let (seen, _) = run(vec![b"rate\nlimit\n"], "rate limit");
        assert!(!seen.retry_if);
    }

    #[test]
    fn a_last_line_without_newline_is_matched() {
        let (seen, _) = run(vec![b"x\nquota exceeded"], "(?i)QUOTA");
        assert!(seen.retry_if);
    }
}
