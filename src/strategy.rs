//! The four backoff strategies of the AWS Architecture Blog's "Exponential
//! Backoff And Jitter", as pure functions of (retry number, previous sleep,
//! random source). No clock and no global RNG: the runner, `--plan` and the
//! tests all drive the very same code with the generator they choose.
//!
//! `n` counts retries from 0: the sleep after the first failed attempt uses
//! `n = 0`, so its ceiling is `min(cap, base)`.

use std::time::Duration;

use rand::{Rng, RngExt};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jitter {
    /// sleep = min(cap, base * factor^n)
    None,
    /// sleep = random_between(0, min(cap, base * factor^n))
    Full,
    /// t = min(cap, base * factor^n); sleep = t/2 + random_between(0, t/2)
    Equal,
    /// sleep = min(cap, random_between(base, previous sleep * 3))
    Decorrelated,
}

impl Jitter {
    /// Every strategy (`--simulate` compares them; tests cover each).
    #[cfg(any(feature = "preview", test))]
    pub const ALL: [Jitter; 4] = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ];

    /// The word used in `--jitter` and in JSON logs.
    pub fn name(self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
        }
    }

    /// How a text log line names it: "full jitter", "no jitter".
    pub fn label(self) -> &'static str {
        match self {
            Jitter::None => "no jitter",
            Jitter::Full => "full jitter",
            Jitter::Equal => "equal jitter",
            Jitter::Decorrelated => "decorrelated jitter",
        }
    }
}

/// `--throttle-base` unless given: the base of a throttled failure's sleep
/// (the server asked to slow down). Chosen in docs/simulation.md. The one
/// value of the default: `--throttle-base`'s help says it, held to this by
/// a test (no clap default, so start-up parses nothing for it), and the
/// docs send the reader to `retry --help`.
pub const DEFAULT_THROTTLE_BASE: Duration = Duration::from_secs(10);

/// The parameters of a backoff schedule, validated by `config`
/// (`cap >= base`, `factor >= 1` and finite).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    pub jitter: Jitter,
    pub base: Duration,
    pub cap: Duration,
    pub factor: f64,
}

/// What `--jitter`, `--base`, `--cap`, `--factor` and `--max-attempts`
/// make of a run or a plan: how it retries, its sleeps and how many
/// attempts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Retries {
    pub backoff: Backoff,
    pub attempts: crate::policy::Attempts,
    /// `--throttle-base`: a throttled failure's sleep is drawn on it, with
    /// the backoff's cap, factor and jitter (`Schedule`).
    pub throttle_base: Duration,
}

/// One computed sleep and the upper bound it was drawn under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sleep {
    pub duration: Duration,
    pub ceiling: Duration,
}

impl Backoff {
    /// `min(cap, base * factor^n)`, saturating at `cap` for any `n`.
    pub fn exponential(&self, n: u32) -> Duration {
        if self.base.is_zero() {
            return Duration::ZERO;
        }
        // factor^n overflows to +inf for large n; min() then yields the cap.
        let secs = self.base.as_secs_f64() * self.factor.powf(f64::from(n));
        self.clamp(secs)
    }

    /// The sleep after retry number `n`, given the previous sleep (only
    /// decorrelated jitter looks at it; pass `base` before the first).
    pub fn sleep(&self, n: u32, previous: Duration, rng: &mut impl Rng) -> Sleep {
        match self.jitter {
            Jitter::None => {
                let ceiling = self.exponential(n);
                Sleep {
                    duration: ceiling,
                    ceiling,
                }
            }
            Jitter::Full => {
                let ceiling = self.exponential(n);
                let duration = self.clamp(ceiling.as_secs_f64() * unit(rng)).min(ceiling);
                Sleep { duration, ceiling }
            }
            Jitter::Equal => {
                let ceiling = self.exponential(n);
                let half = ceiling.as_secs_f64() / 2.0;
                let duration = self.clamp(half + half * unit(rng)).min(ceiling);
                Sleep { duration, ceiling }
            }
            Jitter::Decorrelated => {
                let low = self.base.as_secs_f64();
                let high = (previous.as_secs_f64() * 3.0).max(low);
                let ceiling = self.clamp(high);
                let duration = self.clamp(low + (high - low) * unit(rng));
                Sleep { duration, ceiling }
            }
        }
    }

    /// Seconds to a Duration no larger than the cap (never panics on inf/NaN).
    fn clamp(&self, secs: f64) -> Duration {
        if secs.is_nan() || secs <= 0.0 {
            return Duration::ZERO;
        }
        Duration::try_from_secs_f64(secs.min(self.cap.as_secs_f64()))
            .unwrap_or(self.cap)
            .min(self.cap)
    }
}

