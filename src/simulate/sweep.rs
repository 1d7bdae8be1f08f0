//! Runs every repetition of every (strategy, client count) pair on all
//! cores and reduces them to means and standard deviations. Each
//! repetition's generator is derived from (seed, strategy name, clients,
//! rep), and each group is reduced in repetition order, so results do not
//! depend on the number of threads or their timing.
//!
//! Nothing grows with `--reps`: work is handed out as numbered chunks of
//! repetitions (a chunk's coordinates follow from its number), finished
//! chunks are folded into running sums (Welford) in chunk order, and a
//! chunk finished early waits in a window of bounded size for the ones
//! before it.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::model::{Experiment, Outcome};
use super::repetition::simulate;
use crate::strategy::Backoff;

/// Repetitions per chunk: small enough to balance two cores over a few
/// hundred repetitions, large enough that the lock is taken rarely.
const CHUNK: u32 = 16;
/// Chunks that may be handed out beyond the oldest unmerged one: bounds the
/// finished chunks kept waiting (~0.5 KiB each) when one chunk is slow.
const WINDOW: u64 = 4096;

/// A strategy in the comparison; `backoff: None` is the no-backoff baseline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contender {
    pub name: &'static str,
    pub backoff: Option<Backoff>,
}

/// The summary of one (strategy, client count) pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub strategy: &'static str,
    pub clients: u32,
    pub reps: u32,
    pub work_mean: f64,
    pub work_sd: f64,
    pub time_ms_mean: f64,
    pub time_ms_sd: f64,
    /// The server's busy time over the elapsed time, averaged over the
    /// repetitions (busy model only).
    pub utilisation_mean: f64,
    /// Repetitions stopped at `--max-work` (their work and time are lower bounds).
    pub capped: u32,
}

/// What the sweep tells its progress bar.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// Repetitions finished.
    Reps(u64),
    /// Simulated events, reported while a long repetition runs.
    Events(u64),
}

/// Runs the sweep; `progress` hears of finished repetitions and of events.
pub fn sweep(
    experiment: &Experiment,
    contenders: &[Contender],
    clients: &[u32],
    reps: u32,
    seed: u64,
    threads: usize,
    progress: &(dyn Fn(Progress) + Sync),
) -> Vec<Summary> {
    let plan = Chunks {
        contenders,
        clients,
        reps,
    };
    let shared = Shared {
        state: Mutex::new(Reducer {
            next: 0,
            merged: 0,
            pending: BTreeMap::new(),
            work: Running::default(),
            time: Running::default(),
            utilisation: Running::default(),
            capped: 0,
            rows: Vec::with_capacity(contenders.len() * clients.len()),
            failed: false,
        }),
        merged: Condvar::new(),
    };
    let total = plan.total();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let _alarm = Alarm(&shared);
                while let Some(chunk) = shared.take(total) {
                    let (c, n, reps) = plan.coordinates(chunk);
                    let outcomes: Vec<Outcome> = reps
                        .clone()
                        .map(|rep| {
                            let seed = task_seed(seed, contenders[c].name, n, rep);
                            let mut rng = ChaCha8Rng::seed_from_u64(seed);
                            let events = |count| progress(Progress::Events(count));
                            simulate(experiment, n, contenders[c].backoff, &mut rng, &events)
                        })
                        .collect();
                    progress(Progress::Reps(u64::from(reps.end - reps.start)));
                    shared.finish(&plan, chunk, outcomes);
                }
            });
        }
    });
    shared.lock().rows.split_off(0)
}

/// Which repetitions chunk number `i` holds: groups in (strategy, clients)
/// order, each split into chunks of CHUNK repetitions.
struct Chunks<'a> {
    contenders: &'a [Contender],
    clients: &'a [u32],
    reps: u32,
}

