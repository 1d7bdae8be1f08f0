//! Metrics of a run for monitoring, from the run's own events: the
//! Prometheus textfile (`--metrics-dir`, `textfile.rs`) and StatsD
//! (`--statsd`, `statsd.rs`). This file gathers the run's facts once, for
//! both: when it started, its attempts and sleeps, how it ended. `job.rs`
//! names the job both carry.
//!
//! Nothing configured, nothing made: `Sinks::new` is `None`, and the run
//! pays one `Option` test per event. A sink never changes the exit status
//! nor holds the run up: the textfile's write that fails is one warning,
//! StatsD is fire and forget.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use crate::run::events::{Event, GiveUp};
use crate::state::breaker::Circuit;

pub mod breaker;
pub mod job;
pub mod statsd;
pub mod textfile;

/// What the command line asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// `--job`; derived from the command when not given (`job::Job::derive`).
    pub job: Option<job::Job>,
    /// `--metrics-dir`, checked before the run (`textfile::check_dir`).
    pub dir: Option<PathBuf>,
    /// `--statsd`.
    pub statsd: Option<statsd::Target>,
    /// `--statsd-tags`: DogStatsD tags in place of the job in the names.
    pub statsd_tags: bool,
}

impl Settings {
    /// Whether any sink is asked for.
    pub fn any(&self) -> bool {
        self.dir.is_some() || self.statsd.is_some()
    }
}

/// How a run ended, in the words of the textfile's `outcome` label and
/// StatsD's: every `GiveUp` is one of them (docs/behaviour.md has the map).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    /// The last allowed attempt failed (`--max-attempts`).
    Exhausted,
    /// A failure retrying cannot mend: `--fatal-on`, a code not retried,
    /// `--stop-if-output`, a command that cannot start, retry's own I/O.
    Fatal,
    /// `--max-time` stopped the running attempt or `--on-retry` (124).
    Timeout,
    /// The next wait would pass `--max-time`, or the server asked for
    /// more than retry waits.
    Deadline,
    /// The shared `--budget` could not pay for a retry.
    Budget,
    /// A signal stopped retry, or stdout's reader went away.
    Interrupted,
    /// The `--breaker` circuit was open: the command did not start.
    Skipped,
}

impl Outcome {
    pub const ALL: [Outcome; 8] = [
        Outcome::Succeeded,
        Outcome::Exhausted,
        Outcome::Fatal,
        Outcome::Timeout,
        Outcome::Deadline,
        Outcome::Budget,
        Outcome::Interrupted,
        Outcome::Skipped,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Exhausted => "exhausted",
            Outcome::Fatal => "fatal",
            Outcome::Timeout => "timeout",
            Outcome::Deadline => "deadline",
            Outcome::Budget => "budget",
            Outcome::Interrupted => "interrupted",
            Outcome::Skipped => "skipped",
        }
    }

    /// The outcome of a run that gave up for `reason`.
    pub fn of(reason: &GiveUp) -> Outcome {
        match reason {
            GiveUp::Attempts(_) => Outcome::Exhausted,
            GiveUp::Fatal(..)
            | GiveUp::NotRetryable(..)
            | GiveUp::OutputStop { .. }
            | GiveUp::Spawn { .. }
            | GiveUp::Failed(_) => Outcome::Fatal,
            GiveUp::MaxTimeReached(_) | GiveUp::MaxTimeInHook(_) => Outcome::Timeout,
            GiveUp::MaxTimeAhead { .. } | GiveUp::HintTooLong { .. } => Outcome::Deadline,
            GiveUp::Budget(_) => Outcome::Budget,
            GiveUp::Signal { .. } | GiveUp::StdoutClosed => Outcome::Interrupted,
            GiveUp::CircuitOpen(..) => Outcome::Skipped,
        }
    }
}

/// A run as it ended: what both sinks write.
#[derive(Clone, Debug, PartialEq)]
pub struct Ending {
    /// When the run started (wall clock).
    pub start: SystemTime,
    /// When it ended: a success's time.
    pub end: SystemTime,
    pub duration: Duration,
    /// Attempts started.
    pub attempts: u32,
    /// The sleeps chosen between attempts, added up.
    pub slept: Duration,
    /// retry's exit status (128+N for a signal).
    pub exit_code: i32,
    pub outcome: Outcome,
}

/// What an event meant for the sinks.
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    /// An attempt ended after running this long.
    Attempt(Duration),
    /// The run ended (after its last attempt's `Attempt`, if it ran).
    End(Ending),
}

/// The run's facts, gathered from its events.
#[derive(Debug)]
pub struct Facts {
    start: SystemTime,
    started: Instant,
    slept: Duration,
}

impl Facts {
    /// A run starting at `start` (`started` on the monotonic clock).
    pub fn new(start: SystemTime, started: Instant) -> Self {
        Self {
            start,
            started,
            slept: Duration::ZERO,
        }
    }

