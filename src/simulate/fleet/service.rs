//! The service the fleet's runs send to: down from 0 until the outage ends
//! (every request fails at once, as a refused connection does), then
//! admitting at most `capacity` requests in each window (a second unless
//! the throttle model's `--capacity-window` says otherwise) counted from
//! the recovery. The rest of each window's are refused at once: as a 503 (a
//! transient failure: the outage model) or as a 429 (a throttle: the
//! throttle model), with or without a Retry-After hint. Of the requests it
//! admits, a share fails transiently (a 500), as a backend does whatever
//! its load. It also keeps the loads the tables report: the requests during
//! the outage, each second's in the first minute after it, and the
//! answers to those that arrived before the span's end.

use rand::Rng;

/// Seconds after the recovery whose load the table reports.
pub const FIRST_MINUTE: usize = 60;

/// The service's rules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    /// Down from 0 for this long (ms).
    pub outage_ms: f64,
    /// Requests admitted in each window after it.
    pub capacity: u32,
    /// The limiter's window (ms): 1000 but in the throttle model's live
    /// bench, whose time is scaled down (bench/throttle-live/).
    pub window_ms: f64,
    /// How it refuses the rest of a window's.
    pub overload: Overload,
    /// The share of admitted requests that fail transiently, in [0, 1).
    pub error_rate: f64,
    /// The answers to requests that arrive before this (ms) are counted.
    pub span_ms: f64,
}

/// How a request past the capacity is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overload {
    /// A 503 without a hint: a transient failure.
    Unavailable,
    /// A 429 (throttled), with `Retry-After` (`hint`) or without.
    Throttle { hint: bool },
}

/// A failed request, as the client reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Failure {
    /// The server asked to slow down (429), or failed transiently.
    pub throttled: bool,
    /// The wait it asked for, in ms (0: no hint).
    pub hint_ms: f32,
}

impl Failure {
    pub const TRANSIENT: Failure = Failure {
        throttled: false,
        hint_ms: 0.0,
    };
    pub const THROTTLED: Failure = Failure {
        throttled: true,
        hint_ms: 0.0,
    };
}

/// The answers to requests that arrived before the span's end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Answers {
    pub served: u64,
    /// Past the capacity (429s, or 503s after an outage).
    pub refused: u64,
    /// Admitted, then failed transiently (500s).
    pub errors: u64,
}

pub struct Service {
    spec: Spec,
    /// The window counted from the recovery, and its requests
    /// so far (admitted or not).
    window: u64,
    in_window: u32,
    /// Requests that arrived while the service was down.
    pub during_outage: u64,
    /// Requests in each second of the first minute after the recovery.
    first_minute: [u32; FIRST_MINUTE],
    pub answers: Answers,
}

impl Service {
    pub fn new(spec: Spec) -> Self {
        Service {
            spec,
            window: 0,
            in_window: 0,
            during_outage: 0,
            first_minute: [0; FIRST_MINUTE],
            answers: Answers::default(),
        }
    }

    /// A request arriving at `at_ms` (never earlier than the one before):
    /// `None` if it is served, else how it failed. `rng` decides an
    /// admitted request's transient failure, and is drawn from only when
    /// some fail.
    pub fn answer(&mut self, at_ms: f64, rng: &mut impl Rng) -> Option<Failure> {
        if at_ms < self.spec.outage_ms {
            self.during_outage += 1;
            return Some(Failure::TRANSIENT);
        }
        // Whole windows since the recovery (saturating cast: never negative).
        let since = (at_ms - self.spec.outage_ms) / self.spec.window_ms;
        let window = since as u64;
        if window != self.window {
            self.window = window;
            self.in_window = 0;
        }
        self.in_window = self.in_window.saturating_add(1);
        let second = ((at_ms - self.spec.outage_ms) / 1e3) as usize;
        if let Some(count) = self.first_minute.get_mut(second) {
            *count += 1;
        }
        let counted = at_ms < self.spec.span_ms;
        let count = |n: &mut u64| *n += u64::from(counted);
        if self.in_window > self.spec.capacity {
            count(&mut self.answers.refused);
            return Some(match self.spec.overload {
                Overload::Unavailable => Failure::TRANSIENT,
                // Retry-After in whole seconds, as HTTP has it: until the
                // window ends and the capacity frees, rounded up.
                Overload::Throttle { hint } => Failure {
                    throttled: true,
                    hint_ms: match hint {
                        true => {
                            // Windows left times a window's seconds: exactly
                            // the windows left when a window is 1 s.
                            let left_s =
                                ((window + 1) as f64 - since) * (self.spec.window_ms / 1e3);
                            left_s.ceil() as f32 * 1e3
                        }
                        false => 0.0,
                    },
                },
            });
        }
        if self.spec.error_rate > 0.0 && crate::strategy::unit(rng) < self.spec.error_rate {
            count(&mut self.answers.errors);
            return Some(Failure::TRANSIENT);
        }
        count(&mut self.answers.served);
        None
    }