impl Chunks<'_> {
    fn per_group(&self) -> u64 {
        u64::from(self.reps.div_ceil(CHUNK))
    }

    fn total(&self) -> u64 {
        (self.contenders.len() * self.clients.len()) as u64 * self.per_group()
    }

    /// (contender index, client count, repetitions) of chunk `i`.
    fn coordinates(&self, i: u64) -> (usize, u32, std::ops::Range<u32>) {
        let group = (i / self.per_group()) as usize;
        let first = (i % self.per_group()) as u32 * CHUNK;
        let (c, k) = (group / self.clients.len(), group % self.clients.len());
        (
            c,
            self.clients[k],
            first..first.saturating_add(CHUNK).min(self.reps),
        )
    }

    fn is_last_of_group(&self, i: u64) -> bool {
        (i + 1).is_multiple_of(self.per_group())
    }
}

struct Shared {
    state: Mutex<Reducer>,
    /// Signalled whenever the merge point moves (or a worker failed).
    merged: Condvar,
}

struct Reducer {
    /// The next chunk to hand out, and how many have been folded in.
    next: u64,
    merged: u64,
    /// Finished chunks waiting for an earlier one.
    pending: BTreeMap<u64, Vec<Outcome>>,
    /// The group being folded.
    work: Running,
    time: Running,
    utilisation: Running,
    capped: u32,
    rows: Vec<Summary>,
    /// A worker panicked: the others stop instead of waiting for its chunk.
    failed: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Reducer> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next chunk to run, waiting while the window is full; None at the end.
    fn take(&self, total: u64) -> Option<u64> {
        let mut state = self.lock();
        while !state.failed && state.next < total && state.next >= state.merged + WINDOW {
            state = self
                .merged
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if state.failed || state.next >= total {
            return None;
        }
        state.next += 1;
        Some(state.next - 1)
    }

    /// Folds in every finished chunk that is next in order.
    fn finish(&self, plan: &Chunks, chunk: u64, outcomes: Vec<Outcome>) {
        let mut state = self.lock();
        state.pending.insert(chunk, outcomes);
        while let Some(outcomes) = {
            let merged = state.merged;
            state.pending.remove(&merged)
        } {
            for o in &outcomes {
                state.work.push(o.writes as f64);
                state.time.push(o.completion_ms);
                let busy = if o.completion_ms > 0.0 {
                    o.busy_ms / o.completion_ms
                } else {
                    0.0
                };
                state.utilisation.push(busy);
                state.capped += u32::from(o.capped);
            }
            if plan.is_last_of_group(state.merged) {
                let (c, n, _) = plan.coordinates(state.merged);
                let (work, time) = (state.work.take(), state.time.take());
                let utilisation = state.utilisation.take();
                let capped = std::mem::take(&mut state.capped);
                state.rows.push(Summary {
                    strategy: plan.contenders[c].name,
                    clients: n,
                    reps: plan.reps,
                    work_mean: work.mean,
                    work_sd: work.sd(),
                    time_ms_mean: time.mean,
                    time_ms_sd: time.sd(),
                    utilisation_mean: utilisation.mean,
                    capped,
                });
            }
            state.merged += 1;
        }
        drop(state);
        self.merged.notify_all();
    }
}

/// Wakes the other workers if this one unwinds, so none waits forever for
/// a chunk that will never be folded in (the scope then re-raises the panic).
struct Alarm<'a>(&'a Shared);

impl Drop for Alarm<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().failed = true;
            self.0.merged.notify_all();
        }
    }
}

/// Welford's running mean and sum of squared deviations: one pass, no
/// list of values, and steady for millions of them.
#[derive(Clone, Copy, Debug, Default)]
struct Running {
    count: u64,
    mean: f64,
    squares: f64,
}

impl Running {
    fn push(&mut self, x: f64) {
        self.count += 1;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.squares += delta * (x - self.mean);
    }

    /// The sample standard deviation (0 for a single value).
    fn sd(&self) -> f64 {
        if self.count > 1 {
            (self.squares / (self.count - 1) as f64).sqrt()
        } else {
            0.0
        }
    }

