//! `--metrics-dir` and `--statsd` end to end: the textfile read by the real
//! node_exporter (Debian's prometheus-node-exporter, on a free port of
//! 127.0.0.1, stopped on drop) and checked by the real `promtool check
//! metrics` (Debian's prometheus); StatsD datagrams caught by a UDP socket
//! of the test's; concurrent runs; bad input.
//!
//! Without node_exporter or promtool their tests say so and pass, unless
//! `RETRY_TESTS_NEED_PROMETHEUS` is set (`.ci/run` installs both and sets it).
//! The rest run the project's helper, so they run under wine too.

use std::net::UdpSocket;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::harness::{Finished, fails, retry, scratch};

/// retry with `args`, then the helper failing `failures` times before it
/// succeeds (counting in `dir`).
fn run_failing(dir: &Path, failures: u32, args: &[&str]) -> Finished {
    let mut all = args.to_vec();
    all.extend(["-b", "1ms", "--"]);
    retry(&all).helper(&fails(dir, failures, 3)).run()
}

fn prom(dir: &Path, job: &str) -> String {
    std::fs::read_to_string(dir.join(format!("retry_{job}.prom"))).expect("the textfile")
}

/// The sample of `series` for the job in `text`.
fn sample<'a>(text: &'a str, series: &str) -> Option<&'a str> {
    text.lines()
        .find(|line| line.starts_with(series) && line[series.len()..].starts_with('{'))
        .and_then(|line| line.rsplit(' ').next())
}

