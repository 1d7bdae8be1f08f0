//! The hooks: `--on-retry` between attempts, and the two that run once,
//! `--on-start` before the first attempt and `--on-exit` after the last,
//! whatever ended the run. What a run is given of them (`Settings`), how
//! its ending reads to `--on-exit` (`outcome`: the one map from a give-up
//! to `RETRY_OUTCOME` and `RETRY_REASON`), the variables each sees, and
//! the words of a once-hook's trouble, which is one warning and never
//! changes retry's exit status. The supervisor runs them (`Host::run_once`).

use std::time::Duration;

use crate::events::GiveUp;
use crate::policy::Attempts;
use crate::run::outcome::{Ended, SpawnError};

/// The most of the last attempt's output `--on-exit-stdin tail` hands on,
/// its last bytes (healthchecks.io once kept 10 KB of a ping's body).
pub const TAIL_BYTES: usize = 10 * 1024;

/// `--hook-timeout` unless given: a ping has answered long before.
pub const DEFAULT_TIMEOUT: &str = "10s";

/// The variables that set this run's once-hooks: no command or hook it
/// starts inherits them, so a retry inside the command does not ping the
/// same monitor again for its own run.
pub const VARIABLES: [&str; 2] = ["RETRY_ON_START", "RETRY_ON_EXIT"];

/// The variables a once-hook's environment is made of: each is set to
/// this run's value or removed, so none is an outer retry's.
const NAMES: [&str; 9] = [
    "RETRY_COMMAND",
    "RETRY_ATTEMPT_LIMIT",
    "RETRY_OUTCOME",
    "RETRY_REASON",
    "RETRY_EXIT_CODE",
    "RETRY_ATTEMPTS",
    "RETRY_ELAPSED_MS",
    // An attempt's and `--on-retry`'s, which a once-hook has no use for.
    "RETRY_ATTEMPT",
    "RETRY_PREVIOUS_EXIT_CODE",
];

/// `--on-retry`, `--on-start`, `--on-exit` and how the once-hooks run.
#[derive(Debug)]
pub struct Settings {
    /// A shell command run between a failed attempt and its sleep.
    pub on_retry: Option<String>,
    /// A shell command run once, before the first attempt.
    pub on_start: Option<String>,
    /// A shell command run once, after the run ended, however it ended.
    pub on_exit: Option<String>,
    /// `--on-exit-stdin`: what `--on-exit` reads.
    pub exit_stdin: ExitStdin,
    /// `--hook-timeout`: how long a once-hook may run before it is stopped.
    pub timeout: Duration,
    /// The command's name as the log lines give it (`RETRY_COMMAND`).
    pub command: String,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            on_retry: None,
            on_start: None,
            on_exit: None,
            exit_stdin: ExitStdin::Null,
            timeout: Duration::from_secs(10),
            command: String::new(),
        }
    }
}

impl Settings {
    /// Whether the attempts' output must pass through retry to be kept.
    pub fn wants_tail(&self) -> bool {
        self.on_exit.is_some() && self.exit_stdin == ExitStdin::Tail
    }
}

/// `--on-exit-stdin`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExitStdin {
    /// An empty stdin.
    #[default]
    Null,
    /// The last attempt's output, its last `TAIL_BYTES`.
    Tail,
}

/// Which once-hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Start,
    Exit,
}

impl Which {
    pub fn flag(self) -> &'static str {
        match self {
            Which::Start => "--on-start",
            Which::Exit => "--on-exit",
        }
    }
}

/// How a run ended, in `RETRY_OUTCOME`'s words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// An attempt succeeded.
    Success,
    /// Attempts, time (`--max-time`), the budget ran out, or the server
    /// asked for too long a wait: the failure may be transient.
    GaveUp,
    /// A rule stopped the run at once: a fatal or not-retryable code, a
    /// `--stop-if-output` line, a command that cannot start, retry's own
    /// failure to carry its input or output.
    Stopped,
    /// Not run at all: the open `--breaker` circuit.
    Skipped,
    /// A signal to retry, or its stdout's reader gone.
    Interrupted,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::GaveUp => "gave_up",
            Outcome::Stopped => "stopped",
            Outcome::Skipped => "skipped",
            Outcome::Interrupted => "interrupted",
        }
    }
}

