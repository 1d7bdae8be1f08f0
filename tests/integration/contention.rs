//! The live experiments (`bench/contention/`, `bench/outage-live/`,
//! `bench/throttle-live/`, `examples/contention/`)
//! at the size of a smoke test: a server, a few real `retry` processes, the
//! simulation beside them, and nothing left running.

use crate::harness::{BIN, scratch};

/// The example binary `cargo test` builds beside the `retry` under test.
fn driver() -> std::path::PathBuf {
    let bin = std::path::Path::new(BIN);
    let path = bin.with_file_name("examples").join("contention");
    assert!(
        path.exists(),
        "{} is missing: `cargo test` builds it (or `cargo build --example contention`)",
        path.display()
    );
    path
}

#[test]
fn a_small_live_run_measures_every_client_and_writes_its_results() {
    let dir = scratch();
    let out = std::process::Command::new(driver())
        .args(["run", "--retry", BIN, "--clients", "1,4", "--reps", "2"])
        .args([
            "--jitter",
            "full,no-backoff",
            "--sim-reps",
            "3",
            "--limit",
            "60",
        ])
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let live = std::fs::read_to_string(dir.path().join("live.csv")).unwrap();
    let rows: Vec<Vec<&str>> = live
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 4, "{live}");
    for row in &rows {
        let clients: f64 = row[1].parse().unwrap();
        let work: f64 = row[3].parse().unwrap();
        let time_ms: f64 = row[5].parse().unwrap();
        let utilisation: f64 = row[7].parse().unwrap();
        // Every client is served once: at least one request each; one
        // client alone is served at its first (the server is idle).
        assert!(work >= clients, "{live}");
        if clients == 1.0 {
            assert_eq!(work, 1.0, "{live}");
        }
        // Two network delays of ~10 ms and a service of ~10 ms at least.
        assert!(time_ms > 5.0 && time_ms < 30_000.0, "{live}");
        assert!(utilisation > 0.0 && utilisation <= 1.0, "{live}");
    }
    let sim = std::fs::read_to_string(dir.path().join("sim.csv")).unwrap();
    assert_eq!(sim.lines().count(), 1 + 5 * 2, "{sim}");
    let agreement = std::fs::read_to_string(dir.path().join("agreement.md")).unwrap();
    assert!(agreement.contains("of 4 rows"), "{agreement}");
    let svg = std::fs::read_to_string(dir.path().join("contention.svg")).unwrap();
    assert!(svg.trim_end().ends_with("</svg>"));
}

