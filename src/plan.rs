//! `--plan`: the sleeps a run with these options would take after each
//! failed attempt, drawn by the very `Schedule` and generator a run uses
//! (same seed, same sleeps), and the smallest, expected and largest total
//! wait computed from the formulas rather than from the sample.

use std::time::Duration;

use crate::cli::{Attempts, Format};
use crate::duration::millis;
use crate::report::{Cell, Report};
use crate::strategy::{Backoff, Jitter, Schedule};

/// Rows shown for `--max-attempts unlimited`.
const UNLIMITED_ROWS: u32 = 20;

pub struct Plan {
    pub rows: Vec<Row>,
    pub totals: Totals,
    pub unlimited: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The failed attempt after which this sleep comes.
    pub attempt: u32,
    pub ceiling: Duration,
    pub sleep: Duration,
    pub cumulative: Duration,
}

/// Total wait over the planned retries, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Totals {
    pub smallest: f64,
    pub expected: f64,
    pub largest: f64,
}

pub fn plan(backoff: Backoff, attempts: Attempts, seed: Option<u64>) -> Plan {
    let retries = match attempts {
        Attempts::Limit(n) => n - 1,
        Attempts::Unlimited => UNLIMITED_ROWS,
    };
    let mut rng = crate::strategy::rng(seed);
    let mut schedule = Schedule::new(backoff);
    let mut cumulative = Duration::ZERO;
    let rows = (1..=retries)
        .map(|attempt| {
            let sleep = schedule.next_sleep(&mut rng);
            cumulative = cumulative.saturating_add(sleep.duration);
            Row {
                attempt,
                ceiling: sleep.ceiling,
                sleep: sleep.duration,
                cumulative,
            }
        })
        .collect();
    Plan {
        rows,
        totals: totals(backoff, retries),
        unlimited: attempts == Attempts::Unlimited,
    }
}

/// The bounds and mean of the total wait over `retries` sleeps.
pub fn totals(b: Backoff, retries: u32) -> Totals {
    let ceilings = || (0..retries).map(|n| b.exponential(n).as_secs_f64());
    let sum: f64 = ceilings().sum();
    match b.jitter {
        Jitter::None => Totals {
            smallest: sum,
            expected: sum,
            largest: sum,
        },
        Jitter::Full => Totals {
            smallest: 0.0,
            expected: sum / 2.0,
            largest: sum,
        },
        Jitter::Equal => Totals {
            smallest: sum / 2.0,
            expected: sum * 0.75,
            largest: sum,
        },
        Jitter::Decorrelated => decorrelated_totals(b, retries),
    }
}

/// Decorrelated jitter's sleep depends on the previous one, so its mean is
/// found by carrying the distribution of the previous sleep forward:
/// `next = min(cap, U(base, 3 * previous))`, on a fine grid over [base, cap]
/// plus a point mass at the cap.
fn decorrelated_totals(b: Backoff, retries: u32) -> Totals {
    const BINS: usize = 4000;
    let (base, cap) = (b.base.as_secs_f64(), b.cap.as_secs_f64());
    let smallest = base * f64::from(retries);
    let mut largest = 0.0;
    let mut top = base;
    for _ in 0..retries {
        top = (top * 3.0).min(cap);
        largest += top;
    }
    if cap <= base || base <= 0.0 {
        // Every sleep is exactly the base (cap == base) or zero.
        return Totals {
            smallest,
            expected: smallest,
            largest: smallest,
        };
    }
    let width = (cap - base) / BINS as f64;
    let center = |i: usize| base + (i as f64 + 0.5) * width;
    // Probability of each bin and of the cap; the first "previous" is base itself.
    let mut bins = vec![0.0f64; BINS];
    let mut at_cap = 0.0;
    let mut atoms: Vec<(f64, f64)> = vec![(base, 1.0)];
    let mut expected = 0.0;
    for _ in 0..retries {
        let mut density = vec![0.0f64; BINS + 1]; // difference array of mass per bin
        let mut next_cap = 0.0;
        let mut spread = |value: f64, p: f64, density: &mut Vec<f64>| {
            if p == 0.0 {
                return;
            }
            let high = value * 3.0;
            if high <= base {
                density[0] += p; // degenerate: all at base
                density[1] -= p;
                return;
            }
            let per_second = p / (high - base);
            let end = high.min(cap);
            let full_bins = ((end - base) / width).floor() as usize;
            let full_bins = full_bins.min(BINS);
            density[0] += per_second * width;
            density[full_bins] -= per_second * width;
            if full_bins < BINS {
                let rest = end - (base + full_bins as f64 * width);
                density[full_bins] += per_second * rest;
                density[full_bins + 1] -= per_second * rest;
            }
            if high > cap {
                next_cap += per_second * (high - cap);
            }
        };
        for &(value, p) in &atoms {
            spread(value, p, &mut density);
        }
        for (i, &p) in bins.iter().enumerate() {
            spread(center(i), p, &mut density);
        }
        spread(cap, at_cap, &mut density);
        let mut running = 0.0;
        for (i, bin) in bins.iter_mut().enumerate() {
            running += density[i];
            *bin = running.max(0.0);
        }
        at_cap = next_cap;
        atoms.clear();
        expected += bins
            .iter()
            .enumerate()
            .map(|(i, p)| p * center(i))
            .sum::<f64>()
            + at_cap * cap;
    }
    Totals {
        smallest,
        expected,
        largest,
    }
}

