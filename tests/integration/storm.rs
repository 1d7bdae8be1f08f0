//! During an outage: many `retry` processes sharing one `--budget`, and a
//! server that says when to come back (`--delay-from-output`). The
//! command is the project's helper, so these run under wine too.

#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant, SystemTime};

use crate::harness::{
    Spoiled, again_if_wine_spoiled, fails, retry, scratch, stand_ins, wait_bounded, wine_spoiled,
};

/// How many processes hit the failing dependency at once.
const STORM: usize = 50;

/// What a retry of `false` (a transient failure) costs by default: AWS's
/// 2026 cost, `--budget-cost`'s default.
const COST: u32 = 14;

/// `retry` with its budgets in `runtime` (a private XDG_RUNTIME_DIR, or
/// LOCALAPPDATA on Windows), and `true` and `false` the helper's.
fn retry_in(runtime: &Path, args: &[&str]) -> crate::harness::Retry {
    retry(args)
        .env("XDG_RUNTIME_DIR", runtime)
        .env("LOCALAPPDATA", runtime)
        .env("PATH", stand_ins())
}

/// What a storm left: the attempts made in all (each process's last JSON
/// line says how many), how many gave up for each reason, and how long it
/// took, with the budgets' directory.
struct Storm {
    runtime: tempfile::TempDir,
    total: u32,
    reasons: Vec<(String, u32)>,
    took: Duration,
}

/// Starts `STORM` copies of `retry ARGS -- false` at once, with budgets
/// in a new directory.
///
/// Under wine, a storm in which wine failed to start a process runs
/// again (`harness::again_if_wine_spoiled`), so what is checked is
/// retry's behaviour and not wine's.
fn storm(args: &[&str]) -> Storm {
    again_if_wine_spoiled(&format!("a storm of retry {args:?}"), || {
        let runtime = scratch();
        let started = Instant::now();
        let (total, reasons) = storm_once(runtime.path(), args).ok_or(Spoiled)?;
        let took = started.elapsed();
        Ok(Storm {
            runtime,
            total,
            reasons,
            took,
        })
    })
}

/// One storm: `None` when wine failed to start a command (see `storm`).
fn storm_once(runtime: &Path, args: &[&str]) -> Option<(u32, Vec<(String, u32)>)> {
    let mut argv = vec!["-n", "5", "--base", "0ms", "--log-format", "json"];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["--", "false"]);
    let children: Vec<Child> = (0..STORM)
        .map(|_| retry_in(runtime, &argv).spawn())
        .collect();
    let mut total = 0;
    let mut reasons: Vec<(String, u32)> = Vec::new();
    let mut wine_failed = false;
    for child in children {
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        if wine_spoiled(&output.stderr) {
            wine_failed = true;
            continue;
        }
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        let last = stderr.lines().last().unwrap_or_default();
        let field = |name: &str| {
            let start = last.find(&format!("\"{name}\":")).unwrap() + name.len() + 3;
            let rest = &last[start..];
            rest[..rest.find([',', '}']).unwrap()]
                .trim_matches('"')
                .to_owned()
        };
        assert!(last.starts_with(r#"{"event":"gave_up""#), "{stderr}");
        total += field("attempt").parse::<u32>().unwrap();
        let reason = field("reason");
        match reasons.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, n)) => *n += 1,
            None => reasons.push((reason, 1)),
        }
    }
    reasons.sort();
    (!wine_failed).then_some((total, reasons))
}

#[test]
fn fifty_processes_without_a_budget_make_every_attempt() {
    let Storm { total, reasons, .. } = storm(&[]);
    assert_eq!(total, 50 * 5);
    assert_eq!(reasons, [("attempts".to_owned(), 50)]);
}

