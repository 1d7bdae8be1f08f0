//! The throttle end to end on a real file: what a run is told before each
//! attempt, what it writes, and state it must not trust.

use std::path::Path;
use std::time::Duration;

use super::record::{decode, encode};
use super::window::Tally;
use super::*;

const P: Params = Params {
    k: 2.0,
    window_ms: 120_000,
};

fn settings() -> Settings {
    Settings {
        name: "api".into(),
        params: P,
        store: Store::Host,
        timeout: Duration::from_millis(100),
        exit_code: 75,
    }
}

fn throttle(dir: &Path) -> Throttle {
    Throttle {
        settings: settings(),
        kind: Kind::Unopened(dir.to_owned()),
        seen: None,
    }
}

fn record(dir: &Path) -> Option<Window> {
    decode(&std::fs::read(dir.join(".throttles").join("api")).ok()?)
}

/// The window a record holds now: `requests` and `accepts` in the fixed
/// window of the host's now.
fn write_now(dir: &Path, requests: u64, accepts: u64) {
    let now = now_ns() / 1_000_000;
    let window = Window {
        start_ms: now - now % P.window_ms,
        current: Tally { requests, accepts },
        previous: Tally::default(),
    };
    let path = dir.join(".throttles").join("api");
    crate::platform::private::private_dir(dir).unwrap();
    crate::platform::private::private_dir(path.parent().unwrap()).unwrap();
    std::fs::write(&path, encode(&window)).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

#[test]
fn every_attempt_is_counted_and_an_accept_told() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("retry");
    let mut t = throttle(&dir);
    assert_eq!(t.seen(), None);
    assert_eq!(t.ask(None, 0.5), Asked::default());
    // Not accepted: nothing to write.
    assert_eq!(t.tell(Some(false)), None);
    assert_eq!(
        record(&dir).unwrap().current,
        Tally {
            requests: 1,
            accepts: 0
        }
    );
    // The outcome travels with the next ask; the last one's is told.
    assert!(!t.ask(Some(true), 0.5).rejected);
    assert_eq!(t.tell(Some(true)), None);
    assert_eq!(
        record(&dir).unwrap().current,
        Tally {
            requests: 2,
            accepts: 2
        }
    );
    let seen = t.seen().unwrap();
    assert_eq!(
        (seen.requests, seen.accepts, seen.probability),
        (2.0, 2.0, 0.0)
    );
}

/// 100 requests and no accept in the window: the rule's probability is
/// 100/101 and up, so with a fixed seed nearly every attempt is rejected,
/// and the same ones each time.
#[test]
fn a_throttle_that_saw_no_accepts_rejects_most_attempts_reproducibly() {
    let run = || {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("retry");
        write_now(&dir, 100, 0);
        let mut t = throttle(&dir);
        let mut rng = crate::strategy::rng(Some(7));
        let decided: Vec<bool> = (0..50)
            .map(|_| {
                let asked = t.ask(None, crate::strategy::unit(&mut rng));
                assert!(asked.probability > 0.98, "{asked:?}");
                assert_eq!(asked.warning, None);
                asked.rejected
            })
            .collect();
        assert_eq!(record(&dir).unwrap().current.requests, 150);
        decided
    };
    let first = run();
    let rejected = first.iter().filter(|&&r| r).count();
    assert!(rejected >= 45, "{rejected} of 50 rejected");
    assert_eq!(first, run(), "the same seed decided otherwise");
}

#[test]
fn a_record_that_cannot_be_trusted_is_one_warning_and_reset() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("retry");
    // Huge counts, sealed as retry seals a record.
    write_now(&dir, MAX_COUNT + 1, 0);
    let mut t = throttle(&dir);
    let asked = t.ask(None, 0.0);
    assert!(!asked.rejected);
    let warning = asked.warning.unwrap();
    assert!(
        warning.starts_with("--throttle api: ")
            && warning.contains(&format!(
                "holds a count of {}, over {MAX_COUNT}",
                MAX_COUNT + 1
            ))
            && warning.ends_with("; reset, and this run goes without the throttle"),
        "{warning}"
    );
    // Said once: the run goes on without it, writing nothing more.
    assert_eq!(t.ask(None, 0.0), Asked::default());
    assert_eq!(t.tell(Some(true)), None);
    assert_eq!(record(&dir), Some(Window::default()));
    // The next run starts afresh.
    let mut next = throttle(&dir);
    assert_eq!(next.ask(None, 0.0), Asked::default());
    assert_eq!(record(&dir).unwrap().current.requests, 1);
}

