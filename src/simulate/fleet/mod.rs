//! What `--model outage` and `--model throttle` share: one repetition of a
//! fleet's runs against a service of limited capacity (`service.rs`), under
//! a row's protections (`guards.rs`: the budget's, the breaker's and the
//! throttle's own rules, on the simulated clock).
//!
//! ```text
//! host h: starts a run (cron: at phase_h + k * every; a loop: every after its last run ended)
//!   └─> attempt ──> [throttle: sent, or rejected here] ──> service ──> answer ──> host
//!   failed: sleep the backoff (a throttled failure on the throttle base, at
//!   least the server's hint) and try again, until -n attempts or the budget refuses
//!   each arrow to or from the service: |Normal(--net-delay, --net-sd)|;
//!   an attempt's request leaves `spawn` after it is due (a process's start-up)
//! ```
//!
//! A run's state travels in its events (attempt, previous sleep, what its
//! last retry cost, probe lease), so runs of one host may overlap, as
//! cron's do, and a host costs a few bytes: when it first succeeded after
//! the outage, and its bucket, circuit or throttle if the row keeps one per
//! host.

mod guards;
mod service;

use std::time::Duration;

use rand::{Rng, RngExt};

use super::model::{Delays, Net};
use super::queue::{Calendar, timed_event};
use crate::policy::Attempts;
use crate::state::breaker::machine::{Admit, Ended};
use crate::strategy::Backoff;
use guards::Guards;
pub use guards::{Costs, Guarding, Policy, Scope, fleet_budget};
pub use service::{Failure, Overload, Spec as Service};

/// When a host's runs start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrivals {
    /// Cron, each host at a phase of its own, uniform in [0, every).
    Spread,
    /// Cron, every host at the same mark: 0, every, 2 × every...
    Aligned,
    /// Cron at the same mark, each run first sleeping a time drawn anew
    /// in [0, splay): `retry --splay` in every host's crontab.
    Splayed(Duration),
    /// A loop: the first run at a phase uniform in [0, every), each next
    /// one `every` after the last one ended.
    Loop,
}

/// The fleet, the service and the runs' options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scenario {
    pub hosts: u32,
    pub arrivals: Arrivals,
    pub every: Duration,
    /// Runs start until then (those running finish).
    pub span: Duration,
    pub service: Service,
    pub net: Net,
    /// What starting an attempt takes before its request leaves: a
    /// process's start-up (the throttle's decision comes before it, as
    /// retry asks before it starts the attempt).
    pub spawn: Duration,
    pub backoff: Backoff,
    pub attempts: Attempts,
}

/// What one repetition measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Requests that reached the service, and those while it was down.
    pub requests: u64,
    pub outage_requests: u64,
    /// The most requests in one second of the first minute after the outage.
    pub peak_rps: u32,
    /// Answers to the requests that arrived before the span's end.
    pub answers: service::Answers,
    /// Attempts the throttle kept from the service before the span's end.
    pub rejected: u64,
    /// Seconds from the recovery to each host's first success: the median
    /// and the longest (NaN when no host succeeded).
    pub lag_median_s: f64,
    pub lag_max_s: f64,
    /// Hosts without a success by the end.
    pub unrecovered: u32,
    /// Runs, and how they ended.
    pub runs: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub skipped: u64,
    /// Seconds from a run's start to its success: the mean and the 95th
    /// percentile of the runs that succeeded (NaN: none did).
    pub success_mean_s: f64,
    pub success_p95_s: f64,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// A run of the host starts.
    Start,
    /// An attempt leaves the host, if the throttle lets it (only with one).
    Send,
    /// An attempt reaches the service.
    Request,
    /// Its answer reaches the host.
    Served,
    Failed(Failure),
}

