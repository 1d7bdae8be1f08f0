//! The attempt loop: run, judge, sleep, run again. Everything that touches
//! the outside world (clock, processes, signals) is behind `Host`, so this
//! file holds only the rules and its tests run without a process or a sleep.
//!
//! ```text
//!   ┌─> run attempt ──> success? ──yes──> exit with its status
//!   │        │ no
//!   │   fatal / not retryable / last attempt / max-time? ──yes──> give up
//!   │        │ no
//!   └── sleep (Schedule::next_sleep) <── a signal here gives up at once
//! ```

pub mod countdown;
pub mod events;
pub mod log;
pub mod name;
pub mod pipes;
pub mod signals;
pub mod supervisor;

use std::time::{Duration, Instant};

use rand::Rng;

use crate::cli::Attempts;
use crate::cli::config::Config;
use crate::policy::Verdict;
use crate::run::events::{Event, GiveUp, Phase};
use crate::status::Status;
use crate::strategy::Schedule;

/// What an attempt needs to know about itself (exported to the child).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptInfo {
    pub number: u32,
    pub limit: Attempts,
    pub previous_code: Option<i32>,
}

/// What `--retry-if-output` and `--stop-if-output` found in an attempt's output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputSeen {
    pub retry_if: bool,
    pub stop_if: bool,
}

/// How one attempt ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    Exited(Status, OutputSeen),
    /// Stopped at the deadline it was given.
    TimedOut,
    /// retry received `signal`; the command, if it had started, was stopped
    /// and reaped with `status`.
    Interrupted {
        signal: i32,
        status: Option<Status>,
    },
    /// retry itself failed to carry the attempt's input or output (its
    /// pipes); the attempt was stopped, since its result cannot be trusted.
    Failed(String),
}

/// Why held-back output could not be settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unsettled {
    /// A signal arrived while retry was writing it.
    Interrupted(i32),
    /// stdout's reader went away.
    BrokenPipe,
    /// Any other write error, as one line.
    Failed(String),
}

/// How retry itself ends: with an exit status, or by dying of a signal
/// (the one that stopped it), so its caller sees what it would have seen
/// without retry in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

/// The command could not be started (126 or 127).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnError {
    pub code: i32,
    pub message: String,
}

/// The outside world as the runner sees it.
pub trait Host {
    fn now(&self) -> Instant;
    /// Runs one attempt to its end, stopping it at `deadline`.
    fn run(&mut self, attempt: AttemptInfo, deadline: Option<Instant>)
    -> Result<Ended, SpawnError>;
    /// Sleeps until `until`; returns the signal that cut it short, if any.
    fn sleep_until(&mut self, until: Instant) -> Option<i32>;
    /// With `--stdout-once`: where the attempt that just ended sends its
    /// held-back stdout (stdout if it ends the run, else stderr).
    fn settle_output(&mut self, to_stdout: bool) -> Result<(), Unsettled>;
    /// Runs the `--on-retry` shell command after failed attempt `attempt`.
    fn run_hook(
        &mut self,
        script: &str,
        attempt: u32,
        exit_code: i32,
        deadline: Option<Instant>,
    ) -> Result<Ended, SpawnError>;
}

