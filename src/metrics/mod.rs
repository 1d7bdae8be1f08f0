//! Metrics of a run for monitoring, from the run's own events: the
//! Prometheus textfile (`--metrics-dir`, `textfile.rs`) and StatsD
//! (`--statsd`, `statsd.rs`). This file gathers the run's facts once, for
//! both: when it started, its attempts and sleeps, how it ended, at the
//! times of its events' stamps. `job.rs` names the job both carry. The
//! reporter (`sinks/`) hands the facts to whichever is asked for.
//!
//! A sink never changes the exit status nor holds the run up: the
//! textfile's write that fails is one warning, StatsD is fire and forget.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use crate::events::{Event, GiveUp, RanOut, Stamped, Streaks};
use crate::state::breaker::Circuit;
use crate::state::throttle::Seen;

pub mod breaker;
pub mod job;
pub mod statsd;
pub mod textfile;
pub mod throttle;

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

    /// `--metrics-dir` (named as the user gave it: `named`), checked
    /// before anything runs: a directory that is missing or not writable
    /// is a bad value, as a `--log-file` that cannot be opened is, rather
    /// than a warning after the run that a cron job's owner never reads.
    pub fn check_dir(&self, named: &str) -> Result<(), String> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        textfile::check_dir(dir).map_err(|error| {
            format!(
                "retry: cannot write to {named} '{}': {}",
                dir.display(),
                crate::os_error::describe(&error)
            )
        })
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
            GiveUp::CircuitOpen(..) | GiveUp::Rejected { status: None, .. } => Outcome::Skipped,
            GiveUp::Rejected { ran_out, .. } => match ran_out {
                RanOut::Attempts => Outcome::Exhausted,
                RanOut::MaxTime { .. } => Outcome::Deadline,
                RanOut::Budget => Outcome::Budget,
            },
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
    /// Attempts started (not those `--throttle` rejected).
    pub attempts: u32,
    /// Of the retries (`attempts - 1`), those after a throttled failure;
    /// the rest followed a transient one.
    pub throttled: u32,
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
    /// After the end, the `--breaker` circuit `name` as the run last saw
    /// it, at `seen`: its gauges and its file.
    Circuit {
        name: String,
        circuit: Circuit,
        seen: SystemTime,
    },
    /// After the end, the `--throttle` `name` as the run last saw it, and
    /// the attempts it rejected in the run: its series and its file.
    Throttle {
        name: String,
        seen: Seen,
        rejected: u64,
    },
}

/// The run's facts, gathered from its events.
#[derive(Debug)]
pub struct Facts {
    start: SystemTime,
    slept: Duration,
    /// Retrying events of throttled failures, and the attempt of the last
    /// such (its retry never started if the run ended with it). An attempt
    /// `--throttle` rejected is a throttled failure too, once an attempt
    /// ran before it (the one after it is no retry otherwise).
    throttled: u32,
    last_throttled: Option<u32>,
    /// Attempts `--throttle` rejected: none of them started.
    rejected: u32,
    /// Whether an attempt ran (a failure was retried) yet.
    ran: bool,
    /// Attempt numbers restart with each streak `--reset-after` begins;
    /// the run's count does not.
    streaks: Streaks,
}

impl Facts {
    /// A run that began at `start` (its origin's time).
    pub fn new(start: SystemTime) -> Self {
        Self {
            start,
            slept: Duration::ZERO,
            throttled: 0,
            last_throttled: None,
            rejected: 0,
            ran: false,
            streaks: Streaks::default(),
        }
    }

    /// The throttled retries of a run that ended after `attempts`: a
    /// retry announced after the last attempt (its sleep or hook
    /// interrupted) never started, and counts for nothing.
    fn throttled_retries(&self, attempts: u32) -> u32 {
        let unstarted = self.last_throttled == Some(attempts);
        self.throttled.saturating_sub(u32::from(unstarted))
    }

    /// `--throttle` rejected attempt `attempt`: the retry a throttled
    /// failure before it announced did not start; after an attempt that
    /// ran, it is a throttled failure itself.
    fn rejected(&mut self, attempt: u32, last: bool) {
        self.rejected += 1;
        if self.last_throttled == Some(attempt.saturating_sub(1)) {
            self.throttled = self.throttled.saturating_sub(1);
            self.last_throttled = None;
        }
        if self.ran && !last {
            self.throttled += 1;
            self.last_throttled = Some(attempt);
        }
    }

