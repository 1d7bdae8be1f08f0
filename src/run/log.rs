//! retry's own messages on stderr: text lines, JSON lines, or GitHub
//! Actions workflow commands (annotations). The command's output never
//! passes through here. Writes ignore errors: a closed stderr
//! must not turn into a panic or change the exit status.

use std::fmt::Write as _;
use std::io::Write as _;

use crate::duration::millis;
use crate::run::events::{Event, GiveUp, Phase};
use crate::status::{Cause, Status, signal_name};
use clap::ValueEnum;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// `github` when GITHUB_ACTIONS=true, else `text`
    Auto,
    /// One readable line per event
    Text,
    /// One JSON object per line
    Json,
    /// GitHub Actions workflow commands: retries as warnings, giving up as an error
    Github,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    Quiet,
    Normal,
    Verbose,
}

pub struct Log {
    format: LogFormat,
    verbosity: Verbosity,
}

impl Log {
    pub fn new(format: LogFormat, verbosity: Verbosity) -> Self {
        Self { format, verbosity }
    }

    pub fn emit(&self, event: &Event) {
        if !self.shows(event) {
            return;
        }
        let text = match self.format {
            LogFormat::Json => json(event),
            LogFormat::Github => github(event),
            // `auto` is resolved by config; text is its fallback anyway.
            LogFormat::Text | LogFormat::Auto => text(event),
        };
        // One write per event, so lines from retry never interleave mid-line.
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }

    fn shows(&self, event: &Event) -> bool {
        match event {
            Event::Starting { .. } => self.verbosity == Verbosity::Verbose,
            Event::Retrying { .. } | Event::HookFailed { .. } | Event::Warning { .. } => {
                self.verbosity >= Verbosity::Normal
            }
            // A first-try success is silent: retry is invisible when nothing failed.
            Event::Succeeded { attempt, .. } => {
                self.verbosity == Verbosity::Verbose
                    || (*attempt > 1 && self.verbosity >= Verbosity::Normal)
            }
            // A reader that went away is a quiet end, as for any pipeline.
            Event::GaveUp {
                reason: GiveUp::StdoutClosed,
                ..
            } => self.verbosity == Verbosity::Verbose,
            Event::GaveUp { .. } => true,
        }
    }
}

/// One line, in the spirit of the AWS article's sample output:
/// `retry: attempt 2/5 failed with exit code 22; sleep: 692 ms (full jitter, up to 2000 ms)`.
pub fn text(event: &Event) -> String {
    format!("retry: {}\n", message(event))
}

/// GitHub Actions annotations: a retried failure or a failed hook is a
/// warning, giving up is an error, a success after retries a notice.
/// https://docs.github.com/actions/reference/workflow-commands-for-github-actions
pub fn github(event: &Event) -> String {
    let level = match event {
        Event::Starting { .. } => return text(event),
        Event::Retrying { .. } | Event::HookFailed { .. } | Event::Warning { .. } => "warning",
        Event::Succeeded { .. } => "notice",
        Event::GaveUp { .. } => "error",
    };
    format!(
        "::{level} title=retry::{}\n",
        escape_github(&message(event))
    )
}

