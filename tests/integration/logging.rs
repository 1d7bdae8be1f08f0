//! retry's own log lines (stderr only) and the environment the child sees.
//! The commands are copies of the project's helper, run by their bare
//! names (`flaky`, `false`, `true`) so that lines read the same on every
//! platform; what is about Unix or sh is gated test by test.

#[cfg(unix)]
use crate::harness::wait_bounded;
use crate::harness::{fails, install, on_path, retry, scratch};

// Where the lines go: a log file, a descriptor, a FIFO, a device.
mod destinations;

/// Installs in `dir` a program `flaky` that fails `n` times with `code`,
/// saying so on stderr as a real command would; then retry with `args`
/// and `flaky`, which finds it on PATH: log lines name it `flaky`.
fn flaky(dir: &std::path::Path, n: u32, code: i32, args: &[&str]) -> crate::harness::Retry {
    let count = dir.join("count").to_string_lossy().into_owned();
    let (n, code) = ((n + 1).to_string(), code.to_string());
    let steps = [
        "fail-code",
        &code,
        "fail-err",
        "flaky: try {} failed",
        "count",
        &count,
        &n,
    ];
    install(dir, "flaky", &steps);
    retry(args)
        .args(&["flaky"])
        .env("PATH", on_path(dir))
        .restores(&count)
}

/// `false` and `true` of the helper's, first on PATH in a scratch
/// directory: the same on every platform, and named so in retry's lines.
fn false_and_true() -> (tempfile::TempDir, std::ffi::OsString) {
    let dir = scratch();
    install(dir.path(), "false", &["exit", "1"]);
    install(dir.path(), "true", &[]);
    let path = on_path(dir.path());
    (dir, path)
}

#[test]
fn retry_lines_name_the_command_its_status_and_the_sleep() {
    let dir = scratch();
    let out = flaky(
        dir.path(),
        9,
        22,
        &["--jitter", "none", "--base", "2ms", "-n", "3"],
    )
    .run();
    out.code(22).stdout_is("").stderr_is(
        "flaky: try 1 failed\n\
         retry: flaky: attempt 1/3 failed with exit code 22; sleep: 2 ms (no jitter, up to 2 ms)\n\
         flaky: try 2 failed\n\
         retry: flaky: attempt 2/3 failed with exit code 22; sleep: 4 ms (no jitter, up to 4 ms)\n\
         flaky: try 3 failed\n\
         retry: flaky: giving up after 3 attempts: the last failed with exit code 22 (reason: attempts)\n",
    );
}

#[test]
#[cfg(unix)] // sh's `>&2` and `:`, and the name of an `sh -c` script
fn a_shell_script_is_named_by_its_start() {
    let out = retry(&["-n", "1", "-s", "--", "echo", "oops", ">&2;", "exit", "3"]).run();
    out.code(3).stderr_is(
        "oops\nretry: `echo oops >&2; exit 3`: giving up after 1 attempt: it failed with exit code 3 (reason: attempts)\n",
    );
    // Cut past 24 characters: a line names the command, it does not list it.
    let out = retry(&["-n", "1", "sh", "-c", "exit 4; : and a long tail"]).run();
    out.code(4)
        .stderr_has("retry: `exit 4; : and a long ta…`: giving up");
}

#[test]
fn a_long_sleep_is_also_shown_in_seconds() {
    let (_dir, path) = false_and_true();
    // Refused by --max-time before any sleep: nothing here waits.
    let out = retry(&[
        "--jitter",
        "none",
        "--base",
        "20s",
        "--max-time",
        "1s",
        "-n",
        "2",
        "false",
    ])
    .env("PATH", &path)
    .run();
    out.code(1).stderr_is(
        "retry: false: giving up after attempt 1/2 failed with exit code 1: a sleep of 20000 ms (20 s) would end past --max-time (reason: max_time)\n",
    );
}

