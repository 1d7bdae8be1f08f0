//! The outage scenario's table: every policy's repetitions on all cores,
//! their means, one row per policy (`src/table.rs` writes it). Repetition r
//! of every policy starts from the same seed, so the policies of a
//! repetition meet the same fleet (the same phases), and a difference
//! between rows is the policy's.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{BreakerParams, Outcome, Policy, Protection, Scenario, Scope, simulate};
use crate::state::budget::Params as BudgetParams;
use crate::table::{Cell, Format, Report};

#[derive(Debug)]
pub struct Options {
    pub scenario: Scenario,
    pub policies: Vec<Policy>,
    pub reps: u32,
    /// `--seed` (a random one if absent).
    pub seed: Option<u64>,
    pub format: Format,
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
    let fleet = fleet_budget(scenario, budget.cost);
    let hosts = f64::from(scenario.hosts);
    let share = BudgetParams {
        tokens: ((f64::from(fleet.tokens) / hosts) as u32).max(budget.cost),
        refill: fleet.refill / hosts,
        ..fleet
    };
    let mut rows = vec![
        Policy {
            name: "none",
            protection: Protection::None,
        },
        Policy {
            name: "host-budget",
            protection: Protection::Budget(Scope::Host, budget),
        },
        Policy {
            name: "host-budget-share",
            protection: Protection::Budget(Scope::Host, share),
        },
        Policy {
            name: "fleet-budget",
            protection: Protection::Budget(Scope::Fleet, fleet),
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
                        protection: Protection::Breaker(scope, params),
                    });
                }
            }
        }
    }
    rows
}

/// A fleet budget sized as docs/behaviour.md's "Sizing a fleet budget"
/// says, for the dependency: it pays, in a burst and then each second,
/// for the retries the service can take beside the fleet's first
/// attempts (its capacity less their mean rate, at least one a second).
pub fn fleet_budget(scenario: &Scenario, cost: u32) -> BudgetParams {
    let first_attempts = f64::from(scenario.hosts) / scenario.every.as_secs_f64();
    let spare = (f64::from(scenario.capacity) - first_attempts)
        .floor()
        .max(1.0);
    BudgetParams {
        tokens: (spare * f64::from(cost)).min(f64::from(u32::MAX)) as u32,
        cost,
        // The outage's failures are refusals and 503s: none is throttled.
        throttle_cost: cost,
        refill: spare * f64::from(cost),
    }
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
    let reps = options.reps as usize;
    let jobs = options.policies.len() * reps;
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(vec![Outcome::default(); jobs]);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, jobs.max(1)) {
            scope.spawn(|| {
                loop {
                    let job = next.fetch_add(1, Ordering::Relaxed);
                    if job >= jobs {
                        break;
                    }
                    let (policy, rep) = (&options.policies[job / reps], job % reps);
                    let mut rng = ChaCha8Rng::seed_from_u64(rep_seed(seed, rep as u64));
                    let outcome = simulate(&options.scenario, policy, &mut rng);
                    if let Ok(mut all) = outcomes.lock() {
                        all[job] = outcome;
                    }
                }
            });
        }
    });
    let outcomes = outcomes.into_inner().unwrap_or_else(|e| e.into_inner());
    options
        .policies
        .iter()
        .zip(outcomes.chunks(reps.max(1)))
        .map(|(policy, outs)| summarise(policy, outs, options.scenario.capacity))
        .collect()
}

/// Repetition `rep`'s seed: splitmix64 of the two, so neighbouring seeds
/// give unrelated fleets.
fn rep_seed(seed: u64, rep: u64) -> u64 {
    let mut x = seed.wrapping_add(rep.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
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
                    Cell::Text(r.policy.params()),
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

/// Runs the table and prints it; returns the exit status.
pub fn run(options: &Options) -> u8 {
    let seed = options
        .seed
        .unwrap_or_else(|| rand::RngExt::random(&mut crate::strategy::rng(None)));
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let rows = table(options, seed, threads);
    let text = render(&rows, options.format);
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
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
            reps,
            seed: Some(1),
            format: Format::Csv,
        }
    }

    #[test]
    fn the_fleet_budget_pays_for_what_the_service_spares() {
        // 50 hosts every 10 s: 5 first attempts a second of 20.
        let p = fleet_budget(&scenario(), 5);
        assert_eq!((p.tokens, p.cost, p.refill), (75, 5, 75.0));
        // A service the first attempts alone fill still gets one a second.
        let busy = Scenario {
            capacity: 2,
            ..scenario()
        };
        assert_eq!(fleet_budget(&busy, 5).refill, 5.0);
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