/// Runs the loop to its end and returns how retry ends.
pub fn run<R: Rng>(
    config: &Config,
    host: &mut impl Host,
    emit: &mut impl FnMut(&Event),
    new_rng: impl FnOnce() -> R,
) -> Exit {
    let limit = config.attempts;
    // A limit too far away to represent is no limit (never an overflow).
    let after = |now: Instant, limit: Option<Duration>| limit.and_then(|l| now.checked_add(l));
    let run_deadline = after(host.now(), config.max_time);
    let mut schedule = Schedule::new(config.backoff);
    // Seeded only when a first sleep is needed: a run that succeeds at once
    // never pays for entropy.
    let mut new_rng = Some(new_rng);
    let mut rng: Option<R> = None;
    let mut previous_code = None;
    let mut slept_ms = 0;
    let mut number = 1;
    loop {
        emit(&Event::Starting {
            attempt: number,
            limit,
        });
        let info = AttemptInfo {
            number,
            limit,
            previous_code,
        };
        let attempt_deadline = after(host.now(), config.timeout);
        let deadline = earliest(attempt_deadline, run_deadline);
        let give_up = |reason: GiveUp, emit: &mut dyn FnMut(&Event)| {
            let exit = reason.exit();
            emit(&Event::GaveUp {
                attempt: number,
                limit,
                reason,
            });
            exit
        };
        let signal = |signal, status, during| GiveUp::Signal {
            signal,
            status,
            during,
        };
        // Settles held-back output; a failure to do so ends the run.
        let settle = |host: &mut dyn Host, to_stdout: bool| -> Result<(), GiveUp> {
            host.settle_output(to_stdout)
                .map_err(|unsettled| match unsettled {
                    Unsettled::Interrupted(n) => signal(n, None, Phase::Output),
                    Unsettled::BrokenPipe => GiveUp::StdoutClosed,
                    Unsettled::Failed(message) => GiveUp::Failed(message),
                })
        };

        let ended = match host.run(info, deadline) {
            Ok(ended) => ended,
            Err(SpawnError { code, message }) => {
                return give_up(GiveUp::Spawn { code, message }, emit);
            }
        };
        let (status, seen, max_time_hit) = match ended {
            Ended::Exited(status, seen) => (status, seen, false),
            Ended::TimedOut => {
                let by_max_time = deadline.is_some() && deadline == run_deadline;
                let limit = if by_max_time {
                    config.max_time
                } else {
                    config.timeout
                };
                let status = Status::timed_out(limit.unwrap_or_default());
                (status, OutputSeen::default(), by_max_time)
            }
            Ended::Interrupted { signal: n, status } => {
                let _ = host.settle_output(false);
                return give_up(signal(n, status, Phase::Attempt), emit);
            }
            Ended::Failed(message) => {
                let _ = host.settle_output(false);
                return give_up(GiveUp::Failed(message), emit);
            }
        };

        // The output conditions come first: a stop match ends the run, a
        // retry match makes even a success (but not a fatal code) retryable.
        let verdict = config.policy.classify(status.code);
        let (status, verdict) = match verdict {
            _ if seen.stop_if => (status, verdict),
            Verdict::Success if !seen.retry_if => (status, verdict),
            Verdict::Success | Verdict::Retry | Verdict::NotRetryable if seen.retry_if => (
                status.output_matched(verdict == Verdict::Success),
                Verdict::Retry,
            ),
            // A failure never reports 0: `retry ... && deploy` must not deploy.
            _ => (status.as_failure(), verdict),
        };
        let verdict = match verdict {
            _ if seen.stop_if => Err(GiveUp::OutputStop(status)),
            Verdict::Success => {
                if let Err(reason) = settle(host, true) {
                    return give_up(reason, emit);
                }
                emit(&Event::Succeeded {
                    attempt: number,
                    limit,
                    status,
                    slept_ms,
                });
                return Exit::Code(status.code);
            }
            _ if max_time_hit => Err(GiveUp::MaxTimeReached(status)),
            Verdict::Fatal => Err(GiveUp::Fatal(status)),
            Verdict::NotRetryable => Err(GiveUp::NotRetryable(status)),
            Verdict::Retry => Ok(()),
        };
        let verdict = verdict.and_then(|()| match limit.allows_after(number) {
            true => Ok(()),
            false => Err(GiveUp::Attempts(status)),
        });
        if let Err(reason) = verdict {
            // An attempt retry itself stopped holds partial output: not stdout.
            let settled = settle(host, !matches!(ended, Ended::TimedOut));
            return give_up(settled.err().unwrap_or(reason), emit);
        }

        let rng = rng.get_or_insert_with(|| new_rng.take().map_or_else(|| unreachable!(), |f| f()));
        let sleep = schedule.next_sleep(rng);
        let sleep_ms = crate::duration::millis(sleep.duration);
        let past_max_time = |now: Instant| {
            run_deadline.is_some_and(|end| now.checked_add(sleep.duration).is_none_or(|w| w > end))
        };
        if past_max_time(host.now()) {
            let settled = settle(host, true);
            let reason = GiveUp::MaxTimeAhead { status, sleep_ms };
            return give_up(settled.err().unwrap_or(reason), emit);
        }
        if let Err(reason) = settle(host, false) {
            return give_up(reason, emit);
        }
        emit(&Event::Retrying {
            attempt: number,
            limit,
            status,
            sleep,
            jitter: config.backoff.jitter,
        });
        if let Some(script) = &config.on_retry {
            let hook_status = match host.run_hook(script, number, status.code, run_deadline) {
                Ok(Ended::Exited(hook, _)) => hook,
                Err(SpawnError { code, .. }) => Status::exited(code),
                Ok(Ended::TimedOut) => return give_up(GiveUp::MaxTimeInHook(status), emit),
                Ok(Ended::Interrupted { signal: n, .. }) => {
                    return give_up(signal(n, None, Phase::Hook), emit);
                }
                Ok(Ended::Failed(message)) => return give_up(GiveUp::Failed(message), emit),
            };
            if hook_status.code != 0 {
                emit(&Event::HookFailed {
                    attempt: number,
                    limit,
                    status: hook_status,
                });
            }
            // The hook ran inside the run's time: the sleep must still fit.
            if past_max_time(host.now()) {
                return give_up(GiveUp::MaxTimeAhead { status, sleep_ms }, emit);
            }
        }
        let asleep = host.now();
        // A sleep too long to represent ends never: only a signal ends it.
        let interrupted = match asleep.checked_add(sleep.duration) {
            Some(wake) => host.sleep_until(wake),
            None => host.sleep_until(far_future(asleep)),
        };
        slept_ms += sleep_ms;
        if let Some(n) = interrupted {
            return give_up(signal(n, None, Phase::Sleep), emit);
        }
        previous_code = Some(match status.cause {
            crate::status::Cause::ZeroNotSuccess => 0,
            _ => status.code,
        });
        number = number.saturating_add(1);
    }
}

