//! The GitHub Action's script (scripts/action.sh) outside GitHub, as the
//! runner would run it: its inputs as `INPUT_<NAME>`, GITHUB_OUTPUT,
//! GITHUB_STEP_SUMMARY, GITHUB_PATH, RUNNER_OS/RUNNER_ARCH and RUNNER_TEMP
//! set, and its release served on 127.0.0.1 by the test: an archive named
//! and laid out as scripts/dist.sh makes it, holding this build's retry
//! (the dist profile takes minutes), with its `.sha256`. Each case checks
//! the exit status, the outputs and the summary; the install's failures
//! (a checksum mismatch, no release, a server that never answers) and the
//! bad inputs check that nothing ran.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::harness::loopback::Server;

const VERSION: &str = "9.8.7";
/// What RUNNER_OS=Linux RUNNER_ARCH=X64 takes (scripts/action.sh's rule).
const TARGET: &str = "x86_64-unknown-linux-musl";

fn archive() -> String {
    format!("retry-{VERSION}-{TARGET}.tar.gz")
}

/// A release's files on disk, served over HTTP by the last part of their
/// path (the test's own first, then the shared archive's), as a mirror or
/// as REPOSITORY/releases/download/TAG/ serves them; and, with `git`, the
/// repository itself under `/o/r/` (git's dumb HTTP: `info/refs`, which
/// `git update-server-info` writes); anything else 404.
struct Release {
    files: tempfile::TempDir,
    server: Server,
}

/// The repository's path on the server, as `github.action_repository` is
/// on GitHub's.
const REPOSITORY: &str = "o/r";

/// How the server answers.
#[derive(Clone, Copy, PartialEq)]
enum Serving {
    /// The test's own files only.
    Files,
    /// The test's own files, then the archive of this build's retry.
    Archive,
    /// Reads the request and never answers (until the client goes).
    Hang,
    /// As `Archive`, but the archive's connection closes halfway through.
    CutShort,
    /// As `Archive`, but the archive comes a byte a second (for 60 s at
    /// most, less once the client goes).
    Trickle,
}

/// The archive of this build's retry and its `.sha256`, made once per
/// build of retry in cargo's directory for tests' files (named after the
/// binary's size and time, the older ones removed), made aside and
/// renamed into place so that concurrent test runs never see half of it.
/// gzip -1: it is the name and the layout that matter, and a debug build
/// is big.
fn shared_archive() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let bin = std::fs::metadata(env!("CARGO_BIN_EXE_retry")).unwrap();
        let stamp = bin
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let parent = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let key = format!("action-release-{}-{stamp}", bin.len());
        let dir = parent.join(&key);
        if dir.join(format!("{}.sha256", archive())).is_file() {
            return dir;
        }
        for old in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            let name = old.file_name().to_string_lossy().into_owned();
            if name.starts_with("action-release-") && !name.starts_with(&key) {
                let _ = std::fs::remove_dir_all(old.path());
            }
        }
        let aside = parent.join(format!("{key}.{}", std::process::id()));
        let name = format!("retry-{VERSION}-{TARGET}");
        std::fs::create_dir_all(aside.join(&name)).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_retry"), aside.join(&name).join("retry")).unwrap();
        std::fs::write(aside.join(&name).join("README.md"), "retry\n").unwrap();
        let packed = Command::new("sh")
            .current_dir(&aside)
            .arg("-c")
            .arg(format!(
                "tar -cf - {name} | gzip -1 > {a} && rm -r {name} && \
                 {{ sha256sum {a} 2>/dev/null || shasum -a 256 {a}; }} > {a}.sha256",
                a = archive()
            ))
            .status()
            .unwrap();
        assert!(packed.success());
        // Another run's rename may have won: its copy is the same.
        if std::fs::rename(&aside, &dir).is_err() {
            let _ = std::fs::remove_dir_all(&aside);
        }
        dir
    })
}

impl Release {
    /// This build's retry as the release's archive, with its `.sha256`.
    fn new() -> Release {
        Release::start(Serving::Archive)
    }

    fn start(serving: Serving) -> Release {
        Release::serving(serving, None)
    }

    /// The release, and the repository in `git` (its `.git`) for its tags.
    fn with_git(git: &Path) -> Release {
        Release::serving(Serving::Archive, Some(git.to_owned()))
    }

    fn serving(serving: Serving, git: Option<PathBuf>) -> Release {
        let files = tempfile::tempdir().unwrap();
        let mut roots = vec![files.path().to_owned()];
        if serving != Serving::Files && serving != Serving::Hang {
            roots.push(shared_archive().to_owned());
        }
        let roots = Arc::new(roots);
        let server =
            Server::start(move |stream, _| answer(stream, &roots, git.as_deref(), serving));
        Release { files, server }
    }

