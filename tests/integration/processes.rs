//! Timeouts, signals and process groups: nothing is left behind.
//! Each test learns pids from files the command writes, never from timing.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::harness::{
    alive, assert_all_gone, assert_died_of, gone_soon, retry, scratch, send, wait_for_file,
};

/// The process group ids of a command and of its parent (retry), as the
/// command sees them (`ps`, which every Unix has, not Linux's /proc).
const GROUPS: &str = "ps -o pgid= -p $$; ps -o pgid= -p $PPID";

#[test]
fn timeout_kills_grandchildren_and_exits_124() {
    let dir = scratch();
    let pids = dir.path().join("pids");
    let script = format!("sleep 100 & echo $! >> {}; wait", pids.display());
    let out = retry(&[
        "-t",
        "50ms",
        "--kill-after",
        "1s",
        "-n",
        "2",
        "--base",
        "1ms",
        "sh",
        "-c",
        &script,
    ])
    .run();
    out.code(124)
        .stderr_has("timeout after 50ms (exit code 124)");
    let pids: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "both attempts ran");
    for pid in pids {
        assert!(gone_soon(pid), "grandchild {pid} survived the timeout");
    }
    assert!(out.elapsed < Duration::from_secs(5), "{out:#?}");
}

#[test]
fn timeout_escalates_to_sigkill_after_the_grace() {
    let dir = scratch();
    let ready = dir.path().join("ready");
    let script = format!(
        "trap '' TERM; echo $$ > {}; while :; do sleep 0.01; done",
        ready.display()
    );
    let start = Instant::now();
    let out = retry(&[
        "-t",
        "100ms",
        "--kill-after",
        "100ms",
        "-n",
        "1",
        "sh",
        "-c",
        &script,
    ])
    .run();
    out.code(124);
    let pid: i32 = std::fs::read_to_string(&ready)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!alive(pid));
    assert!(
        start.elapsed() >= Duration::from_millis(200),
        "killed before the grace ended"
    );
}

