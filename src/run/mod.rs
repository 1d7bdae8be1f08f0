//! The attempt loop: run, judge, sleep, run again. The judging is
//! `decide::decide`, a pure function; this file carries its decisions out
//! (held output, events, `--on-retry`, the sleep). Everything that touches
//! the outside world (clock, processes, signals, the shared `--budget`'s
//! file) is behind `Host`, so the
//! loop's tests run without a process or a sleep. The loop only makes
//! events (`events.rs`); what becomes of them is the reporter's.
//!
//! Beside it: `outcome.rs` (how an attempt and the run end, the words
//! every file here shares), `host.rs` (the trait), `options.rs` (what a
//! run is given); its tests in `tests.rs`, on the scripted host of
//! `fake.rs`.
//!
//! With `--throttle`, each attempt first asks the throttle (telling it
//! how the attempt before fared); one it rejects does not run, and goes
//! straight to the run's limits and the sleep, as a failure does
//! (`decide::after_rejection`).
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

pub mod class;
pub mod countdown;
pub mod decide;
pub mod escalation;
pub mod hint;
pub mod hooks;
pub mod host;
pub mod lineage;
pub mod options;
pub mod outcome;
pub mod pipes;
pub mod splay;
pub mod supervisor;

use std::time::{Duration, Instant};

use rand::Rng;

use crate::events::{Class, Event, GiveUp, Origin, Phase, Stamped};
use crate::policy::Verdict;
use crate::run::decide::{Decision, Facts, Rules, Stopped, decide};
use crate::run::hint::{Hint, Hinted};
use crate::state::{breaker, throttle};
use crate::status::Status;
use crate::strategy::{Schedule, Sleep};

pub use host::Host;
pub use options::{Command, Limits, Options};
pub use outcome::{Attempt, AttemptInfo, Ended, Exit, SpawnError, Unsettled};

/// Runs the loop to its end and returns how retry ends. Its events are
/// stamped as they are made, by `host`'s clock from `origin` (when the run
/// began), and handed to `emit`; with `--breaker`, the circuit as the run
/// left it follows the end, and `--on-exit` runs last.
pub fn run<R: Rng>(
    config: &Options,
    host: &mut impl Host,
    origin: Origin,
    emit: &mut impl FnMut(&Stamped),
    new_rng: impl FnOnce() -> R,
) -> Exit {
    let tell = &mut Tell { origin, emit };
    let (exit, ending) = run_to_end(config, host, tell, new_rng);
    if let Some((name, circuit, seen)) = host.circuit() {
        let name = name.to_owned();
        tell.event(
            host.now(),
            Event::CircuitSeen {
                name,
                circuit,
                seen,
            },
        );
    }
    if let Some((name, seen)) = host.throttle_seen() {
        let name = name.to_owned();
        tell.event(host.now(), Event::ThrottleSeen { name, seen });
    }
    if let Some(script) = &config.hooks.on_exit {
        at_exit(config, host, tell, script, exit, ending);
    }
    exit
}

/// How the run ended, for `--on-exit`.
#[derive(Clone, Copy)]
struct Ending {
    outcome: hooks::Outcome,
    reason: &'static str,
    /// The attempts started.
    attempts: u32,
    /// A signal ended it: the next is the second.
    signalled: bool,
}

impl Ending {
    fn of(gave_up: Option<&GiveUp>, attempts: u32) -> Self {
        let (outcome, reason) = hooks::outcome(gave_up);
        Self {
            outcome,
            reason,
            attempts,
            signalled: matches!(gave_up, Some(GiveUp::Signal { .. })),
        }
    }
}

