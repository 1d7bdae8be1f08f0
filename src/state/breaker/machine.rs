//! The circuit's rules, pure: the time (nanoseconds since the epoch, on the
//! host's clock or the Redis server's) and the randomness are parameters,
//! so every rule is a plain unit test. `breaker.lua` applies the same
//! rules in Redis.
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
//! that and all of it, so the circuits of many hosts that opened together
//! do not probe together.

use std::time::Duration;

use rand::Rng;

use crate::strategy::{Backoff, Jitter};

/// `--breaker-after`, `--breaker-cooldown` and `--breaker-cooldown-max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub after: u32,
    pub cooldown: Duration,
    /// The longest cooldown a failed probe grows it to (`cap` keeps it no
    /// shorter than the first).
    pub max: Duration,
}

/// The longest cooldown taken as possible for any circuit's record,
/// whatever its runs were given (`horizon`), unless a cap is longer.
pub const LONGEST_CAP: Duration = Duration::from_secs(3600);

/// How far ahead of now a time in a circuit's record can lie when a run
/// on this clock wrote it: the longest cooldown (an open circuit's end),
/// then a probe's whole lease (`lease`, ns). The runs of one circuit may
/// be given other cooldowns (a cron job's `--breaker-cooldown-max 30m`, a
/// run by hand or `--breaker-status` without it): the longest cooldown is
/// taken as at least `LONGEST_CAP`, so a run with a short cap does not cut
/// a longer one's circuit.
pub fn horizon(cap: Duration, lease: u64) -> u64 {
    nanos(cap.max(LONGEST_CAP)).saturating_add(lease)
}

impl Params {
    /// The longest cooldown: `max`, but never shorter than the first. The
    /// last host's wait after a recovery is about this plus one period of
    /// its job (the outage table in docs/simulation.md).
    pub fn cap(&self) -> Duration {
        self.max.max(self.cooldown)
    }

    /// Cooldown number `k`: equal jitter of `min(cap, cooldown * 2^k)`.
    pub fn cooldown(&self, k: u32, rng: &mut impl Rng) -> Duration {
        let backoff = Backoff {
            jitter: Jitter::Equal,
            base: self.cooldown,
            cap: self.cap(),
            factor: 2.0,
        };
        backoff.sleep(k, self.cooldown, rng).duration
    }
}

/// Where the circuit stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum State {
    /// Runs go ahead.
    #[default]
    Closed,
    /// No run starts its command until `until`; then one may probe.
    Open { until: u64 },
    /// A probe holds the lease taken at `lease` (its id) until `until` at
    /// the latest: a probe that crashed holds it no longer.
    Probing { lease: u64, until: u64 },
}

/// One circuit, as its store keeps it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Circuit {
    pub state: State,
    /// Counted failures in a row.
    pub failures: u32,
    /// Failed probes since the circuit opened (k of the cooldown).
    pub level: u32,
    /// The `--breaker-after` of the run that last counted a failure or
    /// opened it (0: not known, as in a record written before it was kept),
    /// so that `--breaker-status` says the threshold the circuit had.
    pub after: u32,
}

/// What a run that starts may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    Run,
    /// The probe: it holds the lease with this id until it ends.
    Probe(u64),
    /// The circuit is open (`probing`: another run probes it): the command
    /// does not start. `until` is when a probe may run.
    Skip {
        until: u64,
        probing: bool,
    },
}

/// How a run ended, as the breaker counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Succeeded,
    /// Gave up after a transient failure: attempts or time ran out, or
    /// the budget refused the retry.
    Failed,
    /// A fatal or not-retryable code, a command that could not start, a
    /// signal from the caller: neither.
    Neither,
}

impl Circuit {
    /// A run starts at `now`; a probe's lease lasts `lease` ns.
    pub fn admit(&mut self, now: u64, lease: u64) -> Admit {
        match self.state {
            State::Closed => Admit::Run,
            State::Open { until } | State::Probing { until, .. } if now >= until => {
                self.state = State::Probing {
                    lease: now,
                    until: now.saturating_add(lease),
                };
                Admit::Probe(now)
            }
            State::Open { until } => Admit::Skip {
                until,
                probing: false,
            },
            State::Probing { until, .. } => Admit::Skip {
                until,
                probing: true,
            },
        }
    }

