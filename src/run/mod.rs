//! The attempt loop: run, judge, sleep, run again. The judging is
//! `decide::decide`, a pure function; this file carries its decisions out
//! (held output, events, `--on-retry`, the sleep). Everything that touches
//! the outside world (clock, processes, signals, the shared `--budget`'s
//! file) is behind `Host`, so the
//! loop's tests run without a process or a sleep.
//!
//! ```text
//!   ┌─> run attempt ──> decide: success? ──yes──> exit with its status
//!   │        │ no
//!   │   fatal / not retryable / last attempt / max-time? ──yes──> give up
//!   │        │ no
//!   │   sleep: the draw, or the server's hint if longer; past --cap or
//!   │   --max-time? ──yes──> give up
//!   │        │ no
//!   │   --budget cannot pay? ──yes──> give up
//!   │        │ no
//!   └── sleep <── a signal here gives up at once
//! ```

pub mod countdown;
pub mod decide;
pub mod escalation;
pub mod events;
pub mod hint;
pub mod lineage;
pub mod log;
pub mod name;
pub mod pipes;
pub mod supervisor;

use std::time::{Duration, Instant};

use rand::Rng;

use std::ffi::OsString;

use crate::policy::{Attempts, Policy};
use crate::run::decide::{Decision, Facts, Rules, Stopped, decide};
use crate::run::events::{Event, GiveUp, Phase};
use crate::run::hint::{Hint, Hinted};
use crate::run::log::{LogFormat, Verbosity};
use crate::run::pipes::OutputSeen;
use crate::run::supervisor::Foreground;
use crate::state::{breaker, budget};
use crate::status::Status;
use crate::strategy::Backoff;
use crate::strategy::{Schedule, Sleep};

/// Everything a run of COMMAND needs, validated (`cli::config`).
#[derive(Debug)]
pub struct Options {
    pub backoff: Backoff,
    pub attempts: Attempts,
    pub policy: Policy,
    pub timeout: Option<Duration>,
    pub kill_after: Duration,
    pub max_time: Option<Duration>,
    pub seed: Option<u64>,
    pub log_format: LogFormat,
    /// `--log-file`: where retry's lines go instead of stderr.
    pub log_file: Option<std::path::PathBuf>,
    pub verbosity: Verbosity,
    pub foreground: Foreground,
    /// `--on-retry`: a shell command run between a failed attempt and its sleep.
    pub on_retry: Option<String>,
    /// `--stdin`, `--stdout-once` and the output conditions.
    pub pipes: pipes::Settings,
    /// `--budget`: the shared retry budget's name and parameters.
    pub budget: Option<budget::Settings>,
    /// `--breaker`: the shared circuit's name and parameters.
    pub breaker: Option<breaker::Settings>,
    /// `--metrics-dir`, `--statsd` and their job: the run's metrics (`lib.rs`
    /// feeds them its events).
    pub metrics: crate::metrics::Settings,
    /// The preset that judges the run, named or chosen by the program it
    /// wraps (`preset::choose`), and why: `-v` and the JSON log say so.
    pub preset: Option<events::PresetLine>,
    /// Said before the first attempt: why the user's presets file was
    /// ignored, a preset named for another program.
    pub preset_warnings: Vec<String>,
    /// The preset's words for the rules that stop a run (give-up lines).
    pub labels: decide::Labels,
    /// What to do when the server asked to slow down and no wait of its
    /// could be seen (the preset's `slow-down-if-output.advice`, as a
    /// warning's words): said once a run.
    pub slow_down_advice: Option<String>,
    /// What to execute: the program and its arguments (`/bin/sh -c …` with `--shell`).
    pub program: OsString,
    pub args: Vec<OsString>,
}

/// What an attempt needs to know about itself (exported to the child).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptInfo {
    pub number: u32,
    pub limit: Attempts,
    pub previous_code: Option<i32>,
}

/// One attempt as the loop judges it: how it ended, and what its output
/// showed, whatever ended it (a timeout too: what it printed counts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub ended: Ended,
    pub seen: OutputSeen,
}

/// How a command (an attempt or the hook) ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    Exited(Status),
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
    /// The system could not start it for want of a resource (this errno:
    /// EAGAIN at the process limit, EMFILE, ENOMEM): a passing shortage,
    /// judged as a failure with status 125 rather than as a missing program.
    NotStarted(i32),
}