/// The breaker asked, `--on-start`, then the attempts until the run
/// ends, the breaker told how.
fn run_to_end<R: Rng>(
    config: &Options,
    host: &mut impl Host,
    tell: &mut Tell<impl FnMut(&Stamped)>,
    new_rng: impl FnOnce() -> R,
) -> (Exit, Ending) {
    // `--splay` first, so that a fleet's breaker asks and start pings are
    // spread too; a signal in it ends the run before anything else.
    let splayed = match splay(config, host, tell) {
        Ok(splayed) => splayed,
        Err(reason) => {
            let ending = (Exit::of(&reason), Ending::of(Some(&reason), 0));
            let limit = config.retries.attempts;
            let (attempt, took) = (0, None);
            tell.event(
                host.now(),
                Event::GaveUp {
                    attempt,
                    limit,
                    reason,
                    took,
                },
            );
            return ending;
        }
    };
    if config.breaker.is_some() {
        let asked = host.admit();
        tell.warn(host.now(), 1, asked.warning);
        if let Some(message) = asked.refused {
            let code = config
                .breaker
                .as_ref()
                .map_or(breaker::EXIT_OPEN, |b| b.exit_code);
            let reason = GiveUp::CircuitOpen(message, code);
            let ending = (Exit::of(&reason), Ending::of(Some(&reason), 0));
            tell.event(
                host.now(),
                Event::GaveUp {
                    attempt: 0,
                    limit: config.retries.attempts,
                    reason,
                    took: None,
                },
            );
            return ending;
        }
    }
    if let Some(script) = &config.hooks.on_start
        && let Err(reason) = at_start(config, host, tell, script)
    {
        return give_up(config, host, tell, reason, 0, None, None);
    }
    // `--max-time` counts from here, less the splay: `--on-start` has a
    // bound of its own.
    let mut run = Loop::new(config, host.now(), splayed, new_rng);
    loop {
        match run.step(host, tell) {
            Ok(None) => {}
            Ok(Some(exit)) => {
                if config.breaker.is_some() {
                    let said = host.finish(breaker::Ended::Succeeded);
                    tell.warn(host.now(), run.number, said);
                }
                run.tell_throttle(host, tell);
                return (exit, Ending::of(None, run.started()));
            }
            Err(reason) => {
                let (took, said) = (run.took.take(), run.budget_said.take());
                let started = run.started();
                let mut ended = give_up(config, host, tell, reason, run.number, took, said);
                ended.1.attempts = started;
                run.tell_throttle(host, tell);
                return ended;
            }
        }
    }
}

/// `--splay`: the delay drawn (or this host's slot), said, and slept;
/// how long that was, or the signal that cut it short.
fn splay(
    config: &Options,
    host: &mut impl Host,
    tell: &mut Tell<impl FnMut(&Stamped)>,
) -> Result<Duration, GiveUp> {
    let Some(splay) = config.limits.splay else {
        return Ok(Duration::ZERO);
    };
    let delay = splay.delay(config.limits.seed, config.command.words());
    let (max, stable) = (splay.max, splay.stable);
    let asleep = host.now();
    tell.event(asleep, Event::Splay { delay, max, stable });
    match host.sleep_until(asleep + delay) {
        Some(signal) => Err(GiveUp::Signal {
            signal,
            status: None,
            during: Phase::Splay,
        }),
        None => Ok(delay),
    }
}

/// The run gave up for `reason` after `attempt` attempts: the line, what
/// the budget said of it, and the breaker told.
fn give_up(
    config: &Options,
    host: &mut impl Host,
    tell: &mut Tell<impl FnMut(&Stamped)>,
    reason: GiveUp,
    attempt: u32,
    took: Option<Duration>,
    budget_said: Option<String>,
) -> (Exit, Ending) {
    let exit = Exit::of(&reason);
    let ending = Ending::of(Some(&reason), attempt);
    let ended = outcome::breaker_outcome(&reason);
    tell.event(
        host.now(),
        Event::GaveUp {
            attempt,
            limit: config.retries.attempts,
            reason,
            took,
        },
    );
    tell.warn(host.now(), attempt, budget_said);
    if config.breaker.is_some() {
        let said = host.finish(ended);
        tell.warn(host.now(), attempt, said);
    }
    (exit, ending)
}