/// The files in `dir` a collector reads: not the dot files (the jobs' locks).
fn visible(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect();
    names.sort();
    names
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
fn the_textfile_keeps_the_last_success_through_a_failed_run() {
    let dir = scratch();
    let metrics = dir.path().join("metrics");
    std::fs::create_dir(&metrics).unwrap();
    let metrics_arg = metrics.to_str().unwrap();
    let before = now();
    run_failing(
        dir.path(),
        2,
        &["--metrics-dir", metrics_arg, "--job", "nightly"],
    )
    .code(0);
    let after = now();
    let text = prom(&metrics, "nightly");
    assert_eq!(
        sample(&text, "retry_last_run_attempts"),
        Some("3"),
        "{text}"
    );
    assert_eq!(sample(&text, "retry_last_run_exit_code"), Some("0"));
    let start: f64 = sample(&text, "retry_last_run_start_timestamp_seconds")
        .unwrap()
        .parse()
        .unwrap();
    let success: f64 = sample(&text, "retry_last_success_timestamp_seconds")
        .unwrap()
        .parse()
        .unwrap();
    assert!(before - 0.001 <= start && start <= success && success <= after + 0.001);
    assert!(
        text.contains("retry_last_run_outcome{retry_job=\"nightly\",outcome=\"succeeded\"} 1\n")
    );
    // Two attempts failed: two sleeps of up to 1 and 2 ms.
    let slept: f64 = sample(&text, "retry_last_run_sleep_seconds")
        .unwrap()
        .parse()
        .unwrap();
    assert!(slept <= 0.003, "{text}");

    // A failed run: its own figures, the success before it kept.
    std::fs::remove_file(dir.path().join("count")).unwrap();
    run_failing(
        dir.path(),
        5,
        &["--metrics-dir", metrics_arg, "--job", "nightly", "-n", "2"],
    )
    .code(3);
    let failed = prom(&metrics, "nightly");
    assert_eq!(sample(&failed, "retry_last_run_attempts"), Some("2"));
    assert_eq!(sample(&failed, "retry_last_run_exit_code"), Some("3"));
    assert_eq!(
        sample(&failed, "retry_last_success_timestamp_seconds"),
        sample(&text, "retry_last_success_timestamp_seconds")
    );
    assert!(failed.contains("outcome=\"exhausted\"} 1\n"), "{failed}");
    assert!(failed.contains("outcome=\"succeeded\"} 0\n"), "{failed}");
    assert_eq!(
        visible(&metrics),
        ["retry_nightly.prom"],
        "only the job's file"
    );
}

#[test]
fn without_job_the_name_is_the_programs_and_stable() {
    let dir = scratch();
    let arg = dir.path().to_str().unwrap();
    for _ in 0..2 {
        retry(&["--metrics-dir", arg, "--"])
            .helper(&["exit", "0"])
            .run()
            .code(0);
    }
    let names = visible(dir.path());
    assert_eq!(names.len(), 1, "{names:?}");
    let helper = crate::harness::helper();
    let stem = helper.file_name().unwrap().to_string_lossy().into_owned();
    let name = &names[0];
    assert!(
        name.starts_with(&format!("retry_{stem}-")) && name.ends_with(".prom"),
        "{name}"
    );
    // Another argument, another job.
    retry(&["--metrics-dir", arg, "--"])
        .helper(&["exit", "0", "again"])
        .run();
    assert_eq!(visible(dir.path()).len(), 2);
}

/// Concurrent runs of one job leave one whole file; of two jobs, two.
#[test]
fn concurrent_runs_leave_whole_files() {
    let dir = scratch();
    let arg = dir.path().to_str().unwrap();
    let children: Vec<_> = (0..12)
        .map(|i| {
            let job = if i % 3 == 0 { "other" } else { "same" };
            retry(&["--metrics-dir", arg, "--job", job, "--"])
                .helper(&["exit", "0"])
                .spawn()
        })
        .collect();
    for mut child in children {
        let status = crate::harness::wait_bounded(&mut child, Duration::from_secs(30));
        assert!(status.success());
    }
    assert_eq!(visible(dir.path()), ["retry_other.prom", "retry_same.prom"]);
    for (job, runs) in [("other", "4"), ("same", "8")] {
        let text = prom(dir.path(), job);
        assert_eq!(text.lines().count(), 48, "{text}");
        assert!(text.ends_with(&format!(
            "retry_sleep_seconds_total{{retry_job=\"{job}\"}} 0.000\n"
        )));
        assert_eq!(text.matches(&format!("retry_job=\"{job}\"")).count(), 26);
        let succeeded =
            format!("retry_runs_total{{retry_job=\"{job}\",outcome=\"succeeded\"}} {runs}\n");
        assert!(text.contains(&succeeded), "{text}");
    }
}

/// 50 runs of one job at once: each adds to the counters under the job's
/// lock, so none is lost (each replaced the file whole before: the last
/// rename won, and the count was one run's). A run that waited for the
/// lock longer than its bound (a loaded machine) wrote nothing and said
/// so: the counters hold exactly the others.
#[test]
fn fifty_concurrent_runs_lose_no_increment() {
    // Under wine a loaded machine now and then fails a process start
    // (harness::wine_spoiled); fifty at once make that likelier.
    let (text, written) = crate::harness::again_if_wine_spoiled("fifty runs", || {
        let dir = scratch();
        let arg = dir.path().to_str().unwrap();
        let children: Vec<_> = (0..50)
            .map(|_| {
                retry(&["--metrics-dir", arg, "--job", "same", "--"])
                    .helper(&["exit", "0"])
                    .spawn()
            })
            .collect();
        let mut skipped = 0;
        let mut spoiled = false;
        for mut child in children {
            let status = crate::harness::wait_bounded(&mut child, Duration::from_secs(60));
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            if crate::harness::wine_spoiled(stderr.as_bytes()) {
                spoiled = true;
                continue;
            }
            assert!(status.success(), "{status:?}\n{stderr}");
            skipped += usize::from(stderr.contains("cannot write --metrics-dir"));
        }
        if spoiled {
            return Err(crate::harness::Spoiled);
        }
        Ok((prom(dir.path(), "same"), 50 - skipped))
    });
    assert!(written > 0, "every run gave up on the lock");
    assert!(
        text.contains(&format!(
            "retry_runs_total{{retry_job=\"same\",outcome=\"succeeded\"}} {written}\n"
        )),
        "{} skipped\n{text}",
        50 - written
    );
    assert_eq!(
        sample(&text, "retry_attempts_total"),
        Some(&*written.to_string())
    );
    assert_eq!(sample(&text, "retry_retries_total"), Some("0"));
}

/// The guide's alerts are docs/alerts.yml as it is, the file the rules
/// test runs.
#[test]
fn the_guides_alerts_are_the_tested_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |name: &str| {
        std::fs::read_to_string(root.join(name))
            .unwrap()
            .replace("\r\n", "\n")
    };
    let (guide, rules) = (read("docs/guide.md"), read("docs/alerts.yml"));
    let block = format!("```yaml\n{rules}```\n");
    assert!(
        guide.contains(&block),
        "docs/guide.md does not show docs/alerts.yml as it is"
    );
    let test = read("tests/prometheus/alerts.test.yml");
    assert!(test.contains("rule_files:\n  - ../../docs/alerts.yml\n"));
    // Every alert of the file is tested.
    for line in rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert: "))
    {
        assert!(
            test.contains(&format!("alertname: {line}\n")),
            "{line} is not tested"
        );
    }
}