#[cfg(unix)]
#[test]
fn a_symlink_or_a_fifo_in_its_place_is_one_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("retry");
    let throttles = dir.join(".throttles");
    crate::platform::private::private_dir(&dir).unwrap();
    crate::platform::private::private_dir(&throttles).unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::write(&elsewhere, "").unwrap();
    std::os::unix::fs::symlink(&elsewhere, throttles.join("api")).unwrap();
    let mut t = throttle(&dir);
    let warning = t.ask(None, 0.0).warning.unwrap();
    assert!(warning.contains("symlink"), "{warning}");
    assert!(
        warning.ends_with("; running without the throttle"),
        "{warning}"
    );
    assert_eq!(t.ask(None, 0.0), Asked::default());
    std::fs::remove_file(throttles.join("api")).unwrap();
    nix::unistd::mkfifo(&throttles.join("api"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let started = std::time::Instant::now();
    let warning = throttle(&dir).ask(None, 0.0).warning.unwrap();
    assert!(warning.contains("not a regular file"), "{warning}");
    assert!(started.elapsed() < Duration::from_secs(2), "a FIFO held it");
}

#[test]
fn names_are_plain_file_names() {
    assert_eq!(parse_name("api-1.b_c").as_deref(), Ok("api-1.b_c"));
    for bad in ["", "a/b", "..", ".x"] {
        let error = parse_name(bad).unwrap_err();
        assert!(error.starts_with("a throttle name is"), "{error}");
    }
}

#[test]
fn a_window_ahead_by_more_than_a_window_is_not_trusted() {
    let now = 1_792_567_690_000;
    let at = |start_ms| Window {
        start_ms,
        ..Window::default()
    };
    assert_eq!(distrust(&at(now - 5), &P, now), None);
    // A clock that went back a little: the counts are recent to it.
    assert_eq!(distrust(&at(now + P.window_ms), &P, now), None);
    let why = distrust(&at(now + P.window_ms + 1000), &P, now).unwrap();
    assert!(
        why.starts_with("starts its window 121 s ahead of the clock"),
        "{why}"
    );
    let huge = Window {
        previous: Tally {
            requests: 0,
            accepts: u64::MAX,
        },
        ..at(now)
    };
    assert!(
        distrust(&huge, &P, now)
            .unwrap()
            .contains("over 4294967296")
    );
}

/// `bash bench/throttle.sh` runs this in release: what one decision costs
/// on the host's file (the lock, a read, the rule, a write, the unlock,
/// the outcome before it told with it), each of `RETRY_BENCH_DECISIONS`
/// (1,000) timed alone; median and p99.
#[test]
#[ignore = "a measurement, for bench/throttle.sh"]
fn cost_of_one_host_decision() {
    let n: usize = std::env::var("RETRY_BENCH_DECISIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let tmp = tempfile::tempdir().unwrap();
    let mut t = throttle(&tmp.path().join("retry"));
    assert_eq!(t.ask(None, 0.5), Asked::default());
    let took: Vec<Duration> = (0..n)
        .map(|i| {
            let started = std::time::Instant::now();
            let asked = t.ask(Some(i % 2 == 0), 0.5);
            let took = started.elapsed();
            assert_eq!(asked.warning, None);
            took
        })
        .collect();
    let (median, p99) = crate::state::store::median_and_p99(took);
    println!("host throttle: {median:.1} us median, {p99:.1} us p99 per decision ({n} in a row)");
}
