//! `--simulate --model throttle`: a service that admits `--capacity`
//! requests a second and throttles the rest (429, with or without a
//! Retry-After), under an offered load of a few times its capacity, from a
//! cron fleet (every host at the same mark of each period) or from clients
//! each running jobs in a loop; under each protection retry has or plans
//! (none, its backoff, throttle-aware backoff, budgets with the old and
//! the 2026 costs, breakers, the adaptive throttle, the throttle with a
//! budget), to choose issue 52's defaults from evidence. `fleet/` runs a
//! repetition, `policy.rs` names the rows, `table.rs` runs them and
//! writes the table; here is the scenario and its cases.

mod policy;
mod table;

use std::time::Duration;

use super::fleet::{self, Arrivals, Overload};
use super::model::Net;
use crate::policy::Attempts;
use crate::state::breaker::machine::Params as BreakerParams;
use crate::state::budget::Params as BudgetParams;
use crate::strategy::Backoff;
pub use policy::Sweeps;
pub use table::run;

/// How the load arrives: `--arrivals`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A cron fleet: every host runs its job at the same mark of each period.
    Cron,
    /// Clients, each running its next job a period after its last ended.
    Clients,
}

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Shape::Cron => "cron",
            Shape::Clients => "clients",
        }
    }

    fn arrivals(self) -> Arrivals {
        match self {
            Shape::Cron => Arrivals::Aligned,
            Shape::Clients => Arrivals::Loop,
        }
    }
}

/// What every case shares: the service, the period, the runs' options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scenario {
    /// Requests the service admits in each window.
    pub capacity: u32,
    /// The limiter's window: a second, or less in the live bench's
    /// scaled time (`--capacity-window`).
    pub window: Duration,
    /// Each attempt's start-up before its request (`--spawn-time`).
    pub spawn: Duration,
    /// The share of admitted requests that fail transiently.
    pub error_rate: f64,
    /// A cron host's period, or a client's pause between jobs.
    pub every: Duration,
    /// Runs start until then (those running finish).
    pub span: Duration,
    pub net: Net,
    pub backoff: Backoff,
    pub attempts: Attempts,
}

impl Scenario {
    /// The capacity a second: `capacity` a window.
    pub fn per_second(&self) -> f64 {
        f64::from(self.capacity) / self.window.as_secs_f64()
    }
}

/// One case of the table: a shape, a load, a hint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Case {
    pub shape: Shape,
    /// The offered load, a multiple of the capacity.
    pub load: f64,
    /// Whether a 429 carries a Retry-After.
    pub hint: bool,
}

impl Case {
    /// Hosts (or clients) that offer the load: `load × capacity × every /
    /// window` first attempts a period, one at least.
    pub fn hosts(&self, scenario: &Scenario) -> u32 {
        let hosts = self.load * scenario.per_second() * scenario.every.as_secs_f64();
        hosts.round().clamp(1.0, f64::from(u32::MAX)) as u32
    }

    /// The fleet's scenario of this case.
    fn fleet(&self, scenario: &Scenario) -> fleet::Scenario {
        let span_ms = scenario.span.as_secs_f64() * 1e3;
        fleet::Scenario {
            hosts: self.hosts(scenario),
            arrivals: self.shape.arrivals(),
            every: scenario.every,
            span: scenario.span,
            service: fleet::Service {
                outage_ms: 0.0,
                capacity: scenario.capacity,
                window_ms: scenario.window.as_secs_f64() * 1e3,
                overload: Overload::Throttle { hint: self.hint },
                error_rate: scenario.error_rate,
                span_ms,
            },
            net: scenario.net,
            spawn: scenario.spawn,
            backoff: scenario.backoff,
            attempts: scenario.attempts,
        }
    }
}

