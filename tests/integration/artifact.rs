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

/// What scripts/dist.sh hands cargo for a Linux target, with stubs of
/// rustc, rustup and cargo (no build): the stub cargo writes its
/// arguments, RUSTC_BOOTSTRAP and its flags (CARGO_ENCODED_RUSTFLAGS,
/// one a line), then fails (status 3). The
/// stub rustc names no commit (a locally built one) and `sysroot` as its
/// sysroot.
fn dist_with_stubs(prebuilt_std: Option<&str>, sysroot: &Path) -> (i32, String, String) {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch();
    let stubs = dir.path().join("bin");
    std::fs::create_dir(&stubs).unwrap();
    let log = dir.path().join("cargo.log");
    for (name, body) in [
        (
            "rustc",
            format!(
                "case $1 in -vV) printf 'rustc 1.0.0\\nhost: x86_64-unknown-linux-musl\\n' ;; \
                 --print) echo '{}' ;; esac",
                sysroot.display()
            ),
        ),
        ("rustup", "echo x86_64-unknown-linux-musl".to_owned()),
        (
            "cargo",
            format!(
                "{{ printf '%s\\n' \"$@\"; echo \"bootstrap=${{RUSTC_BOOTSTRAP-unset}}\"; \
                 printf %s \"$CARGO_ENCODED_RUSTFLAGS\" | tr '\\037' '\\n'; }} >'{}'; exit 3",
                log.display()
            ),
        ),
    ] {
        let path = stubs.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:{}", stubs.display(), std::env::var("PATH").unwrap());
    let mut command = Command::new("bash");
    command
        .arg(repo("scripts/dist.sh"))
        .arg("x86_64-unknown-linux-musl")
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", dir.path().join("target"))
        .env_remove("RUSTC_BOOTSTRAP")
        .env_remove("DIST_PREBUILT_STD");
    if let Some(word) = prebuilt_std {
        command.env("DIST_PREBUILT_STD", word);
    }
    let out = command.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        std::fs::read_to_string(&log).unwrap_or_default(),
    )
}

#[test]
fn dist_builds_std_only_as_told_and_says_which_std_it_links() {
    // A sysroot whose path has a space and an `=`, remapped all the same.
    let dir = scratch();
    let sysroot = dir.path().join("a sys=root");
    std::fs::create_dir_all(sysroot.join("lib/rustlib/src/rust/library")).unwrap();

    // std from its source: -Z build-std under RUSTC_BOOTSTRAP=1, and std's
    // paths remapped to a word, not to an empty commit.
    let (status, said, cargo) = dist_with_stubs(None, &sysroot);
    assert_eq!(status, 3, "{said}");
    assert!(cargo.contains("build-std=std,panic_abort"), "{cargo}");
    assert!(cargo.contains("bootstrap=1"), "{cargo}");
    let remap = format!(
        "--remap-path-prefix={}/lib/rustlib/src/rust=/rustc/unknown",
        sysroot.display()
    );
    assert!(cargo.lines().any(|w| w == remap), "{cargo}");
    assert!(
        cargo.lines().any(|w| w == "force-unwind-tables=no"),
        "{cargo}"
    );

    // The prebuilt std, as asked: said, and no unstable flag nor bootstrap.
    let (status, said, cargo) = dist_with_stubs(Some("1"), &sysroot);
    assert_eq!(status, 3, "{said}");
    assert!(
        said.contains("DIST_PREBUILT_STD=1: linking the prebuilt std"),
        "{said}"
    );
    assert!(!cargo.contains("build-std"), "{cargo}");
    assert!(cargo.contains("bootstrap=unset"), "{cargo}");

    // Any other word: one line naming it, status 2, nothing built.
    for word in ["yes", "true", " 1"] {
        let (status, said, cargo) = dist_with_stubs(Some(word), &sysroot);
        assert_eq!(status, 2, "{word:?}: {said}");
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(
            said.contains(&format!("DIST_PREBUILT_STD={word}:")),
            "{said}"
        );
        assert!(cargo.is_empty(), "{cargo}");
    }
}

#[test]
fn the_startup_benchmark_writes_every_figure_of_the_issue() {
    let tools = ["hyperfine", "/usr/bin/time", "/usr/bin/retry"];
    if !crate::harness::tools_for("bench/startup.sh", &tools, "RETRY_TESTS_NEED_BENCH") {
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

/// bench/action.sh with tiny counts: the Action's cached start, three
/// versions of scripts/action.sh side by side (issue 50), each taking
/// the cached copy. The two old versions come from git: a clone without
/// them (a shallow one) skips.
#[cfg(feature = "preview")] // the Action checks the run with --plan
#[test]
fn the_action_benchmark_runs_each_version_of_the_cached_start() {
    let old = ["5d6fc30", "3db010f"].iter().all(|commit| {
        Command::new("git")
            .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
            .current_dir(repo(""))
            .status()
            .is_ok_and(|s| s.success())
    });
    if !crate::harness::tools_for("bench/action.sh", &["hyperfine"], "RETRY_TESTS_NEED_BENCH") {
        return;
    }
    if !old {
        eprintln!(
            "bench/action.sh needs the commits 5d6fc30 and 3db010f (a shallow clone?): skipped"
        );
        return;
    }
    let out = Command::new("bash")
        .arg(repo("bench/action.sh"))
        .arg(BIN)
        .env_remove("RUNNER_TEMP")
        .env_remove("GITHUB_ACTIONS")
        .envs([
            ("ACTION_ROUNDS", "1"),
            ("ACTION_RUNS", "2"),
            ("ACTION_RESULTS", "-"),
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    for row in ["| `5d6fc30`, before", "| `3db010f`, as issue 50", "| now ("] {
        assert!(
            stdout.lines().any(|l| l.starts_with(row)),
            "no row {row:?} in\n{stdout}"
        );
    }
    assert!(stdout.contains("Issue 50's bound"), "{stdout}");
}
