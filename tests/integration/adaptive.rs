//! `--throttle`: one adaptive throttle shared by every run that names it,
//! on this host (a private `XDG_RUNTIME_DIR` per test) and in a real
//! `redis-server` the test starts (`fleet::Server`, on a unix socket in
//! its own directory), killed on drop. Each rule is checked in both stores: the
//! throttle's state is forged as each store keeps it (the host's record
//! sealed as retry seals it), and the decisions come from `--seed`.
//!
//! Without `redis-server` the Redis half says so and passes, unless
//! `RETRY_TESTS_NEED_REDIS` is set (as `fleet.rs`).

use std::os::unix::fs::PermissionsExt;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::harness::stored::{Place, Stored, sealed};
use crate::harness::{Retry, retry, scratch};

/// A throttle `api` for a test: its runtime directory and its store.
struct Throttle(Stored);

impl std::ops::Deref for Throttle {
    type Target = Stored;
    fn deref(&self) -> &Stored {
        &self.0
    }
}

/// A day: no test spans the start of a new window but once in tens of
/// thousands of runs, so the counts it forges stay where it put them.
const WINDOW_MS: u64 = 86_400_000;
const WINDOW: [&str; 2] = ["--throttle-window", "24h"];

impl Throttle {
    fn host() -> Throttle {
        Throttle(Stored::host())
    }

    /// In Redis, if there is a redis-server.
    #[cfg(feature = "redis")]
    fn redis() -> Option<Throttle> {
        Stored::redis().map(Throttle)
    }

    fn each() -> Vec<Throttle> {
        Stored::each().into_iter().map(Throttle).collect()
    }

    /// retry with the throttle: `--throttle api --seed 1`, a day's
    /// window, sleeps of a millisecond at most (a rejected attempt's is a
    /// throttled failure's, on `--throttle-base`).
    fn retry(&self, args: &[&str]) -> Retry {
        let run = retry(&["--throttle", "api", "--seed", "1", "--base", "0ms"])
            .args(&["--throttle-base", "1ms", "--cap", "2ms"])
            .args(&WINDOW);
        self.with_store(run).args(args)
    }

    /// A run of `sh -c 'echo >> LOG; SCRIPT'`.
    fn run(&self, args: &[&str], script: &str) -> Output {
        let script = format!("echo >> '{}'; {script}", self.path("log").display());
        self.retry(args).args(&["--", "sh", "-c", &script]).output()
    }

    /// The attempts that ran.
    fn ran(&self) -> usize {
        std::fs::read_to_string(self.path("log")).map_or(0, |t| t.lines().count())
    }

    fn status(&self) -> String {
        let output = self
            .with_store(retry(&["--throttle-status", "api"]).args(&WINDOW))
            .output();
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        text(&output.stdout)
    }

    /// The store's clock, in milliseconds since the epoch.
    fn now_ms(&self) -> u64 {
        self.now_us() / 1000
    }

    /// The state as retry keeps it: the window starting at `start` (ms),
    /// its requests and accepts, and none before; on the host a record
    /// sealed as retry seals it, in Redis the hash. Counts as text, so a
    /// test can write what no retry writes.
    fn forge(&self, start: u64, requests: &str, accepts: &str) {
        match &self.place {
            Place::Host => {
                let dir = self.path("retry/.throttles");
                for d in [self.path("retry"), dir.clone()] {
                    let _ = std::fs::create_dir(&d);
                    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
                }
                let pad = |f: &str| format!("{f:0>20}");
                let body = format!(
                    "retry-throttle 1 {} {} {} {} {}",
                    pad(&start.to_string()),
                    pad(requests),
                    pad(accepts),
                    pad("0"),
                    pad("0")
                );
                let path = dir.join("api");
                std::fs::write(&path, sealed(&body)).unwrap();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            }
            #[cfg(feature = "redis")]
            Place::Redis(server) => {
                let start = start.to_string();
                let hash = [
                    "start", &start, "req", requests, "acc", accepts, "preq", "0", "pacc", "0",
                ];
                server.cli(&[&["HSET", "retry:throttle:api"][..], &hash].concat());
            }
        }
    }

