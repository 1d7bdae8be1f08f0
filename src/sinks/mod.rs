//! The reporter: each event of a run, handed to every output asked for,
//! in one place (nextest's `Reporter::write_event`, hyperfine's
//! `ExportManager`). The attempt loop (`run/`) only makes events; a new
//! output touches its own file and this one, nothing in the loop.
//!
//! - `log/`: retry's lines (text, JSON, GitHub annotations), on stderr
//!   or in `--log-file`, always there;
//! - `summary.rs`: GitHub's step summary and step outputs (and
//!   `exit_error.rs`, the Action's `exit_error` in nick-fields/retry's
//!   words), fed every event whatever the verbosity;
//! - the Prometheus textfile and StatsD, from the run's facts (`metrics/`);
//! - `spans.rs`: the run's trace, sent by `trace/` at the end;
//! - `name.rs`: how the lines, the summary and the spans name the command.
//!
//! A fixed set of optional outputs, not a list of boxed ones: a run that
//! asks for none but the log allocates nothing for them, and each event
//! costs one `Option` test per output. Every output reads the time from
//! the event's stamp (`events::Stamp`), none from a clock of its own.

mod exit_error;
pub mod log;
pub mod name;
mod spans;
mod summary;

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::Instant;

use crate::events::{Event, Origin, PresetLine, Stamped};
use crate::metrics::{self, Fact};
use crate::trace;
use log::{Destination, Log, LogFormat, Verbosity};
use name::CommandName;

/// What the command line asked of the outputs, validated (`cli::config`).
#[derive(Debug)]
pub struct Settings {
    /// `--log-format`, `--log-file`, `--quiet`, `--verbose`.
    pub log: log::Settings,
    /// `--metrics-dir`, `--statsd` and their job: the run's metrics.
    pub metrics: metrics::Settings,
    /// The preset that judges the run, named or chosen by the program it
    /// wraps (`preset::choose`), and why: `-v` and the JSON log say so.
    pub preset: Option<PresetLine>,
    /// Said before the first attempt: why the user's presets file was
    /// ignored, a preset named for another program.
    pub preset_warnings: Vec<String>,
    /// Why no preset judges the run, where one might have (`-v`).
    pub no_preset: Option<String>,
}

impl Settings {
    /// Whether a live countdown may share stderr with the lines: only
    /// with text lines there, and not with `--quiet`.
    pub fn countdown(&self) -> bool {
        self.log.format == LogFormat::Text
            && self.log.file.is_none()
            && self.log.verbosity != Verbosity::Quiet
    }
}

/// retry's variables that are this run's outputs' alone, which no attempt
/// or hook inherits (a retry inside the command would take them too): the
/// step outputs' switch and the Action's wishes.
pub const WITHHELD: [&str; 3] = [
    summary::OUTPUT_SWITCH,
    log::action::VARIABLES[0],
    log::action::VARIABLES[1],
];

/// The outputs of one run.
pub struct Reporter {
    /// When the run began: the stamps of the reporter's own events.
    origin: Origin,
    log: Log,
    /// GitHub's step summary and step outputs, when the run is a step's.
    summary: Option<summary::StepSummary>,
    outputs: Option<summary::StepOutputs>,
    /// The run's facts, when a textfile or StatsD is asked for.
    facts: Option<metrics::Facts>,
    textfile: Option<metrics::textfile::Textfile>,
    statsd: Option<metrics::statsd::Statsd>,
    /// `--metrics-dir`, for the circuit's and the throttle's files.
    metrics_dir: Option<PathBuf>,
    /// The run's spans, when an OTLP endpoint is set.
    spans: Option<spans::Spans>,
}

