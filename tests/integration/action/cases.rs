//! How the command's runs end: the exit status, the outputs, the summary
//! and the lines, each run a row of `table::Case`.

use super::table::{CASE, Case, Expect::*, run};

#[test]
fn success_on_the_first_try_sets_the_outputs_and_no_summary() {
    run(&[Case {
        name: "echo hello",
        inputs: &[("command", "echo hello")],
        code: 0,
        stdout: Some("hello\n"),
        outputs: &[Is("total_attempts=1\nexit_code=0\nexit_error=\nreason=\n")],
        summary: &[Is("")],
        // On PATH for the job's later steps: the checked copy in RUNNER_TEMP.
        on_path: Some(true),
        // The source it used, named (issue 50: not "the release" for a mirror).
        stderr: &[Is(
            "retry action: installed retry {version} ({target}) from the mirror {url} \
             (RETRY_INSTALL_FROM)\n",
        )],
        ..CASE
    }]);
}

#[test]
fn attempts_exhausted_give_the_command_s_code_and_why() {
    run(&[Case {
        name: "exit 3, twice",
        inputs: &[
            ("command", "exit 3"),
            ("max_attempts", "2"),
            ("retry_wait_seconds", "0"),
        ],
        code: 3,
        outputs: &[
            Starts(
                "total_attempts=2\nexit_code=3\n\
                 exit_error=Final attempt failed. Child_process exited with error code 3\n\
                 reason=giving up after 2 attempts",
            ),
            Ends("(reason: attempts)\n"),
        ],
        summary: &[
            Has("| attempt 1/2 | exit code 3; slept 0 ms |"),
            Has("| attempt 2/2 | exit code 3 |"),
            Has("| outcome | giving up after 2 attempts"),
        ],
        // Annotations under GitHub Actions are retry's to choose
        // (GITHUB_ACTIONS is unset here): plain lines.
        stderr: &[Has("attempt 1/2 failed with exit code 3")],
        ..CASE
    }]);
}

#[test]
fn a_timeout_is_exit_code_124_and_retry_on_timeout_retries_only_that() {
    run(&[
        Case {
            name: "a timeout retried",
            inputs: &[
                ("command", "[ \"$RETRY_ATTEMPT\" -ge 2 ] || exec sleep 30"),
                ("timeout_seconds", "1"),
                ("retry_on", "timeout"),
                ("retry_wait_seconds", "0"),
            ],
            code: 0,
            within: Some(15),
            outputs: &[Is("total_attempts=2\nexit_code=0\nexit_error=\nreason=\n")],
            summary: &[Has(
                "| attempt 1/5 | timeout after 1s (exit code 124); slept 0 ms |",
            )],
            ..CASE
        },
        // A failure that is no timeout is not retried.
        Case {
            name: "exit 3, retry_on: timeout",
            inputs: &[("command", "exit 3"), ("retry_on", "timeout")],
            code: 3,
            outputs: &[Starts("total_attempts=1\nexit_code=3\n")],
            ..CASE
        },
        // The last attempt timing out: 124.
        Case {
            name: "the last attempt timing out",
            inputs: &[
                ("command", "exec sleep 30"),
                ("timeout_seconds", "1"),
                ("max_attempts", "1"),
            ],
            code: 124,
            outputs: &[Starts(
                "total_attempts=1\nexit_code=124\n\
                 exit_error=Final attempt failed. Timeout of 1000ms hit\nreason=giving up",
            )],
            ..CASE
        },
    ]);
}

#[test]
fn continue_on_error_succeeds_and_the_outputs_say_how_it_ended() {
    run(&[Case {
        name: "exit 4, continue_on_error",
        inputs: &[
            ("command", "exit 4"),
            ("max_attempts", "1"),
            ("continue_on_error", "true"),
        ],
        code: 0,
        outputs: &[Starts(
            "total_attempts=1\nexit_code=4\nexit_error=Final attempt failed.",
        )],
        stderr: &[Has("continue_on_error")],
        ..CASE
    }]);
}

#[test]
fn new_command_on_retry_runs_from_the_second_attempt() {
    run(&[Case {
        name: "echo first, then again",
        inputs: &[
            ("command", "echo first; exit 1"),
            ("new_command_on_retry", "echo again; exit 0"),
            ("retry_wait_seconds", "0"),
        ],
        code: 0,
        stdout: Some("first\nagain\n"),
        outputs: &[Starts("total_attempts=2\nexit_code=0\n")],
        ..CASE
    }]);
}

