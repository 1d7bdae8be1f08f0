//! The inputs: refused before anything runs, read as nick-fields/retry
//! reads them, and kept from the command.

use super::*;

#[test]
fn a_bad_input_is_one_line_naming_it_and_nothing_runs() {
    let release = Release::start(Serving::Files);
    let cases: [(&[(&str, &str)], &str); 17] = [
        (&[("retry_on", "sometimes")], "retry_on: 'sometimes'"),
        (
            &[("timeout_minutes", "1"), ("timeout_seconds", "30")],
            "timeout_minutes and timeout_seconds",
        ),
        (&[("max_attempts", "three")], "max_attempts: 'three'"),
        (&[("shell", "cmd")], "shell: 'cmd'"),
        (
            &[("shell", "fish-that-is-not-there")],
            "shell: 'fish-that-is-not-there'",
        ),
        (
            &[("continue_on_error", "maybe")],
            "continue_on_error: 'maybe'",
        ),
        (
            &[("retry_wait_seconds", "ten")],
            "retry_wait_seconds: 'ten'",
        ),
        // nick-fields' constant wait and retry's backoff contradict.
        (
            &[("retry_wait_seconds", "5"), ("jitter", "equal")],
            "retry_wait_seconds: a constant wait",
        ),
        (
            &[("retry_on_exit_code", "300")],
            "retry_on_exit_code: '300'",
        ),
        (&[("timeout_seconds", "1.5.2")], "timeout_seconds: '1.5.2'"),
        // What nick-fields' parseInt reads in part (docs/action.md).
        (&[("timeout_minutes", "1e3")], "timeout_minutes: '1e3'"),
        (&[("timeout_seconds", "-1")], "timeout_seconds: '-1'"),
        // Past 64 bits, bash's own test would add a line of its own.
        (
            &[("retry_on_exit_code", "99999999999999999999")],
            "retry_on_exit_code: '99999999999999999999' is not an exit code (0 to 255)",
        ),
        (
            &[("max_attempts", "99999999999999999999")],
            "max_attempts: '99999999999999999999' is not a number of attempts",
        ),
        (&[("max_attempts", "000")], "max_attempts: '000'"),
        (
            &[("store", "redis://a"), ("budget_store", "redis://b")],
            "store and budget_store",
        ),
        // A line end in a value starts no output of its own.
        (
            &[("max_attempts", "3\nexit_code=0")],
            "max_attempts: '3 exit_code=0'",
        ),
    ];
    for (inputs, named) in cases {
        let runner = Runner::new();
        let mut all = vec![("command", "touch ran")];
        all.extend_from_slice(inputs);
        let ran = runner.run(&release.url(), &all);
        let said = stderr(&ran);
        assert_eq!(code(&ran), 2, "{inputs:?}: {said}");
        assert_eq!(said.lines().count(), 1, "{inputs:?}: {said}");
        assert!(said.contains(named), "{inputs:?}: {said}");
        refused(&format!("{inputs:?}"), &runner, &ran);
    }
    for command in ["", " \n "] {
        let runner = Runner::new();
        let ran = runner.run(&release.url(), &[("command", command)]);
        assert_eq!(code(&ran), 2);
        assert_eq!(
            stderr(&ran),
            "retry action: command: empty; give the command to run\n"
        );
        refused(&format!("{command:?}"), &runner, &ran);
    }
    // A shell the runner lacks, when this machine lacks it.
    let pwsh = Command::new("sh")
        .args(["-c", "command -v pwsh"])
        .output()
        .unwrap();
    if !pwsh.status.success() {
        let runner = Runner::new();
        let ran = runner.run(
            &release.url(),
            &[("command", "touch ran"), ("shell", "pwsh")],
        );
        assert_eq!(code(&ran), 2);
        assert_eq!(
            stderr(&ran),
            "retry action: shell: 'pwsh' is not on this runner's PATH\n"
        );
    }
    // Nothing was downloaded for any of them.
    assert_eq!(release.server.served(), 0);
}

