//! The budget's settings, records and status, end to end on a real file.

use super::*;
use std::time::{Duration, Instant};

pub(super) const P: Params = Params {
    tokens: 20,
    cost: 5,
    throttle_cost: 2,
    refill: 0.0,
};
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(250);

fn settings(name: &str) -> Settings {
    Settings {
        name: name.into(),
        params: P,
        size_given: true,
        store: Store::Host,
        timeout: DEFAULT_TIMEOUT,
    }
}

#[test]
fn names_are_plain_file_names() {
    for good in ["ci", "deploy-eu.1", "A_b", &"x".repeat(64)] {
        assert_eq!(parse_name(good).as_deref(), Ok(good));
    }
    for bad in [
        "",
        ".",
        "..",
        "../x",
        "a/b",
        ".hidden",
        "a b",
        "é",
        &"x".repeat(65),
    ] {
        assert!(parse_name(bad).is_err(), "{bad:?}");
    }
}

#[test]
#[cfg(unix)] // Unix paths, programs or errno wording
fn the_directory_is_the_users_own() {
    let tmp = Path::new("/tmp");
    assert_eq!(
        dir(Some("/run/user/7".into()), tmp, 7),
        Path::new("/run/user/7/retry")
    );
    assert_eq!(dir(None, tmp, 7), Path::new("/tmp/retry-7"));
    // Empty or relative is not a runtime directory.
    assert_eq!(dir(Some("".into()), tmp, 7), Path::new("/tmp/retry-7"));
    assert_eq!(dir(Some("run".into()), tmp, 7), Path::new("/tmp/retry-7"));
}

fn open(dir: &Path, name: &str) -> Budget {
    Budget::open_in(dir, &settings(name), true)
        .unwrap()
        .unwrap()
}

#[test]
fn the_bucket_keeps_its_size_until_it_is_full_again() {
    let tmp = tempfile::tempdir().unwrap();
    let with = |tokens: u32, given: bool| Settings {
        name: "ci".into(),
        params: Params { tokens, ..P },
        size_given: given,
        store: Store::Host,
        timeout: DEFAULT_TIMEOUT,
    };
    let open = |settings: &Settings| {
        Budget::open_in(tmp.path(), settings, true)
            .unwrap()
            .unwrap()
    };
    // The first to use it sizes it: 20 tokens, four retries.
    let mut first = open(&with(20, true));
    assert!(first.withdraw(5).granted);
    // Another process asks for 100: the bucket holds 20, says so once.
    let mut other = open(&with(100, true));
    let said = other.withdraw(5);
    assert!(said.granted);
    let warning = said.warning.unwrap();
    assert!(warning.contains("holds 20 tokens"), "{warning}");
    assert!(warning.contains("not the 100"), "{warning}");
    // Once: the third and fourth retries of 20 tokens say nothing.
    assert_eq!(other.withdraw(5), Withdrawal::GRANTED);
    assert_eq!(other.withdraw(5), Withdrawal::GRANTED);
    assert!(
        !other.withdraw(5).granted,
        "a bucket of 20 paid a fifth retry"
    );
    // One that left the size at its default follows the bucket silently.
    let mut quiet = open(&with(500, false));
    assert_eq!(
        quiet.withdraw(5),
        Withdrawal {
            granted: false,
            warning: None
        }
    );
    // --budget-status reads the size from the bucket.
    let (bucket, params) = quiet.current().unwrap().value;
    assert_eq!((bucket.milli, params.tokens), (0, 20));
    // Full again (four refunds), the next process to use it sizes it.
    for _ in 0..4 {
        first.deposit(5);
    }
    assert!(other.withdraw(5).granted);
    let (bucket, params) = quiet.current().unwrap().value;
    assert_eq!((bucket.milli, params.tokens), (95_000, 100));
}

#[test]
fn processes_share_one_bucket_through_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("retry");
    let mut a = open(&dir, "ci");
    let mut b = open(&dir, "ci");
    let mut other = open(&dir, "other");
    // 20 tokens at 5: four retries between them, then none.
    let paid: Vec<bool> = (0..6)
        .map(|i| {
            let budget = if i % 2 == 0 { &mut a } else { &mut b };
            budget.try_withdraw(5).unwrap().value
        })
        .collect();
    assert_eq!(paid, [true, true, true, true, false, false]);
    assert!(other.try_withdraw(5).unwrap().value);
    b.try_deposit(5).unwrap();
    assert!(a.try_withdraw(5).unwrap().value);
    assert!(!a.try_withdraw(5).unwrap().value);
    assert_eq!(b.current().unwrap().value.0.milli, 0);
}

