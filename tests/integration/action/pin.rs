//! Which retry the Action installs for its ref: a release tag's archive,
//! a SHA pin's tag looked up on the server, or a build from the checkout
//! with cargo (a branch, or no release).

use super::*;

#[test]
fn no_release_for_the_ref_builds_from_the_checkout() {
    let release = Release::start(Serving::Files);
    let runner = Runner::new();
    let cargo = fake_cargo(&runner);
    let ran = runner
        .step(&release.url(), &[("command", "touch ran")])
        .env_remove("RETRY_INSTALL_FROM")
        .env("RETRY_ACTION_REPOSITORY", release.repository())
        .env("CARGO", &cargo)
        .output()
        .unwrap();
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    let said = stderr(&ran);
    assert_eq!(
        said.matches("building retry from the action's checkout with cargo")
            .count(),
        1,
        "{said}"
    );
    assert!(
        said.contains(&format!("no release {} for v{VERSION}", archive())),
        "{said}"
    );
    let args = runner.read("cargo.log");
    assert!(args.starts_with("build --release --locked"), "{args}");
    assert!(
        args.contains(&format!(
            "--manifest-path {}/Cargo.toml",
            env!("CARGO_MANIFEST_DIR")
        )),
        "{args}"
    );
    assert!(runner.file("ran").exists());
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=1\nexit_code=0\n")
    );
    // Only the .sha256 was asked for: its 404 says there is no release.
    assert_eq!(release.server.served(), 1);
}

#[test]
fn a_sha_pin_installs_the_release_its_tag_names() {
    for annotated in [true, false] {
        let (repo, commit) = repository_tagged(Some((&format!("v{VERSION}"), annotated)));
        let release = Release::with_git(&repo.path().join(".git"));
        let runner = Runner::new();
        let ran = runner
            .pinned(&release, &commit, "touch ran")
            .env("CARGO", "/nonexistent/cargo")
            .output()
            .unwrap();
        let said = stderr(&ran);
        assert_eq!(code(&ran), 0, "annotated {annotated}: {said}");
        assert!(runner.file("ran").exists());
        assert!(
            said.contains(&format!(
                "retry action: commit {commit} is release v{VERSION}\n"
            )),
            "{said}"
        );
        assert!(
            said.contains(&format!(
                "installed retry {VERSION} ({TARGET}) from the release at {}/releases/download/v{VERSION}\n",
                release.repository()
            )),
            "{said}"
        );
        assert!(!said.contains("cargo"), "{said}");
        // The job's next use asks the server nothing: the tag is recorded.
        let served = release.server.served();
        let again = runner.pinned(&release, &commit, "true").output().unwrap();
        assert_eq!(code(&again), 0, "{}", stderr(&again));
        assert_eq!(stderr(&again), "");
        assert_eq!(release.server.served(), served, "asked again");
    }
}

#[test]
fn a_sha_no_release_tag_points_at_is_built_and_says_why() {
    let (repo, commit) = repository_tagged(None);
    let release = Release::with_git(&repo.path().join(".git"));
    let runner = Runner::new();
    let cargo = fake_cargo(&runner);
    let ran = runner
        .pinned(&release, &commit, "touch ran")
        .env("CARGO", &cargo)
        .output()
        .unwrap();
    let said = stderr(&ran);
    assert_eq!(code(&ran), 0, "{said}");
    assert_eq!(
        said.lines().next().unwrap_or(""),
        format!(
            "retry action: no release tag points at commit {commit} in {}; \
             building retry from the action's checkout with cargo (a few minutes)",
            release.repository()
        )
    );
    assert!(runner.file("ran").exists());
    // No cargo on the runner: what to do instead.
    let runner = Runner::new();
    let ran = runner
        .pinned(&release, &commit, "touch ran")
        .env("CARGO", "/nonexistent/cargo")
        .output()
        .unwrap();
    let said = stderr(&ran);
    assert_eq!(code(&ran), 1, "{said}");
    assert!(
        said.ends_with(
            "retry action: no cargo on this runner to build retry: pin the action to a \
             release tag (uses: OWNER/REPO@vX.Y.Z), or install Rust in an earlier step\n"
        ),
        "{said}"
    );
    nothing_ran("no cargo", &runner, &ran);
}

#[test]
fn a_branch_is_built_without_asking_the_server() {
    let release = Release::new();
    for branch in ["main", "feature/v1", "v1/../../x"] {
        let runner = Runner::new();
        let ran = runner
            .pinned(&release, branch, "touch ran")
            .env("CARGO", fake_cargo(&runner))
            .output()
            .unwrap();
        let said = stderr(&ran);
        assert_eq!(code(&ran), 0, "{said}");
        assert!(
            said.starts_with(&format!(
                "retry action: {branch} is no release tag (v followed by its version); building"
            )),
            "{said}"
        );
    }
    assert_eq!(release.server.served(), 0);
}

#[test]
fn a_sha_pin_s_tags_are_listed_outside_the_job_s_checkout() {
    // The step runs in the job's checkout, whose .git/config holds what
    // actions/checkout and earlier steps put there: a token as an
    // http.extraheader, or a url.*.insteadOf that sends the lookup
    // elsewhere (here: to a port where nothing listens).
    let (repo, commit) = repository_tagged(Some((&format!("v{VERSION}"), false)));
    let release = Release::with_git(&repo.path().join(".git"));
    let runner = Runner::new();
    let elsewhere = format!(
        "http://127.0.0.1:{}/o/r",
        crate::harness::loopback::closed_port()
    );
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(runner.temp.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    git(&[
        "config",
        &format!("url.{elsewhere}.insteadOf"),
        &release.repository(),
    ]);
    let ran = runner
        .pinned(&release, &commit, "touch ran")
        .env("CARGO", "/nonexistent/cargo")
        .output()
        .unwrap();
    let said = stderr(&ran);
    assert_eq!(code(&ran), 0, "{said}");
    assert!(
        said.contains(&format!(
            "retry action: commit {commit} is release v{VERSION}\n"
        )),
        "{said}"
    );
    assert!(runner.file("ran").exists());
}

#[test]
fn a_git_server_that_never_answers_a_sha_pin_s_lookup_is_bounded() {
    let release = Release::start(Serving::Hang);
    let runner = Runner::new();
    let started = Instant::now();
    let ran = runner
        .pinned(
            &release,
            "0123456789abcdef0123456789abcdef01234567",
            "touch ran",
        )
        .env("RETRY_INSTALL_TIMEOUT", "1")
        .env("CARGO", "/nonexistent/cargo")
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let said = stderr(&ran);
    assert_eq!(code(&ran), 1, "{said}");
    assert!(
        said.starts_with(&format!(
            "retry action: cannot list the tags of {} (git ls-remote failed or took over 1 s)",
            release.repository()
        )),
        "{said}"
    );
    nothing_ran("a git server that never answers", &runner, &ran);
}