    /// The current window, `requests` and `accepts` in it.
    fn forge_now(&self, requests: u64, accepts: u64) {
        let now = self.now_ms();
        self.forge(
            now - now % WINDOW_MS,
            &requests.to_string(),
            &accepts.to_string(),
        );
    }

    /// The current window's requests and accepts, as stored.
    fn counts(&self) -> (u64, u64) {
        match &self.place {
            Place::Host => {
                let record = std::fs::read_to_string(self.path("retry/.throttles/api")).unwrap();
                let fields: Vec<u64> = record
                    .split(' ')
                    .skip(2)
                    .take(3)
                    .map(|f| f.parse().unwrap())
                    .collect();
                (fields[1], fields[2])
            }
            #[cfg(feature = "redis")]
            Place::Redis(server) => {
                let got = server.cli(&["HMGET", "retry:throttle:api", "req", "acc"]);
                let n: Vec<u64> = got.lines().map(|l| l.trim().parse().unwrap()).collect();
                (n[0], n[1])
            }
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A throttle whose window says 100 attempts and no accept rejects nearly
/// every attempt, the same ones for the same seed, in either store; the
/// status shows the counts and the probability.
#[test]
fn a_throttle_that_saw_no_accepts_rejects_most_attempts() {
    for t in Throttle::each() {
        let name = t.name();
        t.forge_now(100, 0);
        let output = t.run(&["-n", "20"], "exit 1");
        let said = text(&output.stderr);
        let rejected = said.matches(": --throttle api rejected it (").count();
        assert!(
            rejected >= 17 && t.ran() + rejected == 20,
            "{name}: {} ran, {rejected} rejected\n{said}",
            t.ran()
        );
        let code = output.status.code();
        match t.ran() {
            0 => assert_eq!(code, Some(75), "{name}: {said}"),
            _ => assert_eq!(code, Some(1), "{name}: {said}"),
        }
        assert!(
            said.trim_end().ends_with("(reason: throttle)"),
            "{name}: {said}"
        );
        assert_eq!(t.counts(), (120, 0), "{name}");
        let status = t.status();
        assert!(
            status.starts_with("throttle api: rejects 9")
                && status.contains(
                    "% of requests now (K 4); over the last 1day: 120.0 requests, 0.0 accepted\n"
                ),
            "{name}: {status}"
        );
    }
}

/// The decisions are the seed's: the same state and seed, the same runs.
#[test]
fn the_same_seed_rejects_the_same_attempts() {
    let decided = || {
        let t = Throttle::host();
        // 60 attempts and 10 accepts: with K 4, a third rejected, more
        // as the failures count.
        t.forge_now(60, 10);
        let output = t.run(&["-n", "12"], "exit 1");
        text(&output.stderr)
            .lines()
            .map(|l| l.contains("not run"))
            .collect::<Vec<bool>>()
    };
    let first = decided();
    assert!(
        first.iter().any(|&r| r) && first.iter().any(|&r| !r),
        "{first:?}"
    );
    assert_eq!(first, decided());
}

/// Every attempt rejected: 75, or the status `--breaker-exit-code` gives
/// a skipped run, one line saying why, and the JSON log's reason.
#[test]
fn a_run_whose_every_attempt_was_rejected_exits_75() {
    let t = Throttle::host();
    t.forge_now(100_000, 0);
    let output = t.run(&["-n", "3"], "exit 0");
    let said = text(&output.stderr);
    assert_eq!((output.status.code(), t.ran()), (Some(75), 0), "{said}");
    let last = said.lines().last().unwrap();
    assert!(
        last.starts_with("retry: `echo >> '")
            && last.contains(": giving up after attempt 3/3: --throttle api rejected it (rejection probability ")
            && last.ends_with("and no attempts are left; it rejected every attempt: the command never ran (reason: throttle)"),
        "{said}"
    );
    let output = t.run(&["-n", "2", "--breaker-exit-code", "99"], "exit 0");
    assert_eq!((output.status.code(), t.ran()), (Some(99), 0));
    let output = t.run(&["-n", "2", "--log-format", "json"], "exit 0");
    let said = text(&output.stderr);
    assert_eq!(
        said.matches(r#""event":"attempt_rejected""#).count(),
        1,
        "{said}"
    );
    assert!(
        said.contains(r#""exit_code":75,"reason":"throttle","throttle":"api","#)
            && said.contains(r#""ran_out":"attempts""#),
        "{said}"
    );
}

/// Every attempt asks and a success is told, in either store; a healthy
/// service is never throttled.
#[test]
fn every_attempt_is_counted_and_a_success_accepted() {
    for t in Throttle::each() {
        let name = t.name();
        // A service that accepted much of late: nothing is rejected.
        t.forge_now(0, 10);
        let fail_once = format!(
            "[ -e '{0}' ] || {{ : > '{0}'; exit 1; }}",
            t.path("once").display()
        );
        let output = t.run(&["-n", "3"], &fail_once);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name}: {}",
            text(&output.stderr)
        );
        assert_eq!(t.counts(), (2, 11), "{name}");
        for _ in 0..5 {
            assert_eq!(t.run(&[], "exit 0").status.code(), Some(0));
        }
        assert_eq!(t.counts(), (7, 16), "{name}");
        assert!(
            t.status()
                .starts_with("throttle api: rejects 0.0% of requests now"),
            "{name}"
        );
    }
}

/// State that cannot be trusted: ignored with one warning, reset, and the
/// run goes on without the throttle, in either store.
#[test]
fn a_forged_state_is_one_warning_and_the_run_goes_on() {
    for t in Throttle::each() {
        let name = t.name();
        let now = t.now_ms();
        let start = now - now % WINDOW_MS;
        // More than a window ahead of the clock: a clock that went back.
        let ahead = (start + 2 * WINDOW_MS).to_string();
        let mut forged = vec![
            (start.to_string(), "4294967297".to_owned()),
            (ahead, "1000".to_owned()),
        ];
        // In Redis a hash holds any text; a record's fields are digits.
        if name == "redis" {
            forged.extend([
                (start.to_string(), "-5".to_owned()),
                (start.to_string(), "nan".to_owned()),
                (start.to_string(), "1.5".to_owned()),
            ]);
        }
        for (start, requests) in forged {
            t.forge(start.parse().unwrap_or(0), &requests, "0");
            let output = t.run(&["-n", "2"], "exit 0");
            let said = text(&output.stderr);
            assert_eq!(output.status.code(), Some(0), "{name} {requests}: {said}");
            let warnings: Vec<&str> = said.lines().filter(|l| l.contains("warning")).collect();
            assert_eq!(warnings.len(), 1, "{name} {requests}: {said}");
            assert!(
                warnings[0].contains("--throttle api: ")
                    && warnings[0].ends_with("; reset, and this run goes without the throttle"),
                "{name} {requests}: {said}"
            );
            // Reset: the next run starts afresh, unwarned.
            let output = t.run(&[], "exit 0");
            assert_eq!(text(&output.stderr), "", "{name} {requests}");
        }
    }
}

/// A record that is no record (torn, garbage) on the host: the same.
#[test]
fn a_garbled_record_is_one_warning() {
    let t = Throttle::host();
    t.forge_now(1, 0);
    let path = t.path("retry/.throttles/api");
    std::fs::write(&path, "retry-throttle 1 garbage\n").unwrap();
    let output = t.run(&[], "exit 0");
    let said = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("api is not a valid throttle record; reset, and this run goes without"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "{said}");
}

/// A symlink, a FIFO, a file others may write (and as root, another
/// user's file) in the state's place: one warning, and the attempts run.
#[test]
fn hostile_and_foreign_state_is_skipped_with_one_warning() {
    let t = Throttle::host();
    t.forge_now(100_000, 0);
    let path = t.path("retry/.throttles/api");
    let runs_without = |reason: &str| {
        let started = Instant::now();
        let output = t.run(&["-n", "2"], "exit 1");
        let said = text(&output.stderr);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{reason}: held up"
        );
        let warnings: Vec<&str> = said.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), 1, "{reason}: {said}");
        assert!(
            warnings[0].contains(reason) && warnings[0].ends_with("; running without the throttle"),
            "{said}"
        );
        assert!(!said.contains("not run"), "{said}");
    };
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o660)).unwrap();
    runs_without("is writable by other users (mode 660)");
    assert_eq!(t.ran(), 2);
    std::fs::remove_file(&path).unwrap();
    let elsewhere = t.path("elsewhere");
    std::fs::write(&elsewhere, "").unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    runs_without("symlink");
    std::fs::remove_file(&path).unwrap();
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    runs_without("not a regular file");
    assert_eq!(t.ran(), 6);
    if nix::unistd::geteuid().as_raw() != 0 {
        eprintln!("skipped in part: another user's state (only root can chown it to one)");
        return;
    }
    std::fs::remove_file(&path).unwrap();
    t.forge_now(100_000, 0);
    std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
    runs_without("is owned by user id 65534, not by you (0)");
    std::os::unix::fs::chown(&path, Some(0), None).unwrap();
    std::os::unix::fs::chown(t.path("retry/.throttles"), Some(65534), None).unwrap();
    runs_without("is owned by user id 65534, not by you (0)");
}