#[test]
fn fifty_processes_with_one_budget_make_their_first_attempts_and_what_it_pays_for() {
    // 100 tokens at 14 a retry (the default), no refill: exactly 7
    // retries between them, and 2 tokens left.
    let budget = [
        "--budget",
        "storm",
        "--budget-tokens",
        "100",
        "--budget-refill",
        "0",
    ];
    let Storm {
        runtime,
        total,
        reasons,
        ..
    } = storm(&budget);
    assert_eq!(total, 50 + 100 / COST, "{reasons:?}");
    let refused: u32 = reasons
        .iter()
        .filter(|(r, _)| r == "budget")
        .map(|(_, n)| n)
        .sum();
    assert!(refused >= 45, "{reasons:?}");
    // The bucket is empty, and says so.
    let status = [
        "--budget-status",
        "storm",
        "--budget-tokens",
        "100",
        "--budget-refill",
        "0",
    ];
    retry_in(runtime.path(), &status)
        .run()
        .code(0)
        .stdout_is(&format!(
            "budget storm: 2.0 of 100 tokens, 0 retries at 14 each (0 throttled ones at 5); refills only on success\n\
             refill: 0 tokens/s; state: {}\n",
            runtime.path().join("retry").join("storm").display()
        ));
}

#[test]
fn a_refilling_budget_stays_within_its_rate() {
    // 140 tokens, and 140 more a second: 10 retries at 14, then 10 a second.
    let budget = [
        "--budget",
        "rate",
        "--budget-tokens",
        "140",
        "--budget-refill",
        "140",
    ];
    let Storm { total, took, .. } = storm(&budget);
    // The wall clock has millisecond steps: one more on each end.
    let elapsed = took.as_secs_f64() + 0.002;
    let bound = 50 + ((140.0 + 140.0 * elapsed) / f64::from(COST)).floor() as u32;
    assert!(
        total >= 60 && total <= bound,
        "{total} attempts, bound {bound}"
    );
}

/// A small xorshift: the kill schedule, reproducible from its seed.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn participants_killed_at_random_leave_a_valid_budget_and_the_totals_hold() {
    let runtime = scratch();
    let dir = scratch();
    let count = dir.path().join("count");
    let count_arg = count.to_str().unwrap();
    // 20 processes, each retrying ~9 times a second; the budget pays 71
    // retries at 14 and 17 more a second, so it runs dry within a second.
    let args = [
        "-n",
        "unlimited",
        "--jitter",
        "none",
        "--base",
        "100ms",
        "--max-time",
        "4s",
        "-q",
        "--budget",
        "kill",
        "--budget-tokens",
        "1000",
        "--budget-refill",
        "250",
        "--",
    ];
    let started = Instant::now();
    let mut children: Vec<Option<Child>> = (0..20)
        .map(|_| {
            let append = ["append", count_arg, "x", "exit", "1"];
            Some(retry_in(runtime.path(), &args).helper(&append).spawn())
        })
        .collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..8 {
        std::thread::sleep(Duration::from_millis(next(&mut seed) % 150));
        let victim = (next(&mut seed) % 20) as usize;
        if let Some(mut child) = children[victim].take() {
            // SIGKILL on Unix, TerminateProcess on Windows: no goodbye.
            child.kill().unwrap();
            let _ = child.wait();
        }
    }
    for child in children.iter_mut().flatten() {
        wait_bounded(child, Duration::from_secs(10));
    }
    let elapsed = started.elapsed().as_secs_f64() + 0.002;
    // Valid and unlocked: the status reads it without a reset.
    let status = retry_in(
        runtime.path(),
        &["--budget-status", "kill", "--budget-tokens", "1000"],
    )
    .run();
    status.code(0).stderr_is("");
    assert!(status.stdout.starts_with("budget kill: "), "{status:?}");
    let attempts = std::fs::read(&count).unwrap().len() as u32;
    let bound = 20 + ((1000.0 + 250.0 * elapsed) / f64::from(COST)).floor() as u32;
    assert!(
        attempts > 20 && attempts <= bound,
        "{attempts} attempts, bound {bound}"
    );
    // And it still works: a retry that gets a token.
    retry_in(
        runtime.path(),
        &["--budget", "kill", "--base", "1ms", "-n", "2", "true"],
    )
    .run()
    .code(0);
}

