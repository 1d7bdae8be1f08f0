//! What install.sh will not trust or show: a checksum that does not
//! match, an archive whose retry is a symbolic link, an https download sent
//! on to http, a mirror URL with a line end, and a mirror's password (never
//! shown, on no command line, sent as it is). Moved out of install.rs
//! (issue 51) so each file stays under 800 lines; its gates are
//! install.rs's.

use super::without_curl::tools_without_curl;
// The release served from 127.0.0.1, and the helpers that run the script
// and check what it installed, are install.rs's.
use super::*;

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
