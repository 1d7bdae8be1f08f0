//! The loop's vocabulary: what an attempt knows of itself, how it ended,
//! how retry ends. A leaf: `run/`'s files import it, not `run/mod.rs`.

use crate::events::GiveUp;
use crate::policy::Attempts;
use crate::run::pipes::OutputSeen;
use crate::state::breaker;
use crate::status::Status;

/// What an attempt needs to know about itself (exported to the child).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptInfo {
    pub number: u32,
    pub limit: Attempts,
    pub previous_code: Option<i32>,
}

/// One attempt as the loop judges it: how it ended, and what its output
/// showed, whatever ended it (a timeout too: what it printed counts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub ended: Ended,
    pub seen: OutputSeen,
}

/// How a command (an attempt or the hook) ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    Exited(Status),
    /// Stopped at the deadline it was given.
    TimedOut,
    /// retry received `signal`; the command, if it had started, was stopped
    /// and reaped with `status`.
    Interrupted {
        signal: i32,
        status: Option<Status>,
    },
    /// retry itself failed to carry the attempt's input or output (its
    /// pipes); the attempt was stopped, since its result cannot be trusted.
    Failed(String),
    /// The system could not start it for want of a resource (this errno:
    /// EAGAIN at the process limit, EMFILE, ENOMEM): a passing shortage,
    /// judged as a failure with status 125 rather than as a missing program.
    NotStarted(i32),
}

/// Why held-back output could not be settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unsettled {
    /// A signal arrived while retry was writing it; what was not yet
    /// written (bytes) is dropped.
    Interrupted { signal: i32, dropped: u64 },
    /// stdout's reader went away.
    BrokenPipe,
    /// Any other write error, as one line.
    Failed(String),
}

/// How retry itself ends: with an exit status, or by dying of a signal
/// (the one that stopped it), so its caller sees what it would have seen
/// without retry in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

/// The command could not be started (126 or 127).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnError {
    pub code: i32,
    pub message: String,
}

impl Exit {
    /// The status a shell sees: 128+N for a death by signal N.
    pub fn code(self) -> i32 {
        match self {
            Exit::Code(code) => code,
            Exit::Signal(signal) => crate::platform::signal_exit_code(signal),
        }
    }

    /// How retry ends after giving up for `reason`: dying of the signal
    /// that stopped it, or an exit status.
    pub fn of(reason: &GiveUp) -> Exit {
        match reason {
            GiveUp::Signal { signal, .. } => Exit::Signal(*signal),
            GiveUp::StdoutClosed => Exit::Signal(crate::platform::SIGPIPE),
            _ => Exit::Code(reason.exit_code()),
        }
    }
}

/// How `--breaker` counts a run that gave up for `reason`: a failure when
/// the last attempt failed transiently (or, after one that did, was
/// rejected by `--throttle`) and attempts, time or the budget ran out;
/// neither for a run the throttle let no attempt of, or for a fatal or not-retryable code, a command that
/// could not start, a signal from the caller or retry's own failure.
pub fn breaker_outcome(reason: &GiveUp) -> breaker::Ended {
    use breaker::Ended;
    match reason {
        GiveUp::Attempts(_)
        | GiveUp::MaxTimeReached(_)
        | GiveUp::MaxTimeInHook(_)
        | GiveUp::MaxTimeAhead { .. }
        | GiveUp::HintTooLong { .. }
        | GiveUp::Budget(_)
        | GiveUp::Rejected {
            status: Some(_), ..
        } => Ended::Failed,
        GiveUp::Fatal(..)
        | GiveUp::NotRetryable(..)
        | GiveUp::OutputStop { .. }
        | GiveUp::Signal { .. }
        | GiveUp::Spawn { .. }
        | GiveUp::Failed(_)
        | GiveUp::StdoutClosed
        | GiveUp::CircuitOpen(..)
        | GiveUp::Rejected { status: None, .. } => Ended::Neither,
    }
}