/// The latest instant that is safe to compute from `now`: about a century on.
fn far_future(now: Instant) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 86_400);
    now.checked_add(CENTURY).unwrap_or(now)
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::time::Duration;

    const MS: Duration = Duration::from_millis(1);

    /// A scripted world: each attempt takes `attempt_ms` of fake time and
    /// ends as the next entry of `script` says; sleeps advance the clock.
    struct FakeHost {
        start: Instant,
        elapsed: Duration,
        script: Vec<Result<Ended, SpawnError>>,
        attempt_ms: u64,
        seen: Vec<AttemptInfo>,
        sleeps: Vec<Duration>,
        signal_in_sleep: Option<i32>,
        hooks: Vec<(String, u32, i32)>,
        settled: Vec<bool>,
        hook_code: i32,
        hook_ms: u64,
        /// What the next settle_output fails with, if anything.
        unsettled: Option<Unsettled>,
        /// How much longer than asked each sleep lasts, as a busy machine's do.
        oversleep: Duration,
    }

    impl FakeHost {
        fn new(script: Vec<Result<Ended, SpawnError>>) -> Self {
            Self {
                start: Instant::now(),
                elapsed: Duration::ZERO,
                script,
                attempt_ms: 1,
                seen: vec![],
                sleeps: vec![],
                signal_in_sleep: None,
                hooks: vec![],
                settled: vec![],
                hook_code: 0,
                hook_ms: 0,
                unsettled: None,
                oversleep: Duration::ZERO,
            }
        }
    }

    impl Host for FakeHost {
        fn now(&self) -> Instant {
            self.start + self.elapsed
        }
        fn run(
            &mut self,
            attempt: AttemptInfo,
            deadline: Option<Instant>,
        ) -> Result<Ended, SpawnError> {
            self.seen.push(attempt);
            let end = self.now() + MS * self.attempt_ms as u32;
            if let Some(deadline) = deadline.filter(|d| *d < end) {
                self.elapsed = deadline - self.start;
                return Ok(Ended::TimedOut);
            }
            self.elapsed = end - self.start;
            self.script.remove(0)
        }
        fn sleep_until(&mut self, until: Instant) -> Option<i32> {
            self.sleeps.push(until - self.now());
            if self.signal_in_sleep.is_some() {
                return self.signal_in_sleep;
            }
            self.elapsed = until - self.start + self.oversleep;
            None
        }
        fn settle_output(&mut self, to_stdout: bool) -> Result<(), Unsettled> {
            self.settled.push(to_stdout);
            self.unsettled.take().map_or(Ok(()), Err)
        }
        fn run_hook(
            &mut self,
            script: &str,
            attempt: u32,
            exit_code: i32,
            _deadline: Option<Instant>,
        ) -> Result<Ended, SpawnError> {
            self.hooks.push((script.to_owned(), attempt, exit_code));
            self.elapsed += MS * self.hook_ms as u32;
            Ok(Ended::Exited(
                Status::exited(self.hook_code),
                OutputSeen::default(),
            ))
        }
    }

    fn exit(code: i32) -> Result<Ended, SpawnError> {
        Ok(Ended::Exited(Status::exited(code), OutputSeen::default()))
    }

    fn exit_seeing(code: i32, retry_if: bool, stop_if: bool) -> Result<Ended, SpawnError> {
        Ok(Ended::Exited(
            Status::exited(code),
            OutputSeen { retry_if, stop_if },
        ))
    }

    fn config(args: &[&str]) -> Config {
        let argv = ["retry", "--seed", "1"].iter().chain(args).chain(&["cmd"]);
        Config::from_cli(Cli::try_parse_from(argv).unwrap()).unwrap()
    }

    /// The run's exit status as a shell sees it (128+N for a signal death).
    fn run_with(config: &Config, host: &mut FakeHost) -> (i32, Vec<Event>) {
        let (exit, events) = run_exit(config, host);
        let code = match exit {
            Exit::Code(code) => code,
            Exit::Signal(n) => 128 + n,
        };
        (code, events)
    }

    fn run_exit(config: &Config, host: &mut FakeHost) -> (Exit, Vec<Event>) {
        let mut events = vec![];
        let code = run(
            config,
            host,
            &mut |e: &Event| events.push(e.clone()),
            || ChaCha8Rng::seed_from_u64(1),
        );
        events.retain(|e| !matches!(e, Event::Starting { .. }));
        (code, events)
    }

    fn gave_up(events: &[Event]) -> &GiveUp {
        match events.last() {
            Some(Event::GaveUp { reason, .. }) => reason,
            other => panic!("expected a give-up, got {other:?}"),
        }
    }

    #[test]
    fn first_success_runs_once_and_sleeps_never() {
        let mut host = FakeHost::new(vec![exit(0)]);
        let (code, events) = run_with(&config(&[]), &mut host);
        assert_eq!(code, 0);
        assert_eq!(host.seen.len(), 1);
        assert!(host.sleeps.is_empty());
        assert!(matches!(events[..], [Event::Succeeded { attempt: 1, .. }]));
    }

    #[test]
    fn retries_until_success_with_the_schedules_sleeps() {
        let mut host = FakeHost::new(vec![exit(1), exit(7), exit(0)]);
        let c = config(&["--jitter", "none", "--base", "10ms"]);
        let (code, events) = run_with(&c, &mut host);
        assert_eq!(code, 0);
        assert_eq!(host.sleeps, [MS * 10, MS * 20]);
        let previous: Vec<_> = host
            .seen
            .iter()
            .map(|a| (a.number, a.previous_code))
            .collect();
        assert_eq!(previous, [(1, None), (2, Some(1)), (3, Some(7))]);
        assert!(matches!(
            events.last(),
            Some(Event::Succeeded { attempt: 3, .. })
        ));
    }

    #[test]
    fn exhausted_attempts_exit_with_the_last_status() {
        let mut host = FakeHost::new(vec![exit(1), exit(2), exit(3)]);
        let (code, events) = run_with(&config(&["-n", "3", "--base", "1ms"]), &mut host);
        assert_eq!(code, 3);
        assert_eq!(host.seen.len(), 3);
        assert_eq!(gave_up(&events), &GiveUp::Attempts(Status::exited(3)));
    }

    #[test]
    fn fatal_and_unlisted_codes_stop_at_once() {
        let c = config(&["--retry-on", "1-9", "--fatal-on", "5"]);
        let mut host = FakeHost::new(vec![exit(5)]);
        let (code, events) = run_with(&c, &mut host);
        assert_eq!((code, host.seen.len()), (5, 1));
        assert_eq!(gave_up(&events), &GiveUp::Fatal(Status::exited(5)));

        let mut host = FakeHost::new(vec![exit(42)]);
        let (code, events) = run_with(&c, &mut host);
        assert_eq!((code, host.seen.len()), (42, 1));
        assert_eq!(gave_up(&events), &GiveUp::NotRetryable(Status::exited(42)));
    }

    #[test]
    fn timeout_is_124_and_retryable() {
        let mut host = FakeHost::new(vec![exit(0)]);
        host.attempt_ms = 50;
        let c = config(&["--timeout", "10ms", "-n", "2", "--base", "1ms"]);
        let (code, events) = run_with(&c, &mut host);
        assert_eq!(code, 124);
        assert_eq!(host.seen.len(), 2);
        assert_eq!(
            gave_up(&events),
            &GiveUp::Attempts(Status::timed_out(MS * 10))
        );
    }

    #[test]
    fn timeout_listed_as_fatal_stops() {
        let mut host = FakeHost::new(vec![]);
        host.attempt_ms = 50;
        let c = config(&["--timeout", "10ms", "--fatal-on", "124"]);
        let (code, _) = run_with(&c, &mut host);
        assert_eq!((code, host.seen.len()), (124, 1));
    }

    #[test]
    fn max_time_refuses_a_sleep_that_would_end_past_it() {
        let mut host = FakeHost::new(vec![exit(1), exit(1), exit(1)]);
        // Sleeps 100, 200: the second would end at ~302 ms, past 250 ms.
        let c = config(&[
            "--jitter",
            "none",
            "--base",
            "100ms",
            "--max-time",
            "250ms",
            "-n",
            "9",
        ]);
        let (code, events) = run_with(&c, &mut host);
        assert_eq!(code, 1);
        assert_eq!(host.seen.len(), 2);
        assert_eq!(
            gave_up(&events),
            &GiveUp::MaxTimeAhead {
                status: Status::exited(1),
                sleep_ms: 200
            }
        );
    }

    #[test]
    fn max_time_stops_the_running_attempt() {
        let mut host = FakeHost::new(vec![]);
        host.attempt_ms = 1000;
        let c = config(&["--max-time", "30ms", "--timeout", "1h"]);
        let (code, events) = run_with(&c, &mut host);
        assert_eq!((code, host.seen.len()), (124, 1));
        assert_eq!(
            gave_up(&events),
            &GiveUp::MaxTimeReached(Status::timed_out(MS * 30))
        );
    }

    #[test]
    fn signal_during_sleep_ends_the_run() {
        let mut host = FakeHost::new(vec![exit(1)]);
        host.signal_in_sleep = Some(15);
        let (code, events) = run_with(&config(&[]), &mut host);
        assert_eq!((code, host.seen.len()), (143, 1));
        assert_eq!(
            gave_up(&events),
            &GiveUp::Signal {
                signal: 15,
                status: None,
                during: Phase::Sleep,
            }
        );
    }

    #[test]
    fn signal_during_attempt_exits_128_plus_n() {
        let status = Status::exited(0);
        let mut host = FakeHost::new(vec![Ok(Ended::Interrupted {
            signal: 2,
            status: Some(status),
        })]);
        let (code, _) = run_with(&config(&[]), &mut host);
        assert_eq!((code, host.seen.len()), (130, 1));
    }

    #[test]
    fn spawn_failure_is_not_retried() {
        let err = SpawnError {
            code: 127,
            message: "not found".into(),
        };
        let mut host = FakeHost::new(vec![Err(err)]);
        let (code, events) = run_with(&config(&[]), &mut host);
        assert_eq!((code, host.seen.len()), (127, 1));
        assert_eq!(gave_up(&events).reason(), "spawn");
    }

    #[test]
    fn retry_events_carry_the_computed_sleep() {
        let mut host = FakeHost::new(vec![exit(22), exit(0)]);
        let (_, events) = run_with(&config(&["--jitter", "full", "--base", "2s"]), &mut host);
        let Event::Retrying {
            attempt,
            sleep,
            status,
            ..
        } = &events[0]
        else {
            panic!("{events:?}")
        };
        assert_eq!((*attempt, status.code), (1, 22));
        assert_eq!(sleep.ceiling, Duration::from_secs(2));
        assert_eq!(host.sleeps, [sleep.duration]);
    }

    #[test]
    fn unlimited_keeps_going() {
        let mut script: Vec<_> = (0..50).map(|_| exit(1)).collect();
        script.push(exit(0));
        let mut host = FakeHost::new(script);
        let (code, _) = run_with(&config(&["-n", "unlimited", "--base", "0ms"]), &mut host);
        assert_eq!((code, host.seen.len()), (0, 51));
    }

    #[test]
    fn success_after_retries_reports_the_sleeps_it_showed() {
        let mut host = FakeHost::new(vec![exit(1), exit(1), exit(0)]);
        host.oversleep = MS * 3;
        let (_, events) = run_with(&config(&["--jitter", "none", "--base", "10ms"]), &mut host);
        let Some(Event::Succeeded {
            attempt: 3,
            slept_ms,
            ..
        }) = events.last()
        else {
            panic!("{events:?}")
        };
        // 10 + 20 ms as shown, not the 36 ms the clock saw.
        assert_eq!(*slept_ms, 30);
    }

    #[test]
    fn on_retry_runs_after_each_retried_failure_only() {
        let mut host = FakeHost::new(vec![exit(3), exit(4), exit(5)]);
        let (code, _) = run_with(
            &config(&["-n", "3", "--base", "1ms", "--on-retry", "rm -f x"]),
            &mut host,
        );
        assert_eq!(code, 5);
        // Not after the last attempt: no retry follows it.
        assert_eq!(
            host.hooks,
            [("rm -f x".to_owned(), 1, 3), ("rm -f x".to_owned(), 2, 4)]
        );
    }

    #[test]
    fn a_failing_hook_is_logged_and_the_run_goes_on() {
        let mut host = FakeHost::new(vec![exit(1), exit(0)]);
        host.hook_code = 7;
        let (code, events) = run_with(
            &config(&["--base", "1ms", "--on-retry", "false"]),
            &mut host,
        );
        assert_eq!(code, 0);
        assert!(events.iter().any(
            |e| matches!(e, Event::HookFailed { attempt: 1, status, .. } if status.code == 7)
        ));
    }

    #[test]
    fn hook_time_counts_against_max_time() {
        let mut host = FakeHost::new(vec![exit(1), exit(0)]);
        host.hook_ms = 200;
        let c = config(&[
            "--jitter",
            "none",
            "--base",
            "50ms",
            "--max-time",
            "150ms",
            "--on-retry",
            "sleep 1",
        ]);
        let (code, events) = run_with(&c, &mut host);
        assert_eq!((code, host.seen.len()), (1, 1));
        assert_eq!(gave_up(&events).reason(), "max_time");
    }

    #[test]
    fn retry_if_output_retries_even_a_success() {
        let mut host = FakeHost::new(vec![exit_seeing(0, true, false), exit(0)]);
        let (code, events) = run_with(&config(&["--base", "1ms"]), &mut host);
        assert_eq!((code, host.seen.len()), (0, 2));
        let Event::Retrying { status, .. } = &events[0] else {
            panic!("{events:?}")
        };
        assert_eq!(*status, Status::exited(0).output_matched(true));
        // The first attempt's held stdout goes to stderr, the last one's to stdout.
        assert_eq!(host.settled, [false, true]);
    }

    #[test]
    fn a_run_that_gives_up_on_its_output_does_not_exit_0() {
        let mut host = FakeHost::new(vec![
            exit_seeing(0, true, false),
            exit_seeing(0, true, false),
        ]);
        let (code, events) = run_with(&config(&["-n", "2", "--base", "1ms"]), &mut host);
        assert_eq!(code, 1);
        assert_eq!(gave_up(&events).reason(), "attempts");
        // A failing code keeps its own value.
        let mut host = FakeHost::new(vec![exit_seeing(3, true, false)]);
        let (code, _) = run_with(&config(&["-n", "1"]), &mut host);
        assert_eq!(code, 3);
    }

    #[test]
    fn retry_if_output_does_not_override_fatal_codes() {
        let mut host = FakeHost::new(vec![exit_seeing(4, true, false)]);
        let (code, events) = run_with(&config(&["--fatal-on", "4"]), &mut host);
        assert_eq!((code, host.seen.len()), (4, 1));
        assert_eq!(gave_up(&events).reason(), "fatal");
    }

    #[test]
    fn stop_if_output_stops_with_its_own_status() {
        let mut host = FakeHost::new(vec![exit(1), exit_seeing(9, true, true)]);
        let (code, events) = run_with(&config(&["--base", "1ms"]), &mut host);
        assert_eq!((code, host.seen.len()), (9, 2));
        assert_eq!(gave_up(&events), &GiveUp::OutputStop(Status::exited(9)));
        assert_eq!(host.settled, [false, true]);
    }

    #[test]
    fn output_of_an_attempt_retry_stopped_never_reaches_stdout() {
        let mut host = FakeHost::new(vec![]);
        host.attempt_ms = 50;
        let (code, _) = run_with(&config(&["--timeout", "10ms", "-n", "1"]), &mut host);
        assert_eq!(code, 124);
        assert_eq!(host.settled, [false]);
    }
}
