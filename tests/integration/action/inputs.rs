//! The inputs: refused before anything runs, read as nick-fields/retry
//! reads them, and kept from the command.

use super::table::{After, CASE, Case, Expect::*, run};
use super::*;

/// A bad input: one line naming it, exit status 2 and the outputs saying
/// why, nothing downloaded or run.
const BAD: Case = Case {
    serving: Serving::Files,
    code: 2,
    stderr: &[Lines(1)],
    served: Some(0),
    after: After::Refused,
    ..CASE
};

/// `BAD` with (the input, what the line names).
macro_rules! bad {
    ($inputs:expr, $named:expr) => {
        Case {
            name: $named,
            inputs: $inputs,
            stderr: &[Lines(1), Has($named)],
            ..BAD
        }
    };
}

#[test]
fn a_bad_input_is_one_line_naming_it_and_nothing_runs() {
    run(&[
        bad!(
            &[("command", "touch ran"), ("retry_on", "sometimes")],
            "retry_on: 'sometimes'"
        ),
        bad!(
            &[
                ("command", "touch ran"),
                ("timeout_minutes", "1"),
                ("timeout_seconds", "30"),
            ],
            "timeout_minutes and timeout_seconds"
        ),
        bad!(
            &[("command", "touch ran"), ("max_attempts", "three")],
            "max_attempts: 'three'"
        ),
        bad!(
            &[("command", "touch ran"), ("shell", "cmd")],
            "shell: 'cmd'"
        ),
        bad!(
            &[
                ("command", "touch ran"),
                ("shell", "fish-that-is-not-there")
            ],
            "shell: 'fish-that-is-not-there'"
        ),
        bad!(
            &[("command", "touch ran"), ("continue_on_error", "maybe")],
            "continue_on_error: 'maybe'"
        ),
        bad!(
            &[("command", "touch ran"), ("retry_wait_seconds", "ten")],
            "retry_wait_seconds: 'ten'"
        ),
        // nick-fields' constant wait and retry's backoff contradict.
        bad!(
            &[
                ("command", "touch ran"),
                ("retry_wait_seconds", "5"),
                ("jitter", "equal"),
            ],
            "retry_wait_seconds: a constant wait"
        ),
        bad!(
            &[("command", "touch ran"), ("retry_on_exit_code", "300")],
            "retry_on_exit_code: '300'"
        ),
        bad!(
            &[("command", "touch ran"), ("timeout_seconds", "1.5.2")],
            "timeout_seconds: '1.5.2'"
        ),
        // What nick-fields' parseInt reads in part (docs/action.md).
        bad!(
            &[("command", "touch ran"), ("timeout_minutes", "1e3")],
            "timeout_minutes: '1e3'"
        ),
        bad!(
            &[("command", "touch ran"), ("timeout_seconds", "-1")],
            "timeout_seconds: '-1'"
        ),
        // Past 64 bits, bash's own test would add a line of its own.
        bad!(
            &[
                ("command", "touch ran"),
                ("retry_on_exit_code", "99999999999999999999"),
            ],
            "retry_on_exit_code: '99999999999999999999' is not an exit code (0 to 255)"
        ),
        bad!(
            &[
                ("command", "touch ran"),
                ("max_attempts", "99999999999999999999"),
            ],
            "max_attempts: '99999999999999999999' is not a number of attempts"
        ),
        bad!(
            &[("command", "touch ran"), ("max_attempts", "000")],
            "max_attempts: '000'"
        ),
        bad!(
            &[
                ("command", "touch ran"),
                ("store", "redis://a"),
                ("budget_store", "redis://b"),
            ],
            "store and budget_store"
        ),
        // A line end in a value starts no output of its own.
        bad!(
            &[("command", "touch ran"), ("max_attempts", "3\nexit_code=0")],
            "max_attempts: '3 exit_code=0'"
        ),
        Case {
            name: "an empty command",
            inputs: &[("command", "")],
            stderr: &[Is(
                "retry action: command: empty; give the command to run\n",
            )],
            ..BAD
        },
        Case {
            name: "a command of blanks",
            inputs: &[("command", " \n ")],
            stderr: &[Is(
                "retry action: command: empty; give the command to run\n",
            )],
            ..BAD
        },
    ]);
    // A shell the runner lacks, when this machine lacks it.
    let pwsh = Command::new("sh")
        .args(["-c", "command -v pwsh"])
        .output()
        .unwrap();
    if !pwsh.status.success() {
        run(&[Case {
            name: "shell: pwsh",
            inputs: &[("command", "touch ran"), ("shell", "pwsh")],
            stderr: &[Is(
                "retry action: shell: 'pwsh' is not on this runner's PATH\n",
            )],
            after: After::Ran,
            ..BAD
        }]);
    }
}

