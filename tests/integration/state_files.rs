//! No state file can hang retry or stop its command: a FIFO or a device
//! in place of the breaker's or the budget's record, the old metrics
//! textfile or the user's presets is refused at once with one warning, and
//! the command runs as without that state; `--breaker-status` and
//! `--budget-status` say what is wrong in one line and exit 1. (A FIFO as
//! the breaker's record once held `retry --breaker` before the command
//! started, past SIGTERM, and held both status modes too.)
//!
//! Each run is bounded: a regression fails, it does not hang the suite.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::{Retry, count, fails, outputs, retry, scratch, wait_bounded};

/// Far more than a run takes on a loaded machine; far less than for ever.
const BOUND: Duration = Duration::from_secs(30);

/// What a bounded run ended with.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn bounded(run: Retry) -> Ended {
    let mut child = run.spawn();
    let status = wait_bounded(&mut child, BOUND);
    let (stdout, stderr) = outputs(&mut child);
    Ended {
        code: status.code(),
        stdout,
        stderr,
    }
}

/// A runtime directory whose `retry/` (and `retry/.breakers/`) are
/// private, as retry makes them, for a record to be put in.
fn runtime() -> tempfile::TempDir {
    let dir = scratch();
    for sub in ["retry", "retry/.breakers"] {
        let path = dir.path().join(sub);
        std::fs::create_dir(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    dir
}

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(
        path,
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
    )
    .unwrap();
}

/// A character device node like /dev/null (1, 3) at `path`, if this user
/// may make one (root with CAP_MKNOD, on Linux, whose numbers these are);
/// else says why the test skips it.
fn mknod_null(path: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::stat::{Mode, SFlag, makedev, mknod};
        let mode = Mode::S_IRUSR | Mode::S_IWUSR;
        match mknod(path, SFlag::S_IFCHR, mode, makedev(1, 3)) {
            Ok(()) => return true,
            Err(error) => eprintln!("skipped in part: cannot make a device node here ({error})"),
        }
    }
    #[cfg(not(target_os = "linux"))]
    eprintln!(
        "skipped in part: a device node is made on Linux only ({})",
        path.display()
    );
    false
}

/// Makes a fault at a path: whether it could.
type Make = fn(&Path) -> bool;

/// The faults a record can be, in words: a FIFO, and (where one can be
/// made) a character device.
fn faults() -> Vec<(&'static str, Make)> {
    vec![
        ("a FIFO", |path| {
            mkfifo(path);
            true
        }),
        ("a character device", mknod_null),
    ]
}

/// The one warning of a run that went on without its state (its line
/// ends with `warning`, "warning: …"), and the
/// command ran (it fails once, then succeeds: a retry, so a budget is
/// asked for too).
#[track_caller]
fn ran_without(ended: &Ended, dir: &Path, warning: &str) {
    let said = &ended.stderr;
    assert_eq!(ended.code, Some(0), "{said}");
    assert_eq!(count(dir), 2, "the command did not run twice: {said}");
    let warnings: Vec<&str> = said.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{said}");
    assert!(warnings[0].ends_with(warning), "{said}");
}

/// The one line of a status mode that cannot read the state: exit 1.
#[track_caller]
fn status_refuses(ended: &Ended, line: &str) {
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert_eq!(ended.stdout, "");
    assert_eq!(ended.stderr, format!("{line}\n"));
}

fn record(runtime: &Path, name: &str) -> PathBuf {
    runtime.join("retry").join(name)
}

#[test]
fn a_breaker_record_that_is_no_regular_file_is_skipped_at_once() {
    for (what, make) in faults() {
        let dir = runtime();
        let state = record(dir.path(), ".breakers/ci");
        if !make(&state) {
            continue;
        }
        let work = scratch();
        let run = retry(&["--breaker", "ci", "-n", "2", "-b", "1ms", "--"])
            .env("XDG_RUNTIME_DIR", dir.path())
            .helper(&fails(work.path(), 1, 1));
        let warning = format!(
            "warning: --breaker ci: {} is {what}, not a regular file; running without the breaker",
            state.display()
        );
        ran_without(&bounded(run), work.path(), &warning);
        let status = retry(&["--breaker-status", "ci"]).env("XDG_RUNTIME_DIR", dir.path());
        status_refuses(
            &bounded(status),
            &format!(
                "retry: --breaker-status ci: {} is {what}, not a regular file; \
                 a run with --breaker ci goes without it",
                state.display()
            ),
        );
    }
}

