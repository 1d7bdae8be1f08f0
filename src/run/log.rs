//! retry's own messages: text lines, JSON lines, or GitHub Actions
//! workflow commands (annotations), on stderr or in `--log-file`. Each
//! names the command. The command's output never passes through here.
//! Writes never change the exit status: a closed stderr is ignored (not
//! turned into a panic), and a `--log-file` that cannot take a line (a
//! full disk) says so once on stderr.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::duration::millis;
use crate::run::events::{Event, GiveUp, Phase};
use crate::run::hint::Hinted;
use crate::run::name::CommandName;
use crate::run::pipes;
use crate::status::{Cause, Status, signal_name};
use crate::strategy::{Jitter, Sleep};
use clap::ValueEnum;

/// Sleeps from this long on are also shown in seconds (or minutes):
/// `18942 ms` takes a moment to read, `19 s` does not.
const HUMAN_FROM_MS: u128 = 10_000;

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
    name: CommandName,
    to: Destination,
    /// When the run started: JSON's `elapsed_ms` counts from here.
    start: Instant,
    /// Whether a line was written yet: the first JSON line carries `argv`.
    named: bool,
}

/// Where retry's lines go.
pub enum Destination {
    Stderr,
    /// `--log-file`: stderr then carries only the command's own.
    File(LogFile),
}

/// `--log-file`, open. A line it cannot take (a full disk, `/dev/full`, a
/// reader gone) is dropped, but not silently: the first failure is said
/// once on stderr. The exit status stays the command's.
pub struct LogFile {
    file: File,
    /// As given: the warning names it.
    path: PathBuf,
    warned: bool,
}

impl LogFile {
    fn write(&mut self, line: &str) {
        let Err(error) = (&self.file).write_all(line.as_bytes()) else {
            return;
        };
        if !std::mem::replace(&mut self.warned, true) {
            to_stderr(format!(
                "retry: warning: cannot write to --log-file '{}': {}; \
                 lines that cannot be written are dropped\n",
                self.path.display(),
                pipes::describe(&error)
            ));
        }
    }
}

/// Writes to stderr on a line of its own, even after output that did not
/// end one; an error is ignored (a closed stderr is no reason to panic).
fn to_stderr(mut line: String) {
    if pipes::take_open_line() {
        line.insert(0, '\n');
    }
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// When an event happened, as JSON lines give it: passed in, so the
/// formatting is tested without a clock.
#[derive(Clone, Copy, Debug)]
pub struct Stamp {
    pub time: SystemTime,
    /// Since the run started.
    pub elapsed: Duration,
}

/// What a line says besides its event.
pub struct Context<'a> {
    pub name: &'a CommandName,
    pub stamp: Stamp,
    /// The run's first line: JSON adds the whole command line.
    pub first: bool,
}

/// Opens `--log-file` for appending; created readable by its owner only,
/// as the command line it records may hold a token. Never waits: a FIFO
/// without a reader, or what cannot take appended lines, is refused, and
/// so is a symlink another user owns (`platform::append` has the rules).
pub fn open(path: &Path) -> std::io::Result<LogFile> {
    Ok(LogFile {
        file: crate::platform::append::open(path)?,
        path: path.to_owned(),
        warned: false,
    })
}

impl Log {
    pub fn new(
        format: LogFormat,
        verbosity: Verbosity,
        name: CommandName,
        to: Destination,
    ) -> Self {
        Self {
            format,
            verbosity,
            name,
            to,
            start: Instant::now(),
            named: false,
        }
    }

    pub fn emit(&mut self, event: &Event) {
        if !self.shows(event) {
            return;
        }
        let context = Context {
            name: &self.name,
            stamp: Stamp {
                time: SystemTime::now(),
                elapsed: self.start.elapsed(),
            },
            first: !self.named,
        };
        let line = match self.format {
            LogFormat::Json => json(event, &context),
            LogFormat::Github => github(event, &context),
            // `auto` is resolved by config; text is its fallback anyway.
            LogFormat::Text | LogFormat::Auto => text(event, &context),
        };
        self.named = true;
        // One write per event, so lines from retry never interleave mid-line.
        match &mut self.to {
            Destination::Stderr => to_stderr(line),
            Destination::File(file) => file.write(&line),
        }
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
            // Advice for a reader: JSON lines record what happened.
            Event::PresetKnown { .. } => self.format != LogFormat::Json,
        }
    }
}