/// Issue 50's cases, each wrong against nick-fields/retry before: the
/// inputs (with `retry_wait_seconds: 0`, under GITHUB_ACTIONS), the exit
/// status, how the outputs start, and what the log holds once (or not at
/// all). A run with attempts put retry on PATH; one without did not.
const NICK: Case = Case {
    env: &[("GITHUB_ACTIONS", "true")],
    ..CASE
};

#[test]
fn inputs_read_as_nick_fields_reads_them() {
    run(&[
        // 0 is ignored there (falsy): no --retry-on 0 is asked of retry.
        Case {
            name: "retry_on_exit_code: 0",
            inputs: &[
                ("retry_wait_seconds", "0"),
                ("command", "exit $((RETRY_ATTEMPT < 3 ? 3 : 0))"),
                ("retry_on_exit_code", "0"),
            ],
            code: 0,
            outputs: &[Starts("total_attempts=3\nexit_code=0\n")],
            on_path: Some(true),
            stderr: &[Once(
                "::notice title=retry action::retry_on_exit_code: '0' is ignored",
            )],
            ..NICK
        },
        // Any word but true (in any case) is false there.
        Case {
            name: "warning_on_retry: no",
            inputs: &[
                ("retry_wait_seconds", "0"),
                ("command", "exit 3"),
                ("max_attempts", "2"),
                ("warning_on_retry", "no"),
            ],
            code: 3,
            outputs: &[Starts("total_attempts=2\nexit_code=3\n")],
            on_path: Some(true),
            stderr: &[
                Once(
                    "::notice title=retry action::warning_on_retry: 'no' is neither true nor false",
                ),
                Once("retry: `exit 3`: attempt 1/2 failed"),
                Lacks("::warning title"),
            ],
            ..NICK
        },
        Case {
            name: "warning_on_retry: TrUe",
            inputs: &[
                ("retry_wait_seconds", "0"),
                ("command", "exit 3"),
                ("max_attempts", "2"),
                ("warning_on_retry", "TrUe"),
            ],
            code: 3,
            outputs: &[Starts("total_attempts=2\nexit_code=3\n")],
            on_path: Some(true),
            stderr: &[
                Once("::warning title=retry%3A exit 3::attempt 1/2"),
                Lacks("::notice"),
            ],
            ..NICK
        },
        Case {
            name: "continue_on_error: tRUE",
            inputs: &[
                ("retry_wait_seconds", "0"),
                ("command", "exit 3"),
                ("max_attempts", "1"),
                ("continue_on_error", "tRUE"),
            ],
            code: 0,
            outputs: &[Starts("total_attempts=1\nexit_code=3\n")],
            on_path: Some(true),
            stderr: &[Lacks("::error")],
            ..NICK
        },
        // Retried only when the output says so: the first attempt's, not
        // the second's.
        Case {
            name: "retry_on: output, retry_if_output: busy",
            inputs: &[
                ("retry_wait_seconds", "0"),
                ("command", "[ $RETRY_ATTEMPT = 1 ] && echo busy; exit 1"),
                ("retry_on", "output"),
                ("retry_if_output", "busy"),
            ],
            code: 1,
            outputs: &[Starts("total_attempts=2\nexit_code=1\n")],
            on_path: Some(true),
            ..NICK
        },
        Case {
            name: "retry_on: output alone",
            inputs: &[
                ("retry_wait_seconds", "0"),
                ("command", "touch ran"),
                ("retry_on", "output"),
            ],
            code: 2,
            outputs: &[Starts(
                "total_attempts=0\nexit_code=2\nexit_error=retry_on: output retries only",
            )],
            on_path: Some(false),
            ..NICK
        },
        // Every way out sets the outputs: here retry's own before the
        // command (a --metrics-dir it cannot write), which the Action
        // learns from retry --plan.
        #[cfg(feature = "preview")]
        Case {
            name: "metrics_dir: /nonexistent",
            inputs: &[
                ("retry_wait_seconds", "0"),
                ("command", "touch ran"),
                ("metrics_dir", "/nonexistent/retry-action"),
            ],
            code: 2,
            outputs: &[Starts(
                "total_attempts=0\nexit_code=2\nexit_error=retry ended with exit status 2 before",
            )],
            on_path: Some(false),
            stderr: &[Once("retry: cannot write to --metrics-dir")],
            ..NICK
        },
        // The command's own 2 and 127 are no refusal of an input.
        Case {
            name: "exit 2",
            inputs: &[
                ("retry_wait_seconds", "0"),
                ("command", "exit 2"),
                ("max_attempts", "1"),
            ],
            code: 2,
            outputs: &[Starts("total_attempts=1\nexit_code=2\n")],
            on_path: Some(true),
            ..NICK
        },
        Case {
            name: "no-such-program",
            inputs: &[
                ("retry_wait_seconds", "0"),
                ("command", "no-such-program"),
                ("max_attempts", "1"),
            ],
            code: 127,
            outputs: &[Starts("total_attempts=1\n")],
            on_path: Some(true),
            ..NICK
        },
    ]);
}