/// A store that accepts connections and never answers: each attempt still
/// runs, after one wait of the store's timeout (the fleet budget's bound),
/// with one warning; the rest of the run does without it.
#[cfg(feature = "redis")]
#[test]
fn a_store_that_never_answers_fails_open_within_the_store_timeout() {
    let dir = scratch();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("redis://127.0.0.1:{}", silent.local_addr().unwrap().port());
    let log = dir.path().join("log");
    let script = format!("echo >> '{}'; exit 1", log.display());
    for (timeout, least, most) in [(None, 250, 2000), (Some("100ms"), 100, 1500)] {
        let _ = std::fs::remove_file(&log);
        let mut run = retry(&[
            "--throttle",
            "api",
            "-n",
            "3",
            "--base",
            "0ms",
            "--store",
            &url,
        ])
        .env("XDG_RUNTIME_DIR", dir.path());
        if let Some(timeout) = timeout {
            run = run.args(&["--store-timeout", timeout]);
        }
        let started = Instant::now();
        let output = run.args(&["--", "sh", "-c", &script]).output();
        let took = started.elapsed();
        let said = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{said}");
        assert_eq!(
            std::fs::read_to_string(&log).unwrap().lines().count(),
            3,
            "{said}"
        );
        let warnings: Vec<&str> = said.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), 1, "{said}");
        let ms = timeout.map_or(250, |t| t.trim_end_matches("ms").parse().unwrap());
        assert!(
            warnings[0].contains(&format!(
                "--throttle api: the store {url}/0 failed: no answer within {ms} ms; running without the throttle"
            )),
            "{said}"
        );
        assert!(
            took >= Duration::from_millis(least) && took < Duration::from_millis(most),
            "{took:?}"
        );
    }
}

