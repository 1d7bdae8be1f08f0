//! The circuit's end against the clock: an end further ahead than any run
//! could set, a clock ahead, an end moved without its limit, and a shorter
//! cooldown or a short run's write not cutting a longer circuit, on the
//! host and in Redis. Moved out of breaker.rs (issue 51) so each file
//! stays under 800 lines; its gates are breaker.rs's, and test by test.

#[cfg(feature = "redis")]
use std::path::PathBuf;
#[cfg(feature = "redis")]
use std::process::Child;

use super::{Circuit, Place, text};
#[cfg(feature = "redis")]
use crate::harness::wait_for_file;

/// The number of seconds in "(in N s)" of a status or a warning.
fn in_secs(said: &str) -> u64 {
    let after = said.split("(in ").nth(1).expect("(in N s)");
    after.split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn an_end_further_ahead_than_any_run_could_set_is_brought_in_once() {
    for c in Circuit::each() {
        // The lease is the --max-time (30 s): an end this run sets lies at
        // most its longest cooldown (160 ms) + 30 s ahead, and the record
        // keeps that limit with it (long enough for the runs below to
        // find the circuit still open on a loaded machine).
        let args = [
            "--breaker-after",
            "1",
            "--breaker-cooldown",
            "20ms",
            "--breaker-cooldown-max",
            "160ms",
            "--max-time",
            "30s",
            "-n",
            "1",
        ];
        assert_eq!(c.run(&args, "opening", "exit 1").status.code(), Some(1));
        // A clock far ahead when it opened: the largest value each keeps.
        match c.place {
            Place::Host => c.forge_until(&u64::MAX.to_string()),
            #[cfg(feature = "redis")]
            Place::Redis(_) => c.forge_until("1e300"),
        }
        // The status shows it as a run would take it (without --max-time,
        // its lease is 10 min on a host, 30 s in Redis: its own limit is
        // the longer), writing nothing.
        let status = c.status(&args[..6]);
        assert!(status.starts_with("breaker ci: open; "), "{status}");
        let lease = match c.place {
            Place::Host => 600,
            #[cfg(feature = "redis")]
            Place::Redis(_) => 30,
        };
        let secs = in_secs(&status);
        assert!(
            (lease - 1..=lease + 1).contains(&secs),
            "{}: {status}",
            c.name()
        );
        assert!(!status.contains("2554"), "{status}");
        // The first run says so, once; the circuit stays open until then.
        let first = c.run(&args, "log", "exit 0");
        assert_eq!(first.status.code(), Some(75), "{}", c.name());
        let said = text(&first.stderr);
        let warned: Vec<&str> = said.lines().filter(|l| l.contains("went back")).collect();
        assert_eq!(warned.len(), 1, "{said}");
        assert!(
            warned[0].contains("warning: --breaker ci: the circuit's end")
                && warned[0].contains("further ahead than its longest cooldown and lease (31 s)"),
            "{said}"
        );
        // Brought in from the first run's now, on the circuit's clock: at
        // most its limit (30.16 s) after this.
        let after = c.now_ns();
        let second = c.run(&args, "log", "exit 0");
        assert!(!text(&second.stderr).contains("went back"), "{}", c.name());
        // Then a probe may run in half a minute, not in centuries.
        let (until, _) = c.open_until();
        assert!(until <= after + 30_160_000_000, "{}: {until}", c.name());
    }
}

/// Issue 50: with the default options, a circuit that a clock ahead
/// opened skipped runs for 70 minutes (an hour, the longest cooldown any
/// run was taken to set, and the lease). Its record keeps the limit of the
/// run that opened it: 4 minutes and the lease, 10 minutes on a host, 30 s
/// in Redis.
#[test]
fn with_the_defaults_a_clock_ahead_skips_runs_for_its_own_cap_and_lease() {
    for c in Circuit::each() {
        let opening = ["--breaker-after", "1", "-n", "1"];
        assert_eq!(c.run(&opening, "opening", "exit 1").status.code(), Some(1));
        let day_ahead = c.now_ns() + 86_400_000_000_000;
        let (limit, until) = match c.place {
            Place::Host => (840, day_ahead.to_string()),
            #[cfg(feature = "redis")]
            Place::Redis(_) => (270, (day_ahead / 1000).to_string()),
        };
        c.forge_until(&until);
        let skipped = c.run(&[], "log", "exit 0");
        // Brought in from that run's now, on the circuit's clock.
        let after = c.now_ns();
        assert_eq!(skipped.status.code(), Some(75), "{}", c.name());
        let said = text(&skipped.stderr);
        assert!(
            said.contains(&format!(
                "further ahead than its longest cooldown and lease ({limit} s)"
            )),
            "{}: {said}",
            c.name()
        );
        let (until, _) = c.open_until();
        assert!(
            until <= after + limit * 1_000_000_000,
            "{}: {until}",
            c.name()
        );
        assert_eq!(c.lines("log"), 0, "{}: a run went ahead", c.name());
    }
}

/// In Redis, an end that an older retry moved (it keeps no limit: the
/// one left behind belongs to another end), or a hash written by hand, is
/// held to what every end was before: an hour and the lease.
#[test]
#[cfg(feature = "redis")]
fn in_redis_an_end_moved_without_its_limit_is_held_to_an_hour() {
    let Some(c) = Circuit::redis() else {
        return;
    };
    let opening = ["--breaker-after", "1", "-n", "1"];
    assert_eq!(c.run(&opening, "opening", "exit 1").status.code(), Some(1));
    let Place::Redis(server) = &c.place else {
        unreachable!()
    };
    server.cli(&["HSET", "retry:breaker:ci", "until", "1e300"]);
    let said = text(&c.run(&[], "log", "exit 0").stderr);
    assert!(
        said.contains("further ahead than its longest cooldown and lease (3630 s)"),
        "{said}"
    );
    // An end kept with a limit of centuries (a hash written by hand): the
    // limit is trusted for a day and the lease, no further.
    let until = "9000000000000000";
    server.cli(&["HSET", "retry:breaker:ci", "until", until, "limit", until]);
    server.cli(&["HSET", "retry:breaker:ci", "limit_until", until]);
    let said = text(&c.run(&[], "log", "exit 0").stderr);
    assert!(
        said.contains("further ahead than its longest cooldown and lease (86430 s)"),
        "{said}"
    );
}

/// A circuit opened by a job with a long cooldown is not cut short, nor
/// taken for a clock that went back, by a run given a short one (or none,
/// as a run by hand or `--breaker-status` often is): not at 40 minutes,
/// nor past the hour every record was once held to.
#[test]
fn a_run_with_a_shorter_cooldown_does_not_cut_a_longer_ones_circuit() {
    for (cooldown, half) in [("40m", 1200), ("3h", 5400)] {
        for c in Circuit::each() {
            let long = [
                "--breaker-after",
                "1",
                "--breaker-cooldown",
                cooldown,
                "-n",
                "1",
            ];
            assert_eq!(c.run(&long, "opening", "exit 1").status.code(), Some(1));
            let (until, _) = c.open_until();
            // Equal jitter: at least half the cooldown ahead, more than a
            // 30 s cooldown's longest (4 min) and its lease (10 min).
            let ahead = (half - 10) * 1_000_000_000;
            assert!(until > c.now_ns() + ahead, "{} {cooldown}", c.name());
            let status = c.status(&[]);
            assert!(status.contains("open;"), "{}: {status}", c.name());
            let skipped = c.run(&[], "log", "exit 0");
            assert_eq!(skipped.status.code(), Some(75), "{}", c.name());
            let said = text(&skipped.stderr);
            assert!(
                !said.contains("went back"),
                "{} {cooldown}: {said}",
                c.name()
            );
            let moved = c.open_until().0;
            assert_eq!(moved, until, "{} {cooldown}: its end was moved", c.name());
        }
    }
}

/// In Redis the key expires some limits after its last change: a run
/// given the default cap that counts a failure while a job's 3-hour
/// circuit is open (it started before the circuit opened) does not make
/// the key expire, and the circuit close, before its end.
#[test]
#[cfg(feature = "redis")]
fn in_redis_a_short_runs_write_does_not_expire_a_long_circuit() {
    let Some(c) = Circuit::redis() else {
        return;
    };
    /// The slow run, let go and waited for however the test ends (its
    /// script also gives up waiting by itself after 10 s).
    struct Slow(Child, PathBuf);
    impl Drop for Slow {
        fn drop(&mut self) {
            let _ = std::fs::write(&self.1, "");
            let _ = self.0.wait();
        }
    }
    let (started, go) = (c.path("started"), c.path("go"));
    let script = format!(
        "echo >'{}'; i=0; while [ ! -e '{}' ] && [ $i -lt 1000 ]; do \
         sleep 0.01; i=$((i + 1)); done; exit 1",
        started.display(),
        go.display()
    );
    let slow = c
        .retry(&["--breaker-after", "5", "-n", "1", "--", "sh", "-c", &script])
        .spawn();
    let mut slow = Slow(slow, go.clone());
    wait_for_file(&started);
    let long = [
        "--breaker-after",
        "1",
        "--breaker-cooldown",
        "3h",
        "-n",
        "1",
    ];
    assert_eq!(c.run(&long, "opening", "exit 1").status.code(), Some(1));
    std::fs::write(&go, "").unwrap();
    assert_eq!(slow.0.wait().unwrap().code(), Some(1));
    let Place::Redis(server) = &c.place else {
        unreachable!()
    };
    let failures = server.cli(&["HGET", "retry:breaker:ci", "failures"]);
    assert_eq!(
        failures.trim(),
        "2",
        "the slow run's failure was not counted"
    );
    let ttl_ms: u64 = server
        .cli(&["PTTL", "retry:breaker:ci"])
        .trim()
        .parse()
        .unwrap();
    let (until, _) = c.open_until();
    assert!(
        ttl_ms * 1_000_000 > until - c.now_ns(),
        "the key expires in {ttl_ms} ms, before the circuit's end"
    );
}
