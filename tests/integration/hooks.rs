//! `--on-start` and `--on-exit` end to end: what each outcome's hook sees
//! (the hook writes its environment to a file), the bounds of a hook that
//! hangs, ignores SIGTERM, writes without end, leaves a child holding
//! retry's stderr, cannot start or fails (none changes retry's exit status
//! or holds the run past its bound), the signal path with a real SIGTERM,
//! the secrets no hook sees, the output's tail, and bad input. The cron
//! monitors' recipes of docs/guide.md are run in `monitors.rs`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::harness::{assert_all_gone, assert_died_of, retry, scratch, send, wait_for_file};

// The recipes for healthchecks.io, Cronitor, Sentry Crons and Uptime Kuma,
// against a loopback stub that records their pings.
mod monitors;

/// A file's `NAME=value` lines (as `env` prints them).
fn env_file(path: &Path) -> BTreeMap<String, String> {
    wait_for_file(path)
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

/// `--on-exit` writing its environment to `file`.
fn env_to(file: &Path) -> String {
    format!("env > '{}'", file.display())
}

/// What the hook was told: outcome, reason, exit code, attempts.
fn told(env: &BTreeMap<String, String>) -> [&str; 4] {
    [
        "RETRY_OUTCOME",
        "RETRY_REASON",
        "RETRY_EXIT_CODE",
        "RETRY_ATTEMPTS",
    ]
    .map(|name| env.get(name).map_or("<unset>", String::as_str))
}

#[test]
fn each_outcome_is_what_the_exit_hook_sees() {
    let dir = scratch();
    let count = dir.path().join("count");
    let count = count.display();
    let succeed_third = format!(
        "n=$(($(cat '{count}' 2>/dev/null || echo 0) + 1)); echo $n > '{count}'; [ $n -ge 3 ]"
    );
    // (name, the run, what the hook is told, the limit it sees)
    let cases: [(&str, Vec<&str>, [&str; 4], &str); 5] = [
        (
            "success",
            vec!["--", "sh", "-c", &succeed_third],
            ["success", "success", "0", "3"],
            "5",
        ),
        (
            "gave_up",
            vec!["-n", "2", "--", "sh", "-c", "exit 3"],
            ["gave_up", "attempts", "3", "2"],
            "2",
        ),
        (
            "stopped",
            vec!["--fatal-on", "4", "--", "sh", "-c", "exit 4"],
            ["stopped", "fatal", "4", "1"],
            "5",
        ),
        (
            "spawn",
            vec!["--", "/nonexistent/retry-hook-test"],
            ["stopped", "spawn", "127", "1"],
            "5",
        ),
        (
            "max_time",
            vec!["-n", "unlimited", "-m", "300ms", "--", "sleep", "5"],
            ["gave_up", "max_time", "124", "1"],
            "unlimited",
        ),
    ];
    for (name, args, expected, limit) in cases {
        let file = dir.path().join(name);
        let hook = env_to(&file);
        let out = retry(&["--base", "1ms", "--on-exit", &hook])
            .args(&args)
            .run();
        let env = env_file(&file);
        assert_eq!(told(&env), expected, "{name}\n{out:#?}");
        // What the hook is told is retry's own status.
        assert_eq!(
            out.code.map(|c| c.to_string()).as_deref(),
            Some(expected[2])
        );
        let elapsed: u64 = env["RETRY_ELAPSED_MS"].parse().unwrap();
        assert!(
            elapsed <= out.elapsed.as_millis() as u64,
            "{name}: {elapsed}"
        );
        assert_eq!(env["RETRY_ATTEMPT_LIMIT"], limit, "{name}");
        assert!(!env.contains_key("RETRY_ATTEMPT"), "{name}");
        assert!(env.contains_key("RETRY_RUN_IDS"), "{name}");
    }
    let elapsed: u64 = env_file(&dir.path().join("max_time"))["RETRY_ELAPSED_MS"]
        .parse()
        .unwrap();
    assert!(elapsed >= 300, "--max-time 300ms ended after {elapsed} ms");
    // The command's name as the log lines give it.
    let env = env_file(&dir.path().join("gave_up"));
    assert_eq!(env["RETRY_COMMAND"], "exit 3");
    let env = env_file(&dir.path().join("max_time"));
    assert_eq!(env["RETRY_COMMAND"], "sleep");
}

#[test]
fn a_run_the_open_circuit_skips_is_skipped_and_has_no_start() {
    let dir = scratch();
    let circuit = |args: &[&str]| {
        retry(&["--breaker", "hooks", "--breaker-after", "1", "-n", "1"])
            .env("XDG_RUNTIME_DIR", dir.path())
            .args(args)
    };
    // One run that gives up opens it.
    circuit(&["--", "false"]).run().code(1);
    let (start, end) = (dir.path().join("start"), dir.path().join("end"));
    let out = circuit(&[
        "--on-start",
        &env_to(&start),
        "--on-exit",
        &env_to(&end),
        "--",
        "true",
    ])
    .run();
    out.code(75);
    assert_eq!(told(&env_file(&end)), ["skipped", "breaker", "75", "0"]);
    assert!(!start.exists(), "--on-start ran for a skipped run");
}

#[test]
fn on_start_runs_before_the_first_attempt_and_on_exit_after_the_last() {
    let dir = scratch();
    let log = dir.path().join("log");
    let log = log.display();
    let out = retry(&[
        "--base",
        "1ms",
        "-n",
        "2",
        "--on-start",
        &format!("echo start:$RETRY_ATTEMPT_LIMIT:${{RETRY_OUTCOME-none}} >> '{log}'"),
        "--on-exit",
        &format!("echo exit:$RETRY_OUTCOME >> '{log}'"),
        "--",
        "sh",
        "-c",
        &format!("echo attempt:$RETRY_ATTEMPT >> '{log}'; exit 1"),
    ])
    .run();
    out.code(1);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("log")).unwrap(),
        "start:2:none\nattempt:1\nattempt:2\nexit:gave_up\n"
    );
    // A start hook that fails is a warning, and the run goes on.
    let out = retry(&["--on-start", "exit 5", "--", "echo", "ran"]).run();
    out.code(0)
        .stdout_is("ran\n")
        .stderr_has("--on-start command failed with exit code 5; the run goes on");
}

