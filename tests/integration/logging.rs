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
        lines[1].ends_with(r#","ceiling_ms":4,"strategy":"equal","source":"strategy"}"#),
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
    out.code(0).stderr_has(
        r#"{"event":"succeeded","attempt":2,"max_attempts":5,"exit_code":0,"slept_ms":"#,
    );
}

#[test]
fn github_format_writes_annotations() {
    let dir = scratch();
    let script = fail_times(dir.path(), 9, 3);
    let args = [
        "--log-format",
        "github",
        "--jitter",
        "none",
        "--base",
        "2ms",
        "-n",
        "2",
    ];
    let out = retry(&[&args[..], &["sh", "-c", &script]].concat()).run();
    out.code(3).stderr_is(
        "::warning title=retry::attempt 1/2 failed with exit code 3; sleep: 2 ms (no jitter, up to 2 ms)\n\
         ::error title=retry::giving up after 2 attempts: the last failed with exit code 3\n",
    );
}

#[test]
fn auto_format_picks_github_inside_github_actions() {
    let on_github = retry(&["-n", "1", "false"])
        .env("GITHUB_ACTIONS", "true")
        .run();
    on_github.code(1).stderr_has("::error title=retry::");
    let elsewhere = retry(&["-n", "1", "false"])
        .env("GITHUB_ACTIONS", "false")
        .run();
    elsewhere
        .code(1)
        .stderr_is("retry: giving up after 1 attempt: it failed with exit code 1\n");
}

#[test]
fn success_after_retries_ends_with_a_summary_line() {
    let dir = scratch();
    let out = retry(&[
        "--jitter",
        "none",
        "--base",
        "3ms",
        "sh",
        "-c",
        &fail_times(dir.path(), 2, 1),
    ])
    .run();
    out.code(0);
    assert_eq!(out.stderr.lines().count(), 3, "{out:#?}");
    let last = out.stderr.lines().last().unwrap();
    assert!(
        last.starts_with("retry: attempt 3/5 succeeded; 3 attempts, "),
        "{last}"
    );
    let slept: u64 = last
        .split(", ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (9..200).contains(&slept),
        "slept {slept} ms for sleeps of 3 + 6 ms"
    );
}

#[test]
fn on_retry_runs_with_the_attempt_in_its_environment() {
    let dir = scratch();
    let hook_log = dir.path().join("hook");
    let hook = format!(
        "echo \"hook $RETRY_ATTEMPT $RETRY_EXIT_CODE\" >> {}; echo to-stdout",
        hook_log.display()
    );
    let out = retry(&[
        "-n",
        "3",
        "--base",
        "1ms",
        "--on-retry",
        &hook,
        "sh",
        "-c",
        "echo out; exit $((RETRY_ATTEMPT + 10))",
    ])
    .run();
    out.code(13);
    assert_eq!(
        std::fs::read_to_string(&hook_log).unwrap(),
        "hook 1 11\nhook 2 12\n"
    );
    // The hook's stdout goes to stderr: the command's stdout stays clean.
    out.stdout_is("out\nout\nout\n").stderr_has("to-stdout\n");
}

#[test]
fn a_failing_on_retry_is_logged_not_fatal() {
    let dir = scratch();
    let out = retry(&[
        "--base",
        "1ms",
        "--on-retry",
        "exit 4",
        "sh",
        "-c",
        &fail_times(dir.path(), 1, 1),
    ])
    .run();
    out.code(0)
        .stderr_has("--on-retry command failed with exit code 4 after attempt 1/5");
}

#[test]
fn no_countdown_when_stderr_is_not_a_terminal() {
    // The one sleep here is longer than a second: a terminal would show a countdown.
    let dir = scratch();
    let out = retry(&[
        "--jitter",
        "none",
        "--base",
        "1100ms",
        "sh",
        "-c",
        &fail_times(dir.path(), 1, 1),
    ])
    .run();
    out.code(0);
    assert!(
        !out.stderr.contains('\r') && !out.stderr.contains('\x1b'),
        "{out:#?}"
    );
}

#[test]
fn countdown_on_a_terminal_is_erased() {
    // util-linux `script` gives retry a terminal for stderr.
    let dir = scratch();
    let inner = format!(
        "{} --jitter none --base 1100ms sh -c '{}'",
        crate::harness::BIN,
        fail_times(dir.path(), 1, 1)
    );
    let Ok(out) = std::process::Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .output()
    else {
        return eprintln!("skipped: util-linux `script` is not installed");
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\rretry: next attempt in 2 s\x1b[K"),
        "{text:?}"
    );
    assert!(
        text.contains("\r\x1b[K"),
        "the countdown was not erased: {text:?}"
    );
}