/// A server that lies, answering the script with what it cannot answer (a
/// rejection at a probability of 0, negative or huge numbers, a flag of
/// 7): a failed store, one warning, and every attempt runs; never the
/// exit status 75 of a run the throttle rejected whole.
#[cfg(feature = "redis")]
#[test]
fn a_store_that_lies_fails_open() {
    let lies: [&[u8]; 3] = [
        b"*7\r\n:0\r\n:0\r\n:0\r\n:0\r\n:0\r\n:1\r\n:1\r\n",
        b"*7\r\n:0\r\n:-5\r\n:-5\r\n:-9\r\n:-9\r\n:1\r\n:1\r\n",
        b"*7\r\n:0\r\n:4611686018427387904\r\n:0\r\n:0\r\n:0\r\n:7\r\n:1\r\n",
    ];
    for lie in lies {
        let dir = scratch();
        let port = crate::fleet::fake_store(lie, None);
        let url = format!("redis://127.0.0.1:{port}");
        let log = dir.path().join("log");
        let script = format!("echo >> '{}'; exit 1", log.display());
        let output = retry(&["--throttle", "api", "-n", "2", "--base", "0ms"])
            .args(&["--throttle-base", "1ms", "--cap", "2ms", "--store", &url])
            .env("XDG_RUNTIME_DIR", dir.path())
            .args(&["--", "sh", "-c", &script])
            .output();
        let said = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{said}");
        let ran = std::fs::read_to_string(&log).map_or(0, |t| t.lines().count());
        assert_eq!(ran, 2, "{said}");
        let warnings: Vec<&str> = said.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), 1, "{said}");
        assert!(
            warnings[0].contains("which it cannot; running without the throttle"),
            "{said}"
        );
    }
}

