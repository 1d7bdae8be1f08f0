//! The circuit breaker as the outage scenario models it: the rules of
//! `--breaker` (`state/breaker/machine.rs`, whose parameters and jittered
//! cooldowns it uses) on a simulated clock in milliseconds, with numbered
//! leases (docs/behaviour.md, "A circuit breaker").
//!
//! ```text
//! closed ──N counted failures in a row──> open ──cooldown over──> probing (one run, under a lease)
//!   ^                                      ^                         │
//!   └───────── any success ────────────────┼──── probe succeeded ────┤
//!                                          └──── probe failed: cooldown_{k+1}
//! ```
//!
//! Cooldown k (k = 0 when it opens, one more after each failed probe) is
//! the project's equal jitter of `min(cap, cooldown * 2^k)`: between half
//! that and all of it, never 0, each one no shorter than the last, and
//! the circuits of many hosts that opened together do not probe together.

use rand::Rng;

pub use crate::state::breaker::machine::Params;

/// Cooldown number `k`, in ms: the breaker's own draw.
fn cooldown_ms(params: &Params, k: u32, rng: &mut impl Rng) -> f64 {
    params.cooldown(k, rng).as_secs_f64() * 1e3
}

/// What a run that starts may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    Run,
    /// The probe: it holds lease number `.0` until it ends.
    Probe(u32),
    /// The circuit is open, or another run probes: the command does not
    /// start (exit 75, EX_TEMPFAIL).
    Skip,
}

/// How a run ended, as the breaker counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Succeeded,
    /// Gave up after a transient failure: attempts or time ran out, or
    /// the budget refused the retry.
    Failed,
    /// A fatal code, a usage error, a signal from the caller: neither
    /// (never in the scenario, where every failure is transient).
    #[cfg_attr(not(test), allow(dead_code))]
    Neither,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    Closed,
    Open {
        until_ms: f64,
    },
    /// A probe holds lease `lease`.
    Probing {
        lease: u32,
    },
}

/// One circuit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Breaker {
    state: State,
    /// Counted failures in a row.
    failures: u32,
    /// Failed probes since the circuit opened (k of the cooldown).
    level: u32,
    /// The last lease handed out; leases are numbered from 1.
    leases: u32,
}

impl Default for Breaker {
    fn default() -> Self {
        Breaker {
            state: State::Closed,
            failures: 0,
            level: 0,
            leases: 0,
        }
    }
}

impl Breaker {
    pub fn admit(&mut self, now_ms: f64) -> Admit {
        match self.state {
            State::Closed => Admit::Run,
            State::Open { until_ms } if now_ms >= until_ms => {
                self.leases = self.leases.wrapping_add(1).max(1);
                self.state = State::Probing { lease: self.leases };
                Admit::Probe(self.leases)
            }
            State::Open { .. } | State::Probing { .. } => Admit::Skip,
        }
    }

    /// A run ended at `now_ms`; `lease` is its probe's lease (0: no probe).
    pub fn finish(
        &mut self,
        params: &Params,
        now_ms: f64,
        ended: Ended,
        lease: u32,
        rng: &mut impl Rng,
    ) {
        let probing = lease != 0 && self.state == State::Probing { lease };
        match ended {
            Ended::Succeeded => {
                *self = Breaker {
                    leases: self.leases,
                    ..Breaker::default()
                }
            }
            Ended::Failed if probing => {
                self.failures = self.failures.saturating_add(1);
                self.level = self.level.saturating_add(1);
                let until_ms = now_ms + cooldown_ms(params, self.level, rng);
                self.state = State::Open { until_ms };
            }
            Ended::Failed => {
                self.failures = self.failures.saturating_add(1);
                if self.state == State::Closed && self.failures >= params.after {
                    self.level = 0;
                    let until_ms = now_ms + cooldown_ms(params, 0, rng);
                    self.state = State::Open { until_ms };
                }
            }
            // The lease goes back: the next run may probe at once.
            Ended::Neither if probing => self.state = State::Open { until_ms: now_ms },
            Ended::Neither => {}
        }
    }

