//! `--simulate --model outage`: a cron fleet against a service that is
//! down, then back with a limited capacity, under each protection retry
//! has or plans (none, budgets, the circuit breaker), to choose the
//! breaker's defaults from evidence. `fleet/` runs one repetition (the
//! service, the hosts' protections on the real rules and the simulated
//! clock), `table.rs` the repetitions and the table; here is the scenario.
//!
//! ```text
//! host h: runs at phase_h + k * every ──> request ──> service ──> answer ──> host
//!   (phase_h uniform in [0, every);        (down until --outage, then --capacity a second)
//!    with --splay, phase_h = 0 and each run's first request a draw in [0, splay) later)
//!   failed: sleep the backoff and send again, until -n attempts or the budget refuses
//!   each arrow: |Normal(--net-delay, --net-sd)|
//! ```

mod table;

use std::time::Duration;

use rand::Rng;

use super::fleet::{self, Arrivals, Overload};
use super::model::Net;
use crate::policy::Attempts;
pub use crate::state::breaker::machine::Params as BreakerParams;
use crate::strategy::Backoff;
pub use fleet::{Costs, Guarding, Outcome, Policy, Scope};
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
    /// `--splay`: every host's cron at the same mark, each run sleeping a
    /// draw in [0, splay) first; `None`: hosts at phases of their own.
    pub splay: Option<Duration>,
}

impl Scenario {
    /// The fleet's scenario: hosts at phases of their own (or with
    /// `--splay` at one mark, splayed), a service that refuses past its
    /// capacity as a 503 does, and no other failure.
    fn fleet(&self) -> fleet::Scenario {
        fleet::Scenario {
            hosts: self.hosts,
            arrivals: self.splay.map_or(Arrivals::Spread, Arrivals::Splayed),
            every: self.every,
            span: self.span,
            service: fleet::Service {
                outage_ms: self.outage.as_secs_f64() * 1e3,
                capacity: self.capacity,
                window_ms: 1000.0,
                overload: Overload::Unavailable,
                error_rate: 0.0,
                span_ms: self.span.as_secs_f64() * 1e3,
            },
            net: self.net,
            spawn: Duration::ZERO,
            backoff: self.backoff,
            attempts: self.attempts,
        }
    }
}

/// Runs one repetition of `policy`.
pub fn simulate(scenario: &Scenario, policy: &Policy, rng: &mut impl Rng) -> Outcome {
    fleet::simulate(&scenario.fleet(), &policy.guarding, rng)
}

#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

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
            backoff: crate::simulate::fleet::fixtures::BACKOFF,
            attempts: Attempts::Limit(5),
            splay: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::scenario;
    use super::*;

    fn run(scenario: &Scenario, guarding: Guarding, seed: u64) -> Outcome {
        let policy = Policy {
            name: "test",
            guarding,
        };
        simulate(scenario, &policy, &mut crate::strategy::rng(Some(seed)))
    }

    fn breaker(scope: Scope, after: u32, secs: u64) -> Guarding {
        Guarding::breaker(
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
        let out = run(&s, Guarding::default(), 1);
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
            Guarding::default(),
            Guarding::budget(Scope::Host, budget, Costs::flat(5)),
            Guarding::budget(Scope::Fleet, budget, Costs::flat(5)),
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
        let out = run(&s, Guarding::default(), 3);
        assert_eq!((out.runs, out.failed, out.skipped), (150, 150, 0));
        assert_eq!(out.requests, 750);
        assert_eq!(out.outage_requests, 750);
        assert_eq!(out.unrecovered, 50);
        assert!(out.lag_max_s.is_nan());
    }

    #[test]
    fn a_fleet_breaker_stops_the_fleet_and_one_probe_reopens_it() {
        let none = run(&scenario(), Guarding::default(), 5);
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
    fn a_splay_spreads_a_fleet_that_cron_starts_at_one_mark() {
        // 1,000 hosts at :00 of every minute, a service with room for all:
        // the busiest second of the first minute sees every host without a
        // splay, a 30th of them with --splay 30s (about 33 a second; a
        // Poisson peak of about 50), a 300th of them with --splay 5m.
        let peak = |splay: Option<Duration>| {
            let s = Scenario {
                hosts: 1000,
                every: Duration::from_secs(60),
                outage: Duration::ZERO,
                capacity: 100_000,
                span: Duration::from_secs(120),
                splay,
                ..scenario()
            };
            let out = run(&s, Guarding::default(), 4);
            // Every run starts and succeeds at once, splayed or not.
            assert_eq!((out.runs, out.succeeded, out.requests), (2000, 2000, 2000));
            out.peak_rps
        };
        assert_eq!(peak(Some(Duration::ZERO)), 1000);
        let thirty = peak(Some(Duration::from_secs(30)));
        assert!((34..=70).contains(&thirty), "{thirty}");
        let five = peak(Some(Duration::from_secs(300)));
        assert!((4..=15).contains(&five), "{five}");
        // Hosts at phases of their own, the model's default: about 17 a
        // second, a peak near 30.
        let spread = peak(None);
        assert!(five < spread && spread < thirty, "{spread}");
    }

    #[test]
    fn same_seed_same_outcome() {
        let b = breaker(Scope::Host, 3, 30);
        assert_eq!(run(&scenario(), b, 9), run(&scenario(), b, 9));
        assert_ne!(run(&scenario(), b, 9), run(&scenario(), b, 10));
    }
}