    fn url(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    /// The action's repository on this server (RETRY_ACTION_REPOSITORY).
    fn repository(&self) -> String {
        format!("{}/{REPOSITORY}", self.url())
    }
}

/// One request: the file its path names, or 404; or, hanging, nothing.
fn answer(mut stream: TcpStream, roots: &[PathBuf], git: Option<&Path>, serving: Serving) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    if serving == Serving::Hang {
        // Until the client gives up (or the server's own patience ends).
        let _ = stream.read(&mut [0u8; 64]);
        return;
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or_default();
    let in_git = path
        .strip_prefix(&format!("/{REPOSITORY}/"))
        .filter(|rest| !rest.starts_with("releases/") && !rest.contains(".."));
    let name = path.rsplit('/').next().unwrap_or_default();
    let file = match (git, in_git) {
        (Some(git), Some(rest)) => std::fs::read(git.join(rest)).ok(),
        _ => (!name.is_empty())
            .then(|| {
                roots
                    .iter()
                    .find_map(|root| std::fs::read(root.join(name)).ok())
            })
            .flatten(),
    };
    let (status, body) = match file {
        Some(body) => ("200 OK", body),
        None => ("404 Not Found", b"Not Found".to_vec()),
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let archive = name.ends_with(".tar.gz");
    match serving {
        Serving::CutShort if archive => {
            let _ = stream.write_all(&body[..body.len() / 2]);
        }
        Serving::Trickle if archive => {
            for byte in body.iter().take(60) {
                if stream.write_all(&[*byte]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        _ => {
            let _ = stream.write_all(&body);
        }
    }
}

/// A job's runner: its temporary directory and the step's files.
struct Runner {
    temp: tempfile::TempDir,
}

impl Runner {
    fn new() -> Runner {
        let runner = Runner {
            temp: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir(runner.temp.path().join("runner-temp")).unwrap();
        runner
    }

    fn file(&self, name: &str) -> PathBuf {
        self.temp.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap_or_default()
    }

    /// The step, its inputs given as (name, value), against `from`.
    fn step(&self, from: &str, inputs: &[(&str, &str)]) -> Command {
        let mut step = Command::new("bash");
        step.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/action.sh"))
            .current_dir(self.temp.path())
            // Nothing of the test's own job (it may run under GitHub Actions).
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.temp.path())
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("RUNNER_TEMP", self.file("runner-temp"))
            .env("GITHUB_OUTPUT", self.file("output"))
            .env("GITHUB_STEP_SUMMARY", self.file("summary"))
            .env("GITHUB_PATH", self.file("path"))
            .env("RETRY_ACTION_REF", format!("v{VERSION}"))
            .env("RETRY_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
            .env("RETRY_INSTALL_FROM", from)
            .env("RETRY_INSTALL_TIMEOUT", "20");
        for (name, value) in inputs {
            step.env(format!("INPUT_{}", name.to_uppercase()), value);
        }
        step
    }

    fn run(&self, from: &str, inputs: &[(&str, &str)]) -> Output {
        self.step(from, inputs).output().unwrap()
    }

    /// The outputs retry wrote, as `name=value` lines.
    fn outputs(&self) -> String {
        self.read("output")
    }
}

fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn success_on_the_first_try_sets_the_outputs_and_no_summary() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(&release.url(), &[("command", "echo hello")]);
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "hello\n");
    assert_eq!(
        runner.outputs(),
        "total_attempts=1\nexit_code=0\nexit_error=\nreason=\n"
    );
    assert_eq!(runner.read("summary"), "");
    // On PATH for the job's later steps: the checked copy in RUNNER_TEMP.
    let dir = runner.read("path");
    let dir = Path::new(dir.trim_end());
    assert!(dir.starts_with(runner.file("runner-temp")), "{dir:?}");
    assert!(dir.join("retry").is_file());
    // The source it used, named (issue 50: not "the release" for a mirror).
    assert_eq!(
        stderr(&ran),
        format!(
            "retry action: installed retry {VERSION} ({TARGET}) from the mirror {} \
             (RETRY_INSTALL_FROM)\n",
            release.url()
        )
    );
}

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
fn attempts_exhausted_give_the_command_s_code_and_why() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exit 3"),
            ("max_attempts", "2"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    let outputs = runner.outputs();
    assert!(
        outputs.starts_with(
            "total_attempts=2\nexit_code=3\n\
             exit_error=Final attempt failed. Child_process exited with error code 3\n\
             reason=giving up after 2 attempts"
        ),
        "{outputs}"
    );
    assert!(outputs.ends_with("(reason: attempts)\n"), "{outputs}");
    let summary = runner.read("summary");
    assert!(
        summary.contains("| attempt 1/2 | exit code 3; slept 0 ms |"),
        "{summary}"
    );
    assert!(
        summary.contains("| attempt 2/2 | exit code 3 |"),
        "{summary}"
    );
    assert!(
        summary.contains("| outcome | giving up after 2 attempts"),
        "{summary}"
    );
    // Annotations under GitHub Actions are retry's to choose (GITHUB_ACTIONS
    // is unset here): plain lines.
    assert!(stderr(&ran).contains("attempt 1/2 failed with exit code 3"));
}

#[test]
fn a_timeout_is_exit_code_124_and_retry_on_timeout_retries_only_that() {
    let release = Release::new();
    let runner = Runner::new();
    let started = Instant::now();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "[ \"$RETRY_ATTEMPT\" -ge 2 ] || exec sleep 30"),
            ("timeout_seconds", "1"),
            ("retry_on", "timeout"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(
        runner.outputs(),
        "total_attempts=2\nexit_code=0\nexit_error=\nreason=\n"
    );
    let summary = runner.read("summary");
    assert!(
        summary.contains("| attempt 1/5 | timeout after 1s (exit code 124); slept 0 ms |"),
        "{summary}"
    );

    // A failure that is no timeout is not retried.
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[("command", "exit 3"), ("retry_on", "timeout")],
    );
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=1\nexit_code=3\n")
    );

    // The last attempt timing out: 124.
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exec sleep 30"),
            ("timeout_seconds", "1"),
            ("max_attempts", "1"),
        ],
    );
    assert_eq!(code(&ran), 124, "{}", stderr(&ran));
    assert!(runner.outputs().starts_with(
        "total_attempts=1\nexit_code=124\n\
                 exit_error=Final attempt failed. Timeout of 1000ms hit\nreason=giving up"
    ));
}

#[test]
fn continue_on_error_succeeds_and_the_outputs_say_how_it_ended() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exit 4"),
            ("max_attempts", "1"),
            ("continue_on_error", "true"),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=1\nexit_code=4\nexit_error=Final attempt failed.")
    );
    assert!(
        stderr(&ran).contains("continue_on_error"),
        "{}",
        stderr(&ran)
    );
}

#[test]
fn new_command_on_retry_runs_from_the_second_attempt() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "echo first; exit 1"),
            ("new_command_on_retry", "echo again; exit 0"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "first\nagain\n");
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=2\nexit_code=0\n")
    );
}

#[test]
fn retry_on_exit_code_retries_that_code_only() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exit $((RETRY_ATTEMPT == 1 ? 3 : 4))"),
            ("retry_on_exit_code", "3"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 4, "{}", stderr(&ran));
    let outputs = runner.outputs();
    assert!(
        outputs.starts_with("total_attempts=2\nexit_code=4\n"),
        "{outputs}"
    );
    assert!(outputs.ends_with("(reason: not_retryable)\n"), "{outputs}");
    let summary = runner.read("summary");
    assert!(
        summary.contains("| attempt 1/5 | exit code 3; slept 0 ms |"),
        "{summary}"
    );
    assert!(
        summary.contains("| attempt 2/5 | exit code 4 |"),
        "{summary}"
    );
}

/// An install that failed: nothing ran, nothing was installed or put on
/// PATH, and the outputs say why, as on every way out (issue 50): no
/// attempt, exit code 1, the last line shown.
#[track_caller]
fn nothing_ran(runner: &Runner, ran: &Output) {
    let said = stderr(ran);
    let line = said.lines().last().unwrap_or_default();
    let line = line.strip_prefix("retry action: ").unwrap_or(line);
    assert_eq!(
        runner.outputs(),
        format!("total_attempts=0\nexit_code=1\nexit_error={line}\nreason={line}\n")
    );
    nothing_ran_but_outputs(runner);
}