    /// The most requests that arrived in one second of the first minute
    /// after the recovery.
    pub fn peak_first_minute(&self) -> u32 {
        self.first_minute.iter().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(outage_ms: f64, capacity: u32, overload: Overload) -> Spec {
        Spec {
            outage_ms,
            capacity,
            window_ms: 1000.0,
            overload,
            error_rate: 0.0,
            span_ms: f64::INFINITY,
        }
    }

    fn served(service: &mut Service, at: f64) -> bool {
        service
            .answer(at, &mut crate::strategy::rng(Some(1)))
            .is_none()
    }

    #[test]
    fn down_until_the_outage_ends_then_capacity_per_second() {
        let mut service = Service::new(spec(10_000.0, 3, Overload::Unavailable));
        for at in [0.0, 5_000.0, 9_999.9] {
            assert!(!served(&mut service, at));
        }
        assert_eq!(service.during_outage, 3);
        // The first second after the recovery serves three of five.
        let first: Vec<bool> = [10_000.0, 10_100.0, 10_200.0, 10_300.0, 10_999.0]
            .into_iter()
            .map(|at| served(&mut service, at))
            .collect();
        assert_eq!(first, [true, true, true, false, false]);
        // A new second, a new count.
        assert!(served(&mut service, 11_000.0));
        // A quiet second in between changes nothing.
        for at in [13_500.0, 13_600.0, 13_700.0] {
            assert!(served(&mut service, at));
        }
        assert!(!served(&mut service, 13_800.0));
        assert_eq!(service.during_outage, 3);
        assert_eq!(service.peak_first_minute(), 5);
        let answers = service.answers;
        assert_eq!((answers.served, answers.refused, answers.errors), (7, 3, 0));
    }

    #[test]
    fn the_peak_counts_only_the_first_minute() {
        let mut service = Service::new(spec(0.0, 1, Overload::Unavailable));
        for i in 0..4 {
            served(&mut service, 60_000.0 + f64::from(i));
        }
        assert_eq!(service.peak_first_minute(), 0);
        served(&mut service, 61_000.0);
        let mut late = Service::new(spec(0.0, 1, Overload::Unavailable));
        served(&mut late, 59_999.0);
        served(&mut late, 59_999.5);
        assert_eq!(late.peak_first_minute(), 2);
        // No outage: nothing counted as during one.
        assert_eq!(late.during_outage, 0);
    }

    #[test]
    fn past_its_capacity_a_throttling_service_answers_429_with_or_without_a_hint() {
        let mut rng = crate::strategy::rng(Some(1));
        for hint in [false, true] {
            let mut service = Service::new(spec(0.0, 2, Overload::Throttle { hint }));
            assert_eq!(service.answer(100.0, &mut rng), None);
            assert_eq!(service.answer(200.0, &mut rng), None);
            let refused = service.answer(250.0, &mut rng).unwrap();
            assert!(refused.throttled);
            // Retry-After: 1, the capacity frees at the next second; whole
            // seconds, so late in the second it still says 1.
            let want = if hint { 1000.0 } else { 0.0 };
            assert_eq!(refused.hint_ms, want);
            assert_eq!(service.answer(999.9, &mut rng).unwrap().hint_ms, want);
            assert_eq!(service.answer(1000.0, &mut rng), None);
            assert_eq!(service.answers.refused, 2);
        }
        // An outage's refusals and a 503 past the capacity are transient.
        let mut service = Service::new(spec(1000.0, 1, Overload::Unavailable));
        assert_eq!(service.answer(10.0, &mut rng), Some(Failure::TRANSIENT));
        assert_eq!(service.answer(1000.0, &mut rng), None);
        assert_eq!(service.answer(1001.0, &mut rng), Some(Failure::TRANSIENT));
    }

    #[test]
    fn a_share_of_the_admitted_requests_fail_transiently_and_use_the_capacity() {
        let mut rng = crate::strategy::rng(Some(3));
        let mut service = Service::new(Spec {
            error_rate: 0.1,
            ..spec(0.0, 1000, Overload::Throttle { hint: false })
        });
        let failed: Vec<Option<Failure>> = (0..10_000)
            .map(|i| service.answer(f64::from(i), &mut rng))
            .collect();
        let errors = failed.iter().flatten().count();
        assert!((800..1200).contains(&errors), "{errors}");
        assert!(failed.iter().flatten().all(|f| *f == Failure::TRANSIENT));
        assert_eq!(service.answers.errors, errors as u64);
        // Ten seconds of 1000 requests each, errors included, fill the
        // capacity: one more in the last second is throttled.
        assert_eq!(
            service.answer(9_999.5, &mut rng).map(|f| f.throttled),
            Some(true)
        );
    }

    #[test]
    fn a_shorter_window_admits_its_capacity_in_each_of_its_own() {
        let mut rng = crate::strategy::rng(Some(1));
        let mut service = Service::new(Spec {
            window_ms: 250.0,
            ..spec(0.0, 2, Overload::Throttle { hint: true })
        });
        let served: Vec<bool> = [0.0, 10.0, 200.0, 250.0, 251.0, 499.0, 500.0]
            .into_iter()
            .map(|at| service.answer(at, &mut rng).is_none())
            .collect();
        assert_eq!(served, [true, true, false, true, true, false, true]);
        assert!(service.answer(700.0, &mut rng).is_none());
        // Retry-After stays in whole seconds: 1 s for the 40 ms left.
        let refused = service.answer(710.0, &mut rng);
        assert_eq!(service.answer(720.0, &mut rng), refused);
        assert_eq!(refused.map(|f| f.hint_ms), Some(1000.0));
        // The first minute's load is still counted by the second.
        assert_eq!(service.peak_first_minute(), 10);
    }

    #[test]
    fn only_answers_to_requests_before_the_span_end_are_counted() {
        let mut service = Service::new(Spec {
            span_ms: 1500.0,
            ..spec(0.0, 1, Overload::Throttle { hint: false })
        });
        for at in [0.0, 1.0, 1000.0, 1499.0, 1500.0, 2000.0] {
            served(&mut service, at);
        }
        let answers = service.answers;
        assert_eq!((answers.served, answers.refused), (2, 2));
    }
}
