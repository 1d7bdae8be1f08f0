//! JSON lines: one object per event, each with the same head (event,
//! time, elapsed, run, pid, command) and the event's own fields.

use std::fmt::{self, Display, Write as _};

use crate::duration::millis;
use crate::escape;
use crate::events::{Event, GiveUp, RanOut};
use crate::sinks::log::Context;
use crate::status::{Cause, Status, signal_name};

/// One JSON object per line. A failed attempt that is retried gives two
/// lines, `attempt_failed` and `sleep`, so each event has one shape. Every
/// line starts with the event, its time (RFC 3339, UTC), the milliseconds
/// since the run started, the run's id and retry's pid (runs sharing a
/// log file are told apart by them) and the command's short name; the
/// run's first line adds the command's words as `argv`. An attempt's end
/// (`attempt_failed`, `succeeded`, `gave_up` when the run ended with the
/// attempt) carries how long it ran, `duration_ms`. Appended to `out`, a
/// buffer the caller keeps: no String of their own (issue 26).
pub fn write_lines(event: &Event, context: &Context, out: &mut String) {
    let mut first = context.first;
    let mut head = |out: &mut String, kind: &str| {
        write_head(out, context, std::mem::take(&mut first), kind);
    };
    match event {
        // The metrics' alone: never shown (`Log::shows`).
        Event::CircuitSeen { .. } | Event::ThrottleSeen { .. } | Event::Ran { .. } => return,
        Event::NoPreset(why) => {
            head(out, "no_preset");
            let _ = write!(out, r#","why":"{}""#, escape::json(why));
        }
        Event::Preset(line) => {
            head(out, "preset");
            let _ = write!(
                out,
                r#","preset":"{}","chosen":{},"why":"{}""#,
                escape::json(&line.name),
                line.chosen,
                escape::json(&line.why)
            );
        }
        Event::Splay { delay, max, stable } => {
            head(out, "splay");
            let _ = write!(
                out,
                r#","sleep_ms":{},"splay_ms":{},"stable":{stable}"#,
                millis(*delay),
                millis(*max),
            );
        }
        Event::Reset {
            attempt,
            limit,
            ran,
        } => {
            head(out, "backoff_reset");
            let _ = write!(
                out,
                r#","attempt":{attempt},"max_attempts":{},"duration_ms":{}"#,
                limit_json(limit),
                millis(*ran),
            );
        }
        Event::Starting { attempt, limit } => {
            head(out, "attempt_started");
            let _ = write!(
                out,
                r#","attempt":{attempt},"max_attempts":{}"#,
                limit_json(limit)
            );
        }
        Event::Retrying { .. } => attempt_failed_and_sleep(event, out, &mut head),
        // One line: the attempt did not run, so it has no status, and
        // the sleep after it is its own.
        Event::Rejected {
            attempt,
            limit,
            throttle,
            probability,
            sleep,
            jitter,
        } => {
            head(out, "attempt_rejected");
            let _ = write!(
                out,
                r#","attempt":{attempt},"max_attempts":{},"throttle":"{}","probability":{},"sleep_ms":{},"ceiling_ms":{},"strategy":"{}""#,
                limit_json(limit),
                escape::json(throttle),
                Fraction(*probability),
                millis(sleep.duration),
                millis(sleep.ceiling),
                jitter.name(),
            );
        }
        Event::Warning { attempt, message } => {
            head(out, "warning");
            let _ = write!(
                out,
                r#","attempt":{attempt},"message":"{}""#,
                escape::json(message)
            );
        }
        Event::Succeeded {
            attempt,
            limit,
            status,
            slept_ms,
            took,
        } => {
            head(out, "succeeded");
            let _ = write!(
                out,
                r#","attempt":{attempt},"max_attempts":{},"duration_ms":{},"exit_code":{},"slept_ms":{slept_ms}"#,
                limit_json(limit),
                millis(*took),
                status.code,
            );
            total_attempts(out, context, *attempt);
        }
        Event::HookFailed {
            attempt,
            limit,
            status,
            error,
        } => {
            head(out, "hook_failed");
            let _ = write!(
                out,
                r#","attempt":{attempt},"max_attempts":{},"exit_code":{}{}"#,
                limit_json(limit),
                status.code,
                cause_json(status, "")
            );
            if let Some(error) = error {
                let _ = write!(out, r#","start_error":"{}""#, escape::json(error));
            }
        }
        Event::GaveUp {
            attempt,
            limit,
            reason,
            took,
        } => {
            head(out, "gave_up");
            gave_up(out, *attempt, limit, reason, *took);
            total_attempts(out, context, *attempt);
        }
    }
    out.push_str("}\n");
}

/// The head every line starts with; the run's first adds the command's
/// words (`argv`).
fn write_head(out: &mut String, context: &Context, with_argv: bool, kind: &str) {
    let _ = write!(
        out,
        r#"{{"event":"{kind}","time":"{}","elapsed_ms":{},"run":"{}","pid":{},"command":"{}""#,
        humantime::format_rfc3339_millis(context.stamp.time),
        millis(context.stamp.elapsed),
        escape::json(context.run),
        context.pid,
        escape::json(&context.name.short)
    );
    if with_argv {
        let argv: Vec<String> = context
            .name
            .argv
            .iter()
            .map(|word| format!(r#""{}""#, escape::json(word)))
            .collect();
        let _ = write!(out, r#","argv":[{}]"#, argv.join(","));
    }
}

/// A failed attempt that is retried (`Event::Retrying`, else nothing):
/// two lines, `attempt_failed` and `sleep`, so that each event has one
/// shape. Both end with the failure's `class` (`transient`, `throttled`);
/// a throttled one's `attempt_failed` adds what showed it, `throttled_by`.
fn attempt_failed_and_sleep(
    event: &Event,
    out: &mut String,
    head: &mut impl FnMut(&mut String, &str),
) {
    let Event::Retrying {
        attempt,
        limit,
        status,
        class,
        sleep,
        jitter,
        hint,
        took,
    } = event
    else {
        return;
    };
    head(out, "attempt_failed");
    let _ = write!(
        out,
        r#","attempt":{attempt},"max_attempts":{},"duration_ms":{},"exit_code":{}{},"class":"{}""#,
        limit_json(limit),
        millis(*took),
        status.code,
        cause_json(status, ""),
        class.name()
    );
    if let crate::events::Class::Throttled(evidence) = class {
        let _ = write!(
            out,
            r#","throttled_by":"{}""#,
            escape::json(evidence.words())
        );
    }
    out.push_str("}\n");
    head(out, "sleep");
    let _ = write!(
        out,
        r#","attempt":{attempt},"exit_code":{},"sleep_ms":{},"ceiling_ms":{},"strategy":"{}","source":"{}""#,
        status.code,
        millis(sleep.duration),
        millis(sleep.ceiling),
        jitter.name(),
        match hint {
            Some(h) if h.asked >= h.drawn => "hint",
            _ => "strategy",
        },
    );
    if let Some(h) = hint {
        let (asked, drawn) = (millis(h.asked), millis(h.drawn));
        let _ = write!(out, r#","hint_ms":{asked},"drawn_ms":{drawn}"#);
    }
    let _ = write!(out, r#","class":"{}""#, class.name());
}

/// The run's end after `--reset-after` began a new streak: `attempt` is
/// the streak's, `total_attempts` the run's.
fn total_attempts(out: &mut String, context: &Context, attempt: u32) {
    if let Some(streaks) = context.streaks {
        let _ = write!(out, r#","total_attempts":{}"#, streaks.of(attempt));
    }
}

/// `gave_up`'s fields: the attempt, the reason, the command's status,
/// and what the reason adds (a signal, a message, a rule, a hint).
fn gave_up(
    out: &mut String,
    attempt: u32,
    limit: &crate::policy::Attempts,
    reason: &GiveUp,
    took: Option<std::time::Duration>,
) {
    let code = reason.exit_code();
    let _ = write!(
        out,
        r#","attempt":{attempt},"max_attempts":{}"#,
        limit_json(limit)
    );
    if let Some(took) = took {
        let _ = write!(out, r#","duration_ms":{}"#, millis(took));
    }
    let _ = write!(
        out,
        r#","exit_code":{code},"reason":"{}""#,
        reason.reason().name()
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
        GiveUp::Spawn { message, .. }
        | GiveUp::Failed(message)
        | GiveUp::CircuitOpen(message, _) => {
            let _ = write!(out, r#","message":"{}""#, escape::json(message));
        }
        // Added fields: the rule's label and what it matched.
        GiveUp::Fatal(_, Some(label)) | GiveUp::NotRetryable(_, Some(label)) => {
            let _ = write!(out, r#","rule":"{}""#, escape::json(label));
        }
        GiveUp::OutputStop { line, label, .. } => {
            if let Some(label) = label {
                let _ = write!(out, r#","rule":"{}""#, escape::json(label));
            }
            if let Some(line) = line {
                let _ = write!(out, r#","matched":"{}""#, escape::json(line));
            }
        }
        GiveUp::HintTooLong {
            hint_ms, limit_ms, ..
        } => {
            let _ = write!(out, r#","hint_ms":{hint_ms},"limit_ms":{limit_ms}"#);
        }
        GiveUp::Rejected {
            throttle,
            probability,
            ran_out,
            ..
        } => {
            let ran_out = match ran_out {
                RanOut::Attempts => "attempts",
                RanOut::MaxTime { .. } => "max_time",
                RanOut::Budget => "budget",
            };
            let _ = write!(
                out,
                r#","throttle":"{}","probability":{},"ran_out":"{ran_out}""#,
                escape::json(throttle),
                Fraction(*probability),
            );
        }
        _ => {}
    }
}

/// A probability as JSON: a number in [0, 1], to the millionth.
struct Fraction(f64);

impl Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.0.clamp(0.0, 1.0);
        write!(f, "{}", (p * 1e6).round() / 1e6)
    }
}

/// `max_attempts`: the number, or `null` for unlimited.
fn limit_json(limit: &crate::policy::Attempts) -> impl Display + '_ {
    fmt::from_fn(move |f| match limit {
        crate::policy::Attempts::Limit(n) => write!(f, "{n}"),
        crate::policy::Attempts::Unlimited => f.write_str("null"),
    })
}

/// The extra fields of a status that did not come from a plain exit.
fn cause_json<'a>(status: &'a Status, prefix: &'a str) -> impl Display + 'a {
    fmt::from_fn(move |f| match status.cause {
        Cause::Exited => Ok(()),
        Cause::Signaled(signal) => write!(f, r#","{prefix}signal":"{}""#, signal_name(signal)),
        Cause::TimedOut(_) => write!(f, r#","{prefix}timed_out":true"#),
        Cause::OutputMatched(exited) => {
            write!(
                f,
                r#","{prefix}output_matched":true,"{prefix}exited_with":{exited}"#
            )
        }
        Cause::ZeroNotSuccess => write!(f, r#","{prefix}exited_with":0"#),
        Cause::NotStarted(errno) => write!(
            f,
            r#","{prefix}start_error":"{}""#,
            escape::json(&crate::status::error_text(errno))
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sinks::log::fixtures::*;
    use crate::sinks::log::{LogFormat, written};

    #[test]
    fn a_rejected_attempt_is_one_line_and_a_run_the_throttle_ended_says_so() {
        use crate::events::RanOut;
        assert_eq!(
            json_of(&rejected()),
            format!(
                "{{\"event\":\"attempt_rejected\",{HEAD},\"attempt\":3,\"max_attempts\":5,\
                 \"throttle\":\"api\",\"probability\":0.8321,\"sleep_ms\":692,\"ceiling_ms\":4000,\
                 \"strategy\":\"full\"}}\n"
            )
        );
        let none_ran = json_of(&gave_up_rejected(None, RanOut::Attempts));
        assert!(
            none_ran.ends_with(
                r#""exit_code":75,"reason":"throttle","throttle":"api","probability":0.97,"ran_out":"attempts"}
"#
            ),
            "{none_ran}"
        );
        let ran = json_of(&gave_up_rejected(Some(Status::exited(22)), RanOut::Budget));
        assert!(
            ran.contains(r#""exit_code":22,"reason":"throttle","command_exit_code":22,"#)
                && ran.contains(r#""ran_out":"budget""#),
            "{ran}"
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
            class: Class::Transient,
            sleep,
            jitter,
            hint: None,
            took: Duration::from_millis(5),
        };
        assert_eq!(
            text_of(&event),
            "retry: curl: attempt 1/3 failed with exit code 0 and output matching --retry-if-output (counted as exit code 1); sleep: 692 ms (full jitter, up to 2000 ms)\n"
        );
        assert!(json_of(&event).starts_with(&format!(
            "{{\"event\":\"attempt_failed\",{HEAD},\"attempt\":1,\"max_attempts\":3,\"duration_ms\":5,\"exit_code\":1,\"output_matched\":true,\"exited_with\":0,\"class\":\"transient\"}}\n"
        )));
        let failing = Status::exited(3).output_matched(false);
        assert_eq!(failing.code, 3);
        assert_eq!(
            failing.describe().to_string(),
            "exit code 3 and output matching --retry-if-output"
        );
    }

    #[test]
    fn a_splay_and_a_reset_are_events_of_their_own() {
        use crate::policy::Attempts;
        use std::time::Duration;
        let splay = Event::Splay {
            delay: Duration::from_millis(12_345),
            max: Duration::from_secs(30),
            stable: true,
        };
        assert_eq!(
            json_of(&splay),
            format!(
                "{{\"event\":\"splay\",{HEAD},\"sleep_ms\":12345,\"splay_ms\":30000,\"stable\":true}}\n"
            )
        );
        let reset = Event::Reset {
            attempt: 7,
            limit: Attempts::Unlimited,
            ran: Duration::from_secs(600),
        };
        assert_eq!(
            json_of(&reset),
            format!(
                "{{\"event\":\"backoff_reset\",{HEAD},\"attempt\":7,\"max_attempts\":null,\"duration_ms\":600000}}\n"
            )
        );
        // After it, the run's end adds the whole run's count: 7 + 2.
        let mut streaks = crate::events::Streaks::default();
        streaks.observe(&reset);
        streaks.observe(&Event::Starting {
            attempt: 1,
            limit: Attempts::Unlimited,
        });
        let name = curl();
        let context = Context {
            streaks: Some(streaks),
            ..at(&name, false)
        };
        let succeeded = Event::Succeeded {
            attempt: 2,
            limit: Attempts::Unlimited,
            status: crate::status::Status::exited(0),
            slept_ms: 5,
            took: Duration::from_millis(3),
        };
        let mut line = String::new();
        write_lines(&succeeded, &context, &mut line);
        assert!(
            line.ends_with("\"attempt\":2,\"max_attempts\":null,\"duration_ms\":3,\"exit_code\":0,\"slept_ms\":5,\"total_attempts\":9}\n"),
            "{line}"
        );
        // Without a reset, no such field: the lines are as they were.
        assert!(!json_of(&succeeded).contains("total_attempts"));
    }

    #[test]
    fn json_retry_is_two_events() {
        assert_eq!(
            json_of(&retrying()),
            format!(
                "{{\"event\":\"attempt_failed\",{HEAD},\"attempt\":2,\"max_attempts\":5,\"duration_ms\":310,\"exit_code\":22,\"class\":\"transient\"}}\n\
                 {{\"event\":\"sleep\",{HEAD},\"attempt\":2,\"exit_code\":22,\"sleep_ms\":692,\"ceiling_ms\":2000,\"strategy\":\"full\",\"source\":\"strategy\",\"class\":\"transient\"}}\n"
            )
        );
    }

    #[test]
    fn a_throttled_retry_names_its_class_and_evidence() {
        assert_eq!(
            json_of(&throttled()),
            format!(
                "{{\"event\":\"attempt_failed\",{HEAD},\"attempt\":2,\"max_attempts\":5,\"duration_ms\":310,\"exit_code\":22,\"class\":\"throttled\",\"throttled_by\":\"HTTP 429\"}}\n\
                 {{\"event\":\"sleep\",{HEAD},\"attempt\":2,\"exit_code\":22,\"sleep_ms\":692,\"ceiling_ms\":2000,\"strategy\":\"full\",\"source\":\"strategy\",\"class\":\"throttled\"}}\n"
            )
        );
    }

    #[test]
    fn the_first_json_line_carries_the_whole_command() {
        let first = written(LogFormat::Json, &retrying(), &at(&curl(), true));
        let lines: Vec<&str> = first.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "{{\"event\":\"attempt_failed\",{HEAD},\"argv\":[\"/usr/bin/curl\",\"-fsS\",\"https://example.com/health\"],\"attempt\":2,\"max_attempts\":5,\"duration_ms\":310,\"exit_code\":22,\"class\":\"transient\"}}"
            )
        );
        // Only the first: the `sleep` line after it does not repeat it.
        assert!(!lines[1].contains("argv"), "{}", lines[1]);
    }

    #[test]
    #[cfg(unix)] // 128+N: Windows exits 0xC000013A
    fn json_gave_up_names_reason_and_signal() {
        let event = Event::GaveUp {
            attempt: 1,
            limit: Attempts::Unlimited,
            reason: GiveUp::Signal {
                signal: 15,
                status: Some(Status::signaled(15)),
                during: Phase::Attempt,
            },
            took: None,
        };
        assert_eq!(
            json_of(&event),
            format!(
                "{{\"event\":\"gave_up\",{HEAD},\"attempt\":1,\"max_attempts\":null,\"exit_code\":143,\"reason\":\"signal\",\"command_exit_code\":143,\"command_signal\":\"SIGTERM\",\"signal\":\"SIGTERM\"}}\n"
            )
        );
    }

    #[test]
    fn json_escapes_messages() {
        assert_eq!(
            escape::json("a \"b\"\\\n").to_string(),
            "a \\\"b\\\"\\\\\\u000a"
        );
    }

    #[test]
    fn a_sleep_the_server_asked_for_says_so() {
        assert_eq!(
            text_of(&hinted(30_000)),
            "retry: curl: attempt 2/5 throttled (server asked to wait), exit code 22; sleep: 30000 ms (server asked for 30 s)\n"
        );
        assert!(json_of(&hinted(30_000)).ends_with(
            "\"sleep_ms\":30000,\"ceiling_ms\":2000,\"strategy\":\"full\",\"source\":\"hint\",\"hint_ms\":30000,\"drawn_ms\":692,\"class\":\"throttled\"}\n"
        ));
        // A hint shorter than the draw: the draw, and what was asked.
        assert_eq!(
            text_of(&hinted(200)),
            "retry: curl: attempt 2/5 throttled (server asked to wait), exit code 22; sleep: 692 ms (full jitter, up to 2000 ms), server asked for 200 ms\n"
        );
        assert!(json_of(&hinted(200)).ends_with(
            "\"source\":\"strategy\",\"hint_ms\":200,\"drawn_ms\":692,\"class\":\"throttled\"}\n"
        ));
        assert!(
            json_of(&hinted(200))
                .contains("\"class\":\"throttled\",\"throttled_by\":\"server asked to wait\"}")
        );
    }
}
