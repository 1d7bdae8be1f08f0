//! One repetition of the chosen model: the one place that knows both
//! models' code, above them, so that `model.rs` (what they share) never
//! imports them back.

use rand::Rng;

use super::model::{Experiment, Model, Net, Outcome};
use crate::strategy::Backoff;

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