    /// A time that no run on this clock could have written, an end further
    /// ahead of `now` than `horizon` (ns), is taken for a clock that went
    /// back since (it was ahead when the circuit opened, or the record was
    /// made by hand): the end becomes `now + horizon`, so no record keeps
    /// every run skipped for longer. The end it had, if it changed.
    pub fn clamp(&mut self, now: u64, horizon: u64) -> Option<u64> {
        let most = now.saturating_add(horizon);
        match &mut self.state {
            State::Open { until } | State::Probing { until, .. } if *until > most => {
                Some(std::mem::replace(until, most))
            }
            _ => None,
        }
    }

    /// The store knows the probe's run is gone without telling (a host's
    /// lock the kernel released at its death): the lease goes back at
    /// `now`, as for a probe that ended neither way.
    pub fn prober_gone(&mut self, now: u64) {
        if let State::Probing { .. } = self.state {
            self.state = State::Open { until: now };
        }
    }

    /// A run ended at `now`; `lease` is its probe's, if it probed.
    pub fn finish(
        &mut self,
        params: &Params,
        now: u64,
        ended: Ended,
        lease: Option<u64>,
        rng: &mut impl Rng,
    ) {
        let probing = matches!(
            (self.state, lease),
            (State::Probing { lease: held, .. }, Some(mine)) if held == mine
        );
        let open = |k: u32, rng: &mut _| State::Open {
            until: now.saturating_add(nanos(params.cooldown(k, rng))),
        };
        match ended {
            Ended::Succeeded => *self = Circuit::default(),
            Ended::Failed if probing => {
                self.after = params.after;
                self.failures = self.failures.saturating_add(1);
                self.level = self.level.saturating_add(1);
                self.state = open(self.level, rng);
            }
            Ended::Failed => {
                self.after = params.after;
                self.failures = self.failures.saturating_add(1);
                if self.state == State::Closed && self.failures >= params.after {
                    self.level = 0;
                    self.state = open(0, rng);
                }
            }
            // The lease goes back: the next run may probe at once.
            Ended::Neither if probing => self.state = State::Open { until: now },
            Ended::Neither => {}
        }
    }
}

