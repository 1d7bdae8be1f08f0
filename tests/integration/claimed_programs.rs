//! The real programs a built-in preset is chosen for by their name, with
//! no `--preset` (issue 50, section 1): a chosen preset ends a run early
//! only on evidence, a line its rules know as permanent, never on an exit
//! code alone that retry's defaults would retry. Each program fails as it
//! was seen to fail in the field, against a server of the test's on
//! 127.0.0.1 or a repository in a temp dir, and must be retried to
//! success: BusyBox's wget (Alpine's only wget) through 503s, `npm
//! install` whose postinstall script fails twice, `git push` whose
//! pre-push hook fails once, pip through an index that answers 503. Each
//! permanent counterpart (a 404, E404, a repository that does not exist, a
//! version the index does not list) still stops after one attempt. Where
//! it says something, the same call with the preset named (`--preset`),
//! which keeps the stricter code rules, is beside it; pip's own retry
//! warnings are evidence even there.
//!
//! The programs are found as the spawn finds them, and run with nothing of
//! the user's or the machine's (harness/claimed.rs). Without one of them
//! its test says so and passes, except under .ci/run
//! (`RETRY_TESTS_NEED_CLAIMED`).

use std::path::Path;

use crate::harness::claimed::{
    self, Failure, Flaky, busybox_wget, flaky_sh, found, git_repos, npm_project, ok, path_with,
    pip, pip_download, pip_index, runs, wheel_name,
};
use crate::harness::loopback::closed_port;
use crate::harness::{Finished, Retry, retry, scratch};

/// `retry -n N -b 1ms [PRESET...] -- COMMAND...` in the environment of
/// `claimed::environment(home)`.
fn run_in(home: &Path, n: usize, preset: &[&str], command: &[&str]) -> Retry {
    let n = n.to_string();
    let mut run = retry(&["-n", &n, "-b", "1ms"])
        .args(preset)
        .args(&["--"])
        .args(command);
    for (key, value) in claimed::environment(home) {
        let key = key.to_string_lossy().into_owned();
        run = match value {
            Some(value) => run.env(&key, value),
            None => run.env_remove(key),
        };
    }
    run
}

/// Asserts the run succeeded on attempt `attempt` of `n`.
#[track_caller]
fn succeeded_on(run: &Finished, attempt: usize, n: usize) -> &Finished {
    run.code(0)
        .stderr_has(&format!("attempt {attempt}/{n} succeeded"))
}

/// Asserts the run stopped after its first attempt of `n`, with `code`.
#[track_caller]
fn stopped(run: &Finished, code: i32, n: usize) -> &Finished {
    run.code(code)
        .stderr_has(&format!("giving up after attempt 1/{n}"))
}

const UNAVAILABLE: Failure = Failure::Status(503, "Service Unavailable");

// ---- wget: BusyBox's, and GNU's

/// BusyBox's wget exits 1 for every failure, which the wget preset (GNU
/// Wget's codes: 1 is "generic", fatal) cannot read. Run as `wget`, a 503
/// twice then a 200 is three requests and exit 0, and a refused connection
/// is retried to the end. With `--preset wget` named the strict code rules
/// hold: the first 503 ends the run.
#[test]
fn busybox_wget_is_chosen_no_preset_and_is_retried_through_503s() {
    let home = scratch();
    let Some(bin) = busybox_wget(home.path()) else {
        return;
    };
    let path = path_with(&bin);
    let wget = |n, preset: &[&str], url: &str| {
        run_in(home.path(), n, preset, &["wget", "-q", "-O", "-", url])
            .env("PATH", &path)
            .run()
    };
    let http = Flaky::start(2, UNAVAILABLE, ok);
    succeeded_on(&wget(4, &[], &http.url), 3, 4)
        .stdout_is("ok\n")
        .stderr_has("wget: server returned error: HTTP/1.1 503 Service Unavailable");
    assert_eq!(http.paths().len(), 3);
    let closed = format!("http://127.0.0.1:{}/", closed_port());
    wget(2, &[], &closed)
        .code(1)
        .stderr_has("Connection refused")
        .stderr_has("giving up after 2 attempts");
    // Its 404 is exit 1 too, with a line of BusyBox's own: the wget preset
    // is not chosen for BusyBox (-v says so), and the run is retried as
    // without a preset.
    let http = Flaky::start(usize::MAX, Failure::Status(404, "Not Found"), ok);
    wget(2, &["-v"], &http.url)
        .code(1)
        .stderr_has("no preset judges failures: `wget` here is BusyBox (")
        .stderr_has("wget: server returned error: HTTP/1.1 404 Not Found")
        .stderr_has("giving up after 2 attempts");
    assert_eq!(http.paths().len(), 2);
    let http = Flaky::start(2, UNAVAILABLE, ok);
    stopped(&wget(4, &["--preset", "wget"], &http.url), 1, 4);
    assert_eq!(http.paths().len(), 1);
}

