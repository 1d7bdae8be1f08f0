//! The outage scenario's table: every policy's repetitions on all cores
//! (`simulate/rows.rs`), their means, one row per policy (`src/table.rs`
//! writes it).

use std::time::Duration;

use super::{BreakerParams, Costs, Guarding, Outcome, Policy, Scenario, Scope, simulate};
use crate::simulate::{fleet::fleet_budget, rows};
use crate::state::budget::Params as BudgetParams;
use crate::table::{Cell, Format, Report};

#[derive(Debug)]
pub struct Options {
    pub scenario: Scenario,
    pub policies: Vec<Policy>,
    pub run: rows::Run,
}

/// The rows: no protection; a budget on each host (`budget`: the run's
/// `--budget-*` values), the fleet budget's share on each host, and one
/// fleet budget; then a breaker on each host and one for the fleet for
/// every `--breaker-afters` and `--breaker-cooldowns` pair.
pub fn policies(
    scenario: &Scenario,
    budget: BudgetParams,
    afters: &[u32],
    cooldowns: &[Duration],
    maxes: &[Duration],
) -> Vec<Policy> {
    let first_per_s = f64::from(scenario.hosts) / scenario.every.as_secs_f64();
    let fleet = fleet_budget(first_per_s, scenario.capacity, budget.cost, budget);
    let hosts = f64::from(scenario.hosts);
    let share = BudgetParams {
        tokens: ((f64::from(fleet.tokens) / hosts) as u32).max(budget.cost),
        refill: fleet.refill / hosts,
        ..fleet
    };
    let costs = Costs::flat(budget.cost);
    let mut rows = vec![
        Policy {
            name: "none",
            guarding: Guarding::default(),
        },
        Policy {
            name: "host-budget",
            guarding: Guarding::budget(Scope::Host, budget, costs),
        },
        Policy {
            name: "host-budget-share",
            guarding: Guarding::budget(Scope::Host, share, costs),
        },
        Policy {
            name: "fleet-budget",
            guarding: Guarding::budget(Scope::Fleet, fleet, costs),
        },
    ];
    for (scope, name) in [
        (Scope::Host, "host-breaker"),
        (Scope::Fleet, "fleet-breaker"),
    ] {
        for &after in afters {
            for &cooldown in cooldowns {
                for &max in maxes {
                    let params = BreakerParams {
                        after,
                        cooldown,
                        max,
                    };
                    rows.push(Policy {
                        name,
                        guarding: Guarding::breaker(scope, params),
                    });
                }
            }
        }
    }
    rows
}

/// One row's means over its repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub policy: Policy,
    pub reps: u32,
    pub outage_requests: f64,
    pub outage_requests_sd: f64,
    pub peak_rps: f64,
    /// Repetitions whose peak exceeded the capacity.
    pub over_capacity: u32,
    /// None when some host had no success in some repetition.
    pub lag_median_s: Option<f64>,
    pub lag_max_s: Option<f64>,
    pub unrecovered: f64,
    pub runs: f64,
    pub succeeded: f64,
    pub failed: f64,
    pub skipped: f64,
}

/// Every policy's repetitions, on `threads` threads.
pub fn table(options: &Options, seed: u64, threads: usize) -> Vec<Row> {
    let outcomes = rows::repetitions(
        &options.policies,
        options.run.reps,
        seed,
        threads,
        |policy, rng| simulate(&options.scenario, policy, rng),
    );
    (options.policies.iter())
        .zip(&outcomes)
        .map(|(policy, outs)| summarise(policy, outs, options.scenario.capacity))
        .collect()
}

fn summarise(policy: &Policy, outs: &[Outcome], capacity: u32) -> Row {
    let n = outs.len().max(1) as f64;
    let mean = |f: &dyn Fn(&Outcome) -> f64| outs.iter().map(f).sum::<f64>() / n;
    let outage = mean(&|o| o.outage_requests as f64);
    let sd = (mean(&|o| (o.outage_requests as f64 - outage).powi(2))).sqrt();
    let recovered = outs.iter().all(|o| o.unrecovered == 0);
    Row {
        policy: policy.clone(),
        reps: outs.len() as u32,
        outage_requests: outage,
        outage_requests_sd: sd,
        peak_rps: mean(&|o| f64::from(o.peak_rps)),
        over_capacity: outs.iter().filter(|o| o.peak_rps > capacity).count() as u32,
        lag_median_s: recovered.then(|| mean(&|o| o.lag_median_s)),
        lag_max_s: recovered.then(|| mean(&|o| o.lag_max_s)),
        unrecovered: mean(&|o| f64::from(o.unrecovered)),
        runs: mean(&|o| o.runs as f64),
        succeeded: mean(&|o| o.succeeded as f64),
        failed: mean(&|o| o.failed as f64),
        skipped: mean(&|o| o.skipped as f64),
    }
}

/// Runs the outage table and prints it; returns the exit status.
pub fn run(options: &Options) -> u8 {
    rows::run(
        &options.run,
        |seed, threads| table(options, seed, threads),
        render,
    )
}

/// The table, one row per policy.
pub fn render(rows: &[Row], format: Format) -> String {
    let columns = vec![
        "policy",
        "params",
        "reps",
        "outage_requests",
        "outage_requests_sd",
        "peak_rps",
        "over_capacity",
        "lag_median_s",
        "lag_max_s",
        "unrecovered",
        "runs",
        "succeeded",
        "failed",
        "skipped",
    ];
    let lag = |s: Option<f64>| s.map_or(Cell::Missing, |s| Cell::Num(s, 1));
    let report = Report {
        columns,
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    Cell::Text(r.policy.name.into()),
                    Cell::Text(r.policy.guarding.params()),
                    Cell::Int(r.reps.into()),
                    Cell::Num(r.outage_requests, 0),
                    Cell::Num(r.outage_requests_sd, 0),
                    Cell::Num(r.peak_rps, 1),
                    Cell::Int(r.over_capacity.into()),
                    lag(r.lag_median_s),
                    lag(r.lag_max_s),
                    Cell::Num(r.unrecovered, 1),
                    Cell::Num(r.runs, 1),
                    Cell::Num(r.succeeded, 1),
                    Cell::Num(r.failed, 1),
                    Cell::Num(r.skipped, 1),
                ]
            })
            .collect(),
    };
    report.render(format)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::scenario;
    use super::*;

    fn options(reps: u32) -> Options {
        let s = scenario();
        Options {
            scenario: s,
            policies: policies(
                &s,
                BudgetParams {
                    tokens: 500,
                    cost: 5,
                    throttle_cost: 5,
                    refill: 5.0,
                },
                &[1, 3],
                &[Duration::from_secs(30)],
                &[Duration::from_secs(240)],
            ),
            run: rows::Run {
                reps,
                seed: Some(1),
                format: Format::Csv,
            },
        }
    }

    #[test]
    fn rows_in_order_and_the_same_on_any_number_of_threads() {
        let o = options(2);
        let names: Vec<&str> = o.policies.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "none",
                "host-budget",
                "host-budget-share",
                "fleet-budget",
                "host-breaker",
                "host-breaker",
                "fleet-breaker",
                "fleet-breaker"
            ]
        );
        let one = table(&o, 5, 1);
        assert_eq!(one, table(&o, 5, 3));
        assert_ne!(one, table(&o, 6, 1));
        for row in &one {
            assert_eq!(
                row.runs,
                row.succeeded + row.failed + row.skipped,
                "{row:?}"
            );
        }
    }
}