/// A duration in nanoseconds, saturating.
pub fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;
    const P: Params = Params {
        after: 3,
        cooldown: Duration::from_secs(60),
        max: Duration::from_secs(480),
    };
    const LEASE: u64 = 600 * S;

    fn failed(c: &mut Circuit, now: u64, lease: Option<u64>, rng: &mut impl Rng) {
        c.finish(&P, now, Ended::Failed, lease, rng);
    }

    /// A circuit opened by three failures at 0, 1 and 2 s, and its draws.
    fn opened(seed: u64) -> (Circuit, impl Rng) {
        let mut rng = crate::strategy::rng(Some(seed));
        let mut c = Circuit::default();
        for now in 0..3 {
            failed(&mut c, now * S, None, &mut rng);
        }
        (c, rng)
    }

    fn open_until(c: &Circuit) -> u64 {
        match c.state {
            State::Open { until } => until,
            other => panic!("not open: {other:?}"),
        }
    }

    #[test]
    fn opens_after_n_counted_failures_in_a_row_and_skips_while_open() {
        let mut rng = crate::strategy::rng(Some(1));
        let mut c = Circuit::default();
        for now in [0, 1] {
            assert_eq!(c.admit(now * S, LEASE), Admit::Run);
            failed(&mut c, now * S, None, &mut rng);
        }
        // A success in between starts the count again.
        c.finish(&P, 2 * S, Ended::Succeeded, None, &mut rng);
        assert_eq!(c, Circuit::default());
        // Neither kind of end counts.
        c.finish(&P, 2 * S, Ended::Neither, None, &mut rng);
        assert_eq!(c, Circuit::default());
        for now in [3, 4] {
            failed(&mut c, now * S, None, &mut rng);
            assert_eq!(c.admit(now * S, LEASE), Admit::Run);
        }
        failed(&mut c, 5 * S, None, &mut rng);
        let until = open_until(&c);
        assert_eq!((c.failures, c.level), (3, 0));
        // The first cooldown: equal jitter of 60 s, from the failure.
        assert!((35 * S..=65 * S).contains(&until), "{until}");
        let skip = Admit::Skip {
            until,
            probing: false,
        };
        assert_eq!(c.admit(until - 1, LEASE), skip);
        // Failures of runs still going while it is open change nothing but the count.
        failed(&mut c, 6 * S, None, &mut rng);
        assert_eq!(open_until(&c), until);
    }

    #[test]
    fn one_probe_per_circuit_and_its_success_closes_it() {
        let (mut c, mut rng) = opened(2);
        let until = open_until(&c);
        let Admit::Probe(lease) = c.admit(until, LEASE) else {
            panic!("no probe")
        };
        for later in [until, until + 1, until + LEASE - 1] {
            assert_eq!(
                c.admit(later, LEASE),
                Admit::Skip {
                    until: until + LEASE,
                    probing: true
                }
            );
        }
        c.finish(&P, until + 5, Ended::Succeeded, Some(lease), &mut rng);
        assert_eq!(c.admit(until + 6, LEASE), Admit::Run);
        // Closed with the count at 0 and the cooldown back at its first.
        assert_eq!(c, Circuit::default());
    }

    #[test]
    fn a_crashed_probe_holds_the_lease_no_longer_than_its_bound() {
        let (mut c, mut rng) = opened(4);
        let until = open_until(&c);
        let Admit::Probe(first) = c.admit(until, LEASE) else {
            panic!("no probe")
        };
        // The first probe never reports; at the lease's end another probes.
        let Admit::Probe(second) = c.admit(until + LEASE, LEASE) else {
            panic!("the lease was held past its end")
        };
        assert_ne!(first, second);
        // The crashed one, should it report after all, decides nothing.
        failed(&mut c, until + LEASE + 1, Some(first), &mut rng);
        assert!(matches!(c.state, State::Probing { lease, .. } if lease == second));
        assert_eq!(c.level, 0);
    }

    #[test]
    fn a_failed_probe_lengthens_the_cooldown_within_its_bounds() {
        let cooldown = P.cooldown.as_secs_f64();
        let cap_s = P.cap().as_secs_f64();
        assert_eq!(cap_s, 480.0);
        for seed in 0..50 {
            let (mut c, mut rng) = opened(seed);
            let mut draws = Vec::new();
            for k in 1..10 {
                let now = open_until(&c);
                let Admit::Probe(lease) = c.admit(now, LEASE) else {
                    panic!("no probe")
                };
                failed(&mut c, now, Some(lease), &mut rng);
                assert_eq!(c.level, k);
                let wait = (open_until(&c) - now) as f64 / S as f64;
                let ceiling = (cooldown * 2f64.powi(k as i32)).min(cap_s);
                assert!(
                    (ceiling / 2.0..=ceiling).contains(&wait),
                    "seed {seed} k {k}: {wait}"
                );
                draws.push(wait);
            }
            // Jittered: the capped ones are not all equal.
            assert!(draws[6..].windows(2).any(|w| w[0] != w[1]), "{draws:?}");
        }
        // At most `max`, unless the cooldown itself is longer.
        let long = Duration::from_secs(7200);
        assert_eq!(
            Params {
                cooldown: long,
                ..P
            }
            .cap(),
            long
        );
    }

    #[test]
    fn a_stale_probe_does_not_decide_and_a_probe_ending_neither_way_frees_the_lease() {
        let (mut c, mut rng) = opened(3);
        let until = open_until(&c);
        let Admit::Probe(first) = c.admit(until, LEASE) else {
            panic!("no probe")
        };
        // Another run's success closes the circuit under the probe...
        c.finish(&P, until + 1, Ended::Succeeded, None, &mut rng);
        // ...whose failure then counts as one failure of a closed circuit.
        failed(&mut c, until + 2, Some(first), &mut rng);
        assert_eq!((c.state, c.failures), (State::Closed, 1));
        for now in 0..2 {
            failed(&mut c, until + 4 + now, None, &mut rng);
        }
        let again = open_until(&c);
        let Admit::Probe(second) = c.admit(again, LEASE) else {
            panic!("no probe")
        };
        c.finish(&P, again + 1, Ended::Neither, Some(second), &mut rng);
        assert_eq!(c.state, State::Open { until: again + 1 });
        assert!(matches!(c.admit(again + 1, LEASE), Admit::Probe(_)));
    }

    #[test]
    fn an_end_beyond_any_cooldown_and_lease_is_a_clock_that_went_back() {
        let now = 1_795_434_960 * S;
        // The longest cooldown any run may set (an hour, though this
        // one's stops at 480 s), then the lease: 3600 + 600 s.
        let far = horizon(P.cap(), LEASE);
        assert_eq!(far, 4200 * S);
        // A cap longer than an hour is its own longest.
        assert_eq!(horizon(Duration::from_secs(7200), LEASE), 7800 * S);
        let open = |until| State::Open { until };
        let probing = |until| State::Probing { lease: 7, until };
        // (state found, state after, the end it had if clamped)
        let table = [
            (State::Closed, State::Closed, None),
            (open(0), open(0), None),
            (open(now + far), open(now + far), None),
            (probing(now + far), probing(now + far), None),
            (open(now + far + 1), open(now + far), Some(now + far + 1)),
            // A day ahead, and the largest value a record can hold.
            (
                open(now + 86_400 * S),
                open(now + far),
                Some(now + 86_400 * S),
            ),
            (open(u64::MAX), open(now + far), Some(u64::MAX)),
            (probing(u64::MAX), probing(now + far), Some(u64::MAX)),
        ];
        for (found, after, was) in table {
            let mut c = Circuit {
                state: found,
                failures: 3,
                level: 2,
                after: 3,
            };
            assert_eq!(c.clamp(now, far), was, "{found:?}");
            assert_eq!(c.state, after, "{found:?}");
            assert_eq!((c.failures, c.level), (3, 2), "only the time changes");
            // Clamped once, it is trusted: a later run is not told again,
            // and it lets a probe through at the clamped end.
            assert_eq!(c.clamp(now + S, far), None);
        }
        // A circuit opened by a run with a long cooldown (its cap, an
        // hour) is no clock that went back to a run given a short one, or
        // to `--breaker-status` given none: it is not cut short.
        let long = Params {
            after: 1,
            cooldown: Duration::from_secs(1800),
            max: Duration::from_secs(3600),
        };
        let mut rng = crate::strategy::rng(Some(7));
        let mut c = Circuit::default();
        c.finish(&long, now, Ended::Failed, None, &mut rng);
        let until = open_until(&c);
        assert!(until >= now + 900 * S, "{until}");
        let short = Duration::from_secs(30);
        assert_eq!(c.clamp(now, horizon(short, LEASE)), None);
        assert_eq!(open_until(&c), until);
        // At the very end of time the clamp saturates, and stays put.
        let mut c = Circuit {
            state: open(u64::MAX),
            ..Circuit::default()
        };
        assert_eq!(c.clamp(u64::MAX - S, far), None);
        // A clamped circuit probes when its new end comes.
        let mut c = Circuit {
            state: open(u64::MAX),
            ..Circuit::default()
        };
        c.clamp(now, far);
        assert!(matches!(c.admit(now + far, LEASE), Admit::Probe(_)));
    }

    #[test]
    fn a_probe_known_gone_gives_the_lease_back_at_once() {
        let (mut c, _) = opened(5);
        let until = open_until(&c);
        // Open: nothing to give back.
        c.prober_gone(until - 1);
        assert_eq!(open_until(&c), until);
        let Admit::Probe(first) = c.admit(until, LEASE) else {
            panic!("no probe")
        };
        // Its run died a second in: the next run probes, not 10 min later.
        c.prober_gone(until + S);
        assert_eq!(c.state, State::Open { until: until + S });
        let Admit::Probe(second) = c.admit(until + S, LEASE) else {
            panic!("the lease of a dead probe was held")
        };
        assert_ne!(first, second);
    }

    #[test]
    fn the_threshold_is_kept_with_the_count() {
        let (c, _) = opened(6);
        assert_eq!(c.after, P.after);
        let mut c = c;
        let mut rng = crate::strategy::rng(Some(6));
        let five = Params { after: 5, ..P };
        c.finish(&five, 9 * S, Ended::Failed, None, &mut rng);
        assert_eq!(c.after, 5, "the last run that counted says it");
        c.finish(&five, 9 * S, Ended::Succeeded, None, &mut rng);
        assert_eq!(c, Circuit::default());
    }
}
