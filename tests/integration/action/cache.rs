//! What the Action keeps between uses: the copy in RUNNER_TEMP or the
//! runner's tool cache, checked before it runs, and what it never trusts.

use super::*;

#[test]
fn success_after_retries_and_a_second_use_downloads_nothing() {
    let release = Release::new();
    let runner = Runner::new();
    let inputs = [
        ("command", "exit $((RETRY_ATTEMPT < 3))"),
        ("retry_wait_seconds", "0"),
    ];
    let ran = runner.run(&release.url(), &inputs);
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!(
        runner.outputs(),
        "total_attempts=3\nexit_code=0\nexit_error=\nreason=\n"
    );
    let summary = runner.read("summary");
    assert!(summary.starts_with("| retry | `"), "{summary}");
    assert!(
        summary.contains(" -c 'exit $((RETRY_ATTEMPT < 3))'` |\n"),
        "{summary}"
    );
    assert!(
        summary.contains("| attempt 1/5 | exit code 1; slept 0 ms |"),
        "{summary}"
    );
    assert!(
        summary.contains("| attempt 2/5 | exit code 1; slept 0 ms |"),
        "{summary}"
    );
    assert!(
        summary.contains("| outcome | attempt 3/5 succeeded;"),
        "{summary}"
    );
    // The archive and its .sha256, once.
    assert_eq!(release.server.served(), 2);
    let again = runner.run(&release.url(), &[("command", "true")]);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(release.server.served(), 2, "a second use downloaded again");
    assert!(!stderr(&again).contains("installed"), "{}", stderr(&again));
}

#[test]
fn without_runner_temp_a_binary_planted_in_the_temporary_directory_never_runs() {
    let release = Release::new();
    let runner = Runner::new();
    let shared = runner.file("tmp");
    let planted = shared
        .join("retry-action")
        .join(format!("{VERSION}-{TARGET}"))
        .join("retry");
    plant(&planted);
    if is_root() {
        // As another user would leave it.
        for path in [planted.as_path(), planted.parent().unwrap()] {
            std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
        }
    }
    let ran = runner
        .step(
            &release.url(),
            &[(
                "command",
                "ls -ld \"$TMPDIR\"/retry-action.* > private; touch ran",
            )],
        )
        .env_remove("RUNNER_TEMP")
        .env("TMPDIR", &shared)
        .output()
        .unwrap();
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(!runner.file("planted").exists(), "the planted binary ran");
    assert!(runner.file("ran").exists());
    // Installed from the release, into a directory of its own, only this
    // user's, removed when the step ended (issue 50: it was left behind),
    // so nothing is put on PATH.
    assert_eq!(release.server.served(), 2);
    let private = runner.read("private");
    assert!(private.starts_with("drwx------"), "{private}");
    assert_eq!(private.lines().count(), 1, "{private}");
    let left: Vec<_> = std::fs::read_dir(&shared)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, ["retry-action"], "left behind in {shared:?}");
    assert_eq!(runner.read("path"), "");
}

/// What a case does to a cached binary.
type Spoil = fn(&Path);