#[test]
fn a_budget_record_that_is_no_regular_file_is_skipped_at_once() {
    for (what, make) in faults() {
        let dir = runtime();
        let state = record(dir.path(), "ci");
        if !make(&state) {
            continue;
        }
        let work = scratch();
        let run = retry(&["--budget", "ci", "-n", "2", "-b", "1ms", "--"])
            .env("XDG_RUNTIME_DIR", dir.path())
            .helper(&fails(work.path(), 1, 1));
        let warning = format!(
            "warning: --budget ci: {} is {what}, not a regular file; running without the budget",
            state.display()
        );
        ran_without(&bounded(run), work.path(), &warning);
        let status = retry(&["--budget-status", "ci"]).env("XDG_RUNTIME_DIR", dir.path());
        status_refuses(
            &bounded(status),
            &format!(
                "retry: --budget-status ci: {} is {what}, not a regular file; \
                 a run with --budget ci goes without it",
                state.display()
            ),
        );
    }
}

/// The old textfile is read back for its last success at the end of a run
/// that failed: a FIFO or device there is one warning, and is replaced.
#[test]
fn an_old_metrics_file_that_is_no_regular_file_is_not_read() {
    for (what, make) in faults() {
        let metrics = scratch();
        std::fs::set_permissions(metrics.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let prom = metrics.path().join("retry_nightly.prom");
        if !make(&prom) {
            continue;
        }
        let work = scratch();
        let dir = metrics.path().to_str().unwrap();
        let run = retry(&[
            "--metrics-dir",
            dir,
            "--job",
            "nightly",
            "-n",
            "2",
            "-b",
            "1ms",
        ])
        .args(&["--"])
        .helper(&fails(work.path(), 5, 1));
        let ended = bounded(run);
        assert_eq!(ended.code, Some(1), "{}", ended.stderr);
        assert_eq!(count(work.path()), 2, "{}", ended.stderr);
        let warnings: Vec<&str> = ended
            .stderr
            .lines()
            .filter(|l| l.contains("warning:"))
            .collect();
        let warning = format!(
            "warning: --metrics-dir: '{}' was not read back: it is {what}, not a regular file; \
             the job's counters start again and its last success is not carried over",
            prom.display()
        );
        assert_eq!(warnings.len(), 1, "{}", ended.stderr);
        assert!(warnings[0].ends_with(&warning), "{}", ended.stderr);
        let text = std::fs::read_to_string(&prom).expect("replaced by a regular file");
        assert!(text.contains("retry_last_run_attempts{retry_job=\"nightly\"} 2\n"));
    }
}

/// The user's presets file, read when the run gives up (for its note on
/// presets; tests/integration/presets.rs has the rest of its rules): a
/// device there is set aside at once too.
#[test]
fn a_presets_file_that_is_no_regular_file_is_set_aside_at_once() {
    for (what, make) in faults() {
        let config = scratch();
        let dir = config.path().join("retry");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = dir.join("presets.ini");
        if !make(&file) {
            continue;
        }
        let work = scratch();
        let run = retry(&["-n", "2", "-b", "1ms", "--"])
            .env("XDG_CONFIG_HOME", config.path())
            .helper(&fails(work.path(), 5, 1));
        let ended = bounded(run);
        let said = &ended.stderr;
        assert_eq!(ended.code, Some(1), "{said}");
        assert_eq!(count(work.path()), 2, "{said}");
        let warning = format!(
            "warning: the presets file {} is ignored: it is {what}, not a regular file; \
             the built-in presets still apply",
            file.display()
        );
        assert_eq!(said.matches("warning:").count(), 1, "{said}");
        assert!(said.contains(&warning), "{said}");
    }
}
