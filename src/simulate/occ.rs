//! The AWS post's model: one repetition of the AWS "Exponential Backoff And Jitter" experiment, as
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

use rand::Rng;

use super::model::{Experiment, Fleet, Outcome, start, tick};
use super::queue::timed_event;
use crate::strategy::Backoff;

/// A read or a write arriving at the server; a write carries the version
/// its client read, so a client's version needs no array of its own (at
/// 100,000 clients, one cache miss fewer per write). 16 bytes.
#[derive(Clone, Copy, PartialEq)]
struct Event {
    at_ms: f64,
    client: u32,
    /// The version read, or `READ`: this is the read.
    seen: u32,
}

/// `Event::seen` of a read. Versions count successes: at most the number
/// of clients (`--clients` allows 100,000), never this.
const READ: u32 = u32::MAX;

timed_event!(Event);

/// Runs one repetition; `backoff` None means no backoff at all (the baseline).
pub fn simulate(
    experiment: &Experiment,
    clients: u32,
    backoff: Option<Backoff>,
    rng: &mut impl Rng,
    events: &dyn Fn(u64),
) -> Outcome {
    let mut fleet = Fleet::new(clients, backoff);
    let mut version = 0u32;
    let mut outcome = Outcome::default();
    // Each client's first request reads.
    let first = |at_ms, client| Event {
        at_ms,
        client,
        seen: READ,
    };
    let (mut queue, mut delays) = start(experiment, backoff, clients, rng, first);
    let mut handled = 0u64;
    // Each event either schedules the client's next one or, on a success,
    // ends the client.
    while let Some(Event {
        at_ms,
        client,
        seen,
    }) = queue.pop()
    {
        handled += 1;
        tick(handled, events);
        match seen {
            READ => {
                // Reply to the client, which sends its write at once.
                let at_ms = at_ms + delays.next() + delays.next();
                queue.push(Event {
                    at_ms,
                    client,
                    seen: version,
                });
            }
            seen => {
                if outcome.writes == experiment.max_work {
                    outcome.capped = true;
                    outcome.completion_ms = outcome.completion_ms.max(at_ms);
                    break;
                }
                outcome.writes += 1;
                let reply_ms = at_ms + delays.next();
                if seen == version {
                    version += 1;
                    outcome.completion_ms = outcome.completion_ms.max(reply_ms);
                } else {
                    let sleep_ms = fleet.sleep_ms(client, delays.rng);
                    let at_ms = reply_ms + sleep_ms + delays.next();
                    queue.push(Event {
                        at_ms,
                        client,
                        seen: READ,
                    });
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

    use crate::simulate::model::fixtures::{NET, backoff};
    use crate::simulate::model::{Model, Net};

    fn simulate(clients: u32, backoff: Option<Backoff>, _: Net, rng: &mut impl Rng) -> Outcome {
        let experiment = Experiment {
            model: Model::Occ,
            net: NET,
            max_work: u64::MAX,
        };
        super::simulate(&experiment, clients, backoff, rng, &|_| {})
    }

    fn rng(seed: u64) -> rand_chacha::ChaCha8Rng {
        crate::strategy::rng(Some(seed))
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