/// The generator of a run and of `--plan`: the same seed gives both the same
/// sleeps. Without a seed it is seeded from the OS.
pub fn rng(seed: Option<u64>) -> rand_chacha::ChaCha8Rng {
    use rand::SeedableRng;
    match seed {
        Some(seed) => rand_chacha::ChaCha8Rng::seed_from_u64(seed),
        None => rand::make_rng(),
    }
}

/// A uniform draw from [0, 1): the jitter's (and, sent to its script, the
/// draw `--breaker`'s Redis store jitters a cooldown with).
pub fn unit(rng: &mut impl Rng) -> f64 {
    rng.random::<f64>()
}

/// The running state of one client's schedule: which retry comes next and
/// the previous sleep. A real run and `--plan` both step through this.
///
/// A run has two bases, `--base` for a transient failure's sleep and
/// `--throttle-base` for a throttled one's (the server asked to slow
/// down), and one schedule: the same cap, factor and jitter, the same
/// count of retries (`n`, whatever their classes: the third retry's
/// ceiling is `base × factor²` on either base) and the same previous sleep
/// (decorrelated jitter draws from [base, previous × 3] on the failure's
/// own base, the first sleep's previous being that base: a throttle after
/// transient failures starts at least at the throttle base, and a
/// transient failure after throttles carries their longer sleeps forward
/// in its upper bound, as one client backing off from one server should).
/// A run whose every failure is of one class sleeps as the plain schedule
/// of that class's base (`--plan` shows both).
#[derive(Clone, Debug)]
pub struct Schedule {
    backoff: Backoff,
    /// `--throttle-base`; `None` draws a throttled failure's sleep on the
    /// base too.
    throttle_base: Option<Duration>,
    retries: u32,
    /// The last sleep drawn; `None` before the first (then the base of
    /// the failure's class stands for it).
    previous: Option<Duration>,
}

impl Schedule {
    pub fn new(backoff: Backoff) -> Self {
        Self {
            backoff,
            throttle_base: None,
            retries: 0,
            previous: None,
        }
    }

    /// A schedule whose throttled failures' sleeps are drawn on `base`.
    pub fn with_throttle_base(backoff: Backoff, base: Duration) -> Self {
        Self {
            throttle_base: Some(base),
            ..Self::new(backoff)
        }
    }

    /// The next sleep after a transient failure (`--plan` and `--simulate`
    /// draw whole schedules of one class).
    #[cfg(any(feature = "preview", test))]
    pub fn next_sleep(&mut self, rng: &mut impl Rng) -> Sleep {
        self.next_sleep_for(rng, false)
    }

    /// The next sleep after a failure, throttled or not: on its own base.
    pub fn next_sleep_for(&mut self, rng: &mut impl Rng, throttled: bool) -> Sleep {
        let backoff = match self.throttle_base {
            Some(base) if throttled => Backoff {
                base,
                ..self.backoff
            },
            _ => self.backoff,
        };
        let previous = self.previous.unwrap_or(backoff.base);
        let sleep = backoff.sleep(self.retries, previous, rng);
        self.retries = self.retries.saturating_add(1);
        self.previous = Some(sleep.duration);
        sleep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    const MS: Duration = Duration::from_millis(1);

    fn backoff(jitter: Jitter, base_ms: u64, cap_ms: u64, factor: f64) -> Backoff {
        Backoff {
            jitter,
            base: MS * base_ms as u32,
            cap: MS * cap_ms as u32,
            factor,
        }
    }

    fn rng() -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(7)
    }

    #[test]
    fn none_doubles_until_the_cap() {
        let b = backoff(Jitter::None, 100, 1000, 2.0);
        let sleeps: Vec<u128> = (0..6)
            .map(|n| b.sleep(n, b.base, &mut rng()).duration.as_millis())
            .collect();
        assert_eq!(sleeps, [100, 200, 400, 800, 1000, 1000]);
    }

    #[test]
    fn factor_one_is_constant() {
        let b = backoff(Jitter::None, 250, 10_000, 1.0);
        assert!((0..50).all(|n| b.exponential(n) == MS * 250));
    }

    #[test]
    fn large_n_saturates_at_cap_without_panic() {
        let year = Duration::from_secs(365 * 86_400);
        for jitter in Jitter::ALL {
            let b = Backoff {
                jitter,
                base: Duration::from_secs(1),
                cap: year * 100,
                factor: 2.0,
            };
            let sleep = b.sleep(10_000, b.cap, &mut rng());
            assert_eq!(sleep.ceiling, b.cap, "{jitter:?}");
            assert!(sleep.duration <= b.cap);
            let huge = Backoff {
                factor: f64::MAX,
                ..b
            };
            assert_eq!(huge.exponential(u32::MAX), b.cap);
        }
    }

