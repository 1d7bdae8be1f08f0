//! What the two models share: the experiment's settings, the network, what
//! one repetition measures, and the model's name and parameters. It knows
//! neither model's code: `repetition.rs` picks one, so the layers point one
//! way (repetition → occ, busy → model).
//!
//! - `occ`: the AWS post's model. N clients each update one shared row with
//!   optimistic concurrency; the server has no capacity limit, contention
//!   comes from version conflicts.
//! - `busy`: a server that serves one request at a time and rejects any
//!   request that arrives while it is busy; contention comes from capacity.

use rand::{Rng, RngExt};

use super::queue::Calendar;
use std::time::Duration;

use crate::strategy::{Backoff, Jitter};

/// `--model`: the experiment `--simulate` runs, with its own parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Model {
    Occ,
    /// The busy server's service time, `|Normal(mean, sd)|` in milliseconds.
    Busy {
        mean_ms: f64,
        sd_ms: f64,
    },
}

/// The one-way network delay, `|Normal(mean, sd)|` in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Net {
    pub mean_ms: f64,
    pub sd_ms: f64,
}

/// Everything a repetition needs besides its strategy, client count and generator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Experiment {
    pub model: Model,
    pub net: Net,
    /// A repetition stops once the server has handled this many requests
    /// (`--max-work`): without backoff, 100,000 clients would run for hours.
    pub max_work: u64,
}

/// What one repetition measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Requests that reached the server: conditional writes (occ; reads are
    /// not counted) or requests, served or rejected (busy).
    pub writes: u64,
    /// When the last client received its success, in ms (or when the
    /// repetition stopped at `max_work`).
    pub completion_ms: f64,
    /// Time the server spent serving (busy; 0 for occ).
    pub busy_ms: f64,
    /// Stopped at `max_work` before every client succeeded.
    pub capped: bool,
}

/// Network delays: rand_distr's ziggurat normal, several times faster than
/// Box-Muller or the polar method (no log or trigonometry per draw), which
/// matters because a full sweep draws some sixty million of them.
pub struct Delays<'r, R> {
    pub net: Net,
    pub rng: &'r mut R,
}

impl<R: Rng> Delays<'_, R> {
    pub fn next(&mut self) -> f64 {
        folded_normal(self.net, self.rng)
    }
}

/// Every client's backoff state, in as few bytes as its strategy needs:
/// with 100,000 clients each conflict touches one at random, and the cost
/// per request doubled once the array outgrew the core's cache (24 bytes a
/// client, 2.4 MB). None, full and equal jitter need only the retry count,
/// decorrelated jitter only the previous sleep; what they draw is exactly
/// what `Schedule::next_sleep` would.
pub struct Fleet {
    backoff: Option<Backoff>,
    state: State,
}

enum State {
    /// No backoff: nothing to remember.
    Nothing,
    /// Retries so far, counted up to `last` (none, full, equal jitter whose
    /// ceiling reaches the cap by retry 255): from `last` on every retry
    /// sleeps as retry `last` does. One byte a client: with 100,000 clients
    /// the array (100 KB) stays in the core's cache beside the event queue,
    /// where four bytes a client (400 KB) missed it on half the conflicts.
    FewRetries { retries: Vec<u8>, last: u8 },
    /// Retries so far (none, full, equal jitter).
    Retries(Vec<u32>),
    /// The previous sleep in nanoseconds (decorrelated jitter, cap below 584 years).
    PreviousNanos(Vec<u64>),
    /// The previous sleep, for a cap too long for nanoseconds in a u64.
    Previous(Vec<Duration>),
}

impl Fleet {
    pub fn new(clients: u32, backoff: Option<Backoff>) -> Self {
        let n = clients as usize;
        let state = match backoff {
            None => State::Nothing,
            Some(b) if b.jitter != Jitter::Decorrelated => match saturation(&b) {
                Some(last) => State::FewRetries {
                    retries: vec![0; n],
                    last,
                },
                None => State::Retries(vec![0; n]),
            },
            Some(b) => match u64::try_from(b.cap.as_nanos()) {
                Ok(_) => State::PreviousNanos(vec![b.base.as_nanos() as u64; n]),
                Err(_) => State::Previous(vec![b.base; n]),
            },
        };
        Fleet { backoff, state }
    }

    /// The backoff before `client`'s next try, in ms (0 without backoff).
    pub fn sleep_ms(&mut self, client: u32, rng: &mut impl Rng) -> f64 {
        let Some(backoff) = &self.backoff else {
            return 0.0;
        };
        let c = client as usize;
        let slept = match &mut self.state {
            State::Nothing => Duration::ZERO,
            State::FewRetries { retries, last } => {
                let sleep = backoff
                    .sleep(u32::from(retries[c]), backoff.base, rng)
                    .duration;
                if retries[c] < *last {
                    retries[c] += 1;
                }
                sleep
            }
            State::Retries(retries) => {
                // The previous sleep is not read by these strategies.
                let sleep = backoff.sleep(retries[c], backoff.base, rng).duration;
                retries[c] = retries[c].saturating_add(1);
                sleep
            }
            State::PreviousNanos(previous) => {
                let sleep = backoff
                    .sleep(0, Duration::from_nanos(previous[c]), rng)
                    .duration;
                // At most the cap, which fits.
                previous[c] = sleep.as_nanos() as u64;
                sleep
            }
            State::Previous(previous) => {
                let sleep = backoff.sleep(0, previous[c], rng).duration;
                previous[c] = sleep;
                sleep
            }
        };
        slept.as_secs_f64() * 1e3
    }
}

