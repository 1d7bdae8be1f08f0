//! `--splay` and `--reset-after` end to end, in milliseconds with generous
//! bounds: a signal cuts the splay short before anything runs, and a long
//! attempt starts the attempts anew. Their rules are tested on the fake
//! clock in `src/run/splay_reset_tests.rs`.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::harness::{assert_died_of, retry, scratch, send, wait_for_file};

#[test]
fn a_signal_ends_the_splay_at_once_and_no_attempt_runs() {
    let dir = scratch();
    let [log, ran, told] = ["log", "ran", "told"].map(|name| dir.path().join(name));
    let hook = format!(
        "echo \"$RETRY_OUTCOME $RETRY_ATTEMPTS\" > '{}'",
        told.display()
    );
    let command = format!("touch '{}'", ran.display());
    let log_arg = log.to_string_lossy();
    let child = retry(&[
        "-v",
        "--splay",
        "1h",
        "--log-file",
        &log_arg,
        "--on-exit",
        &hook,
        "--",
        "sh",
        "-c",
        &command,
    ])
    .spawn();
    // The splay's line is written before its sleep.
    let said = wait_for_file(&log);
    assert!(said.contains("splay: "), "{said}");
    let sent = Instant::now();
    send(&child, Signal::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "{:?}",
        sent.elapsed()
    );
    assert_died_of(out.status, Signal::SIGTERM, &out);
    assert!(!ran.exists(), "an attempt ran");
    assert_eq!(wait_for_file(&told), "interrupted 0\n");
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.contains("during --splay's sleep, before attempt 1"),
        "{said}"
    );
}

#[test]
fn a_long_attempt_starts_the_attempts_anew() {
    let dir = scratch();
    let count = dir.path().join("count");
    let count = count.display();
    // The first attempt runs 600 ms, past --reset-after; the others fail
    // at once. -n 2 then allows two more: three in all.
    let script = format!(
        "n=$(($(cat '{count}' 2>/dev/null || echo 0) + 1)); echo $n > '{count}'; \
         echo \"attempt $RETRY_ATTEMPT\"; [ $n -eq 1 ] && sleep 0.6; exit 1"
    );
    let out = retry(&[
        "-n",
        "2",
        "--base",
        "1ms",
        "--reset-after",
        "300ms",
        "--",
        "sh",
        "-c",
        &script,
    ])
    .run();
    out.code(1)
        .stdout_is("attempt 1\nattempt 1\nattempt 2\n")
        .stderr_has("`: attempt 1/2 ran ")
        .stderr_has("; backoff reset (--reset-after): the next attempt is 1/2\n")
        .stderr_has("giving up after 2 attempts");
}