/// A bad input: nothing ran, and the outputs say why, as nick-fields'
/// do for any failure: no attempt, exit code 2, the line that was shown.
#[track_caller]
fn refused(runner: &Runner, ran: &Output) {
    let said = stderr(ran);
    let line = said
        .strip_prefix("retry action: ")
        .unwrap_or(&said)
        .trim_end();
    assert_eq!(
        runner.outputs(),
        format!("total_attempts=0\nexit_code=2\nexit_error={line}\nreason={line}\n")
    );
    nothing_ran_but_outputs(runner);
}

fn nothing_ran_but_outputs(runner: &Runner) {
    assert!(!runner.file("ran").exists(), "the command ran");
    assert_eq!(runner.read("path"), "");
    let installed = runner
        .file("runner-temp/retry-action")
        .join(format!("{VERSION}-{TARGET}"));
    assert!(!installed.exists(), "{installed:?} was installed");
}

#[test]
fn a_checksum_mismatch_is_refused_and_nothing_installed() {
    let release = Release::new();
    std::fs::write(
        release.files.path().join(format!("{}.sha256", archive())),
        format!("{}  {}\n", "0".repeat(64), archive()),
    )
    .unwrap();
    let runner = Runner::new();
    let ran = runner.run(&release.url(), &[("command", "touch ran")]);
    assert_eq!(code(&ran), 1);
    let said = stderr(&ran);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("checksum mismatch for"), "{said}");
    nothing_ran(&runner, &ran);
}

/// cargo's stand-in: a build that takes minutes proves nothing more here
/// than that the fallback is chosen, said once, and used. It records its
/// arguments in `cargo.log` and "builds" this build's retry.
fn fake_cargo(runner: &Runner) -> PathBuf {
    let cargo = runner.file("cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\n\
             echo \"$@\" > '{log}'\n\
             while [ $# -gt 0 ]; do [ \"$1\" = --target-dir ] && dir=$2; shift; done\n\
             mkdir -p \"$dir/release\" && cp '{bin}' \"$dir/release/retry\"\n",
            log = runner.file("cargo.log").display(),
            bin = env!("CARGO_BIN_EXE_retry"),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    cargo
}

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
fn a_server_that_never_answers_is_bounded() {
    let release = Release::start(Serving::Hang);
    let runner = Runner::new();
    let started = Instant::now();
    // A private mirror's password is never shown.
    let from = release.url().replacen("://", "://me:s3cret@", 1);
    let ran = runner
        .step(&from, &[("command", "touch ran")])
        .env("RETRY_INSTALL_TIMEOUT", "1")
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code(&ran), 1);
    let said = stderr(&ran);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("within 1 s"), "{said}");
    assert!(
        said.contains("://***@") && !said.contains("s3cret"),
        "{said}"
    );
    nothing_ran(&runner, &ran);
}

#[test]
fn a_bad_input_is_one_line_naming_it_and_nothing_runs() {
    let release = Release::start(Serving::Files);
    let cases: [(&[(&str, &str)], &str); 17] = [
        (&[("retry_on", "sometimes")], "retry_on: 'sometimes'"),
        (
            &[("timeout_minutes", "1"), ("timeout_seconds", "30")],
            "timeout_minutes and timeout_seconds",
        ),
        (&[("max_attempts", "three")], "max_attempts: 'three'"),
        (&[("shell", "cmd")], "shell: 'cmd'"),
        (
            &[("shell", "fish-that-is-not-there")],
            "shell: 'fish-that-is-not-there'",
        ),
        (
            &[("continue_on_error", "maybe")],
            "continue_on_error: 'maybe'",
        ),
        (
            &[("retry_wait_seconds", "ten")],
            "retry_wait_seconds: 'ten'",
        ),
        // nick-fields' constant wait and retry's backoff contradict.
        (
            &[("retry_wait_seconds", "5"), ("jitter", "equal")],
            "retry_wait_seconds: a constant wait",
        ),
        (
            &[("retry_on_exit_code", "300")],
            "retry_on_exit_code: '300'",
        ),
        (&[("timeout_seconds", "1.5.2")], "timeout_seconds: '1.5.2'"),
        // What nick-fields' parseInt reads in part (docs/action.md).
        (&[("timeout_minutes", "1e3")], "timeout_minutes: '1e3'"),
        (&[("timeout_seconds", "-1")], "timeout_seconds: '-1'"),
        // Past 64 bits, bash's own test would add a line of its own.
        (
            &[("retry_on_exit_code", "99999999999999999999")],
            "retry_on_exit_code: '99999999999999999999' is not an exit code (0 to 255)",
        ),
        (
            &[("max_attempts", "99999999999999999999")],
            "max_attempts: '99999999999999999999' is not a number of attempts",
        ),
        (&[("max_attempts", "000")], "max_attempts: '000'"),
        (
            &[("store", "redis://a"), ("budget_store", "redis://b")],
            "store and budget_store",
        ),
        // A line end in a value starts no output of its own.
        (
            &[("max_attempts", "3\nexit_code=0")],
            "max_attempts: '3 exit_code=0'",
        ),
    ];
    for (inputs, named) in cases {
        let runner = Runner::new();
        let mut all = vec![("command", "touch ran")];
        all.extend_from_slice(inputs);
        let ran = runner.run(&release.url(), &all);
        let said = stderr(&ran);
        assert_eq!(code(&ran), 2, "{inputs:?}: {said}");
        assert_eq!(said.lines().count(), 1, "{inputs:?}: {said}");
        assert!(said.contains(named), "{inputs:?}: {said}");
        refused(&runner, &ran);
    }
    for command in ["", " \n "] {
        let runner = Runner::new();
        let ran = runner.run(&release.url(), &[("command", command)]);
        assert_eq!(code(&ran), 2);
        assert_eq!(
            stderr(&ran),
            "retry action: command: empty; give the command to run\n"
        );
        refused(&runner, &ran);
    }
    // A shell the runner lacks, when this machine lacks it.
    let pwsh = Command::new("sh")
        .args(["-c", "command -v pwsh"])
        .output()
        .unwrap();
    if !pwsh.status.success() {
        let runner = Runner::new();
        let ran = runner.run(
            &release.url(),
            &[("command", "touch ran"), ("shell", "pwsh")],
        );
        assert_eq!(code(&ran), 2);
        assert_eq!(
            stderr(&ran),
            "retry action: shell: 'pwsh' is not on this runner's PATH\n"
        );
    }
    // Nothing was downloaded for any of them.
    assert_eq!(release.server.served(), 0);
}

