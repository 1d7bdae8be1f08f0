//! `--simulate`: competing clients, to choose a strategy, base and cap from
//! evidence. Two experiments: the AWS "Exponential Backoff And Jitter"
//! post's (`occ.rs`, version conflicts) and a server that serves one
//! request at a time (`busy.rs`, capacity); `model` holds what they share
//! and `queue` their event queue. Two more compare protections for a
//! fleet, each with a table of its own: `outage/` (budgets, the circuit
//! breaker) for a cron fleet in an outage, `throttle/` (throttle-aware
//! backoff, budgets, breakers, the adaptive throttle) for a service that
//! throttles past its capacity; `fleet/` runs a repetition of either, and
//! `rows` their repetitions on all cores. `sweep` runs every repetition of
//! the two experiments on all cores, `chart` draws their two charts. The
//! values of its options are read by `cli/args/simulation.rs`.

mod busy;
mod chart;
mod fleet;
mod model;
mod occ;
pub mod outage;
mod queue;
mod repetition;
mod rows;
mod sweep;
pub mod throttle;
mod verdict;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

pub use model::{Experiment, Model, Net};
pub use rows::Run;
pub use sweep::{Contender, Progress, Summary};

use crate::strategy::{Backoff, Jitter};
use crate::table::{Cell, Format, Report};

#[derive(Debug)]
pub struct Options {
    pub experiment: Experiment,
    pub contenders: Vec<Contender>,
    pub clients: Vec<u32>,
    pub reps: u32,
    pub svg: Option<PathBuf>,
    /// `--seed`: the sweep's seed (a random one if absent).
    pub seed: Option<u64>,
    pub format: Format,
}

/// The strategies to compare: `jitter` alone, or (None) all four and the
/// no-backoff baseline. With `posts_backoff`, --base and --cap become the
/// post's: 10 ms (5 ms for decorrelated jitter) and 2 s; a run's 1 s base
/// would make every strategy look slow against a 10 ms network.
pub fn contenders(jitter: Option<Jitter>, backoff: Backoff, posts_backoff: bool) -> Vec<Contender> {
    let with = |jitter: Jitter| {
        let (base, cap) = if posts_backoff {
            let base_ms = if jitter == Jitter::Decorrelated {
                5
            } else {
                10
            };
            (Duration::from_millis(base_ms), Duration::from_secs(2))
        } else {
            (backoff.base, backoff.cap)
        };
        Contender {
            name: jitter.name(),
            backoff: Some(Backoff {
                jitter,
                base,
                cap,
                ..backoff
            }),
        }
    };
    match jitter {
        Some(jitter) => vec![with(jitter)],
        None => {
            let mut all: Vec<Contender> = Jitter::ALL.into_iter().map(with).collect();
            all.push(Contender {
                name: "no-backoff",
                backoff: None,
            });
            all
        }
    }
}

/// Runs the sweep, prints it, and draws the charts; returns the exit status.
pub fn run(options: &Options) -> u8 {
    // A chart that cannot be written is known before the sweep, not after
    // it: one line, and nothing simulated (the status of bad usage).
    let svg = match options.svg.as_deref().map(chart::Output::open).transpose() {
        Ok(svg) => svg,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "retry: {error}");
            return 2;
        }
    };
    let seed = rows::seed(options.seed);
    let threads = rows::threads();
    let bar = progress_bar(options);
    let events = std::sync::atomic::AtomicU64::new(0);
    let rows = sweep::sweep(
        &options.experiment,
        &options.contenders,
        &options.clients,
        options.reps,
        seed,
        threads,
        &|progress| {
            if let Some(bar) = &bar {
                match progress {
                    Progress::Reps(reps) => bar.inc(reps),
                    Progress::Events(count) => {
                        let total =
                            count + events.fetch_add(count, std::sync::atomic::Ordering::Relaxed);
                        bar.set_message(format!("{:.1}M events simulated", total as f64 / 1e6));
                    }
                }
            }
        },
    );
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let capped: u64 = rows.iter().map(|r| u64::from(r.capped)).sum();
    if capped > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "retry: {capped} repetitions stopped at --max-work {} requests (column `capped`): their work and time are lower bounds",
            options.experiment.max_work
        );
    }
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(render(&rows, options.experiment.model, options.format).as_bytes())
        .is_err()
    {
        if let Some(svg) = svg {
            svg.discard();
        }
        return 1;
    }
    // The verdict, below a table (CSV and JSON rows are a program's to judge).
    if let Some(verdict) = verdict::lines(&rows).filter(|_| options.format == Format::Table)
        && write!(stdout, "\n{verdict}").is_err()
    {
        if let Some(svg) = svg {
            svg.discard();
        }
        return 1;
    }
    if let Some(svg) = svg
        && let Err(error) = svg.draw(&rows, options.experiment.model)
    {
        let _ = writeln!(std::io::stderr(), "retry: {error}");
        return 1;
    }
    0
}

