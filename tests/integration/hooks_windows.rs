//! `--on-start` and `--on-exit` on Windows (here under wine): each runs
//! once through `cmd /d /s /c`, sees the run's outcome in its `RETRY_*`
//! variables, never changes retry's exit status, and one that hangs is
//! stopped at `--hook-timeout` (its Job Object ended) while the run ends
//! on time. The Unix side, with signals and the monitors' recipes, is
//! `hooks.rs`.

use std::time::{Duration, Instant};

use crate::harness::{fails, helper, retry, scratch};

/// `echo %VARIABLES%> FILE` for cmd: what the hook saw, one line.
fn recording(file: &std::path::Path) -> String {
    format!(
        "echo %RETRY_OUTCOME% %RETRY_REASON% %RETRY_EXIT_CODE% %RETRY_ATTEMPTS%>> \"{}\"",
        file.display()
    )
}

fn lines(file: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim_end().to_owned())
        .collect()
}

#[test]
fn once_hooks_run_once_with_the_outcome_through_cmd() {
    let dir = scratch();
    let (start, end) = (dir.path().join("start"), dir.path().join("end"));
    let start_hook = format!("echo started>> \"{}\"", start.display());
    // Two failures, then a success.
    let out = retry(&["--base", "1ms", "--on-start", &start_hook])
        .args(&["--on-exit", &recording(&end), "--"])
        .helper(&fails(dir.path(), 2, 3))
        .run();
    out.code(0);
    assert_eq!(lines(&start), ["started"], "{out:#?}");
    assert_eq!(lines(&end), ["success success 0 3"], "{out:#?}");

    // Giving up: the hook sees it, and its own failure is one warning
    // that leaves retry's status as the command's.
    let dir = scratch();
    let end = dir.path().join("end");
    let hook = format!("{} & exit 9", recording(&end));
    let out = retry(&["-n", "2", "--base", "1ms", "--on-exit", &hook, "--"])
        .helper(&fails(dir.path(), 5, 4))
        .run();
    out.code(4).stderr_has("--on-exit");
    assert_eq!(lines(&end), ["gave_up attempts 4 2"], "{out:#?}");
}

#[test]
fn a_hanging_on_exit_is_stopped_at_its_timeout() {
    let hanging = format!("\"{}\" sleep 30000", helper().display());
    let started = Instant::now();
    let out = retry(&["--hook-timeout", "300ms", "--on-exit", &hanging, "--"])
        .helper(&["exit", "0"])
        .run();
    out.code(0);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the hook held the run for {:?}: {out:#?}",
        started.elapsed()
    );
}
