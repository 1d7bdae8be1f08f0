//! scripts/install.sh, run for real: against a release served from
//! 127.0.0.1 (an archive packaged as scripts/dist.sh packages one, holding
//! this build's binary), into a temporary HOME or --prefix. And the one
//! rule for the release's file names, held across release.yml and every
//! script that computes them.

use crate::harness::loopback::Server;
use crate::harness::{BIN, outputs, scratch, wait_bounded};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

// As root, through sudo, into /usr/local.
mod root;
// Without curl, and downloads bounded as a whole.
mod without_curl;
// The README's GitLab snippet and cargo-binstall.
mod recipes;
// What the script will not trust or show.
mod guards;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The release's name for a target's archive: `retry-VERSION-TARGET`, a
/// .tar.gz, a .zip for Windows (release.yml's two jobs), each with a
/// `.sha256` of the same name.
fn rule(version: &str, target: &str) -> String {
    let ext = if target.contains("-windows-") {
        "zip"
    } else {
        "tar.gz"
    };
    format!("retry-{version}-{target}.{ext}")
}

/// The scripts that compute the release's names, each between the lines
/// `# ---- names: ...` and `# ---- end of names ----`: `archive_for
/// VERSION TARGET` in each, and `target_for` with the machine's words in
/// those that pick a target (`uname -s` and `uname -m` for install.sh,
/// RUNNER_OS and RUNNER_ARCH for the action's script).
const NAMERS: &[&str] = &["scripts/dist.sh", "scripts/install.sh", "scripts/action.sh"];

/// (script, target_for's two words, the target it must pick; "" for a
/// machine it must refuse). Every target picked is one release.yml builds.
const PICKS: &[(&str, &str, &str, &str)] = &[
    // musl on x86_64 Linux: the README's recommendation.
    (
        "scripts/install.sh",
        "Linux",
        "x86_64",
        "x86_64-unknown-linux-musl",
    ),
    (
        "scripts/install.sh",
        "Linux",
        "aarch64",
        "aarch64-unknown-linux-gnu",
    ),
    (
        "scripts/install.sh",
        "Darwin",
        "arm64",
        "aarch64-apple-darwin",
    ),
    (
        "scripts/install.sh",
        "Darwin",
        "x86_64",
        "x86_64-apple-darwin",
    ),
    ("scripts/install.sh", "FreeBSD", "amd64", ""),
    ("scripts/install.sh", "Linux", "armv7l", ""),
    ("scripts/install.sh", "MINGW64_NT-10.0", "x86_64", ""),
    // GitHub's runners, by the words GitHub gives them.
    (
        "scripts/action.sh",
        "Linux",
        "X64",
        "x86_64-unknown-linux-musl",
    ),
    (
        "scripts/action.sh",
        "Linux",
        "ARM64",
        "aarch64-unknown-linux-gnu",
    ),
    (
        "scripts/action.sh",
        "macOS",
        "ARM64",
        "aarch64-apple-darwin",
    ),
    ("scripts/action.sh", "macOS", "X64", "x86_64-apple-darwin"),
    (
        "scripts/action.sh",
        "Windows",
        "X64",
        "x86_64-pc-windows-msvc",
    ),
    ("scripts/action.sh", "Windows", "ARM64", ""),
    ("scripts/action.sh", "Linux", "ARM", ""),
];

/// Runs `call` after a script's names block, with the script's own shell
/// (its `#!` line): its output's one line, or None if the call failed.
fn names(script: &str, call: &str) -> Option<String> {
    let text = std::fs::read_to_string(repo(script)).unwrap();
    let start = text
        .find("\n# ---- names:")
        .unwrap_or_else(|| panic!("{script} has no `# ---- names:` block"));
    let end = text[start..]
        .find("\n# ---- end of names ----")
        .unwrap_or_else(|| panic!("{script}'s names block has no end"))
        + start;
    let shell = if text.starts_with("#!/bin/sh") {
        "sh"
    } else {
        "bash"
    };
    let out = Command::new(shell)
        .arg("-c")
        .arg(format!("{}\n{call}", &text[start..end]))
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap().trim_end().to_owned())
}