pub fn render(plan: &Plan, backoff: Backoff, format: Format) -> String {
    let ms = |d: Duration| Cell::Int(millis(d));
    let report = Report {
        columns: vec!["attempt", "ceiling_ms", "sleep_ms", "cumulative_ms"],
        rows: plan
            .rows
            .iter()
            .map(|r| {
                vec![
                    Cell::Int(r.attempt.into()),
                    ms(r.ceiling),
                    ms(r.sleep),
                    ms(r.cumulative),
                ]
            })
            .collect(),
    };
    let mut out = report.render(format);
    if format == Format::Table {
        let t = plan.totals;
        let ms = |secs: f64| (secs * 1000.0).round();
        let over = if plan.unlimited {
            format!(
                "the first {UNLIMITED_ROWS} retries (attempts are unlimited: the total has no bound)"
            )
        } else {
            format!("{} retries", plan.rows.len())
        };
        out.push_str(&format!(
            "\ntotal wait over {over}: smallest {} ms, expected {} ms, largest {} ms ({}, from the formulas)\n",
            ms(t.smallest),
            ms(t.expected),
            ms(t.largest),
            backoff.jitter.label()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::Jitter;

    const MS: Duration = Duration::from_millis(1);

    fn backoff(jitter: Jitter) -> Backoff {
        Backoff {
            jitter,
            base: MS * 100,
            cap: MS * 1000,
            factor: 2.0,
        }
    }

    #[test]
    fn one_row_per_retry_with_running_total() {
        let p = plan(backoff(Jitter::None), Attempts::Limit(5), None);
        let sleeps: Vec<u128> = p.rows.iter().map(|r| r.sleep.as_millis()).collect();
        assert_eq!(sleeps, [100, 200, 400, 800]);
        assert_eq!(p.rows[3].cumulative, MS * 1500);
        assert_eq!(
            p.rows.iter().map(|r| r.attempt).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        assert_eq!(
            p.totals,
            Totals {
                smallest: 1.5,
                expected: 1.5,
                largest: 1.5
            }
        );
    }

    #[test]
    fn unlimited_shows_twenty_rows_and_says_so() {
        let p = plan(backoff(Jitter::Full), Attempts::Unlimited, Some(1));
        assert_eq!(p.rows.len(), 20);
        assert!(render(&p, backoff(Jitter::Full), Format::Table).contains("no bound"));
    }

    #[test]
    fn jittered_totals_follow_the_formulas() {
        // Ceilings 100, 200, 400: sum 700 ms.
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let full = totals(backoff(Jitter::Full), 3);
        assert!(full.smallest == 0.0 && close(full.expected, 0.35) && close(full.largest, 0.7));
        let equal = totals(backoff(Jitter::Equal), 3);
        assert!((equal.smallest - 0.35).abs() < 1e-9 && (equal.expected - 0.525).abs() < 1e-9);
    }

    #[test]
    fn decorrelated_expectation_matches_a_large_sample() {
        let b = backoff(Jitter::Decorrelated);
        let t = totals(b, 6);
        assert!((t.smallest - 0.6).abs() < 1e-9);
        // 300, 900, then the cap: 300 + 900 + 4 * 1000.
        assert!((t.largest - 5.2).abs() < 1e-9);
        let mut rng = crate::strategy::rng(Some(9));
        let runs = 40_000;
        let mean: f64 = (0..runs)
            .map(|_| {
                let mut s = Schedule::new(b);
                (0..6)
                    .map(|_| s.next_sleep(&mut rng).duration.as_secs_f64())
                    .sum::<f64>()
            })
            .sum::<f64>()
            / f64::from(runs);
        assert!(
            (t.expected - mean).abs() / mean < 0.01,
            "formula {} vs sample {mean}",
            t.expected
        );
    }

    #[test]
    fn table_rows_and_summary() {
        let b = backoff(Jitter::None);
        let out = render(&plan(b, Attempts::Limit(3), None), b, Format::Table);
        assert_eq!(
            out,
            "attempt  ceiling_ms  sleep_ms  cumulative_ms\n\
             \x20     1         100       100            100\n\
             \x20     2         200       200            300\n\n\
             total wait over 2 retries: smallest 300 ms, expected 300 ms, largest 300 ms (no jitter, from the formulas)\n"
        );
    }
}