#[cfg(feature = "redis")] // a budget store
#[test]
fn no_input_and_no_store_password_reaches_the_command_or_the_hook() {
    let release = Release::new();
    let runner = Runner::new();
    // Nothing listens there: retry runs without the budget, and says so.
    let store = format!(
        "redis://:s3cretPw@127.0.0.1:{}/0",
        crate::harness::loopback::closed_port()
    );
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "env > seen; exit $((RETRY_ATTEMPT < 2))"),
            ("on_retry_command", "env > hook-seen"),
            ("retry_wait_seconds", "0"),
            ("budget", "ci"),
            ("budget_store", &store),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    for name in ["seen", "hook-seen"] {
        let seen = environment(&runner, name);
        assert!(!seen.contains("s3cretPw"), "{name}: {seen}");
        assert!(
            !seen.lines().any(|line| line.starts_with("INPUT_")),
            "{name}: {seen}"
        );
        // Nor the Action's wishes for retry's lines: a nested retry's are its own.
        assert!(!seen.contains("RETRY_GITHUB_ACTION="), "{name}: {seen}");
    }
    assert!(!stderr(&ran).contains("s3cretPw"), "{}", stderr(&ran));
}

#[test]
fn a_bad_input_of_retry_s_own_is_refused_before_anything_runs_with_the_outputs() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[("command", "touch ran"), ("jitter", "sometimes")],
    );
    let said = stderr(&ran);
    assert_eq!(code(&ran), 2, "{said}");
    let line = said.lines().last().unwrap_or("");
    assert!(
        line.starts_with("retry: invalid value 'sometimes' for '--jitter <JITTER>'"),
        "{said}"
    );
    assert_eq!(
        runner.outputs(),
        format!("total_attempts=0\nexit_code=2\nexit_error={line}\nreason={line}\n")
    );
    assert!(!runner.file("ran").exists());
    assert_eq!(runner.read("path"), "", "put on PATH");
}

