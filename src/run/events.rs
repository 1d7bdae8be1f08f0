//! What happens during a run, as data: the runner emits these and `log`
//! decides how (and whether) each is written.

use crate::policy::Attempts;
use crate::run::hint::Hinted;
use crate::status::Status;
use crate::strategy::{Jitter, Sleep};

#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// An attempt is about to start (shown with `--verbose`).
    Starting { attempt: u32, limit: Attempts },
    /// An attempt failed and the next one follows after `sleep`.
    Retrying {
        attempt: u32,
        limit: Attempts,
        status: Status,
        sleep: Sleep,
        jitter: Jitter,
        /// The server's hint, when the attempt's output had one.
        hint: Option<Hinted>,
    },
    /// Something retry set aside and goes on without (an unreadable
    /// server hint, a budget file it could not use): logged, not fatal.
    Warning { attempt: u32, message: String },
    /// The run succeeded; `slept_ms` adds up the sleeps as `Retrying`
    /// showed them (each rounded to the millisecond), so the summary agrees
    /// with the lines before it.
    Succeeded {
        attempt: u32,
        limit: Attempts,
        status: Status,
        slept_ms: u128,
    },
    /// The `--on-retry` command failed (logged; the run goes on).
    HookFailed {
        attempt: u32,
        limit: Attempts,
        status: Status,
    },
    GaveUp {
        attempt: u32,
        limit: Attempts,
        reason: GiveUp,
    },
    /// No `--preset` was named, but `preset` is written for the program:
    /// said once (at give-up, or with `--verbose` at the start), in text
    /// and GitHub logs only. The run itself is not changed by it.
    PresetKnown { preset: String, program: String },
}

/// Why a run ended without success.
#[derive(Clone, Debug, PartialEq)]
pub enum GiveUp {
    /// The last allowed attempt failed.
    Attempts(Status),
    /// The code is listed in `--fatal-on`.
    Fatal(Status),
    /// The code is neither a success nor listed in `--retry-on`.
    NotRetryable(Status),
    /// The output matched `--stop-if-output`.
    OutputStop(Status),
    /// `--max-time` ended the running attempt.
    MaxTimeReached(Status),
    /// `--max-time` ended the `--on-retry` command; the status is the
    /// attempt's before it, retry exits 124 as for any timeout.
    MaxTimeInHook(Status),
    /// The next sleep would have ended past `--max-time`.
    MaxTimeAhead { status: Status, sleep_ms: u128 },
    /// The server asked for a wait longer than `--cap`.
    HintTooLong { status: Status, hint_ms: u128 },
    /// The shared `--budget` could not pay for a retry.
    Budget(Status),
    /// retry received this signal; `status` is the command's, if it was running.
    Signal {
        signal: i32,
        status: Option<Status>,
        during: Phase,
    },
    /// The command could not be started.
    Spawn { code: i32, message: String },
    /// retry could not carry the command's input or output (exit 125).
    Failed(String),
    /// retry's stdout was closed before held-back output could be written:
    /// retry dies of SIGPIPE, as the command would have.
    StdoutClosed,
}

/// What retry was doing when a signal stopped it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Attempt,
    Hook,
    Sleep,
    /// Writing held-back output.
    Output,
}

/// retry's own failure, as coreutils `timeout` and `env` report theirs.
pub const RETRY_FAILED: i32 = 125;

impl GiveUp {
    /// The word of the `reason` field in JSON logs.
    pub fn reason(&self) -> &'static str {
        match self {
            GiveUp::Attempts(_) => "attempts",
            GiveUp::HintTooLong { .. } => "hint",
            GiveUp::Budget(_) => "budget",
            GiveUp::Fatal(_) | GiveUp::NotRetryable(_) | GiveUp::OutputStop(_) => "fatal",
            GiveUp::MaxTimeReached(_) | GiveUp::MaxTimeAhead { .. } | GiveUp::MaxTimeInHook(_) => {
                "max_time"
            }
            GiveUp::Signal { .. } => "signal",
            GiveUp::Spawn { .. } => "spawn",
            GiveUp::Failed(_) => "io",
            GiveUp::StdoutClosed => "stdout_closed",
        }
    }

    /// How retry ends: dying of the signal that stopped it, or an exit status.
    pub fn exit(&self) -> crate::run::Exit {
        use crate::run::Exit;
        match self {
            GiveUp::Signal { signal, .. } => Exit::Signal(*signal),
            GiveUp::StdoutClosed => Exit::Signal(crate::platform::SIGPIPE),
            _ => Exit::Code(self.exit_code()),
        }
    }

    /// retry's exit status for this ending: the command's last status, or
    /// 128+N for a signal to retry, 126/127 when the command could not start.
    pub fn exit_code(&self) -> i32 {
        match (self, self.status()) {
            (GiveUp::Signal { signal, .. }, _) => 128 + signal,
            (GiveUp::Spawn { code, .. }, _) => *code,
            (GiveUp::Failed(_), _) => RETRY_FAILED,
            (GiveUp::MaxTimeInHook(_), _) => crate::status::TIMED_OUT,
            (GiveUp::StdoutClosed, _) => 128 + crate::platform::SIGPIPE,
            // Every other ending has the command's status.
            (_, status) => status.map_or(1, |s| s.code),
        }
    }

    /// The command's last status, where there was one.
    pub fn status(&self) -> Option<Status> {
        match self {
            GiveUp::Attempts(s)
            | GiveUp::Fatal(s)
            | GiveUp::NotRetryable(s)
            | GiveUp::OutputStop(s)
            | GiveUp::MaxTimeReached(s)
            | GiveUp::MaxTimeInHook(s)
            | GiveUp::MaxTimeAhead { status: s, .. }
            | GiveUp::HintTooLong { status: s, .. }
            | GiveUp::Budget(s) => Some(*s),
            GiveUp::Signal { status, .. } => *status,
            GiveUp::Spawn { .. } | GiveUp::Failed(_) | GiveUp::StdoutClosed => None,
        }
    }
}