/// Why held-back output could not be settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unsettled {
    /// A signal arrived while retry was writing it; what was not yet
    /// written (bytes) is dropped.
    Interrupted { signal: i32, dropped: u64 },
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
    fn run(
        &mut self,
        attempt: AttemptInfo,
        deadline: Option<Instant>,
    ) -> Result<Attempt, SpawnError>;
    /// Sleeps until `until`; returns the signal that cut it short, if any.
    fn sleep_until(&mut self, until: Instant) -> Option<i32>;
    /// With `--stdout-once`: where the attempt that just ended sends its
    /// held-back stdout (stdout if it ends the run, else stderr).
    fn settle_output(&mut self, to_stdout: bool) -> Result<(), Unsettled>;
    /// With `--stdout-once`, when a signal ends the run: forgets the held-back
    /// stdout instead of writing it; returns how many bytes that was.
    fn drop_output(&mut self) -> u64 {
        0
    }
    /// Runs the `--on-retry` shell command after failed attempt `attempt`.
    fn run_hook(
        &mut self,
        script: &str,
        attempt: u32,
        exit_code: i32,
        deadline: Option<Instant>,
    ) -> Result<Ended, SpawnError>;
    /// `--budget`: takes `tokens` for a retry from the shared budget.
    /// Without one, every retry is granted.
    fn withdraw(&mut self, _tokens: u32) -> budget::Withdrawal {
        budget::Withdrawal::GRANTED
    }
    /// `--budget`: gives `tokens` back after a success; a warning to log.
    fn deposit(&mut self, _tokens: u32) -> Option<String> {
        None
    }
    /// `--breaker`: asked once, before the first attempt, whether the
    /// command may start. Without one, it may.
    fn admit(&mut self) -> breaker::Asked {
        breaker::Asked::default()
    }
    /// `--breaker`: told once, at the run's end, how it ended; a warning to log.
    fn finish(&mut self, _ended: breaker::Ended) -> Option<String> {
        None
    }
}

/// Runs the loop to its end and returns how retry ends.
pub fn run<R: Rng>(
    config: &Options,
    host: &mut impl Host,
    emit: &mut impl FnMut(&Event),
    new_rng: impl FnOnce() -> R,
) -> Exit {
    let mut run = Loop::new(config, host.now(), new_rng);
    if config.breaker.is_some() {
        let asked = host.admit();
        warn(emit, 1, asked.warning);
        if let Some(message) = asked.refused {
            let code = config
                .breaker
                .as_ref()
                .map_or(breaker::EXIT_OPEN, |b| b.exit_code);
            let reason = GiveUp::CircuitOpen(message, code);
            let exit = reason.exit();
            emit(&Event::GaveUp {
                attempt: 0,
                limit: config.attempts,
                reason,
                took: None,
            });
            return exit;
        }
    }
    loop {
        match run.step(host, emit) {
            Ok(None) => {}
            Ok(Some(exit)) => {
                if config.breaker.is_some() {
                    let said = host.finish(breaker::Ended::Succeeded);
                    warn(emit, run.number, said);
                }
                return exit;
            }
            Err(reason) => {
                let exit = reason.exit();
                let ended = reason.breaker_outcome();
                emit(&Event::GaveUp {
                    attempt: run.number,
                    limit: config.attempts,
                    reason,
                    took: run.took.take(),
                });
                warn(emit, run.number, run.budget_said.take());
                if config.breaker.is_some() {
                    warn(emit, run.number, host.finish(ended));
                }
                return exit;
            }
        }
    }
}

/// The loop's state between attempts.
struct Loop<'a, R, F> {
    config: &'a Options,
    rules: Rules,
    run_deadline: Option<Instant>,
    schedule: Schedule,
    /// Seeded only when a first sleep is needed: a run that succeeds at
    /// once never pays for entropy.
    new_rng: Option<F>,
    rng: Option<R>,
    number: u32,
    previous_code: Option<i32>,
    /// The sleeps as the retry lines showed them, added up.
    slept_ms: u128,
    /// What the `--budget` was paid for the last retry (refunded on success).
    last_paid: Option<u32>,
    /// What the budget said when asked for a retry, logged after the line
    /// of the attempt that asked (retrying or giving up).
    budget_said: Option<String>,
    /// An unreadable server hint is logged once a run.
    hint_warned: bool,
    /// So is how to show the server's wait, when it asked to slow down.
    advised: bool,
    /// How long the attempt that just ended ran, until the loop moves past
    /// it (to its hook or sleep): the logs give it with the attempt's end.
    took: Option<Duration>,
}

impl<'a, R: Rng, F: FnOnce() -> R> Loop<'a, R, F> {
    fn new(config: &'a Options, now: Instant, new_rng: F) -> Self {
        Self {
            config,
            rules: Rules {
                policy: config.policy.clone(),
                limit: config.attempts,
                cap: config.backoff.cap,
                labels: config.labels.clone(),
            },
            run_deadline: after(now, config.max_time),
            schedule: Schedule::new(config.backoff),
            new_rng: Some(new_rng),
            rng: None,
            number: 1,
            previous_code: None,
            slept_ms: 0,
            last_paid: None,
            budget_said: None,
            hint_warned: false,
            advised: false,
            took: None,
        }
    }

