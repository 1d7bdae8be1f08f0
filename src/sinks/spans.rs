//! A run's trace (issue 34): one span for the run and one per attempt,
//! built from its events as the log lines are, at the times their stamps
//! give, and sent once at its end to the collector the `OTEL_*`
//! variables name (`trace/` speaks the protocol). An attempt's span is the
//! child of the run's, which is the child of retry's own `TRACEPARENT`
//! when it has one; each attempt's command gets a `TRACEPARENT` naming its
//! attempt's span (the supervisor writes it from the same `Ids`), so an
//! instrumented command nests under its attempt.
//!
//! The spans follow OpenTelemetry's conventions for command-line programs
//! (semconv `cli/cli-spans`): the run is retry's own execution (kind
//! INTERNAL), an attempt is retry calling a program (kind CLIENT); both
//! carry `process.pid`, `process.executable.name` and `process.exit.code`,
//! and `process.command_args` only when `RETRY_TRACE_COMMAND_ARGS` asks,
//! since words may hold secrets (URLs' passwords are masked even then).
//! Their names are documented departures the conventions allow: the
//! command's short name for an attempt, `retry NAME` for the run.

use std::ffi::{OsStr, OsString};
use std::time::{Duration, SystemTime};

use crate::events::{Event, GiveUp, Stamped, Streaks};
use crate::status::{Cause, Status, signal_name};
use crate::trace::{self, Ids, Interrupts, Kind, Settings, Span, Value};

/// A process as its spans name it (`process.*`).
#[derive(Clone, Debug, PartialEq)]
pub struct Process {
    /// `process.executable.name`: the program's base name.
    pub name: String,
    /// `process.command_args`, when asked for: the words, URLs masked.
    pub args: Option<Vec<String>>,
}

impl Process {
    /// The command `program args`, its words kept if `with_args`.
    pub fn command(program: &OsStr, args: &[OsString], with_args: bool) -> Self {
        Self {
            name: base_name(program),
            args: with_args
                .then(|| words(std::iter::once(program).chain(args.iter().map(|a| a.as_os_str())))),
        }
    }

    /// retry itself, run as `argv`: the base name of the executable it
    /// runs from, and `argv` if `with_args`.
    pub fn own(argv: &[OsString], with_args: bool) -> Self {
        let name = std::env::current_exe()
            .map_or_else(|_| "retry".into(), |exe| base_name(exe.as_os_str()));
        Self {
            name,
            args: with_args.then(|| words(argv.iter().map(OsString::as_os_str))),
        }
    }

    fn attributes(&self, pid: Option<u32>, to: &mut Vec<(&'static str, Value)>) {
        if let Some(pid) = pid {
            to.push(("process.pid", Value::Int(i64::from(pid))));
        }
        to.push(("process.executable.name", Value::Str(self.name.clone())));
        if let Some(args) = &self.args {
            to.push(("process.command_args", Value::Strs(args.clone())));
        }
    }
}

/// A program's base name, as the conventions name an executable (without
/// Windows' `.exe`, as `GetProcessImageFileNameW`'s base name is not,
/// but as users call it).
fn base_name(program: &OsStr) -> String {
    let path = std::path::Path::new(program);
    let name = match path.extension() {
        Some(ext) if ext.eq_ignore_ascii_case("exe") => path.file_stem(),
        _ => path.file_name(),
    };
    name.unwrap_or(program).to_string_lossy().into_owned()
}

/// Words as the spans carry them: lossily UTF-8, a URL's password masked.
fn words<'a>(words: impl Iterator<Item = &'a OsStr>) -> Vec<String> {
    words
        .map(|word| {
            let word = word.to_string_lossy();
            match word.contains("://") {
                true => crate::url::mask(&word).into_owned(),
                false => word.into_owned(),
            }
        })
        .collect()
}

/// The spans of a run being gathered.
pub struct Spans {
    settings: Settings,
    ids: Ids,
    /// The command's short name (`CommandName::short`): the spans' names.
    name: String,
    /// The command, as each attempt's span names its process.
    command: Process,
    /// retry, as the run's span names its process.
    own: Process,
    /// The running attempt's process id, once it has ended (`Event::Ran`).
    pid: Option<(u32, u32)>,
    start: SystemTime,
    /// The running attempt and when it started.
    attempt: Option<(u32, SystemTime)>,
    /// The sleeps so far, as the retry lines gave them.
    slept_ms: u128,
    /// Attempt numbers restart with each streak `--reset-after` begins;
    /// the run's `retry.attempts` counts them all.
    streaks: Streaks,
    spans: Vec<Span>,
    /// The run's spans once it has ended, until they are sent.
    ended: Option<Ended>,
}