impl Reporter {
    /// The outputs `settings` ask for, of the run `run` of `program args`
    /// that began at `origin`, its lines going `to`; `tracing`: the OTLP
    /// settings and the run's ids, when an endpoint is set.
    pub fn new(
        settings: &Settings,
        to: Destination,
        run: String,
        origin: Origin,
        tracing: Option<(trace::Settings, trace::Ids)>,
        (program, args): (&OsStr, &[OsString]),
    ) -> Self {
        let mut name = CommandName::new(program, args);
        let spans = tracing.map(|(tracing, ids)| {
            let with_args = tracing.command_args;
            let processes = (
                spans::Process::command(program, args, with_args),
                spans::Process::own(&tracing.argv, with_args),
            );
            spans::Spans::new(tracing, ids, &name.short, processes, origin.time())
        });
        // The Action's title names the command in the lines and the summary.
        if let Some(title) = log::action::title() {
            name = name.titled(&title);
        }
        let metrics = &settings.metrics;
        let job = metrics.any().then(|| {
            metrics
                .job
                .clone()
                .unwrap_or_else(|| metrics::job::Job::derive(program, args))
        });
        let job = job.as_ref();
        Self {
            origin,
            log: Log::new(settings.log.format, settings.log.verbosity, name, to, run)
                .with_action_wishes(),
            summary: summary::StepSummary::from_env(),
            outputs: summary::StepOutputs::from_env(),
            facts: job.map(|_| metrics::Facts::new(origin.time())),
            textfile: metrics
                .dir
                .as_ref()
                .zip(job)
                .map(|(dir, job)| metrics::textfile::Textfile::new(dir.clone(), job)),
            statsd: metrics.statsd.as_ref().zip(job).map(|(target, job)| {
                metrics::statsd::Statsd::new(target, job, metrics.statsd_tags)
            }),
            metrics_dir: metrics.dir.clone(),
            spans,
        }
    }

    /// Before the first attempt, at `now`: the warnings (the preset's,
    /// a shared `--metrics-dir`'s, then `said`, the trace's), then the
    /// preset that judges the run.
    pub fn begin(&mut self, settings: &Settings, said: Vec<String>, now: Instant) {
        let shared = settings.metrics.dir.as_deref();
        let warnings = (settings.preset_warnings.iter().cloned())
            .chain(shared.and_then(metrics::textfile::shared_dir_warning))
            .chain(said);
        for message in warnings {
            self.say(
                now,
                Event::Warning {
                    attempt: 1,
                    message,
                },
            );
        }
        if let Some(line) = &settings.preset {
            self.say(now, Event::Preset(line.clone()));
        }
        if let Some(why) = &settings.no_preset {
            self.say(now, Event::NoPreset(why.clone()));
        }
    }

    /// Hands one event to every output, in this order: the step summary
    /// and outputs, the log, the metrics, the spans.
    pub fn emit(&mut self, stamped: &Stamped) {
        let event = &stamped.event;
        if let Some(summary) = &mut self.summary {
            summary.observe(event, self.log.name());
        }
        if let Some(outputs) = &self.outputs {
            outputs.observe(event, self.log.name());
        }
        self.log.emit(stamped);
        let facts = self.facts.as_mut().map(|facts| facts.observe(stamped));
        for fact in facts.iter().flatten().flatten() {
            if let Some(warning) = self.metrics(fact) {
                self.emit(&Stamped {
                    stamp: stamped.stamp,
                    event: warning,
                });
            }
        }
        if let Some(spans) = &mut self.spans {
            spans.observe(stamped);
        }
    }

    /// One fact to StatsD and the files; a warning if a file could not
    /// be written.
    fn metrics(&mut self, fact: &Fact) -> Option<Event> {
        match fact {
            Fact::Attempt(took) => {
                if let Some(statsd) = &mut self.statsd {
                    statsd.attempt(*took);
                }
                None
            }
            Fact::End(ending) => {
                if let Some(statsd) = &mut self.statsd {
                    statsd.run(ending);
                }
                let message = self.textfile.as_ref()?.write(ending)?;
                Some(Event::Warning {
                    attempt: ending.attempts,
                    message,
                })
            }
            // Its datagrams now, after the run's; the file after the
            // run's textfile.
            Fact::Circuit {
                name,
                circuit,
                seen,
            } => {
                if let Some(statsd) = &mut self.statsd {
                    statsd.breaker(name, circuit);
                }
                let dir = self.metrics_dir.as_ref()?;
                let message = metrics::breaker::write(dir, name, circuit, *seen)?;
                Some(Event::Warning {
                    attempt: 1,
                    message,
                })
            }
            // As the circuit's: after the run's.
            Fact::Throttle {
                name,
                seen,
                rejected,
            } => {
                if let Some(statsd) = &mut self.statsd {
                    statsd.throttle(name, *rejected, seen);
                }
                let dir = self.metrics_dir.as_ref()?;
                let message = metrics::throttle::write(dir, name, *rejected, seen)?;
                Some(Event::Warning {
                    attempt: 1,
                    message,
                })
            }
        }
    }

    /// The run is over, its last event emitted: the wait for StatsD, then
    /// the wait for the collector (bounded, and cut short by the caller's
    /// signals, `interrupts`), whose warning is stamped at `now()`.
    pub fn finish(&mut self, interrupts: &impl trace::Interrupts, now: impl Fn() -> Instant) {
        // Last: the datagrams had the files' time to go.
        if let Some(statsd) = &mut self.statsd {
            statsd.finish();
        }
        if let Some(warning) = self.spans.as_mut().and_then(|s| s.send(interrupts)) {
            self.say(now(), warning);
        }
    }

