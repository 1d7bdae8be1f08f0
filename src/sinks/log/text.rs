//! Text lines: one readable line per event, `retry: SUBJECT: MESSAGE`, and
//! the words of each event (`message`), which GitHub annotations share.
//!
//! Each is written into a buffer the caller keeps (`fmt::Write`), never a
//! String of its own: a run's lines allocate nothing once the buffer has
//! grown to the longest (issue 26).

use std::fmt::{self, Display, Write};

use crate::duration::millis;
use crate::events::{Class, Event, GiveUp, Phase, RanOut};
use crate::policy::Attempts;
use crate::run::hint::Hinted;
use crate::sinks::log::Context;
use crate::sinks::name::CommandName;
use crate::status::{Code, signal_name};
use crate::strategy::{Jitter, Sleep};

/// Sleeps from this long on are also shown in seconds (or minutes):
/// `18942 ms` takes a moment to read, `19 s` does not.
const HUMAN_FROM_MS: u128 = 10_000;

/// One line, in the spirit of the AWS article's sample output, with the
/// command as its subject (`program: subject: message`, as `cp` and `grep`
/// write theirs): `retry: curl: attempt 2/5 failed with exit code 22;
/// sleep: 692 ms (full jitter, up to 2000 ms)`, appended to `out`.
pub fn write_line(event: &Event, context: &Context, out: &mut String) {
    // Writing to a String cannot fail.
    let _ = (|| -> fmt::Result {
        out.write_str("retry: ")?;
        match event {
            // The command could not start (the message names it), or retry
            // itself failed (the message names the option): no subject.
            Event::GaveUp {
                reason: GiveUp::Spawn { .. } | GiveUp::Failed(_),
                ..
            } => {}
            _ => write!(out, "{}: ", context.name.subject())?,
        }
        write_message(event, context.name, out)?;
        out.write_char('\n')
    })();
}

/// `692 ms`, or `18942 ms (19 s)` for a long one.
struct MsText(u128);

impl Display for MsText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0;
        match human(ms) {
            Some(human) => write!(f, "{ms} ms ({human})"),
            None => write!(f, "{ms} ms"),
        }
    }
}

/// A long duration in the largest units that keep it readable, rounded:
/// `19 s`, `2 min 5 s`, `1 h 30 min`. `None` below `HUMAN_FROM_MS`.
fn human(ms: u128) -> Option<Human> {
    if ms < HUMAN_FROM_MS {
        return None;
    }
    let secs = (ms + 500) / 1000;
    Some(match secs {
        ..60 => Human(secs, 0, ("s", "")),
        60..3600 => Human(secs / 60, secs % 60, ("min", "s")),
        _ => {
            let mins = (secs + 30) / 60;
            Human(mins / 60, mins % 60, ("h", "min"))
        }
    })
}

/// A duration in seconds, to the millisecond, without trailing zeros:
/// `12.345 s`, `30 s`, `0.5 s`.
struct Seconds(std::time::Duration);

impl Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = millis(self.0);
        let (secs, rest) = (ms / 1000, ms % 1000);
        let (mut rest, mut width) = (rest, 3);
        while rest != 0 && rest % 10 == 0 {
            (rest, width) = (rest / 10, width - 1);
        }
        match rest {
            0 => write!(f, "{secs} s"),
            _ => write!(f, "{secs}.{rest:0width$} s"),
        }
    }
}

/// A big unit and what is left in the small one (`human`).
struct Human(u128, u128, (&'static str, &'static str));

impl Display for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Human(big, small, units) = self;
        match small {
            0 => write!(f, "{big} {}", units.0),
            _ => write!(f, "{big} {} {small} {}", units.0, units.1),
        }
    }
}

/// `sleep: 692 ms (full jitter, up to 2000 ms)`, the seeds' wording; a
/// long sleep adds its human form: `sleep: 18942 ms (19 s; full jitter, …)`.
fn sleep_text(sleep: &Sleep, jitter: &Jitter, out: &mut impl Write) -> fmt::Result {
    let ms = millis(sleep.duration);
    write!(out, "sleep: {ms} ms (")?;
    if let Some(human) = human(ms) {
        write!(out, "{human}; ")?;
    }
    write!(
        out,
        "{}, up to {} ms)",
        jitter.label(),
        millis(sleep.ceiling)
    )
}

