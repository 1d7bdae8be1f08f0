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

// A run that is inputs, an environment and what it gives is a row of a
// table (`table::Case`); what needs more than that stays a function.
mod cache;
mod cases;
mod inputs;
mod install;
mod pin;
mod table;

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

    /// The step of a job that pins the Action to `reference` (a commit, a
    /// branch) of `release`'s repository, with no mirror, running `command`.
    fn pinned(&self, release: &Release, reference: &str, command: &str) -> Command {
        let mut step = self.step("", &[("command", command)]);
        step.env_remove("RETRY_INSTALL_FROM")
            .env("RETRY_ACTION_REPOSITORY", release.repository())
            .env("RETRY_ACTION_REF", reference);
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

/// An install that failed: nothing ran, nothing was installed or put on
/// PATH, and the outputs say why, as on every way out (issue 50): no
/// attempt, exit code 1, the last line shown.
#[track_caller]
fn nothing_ran(name: &str, runner: &Runner, ran: &Output) {
    let said = stderr(ran);
    let line = said.lines().last().unwrap_or_default();
    let line = line.strip_prefix("retry action: ").unwrap_or(line);
    assert_eq!(
        runner.outputs(),
        format!("total_attempts=0\nexit_code=1\nexit_error={line}\nreason={line}\n"),
        "{name}"
    );
    nothing_ran_but_outputs(name, runner);
}

/// A bad input: nothing ran, and the outputs say why, as nick-fields'
/// do for any failure: no attempt, exit code 2, the line that was shown.
#[track_caller]
fn refused(name: &str, runner: &Runner, ran: &Output) {
    let said = stderr(ran);
    let line = said
        .strip_prefix("retry action: ")
        .unwrap_or(&said)
        .trim_end();
    assert_eq!(
        runner.outputs(),
        format!("total_attempts=0\nexit_code=2\nexit_error={line}\nreason={line}\n"),
        "{name}"
    );
    nothing_ran_but_outputs(name, runner);
}

#[track_caller]
fn nothing_ran_but_outputs(name: &str, runner: &Runner) {
    assert!(!runner.file("ran").exists(), "{name}: the command ran");
    assert_eq!(runner.read("path"), "", "{name}: put on PATH");
    let installed = runner
        .file("runner-temp/retry-action")
        .join(format!("{VERSION}-{TARGET}"));
    assert!(!installed.exists(), "{name}: {installed:?} was installed");
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

#[cfg(feature = "redis")] // only the store tests use it
/// The lines a command wrote with `env > FILE`, without the runner's own.
fn environment(runner: &Runner, name: &str) -> String {
    let seen = runner.read(name);
    assert!(!seen.is_empty(), "{name} was not written");
    seen
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

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
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

#[cfg(feature = "redis")] // only the store tests use it
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

#[cfg(feature = "redis")] // only the store tests use it
fn found(tool: &str) -> PathBuf {
    ["/usr/local/bin", "/usr/bin", "/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(tool))
        .find(|path| path.exists())
        .unwrap_or_else(|| panic!("no {tool}"))
}
