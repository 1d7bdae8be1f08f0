//! Which protection the hosts of the outage scenario have (a row of the
//! table), and its state during one repetition: budgets on the budget's
//! own arithmetic (`state/budget/bucket.rs`), breakers on `--breaker`'s
//! own machine (`state/breaker/machine.rs`), one per host or one for the
//! fleet: the rules simulated are the rules run.

use rand::Rng;

use crate::state::breaker::machine::{Admit, Circuit, Ended, Params as BreakerParams};
use crate::state::breaker::{lease, machine::nanos};
use crate::state::budget::{Bucket, Params as BudgetParams};

/// Whose state it is: each host's own, or one for the whole fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Host,
    Fleet,
}

/// A row of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// The row's name (`none`, `host-budget`, `fleet-breaker`...).
    pub name: &'static str,
    pub protection: Protection,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Protection {
    None,
    Budget(Scope, BudgetParams),
    Breaker(Scope, BreakerParams),
}

impl Policy {
    /// Its parameters in words, for the table (no commas: a CSV cell).
    pub fn params(&self) -> String {
        match self.protection {
            Protection::None => "-".into(),
            Protection::Budget(_, p) => {
                format!("{} tokens {}/s cost {}", p.tokens, p.refill, p.cost)
            }
            Protection::Breaker(_, p) => format!(
                "after {} cooldown {} max {}",
                p.after,
                humantime::format_duration(p.cooldown),
                humantime::format_duration(p.cap())
            ),
        }
    }
}

/// One repetition's state of a policy: a bucket or a circuit for each
/// host or for the fleet (one entry), nothing without protection.
pub struct Guards {
    protection: Protection,
    buckets: Vec<Bucket>,
    breakers: Vec<Circuit>,
}

/// Milliseconds as the nanoseconds of the bucket and the circuit.
fn ns(ms: f64) -> u64 {
    (ms * 1e6) as u64
}

/// A probe's lease: a run's without `--max-time`, as the fleet runs it.
fn lease_ns() -> u64 {
    nanos(lease(None))
}

impl Guards {
    pub fn new(protection: Protection, hosts: u32) -> Self {
        let count = |scope| match scope {
            Scope::Host => hosts as usize,
            Scope::Fleet => 1,
        };
        let (buckets, breakers) = match protection {
            Protection::None => (Vec::new(), Vec::new()),
            Protection::Budget(scope, p) => (vec![Bucket::full(&p, 0); count(scope)], Vec::new()),
            Protection::Breaker(scope, _) => (Vec::new(), vec![Circuit::default(); count(scope)]),
        };
        Guards {
            protection,
            buckets,
            breakers,
        }
    }

    /// The entry of `host` (0 for a fleet's one).
    fn index(&self, host: u32, len: usize) -> usize {
        if len == 1 { 0 } else { host as usize }
    }

    /// A run of `host` starts.
    pub fn admit(&mut self, host: u32, now_ms: f64) -> Admit {
        let i = self.index(host, self.breakers.len());
        match self.breakers.get_mut(i) {
            Some(circuit) => circuit.admit(ns(now_ms), lease_ns()),
            None => Admit::Run,
        }
    }

    /// Whether the budget pays for a retry (always, without one).
    pub fn pay(&mut self, host: u32, now_ms: f64) -> bool {
        let Protection::Budget(_, p) = self.protection else {
            return true;
        };
        let i = self.index(host, self.buckets.len());
        match self.buckets[i].withdraw(&p, ns(now_ms), p.retry_cost(false)) {
            Some(bucket) => {
                self.buckets[i] = bucket;
                true
            }
            None => false,
        }
    }

    /// A run of `host` ended; `retried`: it had retries (a success after
    /// retries gives the last one's cost back, as the budget does).
    pub fn finish(
        &mut self,
        host: u32,
        now_ms: f64,
        ended: Ended,
        retried: bool,
        lease: Option<u64>,
        rng: &mut impl Rng,
    ) {
        match self.protection {
            Protection::None => {}
            Protection::Budget(_, p) => {
                if ended == Ended::Succeeded && retried {
                    let i = self.index(host, self.buckets.len());
                    self.buckets[i] = self.buckets[i].deposit(&p, ns(now_ms), p.retry_cost(false));
                }
            }
            Protection::Breaker(_, p) => {
                let i = self.index(host, self.breakers.len());
                self.breakers[i].finish(&p, ns(now_ms), ended, lease, rng);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_fleet_shares_one_state_and_hosts_have_their_own() {
        let mut rng = crate::strategy::rng(Some(1));
        let budget = BudgetParams {
            tokens: 10,
            cost: 5,
            throttle_cost: 5,
            refill: 0.0,
        };
        let mut fleet = Guards::new(Protection::Budget(Scope::Fleet, budget), 3);
        assert!(fleet.pay(0, 0.0) && fleet.pay(1, 0.0) && !fleet.pay(2, 0.0));
        let mut hosts = Guards::new(Protection::Budget(Scope::Host, budget), 3);
        assert!(hosts.pay(0, 0.0) && hosts.pay(0, 0.0) && !hosts.pay(0, 0.0));
        assert!(hosts.pay(2, 0.0));
        // A success after retries refunds one retry.
        hosts.finish(0, 1.0, Ended::Succeeded, true, None, &mut rng);
        assert!(hosts.pay(0, 1.0) && !hosts.pay(0, 1.0));

        let breaker = BreakerParams {
            after: 1,
            cooldown: Duration::from_secs(10),
            max: Duration::from_secs(80),
        };
        let mut fleet = Guards::new(Protection::Breaker(Scope::Fleet, breaker), 3);
        fleet.finish(0, 0.0, Ended::Failed, true, None, &mut rng);
        assert!(matches!(fleet.admit(2, 1.0), Admit::Skip { .. }));
        let mut hosts = Guards::new(Protection::Breaker(Scope::Host, breaker), 3);
        hosts.finish(0, 0.0, Ended::Failed, true, None, &mut rng);
        assert!(matches!(hosts.admit(0, 1.0), Admit::Skip { .. }));
        assert_eq!(hosts.admit(2, 1.0), Admit::Run);
        // Nothing configured: every run and retry goes ahead.
        let mut none = Guards::new(Protection::None, 3);
        none.finish(0, 0.0, Ended::Failed, true, None, &mut rng);
        assert!(none.pay(0, 0.0) && none.admit(0, 0.0) == Admit::Run);
    }
}
