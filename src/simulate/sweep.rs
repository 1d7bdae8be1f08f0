//! Runs every repetition of every (strategy, client count) pair on all
//! cores and reduces them to means and standard deviations. Each
//! repetition's generator is derived from (seed, strategy, clients, rep),
//! so results do not depend on the number of threads or their timing.

use std::sync::atomic::{AtomicUsize, Ordering};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::model::{Net, Outcome, simulate};
use crate::strategy::Backoff;

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
}

/// Runs the sweep; `progress` is called once per finished repetition.
pub fn sweep(
    contenders: &[Contender],
    clients: &[u32],
    reps: u32,
    net: Net,
    seed: u64,
    threads: usize,
    progress: &(dyn Fn() + Sync),
) -> Vec<Summary> {
    let tasks: Vec<(usize, u32, u32)> = (0..contenders.len())
        .flat_map(|c| {
            clients
                .iter()
                .flat_map(move |&n| (0..reps).map(move |rep| (c, n, rep)))
        })
        .collect();
    let mut outcomes = vec![Outcome::default(); tasks.len()];
    let next = AtomicUsize::new(0);
    // Workers take one task at a time: repetitions differ in cost by orders
    // of magnitude (10 clients against 190 without backoff).
    let finished: Vec<Vec<(usize, Outcome)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&(c, n, rep)) = tasks.get(i) else {
                            return done;
                        };
                        let seed = task_seed(seed, contenders[c].name, n, rep);
                        let mut rng = ChaCha8Rng::seed_from_u64(seed);
                        done.push((i, simulate(n, contenders[c].backoff, net, &mut rng)));
                        progress();
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_default())
            .collect()
    });
    for (i, outcome) in finished.into_iter().flatten() {
        outcomes[i] = outcome;
    }
    outcomes
        .chunks(reps as usize)
        .zip(tasks.chunks(reps as usize))
        .map(|(group, task)| {
            let (c, n, _) = task[0];
            let (work_mean, work_sd) = mean_sd(group.iter().map(|o| o.writes as f64));
            let (time_ms_mean, time_ms_sd) = mean_sd(group.iter().map(|o| o.completion_ms));
            Summary {
                strategy: contenders[c].name,
                clients: n,
                reps,
                work_mean,
                work_sd,
                time_ms_mean,
                time_ms_sd,
            }
        })
        .collect()
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

/// Mean and sample standard deviation (0 for a single value).
fn mean_sd(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = values.clone().count() as f64;
    let mean = values.clone().sum::<f64>() / n;
    let var = if n > 1.0 {
        values.map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
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
        let one = sweep(&post(), &[5, 12], 4, NET, 7, 1, &|| {});
        let three = sweep(&post(), &[5, 12], 4, NET, 7, 3, &|| {});
        assert_eq!(one, three);
        assert_ne!(one, sweep(&post(), &[5, 12], 4, NET, 8, 1, &|| {}));
    }

    #[test]
    fn a_strategys_results_do_not_depend_on_its_place_in_the_list() {
        let all = sweep(&post(), &[5, 12], 4, NET, 3, 2, &|| {});
        let full = contender("full", Jitter::Full, 10);
        for alone in [vec![full], vec![post()[3], full]] {
            let rows = sweep(&alone, &[5, 12], 4, NET, 3, 2, &|| {});
            for clients in [5, 12] {
                assert_eq!(row(&rows, "full", clients), row(&all, "full", clients));
            }
        }
    }

    #[test]
    fn mean_and_sd_are_the_sample_statistics() {
        assert_eq!(mean_sd([2.0, 4.0, 6.0].into_iter()), (4.0, 2.0));
        assert_eq!(mean_sd([3.0].into_iter()), (3.0, 0.0));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(6))]

        /// The post's qualitative claims, for any seed, at a size that runs in
        /// milliseconds: jitter cuts work against plain exponential backoff,
        /// full jitter does about the least, plain exponential backoff takes
        /// longest, and without backoff work grows about quadratically.
        #[test]
        fn the_posts_claims_hold_at_small_sizes(seed in proptest::prelude::any::<u64>()) {
            let rows = sweep(&post(), &[20, 40], 30, NET, seed, 2, &|| {});
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
        let rows = sweep(&post(), &[100], 40, NET, 1, 2, &|| {});
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
