//! Where the command's output goes when it passes through retry: retry's
//! own stdout and stderr, written without a buffer of retry's so each byte
//! is passed on (or its error seen) at once.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;

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
            stdout: io::stdout().as_fd().try_clone_to_owned().map(File::from),
        }
    }
}

impl Sink for OwnStdio {
    fn write(&self, target: Target, bytes: &[u8]) -> io::Result<()> {
        match (target, &self.stdout) {
            (Target::Stdout, Ok(file)) => (&*file).write_all(bytes),
            (Target::Stdout, Err(error)) => Err(io::Error::new(error.kind(), error.to_string())),
            // std's stderr has no buffer.
            (Target::Stderr, _) => io::stderr().lock().write_all(bytes),
        }
    }
}
