//! `--simulate --model outage`: a cron fleet against a service that is
//! down, then back with a limited capacity, under each protection retry
//! has or plans (none, budgets, the circuit breaker), to choose the
//! breaker's defaults from evidence. `service.rs` is the service,
//! `policy.rs` which protection the hosts have (the budget's and the
//! breaker's own rules, on the simulated clock), `table.rs` the
//! repetitions and the table; here is one repetition.
//!
//! ```text
//! host h: runs at phase_h + k * every ──> request ──> service ──> answer ──> host
//!   (phase_h uniform in [0, every))        (down until --outage, then --capacity a second)
//!   failed: sleep the backoff and send again, until -n attempts or the budget refuses
//!   each arrow: |Normal(--net-delay, --net-sd)|
//! ```
//!
//! A run's state travels in its events (attempt, previous sleep, probe
//! lease), so runs of one host may overlap, as cron's do, and a host
//! costs the table a few bytes: when it first succeeded after the outage,
//! and its bucket or circuit if the policy keeps one per host.

mod policy;
mod service;
mod table;

use std::time::Duration;

use rand::{Rng, RngExt};

use super::model::{Delays, Net};
use super::queue::{Calendar, timed_event};
use crate::policy::Attempts;
pub use crate::state::breaker::machine::Params as BreakerParams;
use crate::state::breaker::machine::{Admit, Ended};
use crate::strategy::Backoff;
use policy::Guards;
pub use policy::{Policy, Protection, Scope};
use service::Service;
pub use table::{Options, policies, run};

/// The fleet, the service and the runs' options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scenario {
    pub hosts: u32,
    /// Each host runs its job this often.
    pub every: Duration,
    /// The service is down from 0 for this long.
    pub outage: Duration,
    /// Requests a second it serves after that.
    pub capacity: u32,
    /// Runs start until then (those running finish).
    pub span: Duration,
    pub net: Net,
    pub backoff: Backoff,
    pub attempts: Attempts,
}

/// What one repetition of one policy measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Requests that reached the service while it was down.
    pub outage_requests: u64,
    pub requests: u64,
    /// The most requests in one second of the first minute after the outage.
    pub peak_rps: u32,
    /// Seconds from the recovery to each host's first success: the median
    /// and the longest (NaN when no host succeeded).
    pub lag_median_s: f64,
    pub lag_max_s: f64,
    /// Hosts without a success by the end.
    pub unrecovered: u32,
    /// Scheduled runs, and how they ended.
    pub runs: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub skipped: u64,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// A scheduled run of the host starts.
    Start,
    /// A request reaches the service.
    Request,
    /// Its answer reaches the host.
    Served,
    Refused,
}

/// Something that happens to a host's run.
#[derive(Clone, Copy, PartialEq)]
struct Event {
    at_ms: f64,
    client: u32,
    kind: Kind,
    /// The request's attempt number, from 1.
    attempt: u32,
    /// The sleep before it, in ms (decorrelated jitter reads it).
    slept_ms: f32,
    /// The breaker's probe lease the run holds (its id: the ns it was
    /// taken at; 0: none, since a probe follows a cooldown, never at 0).
    lease: u64,
}

timed_event!(Event);