/// One line, in the spirit of the AWS article's sample output, with the
/// command as its subject (`program: subject: message`, as `cp` and `grep`
/// write theirs): `retry: curl: attempt 2/5 failed with exit code 22;
/// sleep: 692 ms (full jitter, up to 2000 ms)`.
pub fn text(event: &Event, context: &Context) -> String {
    match event {
        // The command could not start (the message names it), or retry
        // itself failed (the message names the option): no subject.
        Event::GaveUp {
            reason: GiveUp::Spawn { .. } | GiveUp::Failed(_),
            ..
        } => format!("retry: {}\n", message(event, context.name)),
        _ => format!(
            "retry: {}: {}\n",
            context.name.subject(),
            message(event, context.name)
        ),
    }
}

/// GitHub Actions annotations: a retried failure or a failed hook is a
/// warning, giving up is an error, a success after retries a notice. The
/// title names the command, so a job's annotations say which step failed.
/// https://docs.github.com/actions/reference/workflow-commands-for-github-actions
pub fn github(event: &Event, context: &Context) -> String {
    let level = match event {
        Event::Starting { .. } => return text(event, context),
        Event::Retrying { .. } | Event::HookFailed { .. } | Event::Warning { .. } => "warning",
        Event::Succeeded { .. } => "notice",
        Event::GaveUp { .. } => "error",
        Event::PresetKnown { .. } => "notice",
    };
    let title = format!("retry: {}", context.name.short);
    format!(
        "::{level} title={}::{}\n",
        escape_property(&title),
        escape_github(&message(event, context.name))
    )
}