/// Something that happens to a host's run.
#[derive(Clone, Copy, PartialEq)]
struct Event {
    at_ms: f64,
    client: u32,
    kind: Kind,
    /// The attempt's number, from 1.
    attempt: u32,
    /// The sleep before it, in ms (decorrelated jitter reads it).
    slept_ms: f32,
    /// What the budget took for it (0: a first attempt, or no budget).
    paid: u32,
    /// When its run started.
    started_ms: f64,
    /// The breaker's probe lease the run holds (its id: the ns it was
    /// taken at; 0: none, since a probe follows a cooldown, never at 0).
    lease: u64,
}

timed_event!(Event);

impl Event {
    /// A run of `client` that cron starts at `mark_ms`, its first attempt
    /// `splay_ms` later (`--splay`): the run's time counts from the mark.
    fn splayed(client: u32, mark_ms: f64, splay_ms: f64) -> Self {
        Event {
            at_ms: mark_ms + splay_ms,
            client,
            kind: Kind::Start,
            attempt: 0,
            slept_ms: 0.0,
            paid: 0,
            started_ms: mark_ms,
            lease: 0,
        }
    }
}

/// A run's `--splay`, drawn anew (none but for `Arrivals::Splayed`, which
/// alone draws: the other scenarios' draws are as they were).
fn splay_ms(scenario: &Scenario, rng: &mut impl Rng) -> f64 {
    match scenario.arrivals {
        Arrivals::Splayed(splay) => rng.random::<f64>() * ms(splay),
        _ => 0.0,
    }
}