/// `--simulate --model throttle`'s options.
#[derive(Debug)]
pub struct Options {
    pub scenario: Scenario,
    /// `--arrivals`, `--loads`, `--hints`: every combination is a case.
    pub shapes: Vec<Shape>,
    pub loads: Vec<f64>,
    pub hints: Vec<bool>,
    /// The candidates of the sweeps, and the run's budget and breaker.
    pub sweeps: Sweeps,
    pub budget: BudgetParams,
    pub breaker: BreakerParams,
    pub run: super::rows::Run,
}

impl Options {
    /// The cases, in the table's order: by shape, then load, then hint.
    pub fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        for &shape in &self.shapes {
            for &load in &self.loads {
                for &hint in &self.hints {
                    cases.push(Case { shape, load, hint });
                }
            }
        }
        cases
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    /// 5 requests a second, hosts every 10 s for 2 minutes, 1 % errors;
    /// retry's own run defaults; the chosen throttle base, K and window.
    pub fn options(shapes: &[Shape], loads: &[f64]) -> Options {
        Options {
            scenario: Scenario {
                capacity: 5,
                window: Duration::from_secs(1),
                spawn: Duration::ZERO,
                error_rate: 0.01,
                every: Duration::from_secs(10),
                span: Duration::from_secs(120),
                net: crate::simulate::model::fixtures::NET,
                backoff: crate::simulate::fleet::fixtures::BACKOFF,
                attempts: Attempts::Limit(5),
            },
            shapes: shapes.to_vec(),
            loads: loads.to_vec(),
            hints: vec![false],
            sweeps: Sweeps {
                bases: vec![super::policy::CHOSEN.base],
                ks: vec![super::policy::CHOSEN.k],
                windows: vec![super::policy::CHOSEN.window],
            },
            budget: BudgetParams {
                tokens: 500,
                cost: 5,
                throttle_cost: 5,
                refill: 5.0,
            },
            breaker: BreakerParams {
                after: crate::state::breaker::DEFAULT_AFTER,
                cooldown: crate::state::breaker::DEFAULT_COOLDOWN,
                max: crate::state::breaker::DEFAULT_COOLDOWN_MAX,
            },
            run: crate::simulate::rows::Run {
                reps: 1,
                seed: Some(1),
                format: crate::table::Format::Csv,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_offer_the_load() {
        let options = fixtures::options(&[Shape::Cron], &[0.5, 2.0, 10.0]);
        let hosts: Vec<u32> = (options.cases().iter())
            .map(|case| case.hosts(&options.scenario))
            .collect();
        // 5 a second, every 10 s.
        assert_eq!(hosts, [25, 100, 500]);
        let tiny = Case {
            shape: Shape::Clients,
            load: 0.001,
            hint: true,
        };
        assert_eq!(tiny.hosts(&options.scenario), 1);
        // 5 in each 250 ms: 20 a second, and four times the hosts.
        let mut quick = fixtures::options(&[Shape::Cron], &[0.5, 2.0, 10.0]);
        quick.scenario.window = Duration::from_millis(250);
        let hosts: Vec<u32> = (quick.cases().iter())
            .map(|case| case.hosts(&quick.scenario))
            .collect();
        assert_eq!(hosts, [100, 400, 2000]);
        let quick_fleet = quick.cases()[0].fleet(&quick.scenario);
        assert_eq!(quick_fleet.service.window_ms, 250.0);
        let fleet = tiny.fleet(&options.scenario);
        assert_eq!(fleet.arrivals, Arrivals::Loop);
        assert_eq!(fleet.service.overload, Overload::Throttle { hint: true });
    }

    #[test]
    fn every_combination_is_a_case_in_order() {
        let mut options = fixtures::options(&[Shape::Cron, Shape::Clients], &[0.5, 2.0]);
        options.hints = vec![false, true];
        let cases = options.cases();
        assert_eq!(cases.len(), 8);
        assert_eq!(
            cases[3],
            Case {
                shape: Shape::Cron,
                load: 2.0,
                hint: true
            }
        );
        assert_eq!(cases[4].shape, Shape::Clients);
    }
}