/// The job's lock held by another (a run stopped while holding it): after
/// 1 s the run writes nothing, says so once, and exits as its command did.
#[test]
fn a_lock_held_too_long_writes_nothing_and_keeps_the_status() {
    let dir = scratch();
    let arg = dir.path().to_str().unwrap();
    let run = || {
        retry(&["--metrics-dir", arg, "--job", "held", "-n", "1", "--"])
            .helper(&["exit", "4"])
            .run()
    };
    run().code(4);
    let before = prom(dir.path(), "held");
    let lock = std::fs::File::open(dir.path().join(".retry_held.prom.lock")).unwrap();
    lock.lock().unwrap();
    let out = run();
    out.code(4).stderr_has(&format!(
        "warning: cannot write --metrics-dir '{}': another retry has held its lock for 1s; \
         its series keep the run before",
        dir.path().join("retry_held.prom").display()
    ));
    let warnings = out
        .stderr
        .lines()
        .filter(|l| l.contains("warning:"))
        .count();
    assert_eq!(warnings, 1, "{out:?}");
    assert_eq!(prom(dir.path(), "held"), before);
    // Closed, as a holder that ends gives it up (wine refuses the
    // explicit unlock with a lock violation).
    drop(lock);
    run().code(4);
    assert_eq!(
        sample(&prom(dir.path(), "held"), "retry_attempts_total"),
        Some("2")
    );
}

/// A run of the job as root by hand left the lock file root's (`0600`),
/// which the job's own user may not open: each of their runs warned and
/// wrote nothing, for ever (root's `.prom` they could replace). Their run
/// replaces the lock file too now, and root's runs still get in after.
#[test]
#[cfg(unix)] // owners, and a run as another user
fn a_lock_file_root_left_does_not_stop_the_jobs_user() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: only root can run retry as another user (65534)");
        return;
    }
    let dir = scratch();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let metrics = dir.path().join("metrics");
    std::fs::create_dir(&metrics).unwrap();
    std::os::unix::fs::chown(&metrics, Some(65534), Some(65534)).unwrap();
    let arg = metrics.to_str().unwrap();
    let args = ["--metrics-dir", arg, "--job", "backup", "--", "true"];
    retry(&args).run().code(0);
    let lock = metrics.join(".retry_backup.prom.lock");
    let mode = std::fs::metadata(&lock).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retry"))
        .args(args)
        .current_dir(&metrics)
        .uid(65534)
        .gid(65534)
        .output();
    // A checkout in a directory only root may enter (`mktemp -d`): user
    // 65534 cannot reach the binary or the scratch directory at all.
    if let Err(error) = &out
        && error.kind() == std::io::ErrorKind::PermissionDenied
    {
        eprintln!("skipped: user 65534 cannot reach this checkout ({error})");
        return;
    }
    let out = out.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    // Only the warning that the directory is another user's (for root).
    assert!(!stderr.contains("cannot write"), "{stderr}");
    let text = prom(&metrics, "backup");
    assert_eq!(sample(&text, "retry_attempts_total"), Some("2"), "{text}");
    let meta = std::fs::metadata(&lock).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), 65534);
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    // Root's run still gets in (its lock file another's, which root may
    // open); the .prom of another user's it does not read back, as before.
    let out = retry(&args).run();
    out.code(0);
    assert!(!out.stderr.contains("cannot write"), "{out:?}");
    assert!(out.stderr.contains("was not read back"), "{out:?}");
}

