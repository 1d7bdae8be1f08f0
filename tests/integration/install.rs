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
/// TMPDIR of the test's own), bounded.
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
fn a_checksum_mismatch_installs_nothing() {
    let release = Release::serve(Some(&"0".repeat(64)));
    let (home, tmp) = (scratch(), scratch());
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("PATH", &path_with(&[])),
            ("RETRY_INSTALL_FROM", &release.url()),
        ],
        tmp.path(),
    );
    assert_eq!(ran.code, Some(1), "{}{}", ran.stdout, ran.stderr);
    let last = ran.stderr.lines().last().unwrap_or("");
    assert!(
        last.starts_with(&format!(
            "install: checksum mismatch for {}",
            release.archive
        )) && last.ends_with("; nothing installed"),
        "{}",
        ran.stderr
    );
    assert_eq!(ran.stdout, "");
    assert_eq!(files_under(home.path()), Vec::<String>::new());
    assert_eq!(files_under(tmp.path()), Vec::<String>::new());
}

#[test]
fn a_server_that_never_answers_is_bounded() {
    // Connections complete in the kernel's backlog; nothing ever reads or
    // answers them. Closed when the test ends.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    // A private mirror's password is never shown.
    let url = format!("http://me:s3cret@{}/", silent.local_addr().unwrap());
    let (home, tmp) = (scratch(), scratch());
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("PATH", &path_with(&[])),
            ("RETRY_INSTALL_FROM", &url),
            ("RETRY_INSTALL_TIMEOUT", "1"),
        ],
        tmp.path(),
    );
    assert_eq!(ran.code, Some(1), "{}{}", ran.stdout, ran.stderr);
    assert!(ran.took < Duration::from_secs(10), "took {:?}", ran.took);
    assert!(
        ran.stderr
            .lines()
            .last()
            .unwrap_or("")
            .starts_with("install: could not download http://***@"),
        "{}",
        ran.stderr
    );
    assert!(!ran.stderr.contains("s3cret"), "{}", ran.stderr);
    assert_eq!(files_under(home.path()), Vec::<String>::new());
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
fn a_mirror_s_password_is_never_shown_whatever_it_holds() {
    let port = crate::harness::loopback::closed_port();
    for password in [
        "Pw1/Pw2",
        "Pw1?Pw2",
        "Pw1#Pw2",
        "Pw1@Pw2",
        "Pw1:Pw2",
        "Pw1/Pw2?Pw3#Pw4@Pw5:Pw6",
    ] {
        let (home, tmp) = (scratch(), scratch());
        let url = format!("http://me:{password}@127.0.0.1:{port}/");
        let ran = install(
            &[],
            &[
                ("HOME", home.path().to_str().unwrap()),
                ("PATH", &path_with(&[])),
                ("RETRY_INSTALL_FROM", &url),
            ],
            tmp.path(),
        );
        assert_eq!(ran.code, Some(1), "{password}: {}", ran.stderr);
        assert!(
            ran.stderr
                .lines()
                .last()
                .unwrap_or("")
                .starts_with(&format!(
                    "install: could not download http://***@127.0.0.1:{port}/retry-"
                )),
            "{password}: {}",
            ran.stderr
        );
        assert!(!ran.stderr.contains("Pw"), "{password}: {}", ran.stderr);
        assert_eq!(files_under(home.path()), Vec::<String>::new());
    }
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

/// A `sudo` that answers `sudo -n -l` with `secure_path`, as sudo lists
/// its defaults to root, and writes how it was called to `log`.
fn fake_sudo(dir: &Path, secure_path: &str, log: &Path) {
    let sudo = dir.join("sudo");
    let escaped = secure_path.replace(':', "\\:");
    std::fs::write(
        &sudo,
        format!(
            "#!/bin/sh\necho \"$*\" >>'{}'\n\
             echo 'Matching Defaults entries for root on ci:'\n\
             echo '    env_reset, mail_badpass, secure_path={escaped}, use_pty'\n\
             echo\necho 'User root may run the following commands on ci:'\n\
             echo '    (ALL : ALL) ALL'\n",
            log.display()
        ),
    )
    .unwrap();
    executable(&sudo);
}

/// A retry of another project at `dir/retry` (Debian's, say).
fn another_retry(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let other = dir.join("retry");
    std::fs::write(&other, "#!/bin/sh\nexit 0\n").unwrap();
    executable(&other);
    other
}

/// Under sudo a command is looked up on sudo's `secure_path`, not on
/// PATH: `sudo -u nobody retry` ran Debian's /usr/bin/retry. The script
/// says when another retry would come first there: as root from sudo's own
/// list (`sudo -n -l`), as another user (who may not read sudoers, and is
/// never made to run sudo) from Debian's and Ubuntu's, on Linux.
#[test]
fn another_retry_first_on_sudos_secure_path_is_named() {
    let release = Release::serve(None);
    let (home, prefix, other, fake, tmp) = (scratch(), scratch(), scratch(), scratch(), scratch());
    let bin = prefix.path().join("bin");
    let other = another_retry(&other.path().join("sbin"));
    let log = fake.path().join("sudo.log");
    let secure = format!(
        "{}:{}:/usr/bin",
        other.parent().unwrap().display(),
        bin.display()
    );
    fake_sudo(fake.path(), &secure, &log);
    let env = [
        ("HOME", home.path().to_str().unwrap()),
        ("PATH", &path_with(&[fake.path(), &bin])),
        ("RETRY_INSTALL_FROM", &release.url()),
    ];
    let args = ["--prefix", prefix.path().to_str().unwrap()];
    let ran = install_as(0, "sh", &args, &env, tmp.path());
    assert_installed(&ran, &bin, &prefix.path().join("share"));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "-n -l\n");
    let said: Vec<&str> = ran.stdout.lines().filter(|l| l.contains("sudo")).collect();
    assert_eq!(
        said,
        [format!(
            "under sudo another retry comes first: {}, from sudo's secure_path, {secure} \
             (it has {} before {}); under sudo, give this one's path: {}",
            other.display(),
            other.parent().unwrap().display(),
            bin.display(),
            bin.join("retry").display()
        )],
        "{}",
        ran.stdout
    );
    // As a user: sudo is never run, and the usual secure_path is taken on
    // Linux; what comes first there is whatever this machine has.
    std::fs::remove_file(&log).unwrap();
    let ran = install(&args, &env, tmp.path());
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(!log.exists(), "a user's install ran sudo");
    let usual = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    let first = usual
        .split(':')
        .map(|dir| Path::new(dir).join("retry"))
        .find(|retry| retry.is_file());
    let said: Vec<&str> = ran.stdout.lines().filter(|l| l.contains("sudo")).collect();
    match first {
        Some(first) if cfg!(target_os = "linux") => assert_eq!(
            said,
            [format!(
                "under sudo another retry comes first: {}, from sudo's usual secure_path \
                 (Debian's, Ubuntu's), {usual} (it leaves out {}); under sudo, give this \
                 one's path: {}{}",
                first.display(),
                bin.display(),
                bin.join("retry").display(),
                match first.starts_with("/usr/local/sbin") {
                    true => "",
                    false => ", or install as root (into /usr/local/bin)",
                }
            )],
            "{}",
            ran.stdout
        ),
        _ => assert_eq!(said, Vec::<&str>::new(), "{}", ran.stdout),
    }
}