    /// This group's statistics, leaving a fresh start for the next.
    fn take(&mut self) -> Running {
        std::mem::take(self)
    }
}

/// SplitMix64 over the task's coordinates: independent streams per task.
/// The strategy enters by its name, not its place in the list, so
/// `--jitter full` and the `full` row of `--jitter all` draw alike.
fn task_seed(seed: u64, strategy: &str, clients: u32, rep: u32) -> u64 {
    let mut x = seed;
    for part in [fnv1a(strategy), u64::from(clients), u64::from(rep)] {
        x = x.wrapping_add(part).wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
    }
    x
}

/// FNV-1a: a fixed hash of the name (std's hasher may change between releases).
fn fnv1a(name: &str) -> u64 {
    name.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::Jitter;
    use std::time::Duration;

    use crate::simulate::model::{Model, Net};

    const NET: Experiment = Experiment {
        model: Model::Occ,
        net: Net {
            mean_ms: 10.0,
            sd_ms: 2.0,
        },
        max_work: u64::MAX,
    };

    /// The sweep as the tests call it: the post's model.
    fn sweep(
        contenders: &[Contender],
        clients: &[u32],
        reps: u32,
        experiment: Experiment,
        seed: u64,
        threads: usize,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Vec<Summary> {
        super::sweep(
            &experiment,
            contenders,
            clients,
            reps,
            seed,
            threads,
            progress,
        )
    }

    fn contender(name: &'static str, jitter: Jitter, base_ms: u64) -> Contender {
        let base = Duration::from_millis(base_ms);
        Contender {
            name,
            backoff: Some(Backoff {
                jitter,
                base,
                cap: Duration::from_secs(2),
                factor: 2.0,
            }),
        }
    }

    fn post() -> Vec<Contender> {
        vec![
            contender("none", Jitter::None, 10),
            contender("full", Jitter::Full, 10),
            contender("equal", Jitter::Equal, 10),
            contender("decorrelated", Jitter::Decorrelated, 5),
            Contender {
                name: "no-backoff",
                backoff: None,
            },
        ]
    }

    fn row<'a>(rows: &'a [Summary], name: &str, clients: u32) -> &'a Summary {
        rows.iter()
            .find(|r| r.strategy == name && r.clients == clients)
            .unwrap()
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        // 37 repetitions: several chunks per group, the last one short.
        let one = sweep(&post(), &[5, 12], 37, NET, 7, 1, &|_| {});
        let three = sweep(&post(), &[5, 12], 37, NET, 7, 3, &|_| {});
        assert_eq!(one, three);
        assert_ne!(one, sweep(&post(), &[5, 12], 37, NET, 8, 1, &|_| {}));
    }

    #[test]
    fn the_busy_models_results_do_not_depend_on_the_thread_count() {
        let busy = Experiment {
            model: Model::Busy {
                mean_ms: 10.0,
                sd_ms: 4.0,
            },
            ..NET
        };
        let one = sweep(&post(), &[5, 12], 37, busy, 7, 1, &|_| {});
        assert_eq!(one, sweep(&post(), &[5, 12], 37, busy, 7, 3, &|_| {}));
        assert_ne!(one, sweep(&post(), &[5, 12], 37, NET, 7, 1, &|_| {}));
        assert!(
            one.iter()
                .all(|r| r.utilisation_mean > 0.0 && r.capped == 0)
        );
    }

    #[test]
    fn a_strategys_results_do_not_depend_on_its_place_in_the_list() {
        let all = sweep(&post(), &[5, 12], 4, NET, 3, 2, &|_| {});
        let full = contender("full", Jitter::Full, 10);
        for alone in [vec![full], vec![post()[3], full]] {
            let rows = sweep(&alone, &[5, 12], 4, NET, 3, 2, &|_| {});
            for clients in [5, 12] {
                assert_eq!(row(&rows, "full", clients), row(&all, "full", clients));
            }
        }
    }

    fn running(values: &[f64]) -> Running {
        let mut r = Running::default();
        values.iter().for_each(|&v| r.push(v));
        r
    }

    #[test]
    fn mean_and_sd_are_the_sample_statistics() {
        let r = running(&[2.0, 4.0, 6.0]);
        assert_eq!((r.mean, r.sd()), (4.0, 2.0));
        let one = running(&[3.0]);
        assert_eq!((one.mean, one.sd()), (3.0, 0.0));
        // Large values with a small spread: a naive sum of squares loses it all.
        let r = running(&[1e9 + 4.0, 1e9 + 7.0, 1e9 + 13.0, 1e9 + 16.0]);
        assert!((r.mean - (1e9 + 10.0)).abs() < 1e-6 && (r.sd() - 30f64.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn chunks_cover_every_repetition_once_in_order() {
        let post = post();
        for reps in [1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5] {
            let plan = Chunks {
                contenders: &post[..2],
                clients: &[3, 7, 9],
                reps,
            };
            let mut seen = Vec::new();
            for i in 0..plan.total() {
                let (c, n, range) = plan.coordinates(i);
                seen.extend(range.map(|rep| (c, n, rep)));
            }
            let expected: Vec<_> = (0..2)
                .flat_map(|c| [3, 7, 9].map(|n| (c, n)))
                .flat_map(|(c, n)| (0..reps).map(move |rep| (c, n, rep)))
                .collect();
            assert_eq!(seen, expected, "{reps} reps");
        }
        let huge = Chunks {
            contenders: &post,
            clients: &[100_000; 19],
            reps: u32::MAX,
        };
        let (c, n, range) = huge.coordinates(huge.total() - 1);
        assert_eq!((c, n, range.end), (4, 100_000, u32::MAX));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(6))]

        /// The post's qualitative claims, for any seed, at a size that runs in
        /// milliseconds: jitter cuts work against plain exponential backoff,
        /// full jitter does about the least, plain exponential backoff takes
        /// longest, and without backoff work grows about quadratically.
        #[test]
        fn the_posts_claims_hold_at_small_sizes(seed in proptest::prelude::any::<u64>()) {
            let rows = sweep(&post(), &[20, 40], 30, NET, seed, 2, &|_| {});
            for clients in [20, 40] {
                let work = |name| row(&rows, name, clients).work_mean;
                let time = |name| row(&rows, name, clients).time_ms_mean;
                for jittered in ["full", "equal", "decorrelated"] {
                    proptest::prop_assert!(work(jittered) < work("none"), "{jittered} at {clients}");
                    proptest::prop_assert!(time(jittered) < time("none"), "{jittered} at {clients}");
                }
                proptest::prop_assert!(work("full") <= work("equal") * 1.05);
            }
            let baseline = |clients| row(&rows, "no-backoff", clients).work_mean;
            let growth = baseline(40) / baseline(20);
            proptest::prop_assert!((2.5..5.0).contains(&growth), "no-backoff work grew {}x for 2x clients", growth);
        }
    }

    /// The figures the post and its published simulator give at 100 clients.
    #[test]
    fn agrees_with_the_published_simulator_at_100_clients() {
        let rows = sweep(&post(), &[100], 40, NET, 1, 2, &|_| {});
        let work = |name| row(&rows, name, 100).work_mean;
        let time = |name| row(&rows, name, 100).time_ms_mean;
        assert!(
            (760.0..840.0).contains(&work("full")),
            "full jitter: {} writes",
            work("full")
        );
        assert!(work("equal") > work("full") && work("equal") < work("full") * 1.1);
        assert!(
            work("none") > 2.0 * work("full"),
            "none {} vs full {}",
            work("none"),
            work("full")
        );
        assert!(
            time("none") > 10.0 * time("full"),
            "none {} ms vs full {} ms",
            time("none"),
            time("full")
        );
    }
}
