//! Exit statuses and the code lists, with the real binary and the
//! project's helper as the command (so these run under wine too).

use crate::harness::{count, fails, retry, scratch};

#[test]
fn first_try_success_is_silent_and_transparent() {
    let out = retry(&["--"])
        .helper(&["out", "hello\n", "err", "warn\n"])
        .run();
    out.code(0).stdout_is("hello\n").stderr_is("warn\n");
}

#[test]
fn success_after_failures_exits_zero() {
    let dir = scratch();
    let out = retry(&["--base", "1ms", "--"])
        .helper(&fails(dir.path(), 2, 3))
        .run();
    out.code(0)
        .stderr_lines(3)
        .stderr_has("attempt 3/5 succeeded");
    assert_eq!(count(dir.path()), 3);
}

#[test]
fn exhausted_attempts_exit_with_the_last_status() {
    let dir = scratch();
    let out = retry(&["-n", "3", "--base", "1ms"])
        .helper(&fails(dir.path(), 9, 7))
        .run();
    out.code(7).stderr_has("giving up after 3 attempts");
    assert_eq!(count(dir.path()), 3);
}

#[test]
fn codes_outside_retry_on_stop_at_once() {
    let dir = scratch();
    let out = retry(&["--retry-on", "1-5", "--base", "1ms"])
        .helper(&fails(dir.path(), 9, 9))
        .run();
    out.code(9).stderr_has("not retryable");
    assert_eq!(count(dir.path()), 1);
}

#[test]
fn fatal_codes_stop_even_when_retryable() {
    let dir = scratch();
    let out = retry(&["--fatal-on", "4", "--base", "1ms"])
        .helper(&fails(dir.path(), 9, 4))
        .run();
    out.code(4).stderr_has("fatal");
    assert_eq!(count(dir.path()), 1);
}

#[test]
fn success_on_adds_success_codes() {
    let dir = scratch();
    let out = retry(&["--success-on", "0,3", "--base", "1ms"])
        .helper(&fails(dir.path(), 9, 3))
        .run();
    out.code(3).stderr_is("");
    assert_eq!(count(dir.path()), 1);
}

#[test]
fn command_not_found_is_127_without_retry() {
    let out = retry(&["--base", "1ms", "no-such-command-anywhere"]).run();
    out.code(127)
        .stderr_lines(1)
        .stderr_has("cannot run `no-such-command-anywhere`: command not found");
}

#[test]
#[cfg(unix)] // the execute bit is Unix's; Windows runs by extension
fn not_executable_is_126_without_retry() {
    let dir = scratch();
    let script = dir.path().join("script.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    let out = retry(&["--base", "1ms", script.to_str().unwrap()]).run();
    out.code(126)
        .stderr_lines(1)
        .stderr_has("permission denied");
}

#[test]
#[cfg(unix)] // death by a signal, and 128+N, are Unix's
fn death_by_signal_is_128_plus_n() {
    let out = retry(&["-n", "2", "--base", "1ms", "sh", "-c", "kill -9 $$"]).run();
    out.code(137).stderr_has("signal 9 (SIGKILL)");
}

#[test]
fn double_dash_is_optional_and_command_flags_are_its_own() {
    // `-n 9` after the command is the helper's: with retry's `-n 9` the
    // failing helper would run 9 times, not once.
    let dir = scratch();
    let mut steps = fails(dir.path(), 9, 5);
    steps.extend(["-n", "9"].map(str::to_owned));
    retry(&["--base", "1ms"]).helper(&steps).run().code(5);
    assert_eq!(count(dir.path()), 5);
    retry(&["-n", "1", "--"])
        .helper(&["exit", "5"])
        .run()
        .code(5);
}

#[test]
#[cfg(unix)] // a pipeline into `wc` is sh's (cmd has no wc)
fn shell_mode_runs_pipelines() {
    let out = retry(&["-s", "echo", "a b c", "|", "wc", "-w"]).run();
    out.code(0);
    assert_eq!(out.stdout.trim(), "3");
}

#[test]
fn environment_configures_and_flags_win() {
    let dir = scratch();
    let steps = fails(dir.path(), 9, 1);
    retry(&["--base", "1ms"])
        .helper(&steps)
        .env("RETRY_MAX_ATTEMPTS", "2")
        .run()
        .code(1);
    assert_eq!(count(dir.path()), 2);
    std::fs::remove_file(dir.path().join("count")).unwrap();
    retry(&["-n", "3", "--base", "1ms"])
        .helper(&steps)
        .env("RETRY_MAX_ATTEMPTS", "2")
        .run()
        .code(1);
    assert_eq!(count(dir.path()), 3);
}

#[test]
fn max_time_gives_up_instead_of_oversleeping() {
    // Sleeps of 20 s would pass the 5 s budget: one attempt, no sleep.
    // Wide margins: starting two processes under wine on a loaded machine
    // takes most of a second (300 ms of --max-time ran out in the attempt).
    let out = retry(&["--jitter", "none", "--base", "20s", "--max-time", "5s"])
        .helper(&["exit", "1"])
        .run();
    out.code(1).stderr_has("past --max-time");
    assert!(out.elapsed.as_secs() < 15, "{out:#?}");
}

#[test]
fn max_time_stops_a_running_attempt_with_124() {
    let out = retry(&["--max-time", "100ms", "--kill-after", "1s"])
        .helper(&["sleep", "10000"])
        .run();
    out.code(124)
        .stderr_has("--max-time reached during attempt 1/5");
    assert!(out.elapsed.as_secs() < 5, "{out:#?}");
}

#[test]
fn huge_caps_and_many_attempts_saturate() {
    // 100 years is accepted; ceilings double from 1 ms without overflow.
    let out = retry(&[
        "--cap", "100y", "--base", "1ms", "--jitter", "none", "-n", "3",
    ])
    .helper(&["exit", "1"])
    .run();
    out.code(1)
        .stderr_has("sleep: 2 ms (no jitter, up to 2 ms)");
}

#[test]
fn retry_on_none_retries_only_what_the_output_condition_matches() {
    // A Terraform plan error: no code of its own is retried…
    let out = retry(&[
        "--retry-on",
        "none",
        "--retry-if-output",
        "state lock",
        "--base",
        "1ms",
        "--",
    ])
    .helper(&["err", "Error: invalid plan\n", "exit", "1"])
    .run();
    out.code(1)
        .stderr_has("giving up after attempt 1/5: exit code 1 is not retryable (--retry-on)");
    // …but the lock it names in its output is.
    let out = retry(&[
        "--retry-on",
        "none",
        "--retry-if-output",
        "state lock",
        "-n",
        "3",
        "--base",
        "1ms",
        "--",
    ])
    .helper(&["err", "Error acquiring the state lock\n", "exit", "1"])
    .run();
    out.code(1).stderr_has("giving up after 3 attempts");
    // The word in any case, from the environment too.
    retry(&["--base", "1ms", "--"])
        .env("RETRY_RETRY_ON", "None")
        .helper(&["exit", "3"])
        .run()
        .code(3)
        .stderr_has("giving up after attempt 1/5");
}