/// The helper's steps for a server that answers 503 with `header`, and
/// fails (22) the first time only; each attempt stamps its start (ns
/// since the epoch) into `stamps`. The answer that succeeds repeats the
/// head: only a failed attempt's output is read for a hint.
fn overloaded_once(dir: &Path, header: &str) -> Vec<String> {
    let stamps = dir.join("stamps").to_string_lossy().into_owned();
    let head = format!("HTTP/1.1 503\r\n{header}\r\n\r\n");
    let mut steps = vec!["stamp".to_owned(), stamps, "out".to_owned(), head];
    steps.extend(fails(dir, 1, 22));
    steps
}

/// The gap between the two attempts' starts, in ms.
fn gap_ms(dir: &Path) -> u64 {
    let stamps: Vec<u64> = std::fs::read_to_string(dir.join("stamps"))
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(stamps.len(), 2, "{stamps:?}");
    (stamps[1] - stamps[0]) / 1_000_000
}

const RETRY_AFTER: &str = r"(?i)^retry-after:\s*(.+)$";

#[test]
fn a_servers_retry_after_sets_the_sleep() {
    let dir = scratch();
    let script = overloaded_once(dir.path(), "Retry-After: 1");
    let run = retry(&[
        "--delay-from-output",
        RETRY_AFTER,
        "--base",
        "1ms",
        "--throttle-base",
        "1ms",
        "--log-format",
        "json",
        "--",
    ])
    .helper(&script)
    .run();
    run.code(0).stderr_has(
        r#","attempt":1,"exit_code":22,"sleep_ms":1000,"ceiling_ms":1,"strategy":"full","source":"hint","hint_ms":1000,"#,
    );
    // The headers still reach stdout untouched.
    assert!(run.stdout.contains("Retry-After: 1\r\n"), "{run:?}");
    // At least what was asked; the upper bound only rules out a draw of seconds.
    let gap = gap_ms(dir.path());
    assert!((1000..5000).contains(&gap), "{gap} ms between attempts");

    // Text: the server's reason, not the draw.
    let dir = scratch();
    retry(&["--delay-from-output", RETRY_AFTER, "--base", "1ms"])
        .args(&["--throttle-base", "1ms", "--"])
        .helper(&overloaded_once(dir.path(), "Retry-After: 0.2"))
        .run()
        .code(0)
        .stderr_has(
            "throttled (server asked to wait), exit code 22; sleep: 200 ms (server asked for 200 ms)\n",
        );
}