/// The first retry from which `backoff`'s ceiling (`Backoff::exponential`)
/// is the cap for every later retry, if one up to 255 is: its
/// `base * factor^n` is at least twice the cap (the factor is at least 1,
/// so later powers are no smaller, the margin covers `powf`'s rounding),
/// and every product from the cap on clamps to the same cap. A zero base
/// never grows: its ceiling is zero from the start.
fn saturation(backoff: &Backoff) -> Option<u8> {
    if backoff.base.is_zero() {
        return Some(0);
    }
    if backoff.factor.is_nan() || backoff.factor < 1.0 {
        return None;
    }
    let (base, cap) = (backoff.base.as_secs_f64(), backoff.cap.as_secs_f64());
    (0..=u8::MAX).find(|&n| base * backoff.factor.powf(f64::from(n)) >= 2.0 * cap)
}

/// `|Normal(mean, sd)|`.
pub fn folded_normal(n: Net, rng: &mut impl Rng) -> f64 {
    let z: f64 = rng.sample(rand_distr::StandardNormal);
    (n.mean_ms + n.sd_ms * z).abs()
}

/// How both models start: each client's first request, made by `first`
/// from when it arrives (one network delay) and the client, in the event
/// queue; and the network's delays, on `rng`, for the rest of the run.
pub fn start<'r, E: super::queue::Timed, R: Rng>(
    experiment: &Experiment,
    backoff: Option<Backoff>,
    clients: u32,
    rng: &'r mut R,
    first: impl Fn(f64, u32) -> E,
) -> (Calendar<E>, Delays<'r, R>) {
    let mut queue = queue(experiment, backoff, clients);
    let mut delays = Delays {
        net: experiment.net,
        rng,
    };
    for client in 0..clients {
        queue.push(first(delays.next(), client));
    }
    (queue, delays)
}

/// An event queue sized for this experiment: its calendar spans the
/// longest sleep plus a few of every delay around it.
fn queue<E: super::queue::Timed>(
    experiment: &Experiment,
    backoff: Option<Backoff>,
    clients: u32,
) -> Calendar<E> {
    let spread = |n: Net| n.mean_ms + 4.0 * n.sd_ms;
    let mut horizon = 3.0 * spread(experiment.net);
    if let Some(backoff) = backoff {
        horizon += backoff.cap.as_secs_f64() * 1e3;
    }
    if let Model::Busy { mean_ms, sd_ms } = experiment.model {
        horizon += spread(Net { mean_ms, sd_ms });
    }
    Calendar::new(horizon, clients)
}

/// How often a model reports its events: rarely enough to cost nothing.
const TICK: u64 = 1 << 16;

/// Tells `events` of the last `TICK` events when `count` completes them.
pub fn tick(count: u64, events: &dyn Fn(u64)) {
    if count.is_multiple_of(TICK) {
        events(TICK);
    }
}

/// What the models' tests share: the network of the AWS post's experiment
/// and its backoff (decorrelated starts lower, as the post's does).
#[cfg(test)]
pub(super) mod fixtures {
    use super::Net;
    use crate::strategy::{Backoff, Jitter};
    use std::time::Duration;

    pub const NET: Net = Net {
        mean_ms: 10.0,
        sd_ms: 2.0,
    };

    pub fn backoff(jitter: Jitter) -> Backoff {
        let base = Duration::from_millis(if jitter == Jitter::Decorrelated {
            5
        } else {
            10
        });
        Backoff {
            jitter,
            base,
            cap: Duration::from_secs(2),
            factor: 2.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fleet_sleeps_as_a_schedule_per_client_would() {
        use crate::strategy::Schedule;
        let huge = Duration::from_secs(u64::MAX);
        // Ceilings that reach the cap within a few retries, within some
        // 230 (counted in a byte, then saturated), beyond 255 (counted in
        // full) or never; and a zero base.
        let cases = [
            (5, Duration::from_secs(2), 2.0),
            (5, huge, 2.0),
            (5, Duration::from_secs(2), 1.03),
            (5, Duration::from_secs(2), 1.005),
            (5, Duration::from_millis(5), 1.0),
            (0, Duration::from_secs(2), 2.0),
        ];
        for jitter in Jitter::ALL {
            for (base_ms, cap, factor) in cases {
                let backoff = Backoff {
                    jitter,
                    base: Duration::from_millis(base_ms),
                    cap,
                    factor,
                };
                let mut fleet = Fleet::new(3, Some(backoff));
                let mut schedules = vec![Schedule::new(backoff); 3];
                let (mut a, mut b) = (crate::strategy::rng(Some(9)), crate::strategy::rng(Some(9)));
                for step in 0..900u32 {
                    let client = step * 7 % 3;
                    let want = schedules[client as usize].next_sleep(&mut b).duration;
                    let got = fleet.sleep_ms(client, &mut a);
                    assert_eq!(
                        got,
                        want.as_secs_f64() * 1e3,
                        "{jitter:?} {base_ms} {cap:?} {factor} step {step}"
                    );
                }
            }
        }
        assert_eq!(
            Fleet::new(2, None).sleep_ms(1, &mut crate::strategy::rng(Some(1))),
            0.0
        );
    }

    #[test]
    fn network_delays_are_folded_normals() {
        let mut r = crate::strategy::rng(Some(3));
        let net = Net {
            mean_ms: 10.0,
            sd_ms: 2.0,
        };
        let mut delays = Delays { net, rng: &mut r };
        let draws: Vec<f64> = (0..20_000).map(|_| delays.next()).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let sd =
            (draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / draws.len() as f64).sqrt();
        assert!(
            (mean - 10.0).abs() < 0.1 && (sd - 2.0).abs() < 0.1,
            "mean {mean}, sd {sd}"
        );
        assert!(draws.iter().all(|d| *d >= 0.0));
    }
}