#[test]
fn sigterm_reaches_the_whole_group_and_exits_143() {
    let dir = scratch();
    let pids = dir.path().join("pids");
    // The sleep's output goes elsewhere, so a survivor fails `gone_soon`
    // instead of holding the test's pipes open for 100 s.
    let script = format!(
        "sleep 100 >/dev/null 2>&1 & echo \"$$ $!\" > {}; wait",
        pids.display()
    );
    let child = retry(&["sh", "-c", &script]).spawn();
    let line = wait_for_file(&pids);
    send(&child, Signal::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_died_of(out.status, Signal::SIGTERM, &out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted by SIGTERM"));
    assert_all_gone(&line, "SIGTERM to retry");
}

/// A CI cancel after the command ran longer than --kill-after: the
/// command still gets the whole grace to clean up (the grace used to be
/// counted from retry's last look before its wait, so a command that had
/// run that long was killed at once).
#[test]
fn sigterm_after_a_long_run_still_gives_the_whole_grace() {
    let dir = scratch();
    let ready = dir.path().join("ready");
    let script = format!(
        "trap 'sleep 0.1; echo cleaned up >&2; exit 143' TERM; \
         echo > {}; sleep 100 >/dev/null 2>&1 & wait",
        ready.display()
    );
    let child = retry(&["--kill-after", "1s", "bash", "-c", &script]).spawn();
    wait_for_file(&ready);
    // Longer than the grace: it used to be over as soon as it began.
    std::thread::sleep(Duration::from_millis(1300));
    let started = Instant::now();
    send(&child, Signal::SIGTERM);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cleaned up"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(1), "{stderr}");
}

#[test]
fn sigint_is_forwarded_and_no_further_attempt_starts() {
    let dir = scratch();
    let ready = dir.path().join("ready");
    let runs = dir.path().join("runs");
    // The sleep runs in the foreground and reports its own pid before exec.
    let script = format!(
        "echo x >> {}; sh -c 'echo \"$PPID $$\" > {}; exec sleep 100' >/dev/null 2>&1",
        runs.display(),
        ready.display()
    );
    let child = retry(&["--base", "1ms", "sh", "-c", &script]).spawn();
    let pids = wait_for_file(&ready);
    send(&child, Signal::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_died_of(out.status, Signal::SIGINT, &out);
    assert_all_gone(&pids, "SIGINT to retry");
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap(),
        "x\n",
        "a second attempt started"
    );
}

#[test]
fn a_second_signal_sends_sigkill() {
    let dir = scratch();
    let ready = dir.path().join("ready");
    let script = format!(
        "trap '' TERM INT; echo $$ > {}; while :; do sleep 0.01; done",
        ready.display()
    );
    let child = retry(&["sh", "-c", &script]).spawn();
    let pid: i32 = wait_for_file(&ready).trim().parse().unwrap();
    send(&child, Signal::SIGTERM);
    // The first signal is ignored by the command: it must still be running.
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        alive(pid),
        "the command ignores SIGTERM and should still run"
    );
    send(&child, Signal::SIGINT);
    let out = child.wait_with_output().unwrap();
    // It dies of the first signal.
    assert_died_of(out.status, Signal::SIGTERM, &out);
    assert!(gone_soon(pid));
}

#[test]
fn a_signal_during_the_sleep_ends_it_at_once() {
    let dir = scratch();
    let ready = dir.path().join("ready");
    let script = format!("echo $$ > {}; exit 1", ready.display());
    let child = retry(&[
        "--jitter", "none", "--base", "1h", "--cap", "1h", "sh", "-c", &script,
    ])
    .spawn();
    wait_for_file(&ready);
    // The first attempt has ended; retry is in (or about to enter) its hour-long sleep.
    let start = Instant::now();
    std::thread::sleep(Duration::from_millis(20));
    send(&child, Signal::SIGHUP);
    let out = child.wait_with_output().unwrap();
    assert_died_of(out.status, Signal::SIGHUP, &out);
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn foreground_mode_keeps_the_command_in_retrys_group() {
    let own = retry(&["--foreground", "never", "sh", "-c", GROUPS]).run();
    let shared = retry(&["--foreground", "always", "sh", "-c", GROUPS]).run();
    let groups = |out: &crate::harness::Finished| -> Vec<String> {
        out.stdout.split_whitespace().map(str::to_owned).collect()
    };
    let (own, shared) = (groups(&own), groups(&shared));
    assert_eq!(own.len(), 2, "/proc said {own:?}");
    assert_ne!(own[0], own[1], "own-group mode shares retry's group");
    assert_eq!(shared[0], shared[1], "foreground mode left retry's group");
}

#[test]
fn timeout_in_foreground_mode_still_stops_the_command() {
    retry(&[
        "--foreground",
        "always",
        "-t",
        "50ms",
        "-n",
        "1",
        "sleep",
        "100",
    ])
    .run()
    .code(124);
}

#[test]
fn auto_mode_picks_by_terminal_foreground() {
    // Without a terminal (the tests' stdin is /dev/null): a group of its own.
    let out = retry(&["sh", "-c", GROUPS]).run();
    let groups: Vec<&str> = out.stdout.split_whitespace().collect();
    assert!(groups.len() == 2 && groups[0] != groups[1], "{out:#?}");
}

#[test]
#[cfg(target_os = "linux")] // util-linux `script -qec` (BSD script's options differ)
fn auto_mode_in_a_terminals_foreground_shares_its_group() {
    // In a terminal's foreground (util-linux `script` gives retry a pty): shared.
    let inner = format!("{} sh -c '{GROUPS}'", crate::harness::bin());
    let out = std::process::Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .output();
    let Ok(out) = out else {
        return eprintln!("skipped: util-linux `script` is not installed");
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let groups: Vec<&str> = text.split_whitespace().collect();
    assert!(
        groups.len() == 2 && groups[0] == groups[1],
        "under a pty: {text:?}"
    );
}