/// `--on-start`: its trouble is a warning and the run goes on; a signal
/// during it ends the run before any attempt.
fn at_start(
    config: &Options,
    host: &mut impl Host,
    tell: &mut Tell<impl FnMut(&Stamped)>,
    script: &str,
) -> Result<(), GiveUp> {
    let hook = hooks::Once {
        script,
        variables: hooks::variables(&config.hooks, config.retries.attempts, None),
        tail: false,
        timeout: config.hooks.timeout,
        after_signal: false,
    };
    let ended = host.run_once(&hook);
    if let Ok(Ended::Interrupted { signal, .. }) = ended {
        return Err(GiveUp::Signal {
            signal,
            status: None,
            during: Phase::StartHook,
        });
    }
    let said = hooks::trouble(hooks::Which::Start, &ended, config.hooks.timeout);
    tell.warn(host.now(), 1, said);
    Ok(())
}

/// `--on-exit`, told how the run ended: its trouble is a warning, and
/// never retry's exit status.
fn at_exit(
    config: &Options,
    host: &mut impl Host,
    tell: &mut Tell<impl FnMut(&Stamped)>,
    script: &str,
    exit: Exit,
    ending: Ending,
) {
    let end = hooks::End {
        outcome: ending.outcome,
        reason: ending.reason,
        exit_code: exit.code(),
        attempts: ending.attempts,
        elapsed: tell.origin.stamp(host.now()).elapsed,
    };
    let hook = hooks::Once {
        script,
        variables: hooks::variables(&config.hooks, config.retries.attempts, Some(&end)),
        tail: config.hooks.exit_stdin == hooks::ExitStdin::Tail,
        timeout: config.hooks.timeout,
        after_signal: ending.signalled,
    };
    let ended = host.run_once(&hook);
    let said = hooks::trouble(hooks::Which::Exit, &ended, config.hooks.timeout);
    tell.warn(host.now(), ending.attempts, said);
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
    /// The status of the last attempt that ran and was retried, for a run
    /// that `--throttle` ends.
    previous_status: Option<Status>,
    /// Whether the service accepted the last attempt that ran, until
    /// `--throttle` is told (with the next ask, or at the end).
    accepted: Option<bool>,
    /// The attempts `--throttle` rejected: none of them started.
    rejected: u32,
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
    /// And how to show the error line the command's flags hide.
    hidden_said: bool,
    /// And that a code a chosen preset would stop on, named, is retried.
    codes_said: bool,
    /// How long the attempt that just ended ran, until the loop moves past
    /// it (to its hook or sleep): the logs give it with the attempt's end.
    took: Option<Duration>,
    /// `--reset-after`: the attempt that just ended ran long enough to
    /// start the attempts anew, if it is retried.
    resetting: bool,
    /// The attempts started before the streak `number` counts in (each
    /// `--reset-after` starts one): the run's count is theirs and the
    /// streak's.
    earlier: u32,
}

impl<'a, R: Rng, F: FnOnce() -> R> Loop<'a, R, F> {
    /// The loop of a run whose splay took `splayed` of its `--max-time`.
    fn new(config: &'a Options, now: Instant, splayed: Duration, new_rng: F) -> Self {
        let max_time = (config.limits.max_time).map(|limit| limit.saturating_sub(splayed));
        Self {
            config,
            rules: Rules {
                policy: config.policy.clone(),
                limit: config.retries.attempts,
                cap: config.retries.backoff.cap,
                labels: config.labels.clone(),
                throttle: config.throttled_by.clone(),
            },
            run_deadline: after(now, max_time),
            schedule: first_schedule(config),
            new_rng: Some(new_rng),
            rng: None,
            number: 1,
            previous_code: None,
            previous_status: None,
            accepted: None,
            rejected: 0,
            slept_ms: 0,
            last_paid: None,
            budget_said: None,
            hint_warned: false,
            advised: false,
            hidden_said: false,
            codes_said: false,
            took: None,
            resetting: false,
            earlier: 0,
        }
    }

