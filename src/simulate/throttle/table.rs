//! The throttle table: every case's rows, their repetitions on all cores
//! (`simulate/rows.rs`), their means, one line per case and row
//! (`src/table.rs` writes it).

use super::policy::{CHOSEN, Context, policies};
use super::{Case, Options};
use crate::simulate::fleet::{self, Outcome, Policy};
use crate::simulate::rows;
use crate::table::{Cell, Format, Report};

/// One line of the table: a case, a row, and its means.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub case: Case,
    pub policy: Policy,
    pub hosts: u32,
    pub reps: u32,
    pub runs: f64,
    /// Requests a second the service served, refused (429) and the
    /// throttle kept from it, over the span.
    pub goodput: f64,
    pub refused: f64,
    pub rejected: f64,
    /// A successful run's time to success: the mean and the 95th
    /// percentile (None when some repetition had no success).
    pub success_mean_s: Option<f64>,
    pub success_p95_s: Option<f64>,
    /// The share of runs that did not succeed (gave up, or skipped).
    pub gave_up: f64,
}

/// A case's row, ready to run.
struct Job {
    case: Case,
    policy: Policy,
    scenario: fleet::Scenario,
}

/// Every case's rows, on `threads` threads.
pub fn table(options: &Options, seed: u64, threads: usize) -> Vec<Line> {
    let mut jobs = Vec::new();
    for case in options.cases() {
        let scenario = case.fleet(&options.scenario);
        let context = Context {
            first_per_s: f64::from(scenario.hosts) / scenario.every.as_secs_f64(),
            // A second's capacity, which a fleet budget is sized for.
            capacity: options.scenario.per_second().round() as u32,
            budget: options.budget,
            breaker: options.breaker,
        };
        for policy in policies(&context, &options.sweeps, &CHOSEN) {
            jobs.push(Job {
                case,
                policy,
                scenario,
            });
        }
    }
    let outcomes = rows::repetitions(&jobs, options.run.reps, seed, threads, |job, rng| {
        fleet::simulate(&job.scenario, &job.policy.guarding, rng)
    });
    let span_s = options.scenario.span.as_secs_f64();
    (jobs.iter())
        .zip(&outcomes)
        .map(|(job, outs)| summarise(job, outs, span_s))
        .collect()
}

fn summarise(job: &Job, outs: &[Outcome], span_s: f64) -> Line {
    let n = outs.len().max(1) as f64;
    let mean = |f: &dyn Fn(&Outcome) -> f64| outs.iter().map(f).sum::<f64>() / n;
    let defined = |f: &dyn Fn(&Outcome) -> f64| {
        let all = mean(f);
        (!all.is_nan()).then_some(all)
    };
    Line {
        case: job.case,
        policy: job.policy.clone(),
        hosts: job.scenario.hosts,
        reps: outs.len() as u32,
        runs: mean(&|o| o.runs as f64),
        goodput: mean(&|o| o.answers.served as f64) / span_s,
        refused: mean(&|o| o.answers.refused as f64) / span_s,
        rejected: mean(&|o| o.rejected as f64) / span_s,
        success_mean_s: defined(&|o| o.success_mean_s),
        success_p95_s: defined(&|o| o.success_p95_s),
        gave_up: mean(&|o| (o.failed + o.skipped) as f64 / (o.runs.max(1) as f64)),
    }
}

/// Runs the throttle table and prints it; returns the exit status.
pub fn run(options: &Options) -> u8 {
    rows::run(
        &options.run,
        |seed, threads| table(options, seed, threads),
        render,
    )
}

/// A time in seconds, or `-` where some repetition had none.
fn seconds(s: Option<f64>) -> Cell {
    s.map_or(Cell::Missing, |s| Cell::Num(s, 2))
}

