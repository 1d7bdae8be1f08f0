//! Which protection a row's runs have, and its state during one
//! repetition: budgets on the budget's own arithmetic
//! (`state/budget/bucket.rs`), breakers on `--breaker`'s own machine
//! (`state/breaker/machine.rs`), the adaptive throttle on `--throttle`'s own
//! rule (`state/throttle/window.rs`), each one per host or one for the
//! fleet: the rules simulated are the rules run.

use std::time::Duration;

use rand::Rng;

use crate::policy::Attempts;
use crate::state::breaker::machine::{Admit, Circuit, Ended, Params as BreakerParams};
use crate::state::breaker::{lease, machine::nanos};
use crate::state::budget::{Bucket, Params as BudgetParams};
use crate::state::throttle::window::{Params as ThrottleParams, Window};

/// Whose state it is: each host's own, or one for the whole fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Host,
    Fleet,
}

/// What a retry costs from a budget, by the failure before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Costs {
    pub transient: u32,
    pub throttled: u32,
}

impl Costs {
    /// One cost for every retry.
    pub const fn flat(cost: u32) -> Self {
        Costs {
            transient: cost,
            throttled: cost,
        }
    }
}

/// A row of a table: its name and its runs' protection.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// The row's name (`none`, `host-budget`, `fleet-breaker`...).
    pub name: &'static str,
    pub guarding: Guarding,
}

/// What protects the runs of a row; any of them, or none.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Guarding {
    /// The row's own attempts, in place of the scenario's (`-n 1`: no retries).
    pub attempts: Option<Attempts>,
    /// A throttled attempt's sleep is drawn on this base instead of the
    /// backoff's (throttle-aware backoff).
    pub throttle_base: Option<Duration>,
    pub budget: Option<(Scope, BudgetParams, Costs)>,
    pub breaker: Option<(Scope, BreakerParams)>,
    pub throttle: Option<(Scope, ThrottleParams)>,
}

impl Guarding {
    pub fn budget(scope: Scope, params: BudgetParams, costs: Costs) -> Self {
        Guarding {
            budget: Some((scope, params, costs)),
            ..Guarding::default()
        }
    }

    pub fn breaker(scope: Scope, params: BreakerParams) -> Self {
        Guarding {
            breaker: Some((scope, params)),
            ..Guarding::default()
        }
    }

    /// Its parameters in words, for the table (no commas: a CSV cell).
    pub fn params(&self) -> String {
        let mut words = Vec::new();
        if let Some(attempts) = self.attempts {
            words.push(format!("-n {attempts}"));
        }
        if let Some(base) = self.throttle_base {
            words.push(format!(
                "throttle base {}",
                humantime::format_duration(base)
            ));
        }
        if let Some((_, p, costs)) = self.budget {
            let cost = match costs.transient == costs.throttled {
                true => costs.transient.to_string(),
                false => format!("{} ({} throttled)", costs.transient, costs.throttled),
            };
            words.push(format!("{} tokens {}/s cost {cost}", p.tokens, p.refill));
        }
        if let Some((_, p)) = self.breaker {
            words.push(format!(
                "after {} cooldown {} max {}",
                p.after,
                humantime::format_duration(p.cooldown),
                humantime::format_duration(p.cap())
            ));
        }
        if let Some((_, p)) = self.throttle {
            words.push(format!(
                "K {} window {}",
                p.k,
                humantime::format_duration(Duration::from_millis(p.window_ms))
            ));
        }
        match words.is_empty() {
            true => "-".into(),
            false => words.join(" "),
        }
    }
}

/// A fleet budget sized as docs/behaviour.md's "Sizing a fleet budget"
/// says, for the dependency: it pays, in a burst and then each second, for
/// the retries the service can take beside the fleet's first attempts
/// (`first_per_s` a second): its capacity less their rate, at least one a
/// second, at `cost` each.
pub fn fleet_budget(first_per_s: f64, capacity: u32, cost: u32, run: BudgetParams) -> BudgetParams {
    let spare = (f64::from(capacity) - first_per_s).floor().max(1.0);
    BudgetParams {
        tokens: (spare * f64::from(cost)).min(f64::from(u32::MAX)) as u32,
        refill: spare * f64::from(cost),
        ..run
    }
}

/// One state per host, or one for the fleet.
struct Scoped<T> {
    states: Vec<T>,
}

impl<T: Clone> Scoped<T> {
    fn new(scope: Scope, hosts: u32, state: T) -> Self {
        let count = match scope {
            Scope::Host => hosts as usize,
            Scope::Fleet => 1,
        };
        Scoped {
            states: vec![state; count],
        }
    }