/// The lines a command wrote with `env > FILE`, without the runner's own.
fn environment(runner: &Runner, name: &str) -> String {
    let seen = runner.read(name);
    assert!(!seen.is_empty(), "{name} was not written");
    seen
}

#[test]
fn no_input_and_no_store_password_reaches_the_command_or_the_hook() {
    let release = Release::new();
    let runner = Runner::new();
    // Nothing listens there: retry runs without the budget, and says so.
    let store = format!(
        "redis://:s3cretPw@127.0.0.1:{}/0",
        crate::harness::loopback::closed_port()
    );
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "env > seen; exit $((RETRY_ATTEMPT < 2))"),
            ("on_retry_command", "env > hook-seen"),
            ("retry_wait_seconds", "0"),
            ("budget", "ci"),
            ("budget_store", &store),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    for name in ["seen", "hook-seen"] {
        let seen = environment(&runner, name);
        assert!(!seen.contains("s3cretPw"), "{name}: {seen}");
        assert!(
            !seen.lines().any(|line| line.starts_with("INPUT_")),
            "{name}: {seen}"
        );
        // Nor the Action's wishes for retry's lines: a nested retry's are its own.
        assert!(!seen.contains("RETRY_GITHUB_ACTION="), "{name}: {seen}");
    }
    assert!(!stderr(&ran).contains("s3cretPw"), "{}", stderr(&ran));
}

/// Passwords holding each character that ends a URL's host part early,
/// and all of them at once.
const PASSWORDS: [&str; 6] = [
    "Pw1/Pw2",
    "Pw1?Pw2",
    "Pw1#Pw2",
    "Pw1@Pw2",
    "Pw1:Pw2",
    "Pw1/Pw2?Pw3#Pw4@Pw5:Pw6",
];

#[test]
fn a_mirror_s_password_is_never_shown_whatever_it_holds() {
    let port = crate::harness::loopback::closed_port();
    for password in PASSWORDS {
        let runner = Runner::new();
        let from = format!("http://me:{password}@127.0.0.1:{port}");
        let ran = runner.run(&from, &[("command", "touch ran")]);
        let said = stderr(&ran);
        assert_eq!(code(&ran), 1, "{password}: {said}");
        assert_eq!(said.lines().count(), 1, "{password}: {said}");
        assert!(
            said.contains(&format!("http://***@127.0.0.1:{port}/retry-")),
            "{password}: {said}"
        );
        assert!(!said.contains("Pw"), "{password}: {said}");
        nothing_ran(&runner, &ran);
    }
}

#[test]
fn a_download_cut_short_or_too_slow_says_so_and_installs_nothing() {
    for (serving, why) in [
        (
            Serving::CutShort,
            "cut short: the connection closed before the end of the file (curl exit 18)",
        ),
        (
            Serving::Trickle,
            "timed out: not complete within 2 s (RETRY_INSTALL_TIMEOUT) (curl exit 28)",
        ),
    ] {
        let release = Release::start(serving);
        let runner = Runner::new();
        let started = Instant::now();
        let ran = runner
            .step(&release.url(), &[("command", "touch ran")])
            .env("RETRY_INSTALL_TIMEOUT", "2")
            .output()
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(20));
        let said = stderr(&ran);
        assert_eq!(code(&ran), 1, "{said}");
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(
            said.contains(&format!(
                "cannot download {}/{}: {why}",
                release.url(),
                archive()
            )),
            "{said}"
        );
        nothing_ran(&runner, &ran);
    }
}

#[test]
fn an_install_timeout_of_zero_is_a_usage_error() {
    let release = Release::new();
    for value in [
        "0",
        "00",
        "1.5",
        "ten",
        "1000000000",
        "99999999999999999999",
    ] {
        let runner = Runner::new();
        let ran = runner
            .step(&release.url(), &[("command", "touch ran")])
            .env("RETRY_INSTALL_TIMEOUT", value)
            .output()
            .unwrap();
        assert_eq!(code(&ran), 2, "{value}: {}", stderr(&ran));
        assert_eq!(
            stderr(&ran),
            format!(
                "retry action: RETRY_INSTALL_TIMEOUT={value}: not a number of seconds (1 to 999999999) for each download\n"
            )
        );
        refused(&runner, &ran);
    }
    assert_eq!(release.server.served(), 0);
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A script standing in for retry that leaves `planted` where it runs.
const PLANTED: &str = "#!/bin/sh\ntouch planted\nexit 0\n";

fn plant(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, PLANTED).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
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
fn retry_on_any_retries_a_command_not_found_as_nick_fields_does() {
    let release = Release::new();
    let runner = Runner::new();
    // The hook installs the tool the first attempt lacked (127).
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "./tool"),
            (
                "on_retry_command",
                "printf '#!/bin/sh\\nexit 0\\n' > tool && chmod +x tool",
            ),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!(
        runner.outputs(),
        "total_attempts=2\nexit_code=0\nexit_error=\nreason=\n"
    );
    // 126 (found, not executable) too, with retry_on: error.
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "[ \"$RETRY_ATTEMPT\" -ge 3 ] || exit 126"),
            ("retry_on", "error"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(runner.outputs().starts_with("total_attempts=3\n"));
    // With success_on, retry's own rule: no code is both retried and a
    // success (a usage error before).
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exit $((RETRY_ATTEMPT == 1 ? 1 : 3))"),
            ("success_on", "0,3"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=2\nexit_code=3\n")
    );
}

/// Issue 41: the Action runs a shell line and keeps nick-fields' meaning,
/// so it chooses no preset by itself, whatever the job's environment says.
#[test]
fn the_action_chooses_no_preset_unless_one_is_named() {
    let release = Release::new();
    let runner = Runner::new();
    // Code 3 is fatal for the curl preset (a malformed URL).
    let ran = runner
        .step(
            &release.url(),
            &[
                ("command", "exit $((RETRY_ATTEMPT == 1 ? 3 : 0))"),
                ("retry_wait_seconds", "0"),
            ],
        )
        .env("RETRY_PRESET", "curl")
        .output()
        .unwrap();
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(runner.outputs().starts_with("total_attempts=2\n"));
}

#[test]
fn decimal_timeouts_and_waits_run() {
    let release = Release::new();
    for (input, value, shown) in [
        ("timeout_seconds", "1.5", "timeout after 1s 500ms"),
        ("timeout_minutes", "0.02", "timeout after 1s 200ms"),
    ] {
        let runner = Runner::new();
        let started = Instant::now();
        let ran = runner.run(
            &release.url(),
            &[
                ("command", "exec sleep 30"),
                (input, value),
                ("max_attempts", "2"),
                ("retry_wait_seconds", "0.1"),
            ],
        );
        assert!(started.elapsed() < Duration::from_secs(20));
        assert_eq!(code(&ran), 124, "{input}: {}", stderr(&ran));
        let summary = runner.read("summary");
        assert!(
            summary.contains(&format!(
                "| attempt 1/2 | {shown} (exit code 124); slept 100 ms |"
            )),
            "{summary}"
        );
    }
}