/// A column: its name, and its cell of a line.
type Column = (&'static str, fn(&Line) -> Cell);

/// The table's columns.
const COLUMNS: [Column; 14] = [
    ("arrivals", |l| Cell::Text(l.case.shape.name().into())),
    ("load", |l| Cell::Text(l.case.load.to_string())),
    ("hint", |l| {
        Cell::Text(if l.case.hint { "retry-after" } else { "none" }.into())
    }),
    ("policy", |l| Cell::Text(l.policy.name.into())),
    ("params", |l| Cell::Text(l.policy.guarding.params())),
    ("reps", |l| Cell::Int(l.reps.into())),
    ("hosts", |l| Cell::Int(l.hosts.into())),
    ("runs", |l| Cell::Num(l.runs, 0)),
    ("goodput_rps", |l| Cell::Num(l.goodput, 2)),
    ("refused_rps", |l| Cell::Num(l.refused, 2)),
    ("rejected_rps", |l| Cell::Num(l.rejected, 2)),
    ("success_s_mean", |l| seconds(l.success_mean_s)),
    ("success_s_p95", |l| seconds(l.success_p95_s)),
    ("gave_up", |l| Cell::Num(l.gave_up, 3)),
];

/// The table, one line per case and row.
pub fn render(lines: &[Line], format: Format) -> String {
    let report = Report {
        columns: COLUMNS.iter().map(|(name, _)| *name).collect(),
        rows: (lines.iter())
            .map(|line| COLUMNS.iter().map(|(_, cell)| cell(line)).collect())
            .collect(),
    };
    report.render(format)
}

#[cfg(test)]
mod tests {
    use super::super::{Shape, fixtures::options};
    use super::*;

    /// The line of `policy` (its first, for a swept one) in `case`'s lines.
    fn line<'a>(lines: &'a [Line], load: f64, policy: &str) -> &'a Line {
        (lines.iter())
            .find(|l| l.case.load == load && l.policy.name == policy)
            .unwrap_or_else(|| panic!("no {policy} at {load}"))
    }

    #[test]
    fn half_the_capacity_is_served_and_nothing_refused() {
        // Clients in a loop, at half of 50 a second: every request is
        // served (but the 1 % that fail; a second of more than 50 is some
        // 8 standard deviations away), and the throttles reject next to
        // nothing: only while a host's counts are few (a first request
        // that failed makes the next one's odds (1 - 0) / (1 + 1)).
        let mut o = options(&[Shape::Clients], &[0.5]);
        o.scenario.capacity = 50;
        let lines = table(&o, 3, 2);
        for l in &lines {
            assert_eq!(l.refused, 0.0, "{l:?}");
            assert!(l.rejected * 1000.0 < l.goodput, "{l:?}");
            assert!((24.0..25.1).contains(&l.goodput), "{l:?}");
            match l.policy.name {
                "none" => assert!(l.gave_up > 0.0 && l.gave_up < 0.03, "{l:?}"),
                _ => assert!(l.gave_up < 0.001, "{l:?}"),
            }
        }
    }

    #[test]
    fn at_ten_times_the_capacity_the_service_refuses_most_and_the_throttle_saves_it() {
        for shape in [Shape::Cron, Shape::Clients] {
            let lines = table(&options(&[shape], &[10.0]), 4, 2);
            let none = line(&lines, 10.0, "none");
            // Without retries nine in ten are refused (cron: all but a
            // second's worth of each period's).
            assert!(none.refused > 6.0 * none.goodput, "{none:?}");
            let backoff = line(&lines, 10.0, "backoff");
            assert!(backoff.refused > none.refused, "{backoff:?}");
            // The fleet's throttle sends about K times what is accepted:
            // some (K - 1) × 5 refused a second, against 45 and more.
            let fleet = line(&lines, 10.0, "fleet-throttle");
            assert!(
                fleet.refused * 2.0 < backoff.refused,
                "{fleet:?} {backoff:?}"
            );
            assert!(fleet.rejected > fleet.refused, "{fleet:?}");
            assert!(
                fleet.goodput > 0.5 * backoff.goodput,
                "{fleet:?} {backoff:?}"
            );
            let host = line(&lines, 10.0, "host-throttle");
            assert!(host.refused < backoff.refused, "{host:?} {backoff:?}");
            // Nothing serves more than the capacity.
            assert!(lines.iter().all(|l| l.goodput <= 5.0), "{lines:?}");
        }
    }

    #[test]
    fn the_same_lines_on_any_number_of_threads_and_in_every_format() {
        let o = options(&[Shape::Cron], &[2.0]);
        let one = table(&o, 5, 1);
        assert_eq!(one, table(&o, 5, 3));
        assert_ne!(one, table(&o, 6, 1));
        assert_eq!(one.len(), 13);
        let csv = render(&one, Format::Csv);
        assert!(csv.starts_with("arrivals,load,hint,policy,params,reps,hosts,runs,"));
        assert!(csv.contains("\ncron,2,none,none,-n 1,1,100,1200,"), "{csv}");
        let json = render(&one, Format::Json);
        assert!(
            json.starts_with("[{\"arrivals\":\"cron\",\"load\":\"2\","),
            "{json}"
        );
    }
}
