//! The install: the release's archive and its checksum from a mirror or
//! the release, and each way that fails (nothing installed, nothing run).

use super::table::{After, CASE, Case, Expect::*, run};
use super::*;

#[test]
fn a_checksum_mismatch_is_refused_and_nothing_installed() {
    run(&[Case {
        name: "a .sha256 of zeros",
        files: &[(
            "{archive}.sha256",
            "0000000000000000000000000000000000000000000000000000000000000000  {archive}\n",
        )],
        inputs: &[("command", "touch ran")],
        code: 1,
        stderr: &[Lines(1), Has("checksum mismatch for")],
        after: After::NothingRan,
        ..CASE
    }]);
}

#[test]
fn a_server_that_never_answers_is_bounded() {
    run(&[Case {
        name: "a server that never answers",
        serving: Serving::Hang,
        // A private mirror's password is never shown.
        from: "http://me:s3cret@{addr}",
        inputs: &[("command", "touch ran")],
        env: &[("RETRY_INSTALL_TIMEOUT", "1")],
        within: Some(10),
        code: 1,
        stderr: &[Lines(1), Has("within 1 s"), Has("://***@"), Lacks("s3cret")],
        after: After::NothingRan,
        ..CASE
    }]);
}

#[test]
fn a_download_cut_short_or_too_slow_says_so_and_installs_nothing() {
    run(&[
        Case {
            name: "cut short",
            serving: Serving::CutShort,
            inputs: &[("command", "touch ran")],
            env: &[("RETRY_INSTALL_TIMEOUT", "2")],
            within: Some(20),
            code: 1,
            stderr: &[
                Lines(1),
                Has(
                    "cannot download {url}/{archive}: cut short: the connection closed \
                     before the end of the file (curl exit 18)",
                ),
            ],
            after: After::NothingRan,
            ..CASE
        },
        Case {
            name: "too slow",
            serving: Serving::Trickle,
            inputs: &[("command", "touch ran")],
            env: &[("RETRY_INSTALL_TIMEOUT", "2")],
            within: Some(20),
            code: 1,
            stderr: &[
                Lines(1),
                Has(
                    "cannot download {url}/{archive}: timed out: not complete within 2 s \
                     (RETRY_INSTALL_TIMEOUT) (curl exit 28)",
                ),
            ],
            after: After::NothingRan,
            ..CASE
        },
    ]);
}

/// RETRY_INSTALL_TIMEOUT refused: the line, nothing downloaded or run.
macro_rules! install_timeout {
    ($value:literal) => {
        Case {
            name: concat!("RETRY_INSTALL_TIMEOUT=", $value),
            inputs: &[("command", "touch ran")],
            env: &[("RETRY_INSTALL_TIMEOUT", $value)],
            code: 2,
            stderr: &[Is(concat!(
                "retry action: RETRY_INSTALL_TIMEOUT=",
                $value,
                ": not a number of seconds (1 to 999999999) for each download\n"
            ))],
            served: Some(0),
            after: After::Refused,
            ..CASE
        }
    };
}

#[test]
fn an_install_timeout_of_zero_is_a_usage_error() {
    run(&[
        install_timeout!("0"),
        install_timeout!("00"),
        install_timeout!("1.5"),
        install_timeout!("ten"),
        install_timeout!("1000000000"),
        install_timeout!("99999999999999999999"),
    ]);
}

#[test]
fn a_mirror_s_password_with_brackets_or_braces_is_sent_as_it_is() {
    // curl would read them as URL patterns: two requests, each with a
    // password that is not the one given.
    run(&[Case {
        name: "Pw{1,2}[3-4]",
        from: "http://me:Pw{1,2}[3-4]@{addr}",
        inputs: &[("command", "touch ran")],
        code: 0,
        ran: Some(true),
        // The .sha256 and the archive, once each.
        served: Some(2),
        ..CASE
    }]);
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
        nothing_ran(password, &runner, &ran);
    }
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
    nothing_ran("a mirror without the release", &runner, &ran);
}

#[cfg(feature = "redis")] // a store
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
    refused("a mirror URL with a line end", &runner, &ran);
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
    nothing_ran("no curl", &runner, &ran);
    assert_eq!(release.server.served(), 0);
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
    nothing_ran("a symbolic link", &runner, &ran);
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
    nothing_ran("https to http", &runner, &ran);
}
