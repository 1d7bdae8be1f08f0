//! Where the circuit is kept, when it cannot be trusted or reached:
//! another user's state, a probe lock that cannot be used, a stopped
//! store, a wrong password (never shown), and the Redis key's expiry.
//! Moved out of breaker.rs (issue 51) so each file stays under 800 lines;
//! its gates are breaker.rs's, and test by test.

use std::os::unix::fs::PermissionsExt;
use std::process::Output;
#[cfg(feature = "redis")]
use std::time::{Duration, Instant};

#[cfg(feature = "redis")]
use super::Place;
use super::{Circuit, open_and_wait, text};
#[cfg(feature = "redis")]
use crate::harness::{retry, scratch};

/// One warning naming the breaker, and the command run as without it.
#[track_caller]
fn runs_without_the_breaker(output: &Output, reason: &str) {
    let said = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let warnings: Vec<&str> = said.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{said}");
    assert!(warnings[0].contains("--breaker ci: "), "{said}");
    assert!(warnings[0].contains(reason), "{said}");
    assert!(
        warnings[0].ends_with("; running without the breaker"),
        "{said}"
    );
}

#[test]
fn another_users_state_is_skipped_with_one_warning() {
    let c = Circuit::host();
    let args = ["--breaker-after", "1", "-n", "1"];
    // Used once, so its file exists.
    assert_eq!(c.run(&args, "log", "exit 1").status.code(), Some(1));
    let state = c.path("retry/.breakers/ci");
    // A file others may write is as good as another user's.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o660)).unwrap();
    let output = c.run(&args, "log", "exit 0");
    runs_without_the_breaker(&output, "is writable by other users (mode 660)");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o600)).unwrap();
    let uid = nix::unistd::geteuid().as_raw();
    if uid != 0 {
        eprintln!(
            "skipped in part: a state file of another user's (only root can chown it to one)"
        );
        return;
    }
    std::os::unix::fs::chown(&state, Some(65534), None).unwrap();
    let output = c.run(&args, "log", "exit 0");
    runs_without_the_breaker(&output, "is owned by user id 65534, not by you (0)");
    // Its directory another user's: the same.
    std::os::unix::fs::chown(&state, Some(0), None).unwrap();
    std::os::unix::fs::chown(c.path("retry/.breakers"), Some(65534), None).unwrap();
    let output = c.run(&args, "log", "exit 0");
    runs_without_the_breaker(&output, "is owned by user id 65534, not by you (0)");
    assert_eq!(c.lines("log"), 4);
}

#[test]
fn a_probe_lock_that_cannot_be_used_leaves_the_lease_alone_to_bound_it() {
    let c = Circuit::host();
    if nix::unistd::geteuid().as_raw() != 0 {
        eprintln!("skipped: another user's directory of probe locks (only root can chown it)");
        return;
    }
    open_and_wait(&c, "20ms");
    let probes = c.path("retry/.breakers/.probes");
    std::fs::create_dir(&probes).unwrap();
    std::os::unix::fs::chown(&probes, Some(65534), None).unwrap();
    // The probe runs, with one warning, and its success closes the circuit.
    let output = c.run(&["--breaker-after", "1"], "log", "exit 0");
    let said = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let warnings: Vec<&str> = said.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{said}");
    assert!(
        warnings[0].contains("--breaker ci: ")
            && warnings[0].contains("is owned by user id 65534")
            && warnings[0].ends_with("; a probe that dies holds the circuit until its lease ends"),
        "{said}"
    );
    assert!(c.status(&[]).contains("closed; 0 failed runs"));
}

#[cfg(feature = "redis")]
#[test]
fn a_stopped_store_fails_open_within_the_timeout() {
    let Some(c) = Circuit::redis() else { return };
    let Place::Redis(server) = &c.place else {
        unreachable!()
    };
    server.signal("-STOP");
    let started = Instant::now();
    let output = c
        .retry(&["--store-timeout", "200ms", "-n", "1"])
        .args(&["--", "sh", "-c", "exit 0"])
        .output();
    let took = started.elapsed();
    server.signal("-CONT");
    runs_without_the_breaker(
        &output,
        &format!("the store {} failed: no answer within 200 ms", server.url()),
    );
    assert!(took < Duration::from_secs(3), "{took:?}");
}

#[cfg(feature = "redis")]
#[test]
fn a_wrong_password_fails_open_and_is_never_shown() {
    let dir = scratch();
    let port = crate::fleet::free_port();
    let Some(_server) =
        crate::fleet::Server::start(dir.path(), Some(port), &["--requirepass", "right-password"])
    else {
        return;
    };
    let wrong = format!("redis://retry:wrong-password@127.0.0.1:{port}/0");
    // Under either spelling of the store.
    for variable in ["RETRY_STORE", "RETRY_BUDGET_STORE"] {
        let output = retry(&["--breaker", "ci", "-n", "1", "--", "true"])
            .env("XDG_RUNTIME_DIR", dir.path())
            .env(variable, &wrong)
            .output();
        runs_without_the_breaker(&output, &format!("redis://retry:***@127.0.0.1:{port}/0"));
        assert!(!text(&output.stderr).contains("wrong-password"));
    }
    let status = retry(&["--breaker-status", "ci", "--store", &wrong]).output();
    assert_eq!(status.status.code(), Some(1));
    let said = text(&status.stderr);
    assert!(
        said.starts_with("retry: --breaker-status ci: ") && said.contains("redis://retry:***@"),
        "{said}"
    );
    assert!(!said.contains("wrong-password"), "{said}");
}

#[cfg(feature = "redis")]
#[test]
fn the_key_expires_and_commands_never_see_the_store() {
    let Some(c) = Circuit::redis() else { return };
    let Place::Redis(server) = &c.place else {
        unreachable!()
    };
    let seen = c.path("seen");
    let script = format!(
        "echo \"${{RETRY_STORE-unset}} ${{RETRY_BUDGET_STORE-unset}}\" >> '{}'; exit 1",
        seen.display()
    );
    let output = c
        .retry(&[
            "--breaker-after",
            "1",
            "--breaker-cooldown",
            "1m",
            "--breaker-cooldown-max",
            "8m",
            "-n",
            "2",
        ])
        .env("RETRY_BUDGET_STORE", server.url())
        .args(&[
            "--on-retry",
            &script.replace("exit 1", "true"),
            "--",
            "sh",
            "-c",
            &script,
        ])
        .output();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        "unset unset\n".repeat(3)
    );
    // Four times the longest cooldown (8 min) and the lease (30 s).
    let ttl: u64 = server
        .cli(&["PTTL", "retry:breaker:ci"])
        .trim()
        .parse()
        .unwrap();
    let full = 4 * (8 * 60_000 + 30_000);
    assert!(ttl > full - 60_000 && ttl <= full, "{ttl}");
}
