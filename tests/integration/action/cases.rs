//! How the command's runs end: the exit status, the outputs, the summary
//! and the lines.

use super::*;

#[test]
fn success_on_the_first_try_sets_the_outputs_and_no_summary() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(&release.url(), &[("command", "echo hello")]);
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "hello\n");
    assert_eq!(
        runner.outputs(),
        "total_attempts=1\nexit_code=0\nexit_error=\nreason=\n"
    );
    assert_eq!(runner.read("summary"), "");
    // On PATH for the job's later steps: the checked copy in RUNNER_TEMP.
    let dir = runner.read("path");
    let dir = Path::new(dir.trim_end());
    assert!(dir.starts_with(runner.file("runner-temp")), "{dir:?}");
    assert!(dir.join("retry").is_file());
    // The source it used, named (issue 50: not "the release" for a mirror).
    assert_eq!(
        stderr(&ran),
        format!(
            "retry action: installed retry {VERSION} ({TARGET}) from the mirror {} \
             (RETRY_INSTALL_FROM)\n",
            release.url()
        )
    );
}

#[test]
fn attempts_exhausted_give_the_command_s_code_and_why() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exit 3"),
            ("max_attempts", "2"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    let outputs = runner.outputs();
    assert!(
        outputs.starts_with(
            "total_attempts=2\nexit_code=3\n\
             exit_error=Final attempt failed. Child_process exited with error code 3\n\
             reason=giving up after 2 attempts"
        ),
        "{outputs}"
    );
    assert!(outputs.ends_with("(reason: attempts)\n"), "{outputs}");
    let summary = runner.read("summary");
    assert!(
        summary.contains("| attempt 1/2 | exit code 3; slept 0 ms |"),
        "{summary}"
    );
    assert!(
        summary.contains("| attempt 2/2 | exit code 3 |"),
        "{summary}"
    );
    assert!(
        summary.contains("| outcome | giving up after 2 attempts"),
        "{summary}"
    );
    // Annotations under GitHub Actions are retry's to choose (GITHUB_ACTIONS
    // is unset here): plain lines.
    assert!(stderr(&ran).contains("attempt 1/2 failed with exit code 3"));
}

#[test]
fn a_timeout_is_exit_code_124_and_retry_on_timeout_retries_only_that() {
    let release = Release::new();
    let runner = Runner::new();
    let started = Instant::now();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "[ \"$RETRY_ATTEMPT\" -ge 2 ] || exec sleep 30"),
            ("timeout_seconds", "1"),
            ("retry_on", "timeout"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(
        runner.outputs(),
        "total_attempts=2\nexit_code=0\nexit_error=\nreason=\n"
    );
    let summary = runner.read("summary");
    assert!(
        summary.contains("| attempt 1/5 | timeout after 1s (exit code 124); slept 0 ms |"),
        "{summary}"
    );

    // A failure that is no timeout is not retried.
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[("command", "exit 3"), ("retry_on", "timeout")],
    );
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=1\nexit_code=3\n")
    );

    // The last attempt timing out: 124.
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exec sleep 30"),
            ("timeout_seconds", "1"),
            ("max_attempts", "1"),
        ],
    );
    assert_eq!(code(&ran), 124, "{}", stderr(&ran));
    assert!(runner.outputs().starts_with(
        "total_attempts=1\nexit_code=124\n\
                 exit_error=Final attempt failed. Timeout of 1000ms hit\nreason=giving up"
    ));
}

#[test]
fn continue_on_error_succeeds_and_the_outputs_say_how_it_ended() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exit 4"),
            ("max_attempts", "1"),
            ("continue_on_error", "true"),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=1\nexit_code=4\nexit_error=Final attempt failed.")
    );
    assert!(
        stderr(&ran).contains("continue_on_error"),
        "{}",
        stderr(&ran)
    );
}

#[test]
fn new_command_on_retry_runs_from_the_second_attempt() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "echo first; exit 1"),
            ("new_command_on_retry", "echo again; exit 0"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "first\nagain\n");
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=2\nexit_code=0\n")
    );
}

