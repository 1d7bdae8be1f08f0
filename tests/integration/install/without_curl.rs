//! Downloads without curl (busybox's wget, as on Alpine) and downloads
//! bounded as a whole: a server that never answers, one that trickles.
//! Moved out of install.rs (issue 51) so each file stays under 800 lines;
//! its gates are install.rs's. The tools-without-curl helpers are here,
//! for the other modules too.

// The release served from 127.0.0.1, and the helpers that run the script
// and check what it installed, are install.rs's.
use super::*;

/// A directory of links to the system's tools the script needs, without
/// curl (as on Alpine, with busybox's wget), and without `timeout` unless
/// asked for.
pub(super) fn tools_without_curl(dir: &Path, with_timeout: bool) {
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
pub(super) fn busybox() -> Option<&'static Path> {
    ["/usr/bin/busybox", "/bin/busybox"]
        .into_iter()
        .map(Path::new)
        .find(|path| path.exists())
}

/// A directory of busybox's applets alone, as on Alpine or in a BusyBox
/// image: its sh, wget, timeout, tar, sha256sum and the rest.
pub(super) fn busybox_tools(dir: &Path, busybox: &Path) {
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