/// Issue 50's cases, each wrong against nick-fields/retry before: the
/// inputs as `name=value` lines (with `retry_wait_seconds: 0`, under
/// GITHUB_ACTIONS), the exit status, how the outputs start, and what the
/// log holds once (or, after a `!`, not at all). A run with attempts put
/// retry on PATH; one without did not.
type Case<'a> = (&'a str, i32, &'a str, &'a [&'a str]);

#[test]
fn inputs_read_as_nick_fields_reads_them() {
    let release = Release::new();
    let cases: &[Case] = &[
        // 0 is ignored there (falsy): no --retry-on 0 is asked of retry.
        (
            "command=exit $((RETRY_ATTEMPT < 3 ? 3 : 0))\nretry_on_exit_code=0",
            0,
            "total_attempts=3\nexit_code=0\n",
            &["::notice title=retry action::retry_on_exit_code: '0' is ignored"],
        ),
        // Any word but true (in any case) is false there.
        (
            "command=exit 3\nmax_attempts=2\nwarning_on_retry=no",
            3,
            "total_attempts=2\nexit_code=3\n",
            &[
                "::notice title=retry action::warning_on_retry: 'no' is neither true nor false",
                "retry: `exit 3`: attempt 1/2 failed",
                "!::warning title",
            ],
        ),
        (
            "command=exit 3\nmax_attempts=2\nwarning_on_retry=TrUe",
            3,
            "total_attempts=2\nexit_code=3\n",
            &["::warning title=retry%3A exit 3::attempt 1/2", "!::notice"],
        ),
        (
            "command=exit 3\nmax_attempts=1\ncontinue_on_error=tRUE",
            0,
            "total_attempts=1\nexit_code=3\n",
            &["!::error"],
        ),
        // Retried only when the output says so: the first attempt's, not
        // the second's.
        (
            "command=[ $RETRY_ATTEMPT = 1 ] && echo busy; exit 1\nretry_on=output\nretry_if_output=busy",
            1,
            "total_attempts=2\nexit_code=1\n",
            &[],
        ),
        (
            "command=touch ran\nretry_on=output",
            2,
            "total_attempts=0\nexit_code=2\nexit_error=retry_on: output retries only",
            &[],
        ),
        // Every way out sets the outputs: here retry's own before the
        // command (a --metrics-dir it cannot write).
        (
            "command=touch ran\nmetrics_dir=/nonexistent/retry-action",
            2,
            "total_attempts=0\nexit_code=2\nexit_error=retry ended with exit status 2 before",
            &["retry: cannot write to --metrics-dir"],
        ),
        // The command's own 2 and 127 are no refusal of an input.
        (
            "command=exit 2\nmax_attempts=1",
            2,
            "total_attempts=1\nexit_code=2\n",
            &[],
        ),
        (
            "command=no-such-program\nmax_attempts=1",
            127,
            "total_attempts=1\n",
            &[],
        ),
    ];
    for &(inputs, status, outputs, lines) in cases {
        let runner = Runner::new();
        let mut all = vec![("retry_wait_seconds", "0")];
        all.extend(inputs.lines().filter_map(|line| line.split_once('=')));
        let ran = runner
            .step(&release.url(), &all)
            .env("GITHUB_ACTIONS", "true")
            .output()
            .unwrap();
        let (said, got) = (stderr(&ran), runner.outputs());
        assert_eq!(code(&ran), status, "{inputs}: {said}");
        assert!(got.starts_with(outputs), "{inputs}: {got}");
        let attempts = !outputs.starts_with("total_attempts=0");
        assert_eq!(runner.read("path").is_empty(), !attempts, "{inputs}");
        for line in lines {
            match line.strip_prefix('!') {
                Some(line) => assert!(!said.contains(line), "{inputs}: {said}"),
                None => assert_eq!(said.matches(line).count(), 1, "{inputs}: {said}"),
            }
        }
    }
}

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