    #[test]
    fn zero_base_sleeps_zero() {
        for jitter in Jitter::ALL {
            let b = Backoff {
                jitter,
                base: Duration::ZERO,
                cap: MS * 1000,
                factor: 2.0,
            };
            assert_eq!(
                b.sleep(10_000, Duration::ZERO, &mut rng()).duration,
                Duration::ZERO
            );
        }
    }

    #[test]
    fn decorrelated_grows_from_previous_sleep() {
        let b = backoff(Jitter::Decorrelated, 10, 100_000, 2.0);
        let sleep = b.sleep(0, MS * 10, &mut rng());
        assert_eq!(sleep.ceiling, MS * 30);
        assert!(sleep.duration >= MS * 10 && sleep.duration <= MS * 30);
        let later = b.sleep(0, MS * 1000, &mut rng());
        assert_eq!(later.ceiling, MS * 3000);
    }

    #[test]
    fn schedule_steps_n_and_previous() {
        let b = backoff(Jitter::None, 1, 1_000_000, 3.0);
        let mut schedule = Schedule::new(b);
        let ms: Vec<u128> = (0..4)
            .map(|_| schedule.next_sleep(&mut rng()).duration.as_millis())
            .collect();
        assert_eq!(ms, [1, 3, 9, 27]);
    }

    #[test]
    fn each_class_draws_on_its_own_base_with_one_count_of_retries() {
        let b = backoff(Jitter::None, 100, 10_000, 2.0);
        let mut schedule = Schedule::with_throttle_base(b, MS * 1000);
        // (throttled, the sleep): n counts every retry, whatever its class.
        let rows = [
            (false, 100),
            (true, 2000),
            (false, 400),
            (true, 8000),
            (true, 10_000),
            (false, 3200),
        ];
        for (i, (throttled, want)) in rows.into_iter().enumerate() {
            let sleep = schedule.next_sleep_for(&mut rng(), throttled);
            assert_eq!(sleep.duration.as_millis(), want, "retry {i}");
        }
        // Without a throttle base, a throttled failure draws on the base.
        let mut plain = Schedule::new(b);
        let sleep = plain.next_sleep_for(&mut rng(), true);
        assert_eq!(sleep.duration, MS * 100);
    }

