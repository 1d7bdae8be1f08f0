//! Where the command's output goes when it passes through retry: retry's
//! own stdout and stderr, written without a buffer of retry's so each byte
//! is passed on (or its error seen) at once. And the hand-off of a stream
//! still open after its attempt (a background process holds it) to a
//! `cat` that goes on copying it once retry has exited.

use crate::platform::spawn::Io;
use std::fs::File;
use std::io::{self, PipeReader, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the command's output that retry last wrote to stderr left a
/// line open (no final newline): retry's next log line must start a new
/// one, or `{"id":` and `retry: …` share a line. Output the command writes
/// to an inherited stderr directly is out of retry's sight.
static STDERR_LINE_OPEN: AtomicBool = AtomicBool::new(false);

/// Notes the end of a write of the command's output to stderr.
pub fn wrote_to_stderr(bytes: &[u8]) {
    if let Some(last) = bytes.last() {
        STDERR_LINE_OPEN.store(*last != b'\n', Ordering::Relaxed);
    }
}

/// Whether stderr is mid-line; it is taken to be at a line's start again
/// from now on (the caller ends the line).
pub fn take_open_line() -> bool {
    STDERR_LINE_OPEN.swap(false, Ordering::Relaxed)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Stdout,
    Stderr,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Stdout => "stdout",
            Target::Stderr => "stderr",
        }
    }
}

/// Something the pumps write the command's output to.
pub trait Sink: Send + Sync {
    fn write(&self, target: Target, bytes: &[u8]) -> io::Result<()>;
}

/// retry's real stdout and stderr.
pub struct OwnStdio {
    /// A duplicate of fd 1, written directly: std's stdout is line
    /// buffered, and after a failed write its buffer would hold bytes that a
    /// later write sends out of order.
    stdout: io::Result<File>,
}

impl OwnStdio {
    pub fn new() -> Self {
        OwnStdio {
            stdout: crate::platform::dup_stdout(),
        }
    }
}

impl Sink for OwnStdio {
    fn write(&self, target: Target, bytes: &[u8]) -> io::Result<()> {
        match (target, &self.stdout) {
            (Target::Stdout, Ok(file)) => (&*file).write_all(bytes),
            (Target::Stdout, Err(error)) => Err(io::Error::new(error.kind(), error.to_string())),
            // Bounded once a signal has come, like retry's own lines.
            (Target::Stderr, _) => {
                let (written, result) = crate::platform::write_stderr(bytes);
                wrote_to_stderr(&bytes[..written]);
                result
            }
        }
    }
}

/// Starts `cat` (on Windows, retry itself: `platform::copier`) copying the rest of `pipe` to `target`, so that output a
/// background process writes after retry has exited is still written, as
/// it would be without retry. On failure, `pipe` is still the caller's.
pub fn hand_off(pipe: &PipeReader, target: Target) -> io::Result<()> {
    let out = match target {
        Target::Stdout => crate::platform::dup_stdout()?,
        Target::Stderr => crate::platform::dup_stderr()?,
    };
    // Through the platform's spawn, as an attempt: every signal back at
    // its default action, so `cat` dies of SIGPIPE as a reader goes away.
    let mut cat = crate::platform::copier()?;
    cat.stdin = Io::Fd(pipe.try_clone()?.into());
    cat.stdout = Io::Fd(out.into());
    // Its own complaints (a reader gone) are not the command's output.
    cat.stderr = Io::Null;
    // Never waited for: it outlives retry. Until then it is a zombie at most.
    cat.spawn().map(drop)
}