#[test]
fn retry_on_exit_code_retries_that_code_only() {
    run(&[Case {
        name: "3 retried, 4 not",
        inputs: &[
            ("command", "exit $((RETRY_ATTEMPT == 1 ? 3 : 4))"),
            ("retry_on_exit_code", "3"),
            ("retry_wait_seconds", "0"),
        ],
        code: 4,
        outputs: &[
            Starts("total_attempts=2\nexit_code=4\n"),
            Ends("(reason: not_retryable)\n"),
        ],
        summary: &[
            Has("| attempt 1/5 | exit code 3; slept 0 ms |"),
            Has("| attempt 2/5 | exit code 4 |"),
        ],
        ..CASE
    }]);
}

#[test]
fn retry_on_any_retries_a_command_not_found_as_nick_fields_does() {
    run(&[
        // The hook installs the tool the first attempt lacked (127).
        Case {
            name: "127, then the hook's tool",
            inputs: &[
                ("command", "./tool"),
                (
                    "on_retry_command",
                    "printf '#!/bin/sh\\nexit 0\\n' > tool && chmod +x tool",
                ),
                ("retry_wait_seconds", "0"),
            ],
            code: 0,
            outputs: &[Is("total_attempts=2\nexit_code=0\nexit_error=\nreason=\n")],
            ..CASE
        },
        // 126 (found, not executable) too, with retry_on: error.
        Case {
            name: "126, retry_on: error",
            inputs: &[
                ("command", "[ \"$RETRY_ATTEMPT\" -ge 3 ] || exit 126"),
                ("retry_on", "error"),
                ("retry_wait_seconds", "0"),
            ],
            code: 0,
            outputs: &[Starts("total_attempts=3\n")],
            ..CASE
        },
        // With success_on, retry's own rule: no code is both retried and a
        // success (a usage error before).
        Case {
            name: "success_on: 0,3",
            inputs: &[
                ("command", "exit $((RETRY_ATTEMPT == 1 ? 1 : 3))"),
                ("success_on", "0,3"),
                ("retry_wait_seconds", "0"),
            ],
            code: 3,
            outputs: &[Starts("total_attempts=2\nexit_code=3\n")],
            ..CASE
        },
    ]);
}

/// Issue 41: the Action runs a shell line and keeps nick-fields' meaning,
/// so it chooses no preset by itself, whatever the job's environment says.
#[test]
fn the_action_chooses_no_preset_unless_one_is_named() {
    run(&[Case {
        name: "RETRY_PRESET=curl",
        // Code 3 is fatal for the curl preset (a malformed URL).
        inputs: &[
            ("command", "exit $((RETRY_ATTEMPT == 1 ? 3 : 0))"),
            ("retry_wait_seconds", "0"),
        ],
        env: &[("RETRY_PRESET", "curl")],
        code: 0,
        outputs: &[Starts("total_attempts=2\n")],
        ..CASE
    }]);
}

#[test]
fn decimal_timeouts_and_waits_run() {
    run(&[
        Case {
            name: "timeout_seconds: 1.5",
            inputs: &[
                ("command", "exec sleep 30"),
                ("timeout_seconds", "1.5"),
                ("max_attempts", "2"),
                ("retry_wait_seconds", "0.1"),
            ],
            code: 124,
            within: Some(20),
            summary: &[Has(
                "| attempt 1/2 | timeout after 1s 500ms (exit code 124); slept 100 ms |",
            )],
            ..CASE
        },
        Case {
            name: "timeout_minutes: 0.02",
            inputs: &[
                ("command", "exec sleep 30"),
                ("timeout_minutes", "0.02"),
                ("max_attempts", "2"),
                ("retry_wait_seconds", "0.1"),
            ],
            code: 124,
            within: Some(20),
            summary: &[Has(
                "| attempt 1/2 | timeout after 1s 200ms (exit code 124); slept 100 ms |",
            )],
            ..CASE
        },
    ]);
}