#[test]
fn a_cached_binary_runs_only_as_it_was_installed() {
    use std::os::unix::fs::PermissionsExt;
    let release = Release::new();
    let runner = Runner::new();
    let first = runner.run(&release.url(), &[("command", "true")]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    let cached = runner
        .file("runner-temp/retry-action")
        .join(format!("{VERSION}-{TARGET}"))
        .join("retry");
    assert!(cached.is_file());
    // What each case does to the cached binary, and why it is refused.
    let mut cases: Vec<(&str, Spoil, &str)> = vec![
        (
            "another binary in its place",
            |path: &Path| {
                std::fs::write(path, PLANTED).unwrap();
            },
            "it is not the binary installed there",
        ),
        (
            "writable by others",
            |path: &Path| {
                let mode = std::fs::Permissions::from_mode(0o777);
                std::fs::set_permissions(path, mode).unwrap();
            },
            "another user owns it or can change it",
        ),
        (
            "no recorded checksum",
            |path: &Path| {
                std::fs::write(path, PLANTED).unwrap();
                std::fs::remove_file(path.with_extension("cksum")).unwrap();
            },
            "no checksum was recorded beside it (retry.cksum)",
        ),
    ];
    if is_root() {
        cases.push((
            "another user's",
            |path: &Path| {
                std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
            },
            "another user owns it or can change it",
        ));
    } else {
        eprintln!("not root: the case of another user's binary is skipped");
    }
    for (case, spoil, why) in cases {
        spoil(&cached);
        let served = release.server.served();
        let ran = runner.run(&release.url(), &[("command", "touch ran")]);
        let said = stderr(&ran);
        assert_eq!(code(&ran), 0, "{case}: {said}");
        assert!(
            !runner.file("planted").exists(),
            "{case}: the planted binary ran"
        );
        assert!(runner.file("ran").exists(), "{case}");
        std::fs::remove_file(runner.file("ran")).unwrap();
        assert!(
            said.contains(&format!(
                "retry action: warning: not running the cached {}: {why}",
                cached.display()
            )),
            "{case}: {said}"
        );
        assert_eq!(
            release.server.served(),
            served + 2,
            "{case}: not installed again"
        );
        // Installed again as it should be: the next use takes it.
        let again = runner.run(&release.url(), &[("command", "true")]);
        assert_eq!(code(&again), 0, "{case}: {}", stderr(&again));
        assert!(
            !stderr(&again).contains("warning"),
            "{case}: {}",
            stderr(&again)
        );
        assert_eq!(
            release.server.served(),
            served + 2,
            "{case}: downloaded again"
        );
    }
}

#[test]
fn the_runner_s_tool_cache_outlives_the_job() {
    let release = Release::new();
    let tools = tempfile::tempdir().unwrap();
    let job = |runner: &Runner| {
        runner
            .step(&release.url(), &[("command", "true")])
            .env("RUNNER_TOOL_CACHE", tools.path())
            .output()
            .unwrap()
    };
    let first = Runner::new();
    let ran = job(&first);
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    let kept = tools.path().join(format!("retry/{VERSION}/{TARGET}"));
    assert_eq!(first.read("path").trim_end(), kept.to_str().unwrap());
    assert!(kept.join("retry").is_file());
    // The next job: another RUNNER_TEMP, the same runner.
    let next = Runner::new();
    let ran = job(&next);
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!(release.server.served(), 2, "the next job downloaded again");
    assert_eq!(next.read("path").trim_end(), kept.to_str().unwrap());
}

/// A cached start runs find, cksum, retry and the command's shell, and
/// nothing else (issue 50: 16 programs, id, cat and cut among them): here
/// on a PATH that holds only those.
#[test]
fn a_cached_start_runs_only_find_the_checksum_and_retry() {
    let release = Release::new();
    let runner = Runner::new();
    let first = runner.run(&release.url(), &[("command", "true")]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    let tools = runner.file("tools");
    std::fs::create_dir(&tools).unwrap();
    for tool in ["bash", "find", "cksum"] {
        let path = ["/usr/local/bin", "/usr/bin", "/bin"]
            .iter()
            .map(|dir| Path::new(dir).join(tool))
            .find(|path| path.exists());
        if let Some(path) = path {
            std::os::unix::fs::symlink(path, tools.join(tool)).unwrap();
        }
    }
    let ran = runner
        .step(&release.url(), &[("command", "true")])
        .env("PATH", &tools)
        .output()
        .unwrap();
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!(stderr(&ran), "");
    assert_eq!(release.server.served(), 2);
}

/// RUNNER_TEMP that another user could write in (without the sticky bit
/// of /tmp) lets them replace what is cached there: not used.
#[test]
fn a_runner_temp_others_can_write_in_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let release = Release::new();
    for (mode, used) in [(0o777, false), (0o1777, true), (0o755, true)] {
        let runner = Runner::new();
        let temp = runner.file("runner-temp");
        std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(mode)).unwrap();
        let ran = runner.run(&release.url(), &[("command", "true")]);
        let said = stderr(&ran);
        assert_eq!(code(&ran), 0, "{mode:o}: {said}");
        assert_eq!(
            said.contains("another user can replace it"),
            !used,
            "{mode:o}: {said}"
        );
        assert_eq!(
            runner.read("path").starts_with(temp.to_str().unwrap()),
            used
        );
    }
}

/// RUNNER_TEMP through a symbolic link (that another user could point
/// elsewhere): the directory it names is checked, and that real path, not
/// the link's, is what goes on GITHUB_PATH.
#[test]
fn a_runner_temp_through_a_link_is_used_by_its_real_path() {
    let release = Release::new();
    let runner = Runner::new();
    let real = runner.file("runner-temp");
    let link = runner.file("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let ran = runner
        .step(&release.url(), &[("command", "true")])
        .env("RUNNER_TEMP", &link)
        .output()
        .unwrap();
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    let path = runner.read("path");
    let real = real.canonicalize().unwrap();
    assert!(path.starts_with(real.to_str().unwrap()), "{path}");
    assert!(!path.contains("/link/"), "{path}");
}