/// The value of `"key":` in a JSON line, as written (strings with quotes).
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let start = line
        .find(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        + key.len()
        + 3;
    let rest = &line[start..];
    let end = match rest.strip_prefix('[') {
        Some(_) => rest.find(']').unwrap() + 1,
        None => rest.find([',', '}']).unwrap(),
    };
    &rest[..end]
}

#[test]
fn json_lines_have_the_documented_fields() {
    let dir = scratch();
    let before = std::time::SystemTime::now();
    let out = flaky(
        dir.path(),
        9,
        5,
        &[
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
        ],
    )
    .run();
    out.code(5);
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| !l.starts_with("flaky: "))
        .collect();
    assert_eq!(lines.len(), 3, "{out:#?}");
    let events: Vec<&str> = lines.iter().map(|l| field(l, "event")).collect();
    assert_eq!(
        events,
        [r#""attempt_failed""#, r#""sleep""#, r#""gave_up""#]
    );
    let mut elapsed = 0;
    for line in &lines {
        assert!(
            line.starts_with(r#"{"event":"#) && line.ends_with('}'),
            "{line}"
        );
        assert_eq!(field(line, "command"), r#""flaky""#);
        // RFC 3339, UTC, milliseconds; during this test.
        let time = field(line, "time").trim_matches('"');
        assert!(time.ends_with('Z') && time.len() == 24, "{time}");
        let time = humantime::parse_rfc3339(time).unwrap();
        assert!(
            time + std::time::Duration::from_millis(1) >= before,
            "{line}"
        );
        assert!(time <= std::time::SystemTime::now(), "{line}");
        let ms: u64 = field(line, "elapsed_ms").parse().unwrap();
        assert!(ms >= elapsed && ms < 10_000, "{line}");
        elapsed = ms;
    }
    // Only the run's first line has the whole command.
    assert_eq!(field(lines[0], "argv"), r#"["flaky"]"#);
    assert!(!lines[1].contains("argv") && !lines[2].contains("argv"));
    // Every line names the run (the id starts with retry's pid, in hex) and
    // the pid; an attempt's end says how long it ran.
    let pid: u32 = field(lines[0], "pid").parse().unwrap();
    let run = field(lines[0], "run");
    assert!(run.starts_with(&format!("\"{pid:x}-")), "{run}");
    for line in &lines {
        assert_eq!(
            (field(line, "run"), field(line, "pid")),
            (run, &*pid.to_string())
        );
    }
    for line in [lines[0], lines[2]] {
        let ms: u64 = field(line, "duration_ms").parse().unwrap();
        assert!(ms < 10_000, "{line}");
    }
    assert!(!lines[1].contains("duration_ms"), "{}", lines[1]);
    assert!(
        lines[0].contains(r#","attempt":1,"max_attempts":2,"duration_ms":"#)
            && lines[0].ends_with(r#","exit_code":5,"class":"transient"}"#),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(r#","attempt":1,"exit_code":5,"sleep_ms":"#)
            && lines[1].ends_with(
                r#","ceiling_ms":4,"strategy":"equal","source":"strategy","class":"transient"}"#
            ),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains(r#","attempt":2,"max_attempts":2,"duration_ms":"#)
            && lines[2].ends_with(r#","exit_code":5,"reason":"attempts","command_exit_code":5}"#),
        "{}",
        lines[2]
    );
}

/// Three runs at once into one JSON log: their lines group by `run` into
/// three runs, each with its own pid, and each run's id is the one its
/// command was marked with (`RETRY_RUN_IDS`).
#[test]
#[cfg(unix)] // an sh script that waits for the other runs' marks
fn concurrent_runs_in_one_json_log_are_told_apart_by_run_and_pid() {
    let dir = scratch();
    let log = dir.path().join("shared.jsonl");
    let marks = dir.path().join("marks");
    std::fs::create_dir(&marks).unwrap();
    // Each first attempt records its mark, then waits (up to 10 s) for the
    // others' before failing: the three runs overlap. Second attempts pass.
    let script = format!(
        "echo \"$RETRY_RUN_IDS\" > {m}/$$; i=0; \
         while [ $(ls {m} | wc -l) -lt 3 ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; \
         [ \"$RETRY_ATTEMPT\" -ge 2 ]",
        m = marks.display()
    );
    let log_arg = log.display().to_string();
    let args = [
        "--log-format",
        "json",
        "--log-file",
        &log_arg,
        "--base",
        "1ms",
    ];
    let mut runs: Vec<_> = (0..3)
        .map(|_| retry(&args).args(&["sh", "-c", &script]).spawn())
        .collect();
    for run in &mut runs {
        assert!(wait_bounded(run, std::time::Duration::from_secs(30)).success());
    }
    let written = std::fs::read_to_string(&log).unwrap();
    let mut by_run: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for line in written.lines() {
        let run = field(line, "run").trim_matches('"').to_owned();
        by_run
            .entry(run)
            .or_default()
            .push(field(line, "pid").to_owned());
    }
    assert_eq!(by_run.len(), 3, "{written}");
    let mut pids: Vec<&String> = vec![];
    for (run, lines) in &by_run {
        // attempt_failed, sleep, succeeded: all from one process.
        assert_eq!(lines.len(), 3, "{run}: {written}");
        assert!(lines.iter().all(|pid| *pid == lines[0]), "{written}");
        pids.push(&lines[0]);
    }
    pids.sort();
    pids.dedup();
    assert_eq!(pids.len(), 3, "{written}");
    // The ids the commands carried (the last of each mark) are the runs'.
    let mut marked: Vec<String> = std::fs::read_dir(&marks)
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .map(|mark| mark.trim_end().rsplit(':').next().unwrap().to_owned())
        .collect();
    marked.sort();
    marked.dedup();
    assert_eq!(marked, by_run.keys().cloned().collect::<Vec<_>>());
}

#[test]
fn quiet_keeps_only_the_give_up_line_and_verbose_adds_starts() {
    let (_dir, path) = false_and_true();
    let quiet = retry(&["-q", "-n", "3", "--base", "1ms", "false"])
        .env("PATH", &path)
        .run();
    quiet.code(1).stderr_lines(1).stderr_has("giving up");
    let verbose = retry(&["-v", "true", "it's"]).env("PATH", &path).run();
    verbose.code(0).stderr_is(
        "retry: true: attempt 1/5 starting: true 'it'\\''s'\nretry: true: attempt 1/5 succeeded\n",
    );
}

#[test]
fn same_seed_same_sleeps() {
    let (_dir, path) = false_and_true();
    let run = || {
        retry(&["--seed", "42", "--base", "3ms", "-n", "4", "false"])
            .env("PATH", &path)
            .run()
            .stderr
    };
    let first = run();
    assert_eq!(first, run());
    assert!(first.contains("full jitter, up to 12 ms"), "{first}");
}

#[test]
#[cfg(unix)] // sh reads the variables and computes the exit code
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
    let out = retry(&["-n", "unlimited", "--"])
        .helper(&["env", "RETRY_ATTEMPT_LIMIT"])
        .run();
    out.code(0).stdout_is("unlimited\n");
}

#[test]
#[cfg(unix)] // the inner retry runs inside sh
fn child_variables_do_not_configure_a_nested_retry() {
    // The outer retry exports RETRY_ATTEMPT*; the inner one must still use its defaults.
    let inner = format!("{} -n 2 --base 1ms false", crate::harness::bin());
    let out = retry(&["-n", "1", "sh", "-c", &inner]).run();
    out.code(1).stderr_has("giving up after 2 attempts");
}

#[test]
fn json_reports_spawn_failures_and_time_limits() {
    let out = retry(&["--log-format", "json", "no-such-command-anywhere"]).run();
    out.code(127).stderr_lines(1).stderr_has(
        r#""command":"no-such-command-anywhere","argv":["no-such-command-anywhere"],"attempt":1,"max_attempts":5,"exit_code":127,"reason":"spawn","message":"cannot run `no-such-command-anywhere`: command not found"}"#,
    );
    let out = retry(&["--log-format", "json", "--max-time", "50ms", "--"])
        .helper(&["sleep", "10000"])
        .run();
    out.code(124).stderr_lines(1).stderr_has(
        r#","exit_code":124,"reason":"max_time","command_exit_code":124,"command_timed_out":true}"#,
    );
}

#[test]
fn json_reports_fatal_codes_and_success_after_retries() {
    let out = retry(&["--log-format", "json", "--fatal-on", "3", "--"])
        .helper(&["exit", "3"])
        .run();
    out.code(3).stderr_has(r#""reason":"fatal""#);
    let dir = scratch();
    let out = flaky(dir.path(), 1, 1, &["--log-format", "json", "--base", "1ms"]).run();
    out.code(0)
        .stderr_has(r#""event":"succeeded","#)
        .stderr_has(r#","command":"flaky","attempt":2,"max_attempts":5,"duration_ms":"#)
        .stderr_has(r#","exit_code":0,"slept_ms":"#);
}

#[test]
fn github_format_writes_annotations_titled_with_the_command() {
    let dir = scratch();
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
    let out = flaky(dir.path(), 9, 3, &args).run();
    out.code(3).stderr_is(
        "flaky: try 1 failed\n\
         ::warning title=retry%3A flaky::attempt 1/2 failed with exit code 3; sleep: 2 ms (no jitter, up to 2 ms)\n\
         flaky: try 2 failed\n\
         ::error title=retry%3A flaky::giving up after 2 attempts: the last failed with exit code 3 (reason: attempts)\n",
    );
}

#[test]
fn auto_format_picks_github_inside_github_actions() {
    let (_dir, path) = false_and_true();
    let on_github = retry(&["-n", "1", "false"])
        .env("PATH", &path)
        .env("GITHUB_ACTIONS", "true")
        .run();
    on_github
        .code(1)
        .stderr_has("::error title=retry%3A false::");
    let elsewhere = retry(&["-n", "1", "false"])
        .env("PATH", &path)
        .env("GITHUB_ACTIONS", "false")
        .run();
    elsewhere.code(1).stderr_is(
        "retry: false: giving up after 1 attempt: it failed with exit code 1 (reason: attempts)\n",
    );
}

#[test]
fn the_summary_adds_up_the_sleeps_shown() {
    let dir = scratch();
    let out = flaky(dir.path(), 2, 1, &["--jitter", "none", "--base", "3ms"]).run();
    out.code(0);
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("retry: "))
        .collect();
    assert_eq!(
        lines,
        [
            "retry: flaky: attempt 1/5 failed with exit code 1; sleep: 3 ms (no jitter, up to 3 ms)",
            "retry: flaky: attempt 2/5 failed with exit code 1; sleep: 6 ms (no jitter, up to 6 ms)",
            // 3 + 6 exactly, however long the machine took to wake retry.
            "retry: flaky: attempt 3/5 succeeded; 3 attempts, 9 ms spent sleeping",
        ],
        "{out:#?}"
    );
}

#[test]
#[cfg(unix)] // an sh hook and an sh command
fn on_retry_runs_with_the_attempt_in_its_environment() {
    let dir = scratch();
    let hook_log = dir.path().join("hook");
    let hook = format!(
        "echo \"hook $RETRY_ATTEMPT $RETRY_EXIT_CODE $RETRY_ATTEMPT_LIMIT $RETRY_PREVIOUS_EXIT_CODE\" >> {}; echo to-stdout",
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
    // An outer retry's variables, which the hook must not see.
    .env("RETRY_ATTEMPT_LIMIT", "99")
    .env("RETRY_PREVIOUS_EXIT_CODE", "77")
    .run();
    out.code(13);
    assert_eq!(
        std::fs::read_to_string(&hook_log).unwrap(),
        "hook 1 11 3 11\nhook 2 12 3 12\n"
    );
    // The hook's stdout goes to stderr: the command's stdout stays clean.
    out.stdout_is("out\nout\nout\n").stderr_has("to-stdout\n");
}

/// Issue 40: a hook whose program could not start showed only the
/// shell's "exit code 126"; it now says why, as for a command.
#[test]
#[cfg(unix)] // the shell's 126 and 127
fn an_on_retry_that_cannot_start_says_why() {
    let dir = scratch();
    std::fs::write(dir.path().join("notify.sh"), "#!/bin/sh\necho hi\n").unwrap();
    for (hook, why) in [
        (
            "./notify.sh --to ops",
            "cannot run `./notify.sh`: permission denied (is it executable?); exit code 126",
        ),
        (
            "./missing.sh",
            "cannot run `./missing.sh`: command not found; exit code 127",
        ),
    ] {
        retry(&["-n", "2", "--base", "1ms", "--on-retry", hook, "false"])
            .current_dir(dir.path())
            .env("PATH", "/usr/bin:/bin")
            .run()
            .code(1)
            .stderr_has(&format!(
                "--on-retry command could not start ({why}) after attempt 1/2; retrying anyway"
            ));
    }
}

#[test]
fn a_failing_on_retry_is_logged_not_fatal() {
    let dir = scratch();
    // `exit 4` means the same to sh and cmd.
    let out = retry(&["--base", "1ms", "--on-retry", "exit 4", "--"])
        .helper(&fails(dir.path(), 1, 1))
        .run();
    out.code(0).stderr_has(
        "--on-retry command failed with exit code 4 after attempt 1/5; retrying anyway",
    );
}

#[test]
fn no_countdown_when_stderr_is_not_a_terminal() {
    // The one sleep here is longer than a second: a terminal would show a countdown.
    let dir = scratch();
    let out = retry(&["--jitter", "none", "--base", "1100ms", "--"])
        .helper(&fails(dir.path(), 1, 1))
        .run();
    out.code(0);
    assert!(
        !out.stderr.contains('\r') && !out.stderr.contains('\x1b'),
        "{out:#?}"
    );
}

#[test]
#[cfg(target_os = "linux")] // util-linux `script -qec` (BSD script's options differ)
fn countdown_on_a_terminal_is_erased() {
    // util-linux `script` gives retry a terminal for stderr.
    let dir = scratch();
    let inner = format!(
        "{} --jitter none --base 1100ms sh -c '{}'",
        crate::harness::bin(),
        crate::harness::fail_times(dir.path(), 1, 1)
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

/// Under GitHub Actions, a run that retried adds a table to the step
/// summary, one that succeeded at once adds nothing, and
/// RETRY_STEP_SUMMARY=0 turns it off; RETRY_GITHUB_OUTPUT=1 writes the
/// step outputs. Neither changes the exit status or the log lines.
#[test]
fn a_run_that_retried_writes_the_step_summary_and_outputs() {
    let dir = scratch();
    let summary = dir.path().join("summary.md");
    let outputs = dir.path().join("outputs");
    let args = ["--jitter", "none", "--base", "2ms", "-n", "3"];
    let out = flaky(dir.path(), 9, 22, &args)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .env("RETRY_GITHUB_OUTPUT", "1")
        .run();
    out.code(22).stderr_lines(6);
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        "| retry | `flaky` |\n\
         |---|---|\n\
         | attempt 1/3 | exit code 22; slept 2 ms |\n\
         | attempt 2/3 | exit code 22; slept 4 ms |\n\
         | attempt 3/3 | exit code 22 |\n\
         | outcome | giving up after 3 attempts\\: the last failed with exit code 22 (reason\\: attempts) |\n\n"
    );
    assert_eq!(
        std::fs::read_to_string(&outputs).unwrap(),
        "total_attempts=3\nexit_code=22\n\
         exit_error=Final attempt failed. Child_process exited with error code 22\n\
         reason=giving up after 3 attempts: the last failed with exit code 22 (reason: attempts)\n"
    );

    // A first-try success: no table; the outputs still.
    let (_bins, path) = false_and_true();
    let quiet = dir.path().join("quiet.md");
    retry(&["true"])
        .env("PATH", &path)
        .env("GITHUB_STEP_SUMMARY", &quiet)
        .env("GITHUB_OUTPUT", &outputs)
        .env("RETRY_GITHUB_OUTPUT", "1")
        .run()
        .code(0)
        .stderr_is("");
    assert!(!quiet.exists());
    assert!(
        std::fs::read_to_string(&outputs)
            .unwrap()
            .ends_with("total_attempts=1\nexit_code=0\nexit_error=\nreason=\n")
    );

    // Turned off.
    let off = dir.path().join("off.md");
    retry(&["-n", "2", "--base", "1ms", "false"])
        .env("PATH", &path)
        .env("GITHUB_STEP_SUMMARY", &off)
        .env("RETRY_STEP_SUMMARY", "0")
        .run()
        .code(1);
    assert!(!off.exists());
}

/// Issue 40: `RETRY_GITHUB_OUTPUT=1` reached the command, so a retry
/// inside it wrote the step's outputs too. Neither the attempts nor the
/// hook get it.
#[test]
#[cfg(unix)] // an sh hook and an sh command
fn the_step_outputs_are_the_outer_run_s_alone() {
    let dir = scratch();
    let seen = dir.path().join("seen");
    let outputs = dir.path().join("outputs");
    let record = format!(
        "echo \"${{RETRY_GITHUB_OUTPUT-unset}}\" >> {}",
        seen.display()
    );
    let nested = format!(
        "{record}; '{}' -n 1 -- sh -c 'exit 3'",
        crate::harness::bin()
    );
    retry(&["-n", "2", "--base", "1ms", "--on-retry", &record])
        .args(&["--", "sh", "-c", &nested])
        .env("GITHUB_OUTPUT", &outputs)
        .env("RETRY_GITHUB_OUTPUT", "1")
        .run()
        .code(3);
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), "unset\n".repeat(3));
    let written = std::fs::read_to_string(&outputs).unwrap();
    assert!(
        written.starts_with("total_attempts=2\nexit_code=3\n") && written.lines().count() == 4,
        "{written}"
    );
}

/// Issue 40: a line of output quoted in the summary could close its code
/// span with a backtick and put an image into the step summary.
#[test]
#[cfg(unix)] // an sh command
fn output_quoted_in_the_step_summary_stays_in_its_code_span() {
    let dir = scratch();
    let summary = dir.path().join("summary.md");
    let line = "a`b ![x](http://e.test/x.png) c\\|d";
    let script = format!("printf '%s\\n' '{line}'; exit 22");
    retry(&["-n", "3", "--stop-if-output", "x.png", "sh", "-c", &script])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .run()
        .code(22);
    let written = std::fs::read_to_string(&summary).unwrap();
    let outcome = written.lines().nth(3).unwrap_or_default();
    assert!(
        outcome.starts_with("| outcome | giving up after attempt 1/3 (exit code 22)\\: ")
            && outcome.contains("`` a`b ![x](http://e.test/x.png) c\\\\|d `` (reason"),
        "{written}"
    );
}

/// A summary that cannot be written costs one warning, not the run.
#[test]
fn a_step_summary_that_cannot_be_written_is_one_warning() {
    let (dir, path) = false_and_true();
    let nowhere = dir.path().join("no-such-directory").join("summary.md");
    let out = retry(&["-n", "2", "--base", "1ms", "false"])
        .env("PATH", &path)
        .env("GITHUB_STEP_SUMMARY", &nowhere)
        .run();
    out.code(1)
        .stderr_has("retry: warning: cannot write the step summary to '")
        .stderr_lines(3);
}