/// GNU Wget, whose codes the preset reads, beside it: a 503 (exit 8) is
/// retried, a 404 (exit 8 too, with "ERROR 404") stops at once.
#[test]
fn gnu_wget_is_retried_through_503s_and_stops_on_a_404() {
    let Some(wget) = found("wget", "wget") else {
        return;
    };
    let wget = wget.to_str().unwrap();
    let version = std::process::Command::new(wget).arg("--version").output();
    if !version.is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("GNU Wget")) {
        eprintln!("note: {wget} is not GNU Wget (BusyBox's, as on Alpine?): skipped");
        return;
    }
    let home = scratch();
    let get = |url: &str| {
        run_in(
            home.path(),
            4,
            &[],
            &[wget, "-nv", "--tries=1", "-O", "-", url],
        )
        .run()
    };
    let http = Flaky::start(2, UNAVAILABLE, ok);
    succeeded_on(&get(&http.url), 3, 4)
        .stdout_is("ok\n")
        .stderr_has("ERROR 503: Service Unavailable.");
    assert_eq!(http.paths().len(), 3);
    let http = Flaky::start(usize::MAX, Failure::Status(404, "Not Found"), ok);
    stopped(&get(&http.url), 8, 4)
        .stderr_has("ERROR 404: Not Found.")
        .stderr_has("(wget preset: ");
    assert_eq!(http.paths().len(), 1);
}

// ---- npm

/// `npm install` runs the project's postinstall script, which here fails
/// twice as a download of a binary does (ECONNRESET): npm says only that
/// the script failed ("npm error code 1"), and exits 1. Retried until the
/// script passes, the third time. An E404 from the registry (a loopback
/// stub that has no such package) still stops at once: one request.
#[test]
fn npm_install_whose_postinstall_fails_twice_is_retried_and_an_e404_stops() {
    let Some(npm) = found("npm", "npm") else {
        return;
    };
    let npm = npm.to_str().unwrap();
    let home = scratch();
    let project = home.path().join("project");
    let count = home.path().join("postinstall-runs");
    let script = flaky_sh(&count, 2, "postinstall: fetching the binary: ECONNRESET");
    npm_project(&project, &script);
    let install = [npm, "install", "--offline", "--no-audit", "--no-fund"];
    let run = run_in(home.path(), 4, &[], &install)
        .current_dir(&project)
        .run();
    succeeded_on(&run, 3, 4).stderr_has("npm error code 1");
    assert_eq!(runs(&count), 3, "{run:#?}");
    let registry = Flaky::start(usize::MAX, Failure::Status(404, "Not Found"), ok);
    let add = [npm, "install", "--no-audit", "--no-fund", "--registry"];
    let add = [&add[..], &[&registry.url, "retry-claimed-missing"]].concat();
    stopped(
        &run_in(home.path(), 4, &[], &add)
            .current_dir(&project)
            .run(),
        1,
        4,
    )
    .stderr_has("npm error code E404")
    .stderr_has("(npm preset: ");
    assert_eq!(registry.asked("/retry-claimed-missing"), 1);
}

// ---- git

/// `git push` runs the local pre-push hook (a flaky test, here failing
/// once): git says only "failed to push some refs" and exits 1. Retried,
/// the second push goes through. A push to a repository that does not
/// exist stops at once, before any hook. With `--preset git` named, the
/// hook's failure ends the run (1 is no code the preset retries).
#[test]
fn git_push_whose_pre_push_hook_fails_once_is_retried_and_a_missing_repository_stops() {
    let Some(git) = found("git", "git") else {
        return;
    };
    let home = scratch();
    let count = home.path().join("hook-runs");
    let hook = flaky_sh(&count, 1, "pre-push: a flaky test failed");
    let (remote, work) = git_repos(&git, home.path(), &hook);
    let git = git.to_str().unwrap();
    let push = |preset: &[&str], to: &Path| {
        let to = to.to_str().unwrap();
        run_in(
            home.path(),
            4,
            preset,
            &[git, "push", to, "HEAD:refs/heads/main"],
        )
        .current_dir(&work)
        .run()
    };
    let run = push(&[], &remote);
    succeeded_on(&run, 2, 4).stderr_has("pre-push: a flaky test failed");
    assert_eq!(runs(&count), 2, "{run:#?}");
    let pushed = std::process::Command::new(git)
        .args(["--git-dir", remote.to_str().unwrap(), "rev-parse", "main"])
        .output()
        .unwrap();
    assert!(pushed.status.success(), "nothing pushed: {pushed:?}");
    let run = push(&[], &home.path().join("missing.git"));
    stopped(&run, 128, 4)
        .stderr_has("does not appear to be a git repository")
        .stderr_has("(git preset: ");
    assert_eq!(runs(&count), 2, "the hook ran: {run:#?}");
    // Named: the strict rules. The hook fails once more, and that ends it.
    std::fs::remove_file(&count).unwrap();
    let run = push(&["--preset", "git"], &remote);
    stopped(&run, 1, 4).stderr_has("pre-push: a flaky test failed");
    assert_eq!(runs(&count), 1, "{run:#?}");
}