    /// Takes in one event: what it means for the sinks, an attempt's end
    /// and then maybe the run's, which ends at the event's stamp.
    pub fn observe(&mut self, stamped: &Stamped) -> [Option<Fact>; 2] {
        let (event, stamp) = (&stamped.event, stamped.stamp);
        self.streaks.observe(event);
        // The attempt's number in the whole run.
        let streaks = self.streaks;
        let run = |attempt: &u32| streaks.of(*attempt);
        if let Event::GaveUp {
            attempt,
            reason: GiveUp::Rejected { .. },
            ..
        } = event
        {
            self.rejected(run(attempt), true);
        }
        let end = |attempt: u32, exit_code, outcome, slept| {
            Some(Fact::End(Ending {
                start: self.start,
                end: stamp.time,
                duration: stamp.elapsed,
                attempts: attempt.saturating_sub(self.rejected),
                throttled: self.throttled_retries(attempt),
                slept,
                exit_code,
                outcome,
            }))
        };
        match event {
            Event::Retrying {
                attempt,
                class,
                took,
                sleep,
                ..
            } => {
                let attempt = run(attempt);
                self.slept += sleep.duration;
                self.ran = true;
                if class.is_throttled() {
                    self.throttled += 1;
                    self.last_throttled = Some(attempt);
                }
                [Some(Fact::Attempt(*took)), None]
            }
            Event::Rejected { attempt, sleep, .. } => {
                let attempt = run(attempt);
                self.slept += sleep.duration;
                self.rejected(attempt, false);
                [None, None]
            }
            Event::Succeeded {
                attempt,
                status,
                took,
                ..
            } => [
                Some(Fact::Attempt(*took)),
                end(run(attempt), status.code, Outcome::Succeeded, self.slept),
            ],
            Event::GaveUp {
                attempt,
                reason,
                took,
                ..
            } => [
                took.map(Fact::Attempt),
                end(
                    run(attempt),
                    reason.exit_code(),
                    Outcome::of(reason),
                    self.slept,
                ),
            ],
            Event::CircuitSeen {
                name,
                circuit,
                seen,
            } => [
                Some(Fact::Circuit {
                    name: name.clone(),
                    circuit: *circuit,
                    seen: *seen,
                }),
                None,
            ],
            Event::ThrottleSeen { name, seen } => [
                Some(Fact::Throttle {
                    name: name.clone(),
                    seen: *seen,
                    rejected: u64::from(self.rejected),
                }),
                None,
            ],
            _ => [None, None],
        }
    }
}

/// `--throttle-status NAME` with `--metrics-dir` or `--statsd`: the
/// throttle as read, to each (no attempt rejected); a warning if its file
/// could not be written.
pub fn throttle_status(settings: &Settings, name: &str, seen: &Seen) -> Option<String> {
    if let Some(target) = &settings.statsd
        && let Ok(job) = job::parse(name)
    {
        let mut statsd = statsd::Statsd::new(target, &job, settings.statsd_tags);
        statsd.throttle(name, 0, seen);
        statsd.finish();
    }
    let dir = settings.dir.as_ref()?;
    throttle::write(dir, name, 0, seen)
}