#[test]
fn exit_error_keeps_nick_fields_words_and_reason_has_retry_s() {
    let release = Release::new();
    // Stopped before the last attempt: nick-fields' words without "Final".
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exit $((RETRY_ATTEMPT == 1 ? 3 : 4))"),
            ("retry_on_exit_code", "3"),
            ("retry_wait_seconds", "0"),
        ],
    );
    assert_eq!(code(&ran), 4, "{}", stderr(&ran));
    let outputs = runner.outputs();
    assert!(
        outputs.contains("\nexit_error=Child_process exited with error code 4\nreason=giving up"),
        "{outputs}"
    );
    // A timeout on the last attempt.
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "exec sleep 30"),
            ("timeout_seconds", "1.5"),
            ("max_attempts", "1"),
        ],
    );
    assert_eq!(code(&ran), 124, "{}", stderr(&ran));
    assert!(
        runner
            .outputs()
            .contains("\nexit_error=Final attempt failed. Timeout of 1500ms hit\nreason="),
        "{}",
        runner.outputs()
    );
}

#[test]
fn a_bad_input_of_retry_s_own_is_refused_before_anything_runs_with_the_outputs() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[("command", "touch ran"), ("jitter", "sometimes")],
    );
    let said = stderr(&ran);
    assert_eq!(code(&ran), 2, "{said}");
    let line = said.lines().last().unwrap_or("");
    assert!(
        line.starts_with("retry: invalid value 'sometimes' for '--jitter <JITTER>'"),
        "{said}"
    );
    assert_eq!(
        runner.outputs(),
        format!("total_attempts=0\nexit_code=2\nexit_error={line}\nreason={line}\n")
    );
    assert!(!runner.file("ran").exists());
    assert_eq!(runner.read("path"), "", "put on PATH");
}

#[test]
fn breaker_metrics_dir_and_store_are_inputs() {
    let release = Release::new();
    let runner = Runner::new();
    // The host's state (the breaker's record) in a place of the test's own.
    let (metrics, state) = (runner.file("metrics"), runner.file("state"));
    use std::os::unix::fs::PermissionsExt;
    for dir in [&metrics, &state] {
        std::fs::create_dir(dir).unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let ran = runner
        .step(
            &release.url(),
            &[
                ("command", "env > seen; exit 3"),
                ("max_attempts", "1"),
                ("breaker", "deploy"),
                ("metrics_dir", metrics.to_str().unwrap()),
                ("store", "host"),
            ],
        )
        .env("XDG_RUNTIME_DIR", &state)
        .output()
        .unwrap();
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    let prom = std::fs::read_dir(&metrics)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    assert!(
        prom.iter().any(|name| name.ends_with(".prom")),
        "{prom:?}: {}",
        stderr(&ran)
    );
    let status = Command::new(env!("CARGO_BIN_EXE_retry"))
        .args(["--breaker-status", "deploy"])
        .env("XDG_RUNTIME_DIR", &state)
        .env("HOME", runner.temp.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&status.stdout).into_owned()
        + &String::from_utf8_lossy(&status.stderr);
    assert!(said.contains("1 failed run in a row"), "{said}");
    assert!(said.contains(state.to_str().unwrap()), "{said}");
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn each_attempt_is_folded_and_the_annotations_stay_outside() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner
        .step(
            &release.url(),
            &[
                ("command", "echo try $RETRY_ATTEMPT; exit 3"),
                ("max_attempts", "2"),
                ("retry_wait_seconds", "0"),
            ],
        )
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    assert_eq!(
        stdout(&ran),
        "::group::Attempt 1\ntry 1\n::endgroup::\n::group::Attempt 2\ntry 2\n::endgroup::\n"
    );
    let said = stderr(&ran);
    assert!(
        said.contains(
            "::warning title=retry%3A echo try $RETRY_ATTEMPT; exit 3::attempt 1/2 failed"
        ),
        "{said}"
    );
    assert!(
        said.contains("::error title=retry%3A echo try $RETRY_ATTEMPT; exit 3::giving up"),
        "{said}"
    );
}

#[test]
fn continue_on_error_gives_up_with_a_warning_and_warning_on_retry_false_keeps_the_error() {
    let release = Release::new();
    let inputs = [
        ("command", "exit 3"),
        ("max_attempts", "2"),
        ("retry_wait_seconds", "0"),
    ];
    // A step that ends green: no error annotation.
    let runner = Runner::new();
    let mut green = inputs.to_vec();
    green.push(("continue_on_error", "true"));
    let ran = runner
        .step(&release.url(), &green)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    let said = stderr(&ran);
    assert!(
        said.contains("::warning title=retry%3A exit 3::giving up after 2 attempts"),
        "{said}"
    );
    assert!(!said.contains("::error"), "{said}");
    // Retries as plain lines; giving up still an error annotation.
    let runner = Runner::new();
    let mut plain = inputs.to_vec();
    plain.push(("warning_on_retry", "false"));
    let ran = runner
        .step(&release.url(), &plain)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(code(&ran), 3, "{}", stderr(&ran));
    let said = stderr(&ran);
    assert!(
        said.contains("retry: `exit 3`: attempt 1/2 failed with exit code 3"),
        "{said}"
    );
    assert!(!said.contains("::warning"), "{said}");
    assert!(
        said.contains("::error title=retry%3A exit 3::giving up after 2 attempts"),
        "{said}"
    );
}

#[test]
fn with_new_command_on_retry_the_lines_and_summary_name_the_user_s_command() {
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner
        .step(
            &release.url(),
            &[
                ("command", "echo first; exit 1"),
                ("new_command_on_retry", "echo again; exit 2"),
                ("max_attempts", "2"),
                ("retry_wait_seconds", "0"),
            ],
        )
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(code(&ran), 2, "{}", stderr(&ran));
    let said = stderr(&ran);
    assert!(
        said.contains("::warning title=retry%3A echo first; exit 1::attempt 1/2"),
        "{said}"
    );
    assert!(
        said.contains("::error title=retry%3A echo first; exit 1::giving up"),
        "{said}"
    );
    assert!(!said.contains("RETRY_ATTEMPT"), "{said}");
    let summary = runner.read("summary");
    assert!(
        summary.starts_with("| retry | `echo first; exit 1` |\n"),
        "{summary}"
    );
}

/// A repository with one commit, tagged `tag` (annotated or not), ready
/// for git's dumb HTTP; and the commit.
fn repository_tagged(tag: Option<(&str, bool)>) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "release"]);
    // Another tag, not a release's, on the same commit.
    git(&["tag", "nightly"]);
    match tag {
        Some((name, true)) => git(&["tag", "-a", name, "-m", name]),
        Some((name, false)) => git(&["tag", name]),
        None => String::new(),
    };
    git(&["update-server-info"]);
    let commit = git(&["rev-parse", "HEAD"]);
    (dir, commit)
}