/// Run as root, the script installs for every user into /usr/local,
/// where sudo's secure_path finds it too, and leaves the HOME it was given
/// (another user's, under `sudo -E` or `su`) alone; it still says when
/// another retry comes first under sudo. In a /usr/local of its own.
#[test]
fn as_root_it_installs_into_usr_local_and_leaves_home_alone() {
    let (home, fake, tmp) = (scratch(), scratch(), scratch());
    let log = fake.path().join("sudo.log");
    fake_sudo(
        fake.path(),
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
        &log,
    );
    // What runs inside: a retry of another project in /usr/local/sbin,
    // the script, then the files it left under /usr/local.
    let script = format!(
        "mkdir -p /usr/local/sbin && printf '#!/bin/sh\\n' >/usr/local/sbin/retry && \
         chmod 755 /usr/local/sbin/retry && sh '{}' && cd /usr/local && find . -type f | sort",
        repo("scripts/install.sh").display()
    );
    let Some(mut command) = with_own_usr_local(Path::new("/bin/sh"), &["-c", &script]) else {
        eprintln!("note: not root, or no mount namespace: skipped (it installs into /usr/local)");
        return;
    };
    let release = Release::serve(None);
    command
        .env_clear()
        .env("HOME", home.path())
        .env("TMPDIR", tmp.path())
        .env("PATH", path_with(&[fake.path()]))
        .env("RETRY_INSTALL_FROM", release.url())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    let (stdout, stderr) = outputs(&mut child);
    assert!(status.success(), "{stdout}{stderr}");
    for file in [
        "installed /usr/local/bin/retry",
        "installed /usr/local/share/man/man1/retry.1",
        "installed /usr/local/share/bash-completion/completions/retry",
        "installed /usr/local/share/zsh/site-functions/_retry",
        "installed /usr/local/share/fish/vendor_completions.d/retry.fish",
        "/usr/local/bin is on PATH",
        "under sudo another retry comes first: /usr/local/sbin/retry, from sudo's secure_path, \
         /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin (it has /usr/local/sbin before \
         /usr/local/bin); under sudo, give this one's path: /usr/local/bin/retry",
    ] {
        assert!(
            stdout.lines().any(|line| line == file),
            "no {file:?} in\n{stdout}"
        );
    }
    let found: Vec<&str> = stdout.lines().filter(|l| l.starts_with("./")).collect();
    assert_eq!(
        found,
        [
            "./bin/retry",
            "./sbin/retry",
            "./share/bash-completion/completions/retry",
            "./share/fish/vendor_completions.d/retry.fish",
            "./share/man/man1/retry.1",
            "./share/zsh/site-functions/_retry",
        ]
    );
    assert_eq!(
        files_under(home.path()),
        Vec::<String>::new(),
        "HOME touched"
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "-n -l\n");
}