/// The targets release.yml builds with scripts/dist.sh (its `build`
/// matrix), and the Windows job's .zip name, evaluated for `version`.
fn release_yml(version: &str) -> (Vec<String>, String) {
    let yml = std::fs::read_to_string(repo(".github/workflows/release.yml")).unwrap();
    for line in [
        "TARGET: ${{ matrix.target }}",
        "bin=$(bash scripts/dist.sh \"$TARGET\")",
        "target/artifacts/*.tar.gz",
        "target/artifacts/*.tar.gz.sha256",
        "target/artifacts/*.zip.sha256",
    ] {
        assert!(
            yml.lines().any(|l| l.trim() == line),
            "release.yml no longer has {line:?}: update tests/integration/install.rs"
        );
    }
    let targets: Vec<String> = yml
        .lines()
        .filter_map(|l| l.trim().strip_prefix("target: "))
        .filter(|t| {
            t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
        })
        .map(str::to_owned)
        .collect();
    assert!(targets.len() >= 4, "release.yml's matrix: {targets:?}");
    // The Windows job names its .zip in two lines of its own.
    let windows: Vec<&str> = yml
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("target=") || l.starts_with("name=\"retry-"))
        .collect();
    assert_eq!(windows.len(), 2, "release.yml's Windows names: {windows:?}");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{}\n{}\necho \"$name.zip\"",
            windows[0], windows[1]
        ))
        .env("GITHUB_REF_NAME", format!("v{version}"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let zip = String::from_utf8(out.stdout).unwrap().trim_end().to_owned();
    (targets, zip)
}

#[test]
fn release_yml_and_the_scripts_name_archives_by_one_rule() {
    let version = "9.8.7-rc.1";
    let (targets, zip) = release_yml(version);
    assert_eq!(zip, rule(version, "x86_64-pc-windows-msvc"));
    for target in &targets {
        let expected = rule(version, target);
        let got = names(
            "scripts/dist.sh",
            &format!("archive_for {version} {target}"),
        );
        assert_eq!(got.as_deref(), Some(&*expected), "dist.sh for {target}");
    }
    for &(script, os, arch, pick) in PICKS {
        assert!(NAMERS.contains(&script), "{script} is not in NAMERS");
        let picked = names(script, &format!("target_for '{os}' '{arch}'"));
        if pick.is_empty() {
            assert_eq!(picked, None, "{script} on {os} {arch} must refuse");
            continue;
        }
        assert_eq!(picked.as_deref(), Some(pick), "{script} on {os} {arch}");
        let release = rule(version, pick);
        assert!(
            targets.iter().any(|t| t == pick) || release == zip,
            "{script} picks {pick} on {os} {arch}, which release.yml does not build"
        );
        let got = names(script, &format!("archive_for {version} {pick}"));
        assert_eq!(
            got.as_deref(),
            Some(&*release),
            "{script}'s name for {pick}"
        );
    }
    // The version install.sh installs is Cargo.toml's (release.yml checks
    // that the tag names the same one, and that the script says it).
    let script = std::fs::read_to_string(repo("scripts/install.sh")).unwrap();
    assert!(
        script
            .lines()
            .any(|l| l == format!("RETRY_VERSION='{VERSION}'")),
        "scripts/install.sh's RETRY_VERSION is not Cargo.toml's {VERSION}"
    );
}

/// The archive for this machine, packaged as scripts/dist.sh packages one
/// (its `--docs`) but with this build's binary, and its .sha256 line: built once and
/// shared by the tests running at the same time (the debug binary is
/// large), removed when the last of them drops it.
struct Package {
    dir: tempfile::TempDir,
    archive: String,
    sha256: String,
}

fn package() -> Arc<Package> {
    static SHARED: Mutex<Weak<Package>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(package) = shared.upgrade() {
        return package;
    }
    let package = Arc::new(Package::build());
    *shared = Arc::downgrade(&package);
    package
}

impl Package {
    fn build() -> Package {
        let uname = |flag| {
            let out = Command::new("uname").arg(flag).output().unwrap();
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        };
        let target = names(
            "scripts/install.sh",
            &format!("target_for '{}' '{}'", uname("-s"), uname("-m")),
        )
        .expect("a release build for this machine");
        let archive = names(
            "scripts/install.sh",
            &format!("archive_for {VERSION} {target}"),
        )
        .unwrap();
        let dir = scratch();
        let top = dir.path().join(archive.trim_end_matches(".tar.gz"));
        // What every release archive holds beside the binary, put there by
        // scripts/dist.sh itself.
        let docs = Command::new("bash")
            .arg(repo("scripts/dist.sh"))
            .arg("--docs")
            .arg(&top)
            .status()
            .unwrap();
        assert!(docs.success(), "bash scripts/dist.sh --docs");
        std::fs::copy(BIN, top.join("retry")).unwrap();
        // gzip -1: the debug binary is tens of MB; the format is the same.
        let packed = Command::new("sh")
            .arg("-c")
            .arg(
                "tar -cf - \"$1\" | gzip -1 >\"$2\" && \
                 { sha256sum \"$2\" 2>/dev/null || shasum -a 256 \"$2\"; }",
            )
            .args(["sh", top.file_name().unwrap().to_str().unwrap(), &archive])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(packed.status.success(), "{packed:?}");
        std::fs::remove_dir_all(&top).unwrap();
        Package {
            dir,
            archive,
            sha256: String::from_utf8(packed.stdout).unwrap(),
        }
    }
}

/// A release's files, served from 127.0.0.1 by their own names (404 for
/// anything else) until dropped: the package's archive and its .sha256
/// (`sha256` overrides the sum in it).
struct Release {
    server: Server,
    archive: String,
    _package: Arc<Package>,
}

impl Release {
    fn serve(sha256: Option<&str>) -> Release {
        Release::serve_with(sha256, None)
    }

    /// The same, and the files in `extra` by their names.
    fn serve_with(sha256: Option<&str>, extra: Option<PathBuf>) -> Release {
        let package = package();
        let archive = package.archive.clone();
        let sum_line = match sha256 {
            Some(fake) => format!("{fake}  {archive}\n"),
            None => package.sha256.clone(),
        };
        let (shared, name) = (Arc::clone(&package), archive.clone());
        let server = Server::start(move |mut stream, _| {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head);
            let asked = head
                .strip_prefix("GET /")
                .and_then(|rest| rest.split(' ').next())
                .unwrap_or("");
            let body = if asked == name {
                std::fs::read(shared.dir.path().join(&name)).ok()
            } else if asked == format!("{name}.sha256") {
                Some(sum_line.clone().into_bytes())
            } else {
                extra
                    .as_ref()
                    .filter(|_| !asked.is_empty() && !asked.contains('/'))
                    .and_then(|dir| std::fs::read(dir.join(asked)).ok())
            };
            let (status, body) = match body {
                Some(body) => ("200 OK", body),
                None => ("404 Not Found", b"not here\n".to_vec()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        });
        Release {
            server,
            archive,
            _package: package,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.server.port())
    }
}

/// PATH for the script: the system's tools (curl, tar, sha256sum), and
/// `first` before them.
fn path_with(first: &[&Path]) -> String {
    let mut dirs: Vec<String> = first.iter().map(|d| d.display().to_string()).collect();
    dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(String::from));
    dirs.join(":")
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// `sh scripts/install.sh ARGS` with only the given environment (and a
/// TMPDIR of the test's own, its working directory too), bounded.
fn install(args: &[&str], env: &[(&str, &str)], tmp: &Path) -> Ran {
    install_with("sh", args, env, tmp)
}

/// A directory holding an `id` that answers `uid` to `id -u`, to put
/// first on PATH: the script installs as a user or as root, whoever runs
/// the tests (run as root, no test installs into the real /usr/local).
fn id_saying(uid: u32) -> tempfile::TempDir {
    let dir = scratch();
    let id = dir.path().join("id");
    std::fs::write(&id, format!("#!/bin/sh\necho {uid}\n")).unwrap();
    executable(&id);
    dir
}

/// The same under another shell (bash, as `bash install.sh` runs it), as
/// a user (`id_saying(1000)` first on PATH).
fn install_with(shell: &str, args: &[&str], env: &[(&str, &str)], tmp: &Path) -> Ran {
    install_as(1000, shell, args, env, tmp)
}

/// The same as the user `uid` tells the script it is (`id_saying`); as
/// root (0) only with a `--prefix`, never to the real /usr/local.
fn install_as(uid: u32, shell: &str, args: &[&str], env: &[(&str, &str)], tmp: &Path) -> Ran {
    assert!(
        uid != 0 || args.contains(&"--prefix"),
        "as root without --prefix"
    );
    let user = id_saying(uid);
    let path = env
        .iter()
        .find(|(key, _)| *key == "PATH")
        .map_or_else(|| path_with(&[]), |(_, path)| (*path).to_owned());
    let mut command = Command::new(shell);
    command
        .arg(repo("scripts/install.sh"))
        .args(args)
        .env_clear()
        .env("TMPDIR", tmp)
        .envs(env.iter().copied())
        .env("PATH", format!("{}:{path}", user.path().display()))
        .current_dir(tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    let took = started.elapsed();
    let (stdout, stderr) = outputs(&mut child);
    Ran {
        code: status.code(),
        stdout,
        stderr,
        took,
    }
}

fn executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found.sort();
    found
}

/// The five files, where they belong under `bin` and `data`, each the
/// same bytes as the release's.
#[track_caller]
fn assert_installed(ran: &Ran, bin: &Path, data: &Path) {
    assert_eq!(ran.code, Some(0), "{}{}", ran.stdout, ran.stderr);
    for (path, source) in [
        (bin.join("retry"), PathBuf::from(BIN)),
        (data.join("man/man1/retry.1"), repo("man/retry.1")),
        (
            data.join("bash-completion/completions/retry"),
            repo("completions/retry.bash"),
        ),
        (
            data.join("zsh/site-functions/_retry"),
            repo("completions/_retry"),
        ),
        (
            data.join("fish/vendor_completions.d/retry.fish"),
            repo("completions/retry.fish"),
        ),
    ] {
        assert_eq!(
            std::fs::read(&path).unwrap_or_default(),
            std::fs::read(&source).unwrap(),
            "{} is not the release's {}",
            path.display(),
            source.display()
        );
        let said = format!("installed {}\n", path.display());
        assert!(ran.stdout.contains(&said), "no {said:?} in\n{}", ran.stdout);
    }
    let version = Command::new(bin.join("retry"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).starts_with(&format!("retry {VERSION} ")));
}

#[test]
fn installs_into_the_users_own_directories_and_says_where() {
    let release = Release::serve(None);
    let (home, tmp) = (scratch(), scratch());
    let home_str = home.path().to_str().unwrap();
    let ran = install(
        &[],
        &[
            ("HOME", home_str),
            ("PATH", &path_with(&[])),
            ("RETRY_INSTALL_FROM", &release.url()),
        ],
        tmp.path(),
    );
    let bin = home.path().join(".local/bin");
    assert_installed(&ran, &bin, &home.path().join(".local/share"));
    assert!(
        ran.stdout
            .contains(&format!("{} is not on PATH: add it", bin.display())),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stderr.contains(&format!(
            "{} from {}",
            release.archive,
            release.url().trim_end_matches('/')
        )),
        "{}",
        ran.stderr
    );
    assert_eq!(files_under(tmp.path()), Vec::<String>::new(), "left behind");
}

#[test]
fn honours_xdg_data_home() {
    let release = Release::serve(None);
    let (home, data, tmp) = (scratch(), scratch(), scratch());
    let bin = home.path().join(".local/bin");
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("XDG_DATA_HOME", data.path().to_str().unwrap()),
            ("PATH", &path_with(&[&bin])),
            ("RETRY_INSTALL_FROM", &release.url()),
        ],
        tmp.path(),
    );
    assert_installed(&ran, &bin, data.path());
    assert!(
        ran.stdout
            .contains(&format!("{} is on PATH\n", bin.display())),
        "{}",
        ran.stdout
    );
    assert!(!ran.stdout.contains("another retry"), "{}", ran.stdout);
}

