//! retry's own log lines (stderr only) and the environment the child sees.

use crate::harness::{fail_times, retry, scratch};

#[test]
fn retry_lines_name_attempt_status_and_sleep() {
    let dir = scratch();
    let out = retry(&[
        "--jitter",
        "none",
        "--base",
        "2ms",
        "-n",
        "3",
        "sh",
        "-c",
        &fail_times(dir.path(), 9, 22),
    ])
    .run();
    out.code(22).stdout_is("").stderr_is(
        "retry: attempt 1/3 failed with exit code 22; sleep: 2 ms (no jitter, up to 2 ms)\n\
         retry: attempt 2/3 failed with exit code 22; sleep: 4 ms (no jitter, up to 4 ms)\n\
         retry: giving up after 3 attempts: the last failed with exit code 22\n",
    );
}

#[test]
fn json_lines_have_the_documented_fields() {
    let dir = scratch();
    let out = retry(&[
        "--log-format",
        "json",
        "--jitter",
        "equal",
        "--base",
        "4ms",
        "--seed",
        "3",
        "-n",
        "2",
        "sh",
        "-c",
        &fail_times(dir.path(), 9, 5),
    ])
    .run();
    out.code(5);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{out:#?}");
    assert_eq!(
        lines[0],
        r#"{"event":"attempt_failed","attempt":1,"max_attempts":2,"exit_code":5}"#
    );
    assert!(
        lines[1].starts_with(r#"{"event":"sleep","attempt":1,"exit_code":5,"sleep_ms":"#),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].ends_with(r#","ceiling_ms":4,"strategy":"equal"}"#),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2],
        r#"{"event":"gave_up","attempt":2,"max_attempts":2,"exit_code":5,"reason":"attempts","command_exit_code":5}"#
    );
}

#[test]
fn quiet_keeps_only_the_give_up_line_and_verbose_adds_starts() {
    let quiet = retry(&["-q", "-n", "3", "--base", "1ms", "false"]).run();
    quiet.code(1).stderr_lines(1).stderr_has("giving up");
    let verbose = retry(&["-v", "true"]).run();
    verbose
        .code(0)
        .stderr_is("retry: attempt 1/5 starting\nretry: attempt 1/5 succeeded\n");
}

#[test]
fn same_seed_same_sleeps() {
    let run = || {
        retry(&["--seed", "42", "--base", "3ms", "-n", "4", "false"])
            .run()
            .stderr
    };
    let first = run();
    assert_eq!(first, run());
    assert!(first.contains("full jitter, up to 12 ms"), "{first}");
}

#[test]
fn child_sees_its_attempt_in_the_environment() {
    let out = retry(&[
        "-n", "3", "--base", "1ms", "sh", "-c",
        r#"echo "$RETRY_ATTEMPT/$RETRY_ATTEMPT_LIMIT prev=${RETRY_PREVIOUS_EXIT_CODE-unset}"; exit $((RETRY_ATTEMPT + 40))"#,
    ])
    .env("RETRY_PREVIOUS_EXIT_CODE", "99")
    .run();
    out.code(43)
        .stdout_is("1/3 prev=unset\n2/3 prev=41\n3/3 prev=42\n");
}

#[test]
fn unlimited_is_named_in_the_environment() {
    let out = retry(&["-n", "unlimited", "sh", "-c", "echo $RETRY_ATTEMPT_LIMIT"]).run();
    out.code(0).stdout_is("unlimited\n");
}

#[test]
fn child_variables_do_not_configure_a_nested_retry() {
    // The outer retry exports RETRY_ATTEMPT*; the inner one must still use its defaults.
    let inner = format!("{} -n 2 --base 1ms false", crate::harness::BIN);
    let out = retry(&["-n", "1", "sh", "-c", &inner]).run();
    out.code(1).stderr_has("giving up after 2 attempts");
}

#[test]
fn json_reports_spawn_failures_and_time_limits() {
    let out = retry(&["--log-format", "json", "no-such-command-anywhere"]).run();
    out.code(127).stderr_is(
        "{\"event\":\"gave_up\",\"attempt\":1,\"max_attempts\":5,\"exit_code\":127,\"reason\":\"spawn\",\
         \"message\":\"cannot run `no-such-command-anywhere`: command not found\"}\n",
    );
    let out = retry(&["--log-format", "json", "--max-time", "50ms", "sleep", "10"]).run();
    out.code(124).stderr_is(
        "{\"event\":\"gave_up\",\"attempt\":1,\"max_attempts\":5,\"exit_code\":124,\"reason\":\"max_time\",\
         \"command_exit_code\":124,\"command_timed_out\":true}\n",
    );
}

#[test]
fn json_reports_fatal_codes_and_success_after_retries() {
    let out = retry(&[
        "--log-format",
        "json",
        "--fatal-on",
        "3",
        "sh",
        "-c",
        "exit 3",
    ])
    .run();
    out.code(3).stderr_has(r#""reason":"fatal""#);
    let dir = scratch();
    let out = retry(&[
        "--log-format",
        "json",
        "--base",
        "1ms",
        "sh",
        "-c",
        &fail_times(dir.path(), 1, 1),
    ])
    .run();
    out.code(0)
        .stderr_has(r#"{"event":"succeeded","attempt":2,"max_attempts":5,"exit_code":0}"#);
}