/// A workflow command's message ends at a newline, and `%` starts an escape.
fn escape_github(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property (the title) also ends at `,` and `:`.
fn escape_property(text: &str) -> String {
    escape_github(text).replace(':', "%3A").replace(',', "%2C")
}

/// `692 ms`, or `18942 ms (19 s)` for a long one.
fn ms_text(ms: u128) -> String {
    match human(ms) {
        Some(human) => format!("{ms} ms ({human})"),
        None => format!("{ms} ms"),
    }
}

/// A long duration in the largest units that keep it readable, rounded:
/// `19 s`, `2 min 5 s`, `1 h 30 min`. `None` below `HUMAN_FROM_MS`.
fn human(ms: u128) -> Option<String> {
    if ms < HUMAN_FROM_MS {
        return None;
    }
    let secs = (ms + 500) / 1000;
    let (big, small, units) = match secs {
        ..60 => return Some(format!("{secs} s")),
        60..3600 => (secs / 60, secs % 60, ("min", "s")),
        _ => {
            let mins = (secs + 30) / 60;
            (mins / 60, mins % 60, ("h", "min"))
        }
    };
    Some(match small {
        0 => format!("{big} {}", units.0),
        _ => format!("{big} {} {small} {}", units.0, units.1),
    })
}

/// `sleep: 692 ms (full jitter, up to 2000 ms)`, the seeds' wording; a
/// long sleep adds its human form: `sleep: 18942 ms (19 s; full jitter, …)`.
fn sleep_text(sleep: &Sleep, jitter: &Jitter) -> String {
    let ms = millis(sleep.duration);
    let human = human(ms).map(|h| format!("{h}; ")).unwrap_or_default();
    format!(
        "sleep: {ms} ms ({human}{}, up to {} ms)",
        jitter.label(),
        millis(sleep.ceiling)
    )
}

/// The sleep a server's hint had a say in: `sleep: 30000 ms (server asked
/// for 30 s)` when it set it, the draw's words and the hint when it did not.
fn hinted_sleep_text(sleep: &Sleep, jitter: &Jitter, hint: &Hinted) -> String {
    let asked = millis(hint.asked);
    let asked = human(asked).unwrap_or_else(|| format!("{asked} ms"));
    if hint.asked >= hint.drawn {
        format!(
            "sleep: {} ms (server asked for {asked})",
            millis(sleep.duration)
        )
    } else {
        format!("{}, server asked for {asked}", sleep_text(sleep, jitter))
    }
}

/// What happened, in words, without the `retry: ` prefix and the subject.
fn message(event: &Event, name: &CommandName) -> String {
    match event {
        // The first names the command in full: what `-v` adds.
        Event::Starting { attempt: 1, limit } => {
            format!("attempt 1/{limit} starting: {}", name.full)
        }
        Event::Starting { attempt, limit } => format!("attempt {attempt}/{limit} starting"),
        Event::Retrying {
            attempt,
            limit,
            status,
            sleep,
            jitter,
            hint,
        } => format!(
            "attempt {attempt}/{limit} failed with {}; {}",
            status.describe(),
            match hint {
                Some(hint) => hinted_sleep_text(sleep, jitter, hint),
                None => sleep_text(sleep, jitter),
            }
        ),
        Event::Warning { message, .. } => format!("warning: {message}"),
        Event::Succeeded {
            attempt: 1, limit, ..
        } => format!("attempt 1/{limit} succeeded"),
        // The summary of a run that needed retries.
        Event::Succeeded {
            attempt,
            limit,
            slept_ms,
            ..
        } => format!(
            "attempt {attempt}/{limit} succeeded; {attempt} attempts, {} spent sleeping",
            ms_text(*slept_ms)
        ),
        Event::PresetKnown { preset, program } => format!(
            "--preset {preset} knows {program}'s transient failures \
             (retry --presets shows its rules)"
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
                "giving up after attempt {attempt}/{limit} failed with {}: a sleep of {} would end past --max-time",
                status.describe(),
                ms_text(*sleep_ms)
            ),
            GiveUp::HintTooLong { status, hint_ms } => format!(
                "giving up after attempt {attempt}/{limit} failed with {}: the server asked to wait {}, longer than --cap",
                status.describe(),
                ms_text(*hint_ms)
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
/// lines, `attempt_failed` and `sleep`, so each event has one shape. Every
/// line starts with the event, its time (RFC 3339, UTC), the milliseconds
/// since the run started and the command's short name; the run's first
/// line adds the command's words as `argv`.
pub fn json(event: &Event, context: &Context) -> String {
    let mut out = String::new();
    let mut first = context.first;
    let mut head = |out: &mut String, kind: &str| {
        let _ = write!(
            out,
            r#"{{"event":"{kind}","time":"{}","elapsed_ms":{},"command":"{}""#,
            humantime::format_rfc3339_millis(context.stamp.time),
            millis(context.stamp.elapsed),
            escape(&context.name.short)
        );
        if std::mem::take(&mut first) {
            let argv: Vec<String> = context
                .name
                .argv
                .iter()
                .map(|word| format!(r#""{}""#, escape(word)))
                .collect();
            let _ = write!(out, r#","argv":[{}]"#, argv.join(","));
        }
    };
    match event {
        // Not a JSON event (`Log::shows`).
        Event::PresetKnown { .. } => return String::new(),
        Event::Starting { attempt, limit } => {
            head(&mut out, "attempt_started");
            let _ = write!(
                out,
                r#","attempt":{attempt},"max_attempts":{}"#,
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
            head(&mut out, "attempt_failed");
            let _ = writeln!(
                out,
                r#","attempt":{attempt},"max_attempts":{},"exit_code":{}{}}}"#,
                limit_json(limit),
                status.code,
                cause_json(status, "")
            );
            head(&mut out, "sleep");
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
        }
        Event::Warning { attempt, message } => {
            head(&mut out, "warning");
            let _ = write!(
                out,
                r#","attempt":{attempt},"message":"{}""#,
                escape(message)
            );
        }
        Event::Succeeded {
            attempt,
            limit,
            status,
            slept_ms,
        } => {
            head(&mut out, "succeeded");
            let _ = write!(
                out,
                r#","attempt":{attempt},"max_attempts":{},"exit_code":{},"slept_ms":{slept_ms}"#,
                limit_json(limit),
                status.code,
            );
        }
        Event::HookFailed {
            attempt,
            limit,
            status,
        } => {
            head(&mut out, "hook_failed");
            let _ = write!(
                out,
                r#","attempt":{attempt},"max_attempts":{},"exit_code":{}{}"#,
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
            head(&mut out, "gave_up");
            let code = reason.exit_code();
            let _ = write!(
                out,
                r#","attempt":{attempt},"max_attempts":{},"exit_code":{code},"reason":"{}""#,
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
                GiveUp::Spawn { message, .. } | GiveUp::Failed(message) => {
                    let _ = write!(out, r#","message":"{}""#, escape(message));
                }
                GiveUp::HintTooLong { hint_ms, .. } => {
                    let _ = write!(out, r#","hint_ms":{hint_ms}"#);
                }
                _ => {}
            }
        }
    }
    out.push_str("}\n");
    out
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
        Cause::NotStarted(errno) => format!(
            r#","{prefix}start_error":"{}""#,
            escape(&crate::status::error_text(errno))
        ),
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
    use std::ffi::{OsStr, OsString};
    use std::time::Duration;

    fn curl() -> CommandName {
        let args: Vec<OsString> = ["-fsS", "https://example.com/health"]
            .iter()
            .map(OsString::from)
            .collect();
        CommandName::new(OsStr::new("/usr/bin/curl"), &args)
    }

    /// 2026-11-23T11:56:00.250Z, 1234 ms into the run.
    fn stamp() -> Stamp {
        Stamp {
            time: SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_434_960_250),
            elapsed: Duration::from_micros(1_234_400),
        }
    }

    fn at(name: &CommandName, first: bool) -> Context<'_> {
        Context {
            name,
            stamp: stamp(),
            first,
        }
    }

    fn text_of(event: &Event) -> String {
        text(event, &at(&curl(), false))
    }

    fn json_of(event: &Event) -> String {
        json(event, &at(&curl(), false))
    }

    fn github_of(event: &Event) -> String {
        github(event, &at(&curl(), false))
    }

    /// The fields every JSON line starts with, after its event.
    const HEAD: &str = r#""time":"2026-11-23T11:56:00.250Z","elapsed_ms":1234,"command":"curl""#;

    fn retrying_after(ms: u64) -> Event {
        Event::Retrying {
            attempt: 2,
            limit: Attempts::Limit(5),
            status: Status::exited(22),
            sleep: Sleep {
                duration: Duration::from_micros(ms * 1000 - 300),
                ceiling: Duration::from_millis(ms.next_power_of_two().max(2000)),
            },
            jitter: Jitter::Full,
            hint: None,
        }
    }

    fn retrying() -> Event {
        retrying_after(692)
    }

    #[test]
    fn text_retry_line_names_the_command_in_the_article_style() {
        assert_eq!(
            text_of(&retrying()),
            "retry: curl: attempt 2/5 failed with exit code 22; sleep: 692 ms (full jitter, up to 2000 ms)\n"
        );
    }

    #[test]
    fn a_script_is_quoted_as_the_subject() {
        let args = [OsString::from("-c"), OsString::from("make test")];
        let name = CommandName::new(OsStr::new("/bin/sh"), &args);
        assert!(
            text(&retrying(), &at(&name, false))
                .starts_with("retry: `make test`: attempt 2/5 failed")
        );
        // A title is no sentence: no quotes, but `:` and `,` escaped.
        assert!(
            github(&retrying(), &at(&name, false))
                .starts_with("::warning title=retry%3A make test::attempt 2/5 failed")
        );
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
            assert_eq!(human(ms).as_deref(), want, "{ms} ms");
        }
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
            text_of(&event),
            "retry: curl: attempt 1/3 failed with exit code 0 and output matching --retry-if-output (counted as exit code 1); sleep: 692 ms (full jitter, up to 2000 ms)\n"
        );
        assert!(json_of(&event).starts_with(&format!(
            "{{\"event\":\"attempt_failed\",{HEAD},\"attempt\":1,\"max_attempts\":3,\"exit_code\":1,\"output_matched\":true,\"exited_with\":0}}\n"
        )));
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
            json_of(&retrying()),
            format!(
                "{{\"event\":\"attempt_failed\",{HEAD},\"attempt\":2,\"max_attempts\":5,\"exit_code\":22}}\n\
                 {{\"event\":\"sleep\",{HEAD},\"attempt\":2,\"exit_code\":22,\"sleep_ms\":692,\"ceiling_ms\":2000,\"strategy\":\"full\",\"source\":\"strategy\"}}\n"
            )
        );
    }

    #[test]
    fn the_first_json_line_carries_the_whole_command() {
        let first = json(&retrying(), &at(&curl(), true));
        let lines: Vec<&str> = first.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "{{\"event\":\"attempt_failed\",{HEAD},\"argv\":[\"/usr/bin/curl\",\"-fsS\",\"https://example.com/health\"],\"attempt\":2,\"max_attempts\":5,\"exit_code\":22}}"
            )
        );
        // Only the first: the `sleep` line after it does not repeat it.
        assert!(!lines[1].contains("argv"), "{}", lines[1]);
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
            json_of(&event),
            format!(
                "{{\"event\":\"gave_up\",{HEAD},\"attempt\":1,\"max_attempts\":null,\"exit_code\":143,\"reason\":\"signal\",\"command_exit_code\":143,\"command_signal\":\"SIGTERM\",\"signal\":\"SIGTERM\"}}\n"
            )
        );
    }

    #[test]
    fn json_escapes_messages() {
        assert_eq!(escape("a \"b\"\\\n"), "a \\\"b\\\"\\\\\\u000a");
    }

    #[test]
    fn github_annotations_escape_and_pick_levels() {
        assert_eq!(
            github_of(&retrying()),
            "::warning title=retry%3A curl::attempt 2/5 failed with exit code 22; sleep: 692 ms (full jitter, up to 2000 ms)\n"
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
            github_of(&gave_up),
            "::error title=retry%3A curl::cannot run `a%25b%0Ac`\n"
        );
        // A spawn error names the command itself: no subject before it.
        assert_eq!(text_of(&gave_up), "retry: cannot run `a%b\nc`\n");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    #[test]
    fn success_after_retries_is_a_summary() {
        let event = |slept_ms| Event::Succeeded {
            attempt: 3,
            limit: Attempts::Limit(5),
            status: Status::exited(0),
            slept_ms,
        };
        assert_eq!(
            text_of(&event(1234)),
            "retry: curl: attempt 3/5 succeeded; 3 attempts, 1234 ms spent sleeping\n"
        );
        assert_eq!(
            github_of(&event(1234)),
            "::notice title=retry%3A curl::attempt 3/5 succeeded; 3 attempts, 1234 ms spent sleeping\n"
        );
        assert_eq!(
            json_of(&event(1234)),
            format!(
                "{{\"event\":\"succeeded\",{HEAD},\"attempt\":3,\"max_attempts\":5,\"exit_code\":0,\"slept_ms\":1234}}\n"
            )
        );
        assert!(
            text_of(&event(61_000)).ends_with("3 attempts, 61000 ms (1 min 1 s) spent sleeping\n")
        );
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
    fn first_try_success_is_silent_unless_verbose() {
        let ok = |attempt| Event::Succeeded {
            attempt,
            limit: Attempts::Limit(3),
            status: Status::exited(0),
            slept_ms: 0,
        };
        let log = |verbosity| Log::new(LogFormat::Text, verbosity, curl(), Destination::Stderr);
        let normal = log(Verbosity::Normal);
        assert!(!normal.shows(&ok(1)) && normal.shows(&ok(2)));
        assert!(log(Verbosity::Verbose).shows(&ok(1)));
        assert!(!log(Verbosity::Quiet).shows(&retrying()));
    }

    #[test]
    fn a_log_file_gets_the_lines_and_only_the_first_has_argv() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("retry.log");
        std::fs::write(&path, "before\n").unwrap();
        let file = open(&path).unwrap();
        let mut log = Log::new(
            LogFormat::Json,
            Verbosity::Normal,
            curl(),
            Destination::File(file),
        );
        log.emit(&retrying());
        log.emit(&retrying());
        let written = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = written.lines().collect();
        // Appended, four lines, the run's first alone naming argv.
        assert_eq!(lines.len(), 5, "{written}");
        assert_eq!(lines[0], "before");
        assert_eq!(written.matches("\"argv\"").count(), 1, "{written}");
        assert!(lines[1].contains("\"argv\""), "{written}");
        use std::os::unix::fs::PermissionsExt;
        let other = tempfile::tempdir().unwrap();
        let created = other.path().join("new.log");
        drop(open(&created).unwrap());
        let mode = std::fs::metadata(&created).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
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
            hint: Some(Hinted { asked, drawn }),
        }
    }

    #[test]
    fn a_sleep_the_server_asked_for_says_so() {
        assert_eq!(
            text_of(&hinted(30_000)),
            "retry: curl: attempt 2/5 failed with exit code 22; sleep: 30000 ms (server asked for 30 s)\n"
        );
        assert!(json_of(&hinted(30_000)).ends_with(
            "\"sleep_ms\":30000,\"ceiling_ms\":2000,\"strategy\":\"full\",\"source\":\"hint\",\"hint_ms\":30000,\"drawn_ms\":692}\n"
        ));
        // A hint shorter than the draw: the draw, and what was asked.
        assert_eq!(
            text_of(&hinted(200)),
            "retry: curl: attempt 2/5 failed with exit code 22; sleep: 692 ms (full jitter, up to 2000 ms), server asked for 200 ms\n"
        );
        assert!(
            json_of(&hinted(200))
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
            text_of(&budget),
            "retry: curl: giving up after attempt 3/5 failed with exit code 7: the shared --budget cannot pay for a retry\n"
        );
        assert_eq!(
            json_of(&budget),
            format!(
                "{{\"event\":\"gave_up\",{HEAD},\"attempt\":3,\"max_attempts\":5,\"exit_code\":7,\"reason\":\"budget\",\"command_exit_code\":7}}\n"
            )
        );
        let hint = gave_up(GiveUp::HintTooLong {
            status: Status::exited(22),
            hint_ms: 120_000,
        });
        assert!(
            text_of(&hint)
                .ends_with("the server asked to wait 120000 ms (2 min), longer than --cap\n")
        );
        assert!(
            json_of(&hint)
                .ends_with("\"reason\":\"hint\",\"command_exit_code\":22,\"hint_ms\":120000}\n")
        );
        let warning = Event::Warning {
            attempt: 1,
            message: "a \"b\"".into(),
        };
        assert_eq!(text_of(&warning), "retry: curl: warning: a \"b\"\n");
        assert_eq!(
            json_of(&warning),
            format!("{{\"event\":\"warning\",{HEAD},\"attempt\":1,\"message\":\"a \\\"b\\\"\"}}\n")
        );
        assert_eq!(
            github_of(&warning),
            "::warning title=retry%3A curl::warning: a \"b\"\n"
        );
    }

    #[test]
    fn a_known_preset_is_a_text_line_and_no_json_event() {
        let note = Event::PresetKnown {
            preset: "curl".into(),
            program: "curl".into(),
        };
        assert_eq!(
            text_of(&note),
            "retry: curl: --preset curl knows curl's transient failures \
             (retry --presets shows its rules)\n"
        );
        assert!(github_of(&note).starts_with("::notice title=retry%3A curl::--preset curl"));
        assert_eq!(json_of(&note), "");
        let log = |format| Log::new(format, Verbosity::Normal, curl(), Destination::Stderr);
        assert!(log(LogFormat::Text).shows(&note) && log(LogFormat::Github).shows(&note));
        assert!(!log(LogFormat::Json).shows(&note));
    }
}