/// A relative HOME (or one that reads as an option) is no place to
/// install to: one line, exit 2, nothing written; a relative
/// XDG_DATA_HOME is ignored, as the XDG rules say.
#[test]
fn a_relative_home_is_refused_and_a_relative_xdg_data_home_ignored() {
    let release = Release::serve(None);
    for home in ["rel", "-x"] {
        // The script runs in `tmp` (its TMPDIR too): a relative HOME
        // would be below it.
        let tmp = scratch();
        let ran = install(
            &[],
            &[
                ("HOME", home),
                ("PATH", &path_with(&[])),
                ("RETRY_INSTALL_FROM", &release.url()),
            ],
            tmp.path(),
        );
        assert_eq!(ran.code, Some(2), "{home}: {}", ran.stderr);
        assert!(
            ran.stderr.contains(&format!(
                "HOME={home} is not an absolute path: give --prefix DIR"
            )),
            "{}",
            ran.stderr
        );
        assert_eq!(files_under(tmp.path()), Vec::<String>::new(), "{home}");
    }
    let (home, tmp) = (scratch(), scratch());
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("XDG_DATA_HOME", "relative/share"),
            ("PATH", &path_with(&[])),
            ("RETRY_INSTALL_FROM", &release.url()),
        ],
        tmp.path(),
    );
    let bin = home.path().join(".local/bin");
    assert_installed(&ran, &bin, &home.path().join(".local/share"));
}