    /// One attempt and what follows it: the exit if the run ends there,
    /// `None` when another attempt follows, or why retry gives up.
    fn step(
        &mut self,
        host: &mut impl Host,
        emit: &mut impl FnMut(&Event),
    ) -> Result<Option<Exit>, GiveUp> {
        let limit = self.config.attempts;
        emit(&Event::Starting {
            attempt: self.number,
            limit,
        });
        let facts = self.attempt(host, emit)?;
        if let Some(Hint::Unparseable(text)) = &facts.seen.hint
            && !std::mem::replace(&mut self.hint_warned, true)
        {
            emit(&Event::Warning {
                attempt: self.number,
                message: format!(
                    "--delay-from-output captured `{text}`, which is not a number of seconds, a duration or an HTTP-date; ignored (said once)"
                ),
            });
        }
        let (rng, new_rng, schedule) = (&mut self.rng, &mut self.new_rng, &mut self.schedule);
        let draw = || {
            let rng =
                rng.get_or_insert_with(|| new_rng.take().map_or_else(|| unreachable!(), |f| f()));
            schedule.next_sleep(rng)
        };
        let budget = self.config.budget.as_ref().map(|b| b.params);
        let (mut paid, mut warning) = (None, None);
        let pay = |after_timeout| {
            let Some(params) = budget else {
                return true;
            };
            let tokens = params.retry_cost(after_timeout);
            let withdrawal = host.withdraw(tokens);
            warning = withdrawal.warning;
            paid = withdrawal.granted.then_some(tokens);
            withdrawal.granted
        };
        let decision = decide(&self.rules, &facts, draw, pay);
        // The server asked to slow down and its wait was hidden: how to
        // show it, said once, before the attempt's line (none if it succeeded).
        if facts.seen.slow_down
            && facts.seen.hint.is_none()
            && !matches!(decision, Decision::Succeed(_))
            && let Some(advice) = &self.config.slow_down_advice
            && !std::mem::replace(&mut self.advised, true)
        {
            emit(&Event::Warning {
                attempt: self.number,
                message: advice.clone(),
            });
        }
        // Said after the attempt's line (retrying or giving up), which the
        // budget's answer follows.
        self.budget_said = warning;
        match decision {
            Decision::Succeed(status) => {
                // A success refunds what its last retry cost. A first-try
                // success adds nothing (the AWS SDKs add 1): the refill
                // with time already covers it, and so the run never
                // touches the budget's store.
                let said = self.last_paid.and_then(|tokens| host.deposit(tokens));
                settle(host, true, emit, self.number)?;
                emit(&Event::Succeeded {
                    attempt: self.number,
                    limit,
                    status,
                    slept_ms: self.slept_ms,
                    took: self.took.unwrap_or_default(),
                });
                warn(emit, self.number, said);
                Ok(Some(Exit::Code(status.code)))
            }
            Decision::GiveUp(reason) => {
                settle(host, false, emit, self.number)?;
                Err(reason)
            }
            Decision::Retry {
                status,
                sleep,
                hint,
            } => {
                self.last_paid = paid;
                if let Err(reason) = self.pause(host, emit, status, sleep, hint) {
                    // No retry follows (a signal, --max-time after the
                    // hook): its tokens go back.
                    warn(
                        emit,
                        self.number,
                        paid.and_then(|tokens| host.deposit(tokens)),
                    );
                    return Err(reason);
                }
                self.previous_code = Some(match status.cause {
                    crate::status::Cause::ZeroNotSuccess => 0,
                    _ => status.code,
                });
                self.number = self.number.saturating_add(1);
                Ok(None)
            }
        }
    }

    /// Runs the attempt and gathers the facts the rules judge it by.
    fn attempt(
        &mut self,
        host: &mut impl Host,
        emit: &mut impl FnMut(&Event),
    ) -> Result<Facts, GiveUp> {
        let config = self.config;
        let info = AttemptInfo {
            number: self.number,
            limit: config.attempts,
            previous_code: self.previous_code,
        };
        let started = host.now();
        let deadline = earliest(after(started, config.timeout), self.run_deadline);
        self.took = None;
        let Attempt { ended, seen } = host
            .run(info, deadline)
            .map_err(|SpawnError { code, message }| GiveUp::Spawn { code, message })?;
        self.took = Some(host.now().saturating_duration_since(started));
        let (status, stopped) = match ended {
            Ended::Exited(status) => (status, Stopped::No),
            Ended::NotStarted(errno) => (Status::not_started(errno), Stopped::No),
            Ended::TimedOut => {
                let (limit, stopped) = if deadline.is_some() && deadline == self.run_deadline {
                    (config.max_time, Stopped::ByMaxTime)
                } else {
                    (config.timeout, Stopped::ByTimeout)
                };
                (Status::timed_out(limit.unwrap_or_default()), stopped)
            }
            // A signal ends the run promptly: held-back output is dropped,
            // not written (gigabytes of it, or a stalled reader, would hold
            // the exit up), and the log says how much.
            Ended::Interrupted { signal, status } => {
                let dropped = host.drop_output();
                if dropped > 0 {
                    warn(emit, self.number, Some(dropped_on_signal("", dropped)));
                }
                return Err(GiveUp::Signal {
                    signal,
                    status,
                    during: Phase::Attempt,
                });
            }
            Ended::Failed(message) => {
                let _ = host.settle_output(false);
                return Err(GiveUp::Failed(message));
            }
        };
        Ok(Facts {
            number: self.number,
            status,
            seen,
            stopped,
            time_left: self.time_left(host.now()),
        })
    }