#[test]
fn a_sha_pin_installs_the_release_its_tag_names() {
    for annotated in [true, false] {
        let (repo, commit) = repository_tagged(Some((&format!("v{VERSION}"), annotated)));
        let release = Release::with_git(&repo.path().join(".git"));
        let runner = Runner::new();
        let ran = runner
            .step("", &[("command", "touch ran")])
            .env_remove("RETRY_INSTALL_FROM")
            .env("RETRY_ACTION_REPOSITORY", release.repository())
            .env("RETRY_ACTION_REF", &commit)
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
        let again = runner
            .step("", &[("command", "true")])
            .env_remove("RETRY_INSTALL_FROM")
            .env("RETRY_ACTION_REPOSITORY", release.repository())
            .env("RETRY_ACTION_REF", &commit)
            .output()
            .unwrap();
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
        .step("", &[("command", "touch ran")])
        .env_remove("RETRY_INSTALL_FROM")
        .env("RETRY_ACTION_REPOSITORY", release.repository())
        .env("RETRY_ACTION_REF", &commit)
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
        .step("", &[("command", "touch ran")])
        .env_remove("RETRY_INSTALL_FROM")
        .env("RETRY_ACTION_REPOSITORY", release.repository())
        .env("RETRY_ACTION_REF", &commit)
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
    nothing_ran(&runner, &ran);
}

#[test]
fn a_job_s_mirror_wins_and_one_without_the_release_is_an_error() {
    let release = Release::new();
    let mirror = Release::new();
    let runner = Runner::new();
    let ran = runner
        .step(&mirror.url(), &[("command", "touch ran")])
        .env("RETRY_ACTION_REPOSITORY", release.repository())
        .output()
        .unwrap();
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!((mirror.server.served(), release.server.served()), (2, 0));
    // A mirror that lacks the release: one line naming it, nothing built.
    let empty = Release::start(Serving::Files);
    let runner = Runner::new();
    let from = empty.url().replacen("://", "://me:s3cret@", 1);
    let ran = runner
        .step(&from, &[("command", "touch ran")])
        .env("RETRY_ACTION_REPOSITORY", release.repository())
        .env("CARGO", fake_cargo(&runner))
        .output()
        .unwrap();
    let said = stderr(&ran);
    assert_eq!(code(&ran), 1, "{said}");
    assert_eq!(
        said,
        format!(
            "retry action: no {}.sha256 at http://***@{} (RETRY_INSTALL_FROM, the job's mirror): \
             put the release's files there\n",
            archive(),
            empty.server.addr
        )
    );
    nothing_ran(&runner, &ran);
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

#[test]
fn a_branch_is_built_without_asking_the_server() {
    let release = Release::new();
    for branch in ["main", "feature/v1", "v1/../../x"] {
        let runner = Runner::new();
        let ran = runner
            .step("", &[("command", "touch ran")])
            .env_remove("RETRY_INSTALL_FROM")
            .env("RETRY_ACTION_REPOSITORY", release.repository())
            .env("RETRY_ACTION_REF", branch)
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

/// A stand-in for TOOL, first on PATH, that records its arguments in
/// `TOOL.args` and its environment in `TOOL.env`, then runs the real one
/// (or, for cargo, `fake_cargo`'s build).
fn spy(runner: &Runner, dir: &Path, tool: &str, real: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let file = dir.join(tool);
    std::fs::write(
        &file,
        format!(
            "#!/bin/sh\n\
             echo \"$*\" >> '{args}'\n\
             env >> '{env}'\n\
             exec '{real}' \"$@\"\n",
            args = runner.file(&format!("{tool}.args")).display(),
            env = runner.file(&format!("{tool}.env")).display(),
            real = real.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn found(tool: &str) -> PathBuf {
    ["/usr/local/bin", "/usr/bin", "/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(tool))
        .find(|path| path.exists())
        .unwrap_or_else(|| panic!("no {tool}"))
}

#[test]
fn no_password_is_in_a_download_s_arguments_or_a_build_s_environment() {
    let release = Release::new();
    let store = "redis://:s3cretStore@127.0.0.1:9/0";
    // From a mirror with a password: curl's arguments are readable by
    // every user of the machine (ps); the store's is for retry alone.
    let runner = Runner::new();
    let spies = runner.file("spies");
    std::fs::create_dir(&spies).unwrap();
    spy(&runner, &spies, "curl", &found("curl"));
    let path = format!("{}:{}", spies.display(), std::env::var("PATH").unwrap());
    let from = release.url().replacen("://", "://me:s3cretMirror@", 1);
    let ran = runner
        .step(&from, &[("command", "true"), ("store", store)])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    let args = runner.read("curl.args");
    assert_eq!(args.lines().count(), 2, "{args}");
    assert!(!args.contains("s3cret"), "{args}");
    let env = runner.read("curl.env");
    assert!(!env.contains("s3cretStore"), "{env}");
    // Built with cargo: a dependency's build script sees its environment.
    let runner = Runner::new();
    let spies = runner.file("spies");
    std::fs::create_dir(&spies).unwrap();
    spy(&runner, &spies, "cargo", &fake_cargo(&runner));
    let ran = runner
        .step("", &[("command", "true"), ("budget_store", store)])
        .env_remove("RETRY_INSTALL_FROM")
        .env_remove("RETRY_ACTION_REF")
        .env("CARGO", spies.join("cargo"))
        .env("RETRY_BUDGET_STORE", store)
        .output()
        .unwrap();
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    let env = runner.read("cargo.env");
    assert!(env.contains("PATH="), "{env}");
    assert!(!env.contains("s3cretStore"), "{env}");
}

#[test]
fn a_mirror_url_with_a_line_end_is_a_usage_error() {
    // It would end curl's config line, where the URL goes (not argv).
    let release = Release::new();
    let runner = Runner::new();
    let from = format!(
        "{}/\noutput = {}",
        release.url(),
        runner.file("x").display()
    );
    let ran = runner.run(&from, &[("command", "touch ran")]);
    assert_eq!(code(&ran), 2, "{}", stderr(&ran));
    assert_eq!(
        stderr(&ran),
        "retry action: RETRY_INSTALL_FROM: a URL holds no control character (a line end?)\n"
    );
    refused(&runner, &ran);
    assert!(!runner.file("x").exists());
    assert_eq!(release.server.served(), 0);
}

#[test]
fn without_curl_the_install_says_so() {
    let release = Release::new();
    let runner = Runner::new();
    // Every program on PATH but curl.
    let tools = runner.file("tools");
    std::fs::create_dir(&tools).unwrap();
    for dir in ["/usr/local/bin", "/usr/bin", "/bin"] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let (name, link) = (entry.file_name(), tools.join(entry.file_name()));
            if name != "curl" && !link.exists() {
                let _ = std::os::unix::fs::symlink(entry.path(), link);
            }
        }
    }
    let ran = runner
        .step(&release.url(), &[("command", "touch ran")])
        .env("PATH", &tools)
        .output()
        .unwrap();
    assert_eq!(code(&ran), 1, "{}", stderr(&ran));
    assert_eq!(
        stderr(&ran),
        format!(
            "retry action: no curl on this runner to download retry {VERSION} from {}: \
             install curl in an earlier step\n",
            release.url()
        )
    );
    nothing_ran(&runner, &ran);
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
        .step("", &[("command", "touch ran")])
        .env_remove("RETRY_INSTALL_FROM")
        .env("RETRY_ACTION_REPOSITORY", release.repository())
        .env("RETRY_ACTION_REF", &commit)
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
fn an_input_that_starts_with_a_dash_is_the_value_not_an_option() {
    // Go's test output and Redis's errors: regexes that start with -.
    let release = Release::new();
    let runner = Runner::new();
    let ran = runner.run(
        &release.url(),
        &[
            ("command", "echo '-ERR busy'; touch ran; exit 1"),
            ("stop_if_output", "-ERR"),
            ("retry_if_output", "--- FAIL"),
            ("on_retry_command", "--version"),
            ("retry_wait_seconds", "0"),
        ],
    );
    let said = stderr(&ran);
    assert_eq!(code(&ran), 1, "{said}");
    assert!(runner.file("ran").exists(), "{said}");
    // Stopped by the output at the first attempt: the hook never ran.
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=1\nexit_code=1\n"),
        "{}",
        runner.outputs()
    );
}

#[test]
fn an_archive_whose_retry_is_a_symbolic_link_is_refused() {
    // The checksum covers the link, not its target: a file anyone may
    // have put there, here one that leaves `planted` where it runs.
    let release = Release::start(Serving::Files);
    let runner = Runner::new();
    plant(&runner.file("elsewhere/retry"));
    let packed = Command::new("sh")
        .current_dir(release.files.path())
        .arg("-c")
        .arg(
            "mkdir \"$1\" && ln -s \"$3\" \"$1/retry\" && tar -czf \"$2\" \"$1\" && \
             rm -r \"$1\" && sha256sum \"$2\" > \"$2.sha256\"",
        )
        .arg("sh")
        .arg(format!("retry-{VERSION}-{TARGET}"))
        .arg(archive())
        .arg(runner.file("elsewhere/retry"))
        .status()
        .unwrap();
    assert!(packed.success());
    let ran = runner.run(&release.url(), &[("command", "touch ran")]);
    let said = stderr(&ran);
    assert_eq!(code(&ran), 1, "{said}");
    assert_eq!(
        said,
        format!(
            "retry action: {}'s retry-{VERSION}-{TARGET}/retry is a symbolic link, not the \
             file its checksum covers: refusing it, nothing installed\n",
            archive()
        )
    );
    assert!(!runner.file("planted").exists());
    nothing_ran(&runner, &ran);
}

#[test]
fn a_git_server_that_never_answers_a_sha_pin_s_lookup_is_bounded() {
    let release = Release::start(Serving::Hang);
    let runner = Runner::new();
    let started = Instant::now();
    let ran = runner
        .step("", &[("command", "touch ran")])
        .env_remove("RETRY_INSTALL_FROM")
        .env("RETRY_ACTION_REPOSITORY", release.repository())
        .env(
            "RETRY_ACTION_REF",
            "0123456789abcdef0123456789abcdef01234567",
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
    nothing_ran(&runner, &ran);
}

#[test]
fn a_mirror_s_password_with_brackets_or_braces_is_sent_as_it_is() {
    // curl would read them as URL patterns: two requests, each with a
    // password that is not the one given.
    let release = Release::new();
    let runner = Runner::new();
    let from = release.url().replacen("://", "://me:Pw{1,2}[3-4]@", 1);
    let ran = runner.run(&from, &[("command", "touch ran")]);
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(runner.file("ran").exists());
    // The .sha256 and the archive, once each.
    assert_eq!(release.server.served(), 2);
}

#[test]
fn an_https_download_is_not_followed_to_http() {
    // A checksum that came over http checks nothing: whoever can change
    // the archive on the way can change it too.
    let release = Release::new();
    let runner = Runner::new();
    let tls = runner.file("tls");
    std::fs::create_dir(&tls).unwrap();
    let Some(server) = crate::harness::loopback::https_files(&tls) else {
        return;
    };
    for name in [archive(), format!("{}.sha256", archive())] {
        std::fs::write(
            tls.join(&name),
            format!(
                "HTTP/1.0 302 Found\r\nLocation: {}/{name}\r\n\r\n",
                release.url()
            ),
        )
        .unwrap();
    }
    let from = format!("https://127.0.0.1:{}", server.port);
    let ran = runner
        .step(&from, &[("command", "touch ran")])
        .env("CURL_CA_BUNDLE", tls.join("cert.pem"))
        .output()
        .unwrap();
    assert_eq!(code(&ran), 1, "{}", stderr(&ran));
    assert_eq!(
        stderr(&ran),
        format!(
            "retry action: cannot download {from}/{}.sha256: redirected to a protocol it \
             does not follow (from https, https only) (curl exit 1)\n",
            archive()
        )
    );
    assert_eq!(release.server.served(), 0);
    nothing_ran(&runner, &ran);
}

/// Issue 50's cases, each wrong against nick-fields/retry before: the
/// inputs as `name=value` lines (with `retry_wait_seconds: 0`, under
/// GITHUB_ACTIONS), the exit status, how the outputs start, and what the
/// log holds once (or, after a `!`, not at all). A run with attempts put
/// retry on PATH; one without did not.
type Case<'a> = (&'a str, i32, &'a str, &'a [&'a str]);

#[test]
fn inputs_read_as_nick_fields_reads_them() {
    let release = Release::new();
    let cases: &[Case] = &[
        // 0 is ignored there (falsy): no --retry-on 0 is asked of retry.
        (
            "command=exit $((RETRY_ATTEMPT < 3 ? 3 : 0))\nretry_on_exit_code=0",
            0,
            "total_attempts=3\nexit_code=0\n",
            &["::notice title=retry action::retry_on_exit_code: '0' is ignored"],
        ),
        // Any word but true (in any case) is false there.
        (
            "command=exit 3\nmax_attempts=2\nwarning_on_retry=no",
            3,
            "total_attempts=2\nexit_code=3\n",
            &[
                "::notice title=retry action::warning_on_retry: 'no' is neither true nor false",
                "retry: `exit 3`: attempt 1/2 failed",
                "!::warning title",
            ],
        ),
        (
            "command=exit 3\nmax_attempts=2\nwarning_on_retry=TrUe",
            3,
            "total_attempts=2\nexit_code=3\n",
            &["::warning title=retry%3A exit 3::attempt 1/2", "!::notice"],
        ),
        (
            "command=exit 3\nmax_attempts=1\ncontinue_on_error=tRUE",
            0,
            "total_attempts=1\nexit_code=3\n",
            &["!::error"],
        ),
        // Retried only when the output says so: the first attempt's, not
        // the second's.
        (
            "command=[ $RETRY_ATTEMPT = 1 ] && echo busy; exit 1\nretry_on=output\nretry_if_output=busy",
            1,
            "total_attempts=2\nexit_code=1\n",
            &[],
        ),
        (
            "command=touch ran\nretry_on=output",
            2,
            "total_attempts=0\nexit_code=2\nexit_error=retry_on: output retries only",
            &[],
        ),
        // Every way out sets the outputs: here retry's own before the
        // command (a --metrics-dir it cannot write).
        (
            "command=touch ran\nmetrics_dir=/nonexistent/retry-action",
            2,
            "total_attempts=0\nexit_code=2\nexit_error=retry ended with exit status 2 before",
            &["retry: cannot write to --metrics-dir"],
        ),
        // The command's own 2 and 127 are no refusal of an input.
        (
            "command=exit 2\nmax_attempts=1",
            2,
            "total_attempts=1\nexit_code=2\n",
            &[],
        ),
        (
            "command=no-such-program\nmax_attempts=1",
            127,
            "total_attempts=1\n",
            &[],
        ),
    ];
    for &(inputs, status, outputs, lines) in cases {
        let runner = Runner::new();
        let mut all = vec![("retry_wait_seconds", "0")];
        all.extend(inputs.lines().filter_map(|line| line.split_once('=')));
        let ran = runner
            .step(&release.url(), &all)
            .env("GITHUB_ACTIONS", "true")
            .output()
            .unwrap();
        let (said, got) = (stderr(&ran), runner.outputs());
        assert_eq!(code(&ran), status, "{inputs}: {said}");
        assert!(got.starts_with(outputs), "{inputs}: {got}");
        let attempts = !outputs.starts_with("total_attempts=0");
        assert_eq!(runner.read("path").is_empty(), !attempts, "{inputs}");
        for line in lines {
            match line.strip_prefix('!') {
                Some(line) => assert!(!said.contains(line), "{inputs}: {said}"),
                None => assert_eq!(said.matches(line).count(), 1, "{inputs}: {said}"),
            }
        }
    }
}

/// Every variable retry reads (its --help's `[env: ...]`), as a job sets
/// them for the retry of its `run:` steps, each to a value retry would
/// refuse: the Action's run takes none (issue 50: RETRY_MAX_ATTEMPTS=1,
/// RETRY_QUIET=true changed its attempts and annotations). The command
/// and the hook get each back byte for byte (but a store's, which retry
/// keeps from both), as under `run: retry`.
#[test]
fn a_job_s_retry_variables_change_nothing_and_reach_the_command_as_they_were() {
    use std::os::unix::ffi::OsStrExt;
    let help = Command::new(env!("CARGO_BIN_EXE_retry"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let names: Vec<&str> = help
        .split("[env: ")
        .skip(1)
        .filter_map(|rest| rest.split('=').next())
        .collect();
    assert!(
        names.contains(&"RETRY_PRESET") && names.len() > 40,
        "{names:?}"
    );
    // Quotes, a line end, $(...), `...`, a byte that is no UTF-8.
    let value = std::ffi::OsStr::from_bytes(b"1s' \"$(touch pwned)\"\n`touch pwned` \xff");
    let release = Release::new();
    let runner = Runner::new();
    let mut step = runner.step(
        &release.url(),
        &[
            (
                "command",
                "printf %s \"$RETRY_MAX_ATTEMPTS\" > seen; env > env; exit $((RETRY_ATTEMPT < 3))",
            ),
            ("on_retry_command", "printf %s \"$RETRY_QUIET\" > hook-seen"),
            ("retry_wait_seconds", "0"),
        ],
    );
    for name in &names {
        step.env(name, value);
    }
    let ran = step.env("GITHUB_ACTIONS", "true").output().unwrap();
    let said = stderr(&ran);
    assert_eq!(code(&ran), 0, "{said}");
    assert!(
        runner
            .outputs()
            .starts_with("total_attempts=3\nexit_code=0\n"),
        "{}",
        runner.outputs()
    );
    assert_eq!(
        said.matches("::warning title=retry%3A ").count(),
        2,
        "{said}"
    );
    assert!(!runner.file("pwned").exists());
    for file in ["seen", "hook-seen"] {
        assert_eq!(std::fs::read(runner.file(file)).unwrap(), value.as_bytes());
    }
    let env = runner.read("env");
    for kept in ["RETRY_STORE=", "RETRY_BUDGET_STORE=", "RETRY_ACTION_"] {
        assert!(!env.contains(kept), "{kept}: {env}");
    }
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

/// docs/action.md lists the differences issue 50 found it omitted.
#[test]
fn docs_action_md_names_each_difference_seen() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/action.md"))
        .unwrap();
    let seen = "`max_attempts: 0`|`retry_wait_seconds: 0`|SIGTERM|`$GITHUB_OUTPUT`|job summary|\
                `on_retry_command` that fails|error annotation|stderr|`GITHUB_PATH`|255|\
                `retry_on: output`|`RETRY_*`";
    for seen in seen.split('|') {
        assert!(doc.contains(seen), "docs/action.md does not name {seen}");
    }
}