/// One exchange per attempt in Redis: the outcome travels with the next
/// ask, and only an accept is told at the end.
#[cfg(feature = "redis")]
#[test]
fn one_exchange_per_attempt_with_redis() {
    let Some(t) = Throttle::redis() else {
        return;
    };
    let Place::Redis(server) = &t.place else {
        unreachable!()
    };
    // The script cached by a first run, then the calls counted; accepts
    // enough that nothing is rejected.
    assert_eq!(t.run(&[], "exit 0").status.code(), Some(0));
    t.forge_now(0, 100);
    let calls = || {
        let stats = server.cli(&["INFO", "commandstats"]);
        stats
            .lines()
            .filter(|l| l.starts_with("cmdstat_evalsha:") || l.starts_with("cmdstat_eval:"))
            .map(|l| {
                let calls = l.split("calls=").nth(1).unwrap();
                calls.split(',').next().unwrap().parse::<u64>().unwrap()
            })
            .sum::<u64>()
    };
    server.cli(&["CONFIG", "RESETSTAT"]);
    // Three failures: three asks, nothing told (none was accepted).
    assert_eq!(t.run(&["-n", "3"], "exit 1").status.code(), Some(1));
    assert_eq!(calls(), 3);
    // A failure then a success: two asks, and the accept told.
    server.cli(&["CONFIG", "RESETSTAT"]);
    let once = format!(
        "[ -e '{0}' ] || {{ : > '{0}'; exit 1; }}",
        t.path("once").display()
    );
    assert_eq!(t.run(&["-n", "3"], &once).status.code(), Some(0));
    assert_eq!(calls(), 3);
    let ttl: i64 = server
        .cli(&["PTTL", "retry:throttle:api"])
        .trim()
        .parse()
        .unwrap();
    let two_windows = 2 * WINDOW_MS as i64;
    assert!(ttl > two_windows - 60_000 && ttl <= two_windows, "{ttl}");
}

/// `--throttle-status` with `--metrics-dir`: the throttle's own file; a run
/// that was rejected adds to its counter.
#[test]
fn the_throttle_s_series_are_a_file_of_its_own() {
    let t = Throttle::host();
    let metrics = scratch();
    let dir = metrics.path().to_str().unwrap();
    t.forge_now(100_000, 0);
    let output = t.run(
        &["-n", "2", "--metrics-dir", dir, "--job", "sync"],
        "exit 0",
    );
    assert_eq!(output.status.code(), Some(75));
    let file = metrics.path().join("retry-throttle-api.prom");
    let series = std::fs::read_to_string(&file).unwrap();
    assert!(
        series.contains("retry_throttle_rejected_total{throttle=\"api\"} 2\n"),
        "{series}"
    );
    assert!(
        series.contains("retry_throttle_reject_probability{throttle=\"api\"} 0.99"),
        "{series}"
    );
    let job = std::fs::read_to_string(metrics.path().join("retry_sync.prom")).unwrap();
    assert!(
        job.contains("retry_last_run_attempts{retry_job=\"sync\"} 0\n"),
        "{job}"
    );
    assert!(
        job.contains("retry_last_run_outcome{retry_job=\"sync\",outcome=\"skipped\"} 1\n"),
        "{job}"
    );
    let status = t
        .with_store(retry(&["--throttle-status", "api", "--metrics-dir", dir]).args(&WINDOW))
        .output();
    assert_eq!(status.status.code(), Some(0), "{}", text(&status.stderr));
    let series = std::fs::read_to_string(&file).unwrap();
    assert!(
        series.contains("retry_throttle_rejected_total{throttle=\"api\"} 2\n"),
        "{series}"
    );
}

