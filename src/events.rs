//! What happens during a run, as data: the one vocabulary the attempt
//! loop (`run/`) speaks and every output (`sinks/`) hears. A leaf: it
//! imports nothing of either.
//!
//! Each event carries its time once, stamped when it is made from the
//! clock of the loop's host (`Origin::stamp`), as nextest's `TestEvent {
//! timestamp, elapsed, kind }` does: every output reads its time from the
//! stamp, none from a clock of its own, so they all agree.

use std::time::{Duration, Instant, SystemTime};

use crate::policy::Attempts;
use crate::state::breaker::machine::Circuit;
use crate::state::throttle;
use crate::status::Status;
use crate::strategy::{Jitter, Sleep};

/// When an event happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// The wall clock's time (JSON's `time`, the spans' and the textfile's).
    pub time: SystemTime,
    /// Since the run began (JSON's `elapsed_ms`, the run's duration).
    pub elapsed: Duration,
}

/// When a run began, on both clocks: its events' stamps count from here.
#[derive(Clone, Copy, Debug)]
pub struct Origin {
    time: SystemTime,
    at: Instant,
}

impl Origin {
    /// A run that began at `time` on the wall clock, `at` on the host's.
    pub fn new(time: SystemTime, at: Instant) -> Self {
        Self { time, at }
    }

    /// When the run began, on the wall clock.
    pub fn time(&self) -> SystemTime {
        self.time
    }

    /// The stamp of an event made at `now` on the host's clock. The wall
    /// time follows that clock from the origin: a wall clock set back
    /// mid-run cannot make an event end before it started.
    pub fn stamp(&self, now: Instant) -> Stamp {
        let elapsed = now.saturating_duration_since(self.at);
        Stamp {
            time: self.time + elapsed,
            elapsed,
        }
    }
}

/// An event with its stamp: what every output is handed.
#[derive(Clone, Debug, PartialEq)]
pub struct Stamped {
    pub stamp: Stamp,
    pub event: Event,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// `--splay`: the run sleeps `delay` (below `max`) before its first
    /// attempt; `stable`: this host's slot (`--splay-stable`). In text with
    /// `-v`, in JSON always.
    Splay {
        delay: Duration,
        max: Duration,
        stable: bool,
    },
    /// An attempt is about to start (shown with `--verbose`).
    Starting { attempt: u32, limit: Attempts },
    /// An attempt failed and the next one follows after `sleep`.
    Retrying {
        attempt: u32,
        limit: Attempts,
        status: Status,
        /// Transient, or throttled (the server asked to slow down) and why.
        class: Class,
        sleep: Sleep,
        jitter: Jitter,
        /// The server's hint, when the attempt's output had one.
        hint: Option<Hinted>,
        /// How long the attempt ran.
        took: Duration,
    },
    /// `--reset-after`: attempt `attempt`, whose `Retrying` this follows,
    /// ran `ran` before it failed, at least the reset's time: the backoff
    /// starts again from its first sleep, and the next attempt is attempt 1.
    Reset {
        attempt: u32,
        limit: Attempts,
        ran: Duration,
    },
    /// `--throttle` rejected attempt `attempt` locally: it did not run,
    /// and counts as a throttled failure: the next follows after `sleep`.
    Rejected {
        attempt: u32,
        limit: Attempts,
        /// The throttle's name.
        throttle: std::sync::Arc<str>,
        /// The probability it was rejected with.
        probability: f64,
        sleep: Sleep,
        jitter: Jitter,
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
        /// How long the last attempt ran.
        took: Duration,
    },
    /// The `--on-retry` command failed (logged; the run goes on).
    HookFailed {
        attempt: u32,
        limit: Attempts,
        status: Status,
        /// Why it could not start (`/bin/sh` missing, say), when it did not.
        error: Option<String>,
    },
    GaveUp {
        attempt: u32,
        limit: Attempts,
        reason: GiveUp,
        /// How long the last attempt ran, when the run ended with it (not
        /// in its sleep or hook, nor when it could not start).
        took: Option<Duration>,
    },
    /// The preset that judges the run, named or chosen by the program it
    /// wraps, and why: before the first attempt, in text with `-v`, in
    /// JSON always (a record of what judged the run).
    Preset(PresetLine),
    /// Why no preset judges a run whose program a preset is written for,
    /// or that runs a shell: before the first attempt, with `-v` only.
    NoPreset(String),
    /// After the run's end, the `--breaker` circuit `name` as the run last
    /// saw it, and when: for the metrics (its gauges and file), no line.
    CircuitSeen {
        name: String,
        circuit: Circuit,
        seen: SystemTime,
    },
    /// After the run's end, the `--throttle` `name` as the run last saw
    /// it: for the metrics (its gauges and file), no line.
    ThrottleSeen { name: String, seen: throttle::Seen },
    /// An attempt that started ran as process `pid`: said once it has
    /// ended, before the line about it, for its span (`process.pid`), no line.
    Ran { attempt: u32, pid: u32 },
}