/// A run that has ended, as its export needs it.
struct Ended {
    spans: Vec<Span>,
    /// The attempt the warning names.
    attempt: u32,
    /// Whether a signal from the caller ended it.
    stopped: bool,
}

impl Spans {
    /// The spans of a run that began at `start` (its origin's time).
    pub fn new(
        settings: Settings,
        ids: Ids,
        name: &str,
        (command, own): (Process, Process),
        start: SystemTime,
    ) -> Self {
        Self {
            settings,
            ids,
            name: name.to_owned(),
            command,
            own,
            pid: None,
            start,
            attempt: None,
            slept_ms: 0,
            streaks: Streaks::default(),
            spans: Vec::new(),
            ended: None,
        }
    }

    /// Takes in one event, at the time of its stamp; at the run's end,
    /// keeps the spans for `send`.
    pub fn observe(&mut self, stamped: &Stamped) {
        let event = &stamped.event;
        self.streaks.observe(event);
        if let Some(spans) = self.gather(event, stamped.stamp.time) {
            let attempt = match event {
                Event::Succeeded { attempt, .. } | Event::GaveUp { attempt, .. } => *attempt,
                _ => 1,
            };
            let stopped = matches!(
                event,
                Event::GaveUp {
                    reason: GiveUp::Signal { .. },
                    ..
                }
            );
            self.ended = Some(Ended {
                spans,
                attempt,
                stopped,
            });
        }
    }

    /// Once the run is over: sends its spans, waiting for the collector no
    /// longer than the timeout, and less once the caller has asked retry
    /// to stop (`interrupts`); the one warning if they could not be sent.
    pub fn send(&mut self, interrupts: &impl Interrupts) -> Option<Event> {
        let ended = self.ended.take()?;
        let message = trace::export(
            &self.settings,
            &self.ids,
            &ended.spans,
            interrupts,
            ended.stopped,
        )
        .err()?;
        Some(Event::Warning {
            attempt: ended.attempt,
            message,
        })
    }

