//! The textfile's tests: its series, counters, lock and trust rules.

use super::*;

fn ending(outcome: Outcome) -> Ending {
    let start = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_250);
    Ending {
        start,
        end: start + Duration::from_millis(4_500),
        duration: Duration::from_millis(4_500),
        attempts: 3,
        throttled: 0,
        slept: Duration::from_millis(3_750),
        exit_code: if outcome == Outcome::Succeeded { 0 } else { 7 },
        outcome,
    }
}

fn job() -> Job {
    super::super::job::parse("nightly").unwrap()
}

#[test]
fn a_run_is_written_as_gauges_with_help_and_type() {
    let text = render(
        &job(),
        &ending(Outcome::Exhausted),
        Some("1699990000.000"),
        &Counters::default(),
    );
    let expected = "\
# HELP retry_last_run_start_timestamp_seconds When the job's last run started, in seconds since the Unix epoch.
# TYPE retry_last_run_start_timestamp_seconds gauge
retry_last_run_start_timestamp_seconds{retry_job=\"nightly\"} 1700000000.250
# HELP retry_last_success_timestamp_seconds When the job's last successful run ended, in seconds since the Unix epoch.
# TYPE retry_last_success_timestamp_seconds gauge
retry_last_success_timestamp_seconds{retry_job=\"nightly\"} 1699990000.000
# HELP retry_last_run_duration_seconds How long the job's last run took, its sleeps included.
# TYPE retry_last_run_duration_seconds gauge
retry_last_run_duration_seconds{retry_job=\"nightly\"} 4.500
# HELP retry_last_run_attempts How many attempts the job's last run started.
# TYPE retry_last_run_attempts gauge
retry_last_run_attempts{retry_job=\"nightly\"} 3
# HELP retry_last_run_sleep_seconds How long the job's last run slept between attempts.
# TYPE retry_last_run_sleep_seconds gauge
retry_last_run_sleep_seconds{retry_job=\"nightly\"} 3.750
# HELP retry_last_run_exit_code retry's exit status for the job's last run (128+N for signal N).
# TYPE retry_last_run_exit_code gauge
retry_last_run_exit_code{retry_job=\"nightly\"} 7
# HELP retry_last_run_outcome How the job's last run ended: 1 for its outcome, 0 for the others.
# TYPE retry_last_run_outcome gauge
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"succeeded\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"exhausted\"} 1
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"fatal\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"timeout\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"deadline\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"budget\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"interrupted\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"skipped\"} 0
# HELP retry_runs_total Runs of the job that ended, by how they ended.
# TYPE retry_runs_total counter
retry_runs_total{retry_job=\"nightly\",outcome=\"succeeded\"} 0
retry_runs_total{retry_job=\"nightly\",outcome=\"exhausted\"} 0
retry_runs_total{retry_job=\"nightly\",outcome=\"fatal\"} 0
retry_runs_total{retry_job=\"nightly\",outcome=\"timeout\"} 0
retry_runs_total{retry_job=\"nightly\",outcome=\"deadline\"} 0
retry_runs_total{retry_job=\"nightly\",outcome=\"budget\"} 0
retry_runs_total{retry_job=\"nightly\",outcome=\"interrupted\"} 0
retry_runs_total{retry_job=\"nightly\",outcome=\"skipped\"} 0
# HELP retry_attempts_total Attempts the job's runs started.
# TYPE retry_attempts_total counter
retry_attempts_total{retry_job=\"nightly\"} 0
# HELP retry_retries_total Attempts the job's runs started after their first, by the class of the failure before.
# TYPE retry_retries_total counter
retry_retries_total{retry_job=\"nightly\",class=\"transient\"} 0
retry_retries_total{retry_job=\"nightly\",class=\"throttled\"} 0
# HELP retry_sleep_seconds_total Time the job's runs slept between attempts.
# TYPE retry_sleep_seconds_total counter
retry_sleep_seconds_total{retry_job=\"nightly\"} 0.000
";
    assert_eq!(text, expected);
    // Never succeeded: the series has its HELP and TYPE, and no sample.
    let never = render(&job(), &ending(Outcome::Fatal), None, &Counters::default());
    assert!(!never.contains("retry_last_success_timestamp_seconds{"));
    assert!(never.contains("# TYPE retry_last_success_timestamp_seconds gauge\n"));
    let helps = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with('#'))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(helps(&never), helps(&text));
}

#[test]
fn the_last_success_is_read_back_and_garbage_is_not() {
    let text = render(
        &job(),
        &ending(Outcome::Exhausted),
        Some("1699990000.125"),
        &Counters::default(),
    );
    assert_eq!(
        last_success(&text, &job()).as_deref(),
        Some("1699990000.125")
    );
    for garbled in [
        "",
        "\0\u{fffd}\n",
        "retry_last_success_timestamp_seconds{retry_job=\"nightly\"} NaN\n",
        "retry_last_success_timestamp_seconds{retry_job=\"nightly\"} -5\n",
        "retry_last_success_timestamp_seconds{retry_job=\"nightly\"} 1e9\n",
        "retry_last_success_timestamp_seconds{retry_job=\"nightly\"}\n",
        "retry_last_success_timestamp_seconds_other{retry_job=\"nightly\"} 5\n",
        "# retry_last_success_timestamp_seconds 5\n",
        "retry_last_success_timestamp_seconds{retry_job=\"nightly\"} 1.2.3\n",
    ] {
        assert_eq!(last_success(garbled, &job()), None, "{garbled:?}");
    }
    // A line cut short is not read, one whole is.
    let end = text.find("# HELP retry_last_run_duration").unwrap();
    assert_eq!(last_success(&text[..end - 2], &job()), None);
    assert_eq!(
        last_success(&text[..end], &job()).as_deref(),
        Some("1699990000.125")
    );
}

/// A file whose samples name another job, even one of them, or none,
/// is not this job's history (a forged year 2100 was carried on).
#[test]
fn only_a_file_of_this_jobs_samples_is_read_back() {
    let other = super::super::job::parse("nightly2").unwrap();
    let theirs = render(
        &other,
        &ending(Outcome::Exhausted),
        Some("4102444800.000"),
        &Counters::default(),
    );
    assert_eq!(
        last_success(&theirs, &other).as_deref(),
        Some("4102444800.000")
    );
    assert_eq!(last_success(&theirs, &job()), None);
    let ours = render(
        &job(),
        &ending(Outcome::Exhausted),
        Some("1699990000.125"),
        &Counters::default(),
    );
    let success = "retry_last_success_timestamp_seconds";
    for forged in [
        format!("{success} 4102444800\n"),
        format!("{success}{{retry_job=\"nightly\"}} 4102444800\n{success}{{retry_job=\"x\"}} 1\n"),
        format!(
            "{success}{{retry_job=\"nightly\"}} 4102444800\nretry_last_run_attempts{{retry_job=\"x\"}} 1\n"
        ),
        format!("{ours}retry_last_run_attempts 1\n"),
    ] {
        let found = last_success(&forged, &job());
        assert!(found.is_none(), "{forged:?} gave {found:?}");
    }
    // A label after this job's is allowed, as the outcome's is.
    assert!(ours.contains("{retry_job=\"nightly\",outcome="));
    assert_eq!(
        last_success(&ours, &job()).as_deref(),
        Some("1699990000.125")
    );
}

#[test]
fn the_file_is_replaced_and_keeps_the_last_success() {
    let dir = tempfile::tempdir().unwrap();
    let file = Textfile::new(dir.path().to_owned(), &job());
    let path = dir.path().join("retry_nightly.prom");
    let read = || last_success(&std::fs::read_to_string(&path).unwrap(), &job());
    assert_eq!(file.write(&ending(Outcome::Succeeded)), None);
    assert_eq!(read().as_deref(), Some("1700000004.750"));
    assert_eq!(file.write(&ending(Outcome::Exhausted)), None);
    assert_eq!(read().as_deref(), Some("1700000004.750"));
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains("outcome=\"exhausted\"} 1\n"));
    // A garbled file loses it, and is replaced whole.
    std::fs::write(&path, b"\xff\xfegarbage {{{").unwrap();
    assert_eq!(file.write(&ending(Outcome::Fatal)), None);
    assert_eq!(read(), None);
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains("outcome=\"skipped\"} 0\n"));
    // Only the job's file and its lock are left: no temporary one.
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, [".retry_nightly.prom.lock", "retry_nightly.prom"]);
}

/// An old file that is not a regular one is not read, with one
/// warning, and is replaced all the same.
#[test]
#[cfg(unix)] // FIFOs
fn an_old_file_that_is_no_regular_file_is_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let file = Textfile::new(dir.path().to_owned(), &job());
    let path = dir.path().join("retry_nightly.prom");
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let warning = file.write(&ending(Outcome::Exhausted)).unwrap();
    assert_eq!(
        warning,
        format!(
            "--metrics-dir: '{}' was not read back: it is a FIFO, not a regular file; \
             the job's counters start again and its last success is not carried over",
            path.display()
        )
    );
    assert!(path.metadata().unwrap().is_file(), "not replaced");
}

/// An old file others may write is not read (one warning): it is as
/// good as theirs.
#[test]
#[cfg(unix)] // modes
fn an_old_file_others_may_write_is_one_warning() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = Textfile::new(dir.path().to_owned(), &job());
    let path = dir.path().join("retry_nightly.prom");
    assert_eq!(file.write(&ending(Outcome::Succeeded)), None);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let warning = file.write(&ending(Outcome::Exhausted)).unwrap();
    assert_eq!(
        warning,
        format!(
            "--metrics-dir: '{}' was not read back: it is writable by other users (mode 666); \
             make it 0644; the job's counters start again and its last success is not carried over",
            path.display()
        )
    );
    let after = std::fs::read_to_string(&path).unwrap();
    assert_eq!(last_success(&after, &job()), None);
    // Replaced by this run's own file, which is read back.
    let mode = path.metadata().unwrap().permissions().mode();
    assert_eq!(mode & 0o022, 0, "{mode:o}");
    assert_eq!(file.write(&ending(Outcome::Exhausted)), None);
}

fn counters_of(path: &Path) -> Counters {
    history(&std::fs::read_to_string(path).unwrap(), &job())
        .unwrap()
        .counters
}

/// Each run adds to what the file held: counters, not the last run.
#[test]
fn counters_add_up_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = Textfile::new(dir.path().to_owned(), &job());
    let path = dir.path().join("retry_nightly.prom");
    let mut skipped = ending(Outcome::Skipped);
    (skipped.attempts, skipped.slept) = (0, Duration::ZERO);
    for (run, throttled) in [
        (Outcome::Succeeded, 0),
        (Outcome::Exhausted, 1),
        (Outcome::Exhausted, 2),
    ] {
        let ending = Ending {
            throttled,
            ..ending(run)
        };
        assert_eq!(file.write(&ending), None);
    }
    assert_eq!(file.write(&skipped), None);
    let counters = counters_of(&path);
    assert_eq!(counters.runs, [1, 2, 0, 0, 0, 0, 0, 1]);
    // 6 retries: 3 after transient failures, 3 after throttled ones.
    assert_eq!((counters.attempts, counters.retries), (9, [3, 3]));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("retry_retries_total{retry_job=\"nightly\",class=\"throttled\"} 3\n"));
    assert_eq!(counters.sleep_ms, 3 * 3_750);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("retry_sleep_seconds_total{retry_job=\"nightly\"} 11.250\n"));
    assert!(text.contains("retry_runs_total{retry_job=\"nightly\",outcome=\"exhausted\"} 2\n"));
    // The last run's gauges are still the last run's.
    assert!(text.contains("retry_last_run_attempts{retry_job=\"nightly\"} 0\n"));
    // Removed: they start again.
    std::fs::remove_file(&path).unwrap();
    assert_eq!(file.write(&ending(Outcome::Fatal)), None);
    assert_eq!(counters_of(&path).runs, [0, 0, 1, 0, 0, 0, 0, 0]);
}

/// A counter that is not a number as retry writes it: none is read,
/// they start again, one warning; the next run reads its own file.
#[test]
fn counters_that_are_not_numbers_start_again_with_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let file = Textfile::new(dir.path().to_owned(), &job());
    let path = dir.path().join("retry_nightly.prom");
    assert_eq!(file.write(&ending(Outcome::Succeeded)), None);
    let good = std::fs::read_to_string(&path).unwrap();
    let attempts = "retry_attempts_total{retry_job=\"nightly\"} 3\n";
    let sleep = "retry_sleep_seconds_total{retry_job=\"nightly\"} 3.750\n";
    assert!(good.contains(attempts) && good.contains(sleep), "{good}");
    for bad in [
        good.replace(
            attempts,
            "retry_attempts_total{retry_job=\"nightly\"} 1e9\n",
        ),
        good.replace(attempts, "retry_attempts_total{retry_job=\"nightly\"} -3\n"),
        good.replace(
            attempts,
            "retry_attempts_total{retry_job=\"nightly\"} NaN\n",
        ),
        good.replace(
            attempts,
            "retry_attempts_total{retry_job=\"nightly\"} 99999999999999999999\n",
        ),
        good.replace(
            sleep,
            "retry_sleep_seconds_total{retry_job=\"nightly\"} 3.75\n",
        ),
        good.replace(
            sleep,
            "retry_sleep_seconds_total{retry_job=\"nightly\"} +Inf\n",
        ),
    ] {
        std::fs::write(&path, &bad).unwrap();
        let warning = file.write(&ending(Outcome::Exhausted)).unwrap();
        assert_eq!(
            warning,
            format!(
                "--metrics-dir: '{}' was not read back: its counters are not numbers; \
                 the job's counters start again and its last success is not carried over",
                path.display()
            )
        );
        let counters = counters_of(&path);
        assert_eq!((counters.runs[0], counters.attempts), (0, 3), "{bad}");
        assert_eq!(file.write(&ending(Outcome::Exhausted)), None);
        assert_eq!(counters_of(&path).attempts, 6);
    }
}

/// A lock another run holds past the bound: nothing written, one
/// warning; the file keeps the run before.
#[test]
fn a_lock_held_too_long_writes_nothing_with_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = Textfile::new(dir.path().to_owned(), &job());
    file.lock_wait = Duration::from_millis(50);
    let path = dir.path().join("retry_nightly.prom");
    assert_eq!(file.write(&ending(Outcome::Succeeded)), None);
    let before = std::fs::read_to_string(&path).unwrap();
    let lock_path = dir.path().join(".retry_nightly.prom.lock");
    let held = std::fs::OpenOptions::new()
        .read(true)
        .open(&lock_path)
        .unwrap();
    held.lock().unwrap();
    let warning = file.write(&ending(Outcome::Exhausted)).unwrap();
    assert_eq!(
        warning,
        format!(
            "cannot write --metrics-dir '{}': another retry has held its lock for 50ms; \
             its series keep the run before",
            path.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    // Closed, as a holder that ends gives it up (wine refuses the
    // explicit unlock here with a lock violation).
    drop(held);
    assert_eq!(file.write(&ending(Outcome::Exhausted)), None);
    assert_eq!(counters_of(&path).runs[..2], [1, 1]);
}

/// A run stopped while holding the lock (^Z), its lock file removed
/// by hand as stale, and others writing meanwhile: once it goes on, it
/// used to rename the counters it had read over theirs, which went
/// back. It reads again under the new lock instead: none lost.
#[test]
#[cfg(unix)] // Windows may keep a removed file's name until it is closed
fn a_lock_file_removed_while_held_loses_no_increment() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry_nightly.prom");
    let lock_path = dir.path().join(".retry_nightly.prom.lock");
    let file = Textfile::new(dir.path().to_owned(), &job());
    assert_eq!(file.write(&ending(Outcome::Succeeded)), None);
    let others = Textfile::new(dir.path().to_owned(), &job());
    let paused = std::sync::atomic::AtomicBool::new(false);
    let warning = file.write_pausing(&ending(Outcome::Exhausted), || {
        // Once: the write read again, and goes on.
        if paused.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        std::fs::remove_file(&lock_path).unwrap();
        for _ in 0..2 {
            assert_eq!(others.write(&ending(Outcome::Fatal)), None);
        }
    });
    assert_eq!(warning, None);
    let counters = counters_of(&path);
    assert_eq!(counters.runs[..3], [1, 1, 2]);
    assert_eq!(counters.attempts, 12);
    // Removed again and again until the wait is over: nothing written.
    let mut file = file;
    file.lock_wait = Duration::from_millis(50);
    let before = std::fs::read_to_string(&path).unwrap();
    let warning = file.write_pausing(&ending(Outcome::Exhausted), || {
        std::fs::remove_file(&lock_path).unwrap();
        std::thread::sleep(Duration::from_millis(10));
    });
    assert_eq!(
        warning.as_deref(),
        Some(
            format!(
                "cannot write --metrics-dir '{}': its lock '.retry_nightly.prom.lock' was \
                 removed or replaced while this run held it; its series keep the run before",
                path.display()
            )
            .as_str()
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

/// Runs of one job at once, each its own open of the lock (as separate
/// processes are): no increment lost.
#[test]
fn concurrent_runs_lose_no_increment() {
    let dir = tempfile::tempdir().unwrap();
    std::thread::scope(|scope| {
        for _ in 0..8 {
            let dir = dir.path().to_owned();
            scope.spawn(move || {
                // What is tested is no lost increment, not the bound: a
                // slow machine (wine) may keep eight writers waiting
                // longer than LOCK_WAIT.
                let mut file = Textfile::new(dir, &job());
                file.lock_wait = Duration::from_secs(60);
                for _ in 0..10 {
                    assert_eq!(file.write(&ending(Outcome::Exhausted)), None);
                }
            });
        }
    });
    let counters = counters_of(&dir.path().join("retry_nightly.prom"));
    assert_eq!((counters.runs[1], counters.attempts), (80, 240));
}

#[test]
fn a_write_that_fails_is_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let file = Textfile::new(gone.clone(), &job());
    let warning = file.write(&ending(Outcome::Succeeded)).unwrap();
    assert!(
        warning.starts_with(&format!(
            "cannot write --metrics-dir '{}': its lock '.retry_nightly.prom.lock': cannot open it: ",
            gone.join("retry_nightly.prom").display()
        )),
        "{warning}"
    );
}

/// A file written before the retries had classes: its one series was
/// every retry, all of them transient then; the next run adds to it.
#[test]
fn an_older_files_retries_were_transient_ones() {
    let dir = tempfile::tempdir().unwrap();
    let file = Textfile::new(dir.path().to_owned(), &job());
    let path = dir.path().join("retry_nightly.prom");
    assert_eq!(file.write(&ending(Outcome::Succeeded)), None);
    let new = std::fs::read_to_string(&path).unwrap();
    let classes = "retry_retries_total{retry_job=\"nightly\",class=\"transient\"} 2\n\
                   retry_retries_total{retry_job=\"nightly\",class=\"throttled\"} 0\n";
    assert!(new.contains(classes), "{new}");
    let old = new.replace(classes, "retry_retries_total{retry_job=\"nightly\"} 40\n");
    assert_eq!(history(&old, &job()).unwrap().counters.retries, [40, 0]);
    std::fs::write(&path, old).unwrap();
    let throttled = Ending {
        throttled: 2,
        ..ending(Outcome::Succeeded)
    };
    assert_eq!(file.write(&throttled), None);
    assert_eq!(counters_of(&path).retries, [40, 2]);
    // A label this file does not know is no series of its.
    let stranger = new.replace(
        classes,
        "retry_retries_total{retry_job=\"nightly\",x=\"y\"} 40\n",
    );
    assert_eq!(history(&stranger, &job()).unwrap().counters.retries, [0, 0]);
}