#[test]
fn retry_on_exit_code_retries_that_code_only() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exit $((RETRY_ATTEMPT == 1 ? 3 : 4))"),
            ("retry_on_exit_code", "3"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 4, "{}", stderr(&ran));
    let outputs = runner.outputs();
    assert!(
        outputs.starts_with("total_attempts=2\nexit_code=4\n"),
        "{outputs}"
    );
    assert!(outputs.ends_with("(reason: not_retryable)\n"), "{outputs}");
    let summary = runner.read("summary");
    assert!(
        summary.contains("| attempt 1/5 | exit code 3; slept 0 ms |"),
        "{summary}"
    );
    assert!(
        summary.contains("| attempt 2/5 | exit code 4 |"),
        "{summary}"
    );
}

#[test]
fn retry_on_any_retries_a_command_not_found_as_nick_fields_does() {
    let release = Release::new();
    let runner = Runner::new();
    // The hook installs the tool the first attempt lacked (127).
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "./tool"),
            (
                "on_retry_command",
                "printf '#!/bin/sh\\nexit 0\\n' > tool && chmod +x tool",
            ),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!(
        runner.outputs(),
        "total_attempts=2\nexit_code=0\nexit_error=\nreason=\n"
    );
    // 126 (found, not executable) too, with retry_on: error.
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "[ \"$RETRY_ATTEMPT\" -ge 3 ] || exit 126"),
            ("retry_on", "error"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(runner.outputs().starts_with("total_attempts=3\n"));
    // With success_on, retry's own rule: no code is both retried and a
    // success (a usage error before).
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exit $((RETRY_ATTEMPT == 1 ? 1 : 3))"),
            ("success_on", "0,3"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=2\nexit_code=3\n")
    );
}

/// Issue 41: the Action runs a shell line and keeps nick-fields' meaning,
/// so it chooses no preset by itself, whatever the job's environment says.
#[test]
fn the_action_chooses_no_preset_unless_one_is_named() {
    let release = Release::new();
    let runner = Runner::new();
    // Code 3 is fatal for the curl preset (a malformed URL).
    let ran = runner
        .step(
            &release.url(),
            &[
                ("command", "exit $((RETRY_ATTEMPT == 1 ? 3 : 0))"),
                ("retry_wait_seconds", "0"),
            ],
        )
        .env("RETRY_PRESET", "curl")
        .output()
        .unwrap();
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(runner.outputs().starts_with("total_attempts=2\n"));
}

#[test]
fn decimal_timeouts_and_waits_run() {
    let release = Release::new();
    for (input, value, shown) in [
        ("timeout_seconds", "1.5", "timeout after 1s 500ms"),
        ("timeout_minutes", "0.02", "timeout after 1s 200ms"),
    ] {
        let runner = Runner::new();
        let started = Instant::now();
        let ran = runner.run(
            &release.url(),
            &[
                ("command", "exec sleep 30"),
                (input, value),
                ("max_attempts", "2"),
                ("retry_wait_seconds", "0.1"),
            ],
        );
        assert!(started.elapsed() < Duration::from_secs(20));
        assert_eq!(code(&ran), 124, "{input}: {}", stderr(&ran));
        let summary = runner.read("summary");
        assert!(
            summary.contains(&format!(
                "| attempt 1/2 | {shown} (exit code 124); slept 100 ms |"
            )),
            "{summary}"
        );
    }
}

#[test]
fn exit_error_keeps_nick_fields_words_and_reason_has_retry_s() {
    let release = Release::new();
    // Stopped before the last attempt: nick-fields' words without "Final".
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exit $((RETRY_ATTEMPT == 1 ? 3 : 4))"),
            ("retry_on_exit_code", "3"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 4, "{}", stderr(&ran));
    let outputs = runner.outputs();
    assert!(
        outputs.contains("\nexit_error=Child_process exited with error code 4\nreason=giving up"),
        "{outputs}"
    );
    // A timeout on the last attempt.
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exec sleep 30"),
            ("timeout_seconds", "1.5"),
            ("max_attempts", "1"),
        ],
    );
    assert_eq!(code(&ran), 124, "{}", stderr(&ran));
    assert!(
        runner
            .outputs()
            .contains("\nexit_error=Final attempt failed. Timeout of 1500ms hit\nreason="),
        "{}",
        runner.outputs()
    );
}

