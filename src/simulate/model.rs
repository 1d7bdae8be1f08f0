//! One repetition of the AWS "Exponential Backoff And Jitter" experiment, as
//! a discrete-event simulation. N clients each update one shared row once
//! with optimistic concurrency: read the version, then write conditional on
//! it; a conflict means sleep (the strategy's backoff) and start over.
//!
//! ```text
//! client ──read──> server ──version──> client ──write(v)──> server ──ok/conflict──> client
//!   each arrow: |Normal(mean, sd)| ms            conflict: sleep, then read again
//! ```
//!
//! The server answers instantly and has no capacity limit: contention comes
//! only from version conflicts. The client's own steps take no time, so the
//! simulation schedules only the two server-side events per round; the
//! client-side hops are folded into their delays.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;

use rand::{Rng, RngExt};

use crate::strategy::{Backoff, Schedule};

/// The one-way network delay, `|Normal(mean, sd)|` in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Net {
    pub mean_ms: f64,
    pub sd_ms: f64,
}

/// What one repetition measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Conditional writes the server processed (reads are not counted).
    pub writes: u64,
    /// When the last client received its successful write response, in ms.
    pub completion_ms: f64,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    ReadArrives,
    WriteArrives,
}

#[derive(Clone, Copy, PartialEq)]
struct Event {
    at_ms: f64,
    client: u32,
    kind: Kind,
}

impl Eq for Event {}

/// Earliest first (BinaryHeap is a max-heap); ties go to the lower client.
impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .at_ms
            .total_cmp(&self.at_ms)
            .then(other.client.cmp(&self.client))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Network delays: rand_distr's ziggurat normal, several times faster than
/// Box-Muller or the polar method (no log or trigonometry per draw), which
/// matters because a full sweep draws some sixty million of them.
struct Delays<'r, R> {
    net: Net,
    rng: &'r mut R,
}

impl<R: Rng> Delays<'_, R> {
    fn next(&mut self) -> f64 {
        let z: f64 = self.rng.sample(rand_distr::StandardNormal);
        (self.net.mean_ms + self.net.sd_ms * z).abs()
    }
}

/// Runs one repetition; `backoff` None means no backoff at all (the baseline).
pub fn simulate(clients: u32, backoff: Option<Backoff>, net: Net, rng: &mut impl Rng) -> Outcome {
    let n = clients as usize;
    let mut schedules: Vec<Option<Schedule>> = vec![backoff.map(Schedule::new); n];
    let mut seen_version = vec![0u64; n];
    let mut version = 0u64;
    let mut outcome = Outcome::default();
    let mut queue = BinaryHeap::with_capacity(n);
    let mut delays = Delays { net, rng };
    for client in 0..clients {
        queue.push(Event {
            at_ms: delays.next(),
            client,
            kind: Kind::ReadArrives,
        });
    }
    // Each event either replaces itself with the client's next one (one
    // sift in place) or, on a success, leaves the queue.
    while let Some(mut top) = queue.peek_mut() {
        let Event {
            at_ms,
            client,
            kind,
        } = *top;
        let c = client as usize;
        match kind {
            Kind::ReadArrives => {
                seen_version[c] = version;
                // Reply to the client, which sends its write at once.
                let at_ms = at_ms + delays.next() + delays.next();
                *top = Event {
                    at_ms,
                    client,
                    kind: Kind::WriteArrives,
                };
            }
            Kind::WriteArrives => {
                outcome.writes += 1;
                let reply_ms = at_ms + delays.next();
                if seen_version[c] == version {
                    version += 1;
                    outcome.completion_ms = outcome.completion_ms.max(reply_ms);
                    PeekMut::pop(top);
                } else {
                    let sleep_ms = match &mut schedules[c] {
                        Some(schedule) => {
                            schedule.next_sleep(delays.rng).duration.as_secs_f64() * 1e3
                        }
                        None => 0.0,
                    };
                    let at_ms = reply_ms + sleep_ms + delays.next();
                    *top = Event {
                        at_ms,
                        client,
                        kind: Kind::ReadArrives,
                    };
                }
            }
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::Jitter;
    use std::time::Duration;

    const NET: Net = Net {
        mean_ms: 10.0,
        sd_ms: 2.0,
    };

    fn rng(seed: u64) -> rand_chacha::ChaCha8Rng {
        crate::strategy::rng(Some(seed))
    }

    fn backoff(jitter: Jitter) -> Backoff {
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

    #[test]
    fn one_client_writes_exactly_once() {
        for seed in 0..20 {
            let out = simulate(1, Some(backoff(Jitter::Full)), NET, &mut rng(seed));
            assert_eq!(out.writes, 1);
            // Four one-way messages: read, version, write, answer.
            assert!(out.completion_ms > 0.0 && out.completion_ms < 4.0 * 30.0);
        }
    }

    #[test]
    fn two_clients_without_backoff_write_three_times() {
        // Both read version 0; one write wins, the other conflicts, rereads and wins.
        for seed in 0..50 {
            assert_eq!(simulate(2, None, NET, &mut rng(seed)).writes, 3);
        }
    }

    #[test]
    fn every_client_finishes_exactly_once() {
        // Each success increments the version: n clients need n successful writes.
        for clients in [1, 3, 10, 25] {
            for jitter in Jitter::ALL {
                let out = simulate(
                    clients,
                    Some(backoff(jitter)),
                    NET,
                    &mut rng(u64::from(clients)),
                );
                assert!(
                    out.writes >= u64::from(clients),
                    "{jitter:?} {clients}: {out:?}"
                );
            }
        }
    }

    #[test]
    fn network_delays_are_folded_normals() {
        let mut r = rng(3);
        let mut delays = Delays {
            net: NET,
            rng: &mut r,
        };
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

    #[test]
    fn same_seed_same_outcome() {
        let b = Some(backoff(Jitter::Decorrelated));
        assert_eq!(
            simulate(30, b, NET, &mut rng(5)),
            simulate(30, b, NET, &mut rng(5))
        );
        assert_ne!(
            simulate(30, b, NET, &mut rng(5)),
            simulate(30, b, NET, &mut rng(6))
        );
    }
}