    /// Takes in one event at (`now`, `wall`): what it means for the sinks,
    /// an attempt's end and then maybe the run's.
    pub fn observe(&mut self, event: &Event, now: Instant, wall: SystemTime) -> [Option<Fact>; 2] {
        let end = |attempts, exit_code, outcome, slept| {
            Some(Fact::End(Ending {
                start: self.start,
                end: wall,
                duration: now.saturating_duration_since(self.started),
                attempts,
                slept,
                exit_code,
                outcome,
            }))
        };
        match event {
            Event::Retrying { took, sleep, .. } => {
                self.slept += sleep.duration;
                [Some(Fact::Attempt(*took)), None]
            }
            Event::Succeeded {
                attempt,
                status,
                took,
                ..
            } => [
                Some(Fact::Attempt(*took)),
                end(*attempt, status.code, Outcome::Succeeded, self.slept),
            ],
            Event::GaveUp {
                attempt,
                reason,
                took,
                ..
            } => [
                took.map(Fact::Attempt),
                end(
                    *attempt,
                    reason.exit_code(),
                    Outcome::of(reason),
                    self.slept,
                ),
            ],
            _ => [None, None],
        }
    }
}

/// The sinks configured, fed every event of the run.
pub struct Sinks {
    facts: Facts,
    /// `--metrics-dir`, for the circuit's file.
    dir: Option<PathBuf>,
    textfile: Option<textfile::Textfile>,
    statsd: Option<statsd::Statsd>,
}

impl Sinks {
    /// The sinks `settings` ask for, for the command `program args`;
    /// `None` when none is. Call it just before the run: its clock starts.
    pub fn new(
        settings: &Settings,
        program: &std::ffi::OsStr,
        args: &[std::ffi::OsString],
    ) -> Option<Self> {
        if !settings.any() {
            return None;
        }
        let job = settings
            .job
            .clone()
            .unwrap_or_else(|| job::Job::derive(program, args));
        Some(Self {
            facts: Facts::new(SystemTime::now(), Instant::now()),
            dir: settings.dir.clone(),
            textfile: settings
                .dir
                .as_ref()
                .map(|dir| textfile::Textfile::new(dir.clone(), &job)),
            statsd: settings
                .statsd
                .as_ref()
                .map(|target| statsd::Statsd::new(target, &job, settings.statsd_tags)),
        })
    }

    /// Takes in one event; a warning to log when the textfile could not be
    /// written.
    pub fn observe(&mut self, event: &Event) -> Option<Event> {
        let mut warning = None;
        let facts = self.facts.observe(event, Instant::now(), SystemTime::now());
        for fact in facts.iter().flatten() {
            match fact {
                Fact::Attempt(took) => {
                    if let Some(statsd) = &mut self.statsd {
                        statsd.attempt(*took);
                    }
                }
                Fact::End(ending) => {
                    if let Some(statsd) = &mut self.statsd {
                        statsd.run(ending);
                    }
                    if let Some(textfile) = &self.textfile {
                        warning = textfile.write(ending).map(|message| Event::Warning {
                            attempt: ending.attempts,
                            message,
                        });
                    }
                }
            }
        }
        warning
    }

    /// The run is over: the circuit it consulted (`--breaker NAME`), as it
    /// last saw it (and when), to each sink; then the wait for StatsD's
    /// datagrams. A warning if the circuit's file could not be written.
    pub fn finish(&mut self, circuit: Option<(&str, Circuit, SystemTime)>) -> Option<String> {
        let mut warning = None;
        if let Some((name, circuit, seen)) = circuit {
            if let Some(statsd) = &mut self.statsd {
                statsd.breaker(name, &circuit);
            }
            if let Some(dir) = &self.dir {
                warning = breaker::write(dir, name, &circuit, seen);
            }
        }
        // Last: the datagrams had the files' time to go.
        if let Some(statsd) = &mut self.statsd {
            statsd.finish();
        }
        warning
    }
}