/// A workflow command's message ends at a newline, and `%` starts an escape.
fn escape_github(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// What happened, in words, without the `retry: ` prefix.
fn message(event: &Event) -> String {
    match event {
        Event::Starting { attempt, limit } => format!("attempt {attempt}/{limit} starting"),
        Event::Retrying {
            attempt,
            limit,
            status,
            sleep,
            jitter,
            hint,
        } => {
            let drawn = format!("{}, up to {} ms", jitter.label(), millis(sleep.ceiling));
            let why = match hint {
                None => drawn,
                // The server's wait, not a draw: say only that.
                Some(h) if h.asked >= h.drawn => format!("server asked for {}", seconds(h.asked)),
                Some(h) => format!("{drawn}; server asked for {}", seconds(h.asked)),
            };
            format!(
                "attempt {attempt}/{limit} failed with {}; sleep: {} ms ({why})",
                status.describe(),
                millis(sleep.duration),
            )
        }
        Event::Warning { message, .. } => format!("warning: {message}"),
        Event::Succeeded {
            attempt: 1, limit, ..
        } => format!("attempt 1/{limit} succeeded"),
        // The summary of a run that needed retries.
        Event::Succeeded {
            attempt,
            limit,
            slept,
            ..
        } => format!(
            "attempt {attempt}/{limit} succeeded; {attempt} attempts, {} ms spent sleeping",
            millis(*slept)
        ),
        Event::HookFailed {
            attempt,
            limit,
            status,
        } => format!(
            "--on-retry command failed with {} after attempt {attempt}/{limit}; retrying anyway",
            status.describe()
        ),
        Event::GaveUp {
            attempt,
            limit,
            reason,
        } => match reason {
            GiveUp::Attempts(s) if *attempt == 1 => {
                format!("giving up after 1 attempt: it failed with {}", s.describe())
            }
            GiveUp::Attempts(s) => {
                format!(
                    "giving up after {attempt} attempts: the last failed with {}",
                    s.describe()
                )
            }
            GiveUp::Fatal(s) => format!(
                "giving up after attempt {attempt}/{limit}: {} is fatal (--fatal-on)",
                s.describe()
            ),
            GiveUp::NotRetryable(s) => format!(
                "giving up after attempt {attempt}/{limit}: {} is not retryable (--retry-on)",
                s.describe()
            ),
            GiveUp::OutputStop(s) => format!(
                "giving up after attempt {attempt}/{limit} ({}): its output matched --stop-if-output",
                s.describe()
            ),
            GiveUp::MaxTimeReached(_) => {
                format!("giving up: --max-time reached during attempt {attempt}/{limit}")
            }
            GiveUp::MaxTimeAhead { status, sleep_ms } => format!(
                "giving up after attempt {attempt}/{limit} failed with {}: a sleep of {sleep_ms} ms would end past --max-time",
                status.describe()
            ),
            GiveUp::HintTooLong { status, hint_ms } => format!(
                "giving up after attempt {attempt}/{limit} failed with {}: the server asked to wait {hint_ms} ms, longer than --cap",
                status.describe()
            ),
            GiveUp::Budget(status) => format!(
                "giving up after attempt {attempt}/{limit} failed with {}: the shared --budget cannot pay for a retry",
                status.describe()
            ),
            GiveUp::MaxTimeInHook(_) => format!(
                "giving up: --max-time reached during the --on-retry command after attempt {attempt}/{limit}"
            ),
            GiveUp::Signal { signal, during, .. } => {
                let during = match during {
                    Phase::Attempt => format!("during attempt {attempt}/{limit}"),
                    Phase::Hook => {
                        format!("during the --on-retry command after attempt {attempt}/{limit}")
                    }
                    Phase::Sleep => format!("during the sleep after attempt {attempt}/{limit}"),
                    Phase::Output => {
                        format!("while writing the output of attempt {attempt}/{limit}")
                    }
                };
                format!(
                    "interrupted by {} {during}; exiting with {}",
                    signal_name(*signal),
                    reason.exit_code()
                )
            }
            GiveUp::Spawn { message, .. } => message.clone(),
            GiveUp::Failed(message) => format!("{message}; exiting with {}", reason.exit_code()),
            GiveUp::StdoutClosed => format!(
                "stdout was closed before the output of attempt {attempt}/{limit} was written"
            ),
        },
    }
}

/// One JSON object per line. A failed attempt that is retried gives two
/// lines, `attempt_failed` and `sleep`, so each event has one shape.
pub fn json(event: &Event) -> String {
    let mut out = String::new();
    match event {
        Event::Starting { attempt, limit } => {
            let _ = writeln!(
                out,
                r#"{{"event":"attempt_started","attempt":{attempt},"max_attempts":{}}}"#,
                limit_json(limit)
            );
        }
        Event::Retrying {
            attempt,
            limit,
            status,
            sleep,
            jitter,
            hint,
        } => {
            let _ = writeln!(
                out,
                r#"{{"event":"attempt_failed","attempt":{attempt},"max_attempts":{},"exit_code":{}{}}}"#,
                limit_json(limit),
                status.code,
                cause_json(status, "")
            );
            let _ = writeln!(
                out,
                r#"{{"event":"sleep","attempt":{attempt},"exit_code":{},"sleep_ms":{},"ceiling_ms":{},"strategy":"{}","source":"{}"{}}}"#,
                status.code,
                millis(sleep.duration),
                millis(sleep.ceiling),
                jitter.name(),
                match hint {
                    Some(h) if h.asked >= h.drawn => "hint",
                    _ => "strategy",
                },
                hint.map_or_else(String::new, |h| format!(
                    r#","hint_ms":{},"drawn_ms":{}"#,
                    millis(h.asked),
                    millis(h.drawn)
                ))
            );
        }
        Event::Warning { attempt, message } => {
            let _ = writeln!(
                out,
                r#"{{"event":"warning","attempt":{attempt},"message":"{}"}}"#,
                escape(message)
            );
        }
        Event::Succeeded {
            attempt,
            limit,
            status,
            slept,
        } => {
            let _ = writeln!(
                out,
                r#"{{"event":"succeeded","attempt":{attempt},"max_attempts":{},"exit_code":{},"slept_ms":{}}}"#,
                limit_json(limit),
                status.code,
                millis(*slept)
            );
        }
        Event::HookFailed {
            attempt,
            limit,
            status,
        } => {
            let _ = writeln!(
                out,
                r#"{{"event":"hook_failed","attempt":{attempt},"max_attempts":{},"exit_code":{}{}}}"#,
                limit_json(limit),
                status.code,
                cause_json(status, "")
            );
        }
        Event::GaveUp {
            attempt,
            limit,
            reason,
        } => {
            let code = reason.exit_code();
            let _ = write!(
                out,
                r#"{{"event":"gave_up","attempt":{attempt},"max_attempts":{},"exit_code":{code},"reason":"{}""#,
                limit_json(limit),
                reason.reason()
            );
            if let Some(status) = reason.status() {
                let _ = write!(
                    out,
                    r#","command_exit_code":{}{}"#,
                    status.code,
                    cause_json(&status, "command_")
                );
            }
            match reason {
                GiveUp::Signal { signal, .. } => {
                    let _ = write!(out, r#","signal":"{}""#, signal_name(*signal));
                }
                GiveUp::HintTooLong { hint_ms, .. } => {
                    let _ = write!(out, r#","hint_ms":{hint_ms}"#);
                }
                GiveUp::Spawn { message, .. } | GiveUp::Failed(message) => {
                    let _ = write!(out, r#","message":"{}""#, escape(message));
                }
                _ => {}
            }
            out.push_str("}\n");
        }
    }
    out
}

/// A server's wait as people write it: `30s`, `1s 500ms`.
/// (HTTP-dates give sub-millisecond noise: rounded.)
fn seconds(duration: std::time::Duration) -> humantime::FormattedDuration {
    let ms = u64::try_from(millis(duration)).unwrap_or(u64::MAX);
    humantime::format_duration(std::time::Duration::from_millis(ms))
}

fn limit_json(limit: &crate::policy::Attempts) -> String {
    match limit {
        crate::policy::Attempts::Limit(n) => n.to_string(),
        crate::policy::Attempts::Unlimited => "null".into(),
    }
}

/// The extra fields of a status that did not come from a plain exit.
fn cause_json(status: &Status, prefix: &str) -> String {
    match status.cause {
        Cause::Exited => String::new(),
        Cause::Signaled(signal) => format!(r#","{prefix}signal":"{}""#, signal_name(signal)),
        Cause::TimedOut(_) => format!(r#","{prefix}timed_out":true"#),
        Cause::OutputMatched(exited) => {
            format!(r#","{prefix}output_matched":true,"{prefix}exited_with":{exited}"#)
        }
        Cause::ZeroNotSuccess => format!(r#","{prefix}exited_with":0"#),
    }
}

/// JSON string escaping for the few free-text fields (a command name in a message).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Attempts;
    use crate::strategy::{Jitter, Sleep};
    use std::time::Duration;

    fn retrying() -> Event {
        Event::Retrying {
            attempt: 2,
            limit: Attempts::Limit(5),
            status: Status::exited(22),
            sleep: Sleep {
                duration: Duration::from_micros(691_700),
                ceiling: Duration::from_secs(2),
            },
            jitter: Jitter::Full,
            hint: None,
        }
    }

    #[test]
    fn text_retry_line_matches_the_article_style() {
        assert_eq!(
            text(&retrying()),
            "retry: attempt 2/5 failed with exit code 22; sleep: 692 ms (full jitter, up to 2000 ms)\n"
        );
    }

    #[test]
    fn a_retry_for_its_output_says_so() {
        let Event::Retrying { sleep, jitter, .. } = retrying() else {
            unreachable!()
        };
        let event = Event::Retrying {
            attempt: 1,
            limit: Attempts::Limit(3),
            status: Status::exited(0).output_matched(true),
            sleep,
            jitter,
            hint: None,
        };
        assert_eq!(
            text(&event),
            "retry: attempt 1/3 failed with exit code 0 and output matching --retry-if-output (counted as exit code 1); sleep: 692 ms (full jitter, up to 2000 ms)\n"
        );
        assert!(json(&event).starts_with(
            "{\"event\":\"attempt_failed\",\"attempt\":1,\"max_attempts\":3,\"exit_code\":1,\"output_matched\":true,\"exited_with\":0}\n"
        ));
        let failing = Status::exited(3).output_matched(false);
        assert_eq!(failing.code, 3);
        assert_eq!(
            failing.describe(),
            "exit code 3 and output matching --retry-if-output"
        );
    }

    #[test]
    fn json_retry_is_two_events() {
        assert_eq!(
            json(&retrying()),
            "{\"event\":\"attempt_failed\",\"attempt\":2,\"max_attempts\":5,\"exit_code\":22}\n\
             {\"event\":\"sleep\",\"attempt\":2,\"exit_code\":22,\"sleep_ms\":692,\"ceiling_ms\":2000,\"strategy\":\"full\",\"source\":\"strategy\"}\n"
        );
    }

    #[test]
    fn json_gave_up_names_reason_and_signal() {
        let event = Event::GaveUp {
            attempt: 1,
            limit: Attempts::Unlimited,
            reason: GiveUp::Signal {
                signal: 15,
                status: Some(Status::signaled(15)),
                during: Phase::Attempt,
            },
        };
        assert_eq!(
            json(&event),
            "{\"event\":\"gave_up\",\"attempt\":1,\"max_attempts\":null,\"exit_code\":143,\"reason\":\"signal\",\"command_exit_code\":143,\"command_signal\":\"SIGTERM\",\"signal\":\"SIGTERM\"}\n"
        );
    }

    #[test]
    fn json_escapes_messages() {
        assert_eq!(escape("a \"b\"\\\n"), "a \\\"b\\\"\\\\\\u000a");
    }

    #[test]
    fn github_annotations_escape_and_pick_levels() {
        assert_eq!(
            github(&retrying()),
            "::warning title=retry::attempt 2/5 failed with exit code 22; sleep: 692 ms (full jitter, up to 2000 ms)\n"
        );
        let gave_up = Event::GaveUp {
            attempt: 1,
            limit: Attempts::Limit(5),
            reason: GiveUp::Spawn {
                code: 127,
                message: "cannot run `a%b\nc`".into(),
            },
        };
        assert_eq!(
            github(&gave_up),
            "::error title=retry::cannot run `a%25b%0Ac`\n"
        );
    }

    #[test]
    fn success_after_retries_is_a_summary() {
        let event = Event::Succeeded {
            attempt: 3,
            limit: Attempts::Limit(5),
            status: Status::exited(0),
            slept: Duration::from_millis(1234),
        };
        assert_eq!(
            text(&event),
            "retry: attempt 3/5 succeeded; 3 attempts, 1234 ms spent sleeping\n"
        );
        assert_eq!(
            github(&event),
            "::notice title=retry::attempt 3/5 succeeded; 3 attempts, 1234 ms spent sleeping\n"
        );
        assert_eq!(
            json(&event),
            "{\"event\":\"succeeded\",\"attempt\":3,\"max_attempts\":5,\"exit_code\":0,\"slept_ms\":1234}\n"
        );
    }

    #[test]
    fn first_try_success_is_silent_unless_verbose() {
        let ok = |attempt| Event::Succeeded {
            attempt,
            limit: Attempts::Limit(3),
            status: Status::exited(0),
            slept: Duration::ZERO,
        };
        let normal = Log::new(LogFormat::Text, Verbosity::Normal);
        assert!(!normal.shows(&ok(1)) && normal.shows(&ok(2)));
        assert!(Log::new(LogFormat::Text, Verbosity::Verbose).shows(&ok(1)));
        assert!(!Log::new(LogFormat::Text, Verbosity::Quiet).shows(&retrying()));
    }

    fn hinted(asked_ms: u64) -> Event {
        let Event::Retrying {
            attempt,
            limit,
            status,
            sleep,
            jitter,
            ..
        } = retrying()
        else {
            unreachable!()
        };
        let drawn = sleep.duration;
        let asked = Duration::from_millis(asked_ms);
        Event::Retrying {
            attempt,
            limit,
            status,
            sleep: Sleep {
                duration: drawn.max(asked),
                ..sleep
            },
            jitter,
            hint: Some(crate::run::hint::Hinted { asked, drawn }),
        }
    }

    #[test]
    fn a_sleep_the_server_asked_for_says_so() {
        assert_eq!(
            text(&hinted(30_000)),
            "retry: attempt 2/5 failed with exit code 22; sleep: 30000 ms (server asked for 30s)\n"
        );
        assert!(json(&hinted(30_000)).ends_with(
            "\"sleep_ms\":30000,\"ceiling_ms\":2000,\"strategy\":\"full\",\"source\":\"hint\",\"hint_ms\":30000,\"drawn_ms\":692}\n"
        ));
        // A hint shorter than the draw: the draw, and what was asked.
        assert_eq!(
            text(&hinted(200)),
            "retry: attempt 2/5 failed with exit code 22; sleep: 692 ms (full jitter, up to 2000 ms; server asked for 200ms)\n"
        );
        assert!(
            json(&hinted(200))
                .ends_with("\"source\":\"strategy\",\"hint_ms\":200,\"drawn_ms\":692}\n")
        );
    }

    #[test]
    fn budget_and_hint_endings_and_warnings() {
        let gave_up = |reason| Event::GaveUp {
            attempt: 3,
            limit: Attempts::Limit(5),
            reason,
        };
        let budget = gave_up(GiveUp::Budget(Status::exited(7)));
        assert_eq!(
            text(&budget),
            "retry: giving up after attempt 3/5 failed with exit code 7: the shared --budget cannot pay for a retry\n"
        );
        assert_eq!(
            json(&budget),
            "{\"event\":\"gave_up\",\"attempt\":3,\"max_attempts\":5,\"exit_code\":7,\"reason\":\"budget\",\"command_exit_code\":7}\n"
        );
        let hint = gave_up(GiveUp::HintTooLong {
            status: Status::exited(22),
            hint_ms: 120_000,
        });
        assert!(
            json(&hint)
                .ends_with("\"reason\":\"hint\",\"command_exit_code\":22,\"hint_ms\":120000}\n")
        );
        let warning = Event::Warning {
            attempt: 1,
            message: "a \"b\"".into(),
        };
        assert_eq!(text(&warning), "retry: warning: a \"b\"\n");
        assert_eq!(
            json(&warning),
            "{\"event\":\"warning\",\"attempt\":1,\"message\":\"a \\\"b\\\"\"}\n"
        );
        assert_eq!(
            github(&warning),
            "::warning title=retry::warning: a \"b\"\n"
        );
    }
}