/// The sleep a server's hint had a say in: `sleep: 30000 ms (server asked
/// for 30 s)` when it set it, the draw's words and the hint when it did not.
fn hinted_sleep_text(
    sleep: &Sleep,
    jitter: &Jitter,
    hint: &Hinted,
    out: &mut impl Write,
) -> fmt::Result {
    let asked = millis(hint.asked);
    let asked = |out: &mut dyn Write| match human(asked) {
        Some(human) => write!(out, "{human}"),
        None => write!(out, "{asked} ms"),
    };
    if hint.asked >= hint.drawn {
        write!(
            out,
            "sleep: {} ms (server asked for ",
            millis(sleep.duration)
        )?;
        asked(out)?;
        out.write_char(')')
    } else {
        sleep_text(sleep, jitter, out)?;
        out.write_str(", server asked for ")?;
        asked(out)
    }
}

/// What happened, in words, without the `retry: ` prefix and the subject,
/// written to `out`.
pub(crate) fn write_message(
    event: &Event,
    name: &CommandName,
    out: &mut impl Write,
) -> fmt::Result {
    match event {
        // A whole number of milliseconds (as drawn), in seconds for a
        // reader: `splay: 12.345 s before the first attempt (up to 30 s)`.
        Event::Splay { delay, max, stable } => {
            write!(
                out,
                "splay: {} before the first attempt ({}up to {})",
                Seconds(*delay),
                if *stable { "this host's slot, " } else { "" },
                Seconds(*max)
            )
        }
        // `attempt 7/unlimited ran 3 h 12 min; backoff reset: …`.
        Event::Reset {
            attempt,
            limit,
            ran,
        } => {
            write!(out, "attempt {attempt}/{limit} ran ")?;
            let ms = millis(*ran);
            match human(ms) {
                Some(human) => write!(out, "{human}")?,
                None => write!(out, "{ms} ms")?,
            }
            write!(
                out,
                "; backoff reset (--reset-after): the next attempt is 1/{limit}"
            )
        }
        // The first names the command in full: what `-v` adds.
        Event::Starting { attempt: 1, limit } => {
            write!(out, "attempt 1/{limit} starting: {}", name.full)
        }
        Event::Starting { attempt, limit } => write!(out, "attempt {attempt}/{limit} starting"),
        // A throttled failure says so, and why (`attempt 2/5 throttled
        // (HTTP 429), exit code 22; sleep: …`); a transient one as ever.
        Event::Retrying {
            attempt,
            limit,
            status,
            class,
            sleep,
            jitter,
            hint,
            ..
        } => {
            match class {
                Class::Transient => write!(
                    out,
                    "attempt {attempt}/{limit} failed with {}; ",
                    status.describe()
                )?,
                Class::Throttled(evidence) => write!(
                    out,
                    "attempt {attempt}/{limit} throttled ({}), {}; ",
                    evidence.words(),
                    status.describe()
                )?,
            }
            match hint {
                Some(hint) => hinted_sleep_text(sleep, jitter, hint, out),
                None => sleep_text(sleep, jitter, out),
            }
        }
        Event::Rejected {
            attempt,
            limit,
            throttle,
            probability,
            sleep,
            jitter,
        } => {
            write!(
                out,
                "attempt {attempt}/{limit} not run: --throttle {throttle} rejected it ({}); ",
                Probability(*probability)
            )?;
            sleep_text(sleep, jitter, out)
        }
        Event::Warning { message, .. } => write!(out, "warning: {message}"),
        Event::Succeeded {
            attempt: 1, limit, ..
        } => write!(out, "attempt 1/{limit} succeeded"),
        // The summary of a run that needed retries.
        Event::Succeeded {
            attempt,
            limit,
            slept_ms,
            ..
        } => write!(
            out,
            "attempt {attempt}/{limit} succeeded; {attempt} attempts, {} spent sleeping",
            MsText(*slept_ms)
        ),
        Event::NoPreset(why) => write!(out, "no preset judges failures: {why}"),
        // The metrics' alone: never shown (`Log::shows`).
        Event::CircuitSeen { .. } | Event::ThrottleSeen { .. } | Event::Ran { .. } => Ok(()),
        Event::Preset(line) => {
            write!(
                out,
                "the {} preset judges failures, {}",
                line.name, line.why
            )?;
            match line.chosen {
                true => write!(out, " (--preset none turns this off)"),
                false => Ok(()),
            }
        }
        Event::HookFailed {
            attempt,
            limit,
            status,
            error: None,
        } => write!(
            out,
            "--on-retry command failed with {} after attempt {attempt}/{limit}; retrying anyway",
            status.describe()
        ),
        Event::HookFailed {
            attempt,
            limit,
            status,
            error: Some(error),
        } => write!(
            out,
            "--on-retry command could not start ({error}; exit code {}) after attempt \
             {attempt}/{limit}; retrying anyway",
            status.code
        ),
        // The reason's name ends the line, as JSON's `reason` gives it.
        Event::GaveUp {
            attempt,
            limit,
            reason,
            ..
        } => {
            giving_up(*attempt, limit, reason, out)?;
            write!(out, " (reason: {})", reason.reason().name())
        }
    }
}