/// The one map from how a run ended (`None`: it succeeded) to
/// `RETRY_OUTCOME` and `RETRY_REASON`, which is the log's reason name
/// (`(reason: NAME)`, JSON's `reason`), or `success`.
pub fn outcome(gave_up: Option<&GiveUp>) -> (Outcome, &'static str) {
    let Some(reason) = gave_up else {
        return (Outcome::Success, "success");
    };
    let outcome = match reason {
        GiveUp::Attempts(_)
        | GiveUp::MaxTimeReached(_)
        | GiveUp::MaxTimeInHook(_)
        | GiveUp::MaxTimeAhead { .. }
        | GiveUp::HintTooLong { .. }
        | GiveUp::Budget(_)
        | GiveUp::Rejected {
            status: Some(_), ..
        } => Outcome::GaveUp,
        GiveUp::Fatal(..)
        | GiveUp::NotRetryable(..)
        | GiveUp::OutputStop { .. }
        | GiveUp::Spawn { .. }
        | GiveUp::Failed(_) => Outcome::Stopped,
        GiveUp::CircuitOpen(..) | GiveUp::Rejected { status: None, .. } => Outcome::Skipped,
        GiveUp::Signal { .. } | GiveUp::StdoutClosed => Outcome::Interrupted,
    };
    (outcome, reason.reason().name())
}

/// How the run ended, as `--on-exit` is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct End {
    pub outcome: Outcome,
    pub reason: &'static str,
    /// retry's own exit status (128+N when it dies of signal N).
    pub exit_code: i32,
    /// The attempts started (0 when none was: skipped, or a signal during
    /// `--on-start`).
    pub attempts: u32,
    /// Since retry started, when the hook starts.
    pub elapsed: Duration,
}

/// A once-hook for the host to run.
#[derive(Debug)]
pub struct Once<'a> {
    pub script: &'a str,
    /// Its environment: each variable set, or removed (`None`).
    pub variables: Vec<(&'static str, Option<String>)>,
    /// Feed it the last attempt's output tail (`--on-exit-stdin tail`).
    pub tail: bool,
    /// `--hook-timeout`, from when it starts.
    pub timeout: Duration,
    /// A signal already asked retry to stop: the next one is the second,
    /// which stops the hook at once, and one pending keeps it from starting.
    pub after_signal: bool,
}

/// The environment of `which`: for `--on-exit`, how the run ended.
pub fn variables(
    settings: &Settings,
    limit: Attempts,
    end: Option<&End>,
) -> Vec<(&'static str, Option<String>)> {
    let value = |name: &str| -> Option<String> {
        match name {
            "RETRY_COMMAND" => Some(settings.command.clone()),
            "RETRY_ATTEMPT_LIMIT" => Some(limit.to_string()),
            _ => {
                let end = end?;
                Some(match name {
                    "RETRY_OUTCOME" => end.outcome.name().to_owned(),
                    "RETRY_REASON" => end.reason.to_owned(),
                    "RETRY_EXIT_CODE" => end.exit_code.to_string(),
                    "RETRY_ATTEMPTS" => end.attempts.to_string(),
                    "RETRY_ELAPSED_MS" => crate::duration::millis(end.elapsed).to_string(),
                    _ => return None,
                })
            }
        }
    };
    NAMES.iter().map(|name| (*name, value(name))).collect()
}

