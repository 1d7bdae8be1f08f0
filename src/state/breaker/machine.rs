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

/// How far ahead of now a time in a circuit's record can lie when a run
/// on this clock wrote it (ns): the run's longest cooldown (an open
/// circuit's end), then a probe's whole lease (`lease`, ns). The run that
/// sets an end keeps this, its limit, in the record with it (`Circuit`'s
/// `limit`), so that a run given a shorter cooldown (a run by hand, or
/// `--breaker-status` without the cron job's `--breaker-cooldown-max`)
/// does not cut its circuit short.
pub fn horizon(cap: Duration, lease: u64) -> u64 {
    nanos(cap).saturating_add(lease)
}

/// The longest cooldown taken as possible for a record that keeps no
/// writer's limit (written before it was kept, or in Redis by an older
/// retry): what every record was held to before, an hour.
pub const UNKNOWN_CAP: Duration = Duration::from_secs(3600);

/// The longest cooldown a run may be given (`--breaker-cooldown`,
/// `--breaker-cooldown-max`), and so the longest a limit kept in a record
/// is trusted for: a day. A record that keeps a longer one (made by hand,
/// or by a clock that jumped) must not keep every run skipped for years.
pub const MAX_COOLDOWN: Duration = Duration::from_secs(86_400);

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
    /// The limit (`horizon`, ns) of the run that set the end of the state:
    /// how far ahead of its now it could set it. 0 when closed, or not
    /// known (a record written before it was kept).
    pub limit: u64,
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

    /// How far ahead of now this circuit's end may lie, for a run whose own
    /// limit is `own` and lease `lease` (ns): its own, or the limit kept
    /// with the end if longer; for a record that keeps none, the longest
    /// cooldown any run was taken to set (`UNKNOWN_CAP`) and the lease; a
    /// kept limit is trusted up to `MAX_COOLDOWN` and the lease.
    pub fn reach(&self, own: u64, lease: u64) -> u64 {
        let writer = match self.limit {
            0 => nanos(UNKNOWN_CAP).saturating_add(lease),
            limit => limit.min(nanos(MAX_COOLDOWN).saturating_add(lease)),
        };
        own.max(writer)
    }

    /// A time that no run on this clock could have written, an end further
    /// ahead of `now` than `reach` says, is taken for a clock that went
    /// back since (it was ahead when the circuit opened, or the record was
    /// made by hand): the end becomes `now` plus that reach, kept as its
    /// limit, so no record keeps every run skipped for longer. The end it
    /// had, if it changed.
    pub fn clamp(&mut self, now: u64, own: u64, lease: u64) -> Option<u64> {
        let far = self.reach(own, lease);
        let most = now.saturating_add(far);
        let was = match &mut self.state {
            State::Open { until } | State::Probing { until, .. } if *until > most => {
                std::mem::replace(until, most)
            }
            _ => return None,
        };
        self.limit = far;
        Some(was)
    }

    /// After a run changed the circuit from `before`: an end it set (it
    /// opened the circuit, probes it, gave the lease back) is kept with
    /// its own limit, `own`; closed, the circuit has none.
    pub fn mark(&mut self, before: State, own: u64) {
        match self.state {
            State::Closed => self.limit = 0,
            state if state != before => self.limit = own,
            _ => {}
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
    fn an_end_beyond_the_writers_cooldown_and_lease_is_a_clock_that_went_back() {
        let now = 1_795_434_960 * S;
        // This run's longest cooldown (480 s) and its lease (600 s).
        let own = horizon(P.cap(), LEASE);
        assert_eq!(own, 1080 * S);
        let open = |until| State::Open { until };
        let probing = |until| State::Probing { lease: 7, until };
        // (state found, the writer's limit, state after, the end it had if
        // clamped): a limit the record keeps counts when longer than this
        // run's own, and one it does not keep (0) is an hour and the lease.
        let day = 86_400 * S;
        let trust = day + LEASE;
        let table = [
            (State::Closed, own, State::Closed, None),
            (open(0), own, open(0), None),
            (open(now + own), own, open(now + own), None),
            (probing(now + own), own, probing(now + own), None),
            (
                open(now + own + 1),
                own,
                open(now + own),
                Some(now + own + 1),
            ),
            // A shorter writer: this run's own limit holds.
            (open(now + own + 1), S, open(now + own), Some(now + own + 1)),
            // A longer one: its limit holds, whatever this run was given.
            (open(now + 2 * own), 2 * own, open(now + 2 * own), None),
            (
                open(now + day),
                2 * own,
                open(now + 2 * own),
                Some(now + day),
            ),
            // No limit kept: an hour and the lease.
            (open(now + 4200 * S), 0, open(now + 4200 * S), None),
            (open(now + day), 0, open(now + 4200 * S), Some(now + day)),
            // The largest values a record can hold.
            (open(u64::MAX), own, open(now + own), Some(u64::MAX)),
            (probing(u64::MAX), own, probing(now + own), Some(u64::MAX)),
            // A kept limit is trusted for a day and the lease at most.
            (open(now + trust), u64::MAX, open(now + trust), None),
            (open(u64::MAX), u64::MAX, open(now + trust), Some(u64::MAX)),
            (
                open(u64::MAX - 1),
                u64::MAX - 1,
                open(now + trust),
                Some(u64::MAX - 1),
            ),
        ];
        for (found, limit, after, was) in table {
            let mut c = Circuit {
                state: found,
                failures: 3,
                level: 2,
                after: 3,
                limit,
            };
            assert_eq!(c.clamp(now, own, LEASE), was, "{found:?} {limit}");
            assert_eq!(c.state, after, "{found:?} {limit}");
            assert_eq!((c.failures, c.level), (3, 2), "only the time changes");
            if was.is_some() {
                // The end kept with the reach it was brought in to.
                let kept = if limit == 0 {
                    4200 * S
                } else {
                    limit.min(trust)
                };
                assert_eq!(c.limit, own.max(kept));
            }
            // Clamped once, it is trusted: a later run is not told again.
            assert_eq!(c.clamp(now + S, own, LEASE), None, "{found:?} {limit}");
        }
        // At the very end of time the clamp saturates, and stays put.
        let mut c = Circuit {
            state: open(u64::MAX),
            ..Circuit::default()
        };
        assert_eq!(c.clamp(u64::MAX - S, own, LEASE), None);
        // A clamped circuit probes when its new end comes.
        let mut c = Circuit {
            state: open(u64::MAX),
            limit: own,
            ..Circuit::default()
        };
        c.clamp(now, own, LEASE);
        assert!(matches!(c.admit(now + own, LEASE), Admit::Probe(_)));
    }

    /// The clock that was ahead with the default options: the circuit it
    /// opened skips runs for the default cap and lease (4 and 10 min) at
    /// most, not for the hour and 10 min every record was held to before.
    #[test]
    fn a_default_circuit_from_a_clock_ahead_skips_for_its_own_cap_and_lease() {
        let defaults = Params {
            after: 3,
            cooldown: Duration::from_secs(30),
            max: Duration::from_secs(240),
        };
        let own = horizon(defaults.cap(), LEASE);
        let mut rng = crate::strategy::rng(Some(8));
        // Opened by a run whose clock was a day ahead.
        let ahead = 1_795_434_960 * S + 86_400 * S;
        let mut c = Circuit::default();
        for _ in 0..3 {
            let before = c.state;
            c.finish(&defaults, ahead, Ended::Failed, None, &mut rng);
            c.mark(before, own);
        }
        assert!(open_until(&c) > ahead);
        assert_eq!(c.limit, 840 * S);
        // Read back on the right clock, by a run with the same options.
        let now = ahead - 86_400 * S;
        assert!(c.clamp(now, own, LEASE).is_some());
        assert_eq!(open_until(&c), now + 840 * S);
    }

    #[test]
    fn the_run_that_sets_an_end_keeps_its_limit_with_it_and_others_leave_it() {
        let long = Params {
            after: 1,
            cooldown: Duration::from_secs(1800),
            max: Duration::from_secs(3 * 3600),
        };
        let (mine, short) = (horizon(long.cap(), LEASE), horizon(P.cap(), LEASE));
        let now = 1_795_434_960 * S;
        let mut rng = crate::strategy::rng(Some(9));
        let mut c = Circuit::default();
        // Opened by the job with a 3 h cap: its limit goes with the end.
        let before = c.state;
        c.finish(&long, now, Ended::Failed, None, &mut rng);
        c.mark(before, mine);
        let until = open_until(&c);
        assert_eq!(c.limit, mine);
        // A run given the default cap counts a failure meanwhile: the end
        // is not its, and neither is the limit; nor does it cut the end.
        let before = c.state;
        c.finish(&P, now + S, Ended::Failed, None, &mut rng);
        c.mark(before, short);
        assert_eq!((open_until(&c), c.limit, c.failures), (until, mine, 2));
        assert_eq!(c.clamp(now + S, short, LEASE), None);
        assert_eq!(open_until(&c), until);
        // The short run probes when the cooldown ends: the lease's end is
        // its own, and so is the limit.
        let before = c.state;
        let Admit::Probe(lease) = c.admit(until, LEASE) else {
            panic!("no probe")
        };
        c.mark(before, short);
        assert_eq!(c.limit, short);
        // Its success closes the circuit: no end, no limit.
        let before = c.state;
        c.finish(&P, until + S, Ended::Succeeded, Some(lease), &mut rng);
        c.mark(before, short);
        assert_eq!(c, Circuit::default());
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