/// `--breaker-status` with a metrics directory that cannot take the file:
/// bad usage, one line, as for a run; a good one gets the circuit's file.
#[test]
fn breaker_status_checks_the_metrics_dir_and_writes_the_circuit() {
    let dir = scratch();
    let missing = dir.path().join("missing");
    let status = |metrics: &Path| {
        retry(&[
            "--breaker-status",
            "db",
            "--metrics-dir",
            metrics.to_str().unwrap(),
        ])
        .env("XDG_RUNTIME_DIR", dir.path())
        .run()
    };
    let out = status(&missing);
    out.code(2).stderr_lines(1).stderr_has(&format!(
        "retry: cannot write to --metrics-dir '{}': ",
        missing.display()
    ));
    assert!(out.stdout.is_empty(), "{out:?}");
    let metrics = dir.path().join("metrics");
    std::fs::create_dir(&metrics).unwrap();
    status(&metrics).code(0);
    let text = std::fs::read_to_string(metrics.join("retry-breaker-db.prom")).unwrap();
    assert!(
        text.contains("retry_breaker_state{breaker=\"db\"} 0\n"),
        "{text}"
    );
}

/// A directory gone by the end of the run: one warning, the command's status.
#[cfg(unix)]
#[test]
fn a_write_that_fails_at_the_end_is_one_warning() {
    let dir = scratch();
    let metrics = dir.path().join("gone");
    std::fs::create_dir(&metrics).unwrap();
    // Whatever the umask: a directory others may write adds a warning.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&metrics, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = format!("rmdir '{}'; exit 4", metrics.display());
    let out = retry(&["--metrics-dir", metrics.to_str().unwrap(), "-n", "1", "--"])
        .args(&["sh", "-c", &script])
        .run();
    out.code(4).stderr_lines(2).stderr_has(&format!(
        "warning: cannot write --metrics-dir '{}/retry_sh-",
        metrics.display()
    ));
}

/// A forged last success: the year 2100, which, carried forward by every
/// failed run, kept a staleness alert from ever firing.
#[cfg(unix)]
const FORGED: &str = "retry_last_success_timestamp_seconds{retry_job=\"nightly\"} 4102444800.000\n\
                      retry_attempts_total{retry_job=\"nightly\"} 1000\n";

/// A metrics directory as node_exporter's often is: `mode`, the job's old
/// file in it made by `forge`.
#[cfg(unix)]
fn forged(mode: u32, forge: impl FnOnce(&Path)) -> (tempfile::TempDir, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch();
    let metrics = dir.path().join("metrics");
    std::fs::create_dir(&metrics).unwrap();
    std::fs::set_permissions(&metrics, std::fs::Permissions::from_mode(mode)).unwrap();
    let file = metrics.join("retry_nightly.prom");
    forge(&file);
    (dir, metrics)
}