#[test]
fn a_hooks_trouble_never_changes_the_status_nor_holds_the_run() {
    let dir = scratch();
    let child = dir.path().join("child");
    let escaped = dir.path().join("escaped");
    let leaves_child = format!("sleep 30 & echo $! > '{}'; exit 0", child.display());
    let escapes = format!(
        "setsid sleep 30 & echo $! > '{}'; exit 0",
        escaped.display()
    );
    // (the hook, whether it is a warning)
    let mut hooks: Vec<(&str, bool)> = vec![
        ("sleep 30", true),
        ("trap '' TERM; sleep 30", true),
        ("exit 1", true),
        ("exit 255", true),
        ("kill -9 $$", true),
        ("/nonexistent/retry-hook", true),
        (&leaves_child, false),
    ];
    // A process that left the group is stopped only by Linux's subreaper
    // (docs/behaviour.md: on macOS and the BSDs it is left running, as the
    // portable build shows here).
    let subreaper = cfg!(all(target_os = "linux", not(feature = "portable")));
    if subreaper {
        hooks.push((&escapes, false));
    }
    for (hook, warned) in hooks {
        for (command, status) in [("exit 0", 0), ("exit 3", 3)] {
            let out = retry(&[
                "-n",
                "1",
                "--hook-timeout",
                "300ms",
                "--kill-after",
                "200ms",
                "--on-exit",
                hook,
                "--",
                "sh",
                "-c",
                command,
            ])
            .run();
            out.code(status);
            // The hook's bound and the grace, and start-up: far below the
            // 30 s a hook that held the run would take.
            assert!(out.elapsed < Duration::from_secs(10), "{hook}: {out:#?}");
            let warnings = out.stderr.matches("--on-exit command").count();
            assert_eq!(warnings, usize::from(warned), "{hook}: {out:#?}");
        }
    }
    // What the hooks left running was stopped with them.
    let left = if subreaper {
        vec![child, escaped]
    } else {
        vec![child]
    };
    for file in left {
        let pids = std::fs::read_to_string(&file).unwrap();
        assert_all_gone(&pids, "its hook");
    }
    let out = retry(&["--hook-timeout", "300ms", "--kill-after", "200ms"])
        .args(&["--on-exit", "sleep 30", "--", "true"])
        .run();
    out.stderr_has(
        "--on-exit command did not end within --hook-timeout 300ms and was stopped; \
         retry's exit status is the run's",
    );
}