    /// One attempt and what follows it: the exit if the run ends there,
    /// `None` when another attempt follows, or why retry gives up.
    fn step(
        &mut self,
        host: &mut impl Host,
        tell: &mut Tell<impl FnMut(&Stamped)>,
    ) -> Result<Option<Exit>, GiveUp> {
        if let Some(throttle) = &self.config.throttle
            && self.rejected(host, tell, throttle)?
        {
            return Ok(None);
        }
        tell.event(
            host.now(),
            Event::Starting {
                attempt: self.number,
                limit: self.config.retries.attempts,
            },
        );
        let facts = self.attempt(host, tell)?;
        self.warn_unreadable_hint(host.now(), tell, &facts);
        let (decision, paid) = self.judge(host, &facts);
        self.accepted = decide::accepted(&decision);
        self.say_once_what_judged(host.now(), tell, &facts, &decision);
        match decision {
            Decision::Succeed(status) => self.succeed(host, tell, status).map(Some),
            Decision::GiveUp(reason) => {
                settle(host, false, tell, self.number)?;
                Err(reason)
            }
            Decision::Retry {
                status,
                class,
                sleep,
                hint,
            } => {
                self.retry(host, tell, paid, status, (class, sleep, hint))?;
                Ok(None)
            }
        }
    }

    /// A server hint that is not a delay is said once a run.
    fn warn_unreadable_hint(
        &mut self,
        now: Instant,
        tell: &mut Tell<impl FnMut(&Stamped)>,
        facts: &Facts,
    ) {
        if let Some(Hint::Unparseable(text)) = &facts.seen.hint
            && !std::mem::replace(&mut self.hint_warned, true)
        {
            tell.event(now, Event::Warning {
                attempt: self.number,
                message: format!(
                    "--delay-from-output captured `{text}`, which is not a number of seconds, a duration or an HTTP-date; ignored (said once)"
                ),
            });
        }
    }

    /// The rules' decision on the attempt, drawing the next sleep and
    /// asking the `--budget` to pay for a retry only if the rules get that
    /// far; with what the budget was paid, if it was.
    fn judge(&mut self, host: &mut impl Host, facts: &Facts) -> (Decision, Option<u32>) {
        // `--reset-after`: an attempt that ran that long ends the streak of
        // failures: its own failure is judged as the one before a first
        // attempt (no count of attempts holds it back), and its sleep is
        // the first sleep again. Said only if it is retried.
        self.resetting = (self.config.limits.reset_after)
            .is_some_and(|after| self.took.is_some_and(|took| took >= after));
        let reset;
        let facts = match self.resetting {
            true => {
                self.schedule = first_schedule(self.config);
                reset = Facts {
                    number: 0,
                    ..facts.clone()
                };
                &reset
            }
            false => facts,
        };
        let (rng, new_rng, schedule) = (&mut self.rng, &mut self.new_rng, &mut self.schedule);
        let draw = |throttled| schedule.next_sleep_for(seeded(rng, new_rng), throttled);
        let budget = self.config.budget.as_ref().map(|b| b.params);
        let (mut paid, mut warning) = (None, None);
        let pay = |throttled| pay(host, budget, throttled, &mut paid, &mut warning);
        let decision = decide(&self.rules, facts, draw, pay);
        // Said after the attempt's line (retrying or giving up), which the
        // budget's answer follows.
        self.budget_said = warning;
        (decision, paid)
    }