/// The class of a failed attempt that is retried (`run::class`): its
/// sleep is drawn on `--base` or `--throttle-base`, and the `--budget`
/// charges `--budget-cost` or `--budget-throttle-cost` for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Class {
    /// Any retryable failure the server did not ask to slow down for.
    #[default]
    Transient,
    /// The server asked to slow down, as this shows.
    Throttled(Evidence),
}

impl Class {
    /// Its name in the JSON log, the metrics' `class` label and the spans.
    pub fn name(&self) -> &'static str {
        match self {
            Class::Transient => "transient",
            Class::Throttled(_) => "throttled",
        }
    }

    pub fn is_throttled(&self) -> bool {
        matches!(self, Class::Throttled(_))
    }
}

/// The run's count of an attempt whose number restarts with each streak
/// `--reset-after` begins: the outputs that total a run (the metrics, the
/// spans, the step outputs) take in each event and add the streaks ended.
#[derive(Clone, Copy, Debug, Default)]
pub struct Streaks {
    /// The attempts of the streaks ended.
    earlier: u32,
    /// The last attempt of the streak a `Reset` is ending, until the next
    /// attempt is asked (a signal in the sleep before it ends none).
    ending: Option<u32>,
}

impl Streaks {
    /// Takes in one event, before it is counted.
    pub fn observe(&mut self, event: &Event) {
        match event {
            Event::Reset { attempt, .. } => self.ending = Some(*attempt),
            Event::Starting { .. }
            | Event::Rejected { .. }
            | Event::GaveUp {
                reason: GiveUp::Rejected { .. },
                ..
            } => self.earlier += self.ending.take().unwrap_or(0),
            _ => {}
        }
    }

    /// Attempt `attempt` of the streak, counted from the run's first.
    pub fn of(&self, attempt: u32) -> u32 {
        self.earlier.saturating_add(attempt)
    }
}

/// What showed that the server asked to slow down.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// A line the throttle rule matched: the preset's, by its label
    /// (`HTTP 429`), or the user's `--throttle-if-output`, by its regex
    /// (made once, before the run, escaped and cut for a log line).
    Line(std::sync::Arc<str>),
    /// A wait the server asked for, read by `--delay-from-output`.
    Hint,
}

impl Evidence {
    /// The evidence in a few words, as the text line gives it in
    /// parentheses and the JSON log as `throttled_by`.
    pub fn words(&self) -> &str {
        match self {
            Evidence::Line(words) => words,
            Evidence::Hint => "server asked to wait",
        }
    }
}

/// A sleep the server's hint had a say in (`run::hint::choose`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hinted {
    /// What the server asked for.
    pub asked: Duration,
    /// What the strategy drew (the sleep is the longer of the two).
    pub drawn: Duration,
}

/// A preset judging a run, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresetLine {
    pub name: String,
    /// Chosen by the lookup, not named.
    pub chosen: bool,
    /// `` chosen for `curl` `` or `` named by `--preset curl` ``.
    pub why: String,
}

