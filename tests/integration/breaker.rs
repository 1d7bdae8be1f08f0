//! `--breaker`: a circuit shared by every run that names it, on this host
//! (a private `XDG_RUNTIME_DIR` per test) and in a real `redis-server` the
//! test starts (`fleet::Server`: a unix socket in its own temporary
//! directory, or a free port of 127.0.0.1). Each circuit rule is checked
//! in both stores; cooldowns are tens of milliseconds, with generous bounds.
//!
//! Without `redis-server` the Redis half says so and passes, unless
//! `RETRY_TESTS_NEED_REDIS` is set (as `fleet.rs`).

use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::harness::stored::{Place, Stored, sealed};
use crate::harness::{Retry, kill_pid, retry, scratch, wait_for_file};

// The circuit's end against the clock, on the host and in Redis.
mod clock;
// Where the circuit is kept, when it cannot be trusted or reached.
mod store;

/// A circuit `ci` for a test: its runtime directory and its store.
struct Circuit(Stored);

impl std::ops::Deref for Circuit {
    type Target = Stored;
    fn deref(&self) -> &Stored {
        &self.0
    }
}

impl Circuit {
    fn host() -> Circuit {
        Circuit(Stored::host())
    }

    /// In Redis, if there is a redis-server.
    #[cfg(feature = "redis")]
    fn redis() -> Option<Circuit> {
        Stored::redis().map(Circuit)
    }

    /// Both stores (the host's only, in a build without Redis).
    fn each() -> Vec<Circuit> {
        Stored::each().into_iter().map(Circuit).collect()
    }

    /// retry with the circuit: `--breaker ci`, its store, no sleeps.
    fn retry(&self, args: &[&str]) -> Retry {
        let run = retry(&["--breaker", "ci", "--base", "0ms"]);
        self.with_store(run).args(args)
    }

    /// A run of `sh -c 'echo >> LOG; SCRIPT'` (`log`: a file in the dir).
    fn run(&self, args: &[&str], log: &str, script: &str) -> Output {
        let script = format!("echo >> '{}'; {script}", self.path(log).display());
        self.retry(args).args(&["--", "sh", "-c", &script]).output()
    }

    fn lines(&self, log: &str) -> usize {
        std::fs::read_to_string(self.path(log)).map_or(0, |t| t.lines().count())
    }

    fn status(&self, args: &[&str]) -> String {
        let run = retry(&["--breaker-status", "ci"]).args(args);
        let output = self.with_store(run).output();
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        text(&output.stdout)
    }

    /// The circuit's clock now, in nanoseconds since the epoch.
    fn now_ns(&self) -> u64 {
        self.now_us() * 1000
    }

    /// The circuit as stored: its state (0 closed, 1 open, 2 probing), when
    /// that ends (ns on its clock) and its cooldown's level.
    fn stored(&self) -> (u64, u64, u32) {
        match &self.place {
            Place::Host => {
                let record =
                    std::fs::read_to_string(self.path("retry/.breakers/ci")).expect("a record");
                let fields: Vec<&str> = record.split(' ').collect();
                let number = |i: usize| fields[i].parse::<u64>().unwrap();
                (number(5), number(6), number(3) as u32)
            }
            #[cfg(feature = "redis")]
            Place::Redis(server) => {
                let got = server.cli(&["HMGET", "retry:breaker:ci", "state", "until", "level"]);
                let fields: Vec<u64> = got.lines().map(|l| l.trim().parse().unwrap()).collect();
                (fields[0], fields[1] * 1000, fields[2] as u32)
            }
        }
    }

    /// Sets the stored end of the circuit's state to `until` (ns on a
    /// host, µs in Redis, as each keeps it), as a clock far ahead would
    /// have: the host's record sealed again, as retry seals it, and in
    /// Redis the end the writer's limit was kept with moved along.
    fn forge_until(&self, until: &str) {
        match &self.place {
            Place::Host => {
                let path = self.path("retry/.breakers/ci");
                let record = std::fs::read_to_string(&path).expect("a record");
                let mut fields: Vec<String> = record.split(' ').map(str::to_owned).collect();
                fields[6] = format!("{until:0>20}");
                fields.pop();
                let body = fields.join(" ");
                std::fs::write(&path, sealed(&body)).unwrap();
            }
            #[cfg(feature = "redis")]
            Place::Redis(server) => {
                server.cli(&[
                    "HSET",
                    "retry:breaker:ci",
                    "until",
                    until,
                    "limit_until",
                    until,
                ]);
            }
        }
    }

