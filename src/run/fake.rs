//! The scripted host the loop's tests run against (`tests.rs`): a fake
//! clock that attempts, hooks and sleeps advance, and the helpers that
//! build a run's options and collect its events.

use std::time::{Duration, Instant, SystemTime};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::events::{Event, GiveUp, Origin, Stamped};
use crate::run::hint::Hint;
use crate::run::hooks::Once;
use crate::run::host::Host;
use crate::run::options::Options;
use crate::run::outcome::{Attempt, AttemptInfo, Ended, Exit, SpawnError, Unsettled};
use crate::run::pipes::OutputSeen;
use crate::run::run;
use crate::state::{breaker, budget, throttle};
use crate::status::Status;

pub const MS: Duration = Duration::from_millis(1);

/// A scripted world: each attempt takes `attempt_ms` of fake time and
/// ends as the next entry of `script` says; sleeps advance the clock.
pub struct FakeHost {
    pub start: Instant,
    pub elapsed: Duration,
    pub script: Vec<Result<Attempt, SpawnError>>,
    /// What an attempt stopped at its deadline printed.
    pub seen_before_timeout: OutputSeen,
    pub attempt_ms: u64,
    /// How long each attempt takes in turn, in ms (then `attempt_ms`).
    pub durations: Vec<u64>,
    pub seen: Vec<AttemptInfo>,
    pub sleeps: Vec<Duration>,
    pub signal_in_sleep: Option<i32>,
    pub hooks: Vec<(String, u32, i32)>,
    pub settled: Vec<bool>,
    /// Bytes of held-back stdout the attempts leave.
    pub held: u64,
    pub hook_code: i32,
    /// The hook cannot start at all, with this error.
    pub hook_unstartable: Option<SpawnError>,
    pub hook_ms: u64,
    /// What the next settle_output fails with, if anything.
    pub unsettled: Option<Unsettled>,
    /// How much longer than asked each sleep lasts, as a busy machine's do.
    pub oversleep: Duration,
    /// A shared budget's tokens; each withdrawal (negative) and deposit.
    pub tokens: u32,
    pub budget: Vec<i64>,
    /// What the budget says with each update (a reset, a failure).
    pub budget_says: Option<String>,
    /// `--breaker`: how often it was asked, what it answers, and what
    /// it was told.
    pub asked: u32,
    pub circuit_open: Option<String>,
    pub told: Vec<breaker::Ended>,
    /// The circuit it last saw, for the event after the run.
    pub circuit: Option<(String, breaker::Circuit, SystemTime)>,
    /// `--throttle`: whether it rejects each attempt asked in turn (none
    /// once they run out), what it is told with each ask and its draw,
    /// what it is told at the end, and what it says (a warning, once).
    pub rejects: Vec<bool>,
    pub throttle_asked: Vec<(Option<bool>, f64)>,
    pub throttle_told: Vec<Option<bool>>,
    pub throttle_says: Option<String>,
    /// What it last saw, for the event after the run.
    pub throttle_seen: Option<(String, throttle::Seen)>,
    /// The once-hooks run, as they were given.
    pub once: Vec<OnceRun>,
    /// How each once-hook ends, in turn (then exit code 0).
    pub once_ends: Vec<Result<Ended, SpawnError>>,
}

/// A once-hook as the fake ran it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnceRun {
    pub script: String,
    pub variables: Vec<(&'static str, Option<String>)>,
    pub tail: bool,
    pub timeout: Duration,
    pub after_signal: bool,
    /// When it started, on the fake clock.
    pub at: Duration,
}

