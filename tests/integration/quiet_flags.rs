//! What a command's own flags hide from the preset chosen for it, with the
//! real curl and wget against a loopback server: `curl -s` without `-S`
//! and `wget -q` print no error line, so a 404 is retried like a 503 and
//! retry says why once; headers already shown get no advice to show them;
//! a shell gets no preset, and `-v` says so.

use crate::harness::loopback::{Answer, HttpServer, installed};
use crate::harness::retry;

const OK: Answer = (200, "OK", "", "ok\n");
const NOT_FOUND: Answer = (404, "Not Found", "", "");

fn curl() -> &'static str {
    installed("curl", "curl")
}

fn wget() -> &'static str {
    installed("wget", "wget")
}

#[test]
fn a_silent_curl_is_retried_on_a_404_and_told_once_how_to_show_the_error() {
    let http = HttpServer::start(vec![NOT_FOUND]);
    let run = retry(&["-n", "3", "-b", "1ms", "--", curl(), "-fs", &http.url]).run();
    run.code(22);
    assert_eq!(http.served(), 3, "{run:#?}");
    let said = "retry: curl: warning: curl with -s and no -S hides the error line retry \
                judges by, so a 404 cannot be told from a 503 and both are retried: add -S \
                (--show-error) to curl's arguments (--preset curl; said once)\n";
    assert_eq!(run.stderr.matches(said).count(), 1, "{run:#?}");
    // With -S the 404 is seen, and stops at once, without the word.
    let http = HttpServer::start(vec![NOT_FOUND]);
    let run = retry(&["-n", "3", "-b", "1ms", "--", curl(), "-fsS", &http.url]).run();
    run.code(22);
    assert_eq!(http.served(), 1, "{run:#?}");
    assert!(!run.stderr.contains("hides"), "{run:#?}");
    // -q on retry, or --preset none, silences it; a success says nothing.
    for flags in [&["-q"][..], &["--preset", "none"]] {
        let http = HttpServer::start(vec![NOT_FOUND, OK]);
        let run = retry(flags)
            .args(&["-n", "3", "-b", "1ms", "--", curl(), "-fs", &http.url])
            .run();
        run.code(0);
        assert!(!run.stderr.contains("hides"), "{flags:?}: {run:#?}");
    }
    let http = HttpServer::start(vec![OK]);
    let run = retry(&["--", curl(), "-fs", &http.url]).run();
    run.code(0);
    assert!(!run.stderr.contains("hides"), "{run:#?}");
}

#[test]
fn a_quiet_wget_is_retried_on_a_404_and_told_once() {
    let http = HttpServer::start(vec![NOT_FOUND]);
    let run = retry(&[
        "-n",
        "2",
        "-b",
        "1ms",
        "--",
        wget(),
        "-q",
        "-O",
        "-",
        &http.url,
    ])
    .env("LC_ALL", "C")
    .run();
    run.code(8);
    assert_eq!(http.served(), 2, "{run:#?}");
    assert_eq!(
        run.stderr
            .matches("wget with -q hides the error line")
            .count(),
        1,
        "{run:#?}"
    );
}

#[test]
fn headers_already_shown_get_no_advice_to_show_them() {
    // A 429 without Retry-After, with curl's headers on stderr: the
    // answer simply had none, so nothing is advised.
    let slow_down: Answer = (429, "Too Many Requests", "", "");
    for shown in [&["-D", "/dev/stderr"][..], &["--dump-header", "-"], &["-i"]] {
        let http = HttpServer::start(vec![slow_down, OK]);
        let run = retry(&["-b", "1ms", "--", curl(), "-fsS"])
            .args(shown)
            .args(&[&http.url])
            .run();
        run.code(0);
        assert_eq!(http.served(), 2, "{shown:?}: {run:#?}");
        assert!(!run.stderr.contains("slow down"), "{shown:?}: {run:#?}");
    }
    // Headers dumped to a file retry does not read: advised, as before.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("headers");
    let http = HttpServer::start(vec![slow_down, OK]);
    let file = file.to_str().unwrap();
    let run = retry(&["-b", "1ms", "--", curl(), "-fsS", "-D", file, &http.url]).run();
    run.code(0)
        .stderr_has("add -D /dev/stderr to curl's arguments");
}

#[test]
fn a_shell_gets_no_preset_and_verbose_says_why() {
    let http = HttpServer::start(vec![NOT_FOUND, OK]);
    let line = format!("{} -fsS {}", curl(), http.url);
    let run = retry(&["-v", "-n", "3", "-b", "1ms", "--", "sh", "-c", &line]).run();
    run.code(0)
        .stderr_has("no preset judges failures: `sh` is a shell, whose status is its script's");
    // The 404 inside the script is retried, as by default.
    assert_eq!(http.served(), 2, "{run:#?}");
    // Without -v, nothing.
    let run = retry(&["-n", "1", "--", "sh", "-c", "exit 0"]).run();
    assert!(!run.stderr.contains("no preset"), "{run:#?}");
}
