//! The real programs a built-in preset is chosen for by their name, with
//! no `--preset` (issue 50): found as the spawn finds them, and run so
//! that nothing of the user's or the machine's is read or written (HOME,
//! their caches and configuration in the test's temp dir, no proxy, the C
//! locale), against servers of the test's on 127.0.0.1 that fail a few
//! times and then answer. For tests/integration/claimed_programs.rs and
//! the chaos test's runs of claimed commands. A program that is missing
//! skips what needs it, with a note, except where
//! `RETRY_TESTS_NEED_CLAIMED` is set (`.ci/run` installs them all and sets
//! it): there it fails.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use super::loopback::{Server, answer, request_path};

pub const NEED: &str = "RETRY_TESTS_NEED_CLAIMED";

/// Where a spawn of `program` finds it: the first executable file of that
/// name in PATH (a symlink is followed, as exec follows it).
pub fn on_path(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|file| {
            std::fs::metadata(file)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// `program` as the spawn finds it, or None with a note; where
/// `RETRY_TESTS_NEED_CLAIMED` is set, a missing program fails instead.
#[track_caller]
pub fn found(program: &str, package: &str) -> Option<PathBuf> {
    let found = on_path(program);
    if found.is_none() {
        assert!(
            std::env::var_os(NEED).is_none(),
            "{program} is not installed: this test runs the real {program} \
             (apt-get install {package}; .ci/run installs it)"
        );
        eprintln!("note: {program} is not installed (apt-get install {package}): skipped");
    }
    found
}

/// A directory in `dir` whose `wget` is a symlink to BusyBox, as Alpine
/// has it: put first on PATH, `wget` is BusyBox's applet. None, with a
/// note, without BusyBox.
#[track_caller]
pub fn busybox_wget(dir: &Path) -> Option<PathBuf> {
    let busybox = found("busybox", "busybox-static")?;
    let bin = dir.join("alpine-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(busybox, bin.join("wget")).unwrap();
    Some(bin)
}

/// `PATH` with `dir` first.
pub fn path_with(dir: &Path) -> OsString {
    super::on_path(dir)
}

/// The environment of a claimed program's run, its home `home`: each
/// variable with its value, or None to remove it. Removed: pip's and
/// npm's settings, proxies (a loopback server must be reached directly),
/// git's repository and hook variables (the suite may run inside a git
/// hook). Set: the C locale (git and wget translate the messages the
/// presets read), git without the machine's configuration or a prompt,
/// pip without its configuration files or the check of its own version
/// (a request to the internet), npm's cache and configuration files in
/// `home`, and no update notice, funding or audit requests.
pub fn environment(home: &Path) -> Vec<(OsString, Option<OsString>)> {
    let removed = std::env::vars_os().filter_map(|(key, _)| {
        let name = key.to_string_lossy().to_ascii_lowercase();
        let drop = name.starts_with("pip_")
            || name.starts_with("npm_config_")
            || name.starts_with("git_")
            || name.ends_with("_proxy")
            || name == "wgetrc"
            || name == "curl_home";
        drop.then_some((key, None))
    });
    let at = |name: &str| Some(home.join(name).into_os_string());
    let set = [
        ("HOME", Some(home.as_os_str().to_owned())),
        ("LC_ALL", Some("C".into())),
        ("GIT_CONFIG_NOSYSTEM", Some("1".into())),
        ("GIT_TERMINAL_PROMPT", Some("0".into())),
        ("PIP_CONFIG_FILE", Some("/dev/null".into())),
        ("PIP_DISABLE_PIP_VERSION_CHECK", Some("1".into())),
        ("PIP_NO_INPUT", Some("1".into())),
        ("npm_config_cache", at(".npm")),
        ("npm_config_userconfig", at(".npmrc")),
        ("npm_config_globalconfig", at(".npmrc-global")),
        ("npm_config_update_notifier", Some("false".into())),
        ("npm_config_fund", Some("false".into())),
        ("npm_config_audit", Some("false".into())),
        ("npm_config_fetch_retries", Some("0".into())),
    ]
    .map(|(key, value)| (OsString::from(key), value));
    removed.chain(set).collect()
}

/// `command` with `environment(home)`.
pub fn isolate(command: &mut Command, home: &Path) {
    for (key, value) in environment(home) {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
}

/// One answer: status code, reason, extra header lines (each ending in
/// CRLF), body.
pub type Reply = (u16, &'static str, &'static str, Vec<u8>);

/// How a server fails a request it is told to fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// This status, with an empty body.
    Status(u16, &'static str),
    /// The connection closed after the request, with no answer (a proxy or
    /// a server restarting).
    Dropped,
}

/// An HTTP server on 127.0.0.1 that fails its first `failures` requests
/// (whatever their path) as `failure` says, then answers each request with
/// `serve(path)`. Stopped when dropped.
pub struct Flaky {
    pub url: String,
    paths: Arc<Mutex<Vec<String>>>,
    _server: Server,
}

impl Flaky {
    pub fn start(
        failures: usize,
        failure: Failure,
        serve: impl Fn(&str) -> Reply + Send + 'static,
    ) -> Flaky {
        let paths = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&paths);
        let server = Server::start(move |mut stream, n| {
            let path = request_path(&mut stream);
            seen.lock().unwrap().push(path.clone());
            match failure {
                _ if n >= failures => {
                    let (code, reason, headers, body) = serve(&path);
                    answer(&mut stream, (code, reason, headers), &body);
                }
                Failure::Status(code, reason) => answer(&mut stream, (code, reason, ""), b""),
                Failure::Dropped => {}
            }
        });
        let url = format!("http://{}/", server.addr);
        Flaky {
            url,
            paths,
            _server: server,
        }
    }

    /// The paths requested so far, in order.
    pub fn paths(&self) -> Vec<String> {
        self.paths.lock().unwrap().clone()
    }

    /// How many requests asked for a path starting with `prefix`.
    pub fn asked(&self, prefix: &str) -> usize {
        self.paths()
            .iter()
            .filter(|p| p.starts_with(prefix))
            .count()
    }
}

/// `ok\n` for every path.
pub fn ok(_: &str) -> Reply {
    (200, "OK", "", b"ok\n".to_vec())
}

// ---- pip

/// The file name of the wheel `wheel` makes.
pub fn wheel_name(name: &str) -> String {
    format!("{name}-1.0-py3-none-any.whl")
}

/// A pure-Python wheel of `name` 1.0: a zip (entries stored, not
/// compressed) with a module and the METADATA, WHEEL and RECORD files that
/// pip reads.
pub fn wheel(name: &str) -> Vec<u8> {
    let info = format!("{name}-1.0.dist-info");
    let files = [
        (format!("{name}/__init__.py"), String::new()),
        (
            format!("{info}/METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"),
        ),
        (
            format!("{info}/WHEEL"),
            "Wheel-Version: 1.0\nGenerator: retry-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .to_owned(),
        ),
        (
            format!("{info}/RECORD"),
            format!("{name}/__init__.py,,\n{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n"),
        ),
    ];
    stored_zip(&files)
}

/// A zip archive (PKWARE's APPNOTE: local headers, central directory, its
/// end record) of `files`, stored without compression, dated 1980-01-01.
fn stored_zip(files: &[(String, String)]) -> Vec<u8> {
    const DATE: u16 = (1 << 5) | 1;
    let mut zip = Vec::new();
    let mut central = Vec::new();
    for (name, text) in files {
        let (name, data) = (name.as_bytes(), text.as_bytes());
        let offset = zip.len() as u32;
        // Version needed, flags, method (stored), time, date, CRC-32,
        // sizes, name length, extra length: the same in both records.
        let mut common = Vec::new();
        for half in [20u16, 0, 0, 0, DATE] {
            common.extend(half.to_le_bytes());
        }
        for word in [crc32(data), data.len() as u32, data.len() as u32] {
            common.extend(word.to_le_bytes());
        }
        common.extend((name.len() as u16).to_le_bytes());
        common.extend(0u16.to_le_bytes());
        zip.extend(0x0403_4b50u32.to_le_bytes());
        zip.extend(&common);
        zip.extend(name);
        zip.extend(data);
        central.extend(0x0201_4b50u32.to_le_bytes());
        central.extend(20u16.to_le_bytes()); // made by
        central.extend(&common);
        // Comment length, disk, internal and external attributes.
        central.extend([0u8; 10]);
        central.extend(offset.to_le_bytes());
        central.extend(name);
    }
    let (at, size, count) = (zip.len() as u32, central.len() as u32, files.len() as u16);
    zip.extend(central);
    zip.extend(0x0605_4b50u32.to_le_bytes());
    zip.extend([0u8; 4]); // this disk, the directory's disk
    zip.extend(count.to_le_bytes());
    zip.extend(count.to_le_bytes());
    zip.extend(size.to_le_bytes());
    zip.extend(at.to_le_bytes());
    zip.extend(0u16.to_le_bytes()); // comment length
    zip
}

/// CRC-32 as zip has it (IEEE 802.3, reflected).
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A PEP 503 "simple" index that has `name` (one wheel, 1.0) and no
/// other project: for `Flaky::start`.
pub fn pip_index(name: &'static str) -> impl Fn(&str) -> Reply + Send + 'static {
    let file = wheel_name(name);
    let (page, file_path) = (format!("/simple/{name}/"), format!("/files/{file}"));
    let html =
        format!("<!DOCTYPE html>\n<html><body><a href=\"{file_path}\">{file}</a></body></html>\n");
    let wheel = wheel(name);
    move |path: &str| match path {
        _ if path == page => (
            200,
            "OK",
            "Content-Type: text/html\r\n",
            html.clone().into_bytes(),
        ),
        _ if path == file_path => (
            200,
            "OK",
            "Content-Type: application/octet-stream\r\n",
            wheel.clone(),
        ),
        _ => (404, "Not Found", "", Vec::new()),
    }
}

/// `pip download` of `name` alone from the index at `url` (a `Flaky`'s)
/// into `dest`: no cache, one retry of pip's own (so that pip prints its
/// retry warning) and a generous timeout (the server answers at once).
pub fn pip_download(pip: &str, url: &str, dest: &Path, name: &str) -> Vec<String> {
    let index = format!("{url}simple/");
    let dest = dest.display().to_string();
    [
        pip,
        "download",
        "--no-deps",
        "--no-cache-dir",
        "--disable-pip-version-check",
        "-d",
        &dest,
        "--index-url",
        &index,
        "--retries",
        "1",
        "--timeout",
        "10",
        name,
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The pip the spawn finds: `pip3`, else `pip` (the names the pip preset
/// claims); None, with a note, if neither.
#[track_caller]
pub fn pip() -> Option<PathBuf> {
    on_path("pip3").or_else(|| found("pip", "python3-pip"))
}

// ---- npm

/// A project in `dir` with no dependency, whose postinstall script is
/// `script` (run by sh in `dir`, as npm runs it).
pub fn npm_project(dir: &Path, script: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("package.json"),
        "{\"name\": \"claimed-test\", \"version\": \"1.0.0\", \"private\": true,\n \
         \"scripts\": {\"postinstall\": \"sh postinstall.sh\"}}\n",
    )
    .unwrap();
    std::fs::write(dir.join("postinstall.sh"), script).unwrap();
}

// ---- git

/// A bare repository `remote.git` in `dir` and a repository `work` with
/// one commit, whose pre-push hook is `hook` (a sh script); the paths of
/// both.
#[track_caller]
pub fn git_repos(git: &Path, dir: &Path, hook: &str) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let (remote, work) = (dir.join("remote.git"), dir.join("work"));
    let run = |args: &[&str]| {
        let mut command = Command::new(git);
        isolate(&mut command, dir);
        let out = command.args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    run(&["init", "-q", "--bare", "remote.git"]);
    run(&["init", "-q", "work"]);
    run(&[
        "-C",
        "work",
        "-c",
        "user.name=retry-tests",
        "-c",
        "user.email=retry-tests@localhost",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "one",
    ]);
    let hook_path = work.join(".git/hooks/pre-push");
    std::fs::write(&hook_path, format!("#!/bin/sh\n{hook}")).unwrap();
    std::fs::set_permissions(&hook_path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (remote, work)
}

/// A sh snippet that counts its runs in `file` and fails (exit 1, saying
/// so on stderr as `what`) while the count is `failures` or less.
pub fn flaky_sh(file: &Path, failures: usize, what: &str) -> String {
    format!(
        "c=$(cat '{f}' 2>/dev/null || echo 0); c=$((c + 1)); echo $c > '{f}'\n\
         [ $c -gt {failures} ] || {{ echo '{what}' >&2; exit 1; }}\n",
        f = file.display()
    )
}

/// The count a `flaky_sh` snippet kept in `file` (0 before any run).
pub fn runs(file: &Path) -> usize {
    std::fs::read_to_string(file).map_or(0, |text| text.trim().parse().unwrap_or(0))
}