/// A directory of links to the system's tools the script needs, without
/// curl (as on Alpine, with busybox's wget), and without `timeout` unless
/// asked for.
fn tools_without_curl(dir: &Path, with_timeout: bool) {
    let mut tools = vec![
        "sh",
        "uname",
        "mktemp",
        "rm",
        "wget",
        "sleep",
        "cat",
        "sed",
        "tar",
        "gzip",
        "sha256sum",
        "cp",
        "chmod",
        "mv",
        "mkdir",
        "dirname",
        "head",
        // For the script's check that timeout(1) works (`timeout 1 true`).
        "true",
    ];
    if with_timeout {
        tools.push("timeout");
    }
    for tool in tools {
        let found = ["/usr/bin", "/bin", "/usr/local/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists());
        if let Some(found) = found {
            std::os::unix::fs::symlink(found, dir.join(tool)).unwrap();
        }
    }
}

/// Debian's busybox, or Alpine's, if there is one here.
fn busybox() -> Option<&'static Path> {
    ["/usr/bin/busybox", "/bin/busybox"]
        .into_iter()
        .map(Path::new)
        .find(|path| path.exists())
}

/// A directory of busybox's applets alone, as on Alpine or in a BusyBox
/// image: its sh, wget, timeout, tar, sha256sum and the rest.
fn busybox_tools(dir: &Path, busybox: &Path) {
    for tool in [
        "sh",
        "uname",
        "mktemp",
        "rm",
        "wget",
        "sleep",
        "cat",
        "sed",
        "tar",
        "gzip",
        "sha256sum",
        "cp",
        "chmod",
        "mv",
        "mkdir",
        "dirname",
        "head",
        "timeout",
        "id",
        "tr",
        "true",
    ] {
        std::os::unix::fs::symlink(busybox, dir.join(tool)).unwrap();
    }
}

