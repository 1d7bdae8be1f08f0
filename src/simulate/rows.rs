//! What the fleet models' tables (`outage/`, `throttle/`) share: every
//! row's repetitions on all cores, and the table printed. Repetition r of
//! every row starts from the same seed, so the rows of a repetition meet
//! the same fleet (the same phases), and a difference between rows is the
//! row's; the outcomes do not depend on the number of threads.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::table::Format;

/// How a fleet model's table is run: `--reps`, `--seed`, `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Repetitions of each row.
    pub reps: u32,
    /// `--seed` (a random one if absent).
    pub seed: Option<u64>,
    pub format: Format,
}

/// `--seed`, or a random one.
pub fn seed(seed: Option<u64>) -> u64 {
    seed.unwrap_or_else(|| rand::RngExt::random(&mut crate::strategy::rng(None)))
}

/// The cores to run on.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Each row's `reps` outcomes of `one`, in the rows' order, computed on
/// `threads` threads.
pub fn repetitions<T: Sync, O: Clone + Default + Send>(
    rows: &[T],
    reps: u32,
    seed: u64,
    threads: usize,
    one: impl Fn(&T, &mut ChaCha8Rng) -> O + Sync,
) -> Vec<Vec<O>> {
    let reps = (reps as usize).max(1);
    let jobs = rows.len() * reps;
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(vec![O::default(); jobs]);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, jobs.max(1)) {
            scope.spawn(|| {
                loop {
                    let job = next.fetch_add(1, Ordering::Relaxed);
                    if job >= jobs {
                        break;
                    }
                    let (row, rep) = (&rows[job / reps], job % reps);
                    let mut rng = ChaCha8Rng::seed_from_u64(rep_seed(seed, rep as u64));
                    let outcome = one(row, &mut rng);
                    if let Ok(mut all) = outcomes.lock() {
                        all[job] = outcome;
                    }
                }
            });
        }
    });
    let outcomes = outcomes.into_inner().unwrap_or_else(|e| e.into_inner());
    outcomes.chunks(reps).map(<[O]>::to_vec).collect()
}

/// Repetition `rep`'s seed: splitmix64 of the two, so neighbouring seeds
/// give unrelated fleets.
fn rep_seed(seed: u64, rep: u64) -> u64 {
    let mut x = seed.wrapping_add(rep.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Runs a table (`table`, from the seed and the threads) and prints its
/// rows (`render`): the exit status, 1 if stdout would not take them.
pub fn run<L>(
    run: &Run,
    table: impl FnOnce(u64, usize) -> Vec<L>,
    render: fn(&[L], Format) -> String,
) -> u8 {
    let text = render(&table(seed(run.seed), threads()), run.format);
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_keep_the_rows_order_on_any_number_of_threads() {
        let rows = [10u64, 20, 30];
        let run = |threads| {
            repetitions(&rows, 4, 7, threads, |row, rng| {
                row + rand::RngExt::random_range(rng, 0..5u64)
            })
        };
        let one = run(1);
        assert_eq!(one.len(), 3);
        assert!(one.iter().all(|reps| reps.len() == 4));
        for (row, reps) in rows.iter().zip(&one) {
            assert!(reps.iter().all(|o| (*row..row + 5).contains(o)), "{one:?}");
        }
        assert_eq!(one, run(3));
        // Repetition r of every row drew from the same generator.
        let draws: Vec<u64> = (0..3).map(|i| one[i][2] - rows[i]).collect();
        assert!(draws.iter().all(|d| *d == draws[0]), "{one:?}");
    }

    #[test]
    fn neighbouring_seeds_are_unrelated() {
        assert_ne!(rep_seed(1, 0), rep_seed(2, 0));
        assert_ne!(rep_seed(1, 0), rep_seed(1, 1));
        assert_eq!(rep_seed(5, 3), rep_seed(5, 3));
    }
}