#[test]
fn installs_under_a_prefix_and_names_another_retry_first_on_path_and_in_man() {
    let release = Release::serve(None);
    let (home, prefix, other, tmp) = (scratch(), scratch(), scratch(), scratch());
    // Another retry first on PATH (as Debian's /usr/bin/retry would be),
    // and its man page first in MANPATH.
    let other_bin = other.path().join("bin");
    std::fs::create_dir_all(other.path().join("man/man1")).unwrap();
    std::fs::create_dir_all(&other_bin).unwrap();
    std::fs::write(other.path().join("man/man1/retry.1"), ".TH RETRY 1\n").unwrap();
    std::fs::write(other_bin.join("retry"), "#!/bin/sh\nexit 0\n").unwrap();
    executable(&other_bin.join("retry"));
    let bin = prefix.path().join("bin");
    let manpath = format!(
        "{}:{}",
        other.path().join("man").display(),
        prefix.path().join("share/man").display()
    );
    let ran = install(
        &["--prefix", prefix.path().to_str().unwrap()],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("PATH", &path_with(&[&other_bin, &bin])),
            ("MANPATH", &manpath),
            ("RETRY_INSTALL_FROM", &release.url()),
        ],
        tmp.path(),
    );
    assert_installed(&ran, &bin, &prefix.path().join("share"));
    assert_eq!(
        files_under(home.path()),
        Vec::<String>::new(),
        "HOME touched"
    );
    assert!(
        ran.stdout.contains(&format!(
            "another retry comes first on PATH: {}",
            other_bin.join("retry").display()
        )),
        "{}",
        ran.stdout
    );
    let has_man = Command::new("sh")
        .args(["-c", "command -v man"])
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success();
    if has_man {
        assert!(
            ran.stdout.contains(&format!(
                "man retry opens another page first: {}",
                other.path().join("man/man1/retry.1").display()
            )),
            "{}",
            ran.stdout
        );
    } else {
        eprintln!("man is not installed: its check skipped");
    }
}