#[test]
fn each_attempt_is_folded_and_the_annotations_stay_outside() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner
        .step(
            &release.url(),
            &[
                ("command", "echo try $RETRY_ATTEMPT; exit 3"),
                ("max_attempts", "2"),
                ("retry_wait_seconds", "0"),
            ],
        )
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    assert_eq!(
        stdout(&ran),
        "::group::Attempt 1\ntry 1\n::endgroup::\n::group::Attempt 2\ntry 2\n::endgroup::\n"
    );
    let said = stderr(&ran);
    assert!(
        said.contains(
            "::warning title=retry%3A echo try $RETRY_ATTEMPT; exit 3::attempt 1/2 failed"
        ),
        "{said}"
    );
    assert!(
        said.contains("::error title=retry%3A echo try $RETRY_ATTEMPT; exit 3::giving up"),
        "{said}"
    );
}

#[test]
fn continue_on_error_gives_up_with_a_warning_and_warning_on_retry_false_keeps_the_error() {
    let release = Release::new();
    let inputs = [
        ("command", "exit 3"),
        ("max_attempts", "2"),
        ("retry_wait_seconds", "0"),
    ];
    // A step that ends green: no error annotation.
    let runner = Runner::new();
    let mut green = inputs.to_vec();
    green.push(("continue_on_error", "true"));
    let ran = runner
        .step(&release.url(), &green)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    let said = stderr(&ran);
    assert!(
        said.contains("::warning title=retry%3A exit 3::giving up after 2 attempts"),
        "{said}"
    );
    assert!(!said.contains("::error"), "{said}");
    // Retries as plain lines; giving up still an error annotation.
    let runner = Runner::new();
    let mut plain = inputs.to_vec();
    plain.push(("warning_on_retry", "false"));
    let ran = runner
        .step(&release.url(), &plain)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    let said = stderr(&ran);
    assert!(
        said.contains("retry: `exit 3`: attempt 1/2 failed with exit code 3"),
        "{said}"
    );
    assert!(!said.contains("::warning"), "{said}");
    assert!(
        said.contains("::error title=retry%3A exit 3::giving up after 2 attempts"),
        "{said}"
    );
}

#[test]
fn with_new_command_on_retry_the_lines_and_summary_name_the_user_s_command() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner
        .step(
            &release.url(),
            &[
                ("command", "echo first; exit 1"),
                ("new_command_on_retry", "echo again; exit 2"),
                ("max_attempts", "2"),
                ("retry_wait_seconds", "0"),
            ],
        )
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(code(&ran), 2, "{}", stderr(&ran));
    let said = stderr(&ran);
    assert!(
        said.contains("::warning title=retry%3A echo first; exit 1::attempt 1/2"),
        "{said}"
    );
    assert!(
        said.contains("::error title=retry%3A echo first; exit 1::giving up"),
        "{said}"
    );
    assert!(!said.contains("RETRY_ATTEMPT"), "{said}");
    let summary = runner.read("summary");
    assert!(
        summary.starts_with("| retry | `echo first; exit 1` |\n"),
        "{summary}"
    );
}

#[test]
fn an_input_that_starts_with_a_dash_is_the_value_not_an_option() {
    // Go's test output and Redis's errors: regexes that start with -.
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "echo '-ERR busy'; touch ran; exit 1"),
            ("stop_if_output", "-ERR"),
            ("retry_if_output", "--- FAIL"),
            ("on_retry_command", "--version"),
            ("retry_wait_seconds", "0"),
        ],
    );
    let said = stderr(&ran);
    assert_eq!(code(&ran), 1, "{said}");
    assert!(runner.file("ran").exists(), "{said}");
    // Stopped by the output at the first attempt: the hook never ran.
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=1\nexit_code=1\n"),
        "{}",
        runner.outputs()
    );
}