#[test]
fn without_curl_a_download_that_trickles_is_bounded_as_a_whole() {
    crate::harness::loopback::installed("wget", "wget");
    // A byte a second: wget's own -T (silence) never ends it. The server
    // stops after 60 bytes, or at once when the client is gone.
    let trickle = Server::start(|mut stream, _| {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n");
        for _ in 0..60 {
            if stream.write_all(b"0").is_err() {
                break;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    // timeout(1), the watchdog a system without it gets, and busybox's
    // sh, wget and timeout (Alpine's), side by side. Each says why it
    // stopped in its own line, and nothing else: no shell's bare
    // "Terminated" before it.
    let mut ways = vec!["timeout(1)", "a watchdog"];
    match busybox() {
        Some(_) => ways.push("busybox"),
        None => eprintln!("note: no busybox here (apt-get install busybox): its case skipped"),
    }
    let url = format!("http://127.0.0.1:{}/", trickle.port());
    let runs: Vec<_> = ways
        .into_iter()
        .map(|way| {
            let url = url.clone();
            std::thread::spawn(move || {
                let (home, tmp, tools) = (scratch(), scratch(), scratch());
                match way {
                    "busybox" => busybox_tools(tools.path(), busybox().unwrap()),
                    _ => tools_without_curl(tools.path(), way == "timeout(1)"),
                }
                // A prefix: busybox's sh runs its own `id`, whatever is
                // on PATH, and as root would aim at /usr/local.
                let prefix = home.path().join(".local");
                let ran = install(
                    &["--prefix", prefix.to_str().unwrap()],
                    &[
                        ("HOME", home.path().to_str().unwrap()),
                        ("PATH", tools.path().to_str().unwrap()),
                        ("RETRY_INSTALL_FROM", &url),
                        ("RETRY_INSTALL_TIMEOUT", "2"),
                    ],
                    tmp.path(),
                );
                (way, ran, files_under(home.path()))
            })
        })
        .collect();
    for run in runs {
        let (way, ran, installed) = run.join().unwrap();
        assert_eq!(ran.code, Some(1), "{way}: {}", ran.stderr);
        assert!(
            ran.took < Duration::from_secs(20),
            "{way}: took {:?}",
            ran.took
        );
        let lines: Vec<&str> = ran.stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{way}: {}", ran.stderr);
        assert!(
            lines[0].starts_with("install: retry-")
                && lines[1].starts_with("install: could not download ")
                && lines[1].ends_with(
                    ".sha256: timed out: not complete within 2 s (RETRY_INSTALL_TIMEOUT)"
                ),
            "{way}: {}",
            ran.stderr
        );
        assert_eq!(installed, Vec::<String>::new(), "{way}");
    }
}

/// The README's GitLab snippet: its `before_script` lines, as one script.
fn gitlab_snippet() -> String {
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let block = readme
        .split("  before_script:")
        .nth(1)
        .expect("the README's GitLab snippet")
        .split("  script:")
        .next()
        .unwrap();
    let lines: Vec<&str> = block
        .lines()
        .filter_map(|l| l.strip_prefix("    - "))
        .collect();
    assert!(
        lines.iter().any(|l| l.contains("sha256sum -c")),
        "the snippet checks install.sh: {lines:?}"
    );
    lines.join("\n")
}

/// The same with its download in the form its comment gives for a
/// system without curl (Alpine, a BusyBox image).
fn gitlab_snippet_with_wget() -> String {
    let snippet = gitlab_snippet();
    let curl = snippet
        .lines()
        .find(|l| l.starts_with("curl "))
        .expect("the snippet's curl line");
    let wget = curl
        .split_once("(no curl): ")
        .expect("the wget form beside curl")
        .1;
    assert!(wget.starts_with("wget "), "{wget}");
    snippet.replace(curl, wget)
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

/// Runs `snippet` under `sh` (the first on PATH) against a release that
/// publishes install.sh, changed if `tampered`: whether it succeeded, its
/// output, and whether retry was installed in HOME. A user, as
/// `id_saying` tells the script; with `as_root` (busybox's sh runs its
/// own `id`), root in a /usr/local of its own, where it must be installed
/// instead (`None` where that cannot be made).
fn run_gitlab_snippet(
    snippet: &str,
    tools: &str,
    tampered: bool,
    as_root: bool,
) -> Option<(bool, String, bool)> {
    // install.sh and its .sha256 as the release publishes them
    // (release.yml calls scripts/dist.sh --install-script).
    let published = scratch();
    let made = Command::new("bash")
        .arg(repo("scripts/dist.sh"))
        .args(["--install-script", "http://127.0.0.1:9/unused"])
        .arg(published.path())
        .status()
        .unwrap();
    assert!(made.success());
    let sum = std::fs::read_to_string(published.path().join("install.sh.sha256")).unwrap();
    let (sum, file) = sum.trim_end().split_once("  ").unwrap();
    assert_eq!(file, "install.sh");
    if tampered {
        let mut script = std::fs::read_to_string(published.path().join("install.sh")).unwrap();
        script.push_str("touch \"$HOME/tampered\"\n");
        std::fs::write(published.path().join("install.sh"), script).unwrap();
    }
    let release = Release::serve_with(None, Some(published.path().to_owned()));
    let (home, cwd, user) = (scratch(), scratch(), id_saying(1000));
    // Where it went, said last (a snippet that fails says nothing more).
    let snippet = format!("{snippet}\nls /usr/local/bin/retry 2>/dev/null || :");
    let sh = Path::new(tools.rsplit(':').next().unwrap()).join("sh");
    let mut command = match as_root {
        true => with_own_usr_local(&sh, &["-ec", &snippet])?,
        false => {
            let mut user = Command::new("sh");
            user.args(["-ec", &snippet]);
            user
        }
    };
    command
        .current_dir(cwd.path())
        .env_clear()
        .env("HOME", home.path())
        .env("TMPDIR", cwd.path())
        .env("PATH", format!("{}:{tools}", user.path().display()))
        .env("RELEASE_URL", release.url().trim_end_matches('/'))
        .env("INSTALL_SHA256", sum)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    let (stdout, stderr) = outputs(&mut child);
    let installed = match as_root {
        true => stdout.ends_with("\n/usr/local/bin/retry\n"),
        false => home.path().join(".local/bin/retry").is_file(),
    };
    assert!(
        !home.path().join("tampered").exists(),
        "a changed install.sh ran"
    );
    Some((status.success(), format!("{stdout}{stderr}"), installed))
}

#[test]
fn the_readme_s_gitlab_snippet_runs_install_sh_only_as_published() {
    let snippet = gitlab_snippet();
    let run = |tampered| run_gitlab_snippet(&snippet, &path_with(&[]), tampered, false).unwrap();
    let (ok, said, installed) = run(false);
    assert!(ok && installed, "{said}");
    let (ok, said, installed) = run(true);
    assert!(!ok && !installed, "{said}");
    assert!(said.contains("install.sh: FAILED"), "{said}");
}

/// Its wget form, where BusyBox is all there is (sh, wget, sha256sum,
/// tar: an Alpine or BusyBox image): installs as published, and refuses a
/// changed script as the curl form does.
#[test]
fn the_readme_s_gitlab_snippet_runs_with_busybox_alone_in_its_wget_form() {
    let Some(busybox) = busybox() else {
        eprintln!("note: no busybox here (apt-get install busybox): skipped");
        return;
    };
    let tools = scratch();
    busybox_tools(tools.path(), busybox);
    let tools = tools.path().to_str().unwrap();
    let snippet = gitlab_snippet_with_wget();
    // busybox's sh runs its own `id`: run as root, the script installs
    // into /usr/local, here a tmpfs of the run's own.
    let root = nix::unistd::geteuid().is_root();
    let Some((ok, said, installed)) = run_gitlab_snippet(&snippet, tools, false, root) else {
        return;
    };
    assert!(ok && installed, "{said}");
    let (ok, said, installed) = run_gitlab_snippet(&snippet, tools, true, root).unwrap();
    assert!(!ok && !installed, "{said}");
    assert!(said.contains("install.sh: FAILED"), "{said}");
}

/// A key's value in a section of Cargo.toml (`key = "value"` lines).
fn cargo_toml_value(section: &str, key: &str) -> Option<String> {
    let toml = std::fs::read_to_string(repo("Cargo.toml")).unwrap();
    let body = toml.split(&format!("\n[{section}]\n")).nth(1)?;
    body.lines()
        .take_while(|l| !l.starts_with('['))
        .find_map(|l| l.strip_prefix(&format!("{key} = \"")))
        .and_then(|v| v.strip_suffix('"'))
        .map(str::to_owned)
}

#[test]
fn cargo_binstall_finds_the_release_s_own_archives() {
    let version = "9.8.7";
    let (targets, _) = release_yml(version);
    let windows = "x86_64-pc-windows-msvc";
    let base = "package.metadata.binstall";
    let repo_url = "https://git.example.test/o/retry";
    let expand = |template: &str, target: &str, ext: &str| {
        template
            .replace("{ repo }", repo_url)
            .replace("{ version }", version)
            .replace("{ target }", target)
            .replace("{ bin }", "retry")
            .replace("{ binary-ext }", ext)
    };
    let bin_dir = cargo_toml_value(base, "bin-dir").expect("binstall's bin-dir");
    for target in targets.iter().map(String::as_str).chain([windows]) {
        let (section, ext) = if target == windows {
            (format!("{base}.overrides.{windows}"), ".exe")
        } else {
            (base.to_owned(), "")
        };
        let url = cargo_toml_value(&section, "pkg-url").expect("binstall's pkg-url");
        let archive = rule(version, target);
        assert_eq!(
            expand(&url, target, ext),
            format!("{repo_url}/releases/download/v{version}/{archive}"),
            "{target}"
        );
        // The archive's one directory, the binary in it (scripts/dist.sh).
        let stem = archive.trim_end_matches(".tar.gz").trim_end_matches(".zip");
        assert_eq!(expand(&bin_dir, target, ext), format!("{stem}/retry{ext}"));
        let format = cargo_toml_value(&section, "pkg-fmt").expect("binstall's pkg-fmt");
        assert_eq!(format, if target == windows { "zip" } else { "tgz" });
    }
    // Templated, never a hosting address.
    let toml = std::fs::read_to_string(repo("Cargo.toml")).unwrap();
    assert!(
        !toml.contains("github.com"),
        "Cargo.toml names a hosting address"
    );
}

/// A stand-in for a download tool, first on PATH: it records its
/// arguments in `log`, then runs `then` with them (`exec REAL "$@"`), or
/// answers `--help` as busybox's wget does.
fn spy(dir: &Path, tool: &str, log: &Path, then: &str) {
    use std::os::unix::fs::PermissionsExt;
    let file = dir.join(tool);
    let _ = std::fs::remove_file(&file);
    std::fs::write(
        &file,
        format!("#!/bin/sh\necho \"$*\" >> '{}'\n{then}\n", log.display()),
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_mirror_s_password_is_on_no_command_line() {
    let release = Release::serve(None);
    let url = release.url().replacen("://", "://me:s3cretMirror@", 1);
    let real = |tool: &str| {
        ["/usr/local/bin", "/usr/bin", "/bin"]
            .iter()
            .map(|dir| Path::new(dir).join(tool))
            .find(|path| path.exists())
            .unwrap()
    };
    // curl, then GNU wget without curl: the URL is not among the arguments
    // that every user of the machine can read (ps).
    for tool in ["curl", "wget"] {
        let (home, tmp, tools) = (scratch(), scratch(), scratch());
        let log = tmp.path().join("args");
        let path = if tool == "curl" {
            path_with(&[tools.path()])
        } else {
            crate::harness::loopback::installed("wget", "wget");
            tools_without_curl(tools.path(), true);
            tools.path().display().to_string()
        };
        spy(
            tools.path(),
            tool,
            &log,
            &format!("exec '{}' \"$@\"", real(tool).display()),
        );
        let ran = install(
            &[],
            &[
                ("HOME", home.path().to_str().unwrap()),
                ("PATH", &path),
                ("RETRY_INSTALL_FROM", &url),
            ],
            tmp.path(),
        );
        assert_eq!(ran.code, Some(0), "{tool}: {}", ran.stderr);
        let args = std::fs::read_to_string(&log).unwrap();
        assert!(args.lines().count() >= 2, "{tool}: {args}");
        assert!(!args.contains("s3cret"), "{tool}: {args}");
    }
    // busybox's wget takes the URL only as an argument: refused, in one line.
    let (home, tmp, tools) = (scratch(), scratch(), scratch());
    let log = tmp.path().join("args");
    tools_without_curl(tools.path(), true);
    spy(
        tools.path(),
        "wget",
        &log,
        "echo 'Usage: wget [-cqS] [--spider] [-O FILE] URL...' >&2; exit 1",
    );
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("PATH", tools.path().to_str().unwrap()),
            ("RETRY_INSTALL_FROM", &url),
        ],
        tmp.path(),
    );
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    assert!(
        ran.stderr.lines().last().unwrap_or("").contains(
            ": busybox's wget takes a URL only as an argument, where every user of this \
             machine can read its password (ps); install curl"
        ),
        "{}",
        ran.stderr
    );
    assert!(!ran.stderr.contains("s3cret"), "{}", ran.stderr);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "--help\n");
    assert_eq!(files_under(home.path()), Vec::<String>::new());
}

#[test]
fn busybox_s_wget_installs_without_curl() {
    // Debian's busybox wget, built without -T, crashes on it (SIGSEGV);
    // Alpine's takes it. Either way the script's own bound is the one.
    let Some(busybox) = busybox() else {
        eprintln!("note: no busybox here (apt-get install busybox): skipped");
        return;
    };
    let release = Release::serve(None);
    let (home, tmp, tools) = (scratch(), scratch(), scratch());
    tools_without_curl(tools.path(), true);
    let _ = std::fs::remove_file(tools.path().join("wget"));
    std::os::unix::fs::symlink(busybox, tools.path().join("wget")).unwrap();
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("PATH", tools.path().to_str().unwrap()),
            ("RETRY_INSTALL_FROM", &release.url()),
        ],
        tmp.path(),
    );
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(home.path().join(".local/bin/retry").is_file());
}

#[test]
fn a_mirror_url_with_a_line_end_is_a_usage_error() {
    // It would end curl's config line, where the URL goes (not argv).
    let release = Release::serve(None);
    let (home, tmp) = (scratch(), scratch());
    let url = format!("{}\noutput = /dev/null", release.url());
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("PATH", &path_with(&[])),
            ("RETRY_INSTALL_FROM", &url),
        ],
        tmp.path(),
    );
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert_eq!(
        ran.stderr,
        "install: RETRY_INSTALL_FROM: a URL holds no control character (a line end?)\n"
    );
    assert_eq!(files_under(home.path()), Vec::<String>::new());
}