/// Runs one repetition of a row's `guarding`.
pub fn simulate(scenario: &Scenario, guarding: &Guarding, rng: &mut impl Rng) -> Outcome {
    let mut repetition = Repetition::new(scenario, guarding, rng);
    while let Some(event) = repetition.queue.pop() {
        match event.kind {
            Kind::Start => repetition.start(event),
            Kind::Send => repetition.send(event),
            Kind::Request => repetition.request(event),
            Kind::Served => repetition.served(event),
            Kind::Failed(failure) => repetition.failed(event, failure),
        }
    }
    repetition.outcome()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One repetition's world: the events to come, the hosts' protections,
/// the service, and what is measured.
struct Repetition<'a, 'r, R> {
    scenario: &'a Scenario,
    attempts: Attempts,
    /// The backoff of a throttled failure (the throttle base's, or the
    /// transient one's).
    throttled: Backoff,
    every_ms: f64,
    span_ms: f64,
    spawn_ms: f64,
    queue: Calendar<Event>,
    guards: Guards,
    service: service::Service,
    /// When each host first succeeded (NaN: not yet).
    first_success: Vec<f64>,
    /// Each successful run's time to success, in seconds.
    to_success: Vec<f32>,
    delays: Delays<'r, R>,
    out: Outcome,
}

impl<'a, 'r, R: Rng> Repetition<'a, 'r, R> {
    fn new(scenario: &'a Scenario, guarding: &Guarding, rng: &'r mut R) -> Self {
        let (every_ms, span_ms) = (ms(scenario.every), ms(scenario.span));
        let spread = scenario.net.mean_ms + 4.0 * scenario.net.sd_ms;
        let longest_splay_ms = match scenario.arrivals {
            Arrivals::Splayed(splay) => ms(splay),
            _ => 0.0,
        };
        let horizon_ms = every_ms.max(ms(scenario.backoff.cap))
            + longest_splay_ms
            + ms(scenario.spawn)
            + 2.0 * spread;
        let mut queue = Calendar::new(horizon_ms, scenario.hosts);
        // The phases first, so every row of a repetition has the same fleet.
        for client in 0..scenario.hosts {
            let at_ms = match scenario.arrivals {
                Arrivals::Aligned | Arrivals::Splayed(_) => 0.0,
                Arrivals::Spread | Arrivals::Loop => rng.random::<f64>() * every_ms,
            };
            if at_ms < span_ms {
                queue.push(Event::splayed(client, at_ms, splay_ms(scenario, rng)));
            }
        }
        Repetition {
            scenario,
            attempts: guarding.attempts.unwrap_or(scenario.attempts),
            throttled: Backoff {
                base: guarding.throttle_base.unwrap_or(scenario.backoff.base),
                ..scenario.backoff
            },
            every_ms,
            span_ms,
            spawn_ms: ms(scenario.spawn),
            queue,
            guards: Guards::new(guarding, scenario.hosts),
            service: service::Service::new(scenario.service),
            first_success: vec![f64::NAN; scenario.hosts as usize],
            to_success: Vec::new(),
            delays: Delays {
                net: scenario.net,
                rng,
            },
            out: Outcome::default(),
        }
    }

    /// A run starts: a cron host's next one is scheduled, then its first
    /// attempt sent, unless its protection skips the run.
    fn start(&mut self, event: Event) {
        if self.scenario.arrivals != Arrivals::Loop {
            // From the mark, not from the splay's end.
            self.next_run(event.client, event.started_ms);
        }
        self.out.runs += 1;
        let lease = match self.guards.admit(event.client, event.at_ms) {
            Admit::Skip { .. } => {
                self.out.skipped += 1;
                return self.ended(event);
            }
            Admit::Run => 0,
            Admit::Probe(lease) => lease,
        };
        let first = Event {
            attempt: 1,
            slept_ms: 0.0,
            paid: 0,
            started_ms: event.at_ms,
            lease,
            ..event
        };
        self.leave(first, event.at_ms);
    }

    /// The host's next run, `every` after `from_ms`, if it starts in the span.
    fn next_run(&mut self, client: u32, from_ms: f64) {
        let at_ms = from_ms + self.every_ms;
        if at_ms < self.span_ms {
            let splay_ms = splay_ms(self.scenario, self.delays.rng);
            self.queue.push(Event::splayed(client, at_ms, splay_ms));
        }
    }

    /// An attempt leaves the host at `at_ms`: to the service, or first to
    /// the throttle's decision then.
    fn leave(&mut self, attempt: Event, at_ms: f64) {
        let (at_ms, kind) = match self.guards.throttles() {
            true => (at_ms, Kind::Send),
            false => (at_ms + self.spawn_ms + self.delays.next(), Kind::Request),
        };
        self.queue.push(Event {
            at_ms,
            kind,
            ..attempt
        });
    }

    /// The throttle decides an attempt: sent, or rejected here, which is a
    /// throttled failure without a hint.
    fn send(&mut self, event: Event) {
        let draw = crate::strategy::unit(self.delays.rng);
        if self.guards.send(event.client, event.at_ms, draw) {
            let at_ms = event.at_ms + self.spawn_ms + self.delays.next();
            self.queue.push(Event {
                at_ms,
                kind: Kind::Request,
                ..event
            });
        } else {
            self.out.rejected += u64::from(event.at_ms < self.span_ms);
            self.failed(event, Failure::THROTTLED);
        }
    }

    /// An attempt reaches the service, whose answer goes back.
    fn request(&mut self, event: Event) {
        self.out.requests += 1;
        let kind = match self.service.answer(event.at_ms, self.delays.rng) {
            None => Kind::Served,
            Some(failure) => Kind::Failed(failure),
        };
        self.queue.push(Event {
            at_ms: event.at_ms + self.delays.next(),
            kind,
            ..event
        });
    }

    fn served(&mut self, event: Event) {
        let Event { at_ms, client, .. } = event;
        self.out.succeeded += 1;
        let first = &mut self.first_success[client as usize];
        if first.is_nan() {
            *first = at_ms;
        }
        self.to_success
            .push(((at_ms - event.started_ms) / 1e3) as f32);
        self.guards.accepted(client, at_ms);
        if event.paid > 0 {
            self.guards.refund(client, at_ms, event.paid);
        }
        self.end(event, Ended::Succeeded);
    }

    /// A failed attempt: the next one after the backoff's sleep, if the
    /// attempts and the budget allow one; else the run fails.
    fn failed(&mut self, event: Event, failure: Failure) {
        let Event { at_ms, client, .. } = event;
        let cost = self.guards.cost(failure.throttled);
        if !(self.attempts.allows_after(event.attempt) && self.guards.pay(client, at_ms, cost)) {
            self.out.failed += 1;
            self.end(event, Ended::Failed);
            return;
        }
        let backoff = match failure.throttled {
            true => self.throttled,
            false => self.scenario.backoff,
        };
        let previous = match event.attempt {
            1 => backoff.base,
            _ => Duration::from_secs_f64(f64::from(event.slept_ms) / 1e3),
        };
        let sleep = backoff.sleep(event.attempt - 1, previous, self.delays.rng);
        // A hint is a floor, past the cap too.
        let sleep_ms = ms(sleep.duration).max(f64::from(failure.hint_ms));
        let next = Event {
            attempt: event.attempt.saturating_add(1),
            slept_ms: sleep_ms as f32,
            paid: cost,
            ..event
        };
        self.leave(next, at_ms + sleep_ms);
    }

    /// A run's end, told to the host's protection.
    fn end(&mut self, event: Event, ended: Ended) {
        let lease = Some(event.lease).filter(|&l| l != 0);
        (self.guards).finish(event.client, event.at_ms, ended, lease, self.delays.rng);
        self.ended(event);
    }

    /// A looping host starts its next run `every` after this one ended.
    fn ended(&mut self, event: Event) {
        if self.scenario.arrivals == Arrivals::Loop {
            self.next_run(event.client, event.at_ms);
        }
    }

    /// The measures, once the queue is empty: the service's counts, each
    /// host's lag from the recovery to its first success, and the runs'
    /// times to success.
    fn outcome(mut self) -> Outcome {
        let mut out = self.out;
        out.outage_requests = self.service.during_outage;
        out.peak_rps = self.service.peak_first_minute();
        out.answers = self.service.answers;
        let outage_ms = self.scenario.service.outage_ms;
        let mut lags: Vec<f64> = (self.first_success.iter())
            .filter(|t| !t.is_nan())
            .map(|t| (t - outage_ms) / 1e3)
            .collect();
        out.unrecovered = self.scenario.hosts - lags.len() as u32;
        lags.sort_by(f64::total_cmp);
        out.lag_max_s = lags.last().copied().unwrap_or(f64::NAN);
        out.lag_median_s = lags.get(lags.len() / 2).copied().unwrap_or(f64::NAN);
        (out.success_mean_s, out.success_p95_s) = mean_and_p95(&mut self.to_success);
        out
    }
}

/// The mean and the 95th percentile (nearest rank) of `times`, NaN for none.
fn mean_and_p95(times: &mut [f32]) -> (f64, f64) {
    if times.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = times.iter().map(|&t| f64::from(t)).sum::<f64>() / times.len() as f64;
    let rank = (times.len() * 95).div_ceil(100) - 1;
    let (_, p95, _) = times.select_nth_unstable_by(rank, f32::total_cmp);
    (mean, f64::from(*p95))
}

/// What the fleet models' tests share.
#[cfg(test)]
pub(super) mod fixtures {
    use crate::strategy::{Backoff, Jitter};
    use std::time::Duration;

    /// retry's own run defaults: full jitter, 1 s to 20 s.
    pub const BACKOFF: Backoff = Backoff {
        jitter: Jitter::Full,
        base: Duration::from_secs(1),
        cap: Duration::from_secs(20),
        factor: 2.0,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::throttle::window::Params as ThrottleParams;

    /// 100 hosts in a loop, each starting a run 10 s after its last, against
    /// 20 requests a second: 10 runs a second, half the capacity.
    fn scenario(arrivals: Arrivals, hosts: u32, overload: Overload) -> Scenario {
        Scenario {
            hosts,
            arrivals,
            every: Duration::from_secs(10),
            span: Duration::from_secs(300),
            service: Service {
                outage_ms: 0.0,
                capacity: 20,
                window_ms: 1000.0,
                overload,
                error_rate: 0.0,
                span_ms: 300_000.0,
            },
            net: crate::simulate::model::fixtures::NET,
            spawn: Duration::ZERO,
            backoff: fixtures::BACKOFF,
            attempts: Attempts::Limit(5),
        }
    }

    const THROTTLE: Overload = Overload::Throttle { hint: false };

    fn run(scenario: &Scenario, guarding: &Guarding, seed: u64) -> Outcome {
        simulate(scenario, guarding, &mut crate::strategy::rng(Some(seed)))
    }

    fn throttle(scope: Scope) -> Guarding {
        Guarding {
            throttle: Some((
                scope,
                ThrottleParams {
                    k: 2.0,
                    window_ms: 60_000,
                },
            )),
            ..Guarding::default()
        }
    }

    #[test]
    fn a_loop_starts_each_run_a_period_after_the_last_ended() {
        // Under the capacity every run succeeds at once, in about a round
        // trip (20 ms): a host runs about 300 / 10.02 times.
        let s = scenario(Arrivals::Loop, 100, THROTTLE);
        let out = run(&s, &Guarding::default(), 1);
        assert_eq!(out.runs, out.succeeded);
        assert!((2900..=3000).contains(&out.runs), "{out:?}");
        assert_eq!((out.answers.refused, out.failed, out.rejected), (0, 0, 0));
        assert_eq!(out.answers.served, out.runs);
        assert!(
            out.success_p95_s < 0.05 && out.success_mean_s > 0.01,
            "{out:?}"
        );
    }

    #[test]
    fn each_attempt_starts_its_spawn_time_late() {
        // Under the capacity one attempt a run: 40 ms more to success and
        // the same service, with the throttle deciding before the start-up
        // as without it.
        let quick = scenario(Arrivals::Loop, 20, THROTTLE);
        let slow = Scenario {
            spawn: Duration::from_millis(40),
            ..quick
        };
        for guarding in [Guarding::default(), throttle(Scope::Host)] {
            let (a, b) = (run(&quick, &guarding, 3), run(&slow, &guarding, 3));
            assert_eq!((a.failed, b.failed, a.rejected, b.rejected), (0, 0, 0, 0));
            let added = b.success_mean_s - a.success_mean_s;
            assert!((0.039..0.041).contains(&added), "{a:?} {b:?}");
        }
    }

    #[test]
    fn aligned_hosts_start_together_and_overload_the_first_second() {
        // 100 hosts at once against 20 a second, every 10 s.
        let s = scenario(Arrivals::Aligned, 100, THROTTLE);
        let out = run(&s, &Guarding::default(), 2);
        assert_eq!(out.runs, 3000);
        assert_eq!(out.runs, out.succeeded + out.failed);
        // Each burst: 20 served at once, the rest retried into the seconds after.
        assert!(out.answers.refused > 2000, "{out:?}");
        assert!(out.success_p95_s > 1.0, "{out:?}");
        let none = Guarding {
            attempts: Some(Attempts::Limit(1)),
            ..Guarding::default()
        };
        let once = run(&s, &none, 2);
        assert_eq!((once.answers.served, once.answers.refused), (600, 2400));
        assert_eq!(once.requests, 3000);
    }

    #[test]
    fn a_hint_is_a_floor_on_every_throttled_sleep() {
        // Retried throttles with a 1 ms base: without a hint they come back
        // within the same second and are refused again; told to wait a
        // second, none of them is sooner.
        let mut s = scenario(Arrivals::Aligned, 100, THROTTLE);
        s.backoff.base = Duration::from_millis(1);
        let quick = run(&s, &Guarding::default(), 3);
        s.service.overload = Overload::Throttle { hint: true };
        let hinted = run(&s, &Guarding::default(), 3);
        assert!(
            hinted.answers.served > quick.answers.served + 500,
            "{hinted:?} {quick:?}"
        );
        assert!(hinted.success_mean_s > 1.0, "{hinted:?}");
    }

    #[test]
    fn a_throttle_base_spreads_the_throttled_retries() {
        let s = scenario(Arrivals::Aligned, 100, THROTTLE);
        let longer = Guarding {
            throttle_base: Some(Duration::from_secs(5)),
            ..Guarding::default()
        };
        let (short, long) = (run(&s, &Guarding::default(), 4), run(&s, &longer, 4));
        assert!(
            long.success_mean_s > short.success_mean_s,
            "{long:?} {short:?}"
        );
        // A transient failure keeps the backoff's own base: with every
        // admitted request failing transiently (nothing throttled), the
        // throttle base changes nothing.
        let mut errors = scenario(Arrivals::Loop, 10, THROTTLE);
        errors.service.error_rate = 0.999_999;
        let (plain, with_base) = (
            run(&errors, &Guarding::default(), 5),
            run(&errors, &longer, 5),
        );
        assert!(
            plain.answers.errors > 500 && plain.answers.refused == 0,
            "{plain:?}"
        );
        assert_eq!(
            (plain.requests, plain.failed, plain.answers),
            (with_base.requests, with_base.failed, with_base.answers)
        );
    }

    #[test]
    fn the_throttle_rejects_locally_when_the_service_throttles() {
        // 400 hosts at once every 10 s against 20 a second: four times what
        // the next 5 seconds can take.
        let s = scenario(Arrivals::Aligned, 400, THROTTLE);
        let backoff = run(&s, &Guarding::default(), 6);
        let fleet = run(&s, &throttle(Scope::Fleet), 6);
        assert_eq!(backoff.rejected, 0);
        assert!(fleet.rejected > 1000, "{fleet:?}");
        assert!(
            fleet.answers.refused * 2 < backoff.answers.refused,
            "{fleet:?} {backoff:?}"
        );
        // Rejected attempts are failed attempts: the runs still end.
        assert_eq!(fleet.runs, fleet.succeeded + fleet.failed);
        // Under the capacity the throttle lets everything through.
        let calm = scenario(Arrivals::Loop, 100, THROTTLE);
        for scope in [Scope::Host, Scope::Fleet] {
            let out = run(&calm, &throttle(scope), 7);
            assert_eq!((out.rejected, out.failed), (0, 0), "{scope:?}");
        }
    }

    #[test]
    fn a_budget_charges_each_retry_by_its_failure() {
        // A fleet budget of 100 tokens that never refills, every request
        // throttled past the first 20 of a second: with 5 a throttled retry
        // it pays for 20 retries, with 25 for 4.
        let s = Scenario {
            span: Duration::from_secs(1),
            ..scenario(Arrivals::Aligned, 100, THROTTLE)
        };
        let params = crate::state::budget::Params {
            tokens: 100,
            cost: 5,
            throttle_cost: 5,
            refill: 0.0,
        };
        let retries = |throttled| {
            let costs = Costs {
                transient: 1,
                throttled,
            };
            let out = run(&s, &Guarding::budget(Scope::Fleet, params, costs), 8);
            out.requests - out.runs
        };
        // Refunds of successes after retries pay for a few more.
        let (cheap, dear) = (retries(5), retries(25));
        assert!((20..30).contains(&cheap), "{cheap}");
        assert!((4..6).contains(&dear), "{dear}");
    }

    #[test]
    fn times_to_success_have_a_mean_and_a_95th_percentile() {
        let mut times: Vec<f32> = (1..=100).map(|i| i as f32).collect();
        assert_eq!(mean_and_p95(&mut times), (50.5, 95.0));
        assert_eq!(mean_and_p95(&mut [3.0]), (3.0, 3.0));
        let (mean, p95) = mean_and_p95(&mut []);
        assert!(mean.is_nan() && p95.is_nan());
    }
}