    /// `--throttle`, before an attempt: asks whether it may run (the draw
    /// from the run's RNG, so `--seed` repeats the decisions), telling it
    /// whether the service accepted the attempt before. A rejected attempt
    /// does not run: it counts as a throttled failure, and another follows
    /// after the schedule's sleep (`true`), unless the run's attempts,
    /// `--max-time` or the budget let none follow, which ends the run.
    fn rejected(
        &mut self,
        host: &mut impl Host,
        tell: &mut Tell<impl FnMut(&Stamped)>,
        throttle: &throttle::Settings,
    ) -> Result<bool, GiveUp> {
        let draw = crate::strategy::unit(seeded(&mut self.rng, &mut self.new_rng));
        let asked = host.throttle(self.accepted.take(), draw);
        tell.warn(host.now(), self.number, asked.warning);
        if !asked.rejected {
            return Ok(false);
        }
        self.rejected += 1;
        let time_left = self.time_left(host.now());
        let (rng, new_rng, schedule) = (&mut self.rng, &mut self.new_rng, &mut self.schedule);
        let draw = |throttled| schedule.next_sleep_for(seeded(rng, new_rng), throttled);
        let budget = self.config.budget.as_ref().map(|b| b.params);
        let (mut paid, mut warning) = (None, None);
        let pay = |throttled| pay(host, budget, throttled, &mut paid, &mut warning);
        let after = decide::after_rejection(&self.rules, self.number, time_left, draw, pay);
        let name: std::sync::Arc<str> = throttle.name.as_str().into();
        let sleep = match after {
            Ok(sleep) => sleep,
            Err(ran_out) => {
                self.budget_said = warning;
                return Err(GiveUp::Rejected {
                    throttle: name,
                    probability: asked.probability,
                    status: self.previous_status,
                    ran_out,
                    code: throttle.exit_code,
                });
            }
        };
        tell.event(
            host.now(),
            Event::Rejected {
                attempt: self.number,
                limit: self.config.retries.attempts,
                throttle: name,
                probability: asked.probability,
                sleep,
                jitter: self.config.retries.backoff.jitter,
            },
        );
        tell.warn(host.now(), self.number, warning);
        // A success refunds the last retry's cost, this one's too.
        self.last_paid = paid;
        if let Err(reason) = self.sleep(host, sleep) {
            let said = paid.and_then(|tokens| host.deposit(tokens));
            tell.warn(host.now(), self.number, said);
            return Err(reason);
        }
        self.number = self.number.saturating_add(1);
        Ok(true)
    }

    /// The attempts started so far in the whole run: those `--throttle`
    /// rejected did not.
    fn started(&self) -> u32 {
        (self.earlier).saturating_add(self.number.saturating_sub(self.rejected))
    }

    /// `--throttle`, at the run's end: whether the service accepted the
    /// last attempt that ran, if it was not told yet.
    fn tell_throttle(&mut self, host: &mut impl Host, tell: &mut Tell<impl FnMut(&Stamped)>) {
        if self.config.throttle.is_some() {
            let said = host.throttle_end(self.accepted.take());
            tell.warn(host.now(), self.number, said);
        }
    }

    /// The attempt succeeded: its output settled, the line, and what the
    /// budget said of the refund.
    fn succeed(
        &mut self,
        host: &mut impl Host,
        tell: &mut Tell<impl FnMut(&Stamped)>,
        status: Status,
    ) -> Result<Exit, GiveUp> {
        // A success refunds what its last retry cost. A first-try success
        // adds nothing (the AWS SDKs add 1): the refill with time already
        // covers it, and so the run never touches the budget's store.
        let said = self.last_paid.and_then(|tokens| host.deposit(tokens));
        settle(host, true, tell, self.number)?;
        tell.event(
            host.now(),
            Event::Succeeded {
                attempt: self.number,
                limit: self.config.retries.attempts,
                status,
                slept_ms: self.slept_ms,
                took: self.took.unwrap_or_default(),
            },
        );
        tell.warn(host.now(), self.number, said);
        Ok(Exit::Code(status.code))
    }

    /// Another attempt follows, after the pause; unless the pause ends the
    /// run, when what the budget was paid for it goes back.
    fn retry(
        &mut self,
        host: &mut impl Host,
        tell: &mut Tell<impl FnMut(&Stamped)>,
        paid: Option<u32>,
        status: Status,
        next: (Class, Sleep, Option<Hinted>),
    ) -> Result<(), GiveUp> {
        self.last_paid = paid;
        if let Err(reason) = self.pause(host, tell, status, next) {
            // No retry follows (a signal, --max-time after the hook): its
            // tokens go back.
            let said = paid.and_then(|tokens| host.deposit(tokens));
            tell.warn(host.now(), self.number, said);
            return Err(reason);
        }
        self.previous_code = Some(match status.cause {
            crate::status::Cause::ZeroNotSuccess => 0,
            _ => status.code,
        });
        self.previous_status = Some(status);
        match std::mem::take(&mut self.resetting) {
            // A new streak: attempt 1 again, the run's count carried.
            true => {
                self.earlier = self.started();
                (self.number, self.rejected) = (1, 0);
            }
            false => self.number = self.number.saturating_add(1),
        }
        Ok(())
    }

