//! `--splay` and `--splay-stable`: the delay before the first attempt, so
//! that a fleet whose cron fires at one mark does not reach its dependency
//! at one instant (systemd's `RandomizedDelaySec=`).
//!
//! A random splay is drawn from a stream of its own: with `--seed`, the
//! seed's ChaCha8 generator on stream 1, where the backoff's sleeps, the
//! throttle's draws and `--plan` read stream 0, so a seeded schedule is
//! the same with or without a splay. A stable splay (`FixedRandomDelay=`)
//! is no draw: a fixed hash of the host's name and the job places each
//! host at a slot of its own, the same run after run.

use std::ffi::OsStr;
use std::time::Duration;

use rand::SeedableRng;

/// The splay a run was given, validated by `cli/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Splay {
    /// `--splay`: the delay is in [0, this).
    pub max: Duration,
    /// `--splay-stable`: the delay is this host's slot of the job (`slot`),
    /// the same each run; else drawn anew each run.
    pub stable: bool,
}

/// The delay drawn from a stream of its own, `STREAM`, of the seed's
/// generator (so stream 0, the backoff's, is untouched).
const STREAM: u64 = 1;

impl Splay {
    /// The delay before the first attempt: the stable slot of `job` on
    /// this host, or a draw from `seed`'s splay stream (the OS's entropy
    /// without one).
    pub fn delay<'a>(
        &self,
        seed: Option<u64>,
        job: impl IntoIterator<Item = &'a OsStr>,
    ) -> Duration {
        let share = match self.stable {
            // A host the OS names not (never seen) still gets the job's slot.
            true => unit_of(slot(&crate::platform::host_name().unwrap_or_default(), job)),
            false => {
                let mut rng = match seed {
                    Some(seed) => rand_chacha::ChaCha8Rng::seed_from_u64(seed),
                    None => rand::make_rng(),
                };
                rng.set_stream(STREAM);
                crate::strategy::unit(&mut rng)
            }
        };
        scale(self.max, share)
    }
}

/// `max × share`, rounded down to the millisecond (a log line shows it
/// whole), and below `max` for any share in [0, 1).
fn scale(max: Duration, share: f64) -> Duration {
    let ms = (max.as_secs_f64() * 1e3 * share).floor();
    let ms = if ms.is_finite() && ms > 0.0 {
        ms as u64
    } else {
        0
    };
    Duration::from_millis(ms).min(max.saturating_sub(Duration::from_nanos(1)))
}

/// A hash's top 53 bits as a share in [0, 1).
fn unit_of(hash: u64) -> f64 {
    (hash >> 11) as f64 / (1u64 << 53) as f64
}

/// The stable slot of a job on a host: FNV-1a 64 of the host's name and
/// the job's words, each ended by a NUL (no word holds one, so `a b` and
/// `ab` differ), finished by SplitMix64's mixer so that names differing in
/// their last letter land far apart. Written here, never std's
/// `DefaultHasher`, whose algorithm may change between Rust releases: a
/// host's slot must not. Bytes as the OS gives them (WTF-8 on Windows,
/// UTF-8 for any text), so one name has one slot on every platform.
pub fn slot<'a>(host: &OsStr, job: impl IntoIterator<Item = &'a OsStr>) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    let mut add = |word: &OsStr| {
        for &byte in word.as_encoded_bytes().iter().chain(&[0]) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
        }
    };
    add(host);
    job.into_iter().for_each(add);
    mix(hash)
}