    /// The state of `host` (the fleet's one, if it is shared).
    fn of(&mut self, host: u32) -> &mut T {
        let i = if self.states.len() == 1 {
            0
        } else {
            host as usize
        };
        &mut self.states[i]
    }
}

/// Milliseconds as the nanoseconds of the bucket and the circuit.
fn ns(ms: f64) -> u64 {
    (ms * 1e6) as u64
}

/// A probe's lease: a run's without `--max-time`, as the fleet runs it.
fn lease_ns() -> u64 {
    nanos(lease(None))
}

/// One repetition's state of a row's protections.
pub struct Guards {
    budget: Option<(Scoped<Bucket>, BudgetParams, Costs)>,
    breaker: Option<(Scoped<Circuit>, BreakerParams)>,
    throttle: Option<(Scoped<Window>, ThrottleParams)>,
}

impl Guards {
    pub fn new(guarding: &Guarding, hosts: u32) -> Self {
        Guards {
            budget: guarding.budget.map(|(scope, p, costs)| {
                (Scoped::new(scope, hosts, Bucket::full(&p, 0)), p, costs)
            }),
            breaker: (guarding.breaker)
                .map(|(scope, p)| (Scoped::new(scope, hosts, Circuit::default()), p)),
            throttle: (guarding.throttle)
                .map(|(scope, p)| (Scoped::new(scope, hosts, Window::default()), p)),
        }
    }

    /// A run of `host` starts.
    pub fn admit(&mut self, host: u32, now_ms: f64) -> Admit {
        match &mut self.breaker {
            Some((circuits, _)) => circuits.of(host).admit(ns(now_ms), lease_ns()),
            None => Admit::Run,
        }
    }

    /// What the retry after a failure costs (0 without a budget).
    pub fn cost(&self, throttled: bool) -> u32 {
        match self.budget {
            Some((_, _, costs)) if throttled => costs.throttled,
            Some((_, _, costs)) => costs.transient,
            None => 0,
        }
    }

    /// Whether the budget pays `tokens` for a retry (always, without one).
    pub fn pay(&mut self, host: u32, now_ms: f64, tokens: u32) -> bool {
        let Some((buckets, p, _)) = &mut self.budget else {
            return true;
        };
        let bucket = buckets.of(host);
        match bucket.withdraw(p, ns(now_ms), tokens) {
            Some(paid) => {
                *bucket = paid;
                true
            }
            None => false,
        }
    }

    /// A success after retries gives the last retry's `tokens` back, as
    /// the budget does.
    pub fn refund(&mut self, host: u32, now_ms: f64, tokens: u32) {
        if let Some((buckets, p, _)) = &mut self.budget {
            let bucket = buckets.of(host);
            *bucket = bucket.deposit(p, ns(now_ms), tokens);
        }
    }

    /// Whether an adaptive throttle decides each attempt.
    pub fn throttles(&self) -> bool {
        self.throttle.is_some()
    }

    /// An attempt of `host` about to be sent at `now_ms`, decided with
    /// `draw` (uniform in [0, 1)) and counted: whether it may go (always,
    /// without a throttle).
    pub fn send(&mut self, host: u32, now_ms: f64, draw: f64) -> bool {
        match &mut self.throttle {
            Some((windows, p)) => windows.of(host).request(p, now_ms as u64, draw),
            None => true,
        }
    }

    /// The service accepted an attempt of `host`: the throttle counts it.
    pub fn accepted(&mut self, host: u32, now_ms: f64) {
        if let Some((windows, p)) = &mut self.throttle {
            windows.of(host).accept(p, now_ms as u64);
        }
    }