#[test]
fn without_a_place_to_download_from_it_says_how_to_give_one() {
    let (home, tmp) = (scratch(), scratch());
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("PATH", &path_with(&[])),
        ],
        tmp.path(),
    );
    assert_eq!(ran.code, Some(1));
    assert_eq!(ran.stderr.lines().count(), 1, "{}", ran.stderr);
    assert!(
        ran.stderr.contains("set RETRY_INSTALL_FROM=URL"),
        "{}",
        ran.stderr
    );
    assert_eq!(files_under(home.path()), Vec::<String>::new());
}

#[test]
fn a_machine_without_a_release_build_is_refused_in_one_line() {
    let (home, fake, tmp) = (scratch(), scratch(), scratch());
    std::fs::write(
        fake.path().join("uname"),
        "#!/bin/sh\ncase $1 in -s) echo SunOS ;; *) echo sparc64 ;; esac\n",
    )
    .unwrap();
    executable(&fake.path().join("uname"));
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("PATH", &path_with(&[fake.path()])),
            ("RETRY_INSTALL_FROM", "http://127.0.0.1:9/"),
        ],
        tmp.path(),
    );
    assert_eq!(ran.code, Some(1));
    assert_eq!(
        ran.stderr.lines().collect::<Vec<_>>(),
        [
            "install: no release build for SunOS sparc64 (there are x86_64 and aarch64 Linux, and macOS): build from source with cargo install"
        ]
    );
}