    /// Between a failed attempt and the next: its held output to stderr,
    /// the retry line, `--on-retry`, then the sleep.
    fn pause(
        &mut self,
        host: &mut impl Host,
        emit: &mut impl FnMut(&Event),
        status: Status,
        sleep: Sleep,
        hint: Option<Hinted>,
    ) -> Result<(), GiveUp> {
        let config = self.config;
        settle(host, false, emit, self.number)?;
        emit(&Event::Retrying {
            attempt: self.number,
            limit: config.attempts,
            status,
            sleep,
            jitter: config.backoff.jitter,
            hint,
            took: self.took.take().unwrap_or_default(),
        });
        warn(emit, self.number, self.budget_said.take());
        if let Some(script) = &config.on_retry {
            let hook = host.run_hook(script, self.number, status.code, self.run_deadline);
            let mut error = None;
            let hook_status = match hook {
                Ok(Ended::Exited(hook)) => hook,
                Ok(Ended::NotStarted(errno)) => Status::not_started(errno),
                Err(SpawnError { code, message }) => {
                    error = Some(message);
                    Status::exited(code)
                }
                Ok(Ended::TimedOut) => return Err(GiveUp::MaxTimeInHook(status)),
                Ok(Ended::Interrupted { signal, .. }) => {
                    return Err(GiveUp::Signal {
                        signal,
                        status: None,
                        during: Phase::Hook,
                    });
                }
                Ok(Ended::Failed(message)) => return Err(GiveUp::Failed(message)),
            };
            if hook_status.code != 0 {
                emit(&Event::HookFailed {
                    attempt: self.number,
                    limit: config.attempts,
                    status: hook_status,
                    error,
                });
            }
            // The hook ran inside the run's time: the sleep must still fit.
            if !decide::fits(sleep.duration, self.time_left(host.now())) {
                let sleep_ms = crate::duration::millis(sleep.duration);
                return Err(GiveUp::MaxTimeAhead { status, sleep_ms });
            }
        }
        let asleep = host.now();
        // A sleep too long to represent ends never: only a signal ends it.
        let interrupted = match asleep.checked_add(sleep.duration) {
            Some(wake) => host.sleep_until(wake),
            None => host.sleep_until(far_future(asleep)),
        };
        self.slept_ms += crate::duration::millis(sleep.duration);
        match interrupted {
            Some(signal) => Err(GiveUp::Signal {
                signal,
                status: None,
                during: Phase::Sleep,
            }),
            None => Ok(()),
        }
    }

    fn time_left(&self, now: Instant) -> Option<Duration> {
        self.run_deadline
            .map(|end| end.saturating_duration_since(now))
    }
}

/// Emits a warning, if there is one (the budget's file, a hint).
fn warn(emit: &mut impl FnMut(&Event), attempt: u32, message: Option<String>) {
    if let Some(message) = message {
        emit(&Event::Warning { attempt, message });
    }
}

/// Settles held-back output; a failure to do so ends the run.
fn settle(
    host: &mut impl Host,
    to_stdout: bool,
    emit: &mut impl FnMut(&Event),
    attempt: u32,
) -> Result<(), GiveUp> {
    host.settle_output(to_stdout)
        .map_err(|unsettled| match unsettled {
            Unsettled::Interrupted { signal, dropped } => {
                if dropped > 0 {
                    warn(
                        emit,
                        attempt,
                        Some(dropped_on_signal("the rest of ", dropped)),
                    );
                }
                GiveUp::Signal {
                    signal,
                    status: None,
                    during: Phase::Output,
                }
            }
            Unsettled::BrokenPipe => GiveUp::StdoutClosed,
            Unsettled::Failed(message) => GiveUp::Failed(message),
        })
}

/// The one line that says how much held-back stdout a signal dropped.
fn dropped_on_signal(part: &str, bytes: u64) -> String {
    let size = crate::size::Size::from_bytes(bytes);
    format!(
        "--stdout-once: {part}the attempt's held-back stdout ({size}) is dropped: a signal ends the run"
    )
}