    #[test]
    fn jittered_draws_stay_under_their_own_bases_ceiling() {
        for jitter in [Jitter::Full, Jitter::Equal] {
            let b = backoff(jitter, 100, 60_000, 2.0);
            let mut r = ChaCha8Rng::seed_from_u64(52);
            for n in 0..6u32 {
                for throttled in [false, true] {
                    let mut schedule = Schedule::with_throttle_base(b, MS * 5000);
                    for _ in 0..n {
                        schedule.next_sleep_for(&mut r, false);
                    }
                    let sleep = schedule.next_sleep_for(&mut r, throttled);
                    let base = if throttled { 5000 } else { 100 };
                    let ceiling = (base << n).min(60_000);
                    assert_eq!(sleep.ceiling, MS * ceiling, "{jitter:?} n {n}");
                    let floor = if jitter == Jitter::Equal {
                        ceiling / 2
                    } else {
                        0
                    };
                    assert!(
                        sleep.duration >= MS * floor && sleep.duration <= sleep.ceiling,
                        "{jitter:?} n {n} {sleep:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn decorrelated_bases_share_the_previous_sleep() {
        let b = backoff(Jitter::Decorrelated, 100, 60_000, 2.0);
        let mut r = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200 {
            let mut schedule = Schedule::with_throttle_base(b, MS * 5000);
            // A throttle first: from [5 s, 15 s], as a plain schedule on 5 s.
            let throttled = schedule.next_sleep_for(&mut r, true);
            assert_eq!(throttled.ceiling, MS * 15_000);
            assert!(throttled.duration >= MS * 5000, "{throttled:?}");
            // Then a transient failure: from its own base up to 3 × that.
            let transient = schedule.next_sleep_for(&mut r, false);
            assert_eq!(transient.ceiling, (throttled.duration * 3).min(MS * 60_000));
            assert!(transient.duration >= MS * 100 && transient.duration <= transient.ceiling);
            // And a throttle again: at least its base, whatever came before.
            let again = schedule.next_sleep_for(&mut r, true);
            assert!(again.duration >= MS * 5000, "{again:?}");
            let high = (transient.duration * 3).max(MS * 5000).min(MS * 60_000);
            assert!(again.duration <= high, "{again:?} above {high:?}");
        }
    }

    #[test]
    fn one_class_throughout_is_the_plain_schedule_of_its_base() {
        for jitter in Jitter::ALL {
            let b = backoff(jitter, 100, 30_000, 2.0);
            let throttled = Backoff {
                base: MS * 2000,
                ..b
            };
            let (mut r1, mut r2) = (ChaCha8Rng::seed_from_u64(3), ChaCha8Rng::seed_from_u64(3));
            let mut both = Schedule::with_throttle_base(b, MS * 2000);
            let mut plain = Schedule::new(throttled);
            for _ in 0..8 {
                assert_eq!(
                    both.next_sleep_for(&mut r1, true),
                    plain.next_sleep(&mut r2),
                    "{jitter:?}"
                );
            }
        }
    }

    #[test]
    fn seeded_schedules_repeat() {
        let b = backoff(Jitter::Full, 100, 10_000, 2.0);
        let draw = || {
            let mut r = rng();
            let mut s = Schedule::new(b);
            (0..10)
                .map(|_| s.next_sleep(&mut r).duration)
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(), draw());
    }

    /// Kolmogorov-Smirnov distance of `samples` (in [0,1]) from U(0,1).
    fn ks_distance(mut samples: Vec<f64>) -> f64 {
        samples.sort_by(f64::total_cmp);
        let n = samples.len() as f64;
        samples
            .iter()
            .enumerate()
            .map(|(i, &x)| (x - i as f64 / n).abs().max(((i + 1) as f64 / n - x).abs()))
            .fold(0.0, f64::max)
    }

    /// The KS critical value at alpha = 0.001 is 1.95 / sqrt(n).
    fn assert_uniform(jitter: Jitter, low_fraction: f64) {
        let b = backoff(jitter, 1000, 1000, 2.0);
        let mut r = ChaCha8Rng::seed_from_u64(2015);
        let n = 20_000;
        let ceiling = b.exponential(0).as_secs_f64();
        let low = ceiling * low_fraction;
        let samples: Vec<f64> = (0..n)
            .map(|_| (b.sleep(0, b.base, &mut r).duration.as_secs_f64() - low) / (ceiling - low))
            .collect();
        assert!(
            samples.iter().all(|x| (0.0..=1.0).contains(x)),
            "{jitter:?} out of range"
        );
        let d = ks_distance(samples);
        assert!(d < 1.95 / (n as f64).sqrt(), "{jitter:?}: KS distance {d}");
    }

    #[test]
    fn full_jitter_is_uniform_on_zero_to_ceiling() {
        assert_uniform(Jitter::Full, 0.0);
    }

    #[test]
    fn equal_jitter_is_uniform_on_upper_half() {
        assert_uniform(Jitter::Equal, 0.5);
    }

    #[test]
    fn ks_test_rejects_a_skewed_sample() {
        // The check above must be able to fail: squared uniforms are not uniform.
        let mut r = ChaCha8Rng::seed_from_u64(1);
        let skewed: Vec<f64> = (0..20_000).map(|_| unit(&mut r).powi(2)).collect();
        assert!(ks_distance(skewed) > 1.95 / (20_000f64).sqrt());
    }

    fn any_jitter() -> impl Strategy<Value = Jitter> {
        prop_oneof![
            Just(Jitter::None),
            Just(Jitter::Full),
            Just(Jitter::Equal),
            Just(Jitter::Decorrelated)
        ]
    }

    proptest! {
        #[test]
        fn every_strategy_stays_in_bounds(
            jitter in any_jitter(),
            base_ns in 0u64..10_000_000_000,
            extra_ns in 0u64..u64::MAX / 4,
            factor in 1.0f64..1000.0,
            n in 0u32..20_000,
            prev_ns in 0u64..u64::MAX / 4,
            seed in any::<u64>(),
        ) {
            let base = Duration::from_nanos(base_ns);
            let cap = base + Duration::from_nanos(extra_ns);
            let b = Backoff { jitter, base, cap, factor };
            let previous = Duration::from_nanos(prev_ns).clamp(base, cap);
            let mut r = ChaCha8Rng::seed_from_u64(seed);
            let sleep = b.sleep(n, previous, &mut r);
            prop_assert!(sleep.duration <= sleep.ceiling && sleep.ceiling <= cap);
            let exp = b.exponential(n);
            match jitter {
                Jitter::None => prop_assert_eq!(sleep.duration, exp),
                Jitter::Full => prop_assert_eq!(sleep.ceiling, exp),
                Jitter::Equal => {
                    prop_assert_eq!(sleep.ceiling, exp);
                    prop_assert!(sleep.duration.as_secs_f64() >= exp.as_secs_f64() / 2.0 * (1.0 - 1e-9));
                }
                Jitter::Decorrelated => prop_assert!(sleep.duration >= base.min(cap)),
            }
        }

        #[test]
        fn exponential_never_shrinks(
            base_ms in 0u64..1000, cap_extra in 0u64..1_000_000, factor in 1.0f64..10.0, n in 0u32..5000,
        ) {
            let b = Backoff {
                jitter: Jitter::None,
                base: Duration::from_millis(base_ms),
                cap: Duration::from_millis(base_ms + cap_extra),
                factor,
            };
            prop_assert!(b.exponential(n) <= b.exponential(n + 1));
        }
    }
}