#[test]
fn a_bad_argument_is_a_usage_error() {
    let tmp = scratch();
    let ran = install(&["--prefx", "/x"], &[("PATH", &path_with(&[]))], tmp.path());
    assert_eq!(ran.code, Some(2));
    assert!(
        ran.stderr
            .starts_with("install: unknown argument: --prefx\n"),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_failed_download_gives_curl_s_own_status_under_sh_and_bash() {
    let port = crate::harness::loopback::closed_port();
    for shell in ["sh", "bash"] {
        let (home, tmp) = (scratch(), scratch());
        let ran = install_with(
            shell,
            &[],
            &[
                ("HOME", home.path().to_str().unwrap()),
                ("PATH", &path_with(&[])),
                ("RETRY_INSTALL_FROM", &format!("http://127.0.0.1:{port}/")),
            ],
            tmp.path(),
        );
        assert_eq!(ran.code, Some(1), "{shell}: {}", ran.stderr);
        assert!(
            ran.stderr
                .lines()
                .last()
                .unwrap_or("")
                .ends_with(".sha256: cannot connect (curl exit 7)"),
            "{shell}: {}",
            ran.stderr
        );
    }
}

#[test]
fn an_install_timeout_of_zero_is_a_usage_error() {
    for value in [
        "0",
        "000",
        "1.5",
        "ten",
        "-1",
        "1000000000",
        "99999999999999999999",
    ] {
        let (home, tmp) = (scratch(), scratch());
        let ran = install(
            &[],
            &[
                ("HOME", home.path().to_str().unwrap()),
                ("PATH", &path_with(&[])),
                ("RETRY_INSTALL_FROM", "http://127.0.0.1:9/"),
                ("RETRY_INSTALL_TIMEOUT", value),
            ],
            tmp.path(),
        );
        assert_eq!(ran.code, Some(2), "{value}: {}", ran.stderr);
        assert_eq!(
            ran.stderr,
            format!(
                "install: RETRY_INSTALL_TIMEOUT={value}: not a number of seconds (1 to 999999999) for each download\n"
            )
        );
    }
}

/// As root, `sh ARGS` (`sh` a path) in a mount namespace of its own
/// whose /usr/local is an empty tmpfs: what the script installs there
/// goes with it, and the real /usr/local is never touched. `None` when not
/// root, or where no such namespace can be made (a container without
/// CAP_SYS_ADMIN), and the test skips that case, saying so.
fn with_own_usr_local(sh: &Path, args: &[&str]) -> Option<Command> {
    if !nix::unistd::geteuid().is_root() {
        return None;
    }
    const MOUNT: &str = "/usr/bin/mount -t tmpfs retry-test /usr/local";
    let made = Command::new("/usr/bin/unshare")
        .args(["-m", "/bin/sh", "-c", MOUNT])
        .stderr(Stdio::null())
        .status();
    if !made.is_ok_and(|status| status.success()) {
        eprintln!("note: no mount namespace with a /usr/local of its own (unshare -m): skipped");
        return None;
    }
    let mut command = Command::new("/usr/bin/unshare");
    command
        .args([
            "-m",
            "/bin/sh",
            "-c",
            &format!("{MOUNT} && exec \"$@\""),
            "sh",
        ])
        .arg(sh)
        .args(args);
    Some(command)
}