/// A limit from `now`; one too far away to represent is no limit (never an
/// overflow).
fn after(now: Instant, limit: Option<Duration>) -> Option<Instant> {
    limit.and_then(|l| now.checked_add(l))
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
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::time::Duration;

    const MS: Duration = Duration::from_millis(1);

    /// A scripted world: each attempt takes `attempt_ms` of fake time and
    /// ends as the next entry of `script` says; sleeps advance the clock.
    struct FakeHost {
        start: Instant,
        elapsed: Duration,
        script: Vec<Result<Attempt, SpawnError>>,
        /// What an attempt stopped at its deadline printed.
        seen_before_timeout: OutputSeen,
        attempt_ms: u64,
        seen: Vec<AttemptInfo>,
        sleeps: Vec<Duration>,
        signal_in_sleep: Option<i32>,
        hooks: Vec<(String, u32, i32)>,
        settled: Vec<bool>,
        /// Bytes of held-back stdout the attempts leave.
        held: u64,
        hook_code: i32,
        /// The hook cannot start at all, with this error.
        hook_unstartable: Option<SpawnError>,
        hook_ms: u64,
        /// What the next settle_output fails with, if anything.
        unsettled: Option<Unsettled>,
        /// How much longer than asked each sleep lasts, as a busy machine's do.
        oversleep: Duration,
        /// A shared budget's tokens; each withdrawal (negative) and deposit.
        tokens: u32,
        budget: Vec<i64>,
        /// What the budget says with each update (a reset, a failure).
        budget_says: Option<String>,
        /// `--breaker`: how often it was asked, what it answers, and what
        /// it was told.
        asked: u32,
        circuit_open: Option<String>,
        told: Vec<breaker::Ended>,
    }

    impl FakeHost {
        fn new(script: Vec<Result<Attempt, SpawnError>>) -> Self {
            Self {
                start: Instant::now(),
                elapsed: Duration::ZERO,
                script,
                seen_before_timeout: OutputSeen::default(),
                attempt_ms: 1,
                seen: vec![],
                sleeps: vec![],
                signal_in_sleep: None,
                hooks: vec![],
                settled: vec![],
                held: 0,
                hook_code: 0,
                hook_unstartable: None,
                hook_ms: 0,
                unsettled: None,
                oversleep: Duration::ZERO,
                tokens: 0,
                budget: vec![],
                budget_says: None,
                asked: 0,
                circuit_open: None,
                told: vec![],
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
        ) -> Result<Attempt, SpawnError> {
            self.seen.push(attempt);
            let end = self.now() + MS * self.attempt_ms as u32;
            if let Some(deadline) = deadline.filter(|d| *d < end) {
                self.elapsed = deadline - self.start;
                return Ok(Attempt {
                    ended: Ended::TimedOut,
                    seen: self.seen_before_timeout.clone(),
                });
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
        fn drop_output(&mut self) -> u64 {
            std::mem::take(&mut self.held)
        }
        fn settle_output(&mut self, to_stdout: bool) -> Result<(), Unsettled> {
            self.settled.push(to_stdout);
            self.unsettled.take().map_or(Ok(()), Err)
        }
        fn withdraw(&mut self, tokens: u32) -> budget::Withdrawal {
            let granted = self.tokens >= tokens;
            if granted {
                self.tokens -= tokens;
                self.budget.push(-i64::from(tokens));
            }
            budget::Withdrawal {
                granted,
                warning: self.budget_says.clone(),
            }
        }
        fn admit(&mut self) -> breaker::Asked {
            self.asked += 1;
            breaker::Asked {
                refused: self.circuit_open.clone(),
                warning: None,
            }
        }
        fn finish(&mut self, ended: breaker::Ended) -> Option<String> {
            self.told.push(ended);
            None
        }
        fn deposit(&mut self, tokens: u32) -> Option<String> {
            self.tokens += tokens;
            self.budget.push(i64::from(tokens));
            self.budget_says.clone()
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
            if let Some(error) = self.hook_unstartable.clone() {
                return Err(error);
            }
            Ok(Ended::Exited(Status::exited(self.hook_code)))
        }
    }

    fn ended(ended: Ended, seen: OutputSeen) -> Result<Attempt, SpawnError> {
        Ok(Attempt { ended, seen })
    }

    fn exit(code: i32) -> Result<Attempt, SpawnError> {
        ended(Ended::Exited(Status::exited(code)), OutputSeen::default())
    }

    fn exit_seeing(code: i32, retry_if: bool, stop_if: bool) -> Result<Attempt, SpawnError> {
        let seen = OutputSeen {
            retry_if,
            stop_if,
            ..OutputSeen::default()
        };
        ended(Ended::Exited(Status::exited(code)), seen)
    }

    fn config(args: &[&str]) -> Options {
        let argv = ["retry", "--seed", "1"].iter().chain(args).chain(&["cmd"]);
        let argv: Vec<std::ffi::OsString> = argv.map(Into::into).collect();
        match crate::cli::config::from_cli(
            crate::cli::parse_from(&argv, crate::cli::AfterParsing::Free).unwrap(),
        )
        .unwrap()
        {
            crate::cli::config::Mode::Run(options, _) => *options,
            other => panic!("not a run: {other:?}"),
        }
    }

    /// The run's exit status as a shell sees it (128+N for a signal death).
    fn run_with(config: &Options, host: &mut FakeHost) -> (i32, Vec<Event>) {
        let (exit, events) = run_exit(config, host);
        let code = match exit {
            Exit::Code(code) => code,
            Exit::Signal(n) => 128 + n,
        };
        (code, events)
    }

    fn run_exit(config: &Options, host: &mut FakeHost) -> (Exit, Vec<Event>) {
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
        assert_eq!(gave_up(&events), &GiveUp::Fatal(Status::exited(5), None));

        let mut host = FakeHost::new(vec![exit(42)]);
        let (code, events) = run_with(&c, &mut host);
        assert_eq!((code, host.seen.len()), (42, 1));
        assert_eq!(
            gave_up(&events),
            &GiveUp::NotRetryable(Status::exited(42), None)
        );
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
        let interrupted = Ended::Interrupted {
            signal: 2,
            status: Some(status),
        };
        let mut host = FakeHost::new(vec![ended(interrupted, OutputSeen::default())]);
        let (code, _) = run_with(&config(&[]), &mut host);
        assert_eq!((code, host.seen.len()), (130, 1));
    }

    #[test]
    fn a_signal_during_an_attempt_drops_its_held_output_and_says_so() {
        let interrupted = Ended::Interrupted {
            signal: 15,
            status: None,
        };
        let mut host = FakeHost::new(vec![ended(interrupted, OutputSeen::default())]);
        host.held = 3 << 30;
        let (code, events) = run_with(&config(&["--stdout-once"]), &mut host);
        assert_eq!((code, host.settled.as_slice()), (143, &[][..]));
        let warned = events.iter().any(|e| {
            matches!(e, Event::Warning { message, .. }
            if message.contains("held-back stdout (3 GiB) is dropped"))
        });
        assert!(warned, "{events:?}");
    }

    #[test]
    fn a_signal_while_held_output_is_written_says_what_it_dropped() {
        let mut host = FakeHost::new(vec![exit(1), exit(0)]);
        host.unsettled = Some(Unsettled::Interrupted {
            signal: 15,
            dropped: 5 << 20,
        });
        let (code, events) = run_with(&config(&["--stdout-once"]), &mut host);
        assert_eq!((code, host.seen.len()), (143, 1));
        let warned: Vec<_> = events
            .iter()
            .filter(|e| {
                matches!(e, Event::Warning { message, .. }
                if message.contains("the rest of the attempt's held-back stdout (5 MiB) is dropped"))
            })
            .collect();
        assert_eq!(warned.len(), 1, "{events:?}");
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
        assert_eq!(gave_up(&events).reason().name(), "spawn");
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
    fn a_hook_that_cannot_start_says_why_and_the_run_goes_on() {
        let mut host = FakeHost::new(vec![exit(1), exit(0)]);
        host.hook_unstartable = Some(SpawnError {
            code: 126,
            message: "cannot run `/bin/sh`: Argument list too long".to_owned(),
        });
        let (code, events) = run_with(&config(&["--base", "1ms", "--on-retry", "true"]), &mut host);
        assert_eq!(code, 0);
        let failed = events.iter().find_map(|e| match e {
            Event::HookFailed { status, error, .. } => Some((status.code, error.clone())),
            _ => None,
        });
        assert_eq!(
            failed,
            Some((
                126,
                Some("cannot run `/bin/sh`: Argument list too long".to_owned())
            ))
        );
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
        assert_eq!(gave_up(&events).reason().name(), "max_time");
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
        assert_eq!(gave_up(&events).reason().name(), "attempts");
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
        assert_eq!(gave_up(&events).reason().name(), "fatal");
    }

    #[test]
    fn a_server_that_asks_to_slow_down_unseen_is_advised_on_once() {
        let slow = |hint| {
            let seen = OutputSeen {
                slow_down: true,
                hint,
                ..OutputSeen::default()
            };
            ended(Ended::Exited(Status::exited(22)), seen)
        };
        let advice = |events: &[Event]| {
            events
                .iter()
                .filter_map(|e| match e {
                    Event::Warning { attempt, message } if message.contains("slow down") => {
                        Some((*attempt, message.clone()))
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        let curl = config(&["--preset", "curl", "--base", "1ms", "-n", "4"]);
        let mut host = FakeHost::new(vec![exit(7), slow(None), slow(None), slow(None)]);
        let (_, events) = run_with(&curl, &mut host);
        assert_eq!(
            advice(&events),
            [(
                2,
                "the server asked to slow down, but retry cannot see how long it asked to \
                 wait (its Retry-After): add -D /dev/stderr to curl's arguments \
                 (--preset curl; said once)"
                    .to_owned()
            )]
        );
        // A hint seen in that attempt: nothing to advise.
        let mut host = FakeHost::new(vec![slow(Some(Hint::Delay(MS))), exit(0)]);
        let (_, events) = run_with(&curl, &mut host);
        assert_eq!(advice(&events), []);
        // Nor in a success.
        let seen = OutputSeen {
            slow_down: true,
            ..OutputSeen::default()
        };
        let mut host = FakeHost::new(vec![ended(Ended::Exited(Status::exited(0)), seen)]);
        let (code, events) = run_with(&curl, &mut host);
        assert_eq!((code, advice(&events)), (0, vec![]));
        // Without a preset that has the advice, the same output says nothing.
        let plain = config(&["--base", "1ms", "-n", "2"]);
        let mut host = FakeHost::new(vec![slow(None), slow(None)]);
        let (_, events) = run_with(&plain, &mut host);
        assert_eq!(advice(&events), []);
    }

    #[test]
    fn stop_if_output_stops_with_its_own_status() {
        let mut host = FakeHost::new(vec![exit(1), exit_seeing(9, true, true)]);
        let (code, events) = run_with(&config(&["--base", "1ms"]), &mut host);
        assert_eq!((code, host.seen.len()), (9, 2));
        assert_eq!(
            gave_up(&events),
            &GiveUp::OutputStop {
                status: Status::exited(9),
                line: None,
                label: None
            }
        );
        // A run that gives up sends even its last attempt's held stdout to
        // stderr: a pipe downstream sees nothing of a failed run.
        assert_eq!(host.settled, [false, false]);
    }

    #[test]
    fn output_of_an_attempt_retry_stopped_never_reaches_stdout() {
        let mut host = FakeHost::new(vec![]);
        host.attempt_ms = 50;
        let (code, _) = run_with(&config(&["--timeout", "10ms", "-n", "1"]), &mut host);
        assert_eq!(code, 124);
        assert_eq!(host.settled, [false]);
    }

    #[test]
    fn what_a_timed_out_attempt_printed_counts() {
        // --stop-if-output: the first attempt's match ends the run.
        let mut host = FakeHost::new(vec![]);
        host.attempt_ms = 50;
        host.seen_before_timeout.stop_if = true;
        let (code, events) = run_with(&config(&["--timeout", "10ms", "-n", "3"]), &mut host);
        assert_eq!((code, host.seen.len()), (124, 1));
        assert!(
            events.iter().any(|e| matches!(
                e,
                Event::GaveUp {
                    reason: GiveUp::OutputStop { .. },
                    ..
                }
            )),
            "{events:?}"
        );
        // --delay-from-output: the server's hint sets the sleep.
        let mut host = FakeHost::new(vec![]);
        host.attempt_ms = 50;
        host.seen_before_timeout.hint = Some(Hint::Delay(Duration::from_secs(7)));
        let config = config(&["--timeout", "10ms", "-n", "2", "--cap", "1m"]);
        let (code, _) = run_with(&config, &mut host);
        assert_eq!(
            (code, host.sleeps.as_slice()),
            (124, &[Duration::from_secs(7)][..])
        );
    }

    fn exit_hinting(code: i32, hint: Hint) -> Result<Attempt, SpawnError> {
        let seen = OutputSeen {
            hint: Some(hint),
            ..OutputSeen::default()
        };
        ended(Ended::Exited(Status::exited(code)), seen)
    }

    const BUDGET: [&str; 6] = [
        "--budget",
        "ci",
        "--budget-tokens",
        "12",
        "--budget-cost",
        "5",
    ];

    #[test]
    fn the_breaker_is_asked_once_at_the_start_and_told_once_how_the_run_ended() {
        use breaker::Ended::{Failed, Neither, Succeeded};
        let with = |rest: &[&str]| {
            let args: Vec<&str> = ["--breaker", "ci", "--base", "1ms", "-n", "3"]
                .iter()
                .chain(rest)
                .copied()
                .collect();
            config(&args)
        };
        for (script, rest, told) in [
            (vec![exit(1), exit(0)], &[][..], Succeeded),
            (vec![exit(1), exit(1), exit(1)], &[], Failed),
            (vec![exit(2)], &["--fatal-on", "2"], Neither),
            (vec![exit(4)], &["--retry-on", "1"], Neither),
        ] {
            let mut host = FakeHost::new(script);
            run_with(&with(rest), &mut host);
            assert_eq!((host.asked, host.told.as_slice()), (1, &[told][..]));
        }
        // Open: nothing runs, exit 75, nothing told.
        let mut host = FakeHost::new(vec![exit(0)]);
        host.circuit_open = Some("--breaker ci: the circuit is open".into());
        let (code, events) = run_with(&with(&[]), &mut host);
        assert_eq!((code, host.seen.len(), host.told.len()), (75, 0, 0));
        assert_eq!(
            gave_up(&events),
            &GiveUp::CircuitOpen("--breaker ci: the circuit is open".into(), 75)
        );
        // --breaker-exit-code: its own status, to tell it from a command's 75.
        let mut host = FakeHost::new(vec![exit(0)]);
        host.circuit_open = Some("--breaker ci: the circuit is open".into());
        let (code, _) = run_with(&with(&["--breaker-exit-code", "99"]), &mut host);
        assert_eq!((code, host.seen.len()), (99, 0));
        // Without --breaker it is never asked.
        let mut host = FakeHost::new(vec![exit(1), exit(0)]);
        run_with(&config(&["--base", "1ms"]), &mut host);
        assert_eq!((host.asked, host.told.len()), (0, 0));
    }

    #[test]
    fn a_budget_that_cannot_pay_ends_the_run_at_once() {
        let mut host = FakeHost::new((0..9).map(|_| exit(3)).collect());
        host.tokens = 12;
        let args: Vec<&str> = BUDGET
            .iter()
            .copied()
            .chain(["-n", "9", "--base", "1ms"])
            .collect();
        let (code, events) = run_with(&config(&args), &mut host);
        // 12 tokens at 5 pay for two retries; the third is refused, unslept.
        assert_eq!((code, host.seen.len(), host.sleeps.len()), (3, 3, 2));
        assert_eq!(host.budget, [-5, -5]);
        assert_eq!(gave_up(&events), &GiveUp::Budget(Status::exited(3)));
        // Without --budget, the host's budget is never asked.
        let mut host = FakeHost::new(vec![exit(1), exit(0)]);
        run_with(&config(&["--base", "1ms"]), &mut host);
        assert!(host.budget.is_empty());
    }

    #[test]
    fn successes_refund_and_timeouts_cost_double() {
        let args: Vec<&str> = BUDGET.iter().copied().chain(["--base", "1ms"]).collect();
        // First try: the budget is never asked (no +1: time refills it).
        // After retries: the last retry's cost comes back.
        let mut host = FakeHost::new(vec![exit(0)]);
        host.tokens = 12;
        run_with(&config(&args), &mut host);
        assert!(host.budget.is_empty(), "{:?}", host.budget);
        let mut host = FakeHost::new(vec![exit(1), exit(1), exit(0)]);
        host.tokens = 12;
        run_with(&config(&args), &mut host);
        assert_eq!(host.budget, [-5, -5, 5]);
        // A retry after a timeout costs 10: 12 tokens pay for one.
        let mut host = FakeHost::new(vec![]);
        host.attempt_ms = 50;
        host.tokens = 12;
        let timed: Vec<&str> = args.iter().copied().chain(["--timeout", "10ms"]).collect();
        let (code, events) = run_with(&config(&timed), &mut host);
        assert_eq!((code, host.seen.len()), (124, 2));
        assert_eq!(host.budget, [-10]);
        assert_eq!(gave_up(&events).reason().name(), "budget");
    }

    #[test]
    fn a_paid_retry_that_does_not_happen_gives_its_tokens_back() {
        let args: Vec<&str> = BUDGET.iter().copied().chain(["--base", "1ms"]).collect();
        let mut host = FakeHost::new(vec![exit(1)]);
        host.tokens = 12;
        host.signal_in_sleep = Some(15);
        let (code, _) = run_with(&config(&args), &mut host);
        assert_eq!(code, 143);
        assert_eq!((host.budget.as_slice(), host.tokens), (&[-5, 5][..], 12));
    }

    #[test]
    fn what_the_budget_says_is_logged_and_the_run_goes_on() {
        let args: Vec<&str> = BUDGET.iter().copied().chain(["--base", "1ms"]).collect();
        let mut host = FakeHost::new(vec![exit(1), exit(0)]);
        host.tokens = 12;
        host.budget_says = Some("cannot lock it".into());
        let (code, events) = run_with(&config(&args), &mut host);
        assert_eq!(code, 0);
        // Each after the line of the attempt whose end asked the budget.
        let said =
            |e: &Event| matches!(e, Event::Warning { message, .. } if message == "cannot lock it");
        let lines: Vec<&str> = events
            .iter()
            .filter(|e| !matches!(e, Event::Starting { .. }))
            .map(|e| match e {
                Event::Retrying { attempt: 1, .. } => "retrying",
                Event::Succeeded { attempt: 2, .. } => "succeeded",
                e if said(e) => "said",
                _ => "other",
            })
            .collect();
        assert_eq!(lines, ["retrying", "said", "succeeded", "said"]);
        // And after the line that gives up, when it cannot pay.
        let mut host = FakeHost::new(vec![exit(1)]);
        host.tokens = 0;
        host.budget_says = Some("cannot lock it".into());
        let (_, events) = run_with(&config(&args), &mut host);
        let last: Vec<_> = events.iter().rev().take(2).collect();
        assert!(said(last[0]), "{events:?}");
        assert!(matches!(last[1], Event::GaveUp { .. }), "{events:?}");
    }

    #[test]
    fn a_servers_hint_sets_the_sleep() {
        let s = Duration::from_secs(1);
        let mut host = FakeHost::new(vec![exit_hinting(1, Hint::Delay(s * 3)), exit(1), exit(0)]);
        let c = config(&["--jitter", "none", "--base", "10ms"]);
        let (code, events) = run_with(&c, &mut host);
        assert_eq!(code, 0);
        // The hint for the attempt that had one; the draw after one that had none.
        assert_eq!(host.sleeps, [s * 3, MS * 20]);
        let hints: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::Retrying { hint, .. } => Some(*hint),
                _ => None,
            })
            .collect();
        let hinted = Hinted {
            asked: s * 3,
            drawn: MS * 10,
        };
        assert_eq!(hints, [Some(hinted), None]);
        // Longer than --cap (here 20 s): waited for, as the server asked.
        let mut host = FakeHost::new(vec![exit_hinting(1, Hint::Delay(s * 30)), exit(0)]);
        let (code, _) = run_with(&c, &mut host);
        assert_eq!((code, host.sleeps.as_slice()), (0, &[s * 30][..]));
        // Longer than the ceiling without --max-time: no retry at all.
        let mut host = FakeHost::new(vec![exit_hinting(1, Hint::Delay(s * 301))]);
        let (code, events) = run_with(&c, &mut host);
        assert_eq!((code, host.seen.len()), (1, 1));
        assert_eq!(gave_up(&events).reason().name(), "hint");
    }

    #[test]
    fn an_unreadable_hint_is_logged_once() {
        let soon = || exit_hinting(1, Hint::Unparseable("soon".into()));
        let mut host = FakeHost::new(vec![soon(), soon(), exit(0)]);
        let (code, events) = run_with(&config(&["--base", "1ms"]), &mut host);
        assert_eq!((code, host.seen.len()), (0, 3));
        let warnings: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::Warning { attempt, message } => Some((*attempt, message.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].0, 1);
        assert!(warnings[0].1.contains("`soon`"), "{warnings:?}");
    }

    /// Each attempt's end says how long it ran (the fake clock's 40 ms);
    /// an ending that came in the sleep, not with an attempt, says none.
    #[test]
    fn an_attempts_end_carries_its_duration() {
        let took = |events: &[Event]| -> Vec<Option<Duration>> {
            events
                .iter()
                .filter_map(|e| match e {
                    Event::Retrying { took, .. } | Event::Succeeded { took, .. } => {
                        Some(Some(*took))
                    }
                    Event::GaveUp { took, .. } => Some(*took),
                    _ => None,
                })
                .collect()
        };
        let mut host = FakeHost::new(vec![exit(1), exit(0)]);
        host.attempt_ms = 40;
        let (_, events) = run_with(&config(&["--base", "1ms"]), &mut host);
        assert_eq!(took(&events), [Some(40 * MS), Some(40 * MS)]);
        let mut host = FakeHost::new(vec![exit(1), exit(1)]);
        host.attempt_ms = 40;
        let (_, events) = run_with(&config(&["-n", "2", "--base", "1ms"]), &mut host);
        assert_eq!(took(&events), [Some(40 * MS), Some(40 * MS)]);
        let mut host = FakeHost::new(vec![exit(1)]);
        host.attempt_ms = 40;
        host.signal_in_sleep = Some(15);
        let (_, events) = run_with(&config(&["--base", "1ms"]), &mut host);
        assert_eq!(took(&events), [Some(40 * MS), None]);
    }
}