/// Why a run ended without success.
#[derive(Clone, Debug, PartialEq)]
pub enum GiveUp {
    /// The last allowed attempt failed.
    Attempts(Status),
    /// The code is listed in `--fatal-on` (a preset's, with its label).
    Fatal(Status, Label),
    /// The code is neither a success nor listed in `--retry-on` (a
    /// preset's, with its label).
    NotRetryable(Status, Label),
    /// The output matched `--stop-if-output` (a preset's, with its label).
    OutputStop {
        status: Status,
        /// The first line that matched, as a log line may quote it.
        line: Option<Box<str>>,
        label: Label,
    },
    /// `--max-time` ended the running attempt.
    MaxTimeReached(Status),
    /// `--max-time` ended the `--on-retry` command; the status is the
    /// attempt's before it, retry exits 124 as for any timeout.
    MaxTimeInHook(Status),
    /// The next sleep would have ended past `--max-time`.
    MaxTimeAhead { status: Status, sleep_ms: u128 },
    /// The server asked for a wait longer than `--cap`.
    HintTooLong {
        status: Status,
        hint_ms: u128,
        /// The longest it would have waited (`hint::ceiling`).
        limit_ms: u128,
    },
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
    /// The `--breaker` circuit is open: the command was not started (exit
    /// `--breaker-exit-code`, 75); the line says when a probe may run.
    CircuitOpen(String, i32),
    /// `--throttle` rejected the last attempt locally, and the run's
    /// attempts, `--max-time` or the budget let no other follow.
    Rejected {
        /// The throttle's name.
        throttle: std::sync::Arc<str>,
        /// The probability the last attempt was rejected with.
        probability: f64,
        /// The last status of an attempt that ran; `None` when the
        /// throttle rejected every attempt, and retry exits `code`
        /// (`--breaker-exit-code`, 75) as for an open circuit.
        status: Option<Status>,
        ran_out: RanOut,
        code: i32,
    },
}

/// What let no attempt follow one the throttle rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RanOut {
    /// It was the last allowed attempt.
    Attempts,
    /// The sleep before the next would have ended past `--max-time`.
    MaxTime { sleep_ms: u128 },
    /// The shared `--budget` could not pay for another.
    Budget,
}

/// A preset's rule in words, for the line that says it stopped the run
/// (`curl preset: an HTTP 4xx but 408, 425, 429; …`); `None` for a rule
/// given as a flag or by its variable. Shared, so a give-up copies no text.
pub type Label = Option<std::sync::Arc<str>>;

/// What retry was doing when a signal stopped it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `--splay`, before `--on-start` and the first attempt.
    Splay,
    Attempt,
    Hook,
    /// `--on-start`, before the first attempt.
    StartHook,
    Sleep,
    /// Writing held-back output.
    Output,
}

/// retry's own failure, as coreutils `timeout` and `env` report theirs.
pub const RETRY_FAILED: i32 = 125;

/// Why a run gave up, by name: the one vocabulary of the logs. Text lines
/// end with `(reason: NAME)`, JSON lines give it as `reason`, and
/// docs/behaviour.md lists every one (a test holds the list to `ALL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The last allowed attempt failed (`--max-attempts`).
    Attempts,
    /// The code is listed in `--fatal-on`.
    Fatal,
    /// The code is neither a success nor listed in `--retry-on`.
    NotRetryable,
    /// The output matched `--stop-if-output`.
    StopIfOutput,
    /// `--max-time` ran out, or the next sleep would end past it.
    MaxTime,
    /// The server asked for a wait longer than `--cap`.
    Hint,
    /// The shared `--budget` could not pay for a retry.
    Budget,
    /// retry received a signal.
    Signal,
    /// The command could not be started.
    Spawn,
    /// retry could not carry the command's input or output.
    Io,
    /// retry's stdout was closed before held-back output was written.
    StdoutClosed,
    /// The `--breaker` circuit is open: the command was not started.
    Breaker,
    /// `--throttle` rejected the last attempt, and no other could follow.
    Throttle,
}

impl Reason {
    #[cfg(test)]
    pub const ALL: [Reason; 13] = [
        Reason::Attempts,
        Reason::Fatal,
        Reason::NotRetryable,
        Reason::StopIfOutput,
        Reason::MaxTime,
        Reason::Hint,
        Reason::Budget,
        Reason::Signal,
        Reason::Spawn,
        Reason::Io,
        Reason::StdoutClosed,
        Reason::Breaker,
        Reason::Throttle,
    ];