#[test]
fn the_server_rejects_while_busy_and_the_client_says_so() {
    // The client alone, against a port nobody listens on: a failure, fast.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    drop(listener);
    let status = std::process::Command::new(driver())
        .args(["client", &port, "0", "0"])
        .stdin(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let usage = std::process::Command::new(driver())
        .args(["run", "--clients", "0"])
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn a_small_outage_run_counts_every_run_and_sees_the_recovery() {
    // Three hosts, one run a second each for 3 s, the service down for
    // the first 2: host state only (no --store, so no fleet rows), the
    // breaker with two caps.
    let dir = scratch();
    let out = std::process::Command::new(driver())
        .args(["outage", "--retry", BIN, "--hosts", "3", "--every", "1"])
        .args([
            "--outage",
            "2",
            "--span",
            "3",
            "--reps",
            "1",
            "--sim-reps",
            "2",
            "--caps",
            "1,2",
        ])
        .arg("--tmp")
        .arg(dir.path().join("hosts"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let live = std::fs::read_to_string(dir.path().join("out/live.csv")).unwrap();
    let rows: Vec<Vec<f64>> = live
        .lines()
        .skip(1)
        .map(|l| l.split(',').skip(2).map(|v| v.parse().unwrap()).collect())
        .collect();
    let names: Vec<&str> = live
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(1))
        .collect();
    assert_eq!(
        names,
        [
            "none",
            "host-budget",
            "host-breaker max 1s",
            "host-breaker max 2s"
        ],
        "{live}"
    );
    for row in &rows {
        // outage_requests, peak, lags, unrecovered, runs, succeeded, failed, skipped
        let (outage, unrecovered, runs) = (row[0], row[4], row[5]);
        // Every host's first run starts within the first second: down.
        assert!(outage >= 3.0, "{live}");
        assert_eq!(runs, 9.0, "{live}");
        assert_eq!(row[6] + row[7] + row[8], runs, "{live}");
        // Each host's third run starts after the recovery and is served.
        assert_eq!(unrecovered, 0.0, "{live}");
        assert!(row[3] > 0.0 && row[3] < 20.0, "{live}");
    }
    // The hosts' runtime directories are gone; the results are written.
    let hosts = dir.path().join("hosts");
    assert!(!hosts.exists() || std::fs::read_dir(&hosts).unwrap().next().is_none());
    let sim = std::fs::read_to_string(dir.path().join("out/sim.csv")).unwrap();
    assert_eq!(sim.lines().count(), 1 + 2 * 4, "{sim}");
    assert!(sim.contains(",host-breaker max 2s,"), "{sim}");
    let agreement = std::fs::read_to_string(dir.path().join("out/agreement.md")).unwrap();
    assert!(agreement.contains("of 24"), "{agreement}");
    let svg = std::fs::read_to_string(dir.path().join("out/outage.svg")).unwrap();
    assert!(svg.trim_end().ends_with("</svg>"));
}

#[test]
fn a_small_throttle_run_counts_every_run_and_the_429s() {
    // Twice the capacity of 2 requests a 500 ms window: 8 cron hosts at
    // each of two marks a second apart, and 8 clients whose 429s carry a
    // Retry-After; host state only (no --store, so no fleet row).
    let dir = scratch();
    let cells = "cron/2/none/none,backoff,throttle-base,host-throttle;clients/2/retry-after/none";
    let out = std::process::Command::new(driver())
        .args(["throttle", "--retry", BIN, "--capacity", "2"])
        .args(["--window", "500", "--every", "1", "--span", "2"])
        .args(["--cells", cells, "--reps", "1", "--sim-reps", "2"])
        .args(["--limit", "60"])
        .arg("--tmp")
        .arg(dir.path().join("hosts"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let live = std::fs::read_to_string(dir.path().join("out/live.csv")).unwrap();
    let keys: Vec<String> = (live.lines().skip(1))
        .map(|l| l.split(',').skip(1).take(4).collect::<Vec<_>>().join(","))
        .collect();
    assert_eq!(
        keys,
        [
            "cron,2,none,none",
            "cron,2,none,backoff",
            "cron,2,none,throttle-base",
            "cron,2,none,host-throttle",
            "clients,2,retry-after,none"
        ],
        "{live}"
    );
    for line in live.lines().skip(1) {
        // runs, goodput, refused a second, time to success, share given up
        let row: Vec<f64> = line
            .split(',')
            .skip(5)
            .map(|v| v.parse().unwrap())
            .collect();
        if line.contains(",cron,") {
            assert_eq!(row[0], 16.0, "{live}");
        } else {
            // Each client runs at least once in the 2 s, at most twice.
            assert!((8.0..=16.0).contains(&row[0]), "{live}");
        }
        // At most the capacity (4 a second) is served, and some is.
        assert!(row[1] > 0.0 && row[1] <= 4.0, "{live}");
        assert!(row[3] > 0.0 && row[3] < 20.0, "{live}");
        assert!((0.0..=1.0).contains(&row[4]), "{live}");
    }
    // Without retries, 6 of each mark's 8 first attempts are refused (4
    // at most were served even if a loaded machine spread them over two
    // windows).
    let none: Vec<f64> = (live.lines().nth(1).unwrap().split(',').skip(5))
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(none[2] >= 1.0 && none[4] >= 0.5, "{live}");
    // The hosts' runtime directories are gone; the results are written.
    let hosts = dir.path().join("hosts");
    assert!(!hosts.exists() || std::fs::read_dir(&hosts).unwrap().next().is_none());
    let sim = std::fs::read_to_string(dir.path().join("out/sim.csv")).unwrap();
    assert_eq!(sim.lines().count(), 1 + 2 * 5, "{sim}");
    assert!(sim.contains(",clients,2,retry-after,none,"), "{sim}");
    let agreement = std::fs::read_to_string(dir.path().join("out/agreement.md")).unwrap();
    assert!(agreement.contains("of 20."), "{agreement}");
    let svg = std::fs::read_to_string(dir.path().join("out/throttle.svg")).unwrap();
    assert!(svg.trim_end().ends_with("</svg>"));
}
