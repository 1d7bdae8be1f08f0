//! The busy server: one repetition of the contention experiment the
//! articles planned. One server serves one request at a time for
//! `|Normal(mean, sd)|` ms; a request that arrives while it serves another
//! is rejected at once. N clients send a request each at time 0; a client
//! whose request is rejected sleeps its backoff and sends again, until it
//! is served.
//!
//! ```text
//! client ──request──> server ─┬─ idle: serve |Normal(10, 4)| ms ──success──> client (done)
//!                             └─ busy: ──rejection──> client: sleep, request again
//!   each arrow: |Normal(net mean, net sd)| ms, drawn per message
//! ```
//!
//! Only arrivals at the server are events: whether the server is busy
//! follows from when its current service ends (events come in time order),
//! and the client's own steps take no time, so the way back and the next
//! request fold into one delay, as in the post's model.

use rand::Rng;

use super::model::{Experiment, Fleet, Net, Outcome, folded_normal, start, tick};
use super::queue::timed_event;
use crate::strategy::Backoff;

/// A request arriving at the server.
#[derive(Clone, Copy, PartialEq)]
struct Arrival {
    at_ms: f64,
    client: u32,
}

timed_event!(Arrival);

/// Runs one repetition; `backoff` None means no backoff at all (the baseline).
pub fn simulate(
    experiment: &Experiment,
    service: Net,
    clients: u32,
    backoff: Option<Backoff>,
    rng: &mut impl Rng,
    events: &dyn Fn(u64),
) -> Outcome {
    let mut fleet = Fleet::new(clients, backoff);
    let (mut queue, mut delays) = start(experiment, backoff, clients, rng, |at_ms, client| {
        Arrival { at_ms, client }
    });
    let mut outcome = Outcome::default();
    // When the request being served is done; the server is idle from then on.
    let mut free_at_ms = 0.0f64;
    while let Some(Arrival { at_ms, client }) = queue.pop() {
        if outcome.writes == experiment.max_work {
            outcome.capped = true;
            outcome.completion_ms = outcome.completion_ms.max(at_ms);
            break;
        }
        outcome.writes += 1;
        tick(outcome.writes, events);
        if at_ms >= free_at_ms {
            let serve_ms = folded_normal(service, delays.rng);
            free_at_ms = at_ms + serve_ms;
            outcome.busy_ms += serve_ms;
            outcome.completion_ms = outcome.completion_ms.max(free_at_ms + delays.next());
        } else {
            let back_ms = at_ms + delays.next();
            let sleep_ms = fleet.sleep_ms(client, delays.rng);
            queue.push(Arrival {
                at_ms: back_ms + sleep_ms + delays.next(),
                client,
            });
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::model::Model;
    use crate::simulate::model::fixtures::{NET, backoff};
    use crate::strategy::Jitter;
    use std::time::Duration;

    const SERVICE: Net = Net {
        mean_ms: 10.0,
        sd_ms: 4.0,
    };

    fn experiment(net: Net, max_work: u64) -> Experiment {
        Experiment {
            model: Model::Busy {
                mean_ms: SERVICE.mean_ms,
                sd_ms: SERVICE.sd_ms,
            },
            net,
            max_work,
        }
    }

    fn run(clients: u32, backoff: Option<Backoff>, net: Net, seed: u64) -> Outcome {
        let mut rng = crate::strategy::rng(Some(seed));
        simulate(
            &experiment(net, u64::MAX),
            SERVICE,
            clients,
            backoff,
            &mut rng,
            &|_| {},
        )
    }

    fn full() -> Option<Backoff> {
        Some(backoff(Jitter::Full))
    }

    #[test]
    fn one_client_is_served_at_once() {
        for seed in 0..20 {
            let out = run(1, full(), NET, seed);
            assert_eq!(out.writes, 1);
            // Two messages and one service: a few tens of ms.
            assert!(out.completion_ms > 0.0 && out.completion_ms < 2.0 * 30.0 + 40.0);
            assert!(out.busy_ms > 0.0 && out.busy_ms < out.completion_ms);
        }
    }

    #[test]
    fn every_client_is_served_once_and_the_server_never_overlaps() {
        // Each of n clients is served exactly once, one at a time: the
        // server's busy time is n services, and no more than the elapsed time.
        for clients in [2, 10, 40] {
            for backoff in [None, full()] {
                let out = run(clients, backoff, NET, u64::from(clients));
                assert!(out.writes >= u64::from(clients));
                let utilisation = out.busy_ms / out.completion_ms;
                assert!(utilisation > 0.0 && utilisation < 1.0, "{out:?}");
                let per_client = out.busy_ms / f64::from(clients);
                assert!((2.0..25.0).contains(&per_client), "{out:?}");
            }
        }
    }

    #[test]
    fn simultaneous_arrivals_are_all_rejected_but_one() {
        // No network delay: all ten requests arrive at 0, one is served and
        // the nine others are rejected, each once before it is served.
        let instant = Net {
            mean_ms: 0.0,
            sd_ms: 0.0,
        };
        let fixed = Some(Backoff {
            jitter: Jitter::None,
            base: Duration::from_secs(1),
            cap: Duration::from_secs(1),
            factor: 1.0,
        });
        // Constant 1 s sleeps: the nine all come back at 1 s, and again one
        // wins; so 10 + 9 + 8 + ... + 1 requests.
        assert_eq!(run(10, fixed, instant, 1).writes, 55);
    }

    #[test]
    fn work_stops_at_the_cap() {
        let mut rng = crate::strategy::rng(Some(1));
        let out = simulate(&experiment(NET, 500), SERVICE, 200, None, &mut rng, &|_| {});
        assert_eq!((out.writes, out.capped), (500, true));
        assert!(out.completion_ms > 0.0);
        assert!(!run(3, None, NET, 1).capped);
    }

    #[test]
    fn same_seed_same_outcome() {
        assert_eq!(run(30, full(), NET, 5), run(30, full(), NET, 5));
        assert_ne!(run(30, full(), NET, 5), run(30, full(), NET, 6));
    }
}