    /// An event of the reporter's own, made at `now`.
    fn say(&mut self, now: Instant, event: Event) {
        self.emit(&Stamped {
            stamp: self.origin.stamp(now),
            event,
        });
    }
}

impl Settings {
    /// What the outputs need before anything runs, each option named as
    /// the user gave it (`log_file`, `metrics_dir`): `--metrics-dir`
    /// checked (`metrics::Settings::check_dir`), then where retry's lines
    /// go. A `--log-file` that cannot be opened is a bad value.
    pub fn open(&self, log_file: &str, metrics_dir: &str) -> Result<Destination, String> {
        self.metrics.check_dir(metrics_dir)?;
        match &self.log.file {
            None => Ok(Destination::Stderr),
            Some(path) => log::open(path).map(Destination::File).map_err(|error| {
                format!(
                    "retry: cannot open {log_file} '{}': {}",
                    path.display(),
                    crate::os_error::describe(&error)
                )
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::GiveUp;
    use crate::policy::Attempts;
    use crate::status::Status;
    use std::time::{Duration, SystemTime};

    fn reporter(metrics: metrics::Settings) -> Reporter {
        let settings = Settings {
            log: log::Settings {
                format: LogFormat::Text,
                file: None,
                verbosity: Verbosity::Normal,
            },
            metrics,
            preset: None,
            preset_warnings: vec![],
            no_preset: None,
        };
        let origin = Origin::new(SystemTime::UNIX_EPOCH, Instant::now());
        let command = (OsStr::new("true"), &[][..]);
        Reporter::new(
            &settings,
            Destination::Stderr,
            "r".into(),
            origin,
            None,
            command,
        )
    }

    /// Nothing asked for, nothing made: a job or tags alone are no sink.
    #[test]
    fn nothing_asked_for_makes_no_metrics_and_no_spans() {
        let none = |r: &Reporter| {
            r.facts.is_none() && r.textfile.is_none() && r.statsd.is_none() && r.spans.is_none()
        };
        assert!(none(&reporter(metrics::Settings::default())));
        let job = metrics::Settings {
            job: Some(metrics::job::parse("x").unwrap()),
            statsd_tags: true,
            ..metrics::Settings::default()
        };
        assert!(none(&reporter(job)));
    }

    /// The log's line and the textfile's series read one stamp: the time the
    /// run began (its origin) and the time the event was made, not a clock
    /// of their own (the origin here lies in 2023).
    #[test]
    fn the_outputs_agree_on_the_events_time() {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("retry.log");
        let settings = Settings {
            log: log::Settings {
                format: LogFormat::Json,
                file: Some(log_path.clone()),
                verbosity: Verbosity::Normal,
            },
            metrics: metrics::Settings {
                job: Some(metrics::job::parse("nightly").unwrap()),
                dir: Some(dir.path().to_owned()),
                ..metrics::Settings::default()
            },
            preset: None,
            preset_warnings: vec![],
            no_preset: None,
        };
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let (at, took) = (Instant::now(), Duration::from_millis(2500));
        let origin = Origin::new(start, at);
        let to = Destination::File(log::open(&log_path).unwrap());
        let command = (OsStr::new("true"), &[][..]);
        let mut reporter = Reporter::new(&settings, to, "r".into(), origin, None, command);
        // Whatever the environment says, no GitHub file is written here.
        (reporter.summary, reporter.outputs) = (None, None);
        reporter.emit(&Stamped {
            stamp: origin.stamp(at + took),
            event: Event::GaveUp {
                attempt: 1,
                limit: Attempts::Limit(1),
                reason: GiveUp::Attempts(Status::exited(3)),
                took: Some(took),
            },
        });
        let line = std::fs::read_to_string(&log_path).unwrap();
        let when = r#""time":"2023-11-14T22:13:22.500Z","elapsed_ms":2500,"#;
        assert!(line.contains(when), "{line}");
        let prom = std::fs::read_to_string(dir.path().join("retry_nightly.prom")).unwrap();
        for series in [
            r#"retry_last_run_start_timestamp_seconds{retry_job="nightly"} 1700000000.000"#,
            r#"retry_last_run_duration_seconds{retry_job="nightly"} 2.500"#,
        ] {
            assert!(prom.contains(series), "{series} in {prom}");
        }
    }
}