#[test]
fn exit_error_keeps_nick_fields_words_and_reason_has_retry_s() {
    run(&[
        // Stopped before the last attempt: nick-fields' words without "Final".
        Case {
            name: "stopped before the last attempt",
            inputs: &[
                ("command", "exit $((RETRY_ATTEMPT == 1 ? 3 : 4))"),
                ("retry_on_exit_code", "3"),
                ("retry_wait_seconds", "0"),
            ],
            code: 4,
            outputs: &[Has(
                "\nexit_error=Child_process exited with error code 4\nreason=giving up",
            )],
            ..CASE
        },
        // A timeout on the last attempt.
        Case {
            name: "a timeout on the last attempt",
            inputs: &[
                ("command", "exec sleep 30"),
                ("timeout_seconds", "1.5"),
                ("max_attempts", "1"),
            ],
            code: 124,
            outputs: &[Has(
                "\nexit_error=Final attempt failed. Timeout of 1500ms hit\nreason=",
            )],
            ..CASE
        },
    ]);
}

#[test]
fn each_attempt_is_folded_and_the_annotations_stay_outside() {
    run(&[Case {
        name: "two attempts under GitHub Actions",
        inputs: &[
            ("command", "echo try $RETRY_ATTEMPT; exit 3"),
            ("max_attempts", "2"),
            ("retry_wait_seconds", "0"),
        ],
        env: &[("GITHUB_ACTIONS", "true")],
        code: 3,
        stdout: Some(
            "::group::Attempt 1\ntry 1\n::endgroup::\n::group::Attempt 2\ntry 2\n::endgroup::\n",
        ),
        stderr: &[
            Has("::warning title=retry%3A echo try $RETRY_ATTEMPT; exit 3::attempt 1/2 failed"),
            Has("::error title=retry%3A echo try $RETRY_ATTEMPT; exit 3::giving up"),
        ],
        ..CASE
    }]);
}

#[test]
fn continue_on_error_gives_up_with_a_warning_and_warning_on_retry_false_keeps_the_error() {
    run(&[
        // A step that ends green: no error annotation.
        Case {
            name: "continue_on_error: true",
            inputs: &[
                ("command", "exit 3"),
                ("max_attempts", "2"),
                ("retry_wait_seconds", "0"),
                ("continue_on_error", "true"),
            ],
            env: &[("GITHUB_ACTIONS", "true")],
            code: 0,
            stderr: &[
                Has("::warning title=retry%3A exit 3::giving up after 2 attempts"),
                Lacks("::error"),
            ],
            ..CASE
        },
        // Retries as plain lines; giving up still an error annotation.
        Case {
            name: "warning_on_retry: false",
            inputs: &[
                ("command", "exit 3"),
                ("max_attempts", "2"),
                ("retry_wait_seconds", "0"),
                ("warning_on_retry", "false"),
            ],
            env: &[("GITHUB_ACTIONS", "true")],
            code: 3,
            stderr: &[
                Has("retry: `exit 3`: attempt 1/2 failed with exit code 3"),
                Lacks("::warning"),
                Has("::error title=retry%3A exit 3::giving up after 2 attempts"),
            ],
            ..CASE
        },
    ]);
}

#[test]
fn with_new_command_on_retry_the_lines_and_summary_name_the_user_s_command() {
    run(&[Case {
        name: "echo first, then again, under GitHub Actions",
        inputs: &[
            ("command", "echo first; exit 1"),
            ("new_command_on_retry", "echo again; exit 2"),
            ("max_attempts", "2"),
            ("retry_wait_seconds", "0"),
        ],
        env: &[("GITHUB_ACTIONS", "true")],
        code: 2,
        stderr: &[
            Has("::warning title=retry%3A echo first; exit 1::attempt 1/2"),
            Has("::error title=retry%3A echo first; exit 1::giving up"),
            Lacks("RETRY_ATTEMPT"),
        ],
        summary: &[Starts("| retry | `echo first; exit 1` |\n")],
        ..CASE
    }]);
}

#[test]
fn an_input_that_starts_with_a_dash_is_the_value_not_an_option() {
    // Go's test output and Redis's errors: regexes that start with -.
    run(&[Case {
        name: "-ERR, --- FAIL, --version",
        inputs: &[
            ("command", "echo '-ERR busy'; touch ran; exit 1"),
            ("stop_if_output", "-ERR"),
            ("retry_if_output", "--- FAIL"),
            ("on_retry_command", "--version"),
            ("retry_wait_seconds", "0"),
        ],
        code: 1,
        ran: Some(true),
        // Stopped by the output at the first attempt: the hook never ran.
        outputs: &[Starts("total_attempts=1\nexit_code=1\n")],
        ..CASE
    }]);
}