    /// What the preset could not see, each said once a run, before the
    /// line of the attempt that failed: the server's wait, hidden when it
    /// asked to slow down; the error line the command's flags hide; a code
    /// a chosen preset retries that, named, it would stop on.
    fn say_once_what_judged(
        &mut self,
        now: Instant,
        tell: &mut Tell<impl FnMut(&Stamped)>,
        facts: &Facts,
        decision: &Decision,
    ) {
        if matches!(decision, Decision::Succeed(_)) {
            return;
        }
        let config = self.config;
        let mut say = |said: &mut bool, message: String| {
            if !std::mem::replace(said, true) {
                let attempt = self.number;
                tell.event(now, Event::Warning { attempt, message });
            }
        };
        if facts.seen.throttle
            && facts.seen.hint.is_none()
            && let Some(advice) = &config.throttle_advice
        {
            say(&mut self.advised, advice.clone());
        }
        // Only when the attempt printed nothing: flags retry cannot see
        // (a ~/.curlrc's show-error) may have shown the line after all.
        if !facts.seen.printed
            && let Some(advice) = &config.hidden_advice
        {
            say(&mut self.hidden_said, advice.clone());
        }
        let code = facts.status.code;
        if let (Decision::Retry { .. }, Some((named, preset))) = (decision, &config.named_codes)
            && !facts.seen.retry_if
            && !facts.seen.transient
            && !facts.seen.throttle
            && named.classify(code) != Verdict::Retry
        {
            say(
                &mut self.codes_said,
                format!(
                    "exit code {code} is retried: the {preset} preset, chosen by the program's \
                     name, ends a run only on a line it recognises, and none was seen (the \
                     program may be another of that name, or pass on a script's status); \
                     --preset {preset} applies its codes too (said once)"
                ),
            );
        }
    }

