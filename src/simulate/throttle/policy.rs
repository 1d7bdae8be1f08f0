//! The rows of the throttle table, for one case: no retries; retry's
//! backoff as it is (one class of failure); throttle-aware backoff on each
//! candidate base; then, each on the chosen throttle base: the budget with
//! the old and the 2026 costs, the breaker, the adaptive throttle for each
//! K and window, and the throttle with the budget; per host and for the
//! fleet.

use std::time::Duration;

use crate::policy::Attempts;
use crate::simulate::fleet::{Costs, Guarding, Policy, Scope, fleet_budget};
use crate::state::breaker::machine::Params as BreakerParams;
use crate::state::budget::Params as BudgetParams;
use crate::state::throttle::window::Params as ThrottleParams;

/// The candidates: `--throttle-bases`, `--throttle-ks`, `--throttle-windows`.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweeps {
    pub bases: Vec<Duration>,
    pub ks: Vec<f64>,
    pub windows: Vec<Duration>,
}

/// The values this table chose (docs/simulation.md, "Throttles"), which
/// the rows after the sweeps use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chosen {
    pub base: Duration,
    pub k: f64,
    pub window: Duration,
}

pub const CHOSEN: Chosen = Chosen {
    base: crate::strategy::DEFAULT_THROTTLE_BASE,
    k: 4.0,
    window: Duration::from_secs(120),
};

/// The AWS SDKs' retry quota costs before 2026-11-10: 5 a retry (10 after
/// a timeout, which the model has none of).
pub const OLD_COSTS: Costs = Costs::flat(5);

/// And from 2026-11-10: 14 a transient retry, 5 a throttled one.
pub const COSTS_2026: Costs = Costs {
    transient: 14,
    throttled: 5,
};

/// What the rows of one case need besides the candidates.
pub struct Context {
    /// The case's first attempts a second, and the service's capacity.
    pub first_per_s: f64,
    pub capacity: u32,
    /// The run's budget (each host's) and breaker.
    pub budget: BudgetParams,
    pub breaker: BreakerParams,
}

/// The rows of one case, in the table's order.
pub fn policies(context: &Context, sweeps: &Sweeps, chosen: &Chosen) -> Vec<Policy> {
    let throttle_base = Some(chosen.base);
    let mut rows = vec![
        Policy {
            name: "none",
            guarding: Guarding {
                attempts: Some(Attempts::Limit(1)),
                ..Guarding::default()
            },
        },
        Policy {
            name: "backoff",
            guarding: Guarding::default(),
        },
    ];
    rows.extend(sweeps.bases.iter().map(|&base| Policy {
        name: "throttle-base",
        guarding: Guarding {
            throttle_base: Some(base),
            ..Guarding::default()
        },
    }));
    // One bucket for both costs, sized for the old one, so that the rows
    // differ only by what a retry costs; holding one 2026 transient retry
    // at least, as retry requires of a budget that costs 14 (it refuses
    // `--budget-tokens 5 --budget-cost 14`), so that every row is one
    // retry runs.
    let sized = fleet_budget(
        context.first_per_s,
        context.capacity,
        OLD_COSTS.transient,
        context.budget,
    );
    let fleet = BudgetParams {
        tokens: sized.tokens.max(COSTS_2026.transient),
        ..sized
    };
    let budgets = [
        ("host-budget-old", Scope::Host, context.budget, OLD_COSTS),
        ("host-budget-2026", Scope::Host, context.budget, COSTS_2026),
        ("fleet-budget-old", Scope::Fleet, fleet, OLD_COSTS),
        ("fleet-budget-2026", Scope::Fleet, fleet, COSTS_2026),
    ];
    for (name, scope, params, costs) in budgets {
        rows.push(Policy {
            name,
            guarding: Guarding {
                throttle_base,
                ..Guarding::budget(scope, params, costs)
            },
        });
    }
    for (name, scope) in [
        ("host-breaker", Scope::Host),
        ("fleet-breaker", Scope::Fleet),
    ] {
        rows.push(Policy {
            name,
            guarding: Guarding {
                throttle_base,
                ..Guarding::breaker(scope, context.breaker)
            },
        });
    }
    let throttle = |k: f64, window: Duration| ThrottleParams {
        k,
        window_ms: window.as_millis().try_into().unwrap_or(u64::MAX),
    };
    for (name, scope) in [
        ("host-throttle", Scope::Host),
        ("fleet-throttle", Scope::Fleet),
    ] {
        for &k in &sweeps.ks {
            for &window in &sweeps.windows {
                rows.push(Policy {
                    name,
                    guarding: Guarding {
                        throttle_base,
                        throttle: Some((scope, throttle(k, window))),
                        ..Guarding::default()
                    },
                });
            }
        }
    }
    let both = [
        ("host-throttle-budget", Scope::Host, context.budget),
        ("fleet-throttle-budget", Scope::Fleet, fleet),
    ];
    for (name, scope, params) in both {
        rows.push(Policy {
            name,
            guarding: Guarding {
                throttle_base,
                throttle: Some((scope, throttle(chosen.k, chosen.window))),
                ..Guarding::budget(scope, params, COSTS_2026)
            },
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_of_a_case_in_order() {
        let context = Context {
            first_per_s: 20.0,
            capacity: 10,
            budget: BudgetParams {
                tokens: 500,
                cost: 5,
                throttle_cost: 5,
                refill: 5.0,
            },
            breaker: BreakerParams {
                after: 3,
                cooldown: Duration::from_secs(30),
                max: Duration::from_secs(240),
            },
        };
        let sweeps = Sweeps {
            bases: vec![Duration::from_secs(1), Duration::from_secs(5)],
            ks: vec![1.5, 2.0],
            windows: vec![Duration::from_secs(120)],
        };
        let rows = policies(&context, &sweeps, &CHOSEN);
        let names: Vec<&str> = rows.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "none",
                "backoff",
                "throttle-base",
                "throttle-base",
                "host-budget-old",
                "host-budget-2026",
                "fleet-budget-old",
                "fleet-budget-2026",
                "host-breaker",
                "fleet-breaker",
                "host-throttle",
                "host-throttle",
                "fleet-throttle",
                "fleet-throttle",
                "host-throttle-budget",
                "fleet-throttle-budget",
            ]
        );
        let params: Vec<String> = rows.iter().map(|p| p.guarding.params()).collect();
        assert_eq!(params[0], "-n 1");
        assert_eq!(params[1], "-");
        assert_eq!(params[3], "throttle base 5s");
        // Twice the capacity: the fleet budget pays a retry a second, at
        // either cost, and holds one 2026 transient retry (14), the least
        // retry accepts of a budget that costs 14; the rows after the
        // sweep on the chosen base.
        assert_eq!(params[6], "throttle base 10s 14 tokens 5/s cost 5");
        assert_eq!(
            params[7],
            "throttle base 10s 14 tokens 5/s cost 14 (5 throttled)"
        );
        assert_eq!(params[12], "throttle base 10s K 1.5 window 2m");
        assert_eq!(
            params[15],
            "throttle base 10s 14 tokens 5/s cost 14 (5 throttled) K 4 window 2m"
        );
    }
}
