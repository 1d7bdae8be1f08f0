//! `--simulate`: the AWS "Exponential Backoff And Jitter" experiment, to
//! choose a strategy, base and cap from evidence. `model` is one run of
//! the experiment, `sweep` runs every repetition on all cores, `chart`
//! draws the post's two charts.

mod chart;
mod model;
mod sweep;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

pub use model::Net;
pub use sweep::{Contender, Summary};

use crate::cli::{Cli, Format};
use crate::report::{Cell, Report};
use crate::strategy::{Backoff, Jitter};

#[derive(Debug)]
pub struct Options {
    pub contenders: Vec<Contender>,
    pub clients: Vec<u32>,
    pub reps: u32,
    pub net: Net,
    pub svg: Option<PathBuf>,
}

impl Options {
    /// Left at their defaults, --base and --cap become the post's: 10 ms
    /// (5 ms for decorrelated jitter) and 2 s. A run's 1 s base would make
    /// every strategy look slow against a 10 ms network.
    pub fn new(cli: &Cli, backoff: Backoff) -> Self {
        let with = |jitter: Jitter| {
            let (base, cap) = if cli.backoff_defaulted {
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
        let contenders = match cli.jitter.single() {
            Some(jitter) => vec![with(jitter)],
            None => {
                let mut all: Vec<Contender> = Jitter::ALL.into_iter().map(with).collect();
                all.push(Contender {
                    name: "no-backoff",
                    backoff: None,
                });
                all
            }
        };
        Options {
            contenders,
            clients: cli.clients.0.clone(),
            reps: cli.reps,
            net: Net {
                mean_ms: cli.net_delay.as_secs_f64() * 1e3,
                sd_ms: cli.net_sd.as_secs_f64() * 1e3,
            },
            svg: cli.svg.clone(),
        }
    }
}

/// Runs the sweep, prints it, and draws the charts; returns the exit status.
pub fn run(options: &Options, seed: Option<u64>, format: Format) -> u8 {
    // A chart that cannot be written is known before the sweep, not after
    // it: one line, and nothing simulated (the status of bad usage).
    let svg = match options.svg.as_deref().map(chart::Output::open).transpose() {
        Ok(svg) => svg,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "retry: {error}");
            return 2;
        }
    };
    let seed = seed.unwrap_or_else(|| rand::RngExt::random(&mut crate::strategy::rng(None)));
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let bar = progress_bar(options);
    let rows = sweep::sweep(
        &options.contenders,
        &options.clients,
        options.reps,
        options.net,
        seed,
        threads,
        &|reps| {
            if let Some(bar) = &bar {
                bar.inc(reps);
            }
        },
    );
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(render(&rows, format).as_bytes()).is_err() {
        if let Some(svg) = svg {
            svg.discard();
        }
        return 1;
    }
    if let Some(svg) = svg
        && let Err(error) = svg.draw(&rows)
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
    (std::io::stderr().is_terminal() && weight(options) > 2e6)
        .then(|| indicatif::ProgressBar::new(reps(options.reps)))
}

/// Roughly the sweep's cost: clients² per repetition (each client's retries
/// grow with the others). In floating point: 100,000 clients and four
/// billion repetitions overflow a u64.
fn weight(options: &Options) -> f64 {
    let per_rep: f64 = options.clients.iter().map(|&n| f64::from(n).powi(2)).sum();
    per_rep * f64::from(options.reps) * options.contenders.len() as f64
}

pub fn render(rows: &[Summary], format: Format) -> String {
    let report = Report {
        columns: vec![
            "strategy",
            "clients",
            "reps",
            "work_mean",
            "work_sd",
            "time_ms_mean",
            "time_ms_sd",
        ],
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    Cell::Text(r.strategy.into()),
                    Cell::Int(r.clients.into()),
                    Cell::Int(r.reps.into()),
                    Cell::Num(r.work_mean, 1),
                    Cell::Num(r.work_sd, 1),
                    Cell::Num(r.time_ms_mean, 1),
                    Cell::Num(r.time_ms_sd, 1),
                ]
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
            net: Net {
                mean_ms: 10.0,
                sd_ms: 2.0,
            },
            svg: None,
        };
        let w = weight(&options);
        assert!(w.is_finite() && w > 1e24, "{w}");
    }
}