    /// When the open circuit lets a probe through, and its level, as stored.
    fn open_until(&self) -> (u64, u32) {
        let (state, until, level) = self.stored();
        assert_eq!(state, 1, "{}: not open", self.name());
        (until, level)
    }

    /// Waits until the circuit's clock is past `until`.
    fn wait_until(&self, until: u64) {
        while self.now_ns() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Fails twice (two attempts, both exit 1): a run that gave up, counted.
const GIVE_UP: [&str; 2] = ["-n", "2"];

#[test]
fn the_circuit_opens_after_n_runs_that_gave_up_and_not_after_fatal_ones() {
    for c in Circuit::each() {
        let after = [
            "--breaker-after",
            "2",
            "--breaker-cooldown",
            "1m",
            "-n",
            "2",
        ];
        // Fatal, not retryable, not found: neither kind of end counts.
        let fatal = [&after[..], &["--fatal-on", "3"]].concat();
        let not_retryable = [&after[..], &["--retry-on", "1"]].concat();
        for _ in 0..3 {
            assert_eq!(c.run(&fatal, "log", "exit 3").status.code(), Some(3));
            assert_eq!(
                c.run(&not_retryable, "log", "exit 4").status.code(),
                Some(4)
            );
        }
        let missing = c.retry(&after).args(&["--", "/nonexistent/x"]).output();
        assert_eq!(missing.status.code(), Some(127));
        assert_eq!(c.lines("log"), 6, "{}", c.name());
        assert!(
            c.status(&after)
                .starts_with("breaker ci: closed; 0 failed runs")
        );
        // Two runs that gave up (attempts ran out), then it is open.
        for _ in 0..2 {
            assert_eq!(c.run(&after, "log", "exit 1").status.code(), Some(1));
        }
        assert_eq!(c.lines("log"), 10, "{}", c.name());
        let output = c.run(&after, "log", "exit 1");
        assert_eq!(output.status.code(), Some(75), "{}", c.name());
        assert_eq!(c.lines("log"), 10, "{}: the command ran", c.name());
        let status = c.status(&after);
        assert!(
            status.starts_with("breaker ci: open; 2 failed runs in a row (it opened at 2); cooldown level 0; a probe may run at "),
            "{}: {status}",
            c.name()
        );
        // Asked without --breaker-after, the status says the threshold the
        // circuit opened at, not the default (3).
        let status = c.status(&[]);
        assert!(
            status.starts_with("breaker ci: open; 2 failed runs in a row (it opened at 2); "),
            "{}: {status}",
            c.name()
        );
    }
}

#[test]
fn time_running_out_counts_and_a_success_resets_the_count() {
    for c in Circuit::each() {
        let after = ["--breaker-after", "2", "--breaker-cooldown", "1m"];
        // --max-time ran out: counted.
        let timed = [&after[..], &["--max-time", "50ms", "-n", "unlimited"]].concat();
        // Ended in an attempt (124) or before a sleep past it (1).
        let code = c.run(&timed, "log", "exit 1").status.code();
        assert!(matches!(code, Some(1 | 124)), "{code:?}");
        assert!(c.status(&after).contains("closed; 1 failed run in a row"));
        // A success anywhere starts the count again.
        assert_eq!(c.run(&after, "log", "exit 0").status.code(), Some(0));
        assert!(c.status(&after).contains("closed; 0 failed runs"));
        let give_up = [&after[..], &GIVE_UP[..]].concat();
        assert_eq!(c.run(&give_up, "log", "exit 1").status.code(), Some(1));
        assert!(
            c.status(&after).contains("closed; 1 failed run"),
            "{}",
            c.name()
        );
    }
}

#[test]
fn a_success_ends_the_row_of_failures_that_overlapping_runs_counted() {
    for c in Circuit::each() {
        let after = ["--breaker-after", "2", "--breaker-cooldown", "1m"];
        // A run that finds the circuit clean, then waits for a file (it
        // asked before its attempt started, which says so).
        let (started, release) = (c.path("started"), c.path("release"));
        let script = format!(
            "echo > '{}'; i=0; while [ ! -e '{}' ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done",
            started.display(),
            release.display()
        );
        let slow = (c.retry(&after)).args(&["--", "sh", "-c", &script]).spawn();
        wait_for_file(&started);
        // Another run gives up meanwhile: one failure counted.
        let give_up = [&after[..], &GIVE_UP[..]].concat();
        assert_eq!(c.run(&give_up, "log", "exit 1").status.code(), Some(1));
        assert!(c.status(&after).contains("closed; 1 failed run in a row"));
        // The first run succeeds: the row is over, and the next failure
        // is the first again, not the second that would open it.
        std::fs::write(&release, "").unwrap();
        assert_eq!(slow.wait_with_output().unwrap().status.code(), Some(0));
        assert!(
            c.status(&after).contains("closed; 0 failed runs"),
            "{}",
            c.name()
        );
        assert_eq!(c.run(&give_up, "log", "exit 1").status.code(), Some(1));
        assert!(
            c.status(&after).contains("closed; 1 failed run in a row"),
            "{}",
            c.name()
        );
    }
}

#[test]
fn while_open_a_run_exits_75_with_one_line_saying_when() {
    for c in Circuit::each() {
        let args = [
            "--breaker-after",
            "1",
            "--breaker-cooldown",
            "1m",
            "-n",
            "1",
        ];
        assert_eq!(c.run(&args, "log", "exit 1").status.code(), Some(1));
        let started = SystemTime::now();
        for format in ["text", "json"] {
            let with = [&args[..], &["--log-format", format]].concat();
            let output = c.run(&with, "log", "exit 0");
            assert_eq!(output.status.code(), Some(75), "{}", c.name());
            let said = text(&output.stderr);
            assert_eq!(said.lines().count(), 1, "{said}");
            assert!(said.contains("--breaker ci: the circuit is open after 1 failed run in a row; a probe may run at "), "{said}");
            assert!(said.contains("the command was not run"), "{said}");
            match format {
                "text" => assert!(said.ends_with(" (reason: breaker)\n"), "{said}"),
                _ => assert!(
                    said.contains(r#""reason":"breaker""#) && said.contains(r#""exit_code":75"#),
                    "{said}"
                ),
            }
            // The time is within the cooldown, the seconds to it too.
            let at = said.split("a probe may run at ").nth(1).unwrap();
            let (time, rest) = at.split_once(" (in ").unwrap();
            let at = humantime::parse_rfc3339(time).unwrap();
            assert!(at <= started + Duration::from_secs(61), "{said}");
            assert!(at + Duration::from_secs(31) >= started, "{said}");
            let secs: u64 = rest.split(' ').next().unwrap().parse().unwrap();
            assert!(secs <= 60, "{said}");
        }
        assert_eq!(
            c.lines("log"),
            1,
            "{}: the command ran while open",
            c.name()
        );
    }
}

/// Opens the circuit (`--breaker-after 1`, a cooldown of `cooldown`) and
/// waits until its probe may run.
fn open_and_wait(c: &Circuit, cooldown: &str) {
    let args = [
        "--breaker-after",
        "1",
        "--breaker-cooldown",
        cooldown,
        "-n",
        "1",
    ];
    assert_eq!(c.run(&args, "opening", "exit 1").status.code(), Some(1));
    c.wait_until(c.open_until().0);
}

#[test]
fn one_probe_among_fifty_concurrent_runs_after_the_cooldown() {
    for c in Circuit::each() {
        open_and_wait(&c, "50ms");
        // Only the probe runs its command, which waits for the release, so
        // every other run asks while it probes.
        let release = c.path("release");
        let script = format!(
            "echo >> '{}'; i=0; while [ ! -e '{}' ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done",
            c.path("log").display(),
            release.display()
        );
        let mut runs: Vec<Child> = (0..50)
            .map(|_| {
                let mut command = c
                    .retry(&[
                        "--breaker-after",
                        "1",
                        "--breaker-cooldown",
                        "50ms",
                        "-n",
                        "1",
                    ])
                    .args(&["--", "sh", "-c", &script])
                    .into_command();
                command.stdout(Stdio::null()).stderr(Stdio::null());
                command.spawn().unwrap()
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut skipped = 0;
        while skipped < 49 {
            assert!(Instant::now() < deadline, "{}: {skipped} skipped", c.name());
            runs.retain_mut(|run| match run.try_wait().unwrap() {
                None => true,
                Some(status) => {
                    assert_eq!(status.code(), Some(75), "{}", c.name());
                    skipped += 1;
                    false
                }
            });
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(runs.len(), 1);
        std::fs::write(&release, "").unwrap();
        assert_eq!(runs[0].wait().unwrap().code(), Some(0));
        assert_eq!(c.lines("log"), 1, "{}", c.name());
        // Its success closed the circuit.
        assert!(
            c.status(&[]).contains("closed; 0 failed runs"),
            "{}",
            c.name()
        );
        #[cfg(feature = "redis")]
        if let Place::Redis(server) = &c.place {
            assert_eq!(server.cli(&["EXISTS", "retry:breaker:ci"]).trim(), "0");
        }
    }
}

/// A probe's lease in Redis for the tests (`RETRY_TEST_FLEET_LEASE_MS`):
/// 2 s, renewed every 667 ms, instead of 30 s.
#[cfg(feature = "redis")]
const TEST_LEASE: (&str, &str) = ("RETRY_TEST_FLEET_LEASE_MS", "2000");

#[test]
fn a_probe_killed_by_sigkill_holds_the_circuit_briefly() {
    for c in Circuit::each() {
        open_and_wait(&c, "20ms");
        // No --max-time: the lease is 10 minutes on a host, and in Redis the
        // short one (here 2 s), renewed while the probe lives.
        let retry = |args: &[&str]| {
            let run = c.retry(&["--breaker-after", "1", "-n", "1"]).args(args);
            #[cfg(feature = "redis")]
            let run = run.env(TEST_LEASE.0, TEST_LEASE.1);
            run
        };
        let pid = c.path("pid");
        let script = format!("echo $$ > '{}'; exec sleep 60", pid.display());
        let mut probe = retry(&["--", "sh", "-c", &script]).spawn();
        let child: i32 = wait_for_file(&pid).trim().parse().unwrap();
        let during = |what: &str| {
            let output = retry(&["--", "sh", "-c", "exit 0"]).output();
            assert_eq!(output.status.code(), Some(75), "{}: {what}", c.name());
            assert!(text(&output.stderr).contains("another run probes it"));
        };
        during("while the probe runs");
        #[cfg(feature = "redis")]
        if let Place::Redis(_) = c.place {
            // Past two leases, the living probe still holds it: renewed.
            std::thread::sleep(Duration::from_millis(4500));
            during("after two of the probe's leases");
        }
        // SIGKILL: retry cannot tell the circuit anything.
        probe.kill().unwrap();
        probe.wait().unwrap();
        let killed = c.now_ns();
        kill_pid(child);
        let (state, lease_end, _) = c.stored();
        assert_eq!(state, 2, "{}: not probing", c.name());
        match c.place {
            // The kernel released its lock: the next run probes at once,
            // not 10 minutes later.
            Place::Host => assert!(lease_end > killed + 500 * 1_000_000_000),
            // One short lease at most, from its last renewal.
            #[cfg(feature = "redis")]
            Place::Redis(_) => {
                assert!(lease_end <= killed + 2_000_000_000, "{}", c.name());
                c.wait_until(lease_end);
            }
        }
        let after = retry(&["--", "sh", "-c", "exit 0"]).output();
        assert_eq!(
            after.status.code(),
            Some(0),
            "{}: {}",
            c.name(),
            text(&after.stderr)
        );
        assert!(
            c.status(&[]).contains("closed; 0 failed runs"),
            "{}",
            c.name()
        );
    }
}

#[test]
fn a_probe_that_lives_holds_the_circuit_and_frees_it_when_done() {
    let c = Circuit::host();
    open_and_wait(&c, "20ms");
    let release = c.path("release");
    let script = format!(
        "i=0; while [ ! -e '{}' ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done; exit 1",
        release.display()
    );
    let probe = c
        .retry(&[
            "--breaker-after",
            "1",
            "--breaker-cooldown",
            "1m",
            "-n",
            "1",
        ])
        .args(&["--", "sh", "-c", &script])
        .spawn();
    // Its lock is held: the others are turned away however often they ask.
    while c.stored().0 != 2 {
        std::thread::sleep(Duration::from_millis(5));
    }
    for _ in 0..3 {
        let output = c.run(&["--breaker-after", "1"], "log", "exit 0");
        assert_eq!(output.status.code(), Some(75), "{}", text(&output.stderr));
    }
    std::fs::write(&release, "").unwrap();
    assert_eq!(probe.wait_with_output().unwrap().status.code(), Some(1));
    // It failed: open again, for a longer cooldown, and nobody probes.
    let (_, level) = c.open_until();
    assert_eq!(level, 1);
    let output = c.run(&["--breaker-after", "1"], "log", "exit 0");
    assert_eq!(output.status.code(), Some(75));
    assert_eq!(c.lines("log"), 0, "a run probed during the cooldown");
}

#[test]
fn a_failed_probe_reopens_the_circuit_for_a_longer_cooldown() {
    for c in Circuit::each() {
        let args = [
            "--breaker-after",
            "1",
            "--breaker-cooldown",
            "200ms",
            "-n",
            "1",
        ];
        let before = c.now_ns();
        assert_eq!(c.run(&args, "log", "exit 1").status.code(), Some(1));
        let after = c.now_ns();
        let (until, level) = c.open_until();
        // Cooldown 0: equal jitter of 200 ms, 100 to 200 ms.
        let ms = |ns: u64| ns / 1_000_000;
        assert_eq!(level, 0);
        assert!(
            ms(until - before) >= 100 && ms(until.saturating_sub(after)) <= 200,
            "{}",
            c.name()
        );
        c.wait_until(until);
        // The probe fails: cooldown 1, 200 to 400 ms from its end.
        let before = c.now_ns();
        assert_eq!(c.run(&args, "log", "exit 1").status.code(), Some(1));
        let after = c.now_ns();
        let (until, level) = c.open_until();
        assert_eq!(level, 1, "{}", c.name());
        assert!(
            ms(until - before) >= 200,
            "{}: {} ms",
            c.name(),
            ms(until - before)
        );
        assert!(ms(until.saturating_sub(after)) <= 400, "{}", c.name());
        assert!(
            c.status(&args)
                .contains("open; 2 failed runs in a row (it opened at 1); cooldown level 1")
        );
        // The next probe succeeds: closed, level 0 again.
        c.wait_until(until);
        assert_eq!(c.run(&args, "log", "exit 0").status.code(), Some(0));
        assert!(
            c.status(&args)
                .contains("closed; 0 failed runs in a row (it opens at 1); cooldown level 0")
        );
        assert_eq!(c.lines("log"), 3, "{}", c.name());
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let refused = |args: &[&str], words: &str| {
        let output = retry(args).args(&["--", "true"]).output();
        let said = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {said}");
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(
            said.starts_with("retry: ") && said.contains(words),
            "{args:?}: {said}"
        );
        assert!(!said.contains("secret"), "{said}");
    };
    refused(&["--breaker", "a/b"], "a breaker name is");
    refused(&["--breaker", ".."], "a breaker name is");
    refused(
        &["--breaker", "x", "--breaker-after", "0"],
        "'0' for '--breaker-after <N>'",
    );
    refused(
        &["--breaker", "x", "--breaker-after", "-3"],
        "'-3' for '--breaker-after <N>'",
    );
    refused(
        &["--breaker", "x", "--breaker-cooldown", "0s"],
        "`--breaker-cooldown 0s`",
    );
    refused(
        &["--breaker", "x", "--breaker-cooldown", "-1s"],
        "--breaker-cooldown",
    );
    // Longer than a day: every host would trust the record that long.
    refused(
        &["--breaker", "x", "--breaker-cooldown-max", "100y"],
        "`--breaker-cooldown-max 100years` is over 24h, the longest a circuit may stay open",
    );
    refused(
        &["--breaker", "x", "--breaker-cooldown", "25h"],
        "`--breaker-cooldown 1day 1h` is over 24h",
    );
    refused(
        &["--breaker-after", "2"],
        "`--breaker-after` is only for --breaker",
    );
    for code in ["0", "256", "-1", "x"] {
        refused(
            &["--breaker", "x", "--breaker-exit-code", code],
            &format!("'{code}' for '--breaker-exit-code <CODE>'"),
        );
    }
    // Retry's own statuses: a skipped run would pass for one of them.
    for code in ["2", "124", "125", "126", "127"] {
        refused(
            &["--breaker", "x", "--breaker-exit-code", code],
            &format!(
                "'{code}' for '--breaker-exit-code <CODE>': {code} is retry's own status for "
            ),
        );
    }
    refused(
        &["--breaker-exit-code", "99"],
        "`--breaker-exit-code` is only for --breaker",
    );
    refused(
        &["--store", "host"],
        "`--store` is only for --budget, --breaker",
    );
    for store in ["--store", "--budget-store"] {
        refused(
            &["--breaker", "x", store, "http://u:secret@h"],
            "`http://` is not a store",
        );
    }
    let output = retry(&["--breaker", "x", "--", "true"])
        .env("RETRY_BREAKER_AFTER", "0")
        .output();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("`RETRY_BREAKER_AFTER=0`"),
        "{}",
        text(&output.stderr)
    );
    let output = retry(&["--breaker", "x", "--", "true"])
        .env("RETRY_BREAKER_EXIT_CODE", "0")
        .output();
    let said = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("RETRY_BREAKER_EXIT_CODE"), "{said}");
    let dir = scratch();
    let ran = dir.path().join("ran");
    let output = retry(&["--breaker", "x", "--", "touch", ran.to_str().unwrap()])
        .env("RETRY_BREAKER_EXIT_CODE", "124")
        .env("XDG_RUNTIME_DIR", dir.path())
        .output();
    let said = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert_eq!(
        said,
        "retry: `RETRY_BREAKER_EXIT_CODE=124`: 124 is retry's own status for a timed-out \
         attempt, which a skipped run would pass for; choose one of 1 to 255 but 2 and 124 to 127\n"
    );
    assert!(!ran.exists(), "the command ran");
}

#[test]
fn a_skipped_run_can_be_told_from_a_command_s_own_75() {
    let c = Circuit::host();
    let args = [
        "--breaker-after",
        "1",
        "--breaker-cooldown",
        "1m",
        "-n",
        "1",
    ];
    // The command's own 75, with the circuit closed, counts as a failure.
    assert_eq!(c.run(&args, "log", "exit 75").status.code(), Some(75));
    // Skipped: the status chosen, by flag or variable; the JSON line and
    // the step outputs say so too.
    let with = [&args[..], &["--breaker-exit-code", "99"]].concat();
    assert_eq!(c.run(&with, "log", "exit 0").status.code(), Some(99));
    let outputs = c.path("outputs");
    let output = c
        .retry(&args)
        .env("RETRY_BREAKER_EXIT_CODE", "98")
        .env("RETRY_GITHUB_OUTPUT", "1")
        .env("GITHUB_OUTPUT", &outputs)
        .args(&["--log-format", "json", "--", "true"])
        .output();
    assert_eq!(output.status.code(), Some(98));
    let said = text(&output.stderr);
    assert!(
        said.contains(r#""reason":"breaker""#) && said.contains(r#""exit_code":98"#),
        "{said}"
    );
    let written = std::fs::read_to_string(&outputs).unwrap();
    assert!(
        written.starts_with("total_attempts=0\nexit_code=98\nexit_error=--breaker ci: ")
            && written.ends_with("\nskipped=true\n"),
        "{written}"
    );
    assert_eq!(c.lines("log"), 1, "a skipped run ran its command");
}

#[test]
fn nothing_configured_writes_nothing_and_a_first_success_creates_no_file() {
    let c = Circuit::host();
    assert_eq!(c.run(&["-n", "1"], "log", "exit 0").status.code(), Some(0));
    assert!(
        !c.path("retry").exists(),
        "a closed circuit's success wrote"
    );
}

/// `--breaker-cooldown-max` below the first cooldown, here from its
/// variable: one line naming it, exit 2, and nothing runs.
#[cfg(unix)]
#[test]
fn a_cooldown_max_below_the_cooldown_is_a_usage_error() {
    let dir = crate::harness::scratch();
    let ran = dir.path().join("ran");
    let out = crate::harness::retry(&["--breaker", "ci", "--"])
        .env("RETRY_BREAKER_COOLDOWN_MAX", "10s")
        .env("XDG_RUNTIME_DIR", dir.path())
        .args(&["sh", "-c", &format!("touch '{}'", ran.display())])
        .run();
    out.code(2).stderr_has(
        "RETRY_BREAKER_COOLDOWN_MAX=10s` is below the default --breaker-cooldown, 30s: \
         the longest cooldown must be at least the first; set --breaker-cooldown-max to 30s or more",
    );
    assert!(!ran.exists(), "the command ran");
}