/// SplitMix64's finaliser: every input bit moves about half the output's.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    fn fnv1a(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }

    #[test]
    fn the_hash_matches_published_vectors() {
        // FNV-1a 64 of "" and "a" and "foobar" (the reference's vectors).
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
        // SplitMix64's first output from seed 0 is mix(0x9e3779b97f4a7c15).
        assert_eq!(mix(0x9e37_79b9_7f4a_7c15), 0xe220_a839_7b1d_cdaf);
        // The slot: the words each ended by a NUL, then mixed.
        let slot = slot(OsStr::new("a"), [OsStr::new("b")]);
        assert_eq!(slot, mix(fnv1a(b"a\0b\0")));
    }

    #[test]
    fn a_host_keeps_its_slot_and_the_job_and_host_move_it() {
        let of = |host: &str, job: &[&str]| slot(OsStr::new(host), job.iter().map(OsStr::new));
        // Fixed forever: a changed value moves every host of every fleet.
        assert_eq!(of("web-01", &["backup", "--all"]), 0xf5d8_be65_723d_60d7);
        assert_eq!(of("web-01", &["backup"]), of("web-01", &["backup"]));
        assert_ne!(of("web-01", &["backup"]), of("web-02", &["backup"]));
        assert_ne!(of("web-01", &["backup"]), of("web-01", &["backup", "x"]));
        assert_ne!(of("web", &["01backup"]), of("web01", &["backup"]));
    }

    #[test]
    fn a_fleet_of_similar_names_spreads_evenly() {
        // 1,000 hosts named host-0001..host-1000 in 10 slots of a splay:
        // each slot holds about 100 of them (a hash without the mixer
        // would bunch names that differ in their last letters).
        let mut slots = [0u32; 10];
        for h in 1..=1000 {
            let name = format!("host-{h:04}");
            let delay = scale(
                S * 10,
                unit_of(slot(OsStr::new(&name), [OsStr::new("job")])),
            );
            assert!(delay < S * 10, "{delay:?}");
            slots[delay.as_secs() as usize] += 1;
        }
        assert!(slots.iter().all(|&n| (60..=140).contains(&n)), "{slots:?}");
    }

    #[test]
    fn a_seeded_draw_is_reproducible_and_in_range() {
        let splay = Splay {
            max: S * 30,
            stable: false,
        };
        let draw = |seed| splay.delay(seed, [OsStr::new("job")]);
        assert_eq!(draw(Some(7)), draw(Some(7)));
        let draws: Vec<Duration> = (0..200).map(|seed| draw(Some(seed))).collect();
        assert!(draws.iter().all(|&d| d < S * 30));
        // Spread over the range, not stuck at one end.
        assert!(draws.iter().any(|&d| d < S * 5) && draws.iter().any(|&d| d > S * 25));
        // Another stream than the backoff's: not the schedule's first draw.
        let first = crate::strategy::unit(&mut crate::strategy::rng(Some(7)));
        assert_ne!(draw(Some(7)), scale(S * 30, first));
        // Without a seed, the OS's entropy: still in range.
        assert!(draw(None) < S * 30);
    }

    #[test]
    fn a_stable_splay_is_this_hosts_slot_whatever_the_seed() {
        let splay = Splay {
            max: S * 300,
            stable: true,
        };
        let job = || [OsStr::new("backup"), OsStr::new("--all")];
        let host = crate::platform::host_name().unwrap_or_default();
        let want = scale(S * 300, unit_of(slot(&host, job())));
        assert_eq!(splay.delay(Some(1), job()), want);
        assert_eq!(splay.delay(Some(2), job()), want);
        assert_eq!(splay.delay(None, job()), want);
    }

    #[test]
    fn the_delay_stays_below_the_splay() {
        assert_eq!(scale(S, 0.0), Duration::ZERO);
        assert!(scale(S, 0.999_999_999) < S);
        assert_eq!(scale(Duration::from_millis(1), 0.9), Duration::ZERO);
        assert_eq!(scale(S * 10, 0.5), S * 5);
        assert!(unit_of(u64::MAX) < 1.0);
    }

    #[test]
    fn this_host_has_a_name() {
        let name = crate::platform::host_name().expect("a host name");
        assert!(!name.is_empty());
        assert_eq!(crate::platform::host_name(), Some(name));
    }
}
