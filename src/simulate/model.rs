//! What the two models share: the experiment's settings, the network, what
//! one repetition measures, and the choice between the models.
//!
//! - `occ`: the AWS post's model. N clients each update one shared row with
//!   optimistic concurrency; the server has no capacity limit, contention
//!   comes from version conflicts.
//! - `busy`: a server that serves one request at a time and rejects any
//!   request that arrives while it is busy; contention comes from capacity.

use rand::{Rng, RngExt};

use super::queue::Calendar;
use std::time::Duration;

use crate::strategy::Backoff;

/// `--model`: which experiment `--simulate` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ModelName {
    /// The AWS post's: optimistic concurrency on one row (version conflicts)
    Occ,
    /// A server that serves one request at a time and rejects the rest at once
    Busy,
}

/// The model with its own parameters.
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

/// Runs one repetition; `backoff` None means no backoff at all (the
/// baseline). `events` is told, every so many events, how many passed.
pub fn simulate(
    experiment: &Experiment,
    clients: u32,
    backoff: Option<Backoff>,
    rng: &mut impl Rng,
    events: &dyn Fn(u64),
) -> Outcome {
    match experiment.model {
        Model::Occ => super::occ::simulate(experiment, clients, backoff, rng, events),
        Model::Busy { mean_ms, sd_ms } => {
            let service = Net { mean_ms, sd_ms };
            super::busy::simulate(experiment, service, clients, backoff, rng, events)
        }
    }
}

/// How often a model reports its events: rarely enough to cost nothing.
pub const TICK: u64 = 1 << 16;

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

    /// The backoff before a client's next try, in ms (0 without backoff):
    /// what `Schedule::next_sleep` draws, from the client's compact state.
    pub fn sleep(&mut self, backoff: Option<&Backoff>, client: &mut Client) -> f64 {
        let Some(backoff) = backoff else {
            return 0.0;
        };
        let sleep = backoff.sleep(client.retries, client.previous, self.rng);
        client.retries = client.retries.saturating_add(1);
        client.previous = sleep.duration;
        sleep.duration.as_secs_f64() * 1e3
    }
}

/// One client's backoff state, 24 bytes: with 100,000 clients each
/// conflict touches a client at random, and a `Schedule` per client (72
/// bytes: its own copy of the backoff) made that a miss in a 7 MB array.
#[derive(Clone, Copy)]
pub struct Client {
    /// Retries so far, and the previous sleep (decorrelated jitter).
    pub retries: u32,
    pub previous: Duration,
}

impl Client {
    pub fn fleet(clients: u32, backoff: Option<Backoff>) -> Vec<Client> {
        let client = Client {
            retries: 0,
            previous: backoff.map_or(Duration::ZERO, |b| b.base),
        };
        vec![client; clients as usize]
    }
}

/// `|Normal(mean, sd)|`.
pub fn folded_normal(n: Net, rng: &mut impl Rng) -> f64 {
    let z: f64 = rng.sample(rand_distr::StandardNormal);
    (n.mean_ms + n.sd_ms * z).abs()
}

/// An event queue sized for this experiment: its calendar spans the
/// longest sleep plus a few of every delay around it.
pub fn queue<E: super::queue::Timed>(
    experiment: &Experiment,
    backoff: Option<Backoff>,
) -> Calendar<E> {
    let spread = |n: Net| n.mean_ms + 4.0 * n.sd_ms;
    let mut horizon = 3.0 * spread(experiment.net);
    if let Some(backoff) = backoff {
        horizon += backoff.cap.as_secs_f64() * 1e3;
    }
    if let Model::Busy { mean_ms, sd_ms } = experiment.model {
        horizon += spread(Net { mean_ms, sd_ms });
    }
    Calendar::new(horizon)
}

/// Used by the `TICK` check of both models.
pub fn tick(count: u64, events: &dyn Fn(u64)) {
    if count.is_multiple_of(TICK) {
        events(TICK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