/// `--breaker-status NAME` with `--metrics-dir` or `--statsd`: the circuit
/// as read, to each; a warning if its file could not be written.
pub fn breaker_status(settings: &Settings, name: &str, circuit: &Circuit) -> Option<String> {
    if let Some(target) = &settings.statsd {
        // The job is not in the circuit's names: any valid one will do.
        if let Ok(job) = job::parse(name) {
            let mut statsd = statsd::Statsd::new(target, &job, settings.statsd_tags);
            statsd.breaker(name, circuit);
            statsd.finish();
        }
    }
    let dir = settings.dir.as_ref()?;
    breaker::write(dir, name, circuit, SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Attempts;
    use crate::run::events::Phase;
    use crate::status::Status;
    use crate::strategy::{Jitter, Sleep};

    fn retrying(attempt: u32, sleep_ms: u64) -> Event {
        Event::Retrying {
            attempt,
            limit: Attempts::Limit(5),
            status: Status::exited(7),
            sleep: Sleep {
                duration: Duration::from_millis(sleep_ms),
                ceiling: Duration::from_secs(60),
            },
            jitter: Jitter::Full,
            hint: None,
            took: Duration::from_millis(30),
        }
    }

    #[test]
    fn facts_come_from_the_events() {
        let t0 = Instant::now();
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut facts = Facts::new(wall, t0);
        let at = |s| (t0 + Duration::from_secs(s), wall + Duration::from_secs(s));
        let starting = Event::Starting {
            attempt: 1,
            limit: Attempts::Limit(5),
        };
        assert_eq!(facts.observe(&starting, at(0).0, at(0).1), [None, None]);
        let [first, none] = facts.observe(&retrying(1, 1500), at(1).0, at(1).1);
        assert_eq!(first, Some(Fact::Attempt(Duration::from_millis(30))));
        assert_eq!(none, None);
        facts.observe(&retrying(2, 2500), at(4).0, at(4).1);
        let gave_up = Event::GaveUp {
            attempt: 3,
            limit: Attempts::Limit(5),
            reason: GiveUp::Fatal(Status::exited(2), None),
            took: Some(Duration::from_millis(20)),
        };
        let [attempt, end] = facts.observe(&gave_up, at(9).0, at(9).1);
        assert_eq!(attempt, Some(Fact::Attempt(Duration::from_millis(20))));
        assert_eq!(
            end,
            Some(Fact::End(Ending {
                start: wall,
                end: at(9).1,
                duration: Duration::from_secs(9),
                attempts: 3,
                slept: Duration::from_secs(4),
                exit_code: 2,
                outcome: Outcome::Fatal,
            }))
        );
        // Stopped in its sleep: no attempt ended with the run.
        let signal = Event::GaveUp {
            attempt: 3,
            limit: Attempts::Limit(5),
            reason: GiveUp::Signal {
                signal: 15,
                status: None,
                during: Phase::Sleep,
            },
            took: None,
        };
        let [attempt, end] = facts.observe(&signal, at(9).0, at(9).1);
        assert_eq!(attempt, None);
        let Some(Fact::End(end)) = end else {
            panic!("{end:?}")
        };
        // 128 + 15 on Unix; Windows' STATUS_CONTROL_C_EXIT, as retry exits.
        let killed = crate::platform::signal_exit_code(15);
        assert_eq!((end.outcome, end.exit_code), (Outcome::Interrupted, killed));
    }

    #[test]
    fn every_ending_has_an_outcome_and_the_names_are_documented() {
        let s = Status::exited(1);
        let map = [
            (GiveUp::Attempts(s), "exhausted"),
            (GiveUp::Fatal(s, None), "fatal"),
            (GiveUp::NotRetryable(s, None), "fatal"),
            (
                GiveUp::OutputStop {
                    status: s,
                    line: None,
                    label: None,
                },
                "fatal",
            ),
            (
                GiveUp::Spawn {
                    code: 127,
                    message: String::new(),
                },
                "fatal",
            ),
            (GiveUp::Failed(String::new()), "fatal"),
            (GiveUp::MaxTimeReached(s), "timeout"),
            (GiveUp::MaxTimeInHook(s), "timeout"),
            (
                GiveUp::MaxTimeAhead {
                    status: s,
                    sleep_ms: 1,
                },
                "deadline",
            ),
            (
                GiveUp::HintTooLong {
                    status: s,
                    hint_ms: 2,
                    limit_ms: 1,
                },
                "deadline",
            ),
            (GiveUp::Budget(s), "budget"),
            (
                GiveUp::Signal {
                    signal: 2,
                    status: None,
                    during: Phase::Attempt,
                },
                "interrupted",
            ),
            (GiveUp::StdoutClosed, "interrupted"),
        ];
        for (reason, name) in &map {
            assert_eq!(Outcome::of(reason).name(), *name, "{reason:?}");
        }
        // docs/behaviour.md's map: one row per reason, in the log's names.
        let doc = include_str!("../../docs/behaviour.md").replace("\r\n", "\n");
        let table = doc
            .split("| reason | outcome |\n|---|---|\n")
            .nth(1)
            .expect("docs/behaviour.md has the outcome map");
        let rows: Vec<&str> = table.lines().take_while(|l| l.starts_with('|')).collect();
        for (reason, name) in &map {
            let reason = format!("`{}`", reason.reason().name());
            let outcome = format!("| `{name}` |");
            let row = |row: &&str| {
                row.split('|').nth(1).is_some_and(|r| r.contains(&reason))
                    && row.ends_with(&outcome)
            };
            assert!(rows.iter().any(row), "no row {reason} … {outcome}");
        }
        assert!(rows.contains(&"| (success) | `succeeded` |"));
    }

    #[test]
    fn nothing_configured_is_no_sinks() {
        assert!(Sinks::new(&Settings::default(), "true".as_ref(), &[]).is_none());
        let job = Settings {
            job: Some(job::parse("x").unwrap()),
            statsd_tags: true,
            ..Settings::default()
        };
        assert!(Sinks::new(&job, "true".as_ref(), &[]).is_none());
    }
}