#[test]
fn an_archive_whose_retry_is_a_symbolic_link_installs_nothing() {
    // The checksum covers the link, not its target: a file anyone may
    // have put there.
    let package = package();
    let files = scratch();
    let elsewhere = scratch();
    let evil = elsewhere.path().join("retry");
    std::fs::write(&evil, "#!/bin/sh\necho 'retry 6.6.6'\n").unwrap();
    executable(&evil);
    let top = package.archive.trim_end_matches(".tar.gz").to_owned();
    let packed = Command::new("sh")
        .current_dir(files.path())
        .arg("-c")
        .arg(
            "tar -xzf \"$1\" && rm \"$2/retry\" && ln -s \"$3\" \"$2/retry\" && \
             tar -czf \"$4\" \"$2\" && rm -r \"$2\" && sha256sum \"$4\" > \"$4.sha256\"",
        )
        .arg("sh")
        .arg(package.dir.path().join(&package.archive))
        .arg(&top)
        .arg(&evil)
        .arg(&package.archive)
        .status()
        .unwrap();
    assert!(packed.success());
    let root = files.path().to_owned();
    let server = Server::start(move |mut stream, _| {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head);
        let asked = head
            .split(' ')
            .nth(1)
            .unwrap_or("/")
            .trim_start_matches('/');
        let body = std::fs::read(root.join(asked)).unwrap_or_default();
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(&body);
    });
    let (home, tmp) = (scratch(), scratch());
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("PATH", &path_with(&[])),
            (
                "RETRY_INSTALL_FROM",
                &format!("http://127.0.0.1:{}/", server.port()),
            ),
        ],
        tmp.path(),
    );
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    assert_eq!(
        ran.stderr.lines().last().unwrap_or(""),
        format!(
            "install: {}'s retry is a symbolic link, not the file its checksum covers; \
             nothing installed",
            package.archive
        )
    );
    assert_eq!(files_under(home.path()), Vec::<String>::new());
}

