//! The textfile as the real node_exporter serves it and the real promtool
//! checks it, and the guide's alerts under `promtool test rules`. Moved out
//! of metrics.rs (issue 51) so each file stays under 800 lines; Unix only,
//! as metrics.rs declares it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{prom, run_failing, sample};
use crate::harness::scratch;

/// Whether `program` is installed; if not, the test skips, unless
/// `.ci/run` asked for the real thing.
fn installed(program: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        assert!(
            std::env::var_os("RETRY_TESTS_NEED_PROMETHEUS").is_none(),
            "{program} is not installed (apt-get install prometheus-node-exporter prometheus)"
        );
        eprintln!("{program} is not installed: skipped");
    }
    found
}

/// node_exporter with the textfile collector alone, killed on drop.
struct Exporter {
    child: Child,
    port: u16,
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Exporter {
    fn start(dir: &Path) -> Exporter {
        // A port just freed could be taken again before the exporter
        // binds it: then it exits, and another is tried.
        for _ in 0..5 {
            let port = crate::harness::loopback::closed_port();
            let child = Command::new("prometheus-node-exporter")
                .arg("--collector.disable-defaults")
                .arg("--collector.textfile")
                .arg(format!("--collector.textfile.directory={}", dir.display()))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("prometheus-node-exporter starts");
            let mut exporter = Exporter { child, port };
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if exporter.child.try_wait().unwrap().is_some() {
                    break;
                }
                if let Some(page) = exporter.try_scrape() {
                    assert!(page.contains("node_textfile_scrape_error"), "{page}");
                    return exporter;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        panic!("prometheus-node-exporter never answered");
    }

    /// `/metrics`'s body, if it answered 200.
    fn try_scrape(&self) -> Option<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        stream
            .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        let (head, body) = response.split_once("\r\n\r\n")?;
        head.starts_with("HTTP/1.1 200")
            .then(|| body.to_owned())
            .or_else(|| head.starts_with("HTTP/1.0 200").then(|| body.to_owned()))
    }

    fn scrape(&self) -> String {
        self.try_scrape().expect("node_exporter answers")
    }
}

#[test]
fn node_exporter_serves_the_series_without_error() {
    if !installed("prometheus-node-exporter") {
        return;
    }
    let dir = scratch();
    let metrics = dir.path().join("textfile");
    std::fs::create_dir(&metrics).unwrap();
    let exporter = Exporter::start(&metrics);
    let arg = metrics.to_str().unwrap();
    run_failing(dir.path(), 1, &["--metrics-dir", arg, "--job", "backup"]).code(0);
    let page = exporter.scrape();
    assert!(page.contains("\nnode_textfile_scrape_error 0\n"), "{page}");
    for line in [
        "retry_last_run_attempts{retry_job=\"backup\"} 2\n",
        "retry_last_run_exit_code{retry_job=\"backup\"} 0\n",
        "retry_last_run_outcome{outcome=\"succeeded\",retry_job=\"backup\"} 1\n",
        "retry_last_run_outcome{outcome=\"budget\",retry_job=\"backup\"} 0\n",
        "# TYPE retry_last_success_timestamp_seconds gauge\n",
        "# HELP retry_last_run_duration_seconds How long the job's last run took, its sleeps included.\n",
    ] {
        assert!(page.contains(line), "{line}\n{page}");
    }
    let success = sample(
        &prom(&metrics, "backup"),
        "retry_last_success_timestamp_seconds",
    )
    .unwrap()
    .to_owned();
    // The exporter writes floats its own way: compare as numbers.
    let served: f64 = sample(&page, "retry_last_success_timestamp_seconds")
        .unwrap()
        .parse()
        .unwrap();
    assert!((served - success.parse::<f64>().unwrap()).abs() < 0.001);

    // Another job beside it, failing: both served, still no error.
    std::fs::remove_file(dir.path().join("count")).unwrap();
    run_failing(
        dir.path(),
        9,
        &["--metrics-dir", arg, "--job", "sync", "-n", "2"],
    )
    .code(3);
    let page = exporter.scrape();
    assert!(page.contains("\nnode_textfile_scrape_error 0\n"), "{page}");
    assert!(page.contains("retry_last_run_outcome{outcome=\"exhausted\",retry_job=\"sync\"} 1\n"));
    assert!(page.contains("retry_last_run_attempts{retry_job=\"backup\"} 2\n"));
    // Never succeeded: no sample of its last success.
    assert!(!page.contains("retry_last_success_timestamp_seconds{retry_job=\"sync\"}"));
}

/// The counters as node_exporter serves them, after runs that
/// succeed, exhaust and are skipped by an open circuit: each adds, and
/// the skipped run, whose gauges say 0 attempts, still counts.
#[test]
fn counters_add_up_through_success_exhaustion_and_a_skipped_run() {
    if !installed("prometheus-node-exporter") {
        return;
    }
    let dir = scratch();
    let metrics = dir.path().join("textfile");
    let state = dir.path().join("state");
    std::fs::create_dir(&metrics).unwrap();
    let exporter = Exporter::start(&metrics);
    let arg = metrics.to_str().unwrap();
    let breaker = ["--breaker", "db", "--breaker-after", "1"];
    let run = |failures: u32, n: &str| {
        let mut args = vec!["--metrics-dir", arg, "--job", "sync", "-n", n];
        args.extend(breaker);
        args.extend(["-b", "1ms", "--"]);
        let _ = std::fs::remove_file(dir.path().join("count"));
        crate::harness::retry(&args)
            .env("XDG_RUNTIME_DIR", &state)
            .helper(&crate::harness::fails(dir.path(), failures, 3))
            .run()
    };
    std::fs::create_dir(&state).unwrap();
    run(1, "3").code(0); // 2 attempts
    run(9, "2").code(3); // 2 attempts, the circuit opens
    run(0, "3").code(75); // skipped: no attempt
    let page = exporter.scrape();
    assert!(page.contains("\nnode_textfile_scrape_error 0\n"), "{page}");
    for line in [
        "# TYPE retry_runs_total counter\n",
        "retry_runs_total{outcome=\"succeeded\",retry_job=\"sync\"} 1\n",
        "retry_runs_total{outcome=\"exhausted\",retry_job=\"sync\"} 1\n",
        "retry_runs_total{outcome=\"skipped\",retry_job=\"sync\"} 1\n",
        "retry_runs_total{outcome=\"fatal\",retry_job=\"sync\"} 0\n",
        "retry_attempts_total{retry_job=\"sync\"} 4\n",
        "retry_retries_total{class=\"transient\",retry_job=\"sync\"} 2\n",
        "retry_retries_total{class=\"throttled\",retry_job=\"sync\"} 0\n",
        "retry_last_run_attempts{retry_job=\"sync\"} 0\n",
    ] {
        assert!(page.contains(line), "{line}\n{page}");
    }
    let slept: f64 = sample(&page, "retry_sleep_seconds_total")
        .unwrap()
        .parse()
        .unwrap();
    assert!(slept < 0.01, "{slept}");
}

/// The circuit's series as node_exporter serves them, through open,
/// a skipped run, a probe (seen by `--breaker-status --metrics-dir`, as
/// a check every minute would) and close; a cooldown of 300 ms.
#[test]
fn the_breakers_series_follow_it_through_open_probe_and_close() {
    if !installed("prometheus-node-exporter") {
        return;
    }
    let dir = scratch();
    let metrics = dir.path().join("textfile");
    let state = dir.path().join("state");
    std::fs::create_dir(&metrics).unwrap();
    std::fs::create_dir(&state).unwrap();
    let exporter = Exporter::start(&metrics);
    let arg = metrics.to_str().unwrap();
    let retry = |args: &[&str]| {
        let mut all = vec!["--metrics-dir", arg, "--breaker-cooldown", "300ms"];
        all.extend(args);
        crate::harness::retry(&all).env("XDG_RUNTIME_DIR", &state)
    };
    let breaker = ["--breaker", "db", "--breaker-after", "1", "-n", "1", "--"];
    let served = |page: &str, series: &str| -> f64 {
        let line = format!("{series}{{breaker=\"db\"}} ");
        let found = page.lines().find_map(|l| l.strip_prefix(line.as_str()));
        found
            .unwrap_or_else(|| panic!("no {series}:\n{page}"))
            .parse()
            .unwrap()
    };
    retry(&breaker).args(&["sh", "-c", "exit 3"]).run().code(3);
    let page = exporter.scrape();
    assert!(page.contains("\nnode_textfile_scrape_error 0\n"), "{page}");
    assert_eq!(served(&page, "retry_breaker_state"), 1.0);
    assert_eq!(served(&page, "retry_breaker_failures"), 1.0);
    let next = served(&page, "retry_breaker_next_probe_timestamp_seconds");
    let now = super::now();
    assert!(now < next && next < now + 1.0, "{next} at {now}");

    // Skipped: it writes the circuit too (its file removed before).
    let file = metrics.join("retry-breaker-db.prom");
    std::fs::remove_file(&file).unwrap();
    retry(&breaker).args(&["sh", "-c", "exit 0"]).run().code(75);
    assert_eq!(served(&exporter.scrape(), "retry_breaker_state"), 1.0);

    // The cooldown over, a probe that waits for `go`.
    while super::now() < next + 0.05 {
        std::thread::sleep(Duration::from_millis(20));
    }
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let script = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.01; done",
        started.display(),
        go.display()
    );
    let mut probe = retry(&breaker).args(&["sh", "-c", &script]).spawn();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the probe never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = retry(&["--breaker-status", "db"]).run();
    status.code(0);
    assert!(
        status.stdout.starts_with("breaker db: probing;"),
        "{status:?}"
    );
    assert_eq!(served(&exporter.scrape(), "retry_breaker_state"), 2.0);
    std::fs::write(&go, "").unwrap();
    let ended = crate::harness::wait_bounded(&mut probe, Duration::from_secs(30));
    assert!(ended.success());
    let page = exporter.scrape();
    assert_eq!(served(&page, "retry_breaker_state"), 0.0);
    assert_eq!(served(&page, "retry_breaker_failures"), 0.0);
    assert_eq!(
        served(&page, "retry_breaker_next_probe_timestamp_seconds"),
        0.0
    );
    assert!(page.contains("\nnode_textfile_scrape_error 0\n"), "{page}");
}

/// docs/alerts.yml through an outage in which the circuit opens: the
/// retries alert stays firing while it is open
/// (tests/prometheus/alerts.test.yml), with the real promtool.
#[test]
fn promtool_tests_the_alerts() {
    if !installed("promtool") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for args in [
        ["check", "rules", "docs/alerts.yml"],
        ["test", "rules", "tests/prometheus/alerts.test.yml"],
    ] {
        let output = Command::new("promtool")
            .args(args)
            .current_dir(root)
            .output()
            .expect("promtool runs");
        assert!(
            output.status.success(),
            "promtool {args:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn promtool_accepts_every_file() {
    if !installed("promtool") {
        return;
    }
    let dir = scratch();
    let arg = dir.path().join("m");
    std::fs::create_dir(&arg).unwrap();
    let arg = arg.to_str().unwrap();
    // A success, then a failure that keeps it, and a job never succeeded.
    run_failing(dir.path(), 0, &["--metrics-dir", arg, "--job", "a"]).code(0);
    run_failing(
        dir.path(),
        9,
        &["--metrics-dir", arg, "--job", "a", "-n", "1"],
    )
    .code(3);
    run_failing(
        dir.path(),
        9,
        &["--metrics-dir", arg, "--job", "b", "-n", "1"],
    )
    .code(3);
    for job in ["a", "b"] {
        let file = Path::new(arg).join(format!("retry_{job}.prom"));
        let output = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(std::fs::File::open(&file).unwrap())
            .output()
            .expect("promtool runs");
        assert!(
            output.status.success() && output.stdout.is_empty() && output.stderr.is_empty(),
            "promtool check metrics: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