/// Bad input: one line naming the option (or its variable) and the value,
/// exit 2, and nothing runs.
#[test]
fn bad_values_are_one_line_exit_2_and_nothing_runs() {
    let t = Throttle::host();
    let log = t.path("log");
    let script = format!("echo >> '{}'", log.display());
    /// The line, a variable set, and what the error says.
    type Case<'a> = (&'a [&'a str], Option<(&'a str, &'a str)>, &'a str);
    let cases: [Case; 8] = [
        (
            &["--throttle", "api", "--throttle-k", "0"],
            None,
            "invalid value '0' for '--throttle-k <K>'",
        ),
        (
            &["--throttle", "api", "--throttle-k", "-1"],
            None,
            "invalid value '-1' for '--throttle-k <K>'",
        ),
        (
            &["--throttle", "api", "--throttle-k", "nan"],
            None,
            "invalid value 'nan' for '--throttle-k <K>'",
        ),
        (
            &["--throttle", "api", "--throttle-k", "inf"],
            None,
            "invalid value 'inf' for '--throttle-k <K>'",
        ),
        (
            &["--throttle", "api"],
            Some(("RETRY_THROTTLE_K", "-2")),
            "RETRY_THROTTLE_K",
        ),
        (
            &["--throttle", "api", "--throttle-window", "999ms"],
            None,
            "`--throttle-window 999ms` is under 1s",
        ),
        (
            &["--throttle", "api"],
            Some(("RETRY_THROTTLE_WINDOW", "0s")),
            "RETRY_THROTTLE_WINDOW",
        ),
        (
            &["--throttle", "../x"],
            None,
            "invalid value '../x' for '--throttle <NAME>'",
        ),
    ];
    for (args, variable, said) in cases {
        let mut run = retry(&[]).env("XDG_RUNTIME_DIR", t.dir.path()).args(args);
        if let Some((name, value)) = variable {
            run = run.env(name, value);
        }
        let output = run.args(&["--", "sh", "-c", &script]).output();
        let err = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
        assert!(!log.exists(), "{args:?}: the command ran");
    }
    assert!(
        !t.path("retry").exists(),
        "a refused line touched the state"
    );
}

/// `bench/throttle.sh` at the size of a smoke test, on the build under
/// test and without the release unit tests (`THROTTLE_QUICK`): it starts
/// its redis-server on loopback, writes its section (keeping the rest of
/// the file), and leaves neither the server nor its directory behind.
#[cfg(feature = "redis")] // the bench measures a Redis store
#[test]
fn the_cost_bench_runs_and_leaves_nothing_behind() {
    let tools = ["hyperfine", "redis-server", "redis-cli", "python3"];
    if !crate::harness::tools_for("bench/throttle.sh", &tools, "RETRY_TESTS_NEED_BENCH") {
        return;
    }
    let dir = scratch();
    let results = dir.path().join("RESULTS.md");
    std::fs::write(&results, "# Results\n\n## Another section\n\nkept\n").unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/throttle.sh");
    let out = std::process::Command::new("bash")
        .arg(script)
        .env("THROTTLE_BIN", crate::harness::bin())
        .env("THROTTLE_QUICK", "1")
        .env("THROTTLE_ATTEMPTS", "3")
        .env("THROTTLE_RUNS", "2")
        .env("THROTTLE_ROUNDS", "1")
        .env("THROTTLE_RESULTS", &results)
        .output()
        .unwrap();
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    let written = std::fs::read_to_string(&results).unwrap();
    assert!(written.contains("## Another section\n\nkept"), "{written}");
    assert_eq!(
        written.matches("## The adaptive throttle's cost").count(),
        1,
        "{written}"
    );
    for row in [
        "| none (the baseline) | ",
        "| host file | ",
        "| Redis, loopback | ",
    ] {
        assert!(written.contains(row), "no row {row:?} in\n{written}");
    }
    // What it started and made: gone.
    let line = said
        .lines()
        .find(|l| l.starts_with("throttle: work dir "))
        .unwrap();
    let words: Vec<&str> = line.split(' ').collect();
    let (work, pid) = (words[3].trim_end_matches(','), words[6]);
    assert!(!std::path::Path::new(work).exists(), "{work} is left");
    let pid: i32 = pid.parse().unwrap();
    assert!(!crate::harness::alive(pid), "redis-server {pid} is left");
}