#[test]
fn breaker_metrics_dir_and_store_are_inputs() {
    let release = Release::new();
    let runner = Runner::new();
    // The host's state (the breaker's record) in a place of the test's own.
    let (metrics, state) = (runner.file("metrics"), runner.file("state"));
    use std::os::unix::fs::PermissionsExt;
    for dir in [&metrics, &state] {
        std::fs::create_dir(dir).unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let ran = runner
        .step(
            &release.url(),
            &[
                ("command", "env > seen; exit 3"),
                ("max_attempts", "1"),
                ("breaker", "deploy"),
                ("metrics_dir", metrics.to_str().unwrap()),
                ("store", "host"),
            ],
        )
        .env("XDG_RUNTIME_DIR", &state)
        .output()
        .unwrap();
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    let prom = std::fs::read_dir(&metrics)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    assert!(
        prom.iter().any(|name| name.ends_with(".prom")),
        "{prom:?}: {}",
        stderr(&ran)
    );
    let status = Command::new(env!("CARGO_BIN_EXE_retry"))
        .args(["--breaker-status", "deploy"])
        .env("XDG_RUNTIME_DIR", &state)
        .env("HOME", runner.temp.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&status.stdout).into_owned()
        + &String::from_utf8_lossy(&status.stderr);
    assert!(said.contains("1 failed run in a row"), "{said}");
    assert!(said.contains(state.to_str().unwrap()), "{said}");
}

/// Every variable retry reads (its --help's `[env: ...]`), as a job sets
/// them for the retry of its `run:` steps, each to a value retry would
/// refuse: the Action's run takes none (issue 50: RETRY_MAX_ATTEMPTS=1,
/// RETRY_QUIET=true changed its attempts and annotations). The command
/// and the hook get each back byte for byte (but a store's, which retry
/// keeps from both), as under `run: retry`.
#[test]
fn a_job_s_retry_variables_change_nothing_and_reach_the_command_as_they_were() {
    use std::os::unix::ffi::OsStrExt;
    let help = Command::new(env!("CARGO_BIN_EXE_retry"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let names: Vec<&str> = help
        .split("[env: ")
        .skip(1)
        .filter_map(|rest| rest.split('=').next())
        .collect();
    assert!(
        names.contains(&"RETRY_PRESET") && names.len() > 40,
        "{names:?}"
    );
    // Quotes, a line end, $(...), `...`, a byte that is no UTF-8.
    let value = std::ffi::OsStr::from_bytes(b"1s' \"$(touch pwned)\"\n`touch pwned` \xff");
    let release = Release::new();
    let runner = Runner::new();
    let mut step = runner.step(
        &release.url(),
        &[
            (
                "command",
                "printf %s \"$RETRY_MAX_ATTEMPTS\" > seen; env > env; exit $((RETRY_ATTEMPT < 3))",
            ),
            ("on_retry_command", "printf %s \"$RETRY_QUIET\" > hook-seen"),
            ("retry_wait_seconds", "0"),
        ],
    );
    for name in &names {
        step.env(name, value);
    }
    let ran = step.env("GITHUB_ACTIONS", "true").output().unwrap();
    let said = stderr(&ran);
    assert_eq!(code(&ran), 0, "{said}");
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=3\nexit_code=0\n"),
        "{}",
        runner.outputs()
    );
    assert_eq!(
        said.matches("::warning title=retry%3A ").count(),
        2,
        "{said}"
    );
    assert!(!runner.file("pwned").exists());
    for file in ["seen", "hook-seen"] {
        assert_eq!(std::fs::read(runner.file(file)).unwrap(), value.as_bytes());
    }
    let env = runner.read("env");
    for kept in ["RETRY_STORE=", "RETRY_BUDGET_STORE=", "RETRY_ACTION_"] {
        assert!(!env.contains(kept), "{kept}: {env}");
    }
}

/// docs/action.md lists the differences issue 50 found it omitted.
#[test]
fn docs_action_md_names_each_difference_seen() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/action.md"))
        .unwrap();
    let seen = "`max_attempts: 0`|`retry_wait_seconds: 0`|SIGTERM|`$GITHUB_OUTPUT`|job summary|\
                `on_retry_command` that fails|error annotation|stderr|`GITHUB_PATH`|255|\
                `retry_on: output`|`RETRY_*`";
    for seen in seen.split('|') {
        assert!(doc.contains(seen), "docs/action.md does not name {seen}");
    }
}

/// A job whose RETRY_* hold more than one variable can carry (128 KiB on
/// Linux): the Action still runs, by its inputs alone, and says that the
/// command does not get them back, rather than failing to start retry.
#[test]
fn a_job_s_retry_variables_too_large_to_give_back_are_said_and_dropped() {
    let release = Release::new();
    let runner = Runner::new();
    let note = "x".repeat(70_000);
    let ran = runner
        .step(
            &release.url(),
            &[
                ("command", "printf %s \"${RETRY_NOTE_A-unset}\" > seen"),
                ("max_attempts", "2"),
            ],
        )
        .env("RETRY_NOTE_A", &note)
        .env("RETRY_NOTE_B", &note)
        .env("RETRY_MAX_ATTEMPTS", "1")
        .output()
        .unwrap();
    let said = stderr(&ran);
    assert_eq!(code(&ran), 0, "{said}");
    assert!(
        said.contains("the command does not get them back"),
        "{said}"
    );
    assert_eq!(runner.read("seen"), "unset");
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=1\nexit_code=0\n")
    );
}
