//! `--plan`: the sleeps a run with these options would take after each
//! failed attempt, drawn by the very `Schedule` and generator a run uses
//! (same seed, same sleeps), and the smallest, expected and largest total
//! wait computed from the formulas rather than from the sample.

use std::time::Duration;

mod decorrelated;

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
    let sum = || -> f64 { (0..retries).map(|n| b.exponential(n).as_secs_f64()).sum() };
    match b.jitter {
        Jitter::None => Totals {
            smallest: sum(),
            expected: sum(),
            largest: sum(),
        },
        Jitter::Full => Totals {
            smallest: 0.0,
            expected: sum() / 2.0,
            largest: sum(),
        },
        Jitter::Equal => Totals {
            smallest: sum() / 2.0,
            expected: sum() * 0.75,
            largest: sum(),
        },
        Jitter::Decorrelated => decorrelated_totals(b, retries),
    }
}

/// Decorrelated jitter: the smallest total is every sleep at `base`, the
/// largest every sleep at its ceiling (`min(cap, base * 3^k)`), and the mean
/// is carried forward as a distribution (`decorrelated`).
fn decorrelated_totals(b: Backoff, retries: u32) -> Totals {
    let (base, cap) = (b.base.as_secs_f64(), b.cap.as_secs_f64());
    if cap <= base || base <= 0.0 {
        // Every sleep is exactly the smaller of the two (zero for a zero base).
        let each = base.min(cap) * f64::from(retries);
        return Totals {
            smallest: each,
            expected: each,
            largest: each,
        };
    }
    // Ceilings triple until the cap (at most 60 times: cap/base < 3^60),
    // then every one is the cap.
    let (mut largest, mut top, mut climbed) = (0.0, base, 0);
    while climbed < retries && top < cap {
        top = (top * 3.0).min(cap);
        largest += top;
        climbed += 1;
    }
    largest += cap * f64::from(retries - climbed);
    Totals {
        smallest: base * f64::from(retries),
        expected: decorrelated::expected_total(base, cap, retries),
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

    fn decorrelated(base: Duration, cap: Duration) -> Backoff {
        Backoff {
            jitter: Jitter::Decorrelated,
            base,
            cap,
            factor: 2.0,
        }
    }

    /// Uncapped, each mean follows from the previous: E[X1] = (base + 3 E[X0]) / 2
    /// with X0 = base, so E[Xk] = 2 base 1.5^k - base.
    fn uncapped_mean_total(base: f64, retries: u32) -> f64 {
        (1..=retries)
            .map(|k| 2.0 * base * 1.5f64.powi(k as i32) - base)
            .sum()
    }

    #[test]
    fn decorrelated_expectation_is_exact_while_the_cap_is_out_of_reach() {
        // base * 3^retries stays below the cap, so no sleep is ever capped;
        // cap/base of 20000 and 1e11 (a linear grid loses the mass near base).
        let us = Duration::from_micros(1);
        for (base, cap, retries) in [
            (MS, MS * 20_000, 9),
            (Duration::from_nanos(1), Duration::from_secs(100), 23),
            (us * 10, us * 10 * 3u32.pow(12), 12),
        ] {
            let t = totals(decorrelated(base, cap), retries);
            let exact = uncapped_mean_total(base.as_secs_f64(), retries);
            assert!(
                (t.expected - exact).abs() <= exact * 1e-9,
                "cap/base {}: formula {} vs exact {exact}",
                cap.as_secs_f64() / base.as_secs_f64(),
                t.expected
            );
        }
        // The case from the report: 215.7 ms, not 339.
        let t = totals(decorrelated(MS, MS * 20_000), 9);
        assert_eq!((t.expected * 1e4).round(), 2157.0, "{t:?}");
    }

    /// The mean total of `runs` schedules drawn by the run's own code, and
    /// its standard error.
    fn sampled_mean_total(b: Backoff, retries: u32, runs: u32, seed: u64) -> (f64, f64) {
        let mut rng = crate::strategy::rng(Some(seed));
        let totals: Vec<f64> = (0..runs)
            .map(|_| {
                let mut s = Schedule::new(b);
                (0..retries)
                    .map(|_| s.next_sleep(&mut rng).duration.as_secs_f64())
                    .sum::<f64>()
            })
            .collect();
        mean_and_error(&totals)
    }

    fn mean_and_error(values: &[f64]) -> (f64, f64) {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, (var / n).sqrt())
    }

    #[test]
    fn decorrelated_expectation_matches_samples_when_capped() {
        // Decorrelated totals vary a lot between runs (a run that falls back
        // to `base` climbs for many steps), so the tolerance is the sample's
        // own standard error, and the runs are chosen to make it small.
        let year = Duration::from_secs(365 * 86_400);
        for (base, cap, retries, runs) in [
            (MS, MS * 20_000, 40, 5000),
            (MS, Duration::from_secs(100_000_000), 300, 800),
            (Duration::from_secs(1), year * 100, 300, 600),
            (MS * 100, MS * 300, 12, 5000),
        ] {
            let b = decorrelated(base, cap);
            let t = totals(b, retries);
            let (mean, error) = sampled_mean_total(b, retries, runs, u64::from(retries));
            let ratio = cap.as_secs_f64() / base.as_secs_f64();
            assert!(error < mean * 0.03, "cap/base {ratio}: too noisy to judge");
            assert!(
                (t.expected - mean).abs() < 4.0 * error,
                "cap/base {ratio}: formula {} vs sample {mean} ± {error}",
                t.expected
            );
            let uncapped = uncapped_mean_total(base.as_secs_f64(), retries);
            assert!(t.expected <= uncapped && t.expected <= t.largest, "{t:?}");
        }
    }

    #[test]
    fn decorrelated_expectation_settles_at_the_long_run_mean() {
        // Past a few hundred retries every sleep has the long-run mean: the
        // total grows by exactly that much per retry, up to u32::MAX retries.
        let b = decorrelated(MS, MS * 20_000);
        let settled = totals(b, 10_000).expected;
        let per_retry = totals(b, 10_001).expected - settled;
        let huge = totals(b, u32::MAX).expected;
        let extrapolated = settled + per_retry * f64::from(u32::MAX - 10_000);
        assert!(
            (huge - extrapolated).abs() <= huge * 1e-9,
            "{huge} vs {extrapolated}"
        );
        // That mean is what one long run averages (batch means for the error).
        let mut rng = crate::strategy::rng(Some(11));
        let mut s = Schedule::new(b);
        for _ in 0..1000 {
            s.next_sleep(&mut rng);
        }
        let batches: Vec<f64> = (0..40)
            .map(|_| {
                (0..10_000)
                    .map(|_| s.next_sleep(&mut rng).duration.as_secs_f64())
                    .sum::<f64>()
                    / 10_000.0
            })
            .collect();
        let (mean, error) = mean_and_error(&batches);
        assert!(
            (per_retry - mean).abs() < 4.0 * error && error < mean * 0.01,
            "formula {per_retry} vs run {mean} ± {error}"
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