// ---- pip

/// `pip download` of `what` from `index`, no preset named but `preset`.
fn pip_run(pip: &str, home: &Path, index: &Flaky, preset: &[&str], what: &str) -> Finished {
    let dest = home.join("wheels");
    let download = pip_download(pip, &index.url, &dest, what);
    let download: Vec<&str> = download.iter().map(String::as_str).collect();
    run_in(home, 4, preset, &download).run()
}

/// pip's index answers 503: pip retries it itself (`--retries 1`: twice
/// the page) without a word, then ends with "No matching distribution
/// found" after "(from versions: none)", exit 1, exactly as for a project
/// the index does not have. Chosen by the program's name, the preset sees
/// no evidence either way and retries: the second attempt downloads the
/// wheel. A version the index does not list ("(from versions: 1.0)") is
/// no evidence either (pip lists the versions of every source it reached,
/// and `--find-links` or a second index may have hidden one that failed):
/// retried, with one word; named, pip's exit 1 stops it at once. A wheel
/// that the index lists and its server answers 404 for is evidence: pip
/// says so, and the run stops at once.
#[test]
fn pip_download_through_a_503_index_is_retried_and_a_404_wheel_stops() {
    let Some(pip) = pip() else {
        return;
    };
    let pip = pip.to_str().unwrap();
    let home = scratch();
    let index = Flaky::start(2, UNAVAILABLE, pip_index("claimedpkg"));
    let run = pip_run(pip, home.path(), &index, &[], "claimedpkg");
    succeeded_on(&run, 2, 4).stderr_has("No matching distribution found for claimedpkg");
    assert!(
        home.path()
            .join("wheels")
            .join(wheel_name("claimedpkg"))
            .is_file(),
        "{run:#?}"
    );
    // Twice the page (pip's own retry), then the page and the wheel.
    assert_eq!(index.asked("/simple/claimedpkg/"), 3, "{:?}", index.paths());
    assert_eq!(index.paths().len(), 4, "{:?}", index.paths());
    let index = Flaky::start(0, UNAVAILABLE, pip_index("claimedpkg"));
    pip_run(pip, home.path(), &index, &[], "claimedpkg==2.0")
        .code(1)
        .stderr_has("(from versions: 1.0)")
        .stderr_has("exit code 1 is retried: the pip preset, chosen by the program's name")
        .stderr_has("giving up after 4 attempts");
    assert_eq!(index.paths().len(), 4, "{:?}", index.paths());
    let index = Flaky::start(0, UNAVAILABLE, pip_index("claimedpkg"));
    let named = pip_run(
        pip,
        home.path(),
        &index,
        &["--preset", "pip"],
        "claimedpkg==2.0",
    );
    stopped(&named, 1, 4).stderr_has("(from versions: 1.0)");
    assert_eq!(index.paths(), ["/simple/claimedpkg/"]);
    let listed = pip_index("claimedpkg");
    let no_wheel = move |path: &str| match path.starts_with("/files/") {
        true => (404, "Not Found", "", Vec::new()),
        false => listed(path),
    };
    let index = Flaky::start(0, UNAVAILABLE, no_wheel);
    // A home of its own: the first run downloaded the wheel into this one.
    let home = scratch();
    stopped(&pip_run(pip, home.path(), &index, &[], "claimedpkg"), 1, 4)
        .stderr_has("HTTP error 404 while getting")
        .stderr_has("(pip preset: ");
    assert_eq!(index.paths().len(), 2, "{:?}", index.paths());
}

/// pip's index drops its first connections (a proxy or a server
/// restarting): pip retries them itself, and says so ("WARNING: Retrying
/// (Retry(total=0, ...)) after connection broken by ..."), then ends as
/// above. That warning is evidence of a transient failure, which even the
/// preset named, whose code rules stop on pip's exit 1, retries: the
/// second attempt downloads the wheel. Named, the same exit 1 without the
/// warning (the 503 above) stops.
#[test]
fn pip_named_retries_a_run_in_which_pip_retried_a_dropped_connection_itself() {
    let Some(pip) = pip() else {
        return;
    };
    let pip = pip.to_str().unwrap();
    let home = scratch();
    let named = ["--preset", "pip"];
    let index = Flaky::start(2, Failure::Dropped, pip_index("claimedpkg"));
    let run = pip_run(pip, home.path(), &index, &named, "claimedpkg");
    succeeded_on(&run, 2, 4)
        .stderr_has("WARNING: Retrying (Retry(total=0")
        .stderr_has("No matching distribution found for claimedpkg");
    assert_eq!(index.asked("/simple/claimedpkg/"), 3, "{:?}", index.paths());
    let index = Flaky::start(2, UNAVAILABLE, pip_index("claimedpkg"));
    let run = pip_run(pip, home.path(), &index, &named, "claimedpkg");
    stopped(&run, 1, 4);
    assert!(!run.stderr.contains("WARNING: Retrying"), "{run:#?}");
    assert_eq!(index.paths().len(), 2, "{:?}", index.paths());
}