#[test]
fn a_damaged_record_is_reset_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let mut budget = open(tmp.path(), "ci");
    assert!(budget.try_withdraw(5).unwrap().reset.is_none());
    std::fs::write(
        &budget.path,
        "retry-budget 1 0000 garbage and more than a record holds, \
        so that the file must be cut back to one record's length\n",
    )
    .unwrap();
    let updated = budget.try_withdraw(5).unwrap();
    assert!(updated.value);
    let reset = updated.reset.unwrap();
    assert!(
        reset.ends_with("was not a valid budget record; reset to a full bucket"),
        "{reset}"
    );
    // Reset to full, then paid for: 15 left, and the file is valid again.
    let bytes = std::fs::read(&budget.path).unwrap();
    assert_eq!(decode(&bytes).map(|(b, _)| b.milli), Some(15_000));
    assert!(budget.current().unwrap().reset.is_none());
}

#[test]
fn a_look_at_a_damaged_record_leaves_it() {
    let tmp = tempfile::tempdir().unwrap();
    let mut budget = open(tmp.path(), "ci");
    budget.try_withdraw(5).unwrap();
    let damaged = b"retry-budget 1 garbled\n";
    std::fs::write(&budget.path, damaged).unwrap();
    let look = Budget::open_in(tmp.path(), &settings("ci"), false)
        .unwrap()
        .unwrap();
    let seen = look.current().unwrap();
    assert_eq!(
        seen.value.0.milli,
        P.capacity(),
        "full, as the next use finds it"
    );
    let said = seen.reset.unwrap();
    assert!(
        said.ends_with("is not a valid budget record; its next use resets it to a full bucket"),
        "{said}"
    );
    assert_eq!(std::fs::read(&budget.path).unwrap(), damaged);
    // The next update resets it.
    assert!(budget.try_withdraw(5).unwrap().reset.is_some());
    assert!(look.current().unwrap().reset.is_none());
}

#[test]
fn a_clock_that_went_back_does_not_stall_the_bucket() {
    let tmp = tempfile::tempdir().unwrap();
    let s = |s: u64| s * 1_000_000_000;
    let mut budget = Budget::open_in(
        tmp.path(),
        &Settings {
            params: Params { refill: 1.0, ..P },
            ..settings("ci")
        },
        true,
    )
    .unwrap()
    .unwrap();
    // Emptied at 1000 s: four retries of 5.
    for _ in 0..4 {
        assert!(budget.withdraw_at(s(1000), 5).unwrap().value);
    }
    // The clock goes back 500 s: no time has passed, nothing refills.
    assert!(!budget.withdraw_at(s(500), 5).unwrap().value);
    // 5 s on the new clock refill 5 tokens, long before it is at 1000 s again.
    assert!(budget.withdraw_at(s(505), 5).unwrap().value);
    assert!(!budget.withdraw_at(s(505), 5).unwrap().value);
}

#[test]
fn a_held_lock_makes_an_update_fail_not_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let mut budget = open(tmp.path(), "ci");
    let holder = File::open(&budget.path).unwrap();
    holder.lock().unwrap();
    let took = Instant::now();
    assert!(Lock::take(&budget.file, Duration::from_millis(50)).is_err());
    assert!(took.elapsed() < Duration::from_secs(1));
    drop(holder);
    assert!(budget.try_withdraw(5).unwrap().value);
}

/// The budget the cost measurements draw from: one that never runs out.
pub(super) fn measured(store: Store, timeout: Duration) -> Settings {
    Settings {
        name: "bench".into(),
        params: Params {
            tokens: u32::MAX,
            cost: 1,
            throttle_cost: 1,
            refill: 0.0,
        },
        size_given: false,
        store,
        timeout,
    }
}

/// `bash bench/budget.sh` runs this in release: what `--budget` adds
/// to one retry decision (lock, read, check, write, unlock).
#[test]
#[ignore = "a measurement, for bench/budget.sh"]
fn cost_of_one_decision() {
    let tmp = tempfile::tempdir().unwrap();
    let mut budget = Budget::open_in(tmp.path(), &measured(Store::Host, DEFAULT_TIMEOUT), true)
        .unwrap()
        .unwrap();
    let n = 200_000;
    let started = Instant::now();
    for _ in 0..n {
        assert!(budget.withdraw(1).granted);
    }
    let each = started.elapsed() / n;
    println!(
        "budget: {:.2} us per retry decision ({n} in a row)",
        each.as_secs_f64() * 1e6
    );
    assert!(each < Duration::from_micros(50), "{each:?}");
}