    /// A run of `host` ended; `lease` is its probe's, if it probed.
    pub fn finish(
        &mut self,
        host: u32,
        now_ms: f64,
        ended: Ended,
        lease: Option<u64>,
        rng: &mut impl Rng,
    ) {
        if let Some((circuits, p)) = &mut self.breaker {
            circuits.of(host).finish(p, ns(now_ms), ended, lease, rng);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two retries at 5 each, and no refill.
    const TWO_RETRIES: BudgetParams = BudgetParams {
        tokens: 10,
        cost: 5,
        throttle_cost: 5,
        refill: 0.0,
    };

    #[test]
    fn a_fleet_shares_one_state_and_hosts_have_their_own() {
        let mut rng = crate::strategy::rng(Some(1));
        let budget = TWO_RETRIES;
        let mut fleet = Guards::new(&Guarding::budget(Scope::Fleet, budget, Costs::flat(5)), 3);
        assert!(fleet.pay(0, 0.0, 5) && fleet.pay(1, 0.0, 5) && !fleet.pay(2, 0.0, 5));
        let mut hosts = Guards::new(&Guarding::budget(Scope::Host, budget, Costs::flat(5)), 3);
        assert!(hosts.pay(0, 0.0, 5) && hosts.pay(0, 0.0, 5) && !hosts.pay(0, 0.0, 5));
        assert!(hosts.pay(2, 0.0, 5));
        // A success after retries refunds one retry.
        hosts.refund(0, 1.0, 5);
        assert!(hosts.pay(0, 1.0, 5) && !hosts.pay(0, 1.0, 5));

        let breaker = BreakerParams {
            after: 1,
            cooldown: Duration::from_secs(10),
            max: Duration::from_secs(80),
        };
        let mut fleet = Guards::new(&Guarding::breaker(Scope::Fleet, breaker), 3);
        fleet.finish(0, 0.0, Ended::Failed, None, &mut rng);
        assert!(matches!(fleet.admit(2, 1.0), Admit::Skip { .. }));
        let mut hosts = Guards::new(&Guarding::breaker(Scope::Host, breaker), 3);
        hosts.finish(0, 0.0, Ended::Failed, None, &mut rng);
        assert!(matches!(hosts.admit(0, 1.0), Admit::Skip { .. }));
        assert_eq!(hosts.admit(2, 1.0), Admit::Run);

        let throttle = ThrottleParams {
            k: 2.0,
            window_ms: 60_000,
        };
        let guarding = |scope| Guarding {
            throttle: Some((scope, throttle)),
            ..Guarding::default()
        };
        // Host 0 sent 100 requests, none accepted: its next ones are
        // mostly rejected; host 1's own state is empty, the fleet's is not.
        let mut hosts = Guards::new(&guarding(Scope::Host), 3);
        let mut fleet = Guards::new(&guarding(Scope::Fleet), 3);
        for _ in 0..100 {
            hosts.send(0, 10.0, 0.999);
            fleet.send(0, 10.0, 0.999);
        }
        assert!(!hosts.send(0, 20.0, 0.5) && hosts.send(1, 20.0, 0.0));
        assert!(!fleet.send(1, 20.0, 0.5));
        // Accepts bring the fleet's requests within K of them.
        for _ in 0..60 {
            fleet.accepted(2, 30.0);
        }
        assert!(fleet.send(1, 40.0, 0.0));

        // Nothing configured: every run, retry and attempt goes ahead.
        let mut none = Guards::new(&Guarding::default(), 3);
        none.finish(0, 0.0, Ended::Failed, None, &mut rng);
        assert!(none.pay(0, 0.0, 5) && none.admit(0, 0.0) == Admit::Run);
        assert!(!none.throttles() && none.send(0, 0.0, 0.0) && none.cost(true) == 0);
    }

    #[test]
    fn a_retry_costs_by_the_failure_before_it() {
        let budget = BudgetParams {
            tokens: 500,
            cost: 14,
            throttle_cost: 14,
            refill: 5.0,
        };
        let costs = Costs {
            transient: 14,
            throttled: 5,
        };
        let guards = Guards::new(&Guarding::budget(Scope::Host, budget, costs), 1);
        assert_eq!((guards.cost(false), guards.cost(true)), (14, 5));
        let g = Guarding {
            attempts: Some(Attempts::Limit(1)),
            throttle_base: Some(Duration::from_secs(5)),
            ..Guarding::budget(Scope::Host, budget, costs)
        };
        assert_eq!(
            g.params(),
            "-n 1 throttle base 5s 500 tokens 5/s cost 14 (5 throttled)"
        );
        assert_eq!(Guarding::default().params(), "-");
    }

    #[test]
    fn the_fleet_budget_pays_for_what_the_service_spares() {
        let run = BudgetParams {
            tokens: 500,
            cost: 5,
            throttle_cost: 5,
            refill: 5.0,
        };
        // 50 hosts every 10 s: 5 first attempts a second of 20.
        let p = fleet_budget(5.0, 20, 5, run);
        assert_eq!((p.tokens, p.cost, p.refill), (75, 5, 75.0));
        // A service the first attempts alone fill still gets one a second.
        assert_eq!(fleet_budget(20.0, 2, 5, run).refill, 5.0);
    }
}