impl FakeHost {
    pub fn new(script: Vec<Result<Attempt, SpawnError>>) -> Self {
        Self {
            start: Instant::now(),
            elapsed: Duration::ZERO,
            script,
            seen_before_timeout: OutputSeen::default(),
            attempt_ms: 1,
            durations: vec![],
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
            circuit: None,
            rejects: vec![],
            throttle_asked: vec![],
            throttle_told: vec![],
            throttle_says: None,
            throttle_seen: None,
            once: vec![],
            once_ends: vec![],
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
        let ms = match self.durations.is_empty() {
            true => self.attempt_ms,
            false => self.durations.remove(0),
        };
        let end = self.now() + MS * ms as u32;
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
    fn circuit(&self) -> Option<(&str, breaker::Circuit, SystemTime)> {
        let (name, circuit, seen) = self.circuit.as_ref()?;
        Some((name, *circuit, *seen))
    }
    fn throttle(&mut self, told: Option<bool>, draw: f64) -> throttle::Asked {
        self.throttle_asked.push((told, draw));
        let rejected = match self.rejects.is_empty() {
            true => false,
            false => self.rejects.remove(0),
        };
        throttle::Asked {
            rejected,
            probability: if rejected { 0.75 } else { 0.0 },
            warning: self.throttle_says.take(),
        }
    }
    fn throttle_end(&mut self, told: Option<bool>) -> Option<String> {
        self.throttle_told.push(told);
        None
    }
    fn throttle_seen(&self) -> Option<(&str, throttle::Seen)> {
        let (name, seen) = self.throttle_seen.as_ref()?;
        Some((name, *seen))
    }
    fn deposit(&mut self, tokens: u32) -> Option<String> {
        self.tokens += tokens;
        self.budget.push(i64::from(tokens));
        self.budget_says.clone()
    }
    fn run_once(&mut self, hook: &Once<'_>) -> Result<Ended, SpawnError> {
        self.once.push(OnceRun {
            script: hook.script.to_owned(),
            variables: hook.variables.clone(),
            tail: hook.tail,
            timeout: hook.timeout,
            after_signal: hook.after_signal,
            at: self.elapsed,
        });
        self.elapsed += MS * self.hook_ms as u32;
        match self.once_ends.is_empty() {
            true => Ok(Ended::Exited(Status::exited(0))),
            false => self.once_ends.remove(0),
        }
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

pub fn ended(ended: Ended, seen: OutputSeen) -> Result<Attempt, SpawnError> {
    Ok(Attempt { ended, seen })
}

pub fn exit(code: i32) -> Result<Attempt, SpawnError> {
    ended(Ended::Exited(Status::exited(code)), OutputSeen::default())
}

pub fn exit_seeing(code: i32, retry_if: bool, stop_if: bool) -> Result<Attempt, SpawnError> {
    let seen = OutputSeen {
        retry_if,
        stop_if,
        ..OutputSeen::default()
    };
    ended(Ended::Exited(Status::exited(code)), seen)
}

/// The run's exit status as a shell sees it (128+N for a signal death).
pub fn run_with(config: &Options, host: &mut FakeHost) -> (i32, Vec<Event>) {
    let (exit, events) = run_exit(config, host);
    let code = match exit {
        Exit::Code(code) => code,
        Exit::Signal(n) => 128 + n,
    };
    (code, events)
}

pub fn run_exit(config: &Options, host: &mut FakeHost) -> (Exit, Vec<Event>) {
    let (code, stamped) = run_stamped(config, host);
    (code, stamped.into_iter().map(|s| s.event).collect())
}

/// When the fake runs begin on the wall clock: 2023-11-14 22:13:20 UTC.
pub const EPOCH: Duration = Duration::from_secs(1_700_000_000);

/// The run's exit and its events as the outputs get them, stamped (but
/// `Starting`, which the tests leave out).
pub fn run_stamped(config: &Options, host: &mut FakeHost) -> (Exit, Vec<Stamped>) {
    let mut events = vec![];
    let origin = Origin::new(SystemTime::UNIX_EPOCH + EPOCH, host.now());
    let code = run(
        config,
        host,
        origin,
        &mut |e: &Stamped| events.push(e.clone()),
        || ChaCha8Rng::seed_from_u64(1),
    );
    events.retain(|e| !matches!(e.event, Event::Starting { .. }));
    (code, events)
}

pub fn gave_up(events: &[Event]) -> &GiveUp {
    match events.last() {
        Some(Event::GaveUp { reason, .. }) => reason,
        other => panic!("expected a give-up, got {other:?}"),
    }
}

pub fn exit_hinting(code: i32, hint: Hint) -> Result<Attempt, SpawnError> {
    let seen = OutputSeen {
        hint: Some(hint),
        ..OutputSeen::default()
    };
    ended(Ended::Exited(Status::exited(code)), seen)
}