    #[cfg(test)]
    fn open_until(&self) -> Option<f64> {
        match self.state {
            State::Open { until_ms } => Some(until_ms),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::breaker::machine::cap;
    use std::time::Duration;

    const P: Params = Params {
        after: 3,
        cooldown: Duration::from_secs(60),
    };

    fn failed(b: &mut Breaker, now: f64, lease: u32, rng: &mut impl Rng) {
        b.finish(&P, now, Ended::Failed, lease, rng);
    }

    #[test]
    fn opens_after_n_counted_failures_in_a_row_and_skips_while_open() {
        let mut rng = crate::strategy::rng(Some(1));
        let mut b = Breaker::default();
        for now in [0.0, 1.0] {
            assert_eq!(b.admit(now), Admit::Run);
            failed(&mut b, now, 0, &mut rng);
        }
        // A success in between starts the count again.
        b.finish(&P, 2.0, Ended::Succeeded, 0, &mut rng);
        // Neither kind of end counts.
        b.finish(&P, 2.5, Ended::Neither, 0, &mut rng);
        for now in [3.0, 4.0] {
            failed(&mut b, now, 0, &mut rng);
            assert_eq!(b.admit(now), Admit::Run);
        }
        failed(&mut b, 5.0, 0, &mut rng);
        let until = b.open_until().expect("open after 3");
        // The first cooldown: equal jitter of 60 s, from the failure.
        assert!(
            (5.0 + 30_000.0..=5.0 + 60_000.0).contains(&until),
            "{until}"
        );
        assert_eq!(b.admit(until - 1.0), Admit::Skip);
        // Failures of runs still going while it is open change nothing.
        failed(&mut b, 6.0, 0, &mut rng);
        assert_eq!(b.open_until(), Some(until));
    }

    #[test]
    fn one_probe_per_circuit_and_its_success_closes_it() {
        let mut rng = crate::strategy::rng(Some(2));
        let mut b = Breaker::default();
        for now in 0..3 {
            failed(&mut b, f64::from(now), 0, &mut rng);
        }
        let until = b.open_until().unwrap();
        let Admit::Probe(lease) = b.admit(until) else {
            panic!("no probe")
        };
        for later in [until, until + 1.0, until + 1e9] {
            assert_eq!(b.admit(later), Admit::Skip);
        }
        b.finish(&P, until + 5.0, Ended::Succeeded, lease, &mut rng);
        assert_eq!(b.admit(until + 6.0), Admit::Run);
        // Closed with the count at 0 and the cooldown back at its first.
        assert_eq!(
            b,
            Breaker {
                leases: lease,
                ..Breaker::default()
            }
        );
    }

    #[test]
    fn a_failed_probe_lengthens_the_cooldown_within_its_bounds() {
        let cooldown = 60_000.0;
        let cap_ms = cap(P.cooldown).as_secs_f64() * 1e3;
        assert_eq!(cap_ms, 8.0 * cooldown);
        for seed in 0..50 {
            let mut rng = crate::strategy::rng(Some(seed));
            let mut b = Breaker::default();
            for now in 0..3 {
                failed(&mut b, f64::from(now), 0, &mut rng);
            }
            let mut now = 2.0;
            let mut previous = b.open_until().unwrap() - now;
            let mut draws = Vec::new();
            for k in 1..8 {
                now = b.open_until().unwrap();
                let Admit::Probe(lease) = b.admit(now) else {
                    panic!("no probe")
                };
                failed(&mut b, now, lease, &mut rng);
                let wait = b.open_until().unwrap() - now;
                let ceiling = (cooldown * 2f64.powi(k)).min(cap_ms);
                assert!(
                    (ceiling / 2.0..=ceiling).contains(&wait),
                    "seed {seed} k {k}: {wait}"
                );
                if ceiling < cap_ms {
                    assert!(wait >= previous, "seed {seed} k {k}: {wait} < {previous}");
                }
                previous = wait;
                draws.push(wait);
            }
            // Jittered: the capped ones are not all equal.
            assert!(draws[4..].windows(2).any(|w| w[0] != w[1]), "{draws:?}");
        }
        // A cooldown over an hour is its own cap.
        let long = Duration::from_secs(7200);
        assert_eq!(cap(long), long);
        assert_eq!(cap(Duration::from_secs(600)), Duration::from_secs(3600));
    }

    #[test]
    fn a_stale_probe_does_not_decide_and_a_probe_ending_neither_way_frees_the_lease() {
        let mut rng = crate::strategy::rng(Some(3));
        let mut b = Breaker::default();
        for now in 0..3 {
            failed(&mut b, f64::from(now), 0, &mut rng);
        }
        let until = b.open_until().unwrap();
        let Admit::Probe(first) = b.admit(until) else {
            panic!("no probe")
        };
        // Another run's success closes the circuit under the probe...
        b.finish(&P, until + 1.0, Ended::Succeeded, 0, &mut rng);
        // ...whose failure then counts as one failure of a closed circuit.
        failed(&mut b, until + 2.0, first, &mut rng);
        assert_eq!(b.admit(until + 3.0), Admit::Run);
        for now in 0..2 {
            failed(&mut b, until + 4.0 + f64::from(now), 0, &mut rng);
        }
        let again = b.open_until().expect("open again after 3 in a row");
        let Admit::Probe(second) = b.admit(again) else {
            panic!("no probe")
        };
        assert_ne!(first, second);
        b.finish(&P, again + 1.0, Ended::Neither, second, &mut rng);
        assert!(matches!(b.admit(again + 1.0), Admit::Probe(third) if third != second));
    }
}