#[test]
fn an_http_date_is_a_delay_from_now() {
    let dir = scratch();
    let when = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(2));
    let script = overloaded_once(dir.path(), &format!("Retry-After: {when}"));
    let run = retry(&[
        "--delay-from-output",
        RETRY_AFTER,
        "--base",
        "1ms",
        "--throttle-base",
        "1ms",
        "--log-format",
        "json",
        "--",
    ])
    .helper(&script)
    .run();
    run.code(0);
    let sleep_ms: u64 = {
        let line = run
            .stderr
            .lines()
            .find(|l| l.contains(r#""event":"sleep""#))
            .unwrap();
        assert!(line.contains(r#""source":"hint""#), "{line}");
        let start = line.find(r#""sleep_ms":"#).unwrap() + 11;
        line[start..].split(',').next().unwrap().parse().unwrap()
    };
    // Whole seconds: the date is 1 to 2 s ahead when written, read a
    // moment later (a loaded machine may take a while to start `sh`).
    assert!((500..=2000).contains(&sleep_ms), "{sleep_ms}");
    assert!(gap_ms(dir.path()) >= sleep_ms, "{run:?}");
}

#[test]
fn a_hint_past_the_ceiling_gives_up_instead_of_coming_back_early() {
    let dir = scratch();
    retry(&[
        "--delay-from-output",
        RETRY_AFTER,
        "--base",
        "1ms",
        "--cap",
        "5s",
        "--",
    ])
    .helper(&overloaded_once(dir.path(), "Retry-After: 301"))
    .run()
    .code(22)
    .stderr_has(
        "the server asked to wait 301000 ms (5 min 1 s), longer than the 300000 ms (5 min) \
         retry waits for a server without --max-time (reason: hint)\n",
    );
    // Past --cap (1 ms here) but within the ceiling: waited for.
    let dir = scratch();
    let out = retry(&[
        "--delay-from-output",
        RETRY_AFTER,
        "--base",
        "1ms",
        "--cap",
        "1ms",
        "--",
    ])
    .helper(&overloaded_once(dir.path(), "Retry-After: 0.2"))
    .run();
    out.code(0)
        .stderr_has("sleep: 200 ms (server asked for 200 ms)");
    // With --max-time, it alone bounds the wait: past it, reason max_time.
    let dir = scratch();
    retry(&[
        "--delay-from-output",
        RETRY_AFTER,
        "--base",
        "1ms",
        "--cap",
        "5s",
        "--max-time",
        "10m",
        "--",
    ])
    .helper(&overloaded_once(dir.path(), "Retry-After: 3600"))
    .run()
    .code(22)
    .stderr_has("would end past --max-time (reason: max_time)\n");
}

#[test]
fn bad_values_are_refused_before_anything_runs() {
    let runtime = scratch();
    let ran = runtime.path().join("ran");
    let touch = ["touch", ran.to_str().unwrap()];
    let refused = |args: &[&str], says: &str| {
        retry_in(runtime.path(), args)
            .args(&["--"])
            .helper(&touch)
            .run()
            .code(2)
            .stderr_lines(1)
            .stderr_has(says);
        assert!(!ran.exists(), "{args:?} ran the command");
    };
    refused(
        &["--delay-from-output", "retry-after"],
        "needs one capture group",
    );
    refused(&["--delay-from-output", "(a)(b)"], "has 2 capture groups");
    refused(&["--budget", "a/b"], "a budget name is");
    refused(&["--budget", ".."], "a budget name is");
    refused(
        &["--budget-refill", "1"],
        "`--budget-refill` is only for --budget",
    );
    refused(
        &["--budget", "x", "--budget-tokens", "4"],
        "`--budget-tokens 4` is below `--budget-cost 14` (the default): \
         the budget could never pay for a transient failure's retry",
    );
    refused(
        &[
            "--budget",
            "x",
            "--budget-cost",
            "3",
            "--budget-tokens",
            "4",
        ],
        "`--budget-tokens 4` is below `--budget-throttle-cost 5` (the default): \
         the budget could never pay for a throttled failure's retry",
    );
}

/// `retry --budget ci -- SCRIPT` with `env` set, the script failing once
/// and then touching RAN: the first retry must warn once, naming the budget
/// and `reason`, and go ahead all the same. A first-try success never
/// opens the budget, so it says nothing.
#[cfg(unix)]
#[track_caller]
fn runs_without_the_budget(env: &[(&str, &Path)], reason: &str) {
    let scratch = scratch();
    let ran = scratch.path().join("ran");
    let with_env = |mut retry: crate::harness::Retry| {
        for (key, value) in env {
            retry = retry.env(key, value);
        }
        retry
    };
    with_env(retry(&["--budget", "ci", "touch", ran.to_str().unwrap()]))
        .run()
        .code(0)
        .stderr_is("");
    std::fs::remove_file(&ran).unwrap();
    let script = format!(
        "{}; touch {}",
        crate::harness::fail_times(scratch.path(), 1, 3),
        ran.display()
    );
    let run = with_env(retry(&["--budget", "ci", "-b", "1ms", "sh", "-c", &script])).run();
    run.code(0)
        .stderr_has(": warning: --budget ci: ")
        .stderr_has(reason)
        .stderr_has("; running without the budget\n");
    assert_eq!(run.stderr.matches("warning").count(), 1, "{run:#?}");
    assert!(ran.exists(), "{env:?}: the command did not run");
    // The status says the same, and fails: it has nothing to report.
    with_env(retry(&["--budget-status", "ci"]))
        .run()
        .code(1)
        .stdout_is("")
        .stderr_lines(1)
        .stderr_has("retry: --budget-status ci: ")
        .stderr_has(reason);
}

/// Anyone on the host can make a budget unusable (create `/tmp/retry-UID`
/// before its owner does): that must not stop anyone's commands.
#[test]
#[cfg(unix)] // file modes, owners and symlinks are Unix's
fn a_budget_that_cannot_be_used_is_skipped_with_one_warning() {
    let uid = nix::unistd::geteuid().as_raw();
    let root = scratch();
    let tmp = root.path().join("tmp");
    let theirs = tmp.join(format!("retry-{uid}"));
    std::fs::create_dir_all(&theirs).unwrap();
    // No XDG_RUNTIME_DIR (empty is none): the budget is in $TMPDIR/retry-UID.
    let in_tmp: &[(&str, &Path)] = &[("XDG_RUNTIME_DIR", Path::new("")), ("TMPDIR", &tmp)];
    // Made first, writable by all: another user could drain it.
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o777)).unwrap();
    runs_without_the_budget(in_tmp, "is writable by other users (mode 777)");
    if uid != 0 {
        eprintln!(
            "skipped in part: a budget directory and a state file of another user's \
             (only root can chown them to one)"
        );
    }
    if uid == 0 {
        // Made first by another user (root can play one).
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
        runs_without_the_budget(in_tmp, "is owned by user id 65534, not by you (0)");
    }

    // An XDG_RUNTIME_DIR that cannot hold the directory (after `su`
    // without `-`, it is the other user's; root may write anywhere, so
    // here it is a file).
    let file = root.path().join("file");
    std::fs::write(&file, "").unwrap();
    runs_without_the_budget(&[("XDG_RUNTIME_DIR", &file)], "Not a directory");

    // A state file that is a symlink, or someone else's.
    let runtime = root.path().join("runtime");
    let state = runtime.join("retry/ci");
    std::fs::create_dir_all(runtime.join("retry")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &state).unwrap();
    let in_runtime: &[(&str, &Path)] = &[("XDG_RUNTIME_DIR", &runtime)];
    runs_without_the_budget(in_runtime, "is a symlink; refusing to follow it");
    if uid == 0 {
        std::fs::remove_file(&state).unwrap();
        std::fs::write(&state, "").unwrap();
        std::os::unix::fs::chown(&state, Some(65534), None).unwrap();
        runs_without_the_budget(in_runtime, "is owned by user id 65534, not by you (0)");
    }
    // A state file group or others may write is as good as someone else's.
    let _ = std::fs::remove_file(&state);
    std::fs::write(&state, "").unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o660)).unwrap();
    runs_without_the_budget(in_runtime, "is writable by other users (mode 660)");
}

