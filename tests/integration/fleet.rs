//! `--budget-store`: one budget for a fleet, in a real `redis-server` that
//! each test starts on a unix socket in its own temporary directory (or on
//! a free port of 127.0.0.1), without persistence, and kills on drop.
//!
//! Without `redis-server` on the PATH the tests say so and pass, unless
//! `RETRY_TESTS_NEED_REDIS` is set (`.ci/run` installs it and sets it).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{Retry, retry, scratch};

/// A `redis-server` of the test's own (the breaker's tests start theirs too).
pub struct Server {
    child: Child,
    socket: PathBuf,
}

impl Server {
    /// On a unix socket in `dir` (and on `port` of 127.0.0.1 if given),
    /// with `extra` options; `None` if there is no redis-server.
    pub fn start(dir: &Path, port: Option<u16>, extra: &[&str]) -> Option<Server> {
        if Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_err()
        {
            assert!(
                std::env::var_os("RETRY_TESTS_NEED_REDIS").is_none(),
                "redis-server is not installed"
            );
            eprintln!("redis-server is not installed: skipped");
            return None;
        }
        let socket = dir.join("redis.sock");
        let port_text = port.unwrap_or(0).to_string();
        let child = Command::new("redis-server")
            .args(["--port", &port_text, "--bind", "127.0.0.1"])
            .arg("--unixsocket")
            .arg(&socket)
            .args([
                "--unixsocketperm",
                "700",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let server = Server { child, socket };
        let deadline = Instant::now() + Duration::from_secs(5);
        while server.cli(&["PING"]).trim() != "PONG" {
            assert!(Instant::now() < deadline, "redis-server never answered");
            std::thread::sleep(Duration::from_millis(10));
        }
        Some(server)
    }

    pub fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// `redis-cli` on the socket; its stdout.
    pub fn cli(&self, args: &[&str]) -> String {
        let output = Command::new("redis-cli")
            .arg("-s")
            .arg(&self.socket)
            .args(args)
            .env("REDISCLI_AUTH", "right-password")
            .stderr(Stdio::null())
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The server's clock (`TIME`), in microseconds.
    pub fn now_us(&self) -> u64 {
        let time = self.cli(&["TIME"]);
        let mut parts = time.split_whitespace().map(|p| p.parse::<u64>().unwrap());
        parts.next().unwrap() * 1_000_000 + parts.next().unwrap()
    }

    pub fn url(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    pub fn signal(&self, signal: &str) {
        Command::new("kill")
            .args([signal, &self.pid()])
            .status()
            .unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port of 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `retry --budget ci` on a "host" of its own (its runtime directory), each
/// attempt appending a line to `log`, then failing (or succeeding); the
/// store given 200 ms unless `args` say otherwise.
fn fleet_retry(host: &Path, log: &Path, args: &[&str], exit: u8) -> Retry {
    let script = format!("echo >> '{}'; exit {exit}", log.display());
    let timeout: &[&str] = match args.contains(&"--budget-timeout") {
        true => &[],
        false => &["--budget-timeout", "200ms"],
    };
    retry(&["--budget", "ci", "--base", "0ms"])
        .args(timeout)
        .env("XDG_RUNTIME_DIR", host)
        .args(args)
        .args(&["--", "sh", "-c", &script])
}

fn lines(log: &Path) -> usize {
    std::fs::read_to_string(log).map_or(0, |t| t.lines().count())
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// 50 processes on 50 "hosts", 100 tokens, no refill, 14 a retry (the
/// default): 50 first attempts and the 7 retries the budget pays for; host
/// budgets let each host pay for all of its one process's 4 retries.
#[test]
fn fifty_hosts_share_one_budget() {
    let dir = scratch();
    let Some(server) = Server::start(dir.path(), None, &[]) else {
        return;
    };
    let storm = |store: Option<&str>, log: &Path| {
        let children: Vec<Child> = (0..50)
            .map(|i| {
                let host = dir.path().join(format!("host{i}"));
                std::fs::create_dir_all(&host).unwrap();
                // The whole exchange in 200 ms is too tight for 50 processes
                // started at once beside the rest of the suite.
                let mut args = vec!["-n", "5", "--budget-tokens", "100", "--budget-refill", "0"];
                args.extend(["--budget-timeout", "5s"]);
                args.extend(store.iter().flat_map(|s| ["--budget-store", *s]));
                let mut command = fleet_retry(&host, log, &args, 1).into_command();
                command.stdout(Stdio::null()).stderr(Stdio::piped());
                command.spawn().unwrap()
            })
            .collect();
        for child in children {
            let output = child.wait_with_output().unwrap();
            assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
            assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
        }
        lines(log)
    };
    let url = server.url();
    assert_eq!(storm(Some(&url), &dir.path().join("fleet.log")), 57);
    assert_eq!(storm(None, &dir.path().join("hosts.log")), 250);
    // --budget-status reads the bucket's size from the store.
    let status = retry(&["--budget-status", "ci", "--budget-store", &url])
        .output()
        .stdout;
    let status = String::from_utf8_lossy(&status);
    assert!(
        status.starts_with("budget ci: 2.0 of 100 tokens, 0 retries"),
        "{status}"
    );
    assert!(status.contains("retry:budget:ci in unix://"), "{status}");
}

/// One warning naming the budget and the store, every attempt made, in
/// bounded time.
#[track_caller]
fn fails_open(output: &std::process::Output, log: &Path, attempts: usize) -> String {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert_eq!(lines(log), attempts, "{text}");
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert!(
        warnings[0].contains("--budget ci: the store ")
            && warnings[0].contains("; running without the budget"),
        "{text}"
    );
    warnings[0].to_owned()
}

#[test]
fn a_stopped_store_is_waited_for_only_the_timeout() {
    let dir = scratch();
    let Some(server) = Server::start(dir.path(), None, &[]) else {
        return;
    };
    let log = dir.path().join("log");
    // The second attempt stops the server: the retry after it finds the
    // store hung, waits 200 ms and goes ahead.
    let script = format!(
        "echo >> '{}'; [ $RETRY_ATTEMPT = 2 ] && kill -STOP {}; exit 1",
        log.display(),
        server.pid()
    );
    let started = Instant::now();
    let output = retry(&["--budget", "ci", "-n", "4", "--base", "0ms"])
        .args(&["--budget-store", &server.url(), "--budget-timeout", "200ms"])
        .env("XDG_RUNTIME_DIR", dir.path())
        .args(&["--", "sh", "-c", &script])
        .output();
    let took = started.elapsed();
    server.signal("-CONT");
    let warning = fails_open(&output, &log, 4);
    assert!(warning.contains(&server.url()), "{warning}");
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_secs(3),
        "{took:?}"
    );
}

#[test]
fn a_store_killed_and_restarted_is_skipped_then_used_again() {
    let dir = scratch();
    let Some(server) = Server::start(dir.path(), None, &[]) else {
        return;
    };
    let url = server.url();
    let small = ["-n", "3", "--budget-tokens", "14", "--budget-refill", "0"];
    let with_store = |log: &Path| {
        let mut args = small.to_vec();
        args.extend(["--budget-store", &url]);
        fleet_retry(dir.path(), log, &args, 1).output()
    };
    drop(server);
    let down = dir.path().join("down.log");
    fails_open(&with_store(&down), &down, 3);
    let _server = Server::start(dir.path(), None, &[]).unwrap();
    let up = dir.path().join("up.log");
    let output = with_store(&up);
    // 14 tokens pay for one retry; then the budget gives up.
    assert_eq!(lines(&up), 2, "{}", stderr(&output));
    assert!(stderr(&output).contains("(reason: budget)"));
}

#[test]
fn a_wrong_password_fails_open_and_is_never_shown() {
    let dir = scratch();
    let port = free_port();
    let Some(_server) = Server::start(dir.path(), Some(port), &["--requirepass", "right-password"])
    else {
        return;
    };
    let wrong = format!("redis://retry:wrong-password@127.0.0.1:{port}/0");
    for format in ["text", "json"] {
        let log = dir.path().join(format!("{format}.log"));
        let output = fleet_retry(dir.path(), &log, &["-n", "3", "--log-format", format], 1)
            .env("RETRY_BUDGET_STORE", &wrong)
            .output();
        let warning = fails_open(&output, &log, 3);
        assert!(
            warning.contains(&format!("redis://retry:***@127.0.0.1:{port}/0")),
            "{warning}"
        );
        assert!(!stderr(&output).contains("wrong-password"));
    }
    // The right one works; the store is named without it in the status.
    let right = format!("redis://:right-password@127.0.0.1:{port}");
    let log = dir.path().join("right.log");
    let output = fleet_retry(dir.path(), &log, &["-n", "3", "--budget-refill", "0"], 1)
        .env("RETRY_BUDGET_STORE", &right)
        .output();
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
    let status = retry(&["--budget-status", "ci"])
        .env("RETRY_BUDGET_STORE", &right)
        .output();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains(&format!("redis://:***@127.0.0.1:{port}/0")),
        "{text}"
    );
    assert!(text.starts_with("budget ci: 472.0 of 500"), "{text}");
    // --budget-status with the wrong one: exit 1, no password.
    let status = retry(&["--budget-status", "ci", "--budget-store", &wrong]).output();
    assert_eq!(status.status.code(), Some(1));
    let said = stderr(&status);
    assert!(said.contains("redis://retry:***@"), "{said}");
    assert!(!said.contains("wrong-password"), "{said}");
}

#[test]
fn passwords_stay_out_of_help_and_usage_errors() {
    let secret = "redis://u:hunter2hunter2@127.0.0.1:notaport/0";
    let help = retry(&["--help"])
        .env("RETRY_BUDGET_STORE", secret)
        .output();
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("--budget-store"));
    assert!(!String::from_utf8_lossy(&help.stdout).contains("hunter2"));
    // Passwords that end the host early (`/`, `?`, `#`), quotes, a URL
    // without a host, a scheme missing a slash: all masked to the last `@`.
    for bad in [
        secret,
        "rediss://u:hunter2hunter2@127.0.0.1/0",
        "http://u:hunter2hunter2@h",
        "redis://:hunter2/hunter2@127.0.0.1:1/",
        "redis://u:hunter2?hunter2@h",
        "redis://u:hunter2#hunter2@h/0",
        "redis://u:hunter2'hunter2@h:x",
        "redis://:hunter2hunter2@",
        "redis:/u:hunter2hunter2@h",
    ] {
        let by_flag = retry(&["--budget", "ci", "--budget-store", bad, "--", "true"]).output();
        let by_variable = retry(&["--budget", "ci", "--", "true"])
            .env("RETRY_BUDGET_STORE", bad)
            .output();
        for (output, named) in [
            (by_flag, "--budget-store"),
            (by_variable, "RETRY_BUDGET_STORE"),
        ] {
            let text = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{text}");
            assert_eq!(text.lines().count(), 1, "{text}");
            assert!(text.contains(named) && text.contains("***@"), "{text}");
            assert!(!text.contains("hunter2"), "{text}");
        }
    }
}

/// A password with no `@host` after it (Redis's own `redis://:password`)
/// or in a query: masked from where it may begin to the end of the value.
#[test]
fn a_password_without_a_host_or_in_a_query_is_never_shown() {
    for (bad, shown) in [
        ("redis://:hunter2hunter2", "redis://:***"),
        ("redis://u:hunter2hunter2", "redis://u:***"),
        ("redis://:hunter2/hunter2", "redis://:***"),
        ("valkey://:hunter2?hunter2", "valkey://:***"),
        ("redis://h:1?password=hunter2", "redis://h:1?***"),
        (
            "unix:///run/r.sock?password=hunter2",
            "unix:///run/r.sock?***",
        ),
        ("rediss://:hunter2@", "rediss://***@"),
        ("unix://:hunter2@/run/r.sock", "unix://***@/run/r.sock"),
    ] {
        let by_flag = retry(&["--breaker", "ci", "--store", bad, "--", "true"]).output();
        let by_variable = retry(&["--breaker", "ci", "--", "true"])
            .env("RETRY_STORE", bad)
            .output();
        for (output, named) in [(by_flag, "--store"), (by_variable, "RETRY_STORE")] {
            let text = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{text}");
            assert_eq!(text.lines().count(), 1, "{text}");
            assert!(text.contains(named) && text.contains(shown), "{text}");
            assert!(!text.contains("hunter2"), "{text}");
        }
    }
}

/// A value that is not UTF-8 is quoted escaped, and masked all the same.
#[test]
#[cfg(unix)] // bytes that are no UTF-8; Windows arguments are UTF-16
fn a_password_that_is_not_utf8_is_never_shown() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let bad = OsString::from_vec(b"redis://u:hunter2\xffhunter2@h:1/0".to_vec());
    let mut typed = OsString::from("--budget-store=");
    typed.push(&bad);
    let with = |words: &[&OsString]| {
        let mut command = retry(&["--budget", "ci"]).into_command();
        command.args(words).args(["--", "true"]).output().unwrap()
    };
    let outputs = [
        with(&[&"--budget-store".into(), &bad]),
        with(&[&typed]),
        retry(&["--budget", "ci", "--", "true"])
            .env("RETRY_BUDGET_STORE", &bad)
            .output(),
    ];
    for output in outputs {
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{text}");
        assert!(
            text.contains("not valid UTF-8: 'redis://***@h:1/0'"),
            "{text}"
        );
        assert!(!text.contains("hunter2"), "{text}");
    }
}

#[test]
fn a_key_of_another_type_fails_open() {
    let dir = scratch();
    let Some(server) = Server::start(dir.path(), None, &[]) else {
        return;
    };
    server.cli(&["SET", "retry:budget:ci", "not a hash"]);
    let log = dir.path().join("log");
    let args = ["-n", "3", "--budget-store", &server.url()];
    let output = fleet_retry(dir.path(), &log, &args, 1).output();
    let warning = fails_open(&output, &log, 3);
    assert!(warning.contains("WRONGTYPE"), "{warning}");
    assert_eq!(server.cli(&["GET", "retry:budget:ci"]).trim(), "not a hash");
}

/// A listener that counts nothing but whether anyone connected.
#[test]
fn a_first_try_success_opens_no_connection() {
    let dir = scratch();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!(
        "redis://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    let log = dir.path().join("log");
    let args = ["-n", "3", "--budget-store", &url];
    let output = fleet_retry(dir.path(), &log, &args, 0).output();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stderr(&output), "");
    assert!(listener.accept().is_err(), "a first-try success connected");
    // A failure's retry does connect (the listener never answers: the
    // timeout, then the run goes on).
    let output = fleet_retry(dir.path(), &log, &args, 1).output();
    fails_open(&output, &log, 4);
    assert!(listener.accept().is_ok(), "a retry did not connect");
}

#[test]
fn keys_expire_when_the_bucket_would_be_full() {
    let dir = scratch();
    let Some(server) = Server::start(dir.path(), None, &[]) else {
        return;
    };
    let log = dir.path().join("log");
    // 20 tokens, 3 a second: one retry of 14 leaves the bucket full in
    // 14 / 3 = 4.67 s.
    let args = [
        "-n",
        "2",
        "--budget-tokens",
        "20",
        "--budget-refill",
        "3",
        "--budget-store",
        &server.url(),
    ];
    fleet_retry(dir.path(), &log, &args, 1).output();
    let ttl: i64 = server
        .cli(&["PTTL", "retry:budget:ci"])
        .trim()
        .parse()
        .unwrap();
    assert!(ttl > 3600 && ttl <= 4668, "{ttl}");
    assert_eq!(
        server.cli(&["HGET", "retry:budget:ci", "tokens"]).trim(),
        "20"
    );
    // From a full bucket, a retry and then a success: its 14 come back, the
    // bucket is full, so no key at all.
    server.cli(&["DEL", "retry:budget:ci"]);
    let attempt = dir.path().join("attempts");
    let script = format!("echo >> '{}'; [ $RETRY_ATTEMPT = 2 ]", attempt.display());
    let output = retry(&["--budget", "ci", "--base", "0ms"])
        .args(&args)
        .env("XDG_RUNTIME_DIR", dir.path())
        .args(&["--", "sh", "-c", &script])
        .output();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(server.cli(&["EXISTS", "retry:budget:ci"]).trim(), "0");
}

/// The sizing rule of both stores: the first to find the bucket new sizes
/// it; a process of another size is told once and keeps to it; one that
/// gave no size follows it silently.
#[test]
fn the_bucket_keeps_the_size_it_was_given() {
    let dir = scratch();
    let Some(server) = Server::start(dir.path(), None, &[]) else {
        return;
    };
    let url = server.url();
    let log = dir.path().join("log");
    let run = |size: &[&str]| {
        let mut args = vec!["-n", "2", "--budget-store", &url];
        args.extend_from_slice(size);
        stderr(&fleet_retry(dir.path(), &log, &args, 1).output())
    };
    // 20 tokens: one retry of 14 leaves 6.
    assert!(!run(&["--budget-tokens", "20", "--budget-refill", "0"]).contains("warning"));
    let other = run(&["--budget-tokens", "100", "--budget-refill", "0"]);
    assert!(
        other.contains("warning: --budget ci: the bucket holds 20 tokens refilled at 0/s, not the 100 at 0/s given"),
        "{other}"
    );
    // Too low now (6 of 20): the next retry is refused, without a word
    // about sizes.
    let silent = run(&[]);
    assert!(silent.contains("(reason: budget)"), "{silent}");
    assert!(!silent.contains("warning"), "{silent}");
    let status = retry(&["--budget-status", "ci", "--budget-store", &url]).output();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.starts_with("budget ci: 6.0 of 20 tokens"), "{text}");
}

/// The refill is the server's: 10 s of its clock at 0.3 a second are 3
/// tokens exactly, whatever this host's clock says.
#[test]
fn the_refill_runs_on_the_servers_clock() {
    let dir = scratch();
    let Some(server) = Server::start(dir.path(), None, &[]) else {
        return;
    };
    let at = (server.now_us() - 10_000_000).to_string();
    server.cli(&[
        "HSET",
        "retry:budget:ci",
        "milli",
        "0",
        "at",
        &at,
        "tokens",
        "10",
        "refill",
        "300000",
    ]);
    let status = retry(&["--budget-status", "ci", "--budget-store", &server.url()]).output();
    let text = String::from_utf8_lossy(&status.stdout);
    // 10 s at 0.3 a second: 3.0 tokens, and 0.1 more for every 333 ms a
    // loaded machine takes to start retry and ask (up to 1.6 s allowed).
    let tokens: f64 = text
        .strip_prefix("budget ci: ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|number| number.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!((3.0..=3.5).contains(&tokens), "{text}");
    assert!(
        text.contains(" of 10 tokens, 0 retries at 14 each (0 throttled ones at 5)"),
        "{text}"
    );
    assert!(text.contains("refill: 0.3 tokens/s"), "{text}");
}

/// A server clock that went back an hour (the bucket's time is ahead of
/// it) means no time has passed: the refused retry records the bucket as
/// of the server's now, so it refills from then on, not in an hour.
#[test]
fn a_clock_that_went_back_does_not_stall_the_bucket() {
    let dir = scratch();
    let Some(server) = Server::start(dir.path(), None, &[]) else {
        return;
    };
    let ahead = (server.now_us() + 3_600_000_000).to_string();
    server.cli(&[
        "HSET",
        "retry:budget:ci",
        "milli",
        "0",
        "at",
        &ahead,
        "tokens",
        "10",
        "refill",
        "1000000",
    ]);
    let log = dir.path().join("log");
    let args = ["-n", "2", "--budget-store", &server.url()];
    let output = fleet_retry(dir.path(), &log, &args, 1).output();
    assert!(
        stderr(&output).contains("(reason: budget)"),
        "{}",
        stderr(&output)
    );
    let at: u64 = server
        .cli(&["HGET", "retry:budget:ci", "at"])
        .trim()
        .parse()
        .unwrap();
    assert!(at <= server.now_us(), "{at} is still ahead");
    assert_eq!(
        server.cli(&["HGET", "retry:budget:ci", "milli"]).trim(),
        "0"
    );
}

/// A connection the server closed while the run slept (an idle timeout, a
/// restart) is opened again, without a warning.
#[test]
fn a_connection_closed_between_retries_is_opened_again() {
    let dir = scratch();
    let Some(server) = Server::start(dir.path(), None, &[]) else {
        return;
    };
    let log = dir.path().join("log");
    let script = format!(
        "echo >> '{}'; [ $RETRY_ATTEMPT = 2 ] && redis-cli -s '{}' CLIENT KILL TYPE normal >/dev/null; exit 1",
        log.display(),
        server.socket.display()
    );
    let output = retry(&["--budget", "ci", "-n", "3", "--base", "0ms"])
        .args(&["--budget-store", &server.url(), "--budget-refill", "0"])
        .env("XDG_RUNTIME_DIR", dir.path())
        .args(&["--", "sh", "-c", &script])
        .output();
    assert_eq!(lines(&log), 3, "{}", stderr(&output));
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
    // Both retries were paid for: 500 - 2 x 14.
    assert_eq!(
        server.cli(&["HGET", "retry:budget:ci", "milli"]).trim(),
        "472000"
    );
}

/// The store's URL, password and all, reaches neither the command nor the
/// `--on-retry` hook; retry itself reads it (the warning names the store).
#[test]
fn commands_and_hooks_never_see_the_store() {
    let dir = scratch();
    let port = free_port();
    let store = format!("redis://retry:hunter2hunter2@127.0.0.1:{port}/0");
    let output = retry(&["-n", "2", "--base", "0ms", "--budget", "ci"])
        .args(&["--budget-timeout", "200ms"])
        .args(&["--on-retry", "echo hook:${RETRY_BUDGET_STORE-unset}"])
        .env("RETRY_BUDGET_STORE", &store)
        .env("XDG_RUNTIME_DIR", dir.path())
        .args(&[
            "--",
            "sh",
            "-c",
            "echo attempt:${RETRY_BUDGET_STORE-unset}; exit 1",
        ])
        .output();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), stderr(&output));
    assert_eq!(stdout, "attempt:unset\nattempt:unset\n", "{stderr}");
    assert!(stderr.contains("hook:unset"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the store redis://retry:***@127.0.0.1:{port}/0 failed"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

/// A "store" on a free port of 127.0.0.1 that answers every connection
/// with `reply`, at once or one byte every `pace`, and keeps it open, for
/// 5 s at most.
pub fn fake_store(reply: &[u8], pace: Option<Duration>) -> u16 {
    let reply = reply.to_vec();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    std::thread::spawn(move || {
        while Instant::now() < until {
            let Ok((mut stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            let reply = reply.clone();
            std::thread::spawn(move || {
                use std::io::Write;
                let _ = stream.set_nonblocking(false);
                let chunk = pace.map_or(reply.len(), |_| 1);
                let mut left = &reply[..];
                while Instant::now() < until {
                    let (now, rest) = left.split_at(chunk.min(left.len()));
                    if stream.write_all(now).is_err() {
                        break;
                    }
                    left = rest;
                    std::thread::sleep(pace.unwrap_or(Duration::from_millis(10)));
                }
            });
        }
    });
    port
}

/// A reply that never ends, one byte every 50 ms: each read of the
/// client's gets a byte well within its timeout.
fn trickling_store() -> u16 {
    let mut reply = b"+".to_vec();
    reply.resize(200, b'x');
    fake_store(&reply, Some(Duration::from_millis(50)))
}

/// A reply the client cannot parse, which it describes over several lines:
/// the warning is one line, and one GitHub annotation without `%0A`.
#[test]
fn a_store_that_answers_garbage_is_one_line_of_warning() {
    let dir = scratch();
    let port = fake_store(b"\x00garbage\r\n", None);
    let url = format!("redis://127.0.0.1:{port}");
    for format in ["text", "github"] {
        let log = dir.path().join(format!("{format}.log"));
        let args = ["-n", "2", "--budget-store", &url, "--log-format", format];
        let output = fleet_retry(dir.path(), &log, &args, 1).output();
        let text = stderr(&output);
        assert_eq!((output.status.code(), lines(&log)), (Some(1), 2), "{text}");
        let warnings: Vec<&str> = text.lines().filter(|l| l.contains("the store")).collect();
        assert_eq!(warnings.len(), 1, "{text}");
        assert!(
            warnings[0].contains("failed: Incompatible type - Parse error"),
            "{text}"
        );
        assert!(
            warnings[0].ends_with("; running without the budget"),
            "{text}"
        );
        assert!(!text.contains("%0A"), "{text}");
    }
}

/// --budget-timeout bounds the whole exchange, not each read: a store that
/// trickles its answer (to the script, or to AUTH while connecting) is
/// given up on within the timeout, with a reason that says so.
#[test]
fn a_trickling_store_is_waited_for_only_the_timeout() {
    let dir = scratch();
    let port = trickling_store();
    for url in [
        format!("redis://127.0.0.1:{port}"),
        format!("redis://:hunter2hunter2@127.0.0.1:{port}/1"),
    ] {
        let log = dir.path().join(format!("{}.log", url.len()));
        let started = Instant::now();
        let output =
            fleet_retry(dir.path(), &log, &["-n", "3", "--budget-store", &url], 1).output();
        let took = started.elapsed();
        let warning = fails_open(&output, &log, 3);
        assert!(
            warning.contains("failed: no answer within 200 ms;"),
            "{warning}"
        );
        // One wait of 200 ms (the rest of the run goes without the store);
        // the trickle lasts 5 s.
        assert!(
            took >= Duration::from_millis(200) && took < Duration::from_millis(2500),
            "{took:?}"
        );
    }
}

/// The same prices in Redis: one script takes what each process asks for
/// its retry's class (5 throttled, 14 transient, 14 after a timeout).
#[test]
fn a_retry_pays_its_class_price_from_the_fleets_bucket() {
    let dir = scratch();
    let Some(server) = Server::start(dir.path(), None, &[]) else {
        return;
    };
    let url = server.url();
    let cases = [
        ("echo 'HTTP 429' >&2; exit 1", &[][..], "495.0"),
        ("echo 'HTTP 503' >&2; exit 1", &[], "486.0"),
        ("sleep 5", &["--timeout", "100ms"][..], "486.0"),
    ];
    for (script, flags, left) in cases {
        server.cli(&["DEL", "retry:budget:ci"]);
        let output = retry(&["--budget", "ci", "--store", &url, "--budget-refill", "0"])
            .args(&["-n", "2", "--base", "0ms", "--throttle-base", "1ms"])
            .args(&["--throttle-if-output", "429"])
            .args(flags)
            .env("XDG_RUNTIME_DIR", dir.path())
            .args(&["--", "sh", "-c", script])
            .output();
        assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
        let status = retry(&["--budget-status", "ci", "--store", &url]).output();
        let text = String::from_utf8_lossy(&status.stdout);
        assert!(
            text.starts_with(&format!("budget ci: {left} of 500 tokens")),
            "{script}: {text}"
        );
    }
}