    /// Runs the attempt and gathers the facts the rules judge it by.
    fn attempt(
        &mut self,
        host: &mut impl Host,
        tell: &mut Tell<impl FnMut(&Stamped)>,
    ) -> Result<Facts, GiveUp> {
        let config = self.config;
        let info = AttemptInfo {
            number: self.number,
            limit: config.retries.attempts,
            previous_code: self.previous_code,
        };
        let started = host.now();
        let deadline = earliest(after(started, config.limits.timeout), self.run_deadline);
        self.took = None;
        let Attempt { ended, seen } = host
            .run(info, deadline)
            .map_err(|SpawnError { code, message }| GiveUp::Spawn { code, message })?;
        self.took = Some(host.now().saturating_duration_since(started));
        if let Some(pid) = host.started() {
            tell.event(
                host.now(),
                Event::Ran {
                    attempt: self.number,
                    pid,
                },
            );
        }
        let (status, stopped) = match ended {
            Ended::Exited(status) => (status, Stopped::No),
            Ended::NotStarted(errno) => (Status::not_started(errno), Stopped::No),
            Ended::TimedOut => {
                let (limit, stopped) = if deadline.is_some() && deadline == self.run_deadline {
                    (config.limits.max_time, Stopped::ByMaxTime)
                } else {
                    (config.limits.timeout, Stopped::ByTimeout)
                };
                (Status::timed_out(limit.unwrap_or_default()), stopped)
            }
            // A signal ends the run promptly: held-back output is dropped,
            // not written (gigabytes of it, or a stalled reader, would hold
            // the exit up), and the log says how much.
            Ended::Interrupted { signal, status } => {
                let dropped = host.drop_output();
                if dropped > 0 {
                    tell.warn(
                        host.now(),
                        self.number,
                        Some(dropped_on_signal("", dropped)),
                    );
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
        tell: &mut Tell<impl FnMut(&Stamped)>,
        status: Status,
        (class, sleep, hint): (Class, Sleep, Option<Hinted>),
    ) -> Result<(), GiveUp> {
        let config = self.config;
        settle(host, false, tell, self.number)?;
        let took = self.took.take().unwrap_or_default();
        tell.event(
            host.now(),
            Event::Retrying {
                attempt: self.number,
                limit: config.retries.attempts,
                status,
                class,
                sleep,
                jitter: config.retries.backoff.jitter,
                hint,
                took,
            },
        );
        if self.resetting {
            let (attempt, limit) = (self.number, config.retries.attempts);
            tell.event(
                host.now(),
                Event::Reset {
                    attempt,
                    limit,
                    ran: took,
                },
            );
        }
        tell.warn(host.now(), self.number, self.budget_said.take());
        if let Some(script) = &config.hooks.on_retry {
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
                tell.event(
                    host.now(),
                    Event::HookFailed {
                        attempt: self.number,
                        limit: config.retries.attempts,
                        status: hook_status,
                        error,
                    },
                );
            }
            // The hook ran inside the run's time: the sleep must still fit.
            if !decide::fits(sleep.duration, self.time_left(host.now())) {
                let sleep_ms = crate::duration::millis(sleep.duration);
                return Err(GiveUp::MaxTimeAhead { status, sleep_ms });
            }
        }
        self.sleep(host, sleep)
    }

    /// The sleep before the next attempt; a signal in it ends the run.
    fn sleep(&mut self, host: &mut impl Host, sleep: Sleep) -> Result<(), GiveUp> {
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

/// Where the loop's events go, each stamped as it is made.
struct Tell<'e, E> {
    origin: Origin,
    emit: &'e mut E,
}

impl<E: FnMut(&Stamped)> Tell<'_, E> {
    /// Hands on `event`, made at `now` on the host's clock.
    fn event(&mut self, now: Instant, event: Event) {
        (self.emit)(&Stamped {
            stamp: self.origin.stamp(now),
            event,
        });
    }

    /// A warning, if there is one (the budget's file, a hint).
    fn warn(&mut self, now: Instant, attempt: u32, message: Option<String>) {
        if let Some(message) = message {
            self.event(now, Event::Warning { attempt, message });
        }
    }
}

/// The schedule of a run's first sleep: its start, and where
/// `--reset-after` takes it back to.
fn first_schedule(config: &Options) -> Schedule {
    Schedule::with_throttle_base(config.retries.backoff, config.retries.throttle_base)
}

/// The run's RNG, seeded when it is first needed: a run that succeeds at
/// once, without `--throttle`, never pays for entropy.
fn seeded<'r, R, F: FnOnce() -> R>(rng: &'r mut Option<R>, new_rng: &mut Option<F>) -> &'r mut R {
    rng.get_or_insert_with(|| new_rng.take().map_or_else(|| unreachable!(), |f| f()))
}

/// Asks the `--budget` (if there is one: `budget`) to pay for a retry
/// (`throttled`: a throttled failure's, at its cost): whether it may go
/// ahead; what was paid and what the budget said, in `paid` and `warning`.
fn pay(
    host: &mut impl Host,
    budget: Option<crate::state::budget::Params>,
    throttled: bool,
    paid: &mut Option<u32>,
    warning: &mut Option<String>,
) -> bool {
    let Some(params) = budget else {
        return true;
    };
    let tokens = params.retry_cost(throttled);
    let withdrawal = host.withdraw(tokens);
    *warning = withdrawal.warning;
    *paid = withdrawal.granted.then_some(tokens);
    withdrawal.granted
}

/// Settles held-back output; a failure to do so ends the run.
fn settle(
    host: &mut impl Host,
    to_stdout: bool,
    tell: &mut Tell<impl FnMut(&Stamped)>,
    attempt: u32,
) -> Result<(), GiveUp> {
    host.settle_output(to_stdout)
        .map_err(|unsettled| match unsettled {
            Unsettled::Interrupted { signal, dropped } => {
                if dropped > 0 {
                    let said = Some(dropped_on_signal("the rest of ", dropped));
                    tell.warn(host.now(), attempt, said);
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
mod fake;
#[cfg(test)]
mod splay_reset_tests;
#[cfg(test)]
mod tests;