    /// Takes in one event, made at `now`; at the run's end, the run's spans.
    fn gather(&mut self, event: &Event, now: SystemTime) -> Option<Vec<Span>> {
        // A parent that was not sampled is followed: nothing is recorded,
        // though attempts still carry the context (OpenTelemetry's default
        // sampler, parent-based).
        if !self.ids.sampled {
            return None;
        }
        match event {
            Event::Starting { attempt, .. } => self.attempt = Some((*attempt, now)),
            Event::Ran { attempt, pid } => self.pid = Some((*attempt, *pid)),
            Event::Retrying {
                attempt,
                status,
                class,
                sleep,
                jitter,
                hint,
                took,
                ..
            } => {
                let mut span = self.attempt_span(*attempt, Some(*took), now, Some(*status));
                let sleep_ms = crate::duration::millis(sleep.duration);
                self.slept_ms += sleep_ms;
                span.attributes.extend([
                    ("retry.outcome", Value::Str("retry".into())),
                    ("retry.class", Value::Str(class.name().into())),
                    ("retry.sleep_ms", Value::Int(clamp(sleep_ms))),
                    ("retry.jitter", Value::Str(jitter.name().into())),
                    ("retry.sleep_from_hint", Value::Bool(hint.is_some())),
                ]);
                self.spans.push(span);
            }
            // Rejected by --throttle: a span of no length, its outcome
            // the rejection, and the sleep after it.
            Event::Rejected {
                attempt,
                throttle,
                probability,
                sleep,
                jitter,
                ..
            } => {
                let mut span = self.attempt_span(*attempt, None, now, None);
                let sleep_ms = crate::duration::millis(sleep.duration);
                self.slept_ms += sleep_ms;
                span.attributes.extend(rejected(throttle, *probability));
                span.attributes.extend([
                    ("retry.sleep_ms", Value::Int(clamp(sleep_ms))),
                    ("retry.jitter", Value::Str(jitter.name().into())),
                ]);
                self.spans.push(span);
            }
            Event::Succeeded {
                attempt,
                status,
                took,
                slept_ms,
                ..
            } => {
                let mut span = self.attempt_span(*attempt, Some(*took), now, None);
                span.attributes.extend([
                    ("process.exit.code", Value::Int(i64::from(status.code))),
                    ("retry.outcome", Value::Str("succeeded".into())),
                ]);
                self.spans.push(span);
                let attempts = self.streaks.of(*attempt);
                self.end(attempts, "succeeded", status.code, *slept_ms, None, now);
                return Some(std::mem::take(&mut self.spans));
            }
            Event::GaveUp {
                attempt,
                reason,
                took,
                ..
            } => {
                let name = reason.reason().name();
                // The attempt the run ended in, unless its span is already
                // done (a signal during the sleep after it); one the
                // throttle rejected did not start, but has its span.
                if let GiveUp::Rejected {
                    throttle,
                    probability,
                    ..
                } = reason
                {
                    let mut span = self.attempt_span(*attempt, None, now, None);
                    span.attributes.extend(rejected(throttle, *probability));
                    self.spans.push(span);
                } else if self.attempt.is_some_and(|(n, _)| n == *attempt) {
                    let mut span = self.attempt_span(*attempt, *took, now, reason.status());
                    span.attributes
                        .push(("retry.outcome", Value::Str(name.into())));
                    if let GiveUp::Spawn { message, .. } | GiveUp::Failed(message) = reason {
                        span.error = Some(message.clone());
                    }
                    self.spans.push(span);
                }
                let signal = match reason {
                    GiveUp::Signal { signal, .. } => Some(*signal),
                    _ => None,
                };
                self.end(
                    self.streaks.of(*attempt),
                    name,
                    reason.exit_code(),
                    self.slept_ms,
                    signal,
                    now,
                );
                return Some(std::mem::take(&mut self.spans));
            }
            _ => {}
        }
        None
    }

    /// The span of attempt `number`, ended `took` after it started (or now).
    fn attempt_span(
        &mut self,
        number: u32,
        took: Option<Duration>,
        now: SystemTime,
        status: Option<Status>,
    ) -> Span {
        let (start, ran) = match self.attempt.take() {
            Some((n, start)) if n == number => (start, true),
            _ => (now, false),
        };
        let end = took.map_or(now, |took| start + took);
        let mut attributes = vec![("retry.attempt", Value::Int(i64::from(number)))];
        // An attempt the throttle rejected ran no process.
        if ran {
            let pid = self
                .pid
                .take()
                .filter(|(n, _)| *n == number)
                .map(|(_, pid)| pid);
            self.command.attributes(pid, &mut attributes);
        }
        let mut error = None;
        if let Some(status) = status {
            error = Some(status_attributes(status, &mut attributes));
        }
        Span {
            span_id: self.ids.attempt_span(number),
            parent: Some(self.ids.run_span),
            name: self.name.clone(),
            kind: Kind::Client,
            start: nanos(start),
            end: nanos(end),
            attributes,
            error,
        }
    }

    /// The run's own span, ended now.
    fn end(
        &mut self,
        attempts: u32,
        outcome: &str,
        exit_code: i32,
        slept_ms: u128,
        signal: Option<i32>,
        now: SystemTime,
    ) {
        let mut attributes = vec![
            ("retry.attempts", Value::Int(i64::from(attempts))),
            ("retry.outcome", Value::Str(outcome.into())),
            ("process.exit.code", Value::Int(i64::from(exit_code))),
        ];
        self.own
            .attributes(Some(std::process::id()), &mut attributes);
        if slept_ms > 0 {
            attributes.push(("retry.slept_ms", Value::Int(clamp(slept_ms))));
        }
        if let Some(signal) = signal {
            attributes.push(("retry.signal", Value::Str(signal_name(signal).to_string())));
        }
        let error = (outcome != "succeeded").then(|| {
            attributes.push(("error.type", Value::Str(outcome.into())));
            format!("gave up: {outcome}")
        });
        self.spans.push(Span {
            span_id: self.ids.run_span,
            parent: self.ids.parent_span,
            name: format!("retry {}", self.name),
            kind: Kind::Internal,
            start: nanos(self.start),
            end: nanos(now),
            attributes,
            error,
        });
    }
}