/// A once-hook's trouble as one warning's words; `None` when it exited 0.
pub fn trouble(
    which: Which,
    ended: &Result<Ended, SpawnError>,
    timeout: Duration,
) -> Option<String> {
    let flag = which.flag();
    let then = match which {
        Which::Start => "the run goes on",
        Which::Exit => "retry's exit status is the run's",
    };
    let what = match ended {
        Ok(Ended::Exited(status)) if status.code == 0 => return None,
        Ok(Ended::Exited(status)) => format!("failed with {}", status.describe()),
        Ok(Ended::NotStarted(errno)) => format!(
            "could not start: {}",
            crate::os_error::describe(&std::io::Error::from_raw_os_error(*errno))
        ),
        Err(SpawnError { code, message }) => {
            format!("could not start ({message}; exit code {code})")
        }
        Ok(Ended::TimedOut) => format!(
            "did not end within --hook-timeout {} and was stopped",
            humantime::format_duration(timeout)
        ),
        // Never started: a signal was pending (after one that ended the run).
        Ok(Ended::Interrupted {
            signal,
            status: None,
        }) => format!(
            "did not start: retry received {} again",
            crate::status::signal_name(*signal)
        ),
        Ok(Ended::Interrupted { signal, .. }) => format!(
            "was stopped: retry received {}",
            crate::status::signal_name(*signal)
        ),
        Ok(Ended::Failed(message)) => format!("failed: {message}"),
    };
    Some(format!("{flag} command {what}; {then}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Label, Phase};
    use crate::status::Status;

    #[test]
    fn every_ending_has_one_outcome_and_the_logs_reason() {
        let s = Status::exited(3);
        let label: Label = None;
        let cases: [(Option<GiveUp>, Outcome, &str); 16] = [
            (None, Outcome::Success, "success"),
            (Some(GiveUp::Attempts(s)), Outcome::GaveUp, "attempts"),
            (Some(GiveUp::MaxTimeReached(s)), Outcome::GaveUp, "max_time"),
            (Some(GiveUp::MaxTimeInHook(s)), Outcome::GaveUp, "max_time"),
            (
                Some(GiveUp::MaxTimeAhead {
                    status: s,
                    sleep_ms: 5,
                }),
                Outcome::GaveUp,
                "max_time",
            ),
            (
                Some(GiveUp::HintTooLong {
                    status: s,
                    hint_ms: 1,
                    limit_ms: 1,
                }),
                Outcome::GaveUp,
                "hint",
            ),
            (Some(GiveUp::Budget(s)), Outcome::GaveUp, "budget"),
            (
                Some(GiveUp::Fatal(s, label.clone())),
                Outcome::Stopped,
                "fatal",
            ),
            (
                Some(GiveUp::NotRetryable(s, label.clone())),
                Outcome::Stopped,
                "not_retryable",
            ),
            (
                Some(GiveUp::OutputStop {
                    status: s,
                    line: None,
                    label,
                }),
                Outcome::Stopped,
                "stop_if_output",
            ),
            (
                Some(GiveUp::Spawn {
                    code: 127,
                    message: String::new(),
                }),
                Outcome::Stopped,
                "spawn",
            ),
            (Some(GiveUp::Failed(String::new())), Outcome::Stopped, "io"),
            (
                Some(GiveUp::CircuitOpen(String::new(), 75)),
                Outcome::Skipped,
                "breaker",
            ),
            (
                Some(GiveUp::Signal {
                    signal: 15,
                    status: None,
                    during: Phase::Sleep,
                }),
                Outcome::Interrupted,
                "signal",
            ),
            (
                Some(GiveUp::Signal {
                    signal: 2,
                    status: None,
                    during: Phase::StartHook,
                }),
                Outcome::Interrupted,
                "signal",
            ),
            (
                Some(GiveUp::StdoutClosed),
                Outcome::Interrupted,
                "stdout_closed",
            ),
        ];
        for (gave_up, expected, reason) in cases {
            assert_eq!(outcome(gave_up.as_ref()), (expected, reason), "{gave_up:?}");
        }
    }

    #[test]
    fn the_outcomes_are_the_documented_words() {
        let doc = include_str!("../../docs/behaviour.md").replace("\r\n", "\n");
        let table = doc
            .split("| `RETRY_OUTCOME` | when |\n|---|---|\n")
            .nth(1)
            .expect("docs/behaviour.md has the table of outcomes");
        let documented: Vec<&str> = table
            .lines()
            .take_while(|line| line.starts_with('|'))
            .map(|row| row.split('`').nth(1).expect("a row starts with a `name`"))
            .collect();
        let all = [
            Outcome::Success,
            Outcome::GaveUp,
            Outcome::Stopped,
            Outcome::Skipped,
            Outcome::Interrupted,
        ];
        let names: Vec<&str> = all.iter().map(|o| o.name()).collect();
        assert_eq!(documented, names);
    }

    fn settings() -> Settings {
        Settings {
            command: "curl".into(),
            ..Settings::default()
        }
    }

    fn value<'a>(vars: &'a [(&'static str, Option<String>)], name: &str) -> Option<&'a str> {
        let (_, value) = vars.iter().find(|(n, _)| *n == name).expect(name);
        value.as_deref()
    }

    #[test]
    fn the_exit_hook_sees_how_the_run_ended_and_nothing_of_an_outer_retry() {
        let end = End {
            outcome: Outcome::GaveUp,
            reason: "attempts",
            exit_code: 22,
            attempts: 5,
            elapsed: Duration::from_micros(1_234_567),
        };
        let vars = variables(&settings(), Attempts::Limit(5), Some(&end));
        let table = [
            ("RETRY_COMMAND", Some("curl")),
            ("RETRY_ATTEMPT_LIMIT", Some("5")),
            ("RETRY_OUTCOME", Some("gave_up")),
            ("RETRY_REASON", Some("attempts")),
            ("RETRY_EXIT_CODE", Some("22")),
            ("RETRY_ATTEMPTS", Some("5")),
            ("RETRY_ELAPSED_MS", Some("1235")),
            ("RETRY_ATTEMPT", None),
            ("RETRY_PREVIOUS_EXIT_CODE", None),
        ];
        assert_eq!(vars.len(), table.len());
        for (name, expected) in table {
            assert_eq!(value(&vars, name), expected, "{name}");
        }
    }

    #[test]
    fn the_start_hook_sees_the_command_and_no_ending() {
        let vars = variables(&settings(), Attempts::Unlimited, None);
        assert_eq!(value(&vars, "RETRY_COMMAND"), Some("curl"));
        assert_eq!(value(&vars, "RETRY_ATTEMPT_LIMIT"), Some("unlimited"));
        for name in [
            "RETRY_OUTCOME",
            "RETRY_REASON",
            "RETRY_EXIT_CODE",
            "RETRY_ATTEMPTS",
            "RETRY_ELAPSED_MS",
            "RETRY_ATTEMPT",
        ] {
            assert_eq!(value(&vars, name), None, "{name}");
        }
    }

    #[test]
    fn a_once_hooks_trouble_is_one_line_that_says_the_status_stands() {
        let ten = Duration::from_secs(10);
        let cases: [(Which, Result<Ended, SpawnError>, Option<&str>); 7] = [
            (Which::Exit, Ok(Ended::Exited(Status::exited(0))), None),
            (
                Which::Exit,
                Ok(Ended::Exited(Status::exited(7))),
                Some("--on-exit command failed with exit code 7; retry's exit status is the run's"),
            ),
            (
                Which::Start,
                Ok(Ended::Exited(Status::signaled(9))),
                Some(
                    "--on-start command failed with signal 9 (SIGKILL), exit code 137; the run goes on",
                ),
            ),
            (
                Which::Exit,
                Ok(Ended::TimedOut),
                Some(
                    "--on-exit command did not end within --hook-timeout 10s and was stopped; \
                     retry's exit status is the run's",
                ),
            ),
            (
                Which::Start,
                Err(SpawnError {
                    code: 127,
                    message: "cannot run `./ping`: command not found".into(),
                }),
                Some(
                    "--on-start command could not start (cannot run `./ping`: command not \
                     found; exit code 127); the run goes on",
                ),
            ),
            (
                Which::Exit,
                Ok(Ended::Interrupted {
                    signal: 15,
                    status: Some(Status::signaled(15)),
                }),
                Some(
                    "--on-exit command was stopped: retry received SIGTERM; retry's exit status is the run's",
                ),
            ),
            (
                Which::Exit,
                Ok(Ended::Interrupted {
                    signal: 2,
                    status: None,
                }),
                Some(
                    "--on-exit command did not start: retry received SIGINT again; retry's exit status is the run's",
                ),
            ),
        ];
        // Ctrl-C has its own name on Windows.
        let sigint = crate::status::signal_name(2).to_string();
        for (which, ended, expected) in cases {
            let said = trouble(which, &ended, ten);
            let expected = expected.map(|e| e.replace("SIGINT", &sigint));
            assert_eq!(said, expected, "{ended:?}");
            assert!(!said.unwrap_or_default().contains('\n'));
        }
    }
}