#[test]
fn a_mirror_s_password_with_brackets_or_braces_is_sent_as_it_is() {
    // curl would read them as URL patterns: several requests, each with a
    // password that is not the one given.
    let release = Release::serve(None);
    let (home, tmp) = (scratch(), scratch());
    let url = release.url().replacen("://", "://me:Pw{1,2}[3-4]@", 1);
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("PATH", &path_with(&[])),
            ("RETRY_INSTALL_FROM", &url),
        ],
        tmp.path(),
    );
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    // The .sha256 and the archive, once each.
    assert_eq!(release.server.served(), 2);
}

#[test]
fn an_https_download_is_not_followed_to_http() {
    // A checksum that came over http checks nothing: whoever can change
    // the archive on the way can change it too.
    let release = Release::serve(None);
    let tls = scratch();
    let Some(server) = crate::harness::loopback::https_files(tls.path()) else {
        return;
    };
    for name in [
        release.archive.clone(),
        format!("{}.sha256", release.archive),
    ] {
        std::fs::write(
            tls.path().join(&name),
            format!(
                "HTTP/1.0 302 Found\r\nLocation: {}{name}\r\n\r\n",
                release.url()
            ),
        )
        .unwrap();
    }
    let (home, tmp) = (scratch(), scratch());
    let from = format!("https://127.0.0.1:{}/", server.port);
    let ca = tls.path().join("cert.pem");
    let ran = install(
        &[],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("PATH", &path_with(&[])),
            ("RETRY_INSTALL_FROM", &from),
            ("CURL_CA_BUNDLE", ca.to_str().unwrap()),
        ],
        tmp.path(),
    );
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    assert_eq!(
        ran.stderr.lines().last().unwrap_or(""),
        format!(
            "install: could not download {from}{}.sha256: redirected to a protocol it does \
             not follow (from https, https only) (curl exit 1)",
            release.archive
        )
    );
    assert_eq!(release.server.served(), 0);
    assert_eq!(files_under(home.path()), Vec::<String>::new());
}