/// A run of job `nightly` that fails: its warnings, and its file's last
/// success and attempts counted.
#[cfg(unix)]
fn failed_run(dir: &Path, metrics: &Path) -> (Vec<String>, Option<String>, String) {
    let out = run_failing(
        dir,
        5,
        &[
            "--metrics-dir",
            metrics.to_str().unwrap(),
            "--job",
            "nightly",
            "-n",
            "1",
        ],
    );
    out.code(3);
    let warnings = out
        .stderr
        .lines()
        .filter(|line| line.contains("warning:"))
        .map(str::to_owned)
        .collect();
    let text = prom(metrics, "nightly");
    assert!(text.contains("retry_last_run_attempts{retry_job=\"nightly\"} 1\n"));
    let success = sample(&text, "retry_last_success_timestamp_seconds").map(str::to_owned);
    let attempts = sample(&text, "retry_attempts_total").unwrap().to_owned();
    (warnings, success, attempts)
}

/// Another user's file, or one others may write, in the job's name: not
/// read back (one warning), so its last success is not the job's. As root,
/// `nobody`'s forged file set it to the year 2100.
#[cfg(unix)]
#[test]
fn another_users_textfile_does_not_set_the_last_success() {
    use std::os::unix::fs::PermissionsExt;
    // The file of one's own, kept: the forgery is all that differs below.
    let (dir, metrics) = forged(0o755, |file| std::fs::write(file, FORGED).unwrap());
    let (warnings, success, attempts) = failed_run(dir.path(), &metrics);
    assert_eq!(success.as_deref(), Some("4102444800.000"));
    assert_eq!(attempts, "1001");
    assert!(warnings.is_empty(), "{warnings:?}");

    let (dir, metrics) = forged(0o755, |file| {
        std::fs::write(file, FORGED).unwrap();
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o666)).unwrap();
    });
    let (warnings, success, attempts) = failed_run(dir.path(), &metrics);
    assert_eq!((success, attempts.as_str()), (None, "1"));
    let want = format!(
        "warning: --metrics-dir: '{}' was not read back: it is writable by other users (mode 666); \
         make it 0644; the job's counters start again and its last success is not carried over",
        metrics.join("retry_nightly.prom").display()
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].ends_with(&want), "{warnings:?}");

    if nix::unistd::geteuid().as_raw() != 0 {
        eprintln!("skipped in part: a file of another user's (only root can chown it to one)");
        return;
    }
    // Written by `nobody` in a directory open to them (sticky, as /tmp).
    let (dir, metrics) = forged(0o1777, |file| {
        std::fs::write(file, FORGED).unwrap();
        std::os::unix::fs::chown(file, Some(65534), Some(65534)).unwrap();
    });
    let (warnings, success, attempts) = failed_run(dir.path(), &metrics);
    assert_eq!(success, None, "the forged success was carried");
    assert_eq!(attempts, "1", "the forged counters were carried");
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[1].ends_with("it is owned by user id 65534, not by you (0) or root; the job's counters start again and its last success is not carried over"),
        "{warnings:?}"
    );
    // Replaced by the job's own file, which the next run reads back.
    let meta = std::fs::metadata(metrics.join("retry_nightly.prom")).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), 0);
}

/// A file that names another job is not this job's history, even one of
/// this user's own (copied, or renamed from another job's).
#[cfg(unix)]
#[test]
fn a_textfile_of_another_jobs_is_not_read_back() {
    let (dir, metrics) = forged(0o755, |file| {
        let theirs = FORGED.replace("\"nightly\"", "\"weekly\"");
        std::fs::write(file, theirs).unwrap();
    });
    let (warnings, success, attempts) = failed_run(dir.path(), &metrics);
    assert_eq!((success, attempts.as_str()), (None, "1"));
    assert!(warnings.is_empty(), "{warnings:?}");
}