/// A hook that stops itself by job control (`kill -TSTP $$`, what a
/// program that wants the terminal does from the background) is a hook
/// that hangs: stopped at its bound, a warning. retry once stopped itself
/// with it, as it does for an attempt a shell may `fg`, and no one resumed it.
#[test]
fn a_hook_that_stops_itself_is_stopped_at_its_bound() {
    let dir = scratch();
    let pid_file = dir.path().join("hook");
    let hook = format!("echo $$ > '{}'; kill -TSTP $$; exit 0", pid_file.display());
    for which in ["--on-start", "--on-exit"] {
        let _ = std::fs::remove_file(&pid_file);
        let mut command = retry(&["-n", "1", "--hook-timeout", "300ms"])
            .args(&[
                "--kill-after",
                "200ms",
                which,
                &hook,
                "--",
                "sh",
                "-c",
                "exit 3",
            ])
            .into_command();
        command.stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > Duration::from_secs(10) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if status.is_none() {
            // Stopped with its hook: end both before failing.
            if let Ok(pid) = std::fs::read_to_string(&pid_file) {
                crate::harness::kill_pid(pid.trim().parse().unwrap());
            }
            crate::harness::kill_pid(child.id() as i32);
            let _ = child.wait();
        }
        let status =
            status.unwrap_or_else(|| panic!("{which}: retry was still running after 10 s"));
        assert_eq!(status.code(), Some(3), "{which}");
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(
            stderr.contains(&format!(
                "{which} command did not end within --hook-timeout 300ms"
            )),
            "{which}: {stderr}"
        );
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        assert_all_gone(&pid, "its hook");
    }
}

