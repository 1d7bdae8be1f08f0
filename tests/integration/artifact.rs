//! What guards the artifact people download (issue 45): the musl binary's
//! size budget (`scripts/size-budget.sh`, run by `.ci/run`), and a smoke
//! test of the start-up benchmark (`bench/startup.sh`). hyperfine, GNU
//! time and Debian's `retry` are needed for the latter, which is skipped
//! without them unless `RETRY_TESTS_NEED_BENCH` is set (`.ci/run` installs
//! them and sets it).

use std::path::Path;
use std::process::Command;

use crate::harness::{BIN, scratch};

fn repo(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The budget, as the script states it.
fn budget() -> u64 {
    let script = std::fs::read_to_string(repo("scripts/size-budget.sh")).unwrap();
    script
        .lines()
        .find_map(|l| l.strip_prefix("BUDGET="))
        .expect("scripts/size-budget.sh has no BUDGET= line")
        .parse()
        .unwrap()
}

fn check(bin: &Path) -> (bool, String) {
    let out = Command::new("bash")
        .arg(repo("scripts/size-budget.sh"))
        .arg(bin)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_size_budget_fails_one_byte_over_and_names_the_size_and_the_budget() {
    let budget = budget();
    let mib = format!("{:.2} MiB", budget as f64 / 1_048_576.0);
    let dir = scratch();
    let bin = dir.path().join("retry");
    let file = std::fs::File::create(&bin).unwrap();
    file.set_len(budget).unwrap();
    let (ok, said) = check(&bin);
    assert!(ok, "{said}");
    assert!(said.contains("within the budget"), "{said}");

    file.set_len(budget + 1).unwrap();
    let (ok, said) = check(&bin);
    assert!(!ok, "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains(&format!("({} bytes)", budget + 1)), "{said}");
    assert!(
        said.contains(&format!("over the budget of {mib} ({budget} bytes)")),
        "{said}"
    );
}

#[test]
fn the_startup_benchmark_writes_every_figure_of_the_issue() {
    let missing: Vec<&str> = ["hyperfine", "/usr/bin/time", "/usr/bin/retry"]
        .into_iter()
        .filter(|tool| {
            Command::new("sh")
                .arg("-c")
                .arg(format!("command -v {tool}"))
                .output()
                .map_or(true, |out| !out.status.success())
        })
        .collect();
    if !missing.is_empty() {
        assert!(
            std::env::var_os("RETRY_TESTS_NEED_BENCH").is_none(),
            "missing for bench/startup.sh: {missing:?}"
        );
        eprintln!("missing for bench/startup.sh: {missing:?}: skipped");
        return;
    }
    let dir = scratch();
    let results = dir.path().join("RESULTS.md");
    std::fs::write(&results, "# Results\n\n## Another section\n\nkept\n").unwrap();
    let out = Command::new("bash")
        .arg(repo("bench/startup.sh"))
        .arg(BIN)
        .env("STARTUP_ROUNDS", "1")
        .env("STARTUP_RUNS", "2")
        .env("ATTEMPT_RUNS", "1")
        .env("ATTEMPTS", "3")
        .env("STARTUP_RESULTS", &results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let written = std::fs::read_to_string(&results).unwrap();
    assert!(written.contains("## Another section\n\nkept"), "{written}");
    assert_eq!(
        written
            .matches("## Start-up and per-attempt cost (bench/startup.sh)")
            .count(),
        1,
        "{written}"
    );
    for row in [
        "| binary size |",
        "| start-up vs Debian's `retry` | 1.00× |",
        "| peak RSS (",
        "| 3 attempts vs a `sh` loop |",
    ] {
        let line = written.lines().find(|l| l.starts_with(row));
        let line = line.unwrap_or_else(|| panic!("no row {row:?} in\n{written}"));
        // A value for the build measured, in the column after Debian's.
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 5, "{line}");
        assert!(
            cells[3].ends_with('×') || cells[3].ends_with("MiB"),
            "{line}"
        );
    }
}