/// A file of series of its own in `dir` (a circuit's, a throttle's:
/// `file`), written by `write` under the kernel's lock on `.FILE.lock`
/// beside it (waited for at most the textfile's `LOCK_WAIT`), which it is
/// given with that lock file's name; a warning naming the file and
/// `whose` series keep the run before if it cannot be, or if `write`
/// says why not.
fn write_locked(
    dir: &std::path::Path,
    file: &str,
    whose: &str,
    write: impl FnOnce(&std::path::Path, &std::fs::File, &str) -> Result<(), String>,
) -> Option<String> {
    use crate::platform::publish;
    let path = dir.join(file);
    let not_written = |why: String| {
        Some(format!(
            "cannot write --metrics-dir '{}': {why}; {whose} series keep the run before",
            path.display()
        ))
    };
    let lock_name = format!(".{file}.lock");
    let lock_file = match publish::lock_file(dir, &lock_name) {
        Ok(file) => file,
        Err(why) => return not_written(format!("its lock '{lock_name}': {why}")),
    };
    let _lock = match crate::platform::lock::Lock::take(&lock_file, textfile::LOCK_WAIT) {
        Ok(lock) => lock,
        Err(error) => return not_written(crate::os_error::describe(&error)),
    };
    write(&path, &lock_file, &lock_name)
        .err()
        .and_then(not_written)
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
    use crate::events::{Class, Phase, Stamp};
    use crate::policy::Attempts;
    use crate::status::Status;
    use crate::strategy::{Jitter, Sleep};

    fn retrying(attempt: u32, sleep_ms: u64) -> Event {
        // The first failure was throttled, the rest transient.
        let class = match attempt {
            1 => Class::Throttled(crate::events::Evidence::Hint),
            _ => Class::Transient,
        };
        Event::Retrying {
            attempt,
            limit: Attempts::Limit(5),
            status: Status::exited(7),
            class,
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
    fn a_reset_streak_counts_in_the_runs_attempts() {
        let wall = SystemTime::UNIX_EPOCH;
        let at = |event| Stamped {
            stamp: Stamp {
                time: wall,
                elapsed: Duration::ZERO,
            },
            event,
        };
        let limit = Attempts::Limit(5);
        let reset = Event::Reset {
            attempt: 2,
            limit,
            ran: Duration::from_secs(600),
        };
        let ending = |facts: &mut Facts, last: Event| match facts.observe(&at(last)) {
            [_, Some(Fact::End(ending))] => (ending.attempts, ending.throttled),
            other => panic!("{other:?}"),
        };
        // Attempts 1 and 2 (ran long), then attempts 1 and 2 of a new
        // streak: four in all, the first of each streak throttled.
        let mut facts = Facts::new(wall);
        for event in [retrying(1, 10), retrying(2, 10), reset.clone()] {
            facts.observe(&at(event));
        }
        facts.observe(&at(Event::Starting { attempt: 1, limit }));
        facts.observe(&at(retrying(1, 10)));
        let succeeded = Event::Succeeded {
            attempt: 2,
            limit,
            status: Status::exited(0),
            slept_ms: 30,
            took: Duration::ZERO,
        };
        assert_eq!(ending(&mut facts, succeeded), (4, 2));
        // A signal in the sleep after the reset: no new streak began.
        let mut facts = Facts::new(wall);
        for event in [retrying(1, 10), retrying(2, 10), reset] {
            facts.observe(&at(event));
        }
        let signal = Event::GaveUp {
            attempt: 2,
            limit,
            reason: GiveUp::Signal {
                signal: 15,
                status: None,
                during: Phase::Sleep,
            },
            took: None,
        };
        assert_eq!(ending(&mut facts, signal), (2, 1));
    }

    #[test]
    fn facts_come_from_the_events() {
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut facts = Facts::new(wall);
        let at = |s, event| Stamped {
            stamp: Stamp {
                time: wall + Duration::from_secs(s),
                elapsed: Duration::from_secs(s),
            },
            event,
        };
        let starting = Event::Starting {
            attempt: 1,
            limit: Attempts::Limit(5),
        };
        assert_eq!(facts.observe(&at(0, starting)), [None, None]);
        let [first, none] = facts.observe(&at(1, retrying(1, 1500)));
        assert_eq!(first, Some(Fact::Attempt(Duration::from_millis(30))));
        assert_eq!(none, None);
        facts.observe(&at(4, retrying(2, 2500)));
        let gave_up = Event::GaveUp {
            attempt: 3,
            limit: Attempts::Limit(5),
            reason: GiveUp::Fatal(Status::exited(2), None),
            took: Some(Duration::from_millis(20)),
        };
        let [attempt, end] = facts.observe(&at(9, gave_up));
        assert_eq!(attempt, Some(Fact::Attempt(Duration::from_millis(20))));
        assert_eq!(
            end,
            Some(Fact::End(Ending {
                start: wall,
                end: wall + Duration::from_secs(9),
                duration: Duration::from_secs(9),
                attempts: 3,
                throttled: 1,
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
        let [attempt, end] = facts.observe(&at(9, signal));
        assert_eq!(attempt, None);
        let Some(Fact::End(end)) = end else {
            panic!("{end:?}")
        };
        // 128 + 15 on Unix; Windows' STATUS_CONTROL_C_EXIT, as retry exits.
        let killed = crate::platform::signal_exit_code(15);
        assert_eq!((end.outcome, end.exit_code), (Outcome::Interrupted, killed));
    }

    /// Rejected attempts did not start: not counted as attempts, but their
    /// sleeps are the run's; the throttle's fact counts them.
    #[test]
    fn rejected_attempts_are_no_attempts_and_the_throttle_counts_them() {
        use crate::events::RanOut;
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut facts = Facts::new(wall);
        let at = |event| Stamped {
            stamp: Stamp {
                time: wall,
                elapsed: Duration::ZERO,
            },
            event,
        };
        // Attempt 2 rejected, after a sleep of 700 ms.
        let rejected = || Event::Rejected {
            attempt: 2,
            limit: Attempts::Limit(3),
            throttle: "api".into(),
            probability: 0.5,
            sleep: Sleep {
                duration: Duration::from_millis(700),
                ceiling: Duration::from_secs(1),
            },
            jitter: Jitter::Full,
        };
        facts.observe(&at(retrying(1, 300)));
        assert_eq!(facts.observe(&at(rejected())), [None, None]);
        let gave_up = Event::GaveUp {
            attempt: 3,
            limit: Attempts::Limit(3),
            reason: GiveUp::Rejected {
                throttle: "api".into(),
                probability: 0.5,
                status: Some(Status::exited(7)),
                ran_out: RanOut::Attempts,
                code: 75,
            },
            took: None,
        };
        let [none, end] = facts.observe(&at(gave_up));
        assert_eq!(none, None);
        let Some(Fact::End(end)) = end else {
            panic!("{end:?}")
        };
        assert_eq!(
            (end.attempts, end.slept, end.exit_code, end.outcome),
            (1, Duration::from_secs(1), 7, Outcome::Exhausted)
        );
        // Attempt 1's throttled retry and the rejected attempt's never
        // started: no retry at all.
        assert_eq!(end.throttled, 0);
        let seen = Seen {
            probability: 0.5,
            requests: 3.0,
            accepts: 0.0,
            at: wall,
        };
        let name = "api".to_owned();
        let [fact, _] = facts.observe(&at(Event::ThrottleSeen { name, seen }));
        assert_eq!(
            fact,
            Some(Fact::Throttle {
                name: "api".into(),
                seen,
                rejected: 2
            })
        );
        // Rejected, then run: the attempt after the rejection is a retry
        // after a throttled failure; one rejected before any ran is none.
        let mut facts = Facts::new(wall);
        facts.observe(&at(retrying(1, 300)));
        facts.observe(&at(rejected()));
        let succeeded = Event::Succeeded {
            attempt: 3,
            limit: Attempts::Limit(3),
            status: Status::exited(0),
            slept_ms: 1000,
            took: Duration::from_millis(5),
        };
        let [_, Some(Fact::End(end))] = facts.observe(&at(succeeded)) else {
            panic!()
        };
        assert_eq!((end.attempts, end.throttled), (2, 1));
        let mut facts = Facts::new(wall);
        facts.observe(&at(Event::Rejected {
            attempt: 1,
            limit: Attempts::Limit(3),
            throttle: "api".into(),
            probability: 0.5,
            sleep: Sleep {
                duration: Duration::from_millis(700),
                ceiling: Duration::from_secs(1),
            },
            jitter: Jitter::Full,
        }));
        let first_ran = Event::Succeeded {
            attempt: 2,
            limit: Attempts::Limit(3),
            status: Status::exited(0),
            slept_ms: 700,
            took: Duration::from_millis(5),
        };
        let [_, Some(Fact::End(end))] = facts.observe(&at(first_ran)) else {
            panic!()
        };
        assert_eq!((end.attempts, end.throttled), (1, 0));
    }

    #[test]
    fn a_throttled_retry_that_never_started_is_not_counted() {
        let wall = SystemTime::UNIX_EPOCH;
        let mut facts = Facts::new(wall);
        let at = |event| Stamped {
            stamp: Stamp {
                time: wall,
                elapsed: Duration::ZERO,
            },
            event,
        };
        facts.observe(&at(retrying(1, 10)));
        // Attempt 2 throttled too, its sleep interrupted: no attempt 3.
        let Event::Retrying { class, .. } = retrying(1, 10) else {
            unreachable!()
        };
        let second = match retrying(2, 10) {
            Event::Retrying {
                attempt,
                limit,
                status,
                sleep,
                jitter,
                hint,
                took,
                ..
            } => Event::Retrying {
                attempt,
                limit,
                status,
                class,
                sleep,
                jitter,
                hint,
                took,
            },
            _ => unreachable!(),
        };
        facts.observe(&at(second));
        let signal = Event::GaveUp {
            attempt: 2,
            limit: Attempts::Limit(5),
            reason: GiveUp::Signal {
                signal: 15,
                status: None,
                during: Phase::Sleep,
            },
            took: None,
        };
        let [_, end] = facts.observe(&at(signal));
        let Some(Fact::End(end)) = end else {
            panic!("{end:?}")
        };
        assert_eq!((end.attempts, end.throttled), (2, 1));
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
            (
                GiveUp::Rejected {
                    throttle: "api".into(),
                    probability: 0.5,
                    status: None,
                    ran_out: crate::events::RanOut::Attempts,
                    code: 75,
                },
                "skipped",
            ),
            (
                GiveUp::Rejected {
                    throttle: "api".into(),
                    probability: 0.5,
                    status: Some(s),
                    ran_out: crate::events::RanOut::Budget,
                    code: 75,
                },
                "budget",
            ),
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
}
