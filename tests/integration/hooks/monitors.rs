//! The cron monitors' recipes of docs/guide.md ("Cron monitors"), run as
//! written: each `sh` block of that section is a script whose only
//! changes are the monitor's host (`https://hc-ping.com` becomes a
//! loopback stub's `http://127.0.0.1:PORT`, which records every ping) and
//! the command (`/usr/local/bin/backup` becomes a script of the test's).
//! Each must ping a success once for a run that succeeds after two
//! retries, a failure once for a run that gives up, and a failure without
//! a start for a run the open circuit skips; the start ping comes first.

use std::path::{Path, PathBuf};

use crate::harness::loopback::installed;
use crate::harness::pings::{Ping, Stub};
use crate::harness::{bin, scratch};

const GUIDE: &str = include_str!("../../../docs/guide.md");

/// The `sh` blocks of the guide's "Cron monitors" section: (the service,
/// as the block's first comment names it; the block).
fn recipes() -> Vec<(&'static str, &'static str)> {
    let section = GUIDE
        .split("### Cron monitors: `--on-start` and `--on-exit`\n")
        .nth(1)
        .expect("docs/guide.md has the cron monitors' section");
    // To the next heading (the recipes' comments start with one `#`).
    let section = section.split("\n##").next().unwrap();
    let blocks: Vec<&str> = section
        .split("```sh\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap())
        .collect();
    blocks
        .into_iter()
        .map(|block| {
            let service = block
                .strip_prefix("# ")
                .and_then(|line| line.split([':', ' ']).next())
                .expect("a recipe starts with a comment naming its service");
            (service, block)
        })
        .collect()
}

/// The monitor's host in a recipe (`https://HOST`), the one URL it names.
fn host(recipe: &str) -> &str {
    let urls: Vec<&str> = recipe
        .match_indices("https://")
        .map(|(at, _)| {
            let rest = &recipe[at..];
            let end = rest["https://".len()..].find('/').unwrap() + "https://".len();
            &rest[..end]
        })
        .collect();
    assert_eq!(urls.len(), 1, "a recipe names one monitor URL: {recipe}");
    urls[0]
}

/// How a run of the test's backup goes.
#[derive(Clone, Copy, Debug)]
enum Run {
    /// Fails twice, then succeeds.
    SucceedsAfterTwoRetries,
    /// Fails every attempt.
    GivesUp,
    /// Skipped by the open circuit (opened by a run that gave up).
    Skipped,
}

/// The test's backup: counts its calls in `dir`, prints a line on each
/// stream, and succeeds from the third call on if `succeed`.
fn backup(dir: &Path, succeed: bool) -> PathBuf {
    let script = dir.join("backup");
    let count = dir.join("calls");
    let last = if succeed { "[ $n -ge 3 ]" } else { "false" };
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nn=$(($(cat '{c}' 2>/dev/null || echo 0) + 1)); echo $n > '{c}'\n\
             echo \"backup $n\"; echo \"trouble $n\" >&2\n{last}\n",
            c = count.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// Runs `recipe` as a script, its host the stub's and its command the
/// test's backup, with `retry` on PATH (and `wget` as BusyBox's, with
/// `busybox`); returns retry's exit status.
fn run(recipe: &str, stub: &Stub, dir: &Path, how: Run, busybox: bool) -> i32 {
    let backup = backup(dir, matches!(how, Run::SucceedsAfterTwoRetries));
    let script = recipe
        .replace(host(recipe), &stub.origin())
        .replace("/usr/local/bin/backup", backup.to_str().unwrap());
    assert!(!script.contains("/usr/local/bin/backup"));
    let bin_dir = dir.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let link = bin_dir.join("retry");
    if !link.exists() {
        std::os::unix::fs::symlink(bin(), &link).unwrap();
    }
    if busybox {
        let wget = bin_dir.join("wget");
        if !wget.exists() {
            let busybox = installed("busybox", "busybox-static");
            let found = std::process::Command::new("sh")
                .args(["-c", &format!("command -v {busybox}")])
                .output()
                .unwrap();
            let path = String::from_utf8(found.stdout).unwrap();
            std::os::unix::fs::symlink(path.trim(), &wget).unwrap();
        }
    }
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let sh = |breaker: bool| {
        let mut sh = std::process::Command::new("sh");
        sh.args(["-c", &script]).stdin(std::process::Stdio::null());
        // The environment the harness gives retry (no RETRY_* of the
        // machine's, no user presets), with this PATH, a runtime directory
        // of the test's for the breaker, and no real sleeps.
        let clean = crate::harness::retry(&[]).into_command();
        for (key, value) in clean.get_envs() {
            match value {
                Some(value) => sh.env(key, value),
                None => sh.env_remove(key),
            };
        }
        sh.env("PATH", &path)
            .env("XDG_RUNTIME_DIR", dir)
            .env("RETRY_BASE", "1ms");
        if breaker {
            sh.env("RETRY_BREAKER", "nightly")
                .env("RETRY_BREAKER_AFTER", "1");
        }
        sh.output().unwrap()
    };
    let output = match how {
        Run::Skipped => {
            // A run that gives up opens the circuit; its pings are not this run's.
            let opened = sh(true);
            assert_eq!(opened.status.code(), Some(1), "{opened:?}");
            stub.take();
            sh(true)
        }
        _ => sh(false),
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("command failed"),
        "a ping failed: {stderr}"
    );
    output.status.code().expect("retry exited")
}

/// The end pings of a run: success or failure, as the monitor reads them.
#[derive(Debug, PartialEq, Eq)]
enum Said {
    Start,
    Success,
    Failure,
}

/// How each service reads a ping of its recipe.
fn said(service: &str, ping: &Ping) -> Said {
    let last = ping.path().rsplit('/').next().unwrap();
    match service {
        "healthchecks.io" => match last {
            "start" => Said::Start,
            "0" => Said::Success,
            code if code.parse::<u8>().is_ok_and(|c| c > 0) => Said::Failure,
            other => panic!("not a healthchecks.io ping: {other}"),
        },
        "Cronitor" => match ping.param("state").as_deref() {
            Some("run") => Said::Start,
            Some("complete") => Said::Success,
            Some("fail") => Said::Failure,
            other => panic!("not a Cronitor state: {other:?}"),
        },
        "Sentry" => match ping.param("status").as_deref() {
            Some("in_progress") => Said::Start,
            Some("ok") => Said::Success,
            Some("error") => Said::Failure,
            other => panic!("not a Sentry status: {other:?}"),
        },
        "Uptime" => match ping.param("status").as_deref() {
            Some("up") => Said::Success,
            Some("down") => Said::Failure,
            other => panic!("not an Uptime Kuma status: {other:?}"),
        },
        other => panic!("a recipe for an unknown service: {other}"),
    }
}

#[test]
fn the_guides_monitor_recipes_ping_once_as_they_say() {
    installed("curl", "curl");
    installed("wget", "wget");
    let recipes = recipes();
    let services: Vec<&str> = recipes.iter().map(|(service, _)| *service).collect();
    assert_eq!(
        services,
        ["healthchecks.io", "Cronitor", "Sentry", "Uptime"]
    );
    let stub = Stub::start();
    for (service, recipe) in recipes {
        let starts = recipe.contains("--on-start");
        let wgets: &[bool] = match service {
            "Uptime" => &[false, true],
            _ => &[false],
        };
        for &busybox in wgets {
            for (how, status, end) in [
                (Run::SucceedsAfterTwoRetries, 0, Said::Success),
                (Run::GivesUp, 1, Said::Failure),
                (Run::Skipped, 75, Said::Failure),
            ] {
                let dir = scratch();
                let code = run(recipe, &stub, dir.path(), how, busybox);
                let what = format!("{service} ({how:?}, BusyBox: {busybox})");
                assert_eq!(code, status, "{what}");
                let pings = stub.take();
                let read: Vec<Said> = pings.iter().map(|ping| said(service, ping)).collect();
                // A skipped run has no start; the others start first.
                let expected = match (starts, how) {
                    (true, Run::Skipped) | (false, _) => vec![end],
                    (true, _) => vec![Said::Start, end],
                };
                assert_eq!(read, expected, "{what}: {pings:#?}");
                check_end(service, pings.last().unwrap(), how, code);
            }
        }
    }
}

/// What an end ping carries beyond success or failure.
fn check_end(service: &str, ping: &Ping, how: Run, code: i32) {
    match service {
        "healthchecks.io" => {
            assert_eq!(ping.method, "POST");
            assert_eq!(ping.path(), format!("/your-uuid-here/{code}"));
            // The last attempt's output: the backup's lines of its last call.
            let body = String::from_utf8_lossy(&ping.body);
            match how {
                Run::Skipped => assert_eq!(body, ""),
                Run::SucceedsAfterTwoRetries => {
                    let mut lines: Vec<&str> = body.lines().collect();
                    lines.sort_unstable();
                    assert_eq!(lines, ["backup 3", "trouble 3"]);
                }
                Run::GivesUp => {
                    let mut lines: Vec<&str> = body.lines().collect();
                    lines.sort_unstable();
                    assert_eq!(lines, ["backup 5", "trouble 5"]);
                }
            }
        }
        "Cronitor" => {
            assert_eq!(ping.path(), "/p/your-api-key/nightly-backup");
            assert_eq!(ping.param("status_code"), Some(code.to_string()));
            let message = match how {
                Run::SucceedsAfterTwoRetries => "success (success) after 3 attempts",
                Run::GivesUp => "gave_up (attempts) after 5 attempts",
                Run::Skipped => "skipped (breaker) after 0 attempts",
            };
            assert_eq!(ping.param("message").as_deref(), Some(message));
        }
        "Sentry" => {
            assert_eq!(ping.path(), "/api/0/cron/nightly-backup/examplePublicKey/");
        }
        "Uptime" => {
            assert_eq!(ping.path(), "/api/push/your-push-token");
            let outcome = match how {
                Run::SucceedsAfterTwoRetries => "success",
                Run::GivesUp => "gave_up",
                Run::Skipped => "skipped",
            };
            assert_eq!(ping.param("msg").as_deref(), Some(outcome));
            let ping_ms = ping.param("ping").unwrap();
            assert!(ping_ms.parse::<u64>().is_ok(), "{ping_ms}");
        }
        other => panic!("{other}"),
    }
}
