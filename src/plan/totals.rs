//! The smallest, expected and largest total wait of a plan, from the
//! formulas rather than from its sample, in time independent of the number
//! of retries: ceilings grow until the cap and then stay there, so the sum
//! is a geometric series plus a multiple of the cap; decorrelated jitter's
//! mean settles (`decorrelated`) and is extrapolated from there.

use crate::strategy::{Backoff, Jitter};

use super::decorrelated;

/// Total wait over the planned retries, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Totals {
    pub smallest: f64,
    pub expected: f64,
    pub largest: f64,
}

/// Uncapped ceilings summed one by one (exactly the run's durations) up to
/// this many; past it, the geometric series' closed form.
const SUMMED: u32 = 10_000;

/// The bounds and mean of the total wait over `retries` sleeps.
pub fn totals(b: Backoff, retries: u32) -> Totals {
    let sum = || ceilings(b, retries);
    match b.jitter {
        Jitter::None => {
            let sum = sum();
            Totals {
                smallest: sum,
                expected: sum,
                largest: sum,
            }
        }
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

/// The sum of the ceilings `min(cap, base * factor^n)` for n < retries, in seconds.
fn ceilings(b: Backoff, retries: u32) -> f64 {
    let cap = b.cap.as_secs_f64();
    // The first retry whose ceiling is the cap (ceilings never shrink).
    let (mut low, mut high) = (0, retries);
    while low < high {
        let mid = low + (high - low) / 2;
        if b.exponential(mid) >= b.cap {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    let capped = cap * f64::from(retries - low);
    let uncapped = if low <= SUMMED {
        (0..low).map(|n| b.exponential(n).as_secs_f64()).sum()
    } else {
        // base * (factor^k - 1) / (factor - 1), written to stay accurate for
        // a factor within rounding of 1. More than SUMMED uncapped ceilings
        // under a cap of at most 2e28 base means factor^SUMMED < 2e28, so
        // factor is below 1.007 and nothing here overflows.
        let growth = b.factor - 1.0;
        let k = f64::from(low);
        let base = b.base.as_secs_f64();
        if growth > 0.0 {
            base * (k * growth.ln_1p()).exp_m1() / growth
        } else {
            base * k
        }
    };
    uncapped + capped
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::Schedule;
    use std::time::Duration;

    use super::super::tests::backoff;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn ceilings_sum_to_the_cap_then_grow_by_it() {
        // 100, 200, 400, 800, then 1000 ms for every further retry.
        let t = totals(backoff(Jitter::None), 6);
        assert!((t.expected - 3.5).abs() < 1e-12, "{t:?}");
        let started = std::time::Instant::now();
        let huge = totals(backoff(Jitter::None), u32::MAX);
        assert_eq!(huge.largest, 1.5 + f64::from(u32::MAX - 4));
        // Closed form: microseconds, where a loop over the retries takes minutes.
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn closed_form_agrees_with_the_ceilings_summed() {
        // A factor so near 1 that the cap is reached only after ~69,000 retries.
        for (factor, retries) in [(1.0001, 50_000), (1.0001, 100_000), (1.0 + 1e-12, 30_000)] {
            let b = Backoff {
                factor,
                base: MS,
                ..backoff(Jitter::None)
            };
            let summed: f64 = (0..retries).map(|n| b.exponential(n).as_secs_f64()).sum();
            let formula = totals(b, retries).expected;
            // A run's ceilings are whole nanoseconds: 1 ms * 1.00000003 is 1 ms.
            assert!(
                (formula - summed).abs() <= summed * 1e-7,
                "factor {factor}, {retries} retries: {formula} vs {summed}"
            );
        }
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
}