/// The warning is one of retry's log lines, in the log's format, and the
/// run it precedes goes on as without a budget: no more budget lines.
#[test]
#[cfg(unix)] // a symlink (Windows makes one only with a privilege)
fn the_warning_is_a_log_line_and_said_once() {
    let runtime = scratch();
    std::fs::create_dir(runtime.path().join("retry")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", runtime.path().join("retry/ci")).unwrap();
    let run = retry_in(
        runtime.path(),
        &[
            "--budget",
            "ci",
            "-n",
            "3",
            "--base",
            "0ms",
            "--log-format",
            "json",
            "false",
        ],
    )
    .run();
    run.code(1);
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with(r#"{"event":"warning""#))
        .collect();
    assert_eq!(warnings.len(), 1, "{run:?}");
    assert!(
        warnings[0].contains(r#""attempt":1,"message":"--budget ci: "#)
            && warnings[0]
                .ends_with(r#" is a symlink; refusing to follow it; running without the budget"}"#),
        "{run:?}"
    );
    assert!(run.stderr.contains(r#""reason":"attempts""#), "{run:?}");
}

/// `--budget-status` only reads: a damaged record is reported, and left
/// for the next run to reset under its lock.
#[test]
fn the_status_of_a_damaged_budget_changes_nothing() {
    let runtime = scratch();
    let state = runtime.path().join("retry").join("ci");
    std::fs::create_dir(runtime.path().join("retry")).unwrap();
    let damaged = "retry-budget 1 garbled by hand\n";
    std::fs::write(&state, damaged).unwrap();
    retry_in(runtime.path(), &["--budget-status", "ci"])
        .run()
        .code(0)
        .stderr_is(&format!(
            "retry: warning: --budget ci: {} is not a valid budget record; its next use resets it to a full bucket\n",
            state.display()
        ))
        .stdout_is(&format!(
            "budget ci: 500.0 of 500 tokens, 35 retries at 14 each (100 throttled ones at 5); full\n\
             refill: 5 tokens/s; state: {}\n",
            state.display()
        ));
    assert_eq!(std::fs::read_to_string(&state).unwrap(), damaged);
    // A first-try success does not touch it; the next retry resets it,
    // and says so.
    retry_in(runtime.path(), &["--budget", "ci", "true"])
        .run()
        .code(0)
        .stderr_is("");
    assert_eq!(std::fs::read_to_string(&state).unwrap(), damaged);
    retry_in(
        runtime.path(),
        &["--budget", "ci", "-n", "2", "-b", "1ms", "false"],
    )
    .run()
    .code(1)
    .stderr_has("was not a valid budget record; reset to a full bucket");
    assert_ne!(std::fs::read_to_string(&state).unwrap(), damaged);
}

/// A first-try success costs the budget nothing and never touches its
/// store: no directory, no file, no lock (the refill with time covers what
/// the AWS SDKs' +1 would add).
#[test]
fn a_first_try_success_never_opens_the_budget() {
    let runtime = scratch();
    retry_in(runtime.path(), &["--budget", "ci", "true"])
        .run()
        .code(0)
        .stderr_is("");
    assert!(
        !runtime.path().join("retry").exists(),
        "the budget was opened"
    );
    // The first retry opens it.
    retry_in(
        runtime.path(),
        &["--budget", "ci", "-n", "2", "-b", "1ms", "false"],
    )
    .run()
    .code(1);
    assert!(runtime.path().join("retry").join("ci").exists());
}

/// What one retry takes from a new budget in this host's file, by the
/// class of the failure before it: a throttled one's 5, a transient one's
/// 14, and a timeout's 14 too (AWS's 2026 costs; no longer twice).
#[test]
fn a_retry_pays_its_class_price_from_the_hosts_file() {
    let cases: [(&[&str], &[&str], &str); 3] = [
        (
            &["--throttle-if-output", "429"],
            &["err", "HTTP 429\n", "exit", "1"],
            "495.0",
        ),
        (
            &["--throttle-if-output", "429"],
            &["err", "HTTP 503\n", "exit", "1"],
            "486.0",
        ),
        (&["--timeout", "100ms"], &["sleep", "5000"], "486.0"),
    ];
    for (flags, steps, left) in cases {
        let runtime = scratch();
        let mut args = vec!["--budget", "ci", "--budget-refill", "0", "-n", "2"];
        args.extend_from_slice(&["--base", "0ms", "--throttle-base", "1ms"]);
        args.extend_from_slice(flags);
        args.push("--");
        let run = retry_in(runtime.path(), &args).helper(steps).run();
        assert!(run.stderr.contains("attempt 1/2 "), "{run:#?}");
        let status = retry_in(runtime.path(), &["--budget-status", "ci"]).run();
        status.code(0);
        assert!(
            status
                .stdout
                .starts_with(&format!("budget ci: {left} of 500 tokens")),
            "{flags:?}: {status:#?}"
        );
    }
}