/// A directory that other users may write is said once, before the run,
/// with the words the budget and the presets use; the run goes on.
#[cfg(unix)]
#[test]
fn a_metrics_dir_others_may_write_is_one_warning() {
    for (mode, shown) in [(0o777, "777"), (0o1777, "1777"), (0o775, "775")] {
        let (dir, metrics) = forged(mode, |_| {});
        let out = run_failing(
            dir.path(),
            1,
            &[
                "--metrics-dir",
                metrics.to_str().unwrap(),
                "--job",
                "nightly",
            ],
        );
        out.code(0);
        let want = format!(
            "warning: --metrics-dir '{}' is writable by other users (mode {shown}); make it 0755; \
             another user could replace or remove the job's file there \
             (only one of yours or root's is read back)",
            metrics.display()
        );
        let warnings: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains("warning:"))
            .collect();
        assert_eq!(warnings.len(), 1, "{out:#?}");
        assert!(warnings[0].ends_with(&want), "{out:#?}");
        // Before the first attempt's line.
        assert!(
            out.stderr.lines().next().unwrap().contains("warning:"),
            "{out:#?}"
        );
        let text = prom(&metrics, "nightly");
        assert!(sample(&text, "retry_last_success_timestamp_seconds").is_some());
    }
}

/// Where a StatsD server would listen: the test's own socket.
fn listener() -> (UdpSocket, String) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let address = socket.local_addr().unwrap().to_string();
    (socket, address)
}

/// The lines of the datagrams received until one holds `last`.
fn lines_until(socket: &UdpSocket, last: &str) -> Vec<String> {
    let mut buffer = [0; 65536];
    let mut lines = Vec::new();
    while !lines.iter().any(|l: &String| l.contains(last)) {
        let n = socket.recv(&mut buffer).expect("a datagram within 5 s");
        let text = std::str::from_utf8(&buffer[..n]).expect("UTF-8");
        lines.extend(text.split('\n').map(str::to_owned));
    }
    lines
}

/// StatsD's line: `name:value|type[|@rate][|#tags]`.
fn check_line(line: &str) {
    let format = regex::Regex::new(
        r"^[A-Za-z0-9_.\-]+:[0-9]+(\.[0-9]+)?\|(c|ms|g|s)(\|@[0-9.]+)?(\|#[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-]+(,[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-]+)*)?$",
    )
    .unwrap();
    assert!(format.is_match(line), "not a StatsD line: {line:?}");
}

#[test]
fn statsd_gets_each_attempt_and_the_run() {
    let dir = scratch();
    let (socket, address) = listener();
    run_failing(dir.path(), 2, &["--statsd", &address, "--job", "fleet"]).code(0);
    let lines = lines_until(&socket, ".runs.");
    lines.iter().for_each(|line| check_line(line));
    let count = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("retry.fleet.attempts:1|c"), 3, "{lines:#?}");
    assert_eq!(count("retry.fleet.attempt_duration:"), 3, "{lines:#?}");
    assert_eq!(count("retry.fleet.runs.succeeded:1|c"), 1, "{lines:#?}");
    assert_eq!(count("retry.fleet.retries.transient:2|c"), 1, "{lines:#?}");
    assert_eq!(count("retry.fleet.retries.throttled:0|c"), 1, "{lines:#?}");
    assert_eq!(count("retry.fleet.run_duration:"), 1, "{lines:#?}");
    assert_eq!(count("retry.fleet.sleep_duration:"), 1, "{lines:#?}");
    assert_eq!(lines.len(), 11, "{lines:#?}");

    // DogStatsD tags, from the variables.
    std::fs::remove_file(dir.path().join("count")).unwrap();
    let tagged = retry(&["-n", "2", "-b", "1ms", "--"])
        .env("RETRY_STATSD", &address)
        .env("RETRY_STATSD_TAGS", "1")
        .env("RETRY_JOB", "fleet")
        .helper(&fails(dir.path(), 5, 3))
        .run();
    tagged.code(3);
    let lines = lines_until(&socket, "retry.runs:");
    lines.iter().for_each(|line| check_line(line));
    assert!(
        lines.contains(&"retry.runs:1|c|#retry_job:fleet,outcome:exhausted".to_owned()),
        "{lines:#?}"
    );
    assert!(lines.contains(
        &"retry.retries:1|c|#retry_job:fleet,outcome:exhausted,class:transient".to_owned()
    ));
    assert_eq!(
        lines
            .iter()
            .filter(|l| *l == "retry.attempts:1|c|#retry_job:fleet")
            .count(),
        2
    );
}