    /// The reason's one name, in text and JSON alike.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Attempts => "attempts",
            Reason::Fatal => "fatal",
            Reason::NotRetryable => "not_retryable",
            Reason::StopIfOutput => "stop_if_output",
            Reason::MaxTime => "max_time",
            Reason::Hint => "hint",
            Reason::Budget => "budget",
            Reason::Signal => "signal",
            Reason::Spawn => "spawn",
            Reason::Io => "io",
            Reason::StdoutClosed => "stdout_closed",
            Reason::Breaker => "breaker",
            Reason::Throttle => "throttle",
        }
    }
}

impl GiveUp {
    /// Which reason this ending is.
    pub fn reason(&self) -> Reason {
        match self {
            GiveUp::Attempts(_) => Reason::Attempts,
            GiveUp::Fatal(..) => Reason::Fatal,
            GiveUp::NotRetryable(..) => Reason::NotRetryable,
            GiveUp::OutputStop { .. } => Reason::StopIfOutput,
            GiveUp::MaxTimeReached(_) | GiveUp::MaxTimeAhead { .. } | GiveUp::MaxTimeInHook(_) => {
                Reason::MaxTime
            }
            GiveUp::HintTooLong { .. } => Reason::Hint,
            GiveUp::Budget(_) => Reason::Budget,
            GiveUp::Signal { .. } => Reason::Signal,
            GiveUp::Spawn { .. } => Reason::Spawn,
            GiveUp::Failed(_) => Reason::Io,
            GiveUp::StdoutClosed => Reason::StdoutClosed,
            GiveUp::CircuitOpen(..) => Reason::Breaker,
            GiveUp::Rejected { .. } => Reason::Throttle,
        }
    }

    /// retry's exit status for this ending: the command's last status, or
    /// 128+N for a signal to retry (Windows: 0xC000013A), 126/127 when the command could not start.
    pub fn exit_code(&self) -> i32 {
        match (self, self.status()) {
            (GiveUp::Signal { signal, .. }, _) => crate::platform::signal_exit_code(*signal),
            (GiveUp::Spawn { code, .. }, _) => *code,
            (GiveUp::Failed(_), _) => RETRY_FAILED,
            (GiveUp::MaxTimeInHook(_), _) => crate::status::TIMED_OUT,
            (GiveUp::StdoutClosed, _) => 128 + crate::platform::SIGPIPE,
            (GiveUp::CircuitOpen(_, code), _) => *code,
            (GiveUp::Rejected { code, .. }, None) => *code,
            // Every other ending has the command's status.
            (_, status) => status.map_or(1, |s| s.code),
        }
    }

    /// The command's last status, where there was one.
    pub fn status(&self) -> Option<Status> {
        match self {
            GiveUp::Attempts(s)
            | GiveUp::Fatal(s, _)
            | GiveUp::NotRetryable(s, _)
            | GiveUp::OutputStop { status: s, .. }
            | GiveUp::MaxTimeReached(s)
            | GiveUp::MaxTimeInHook(s)
            | GiveUp::MaxTimeAhead { status: s, .. }
            | GiveUp::HintTooLong { status: s, .. }
            | GiveUp::Budget(s) => Some(*s),
            GiveUp::Signal { status, .. } | GiveUp::Rejected { status, .. } => *status,
            GiveUp::Spawn { .. }
            | GiveUp::Failed(_)
            | GiveUp::StdoutClosed
            | GiveUp::CircuitOpen(..) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/behaviour.md's table of reasons names every reason, and only them.
    #[test]
    fn the_documented_reasons_are_the_codes() {
        // Its words, not its bytes: the same on a checkout with CRLFs.
        let doc = include_str!("../docs/behaviour.md").replace("\r\n", "\n");
        let table = doc
            .split("| reason | when |\n|---|---|\n")
            .nth(1)
            .expect("docs/behaviour.md has the table of reasons");
        let documented: Vec<&str> = table
            .lines()
            .take_while(|line| line.starts_with('|'))
            .map(|row| row.split('`').nth(1).expect("a row starts with a `name`"))
            .collect();
        let names: Vec<&str> = Reason::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(documented, names);
    }
}