/// Runs one repetition of `policy`.
pub fn simulate(scenario: &Scenario, policy: &Policy, rng: &mut impl Rng) -> Outcome {
    let mut repetition = Repetition::new(scenario, policy, rng);
    while let Some(event) = repetition.queue.pop() {
        match event.kind {
            Kind::Start => repetition.start(event),
            Kind::Request => repetition.request(event),
            Kind::Served => repetition.served(event),
            Kind::Refused => repetition.refused(event),
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
    every_ms: f64,
    span_ms: f64,
    queue: Calendar<Event>,
    guards: Guards,
    service: Service,
    /// When each host first succeeded (NaN: not yet).
    first_success: Vec<f64>,
    delays: Delays<'r, R>,
    out: Outcome,
}

impl<'a, 'r, R: Rng> Repetition<'a, 'r, R> {
    fn new(scenario: &'a Scenario, policy: &Policy, rng: &'r mut R) -> Self {
        let (every_ms, span_ms) = (ms(scenario.every), ms(scenario.span));
        let spread = scenario.net.mean_ms + 4.0 * scenario.net.sd_ms;
        let horizon_ms = every_ms.max(ms(scenario.backoff.cap)) + 2.0 * spread;
        let mut queue = Calendar::new(horizon_ms, scenario.hosts);
        // The phases first, so every policy of a repetition has the same fleet.
        for client in 0..scenario.hosts {
            let at_ms = rng.random::<f64>() * every_ms;
            if at_ms < span_ms {
                queue.push(Event {
                    at_ms,
                    client,
                    kind: Kind::Start,
                    attempt: 0,
                    slept_ms: 0.0,
                    lease: 0,
                });
            }
        }
        Repetition {
            scenario,
            every_ms,
            span_ms,
            queue,
            guards: Guards::new(policy.protection, scenario.hosts),
            service: Service::new(ms(scenario.outage), scenario.capacity),
            first_success: vec![f64::NAN; scenario.hosts as usize],
            delays: Delays {
                net: scenario.net,
                rng,
            },
            out: Outcome::default(),
        }
    }

    /// A scheduled run: the host's next one scheduled, then its first
    /// request sent, unless its protection skips the run.
    fn start(&mut self, event: Event) {
        let next = event.at_ms + self.every_ms;
        if next < self.span_ms {
            self.queue.push(Event {
                at_ms: next,
                ..event
            });
        }
        self.out.runs += 1;
        let lease = match self.guards.admit(event.client, event.at_ms) {
            Admit::Skip { .. } => {
                self.out.skipped += 1;
                return;
            }
            Admit::Run => 0,
            Admit::Probe(lease) => lease,
        };
        self.queue.push(Event {
            at_ms: event.at_ms + self.delays.next(),
            kind: Kind::Request,
            attempt: 1,
            slept_ms: 0.0,
            lease,
            ..event
        });
    }

    /// A request reaches the service, whose answer goes back.
    fn request(&mut self, event: Event) {
        self.out.requests += 1;
        let kind = match self.service.serves(event.at_ms) {
            true => Kind::Served,
            false => Kind::Refused,
        };
        self.queue.push(Event {
            at_ms: event.at_ms + self.delays.next(),
            kind,
            ..event
        });
    }

    fn served(&mut self, event: Event) {
        self.out.succeeded += 1;
        let first = &mut self.first_success[event.client as usize];
        if first.is_nan() {
            *first = event.at_ms;
        }
        self.end(event, Ended::Succeeded);
    }

    /// A refusal: the next request after the backoff's sleep, if the
    /// attempts and the protection allow one; else the run fails.
    fn refused(&mut self, event: Event) {
        let Event { at_ms, client, .. } = event;
        if !(self.scenario.attempts.allows_after(event.attempt) && self.guards.pay(client, at_ms)) {
            self.out.failed += 1;
            self.end(event, Ended::Failed);
            return;
        }
        let backoff = self.scenario.backoff;
        let previous = match event.attempt {
            1 => backoff.base,
            _ => Duration::from_secs_f64(f64::from(event.slept_ms) / 1e3),
        };
        let sleep = backoff.sleep(event.attempt - 1, previous, self.delays.rng);
        let sleep_ms = ms(sleep.duration);
        self.queue.push(Event {
            at_ms: at_ms + sleep_ms + self.delays.next(),
            kind: Kind::Request,
            attempt: event.attempt.saturating_add(1),
            slept_ms: sleep_ms as f32,
            ..event
        });
    }

    /// A run's end, told to the host's protection.
    fn end(&mut self, event: Event, ended: Ended) {
        self.guards.finish(
            event.client,
            event.at_ms,
            ended,
            event.attempt > 1,
            Some(event.lease).filter(|&l| l != 0),
            self.delays.rng,
        );
    }

    /// The measures, once the queue is empty: the service's counts and
    /// each host's lag from the recovery to its first success.
    fn outcome(self) -> Outcome {
        let mut out = self.out;
        out.outage_requests = self.service.during_outage;
        out.peak_rps = self.service.peak_first_minute();
        let outage_ms = ms(self.scenario.outage);
        let mut lags: Vec<f64> = (self.first_success.iter())
            .filter(|t| !t.is_nan())
            .map(|t| (t - outage_ms) / 1e3)
            .collect();
        out.unrecovered = self.scenario.hosts - lags.len() as u32;
        lags.sort_by(f64::total_cmp);
        out.lag_max_s = lags.last().copied().unwrap_or(f64::NAN);
        out.lag_median_s = lags.get(lags.len() / 2).copied().unwrap_or(f64::NAN);
        out
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::strategy::Jitter;

    /// A small fleet: 50 hosts every 10 s for 5 min, a 1-min outage, then
    /// 20 requests a second; retry's own run defaults.
    pub fn scenario() -> Scenario {
        Scenario {
            hosts: 50,
            every: Duration::from_secs(10),
            outage: Duration::from_secs(60),
            capacity: 20,
            span: Duration::from_secs(300),
            net: crate::simulate::model::fixtures::NET,
            backoff: Backoff {
                jitter: Jitter::Full,
                base: Duration::from_secs(1),
                cap: Duration::from_secs(20),
                factor: 2.0,
            },
            attempts: Attempts::Limit(5),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::scenario;
    use super::*;

    fn run(scenario: &Scenario, protection: Protection, seed: u64) -> Outcome {
        let policy = Policy {
            name: "test",
            protection,
        };
        simulate(scenario, &policy, &mut crate::strategy::rng(Some(seed)))
    }

    fn breaker(scope: Scope, after: u32, secs: u64) -> Protection {
        Protection::Breaker(
            scope,
            BreakerParams {
                after,
                cooldown: Duration::from_secs(secs),
                max: Duration::from_secs(secs * 8),
            },
        )
    }

    #[test]
    fn without_an_outage_every_run_succeeds_at_once() {
        let s = Scenario {
            outage: Duration::ZERO,
            capacity: 1000,
            ..scenario()
        };
        let out = run(&s, Protection::None, 1);
        // 50 hosts, 30 runs each in 300 s.
        assert_eq!((out.runs, out.succeeded, out.requests), (1500, 1500, 1500));
        assert_eq!((out.failed, out.skipped, out.outage_requests), (0, 0, 0));
        assert_eq!(out.unrecovered, 0);
        // Each host's first run succeeds within its first period.
        assert!(out.lag_max_s < 10.1, "{out:?}");
    }

    #[test]
    fn counts_add_up_under_every_protection() {
        let budget = crate::state::budget::Params {
            tokens: 20,
            cost: 5,
            throttle_cost: 5,
            refill: 1.0,
        };
        for protection in [
            Protection::None,
            Protection::Budget(Scope::Host, budget),
            Protection::Budget(Scope::Fleet, budget),
            breaker(Scope::Host, 2, 30),
            breaker(Scope::Fleet, 2, 30),
        ] {
            let out = run(&scenario(), protection, 7);
            assert_eq!(
                out.runs,
                out.succeeded + out.failed + out.skipped,
                "{protection:?}"
            );
            assert_eq!(out.runs, 1500, "{protection:?}");
            assert!(out.requests >= out.succeeded + out.failed, "{protection:?}");
            assert!(
                out.outage_requests > 0 && out.unrecovered == 0,
                "{protection:?} {out:?}"
            );
        }
    }

    #[test]
    fn without_protection_every_run_retries_through_the_outage() {
        // With -n 5 every run that ends in the outage sends 5 requests,
        // and no run is skipped.
        let s = Scenario {
            span: Duration::from_secs(30),
            outage: Duration::from_secs(600),
            ..scenario()
        };
        let out = run(&s, Protection::None, 3);
        assert_eq!((out.runs, out.failed, out.skipped), (150, 150, 0));
        assert_eq!(out.requests, 750);
        assert_eq!(out.outage_requests, 750);
        assert_eq!(out.unrecovered, 50);
        assert!(out.lag_max_s.is_nan());
    }

    #[test]
    fn a_fleet_breaker_stops_the_fleet_and_one_probe_reopens_it() {
        let none = run(&scenario(), Protection::None, 5);
        let fleet = run(&scenario(), breaker(Scope::Fleet, 1, 30), 5);
        let hosts = run(&scenario(), breaker(Scope::Host, 1, 30), 5);
        assert!(
            fleet.outage_requests * 4 < none.outage_requests,
            "{fleet:?} {none:?}"
        );
        assert!(
            hosts.outage_requests < none.outage_requests,
            "{hosts:?} {none:?}"
        );
        assert!(
            fleet.outage_requests < hosts.outage_requests,
            "{fleet:?} {hosts:?}"
        );
        assert!(
            fleet.skipped > 0 && hosts.skipped > 0,
            "{fleet:?} {hosts:?}"
        );
        assert_eq!(none.skipped, 0);
    }

    #[test]
    fn same_seed_same_outcome() {
        let b = breaker(Scope::Host, 3, 30);
        assert_eq!(run(&scenario(), b, 9), run(&scenario(), b, 9));
        assert_ne!(run(&scenario(), b, 9), run(&scenario(), b, 10));
    }
}