#[test]
fn an_absent_statsd_server_costs_nothing() {
    let dir = scratch();
    // A port just freed: nothing listens, the kernel answers "refused".
    let closed = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    // A name that never resolves (RFC 6761): at most 100 ms at the end.
    for target in [closed.as_str(), "nowhere.invalid:8125"] {
        let _ = std::fs::remove_file(dir.path().join("count"));
        let out = run_failing(dir.path(), 2, &["--statsd", target, "-n", "2"]);
        out.code(3).stderr_lines(2);
        assert!(out.elapsed < Duration::from_secs(5), "{target}: {out:#?}");
        let quiet = {
            let _ = std::fs::remove_file(dir.path().join("count"));
            run_failing(dir.path(), 2, &["-n", "2"])
        };
        assert_eq!(out.stderr.lines().count(), quiet.stderr.lines().count());
    }
}

#[test]
fn bad_metrics_options_are_one_line_and_nothing_runs() {
    let dir = scratch();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let missing = dir.path().join("missing");
    let refused = |args: &[&str], env: Option<(&str, &str)>, needles: &[&str]| {
        let marker = dir.path().join("ran");
        let mut all = args.to_vec();
        all.push("--");
        let mut run = retry(&all);
        if let Some((key, value)) = env {
            run = run.env(key, value);
        }
        let out = run.helper(&[Path::new("touch"), marker.as_path()]).run();
        out.code(2).stderr_lines(1);
        assert!(out.stderr.starts_with("retry: "), "{out:#?}");
        for needle in needles {
            out.stderr_has(needle);
        }
        assert!(!marker.exists(), "the command ran: {args:?}");
    };
    let missing_arg = missing.to_str().unwrap();
    refused(
        &["--metrics-dir", missing_arg],
        None,
        &[&format!(
            "retry: cannot write to --metrics-dir '{missing_arg}': "
        )],
    );
    refused(
        &[],
        Some(("RETRY_METRICS_DIR", file.to_str().unwrap())),
        &["`RETRY_METRICS_DIR` (--metrics-dir)", "not a directory"],
    );
    for (value, words) in [
        ("8125", "no port"),
        ("localhost", "no port"),
        ("localhost:0", "the port must be 1 to 65535"),
        ("localhost:65536", "the port must be 1 to 65535"),
        (":8125", "no host"),
        ("::1:8125", "an IPv6 address goes in brackets"),
    ] {
        refused(
            &["--statsd", value],
            None,
            &[&format!("'{value}' for '--statsd <HOST:PORT>': {words}")],
        );
    }
    refused(
        &["--statsd", "a:1"],
        Some(("RETRY_JOB", "a/b")),
        &["RETRY_JOB", "a job name is 1 to 100"],
    );
    refused(
        &["--statsd", "127.0.0.1:1", "--job", "x y"],
        None,
        &["'x y' for '--job <NAME>'"],
    );
    refused(
        &["--job", "x"],
        None,
        &["`--job` is only for --metrics-dir or --statsd"],
    );
    refused(
        &["--statsd-tags"],
        None,
        &["`--statsd-tags` is only for --statsd"],
    );
}

/// A directory this user may not write to (root may write anywhere).
#[cfg(unix)]
#[test]
fn an_unwritable_metrics_dir_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    if nix::unistd::geteuid().is_root() {
        eprintln!("root may write to any directory: skipped");
        return;
    }
    let dir = scratch();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = retry(&["--metrics-dir", locked.to_str().unwrap(), "--"])
        .helper(&["exit", "0"])
        .run();
    out.code(2)
        .stderr_lines(1)
        .stderr_has("cannot write to --metrics-dir")
        .stderr_has("Permission denied");
}

#[cfg(unix)]
mod prometheus;