/// A progress bar on a terminal, and only for a sweep that takes a moment
/// (more than about a tenth of a second of simulated client-repetitions).
fn progress_bar(options: &Options) -> Option<indicatif::ProgressBar> {
    let reps = |per_group: u32| {
        let groups = options.contenders.len() * options.clients.len();
        groups as u64 * u64::from(per_group)
    };
    (std::io::stderr().is_terminal() && weight(options) > 2e6).then(|| {
        // The message counts events: one repetition of a fleet runs for
        // seconds, and the bar alone would not move.
        let style = indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} repetitions, {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
        indicatif::ProgressBar::new(reps(options.reps)).with_style(style)
    })
}

/// Roughly the sweep's cost: clients² per repetition (each client's retries
/// grow with the others). In floating point: 100,000 clients and four
/// billion repetitions overflow a u64.
fn weight(options: &Options) -> f64 {
    let per_rep: f64 = options.clients.iter().map(|&n| f64::from(n).powi(2)).sum();
    per_rep * f64::from(options.reps) * options.contenders.len() as f64
}

/// The table: the post's columns; the busy model adds the server's
/// utilisation, and a sweep that hit --max-work says in which rows.
pub fn render(rows: &[Summary], model: Model, format: Format) -> String {
    let busy = matches!(model, Model::Busy { .. });
    let capped = rows.iter().any(|r| r.capped > 0);
    let mut columns = vec![
        "strategy",
        "clients",
        "reps",
        "work_mean",
        "work_sd",
        "time_ms_mean",
        "time_ms_sd",
    ];
    columns.extend(busy.then_some("utilisation"));
    columns.extend(capped.then_some("capped"));
    let report = Report {
        columns,
        rows: rows
            .iter()
            .map(|r| {
                let mut row = vec![
                    Cell::Text(r.strategy.into()),
                    Cell::Int(r.clients.into()),
                    Cell::Int(r.reps.into()),
                    Cell::Num(r.work_mean, 1),
                    Cell::Num(r.work_sd, 1),
                    Cell::Num(r.time_ms_mean, 1),
                    Cell::Num(r.time_ms_sd, 1),
                ];
                row.extend(busy.then_some(Cell::Num(r.utilisation_mean, 3)));
                row.extend(capped.then_some(Cell::Int(r.capped.into())));
                row
            })
            .collect(),
    };
    report.render(format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_weight_of_the_largest_sweep_is_finite() {
        // 100,000 client counts up to 100,000 and u32::MAX repetitions:
        // clients^2 * reps overflowed the u64 this used to be.
        let options = Options {
            contenders: vec![
                Contender {
                    name: "no-backoff",
                    backoff: None,
                };
                5
            ],
            clients: (1..=100_000).collect(),
            reps: u32::MAX,
            experiment: Experiment {
                model: Model::Occ,
                net: Net {
                    mean_ms: 10.0,
                    sd_ms: 2.0,
                },
                max_work: u64::MAX,
            },
            svg: None,
            seed: None,
            format: Format::Table,
        };
        let w = weight(&options);
        assert!(w.is_finite() && w > 1e24, "{w}");
    }
}