#[test]
fn a_hook_that_writes_without_end_is_stopped_at_its_bound() {
    // Its stdout is retry's stderr, passed on without a buffer of retry's:
    // to /dev/null here, so the test does not keep gigabytes either.
    let mut command = retry(&[
        "-n",
        "1",
        "--hook-timeout",
        "300ms",
        "--kill-after",
        "200ms",
    ])
    .args(&["--on-exit", "yes", "--", "sh", "-c", "exit 4"])
    .into_command();
    command.stdout(Stdio::null()).stderr(Stdio::null());
    let start = Instant::now();
    let status = command.status().unwrap();
    assert_eq!(status.code(), Some(4));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn on_a_signal_the_command_stops_first_then_the_hook_runs_then_retry_dies_of_it() {
    let dir = scratch();
    let (pid, told_file) = (dir.path().join("pid"), dir.path().join("told"));
    let hook = format!(
        "s=alive; kill -0 $(cat '{pid}') 2>/dev/null || s=gone; \
         echo \"$RETRY_OUTCOME $RETRY_REASON $RETRY_EXIT_CODE $RETRY_ATTEMPTS $s\" > '{told}'",
        pid = pid.display(),
        told = told_file.display()
    );
    let child = retry(&["--on-exit", &hook, "--", "sh", "-c"])
        .args(&[&format!("echo $$ > '{}'; exec sleep 30", pid.display())])
        .spawn();
    wait_for_file(&pid);
    send(&child, Signal::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_died_of(out.status, Signal::SIGTERM, &out);
    assert_eq!(wait_for_file(&told_file), "interrupted signal 143 1 gone\n");
}

#[test]
fn a_second_signal_stops_the_exit_hook_at_once() {
    let dir = scratch();
    let (pid, hook_pid) = (dir.path().join("pid"), dir.path().join("hook"));
    // A hook deaf to SIGINT, with a grace longer than the test: only the
    // second signal's SIGKILL ends it in time.
    let hook = format!("trap '' INT; echo $$ > '{}'; sleep 30", hook_pid.display());
    let child = retry(&["--hook-timeout", "60s", "--kill-after", "60s"])
        .args(&["--on-exit", &hook, "--", "sh", "-c"])
        .args(&[&format!("echo $$ > '{}'; exec sleep 30", pid.display())])
        .spawn();
    wait_for_file(&pid);
    send(&child, Signal::SIGINT);
    let hook = wait_for_file(&hook_pid);
    let pressed = Instant::now();
    send(&child, Signal::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_died_of(out.status, Signal::SIGINT, &out);
    assert!(
        pressed.elapsed() < Duration::from_secs(10),
        "{:?}",
        pressed.elapsed()
    );
    assert_all_gone(&hook, "a second signal");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--on-exit command was stopped: retry received SIGINT"),
        "{stderr}"
    );
}

#[cfg(feature = "redis")] // a store's URL is the secret
#[test]
fn a_hook_sees_what_an_attempt_sees_and_no_secret() {
    let dir = scratch();
    let files = ["attempt", "start", "exit"].map(|name| dir.path().join(name));
    let secret = "redis://:hunter2@127.0.0.1:9/0";
    let out = retry(&[
        "--on-start",
        &env_to(&files[1]),
        "--on-exit",
        &env_to(&files[2]),
    ])
    .env("RETRY_STORE", secret)
    .env("RETRY_BUDGET_STORE", secret)
    .env("RETRY_GITHUB_OUTPUT", "1")
    .env("RETRY_GITHUB_TITLE", "deploy")
    .env("RETRY_ON_RETRY", "true")
    .env("HOOKS_TEST_PLAIN", "kept")
    .args(&["--", "sh", "-c", &env_to(&files[0])])
    .run();
    out.code(0);
    let [attempt, start, exit] = files.map(|file| env_file(&file));
    // Each its own variables, set by retry: the rest is the same.
    let own = |env: &BTreeMap<String, String>, ours: &[&str]| -> Vec<String> {
        env.keys()
            .filter(|name| !ours.contains(&name.as_str()))
            .cloned()
            .collect()
    };
    let attempts = ["RETRY_ATTEMPT", "RETRY_ATTEMPT_LIMIT", "RETRY_RUN_IDS"];
    let hooks = [
        "RETRY_COMMAND",
        "RETRY_ATTEMPT_LIMIT",
        "RETRY_RUN_IDS",
        "RETRY_OUTCOME",
        "RETRY_REASON",
        "RETRY_EXIT_CODE",
        "RETRY_ATTEMPTS",
        "RETRY_ELAPSED_MS",
    ];
    assert_eq!(own(&start, &hooks), own(&attempt, &attempts));
    assert_eq!(own(&exit, &hooks), own(&attempt, &attempts));
    for env in [&attempt, &start, &exit] {
        assert_eq!(env["HOOKS_TEST_PLAIN"], "kept");
        for withheld in [
            "RETRY_STORE",
            "RETRY_BUDGET_STORE",
            "RETRY_GITHUB_OUTPUT",
            "RETRY_GITHUB_TITLE",
            "RETRY_ON_START",
            "RETRY_ON_EXIT",
        ] {
            assert!(!env.contains_key(withheld), "{withheld} in {env:?}");
        }
        assert!(!env.values().any(|v| v.contains("hunter2")), "{env:?}");
    }
    // The Action's title names the command, as in the log lines.
    assert_eq!(exit["RETRY_COMMAND"], "deploy");
}

#[test]
fn on_exit_stdin_tail_is_the_last_attempts_last_10_kib() {
    let dir = scratch();
    let tail = dir.path().join("tail");
    let hook = format!("cat > '{}'", tail.display());
    // 16 000 numbered bytes on stdout: the tail is the last 10 240.
    let printed: String = (0..1600).map(|n| format!("{n:09}\n")).collect();
    let out = retry(&["--on-exit-stdin", "tail", "--on-exit", &hook, "--"])
        .args(&[
            "sh",
            "-c",
            "i=0; while [ $i -lt 1600 ]; do printf '%09d\\n' $i; i=$((i+1)); done",
        ])
        .run();
    out.code(0);
    // Passed on untouched.
    assert_eq!(out.stdout, printed);
    let kept = std::fs::read(&tail).unwrap();
    assert_eq!(kept, printed.as_bytes()[printed.len() - 10 * 1024..]);
    // Both streams, the last attempt's only.
    let count = dir.path().join("count");
    let script = format!(
        "n=$(($(cat '{c}' 2>/dev/null || echo 0) + 1)); echo $n > '{c}'; \
         echo out$n; echo err$n >&2; [ $n -ge 2 ]",
        c = count.display()
    );
    let out = retry(&[
        "--base",
        "1ms",
        "--on-exit-stdin",
        "tail",
        "--on-exit",
        &hook,
    ])
    .args(&["--", "sh", "-c", &script])
    .run();
    out.code(0).stdout_is("out1\nout2\n").stderr_has("err2\n");
    let kept = std::fs::read_to_string(&tail).unwrap();
    let mut lines: Vec<&str> = kept.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["err2", "out2"]);
    // Without `tail`, an empty stdin.
    let out = retry(&["--on-exit", &hook, "--", "echo", "x"]).run();
    out.code(0).stdout_is("x\n");
    assert_eq!(std::fs::read(&tail).unwrap(), b"");
}

#[test]
fn a_hooks_output_goes_to_stderr() {
    let out = retry(&["--on-start", "echo started", "--on-exit", "echo pinged"])
        .args(&["--", "echo", "result"])
        .run();
    out.code(0)
        .stdout_is("result\n")
        .stderr_is("started\npinged\n");
}

#[test]
fn bad_hook_options_are_one_line_and_nothing_runs() {
    let dir = scratch();
    let ran = dir.path().join("ran");
    let command = format!("touch '{}'", ran.display());
    let cases: [(&[&str], &str); 9] = [
        (&["--on-exit", ""], "--on-exit <SHELL COMMAND>"),
        (&["--on-start", ""], "--on-start <SHELL COMMAND>"),
        (
            &["--on-exit", "true", "--hook-timeout", "0"],
            "--hook-timeout",
        ),
        (
            &["--on-exit", "true", "--hook-timeout", "0s"],
            "`--hook-timeout 0s` would stop every hook before it starts; leave it out for the default, 10s",
        ),
        (
            &["--on-exit", "true", "--hook-timeout", "5"],
            "a duration needs a unit",
        ),
        (
            &["--on-exit", "true", "--hook-timeout", "soon"],
            "--hook-timeout <DURATION>",
        ),
        (
            &["--on-exit-stdin", "tail"],
            "`--on-exit-stdin` is only for --on-exit",
        ),
        (
            &["--on-exit", "true", "--on-exit-stdin", "all"],
            "--on-exit-stdin <WHAT>",
        ),
        (
            &["--hook-timeout", "1s"],
            "`--hook-timeout` is only for --on-start or --on-exit",
        ),
    ];
    for (args, said) in cases {
        let out = retry(args).args(&["--", "sh", "-c", &command]).run();
        out.code(2).stderr_lines(1).stderr_has(said);
        assert!(!ran.exists(), "{args:?} ran the command");
    }
    let out = retry(&["--on-exit", "true", "--", "sh", "-c", &command])
        .env("RETRY_HOOK_TIMEOUT", "0s")
        .run();
    out.code(2)
        .stderr_lines(1)
        .stderr_has("`RETRY_HOOK_TIMEOUT=0s`");
    assert!(!ran.exists());
}

#[test]
fn a_run_ended_by_its_pipes_failure_still_runs_its_exit_hook_whole() {
    // A replayed stdin longer than --stdin-limit ends the run at the first
    // retry (125): the hook is not stopped for the attempts' failure.
    let dir = scratch();
    let file = dir.path().join("told");
    let hook = format!("sleep 0.2; {}", env_to(&file));
    let out = retry(&["--stdin", "replay", "--stdin-limit", "10B", "--base", "1ms"])
        .args(&[
            "--on-exit",
            &hook,
            "--",
            "sh",
            "-c",
            "cat >/dev/null; exit 1",
        ])
        .input(vec![b'x'; 100])
        .run();
    out.code(125);
    assert!(!out.stderr.contains("--on-exit command"), "{out:#?}");
    // The second attempt is the one refused its input, counted as the
    // Action's total_attempts counts it.
    assert_eq!(told(&env_file(&file)), ["stopped", "io", "125", "2"]);
}