/// Why the run gave up, in words.
fn giving_up(attempt: u32, limit: &Attempts, reason: &GiveUp, out: &mut impl Write) -> fmt::Result {
    match reason {
        GiveUp::Attempts(s) if attempt == 1 => {
            write!(
                out,
                "giving up after 1 attempt: it failed with {}",
                s.describe()
            )
        }
        GiveUp::Attempts(s) => {
            write!(
                out,
                "giving up after {attempt} attempts: the last failed with {}",
                s.describe()
            )
        }
        // The preset's rule by its label, else the flag.
        GiveUp::Fatal(s, label) => write!(
            out,
            "giving up after attempt {attempt}/{limit}: {} is fatal ({})",
            s.describe(),
            label.as_deref().unwrap_or("--fatal-on")
        ),
        GiveUp::NotRetryable(s, label) => write!(
            out,
            "giving up after attempt {attempt}/{limit}: {} is not retryable ({})",
            s.describe(),
            label.as_deref().unwrap_or("--retry-on")
        ),
        // What matched, and the preset's rule that it matched by its label.
        GiveUp::OutputStop {
            status,
            line,
            label,
        } => {
            write!(
                out,
                "giving up after attempt {attempt}/{limit} ({}): ",
                status.describe()
            )?;
            output_stop(line.as_deref(), label.as_deref(), out)
        }
        GiveUp::MaxTimeReached(_) => {
            write!(
                out,
                "giving up: --max-time reached during attempt {attempt}/{limit}"
            )
        }
        GiveUp::MaxTimeAhead { status, sleep_ms } => write!(
            out,
            "giving up after attempt {attempt}/{limit} failed with {}: a sleep of {} would end past --max-time",
            status.describe(),
            MsText(*sleep_ms)
        ),
        GiveUp::HintTooLong {
            status,
            hint_ms,
            limit_ms,
        } => write!(
            out,
            "giving up after attempt {attempt}/{limit} failed with {}: the server asked to wait {}, longer than the {} retry waits for a server without --max-time",
            status.describe(),
            MsText(*hint_ms),
            MsText(*limit_ms)
        ),
        GiveUp::Budget(status) => write!(
            out,
            "giving up after attempt {attempt}/{limit} failed with {}: the shared --budget cannot pay for a retry",
            status.describe()
        ),
        GiveUp::MaxTimeInHook(_) => write!(
            out,
            "giving up: --max-time reached during the --on-retry command after attempt {attempt}/{limit}"
        ),
        GiveUp::Signal { signal, during, .. } => {
            write!(out, "interrupted by {} ", signal_name(*signal))?;
            during_text(*during, attempt, limit, out)?;
            // Windows' 0xC000013A in hex, as its other codes in the log.
            write!(out, "; exiting with {}", Code(reason.exit_code()))
        }
        GiveUp::Spawn { message, .. } | GiveUp::CircuitOpen(message, _) => out.write_str(message),
        GiveUp::Failed(message) => write!(out, "{message}; exiting with {}", reason.exit_code()),
        GiveUp::StdoutClosed => write!(
            out,
            "stdout was closed before the output of attempt {attempt}/{limit} was written"
        ),
        GiveUp::Rejected {
            throttle,
            probability,
            status,
            ran_out,
            ..
        } => {
            write!(
                out,
                "giving up after attempt {attempt}/{limit}: --throttle {throttle} rejected it ({}) and ",
                Probability(*probability)
            )?;
            match ran_out {
                RanOut::Attempts => out.write_str("no attempts are left")?,
                RanOut::MaxTime { sleep_ms } => write!(
                    out,
                    "a sleep of {} would end past --max-time",
                    MsText(*sleep_ms)
                )?,
                RanOut::Budget => out.write_str("the shared --budget cannot pay for another")?,
            }
            match status {
                Some(status) => write!(
                    out,
                    "; the last attempt that ran failed with {}",
                    status.describe()
                ),
                None => out.write_str("; it rejected every attempt: the command never ran"),
            }
        }
    }
}