/// A rejected attempt's attributes: its outcome, the throttle and the
/// probability it was rejected with.
fn rejected(throttle: &str, probability: f64) -> [(&'static str, Value); 3] {
    [
        ("retry.outcome", Value::Str("rejected".into())),
        ("retry.throttle", Value::Str(throttle.into())),
        ("retry.throttle.probability", Value::Double(probability)),
    ]
}

/// An attempt's status as attributes (OpenTelemetry's `process.exit.code`
/// and `error.type`, retry's own for the rest), and the span's error message.
fn status_attributes(status: Status, attributes: &mut Vec<(&'static str, Value)>) -> String {
    attributes.push(("process.exit.code", Value::Int(i64::from(status.code))));
    let (kind, message) = match status.cause {
        Cause::Signaled(signal) => {
            let name = signal_name(signal).to_string();
            attributes.push(("retry.signal", Value::Str(name.clone())));
            (name.clone(), format!("killed by {name}"))
        }
        Cause::TimedOut(_) => {
            attributes.push(("retry.timed_out", Value::Bool(true)));
            ("timeout".into(), "timed out".into())
        }
        Cause::OutputMatched(code) => (
            code.to_string(),
            format!("exit code {code}, output matched --retry-if-output"),
        ),
        Cause::NotStarted(_) => ("not_started".into(), "could not be started".into()),
        Cause::Exited | Cause::ZeroNotSuccess => (
            status.code.to_string(),
            format!("exit code {}", status.code),
        ),
    };
    attributes.push(("error.type", Value::Str(kind)));
    message
}

fn nanos(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn clamp(ms: u128) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Class, Phase};
    use crate::policy::Attempts;
    use crate::strategy::{Jitter, Sleep};
    use crate::trace::{context, settings};
    use rand::SeedableRng;

    /// 2023-11-14 22:13:20 UTC: the run's start in these tests.
    const START: Duration = Duration::from_secs(1_700_000_000);

    fn at(ms: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + START + Duration::from_millis(ms)
    }

    fn new_trace(parent: Option<context::Parent>) -> Spans {
        let settings = Settings::from_lookup(|name| {
            (name == settings::ENDPOINT).then(|| "http://127.0.0.1:9".to_string())
        })
        .unwrap()
        .unwrap();
        let ids = Ids::new(
            parent,
            settings.sampler,
            &mut rand_chacha::ChaCha8Rng::seed_from_u64(3),
        );
        let curl = Process::command(OsStr::new("/usr/bin/curl"), &[], false);
        let own = Process::own(&[], false);
        Spans::new(settings, ids, "curl", (curl, own), at(0))
    }

    fn attribute<'a>(span: &'a Span, key: &str) -> Option<&'a Value> {
        span.attributes
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    const LIMIT: Attempts = Attempts::Limit(3);

    /// A rejected attempt has a span of no length, its outcome the
    /// rejection; one that ends the run too.
    #[test]
    fn a_rejected_attempt_is_a_span_of_its_own() {
        let mut trace = new_trace(None);
        let rejected = Event::Rejected {
            attempt: 1,
            limit: LIMIT,
            throttle: "api".into(),
            probability: 0.25,
            sleep: Sleep {
                duration: Duration::from_millis(40),
                ceiling: Duration::from_secs(1),
            },
            jitter: Jitter::Full,
        };
        assert_eq!(trace.gather(&rejected, at(10)), None);
        let gave_up = Event::GaveUp {
            attempt: 2,
            limit: LIMIT,
            reason: GiveUp::Rejected {
                throttle: "api".into(),
                probability: 0.5,
                status: None,
                ran_out: crate::events::RanOut::Attempts,
                code: 75,
            },
            took: None,
        };
        let spans = trace.gather(&gave_up, at(60)).unwrap();
        assert_eq!(spans.len(), 3, "{spans:?}");
        let (first, second, run) = (&spans[0], &spans[1], &spans[2]);
        assert_eq!(first.start, first.end);
        for span in [first, second] {
            // No process ran.
            assert_eq!(attribute(span, "process.executable.name"), None);
            assert_eq!(
                attribute(span, "retry.outcome"),
                Some(&Value::Str("rejected".into()))
            );
            assert_eq!(
                attribute(span, "retry.throttle"),
                Some(&Value::Str("api".into()))
            );
        }
        assert_eq!(
            attribute(first, "retry.throttle.probability"),
            Some(&Value::Double(0.25))
        );
        assert_eq!(attribute(first, "retry.sleep_ms"), Some(&Value::Int(40)));
        assert_eq!(
            attribute(run, "retry.outcome"),
            Some(&Value::Str("throttle".into()))
        );
        assert_eq!(attribute(run, "process.exit.code"), Some(&Value::Int(75)));
        assert_eq!(attribute(run, "retry.slept_ms"), Some(&Value::Int(40)));
    }

    /// OpenTelemetry's conventions for command-line programs: the run is
    /// retry's execution, an attempt a call of the command, each with
    /// the process's id, executable name and exit code; the words only
    /// when asked for, a URL's password masked even then.
    #[test]
    fn spans_carry_the_process_attributes_of_the_cli_conventions() {
        let mut trace = new_trace(None);
        let events = [
            Event::Starting {
                attempt: 1,
                limit: LIMIT,
            },
            Event::Ran {
                attempt: 1,
                pid: 4242,
            },
        ];
        for event in &events {
            assert_eq!(trace.gather(event, at(0)), None);
        }
        let success = Event::Succeeded {
            attempt: 1,
            limit: LIMIT,
            status: Status::exited(0),
            slept_ms: 0,
            took: Duration::from_millis(5),
        };
        let spans = trace.gather(&success, at(5)).unwrap();
        let [attempt, run] = &spans[..] else {
            panic!("{spans:?}")
        };
        assert_eq!((attempt.kind, run.kind), (Kind::Client, Kind::Internal));
        assert_eq!(attribute(attempt, "process.pid"), Some(&Value::Int(4242)));
        assert_eq!(
            attribute(attempt, "process.executable.name"),
            Some(&Value::Str("curl".into()))
        );
        assert_eq!(
            attribute(attempt, "process.exit.code"),
            Some(&Value::Int(0))
        );
        assert_eq!(
            attribute(run, "process.pid"),
            Some(&Value::Int(i64::from(std::process::id())))
        );
        assert!(matches!(
            attribute(run, "process.executable.name"),
            Some(Value::Str(name)) if !name.is_empty() && !name.contains('/')
        ));
        assert_eq!(attribute(run, "process.exit.code"), Some(&Value::Int(0)));
        for span in [attempt, run] {
            assert_eq!(attribute(span, "process.command_args"), None);
            assert_eq!(attribute(span, "error.type"), None);
        }

        let args = ["-fsS".into(), "https://me:token@example.com/x".into()];
        let asked = Process::command(OsStr::new("/usr/bin/curl"), &args, true);
        assert_eq!(
            asked.args,
            Some(vec![
                "/usr/bin/curl".into(),
                "-fsS".into(),
                "https://***@example.com/x".into()
            ])
        );
        let argv = ["retry".into(), "--store".into(), "redis://:pw@h".into()];
        assert_eq!(
            Process::own(&argv, true).args,
            Some(vec![
                "retry".into(),
                "--store".into(),
                "redis://***@h".into()
            ])
        );
        assert_eq!(base_name(OsStr::new("C:/tools/Curl.EXE")), "Curl");
        assert_eq!(base_name(OsStr::new("wget")), "wget");
    }

    #[test]
    fn a_signal_in_the_sleep_ends_the_run_after_its_attempt() {
        let mut trace = new_trace(None);
        assert_eq!(
            trace.gather(
                &Event::Starting {
                    attempt: 1,
                    limit: LIMIT
                },
                at(10)
            ),
            None
        );
        let retrying = Event::Retrying {
            attempt: 1,
            limit: LIMIT,
            status: Status::exited(3),
            class: Class::Throttled(crate::events::Evidence::Hint),
            sleep: Sleep {
                duration: Duration::from_millis(1500),
                ceiling: Duration::from_secs(2),
            },
            jitter: Jitter::Full,
            hint: None,
            took: Duration::from_millis(40),
        };
        assert_eq!(trace.gather(&retrying, at(50)), None);
        let spans = trace
            .gather(
                &Event::GaveUp {
                    attempt: 1,
                    limit: LIMIT,
                    reason: GiveUp::Signal {
                        signal: 15,
                        status: None,
                        during: Phase::Sleep,
                    },
                    took: None,
                },
                at(1600),
            )
            .expect("the run's end sends");
        let [attempt, run] = &spans[..] else {
            panic!("{spans:?}")
        };
        assert_eq!(attempt.parent, Some(run.span_id));
        assert_eq!(attempt.span_id, trace.ids.attempt_span(1));
        // At the times of the events' stamps, the attempt's end by how
        // long it took.
        let nanos = |ms: u64| (START.as_millis() as u64 + ms) * 1_000_000;
        assert_eq!((attempt.start, attempt.end), (nanos(10), nanos(50)));
        assert_eq!((run.start, run.end), (nanos(0), nanos(1600)));
        assert_eq!(
            attribute(attempt, "process.exit.code"),
            Some(&Value::Int(3))
        );
        assert_eq!(
            attribute(attempt, "error.type"),
            Some(&Value::Str("3".into()))
        );
        assert_eq!(
            attribute(attempt, "retry.sleep_ms"),
            Some(&Value::Int(1500))
        );
        assert_eq!(
            attribute(attempt, "retry.class"),
            Some(&Value::Str("throttled".into()))
        );
        assert_eq!(attempt.error.as_deref(), Some("exit code 3"));
        assert_eq!(run.parent, None);
        assert_eq!(
            attribute(run, "retry.outcome"),
            Some(&Value::Str("signal".into()))
        );
        assert_eq!(
            attribute(run, "retry.signal"),
            Some(&Value::Str("SIGTERM".into()))
        );
        assert_eq!(attribute(run, "retry.slept_ms"), Some(&Value::Int(1500)));
        assert!(run.error.is_some() && run.name == "retry curl");
    }

    #[test]
    fn a_command_that_cannot_start_and_one_that_timed_out() {
        let mut trace = new_trace(None);
        trace.gather(
            &Event::Starting {
                attempt: 1,
                limit: LIMIT,
            },
            at(0),
        );
        let spans = trace
            .gather(
                &Event::GaveUp {
                    attempt: 1,
                    limit: LIMIT,
                    reason: GiveUp::Spawn {
                        code: 127,
                        message: "curl: not found".into(),
                    },
                    took: None,
                },
                at(1000),
            )
            .unwrap();
        assert_eq!(spans[0].error.as_deref(), Some("curl: not found"));
        assert_eq!(
            attribute(&spans[1], "process.exit.code"),
            Some(&Value::Int(127))
        );
        assert_eq!(
            attribute(&spans[1], "error.type"),
            Some(&Value::Str("spawn".into()))
        );

        let mut trace = new_trace(None);
        trace.gather(
            &Event::Starting {
                attempt: 3,
                limit: LIMIT,
            },
            at(0),
        );
        let timed_out = Status::timed_out(Duration::from_secs(1));
        let spans = trace
            .gather(
                &Event::GaveUp {
                    attempt: 3,
                    limit: LIMIT,
                    reason: GiveUp::Attempts(timed_out),
                    took: Some(Duration::from_secs(1)),
                },
                at(1000),
            )
            .unwrap();
        assert_eq!(
            attribute(&spans[0], "retry.timed_out"),
            Some(&Value::Bool(true))
        );
        assert_eq!(
            attribute(&spans[0], "error.type"),
            Some(&Value::Str("timeout".into()))
        );
        assert_eq!(
            attribute(&spans[0], "process.exit.code"),
            Some(&Value::Int(124))
        );
        assert_eq!(attribute(&spans[1], "retry.attempts"), Some(&Value::Int(3)));
    }

    #[test]
    fn a_parent_not_sampled_records_nothing() {
        let parent = context::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
        let mut trace = new_trace(Some(parent.unwrap()));
        trace.gather(
            &Event::Starting {
                attempt: 1,
                limit: LIMIT,
            },
            at(0),
        );
        let success = Event::Succeeded {
            attempt: 1,
            limit: LIMIT,
            status: Status::exited(0),
            slept_ms: 0,
            took: Duration::ZERO,
        };
        assert_eq!(trace.gather(&success, at(1)), None);
        trace.observe(&Stamped {
            stamp: crate::events::Stamp {
                time: at(1),
                elapsed: Duration::from_millis(1),
            },
            event: success,
        });
        assert!(trace.ended.is_none());
    }
}