/// A rejection's probability in words: `rejection probability 83.2%`.
struct Probability(f64);

impl Display for Probability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rejection probability {:.1}%", self.0 * 100.0)
    }
}

/// What `--stop-if-output` matched, and the preset's rule that it matched
/// by its label.
fn output_stop(line: Option<&str>, label: Option<&str>, out: &mut impl Write) -> fmt::Result {
    match (line, label) {
        (Some(line), Some(label)) => write!(out, "`{line}` is permanent ({label})"),
        (Some(line), None) => write!(out, "its output matched --stop-if-output: `{line}`"),
        (None, Some(label)) => write!(out, "its output matched {label}"),
        (None, None) => out.write_str("its output matched --stop-if-output"),
    }
}

/// Where in the run a signal came.
fn during_text(during: Phase, attempt: u32, limit: &Attempts, out: &mut impl Write) -> fmt::Result {
    match during {
        Phase::Attempt => write!(out, "during attempt {attempt}/{limit}"),
        Phase::Hook => write!(
            out,
            "during the --on-retry command after attempt {attempt}/{limit}"
        ),
        Phase::StartHook => out.write_str("during the --on-start command, before attempt 1"),
        Phase::Splay => out.write_str("during --splay's sleep, before attempt 1"),
        Phase::Sleep => write!(out, "during the sleep after attempt {attempt}/{limit}"),
        Phase::Output => write!(out, "while writing the output of attempt {attempt}/{limit}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sinks::log::fixtures::*;
    use std::time::Duration;

    #[test]
    fn text_retry_line_names_the_command_in_the_article_style() {
        assert_eq!(
            text_of(&retrying()),
            "retry: curl: attempt 2/5 failed with exit code 22; sleep: 692 ms (full jitter, up to 2000 ms)\n"
        );
    }

    #[test]
    fn a_rejected_attempt_and_a_run_the_throttle_ended_say_why_in_one_line() {
        use crate::events::RanOut;
        assert_eq!(
            text_of(&rejected()),
            "retry: curl: attempt 3/5 not run: --throttle api rejected it (rejection probability \
             83.2%); sleep: 692 ms (full jitter, up to 4000 ms)\n"
        );
        assert_eq!(
            text_of(&gave_up_rejected(None, RanOut::Attempts)),
            "retry: curl: giving up after attempt 5/5: --throttle api rejected it (rejection \
             probability 97.0%) and no attempts are left; it rejected every attempt: the command \
             never ran (reason: throttle)\n"
        );
        let ran = gave_up_rejected(Some(Status::exited(22)), RanOut::MaxTime { sleep_ms: 1500 });
        assert!(
            text_of(&ran).ends_with(
                ") and a sleep of 1500 ms would end past --max-time; the last attempt that ran \
                 failed with exit code 22 (reason: throttle)\n"
            ),
            "{}",
            text_of(&ran)
        );
        let budget = text_of(&gave_up_rejected(None, RanOut::Budget));
        assert!(
            budget.contains(") and the shared --budget cannot pay for another; "),
            "{budget}"
        );
        let github = github_of(&rejected());
        assert!(
            github.starts_with(
                "::warning title=retry%3A curl -fsS example.com/health::attempt 3/5 not run: "
            ),
            "{github}"
        );
    }

    #[test]
    fn a_throttled_retry_says_so_and_why_in_text_and_github_alike() {
        assert_eq!(
            text_of(&throttled()),
            "retry: curl: attempt 2/5 throttled (HTTP 429), exit code 22; sleep: 692 ms (full jitter, up to 2000 ms)\n"
        );
        let github = github_of(&throttled());
        assert!(
            github.contains("::attempt 2/5 throttled (HTTP 429), exit code 22; sleep: 692 ms"),
            "{github}"
        );
        // A hint's: its words, and the sleep the server asked for.
        assert_eq!(
            text_of(&hinted(30_000)),
            "retry: curl: attempt 2/5 throttled (server asked to wait), exit code 22; \
             sleep: 30000 ms (server asked for 30 s)\n"
        );
    }

    #[test]
    fn a_hook_that_failed_gives_its_status_and_one_that_could_not_start_says_why() {
        let failed = |status, error| Event::HookFailed {
            attempt: 2,
            limit: Attempts::Limit(5),
            status,
            error,
        };
        assert_eq!(
            text_of(&failed(Status::exited(7), None)),
            "retry: curl: --on-retry command failed with exit code 7 after attempt 2/5; retrying anyway\n"
        );
        let why = "cannot run `/bin/sh`: Argument list too long".to_owned();
        assert_eq!(
            text_of(&failed(Status::exited(126), Some(why.clone()))),
            "retry: curl: --on-retry command could not start (cannot run `/bin/sh`: Argument list \
             too long; exit code 126) after attempt 2/5; retrying anyway\n"
        );
        let json = json_of(&failed(Status::exited(126), Some(why)));
        assert!(
            json.contains(r#""exit_code":126"#)
                && json.contains(r#""start_error":"cannot run `/bin/sh`: Argument list too long""#),
            "{json}"
        );
    }

    #[test]
    fn a_splay_and_a_reset_say_how_long_in_words() {
        let splay = |ms, stable| Event::Splay {
            delay: Duration::from_millis(ms),
            max: Duration::from_secs(30),
            stable,
        };
        assert_eq!(
            text_of(&splay(12_340, false)),
            "retry: curl: splay: 12.34 s before the first attempt (up to 30 s)\n"
        );
        assert_eq!(
            text_of(&splay(7, true)),
            "retry: curl: splay: 0.007 s before the first attempt (this host's slot, up to 30 s)\n"
        );
        let reset = |ran| Event::Reset {
            attempt: 7,
            limit: Attempts::Unlimited,
            ran,
        };
        assert_eq!(
            text_of(&reset(Duration::from_secs(3 * 3600 + 12 * 60 + 5))),
            "retry: curl: attempt 7/unlimited ran 3 h 12 min; backoff reset (--reset-after): \
             the next attempt is 1/unlimited\n"
        );
        assert_eq!(
            text_of(&reset(Duration::from_millis(2500))),
            "retry: curl: attempt 7/unlimited ran 2500 ms; backoff reset (--reset-after): \
             the next attempt is 1/unlimited\n"
        );
        // Interrupted in it: before any attempt.
        let interrupted = Event::GaveUp {
            attempt: 0,
            limit: Attempts::Limit(5),
            reason: GiveUp::Signal {
                signal: 15,
                status: None,
                during: Phase::Splay,
            },
            took: None,
        };
        let line = text_of(&interrupted);
        assert!(
            line.contains(" during --splay's sleep, before attempt 1; "),
            "{line}"
        );
        assert!(line.ends_with("(reason: signal)\n"), "{line}");
    }

    #[test]
    fn verbose_names_the_whole_command_once() {
        let starting = |attempt| Event::Starting {
            attempt,
            limit: Attempts::Limit(5),
        };
        assert_eq!(
            text_of(&starting(1)),
            "retry: curl: attempt 1/5 starting: /usr/bin/curl -fsS https://example.com/health\n"
        );
        assert_eq!(text_of(&starting(2)), "retry: curl: attempt 2/5 starting\n");
    }

    #[test]
    fn an_interrupt_names_retrys_exit_code_as_the_platform_writes_it() {
        let interrupted = Event::GaveUp {
            attempt: 1,
            limit: Attempts::Limit(5),
            reason: GiveUp::Signal {
                signal: crate::platform::SIGINT,
                status: None,
                during: Phase::Sleep,
            },
            took: None,
        };
        // 128+2 on Unix; STATUS_CONTROL_C_EXIT on Windows, in hex.
        let code = if cfg!(windows) { "0xC000013A" } else { "130" };
        let name = crate::platform::signal_name(crate::platform::SIGINT).unwrap();
        assert_eq!(
            text_of(&interrupted),
            format!(
                "retry: curl: interrupted by {name} during the sleep after attempt 1/5; exiting with {code} (reason: signal)\n"
            )
        );
    }

    #[test]
    fn a_give_up_names_the_presets_rule_and_what_it_matched() {
        let gave_up = |reason| Event::GaveUp {
            attempt: 1,
            limit: Attempts::Limit(5),
            reason,
            took: None,
        };
        let label = Some(std::sync::Arc::from("curl preset: an HTTP 4xx"));
        let line = Some(Box::from(
            "curl: (22) The requested URL returned error: 404",
        ));
        let stop = |line, label| {
            gave_up(GiveUp::OutputStop {
                status: Status::exited(22),
                line,
                label,
            })
        };
        let start = "retry: curl: giving up after attempt 1/5 (exit code 22): ";
        assert_eq!(
            text_of(&stop(line.clone(), label.clone())),
            format!(
                "{start}`curl: (22) The requested URL returned error: 404` is permanent \
                 (curl preset: an HTTP 4xx) (reason: stop_if_output)\n"
            )
        );
        // A flag's rule has no label: the flag, and what matched.
        assert_eq!(
            text_of(&stop(line.clone(), None)),
            format!(
                "{start}its output matched --stop-if-output: \
                 `curl: (22) The requested URL returned error: 404` (reason: stop_if_output)\n"
            )
        );
        assert_eq!(
            text_of(&stop(None, None)),
            format!("{start}its output matched --stop-if-output (reason: stop_if_output)\n")
        );
        // JSON adds `rule` and `matched`; the fields before stay as they were.
        let json = json_of(&stop(line, label.clone()));
        assert!(
            json.ends_with(
                r#""reason":"stop_if_output","command_exit_code":22,"rule":"curl preset: an HTTP 4xx","matched":"curl: (22) The requested URL returned error: 404"}
"#
            ),
            "{json}"
        );
        assert!(!json_of(&stop(None, None)).contains(r#""rule""#));
        let fatal = |label| gave_up(GiveUp::Fatal(Status::exited(3), label));
        assert_eq!(
            text_of(&fatal(label.clone())),
            "retry: curl: giving up after attempt 1/5: exit code 3 is fatal (curl preset: an HTTP 4xx) (reason: fatal)\n"
        );
        assert_eq!(
            text_of(&fatal(None)),
            "retry: curl: giving up after attempt 1/5: exit code 3 is fatal (--fatal-on) (reason: fatal)\n"
        );
        assert!(json_of(&fatal(label)).contains(
            r#""reason":"fatal","command_exit_code":3,"rule":"curl preset: an HTTP 4xx"}"#
        ));
        // A code outside a preset's --retry-on names the preset's list.
        let outside = |label| gave_up(GiveUp::NotRetryable(Status::exited(40), label));
        let retries = Some(std::sync::Arc::from(
            "the curl preset retries network failures",
        ));
        assert_eq!(
            text_of(&outside(retries.clone())),
            "retry: curl: giving up after attempt 1/5: exit code 40 is not retryable (the curl preset retries network failures) (reason: not_retryable)\n"
        );
        assert_eq!(
            text_of(&outside(None)),
            "retry: curl: giving up after attempt 1/5: exit code 40 is not retryable (--retry-on) (reason: not_retryable)\n"
        );
        assert!(json_of(&outside(retries)).contains(
            r#""reason":"not_retryable","command_exit_code":40,"rule":"the curl preset retries network failures"}"#
        ));
    }

    #[test]
    fn a_long_sleep_is_also_shown_in_seconds() {
        assert_eq!(
            text_of(&retrying_after(18942)),
            "retry: curl: attempt 2/5 failed with exit code 22; sleep: 18942 ms (19 s; full jitter, up to 32768 ms)\n"
        );
        // JSON keeps the milliseconds only.
        assert!(json_of(&retrying_after(18942)).contains(r#""sleep_ms":18942,"#));
        let cases = [
            (9_999, None),
            (10_000, Some("10 s")),
            (59_499, Some("59 s")),
            (59_500, Some("1 min")),
            (125_000, Some("2 min 5 s")),
            (5_400_000, Some("1 h 30 min")),
            (7_199_000, Some("2 h")),
        ];
        for (ms, want) in cases {
            assert_eq!(human(ms).map(|h| h.to_string()).as_deref(), want, "{ms} ms");
        }
    }
}
