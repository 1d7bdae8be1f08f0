//! `--preset`: the real curl against a small HTTP server on 127.0.0.1 that
//! answers the status codes and `Retry-After` each test chooses; a flag
//! or its variable winning over the preset; bad names; the preset chosen
//! by the program when none is named, and turning that off.
//!
//! What runs the real curl (and the loopback server) or a Unix shell is
//! gated test by test; the rest runs the project's helper, so it runs
//! under wine too.

#[cfg(unix)]
use std::time::Duration;

#[cfg(unix)]
use crate::harness::loopback::{Answer, HttpServer, closed_port, installed};
use crate::harness::{install, on_path, retry, scratch};

// A team's or a user's presets file, set aside or named when wrong.
mod files;

/// `dir/name`, a copy of the helper that runs `steps` (so a preset named
/// for `name` fits it), and `PATH` with `dir` first.
fn fake(dir: &std::path::Path, name: &str, steps: &[&str]) -> std::ffi::OsString {
    install(dir, name, steps);
    on_path(dir)
}

/// These tests run the real curl: missing, they fail and say so.
#[cfg(unix)]
fn curl() -> &'static str {
    installed("curl", "curl")
}

/// `retry --preset curl -- curl -fsS ARGS`, with sleeps of a millisecond
/// (a throttled failure's too).
#[cfg(unix)]
fn curl_preset(args: &[&str]) -> crate::harness::Retry {
    retry(&["--preset", "curl", "-b", "1ms", "--throttle-base", "1ms"])
        .args(&["--", curl(), "-fsS"])
        .args(args)
}

#[cfg(unix)]
const OK: Answer = (200, "OK", "", "{\"ok\":true}\n");

#[test]
#[cfg(unix)] // the real curl and the loopback server
fn a_404_stops_after_one_attempt_with_curls_22() {
    let http = HttpServer::start(vec![(404, "Not Found", "", "no\n")]);
    let url = http.url.clone();
    curl_preset(&[&url])
        .run()
        .code(22)
        .stdout_is("")
        .stderr_has("curl: (22) The requested URL returned error: 404")
        // The rule that stopped it, by its label, and what it matched.
        .stderr_has(
            "retry: curl: giving up after attempt 1/5 (exit code 22): \
             `curl: (22) The requested URL returned error: 404` is permanent \
             (curl preset: an HTTP 4xx but 408, 425, 429; HTTP 501, 505; a TLS protocol \
             mismatch) (reason: stop_if_output)\n",
        );
    assert_eq!(http.served(), 1);
    // JSON keeps its fields and adds the rule and the line.
    let run = retry(&[
        "--preset",
        "curl",
        "--log-format",
        "json",
        "--",
        curl(),
        "-fsS",
    ])
    .args(&[&url])
    .run();
    let gave_up = run.stderr.lines().last().unwrap();
    assert!(
        gave_up.contains(
            r#""exit_code":22,"reason":"stop_if_output","command_exit_code":22,"rule":"curl preset: an HTTP 4xx but 408, 425, 429; HTTP 501, 505; a TLS protocol mismatch","matched":"curl: (22) The requested URL returned error: 404"}"#
        ),
        "{run:#?}"
    );
    // Without the preset, the flag names the rule, and what it matched.
    retry(&["--stop-if-output", "error: 404", "--", curl(), "-fsS", &url])
        .run()
        .code(22)
        .stderr_has(
            "giving up after attempt 1/5 (exit code 22): its output matched \
             --stop-if-output: `curl: (22) The requested URL returned error: 404` \
             (reason: stop_if_output)",
        );
}

/// The advice `--preset curl` gives when a server asked to slow down.
#[cfg(unix)]
const SHOW_THE_WAIT: &str = "retry: curl: warning: the server asked to slow down, but retry \
    cannot see how long it asked to wait (its Retry-After): add -D /dev/stderr to curl's \
    arguments (--preset curl; said once)\n";

#[test]
#[cfg(unix)] // the real curl and the loopback server
fn a_429_whose_retry_after_curl_hides_says_once_how_to_show_it() {
    let slow_down = (429, "Too Many Requests", "Retry-After: 0.05\r\n", "");
    let http = HttpServer::start(vec![slow_down, slow_down, (503, "Busy", "", ""), OK]);
    let url = http.url.clone();
    let run = curl_preset(&[&url]).run();
    run.code(0).stdout_is("{\"ok\":true}\n");
    assert_eq!(run.stderr.matches(SHOW_THE_WAIT).count(), 1, "{run:#?}");
    // Said with the first attempt, before its retry line.
    let advised = run.stderr.find(SHOW_THE_WAIT).unwrap();
    let first = run
        .stderr
        .find("retry: curl: attempt 1/5 throttled (HTTP 429), exit code 22; sleep: ")
        .unwrap();
    assert!(advised < first, "{run:#?}");
    assert_eq!(http.served(), 4);
    // With the headers shown, the wait is honoured and nothing is advised.
    let http = HttpServer::start(vec![slow_down, OK]);
    let url = http.url.clone();
    let run = curl_preset(&["-D", "/dev/stderr", &url]).run();
    run.code(0)
        .stderr_has("sleep: 50 ms (server asked for 50 ms)");
    assert!(!run.stderr.contains("slow down"), "{run:#?}");
    // A 404 is no request to slow down.
    let http = HttpServer::start(vec![(404, "Not Found", "", "")]);
    let url = http.url.clone();
    let run = retry(&["--preset", "curl", "--", curl(), "-fsS", &url]).run();
    assert!(!run.stderr.contains("slow down"), "{run:#?}");
}

#[test]
#[cfg(unix)] // the real curl and the loopback server
fn other_4xx_and_501_505_stop_but_408_425_429_and_other_5xx_are_retried() {
    for (code, retried) in [
        (400, false),
        (401, false),
        (403, false),
        (409, false),
        (410, false),
        (426, false),
        (451, false),
        (499, false),
        (501, false),
        (505, false),
        (408, true),
        (425, true),
        (429, true),
        (500, true),
        (502, true),
        (503, true),
        (504, true),
    ] {
        let http = HttpServer::start(vec![(code, "Status", "", ""), OK]);
        let url = http.url.clone();
        let run = curl_preset(&[&url]).run();
        match retried {
            true => run.code(0).stdout_is("{\"ok\":true}\n"),
            false => run.code(22),
        }
        .stderr_has(&format!("returned error: {code}"));
        let expected = if retried { 2 } else { 1 };
        assert_eq!(http.served(), expected, "HTTP {code}");
    }
}

#[test]
#[cfg(unix)] // the real curl and the loopback server
fn retry_after_is_honoured_with_headers_on_stderr_and_the_body_alone_on_stdout() {
    let http = HttpServer::start(vec![
        (503, "Service Unavailable", "Retry-After: 1\r\n", ""),
        OK,
    ]);
    let url = http.url.clone();
    let run = curl_preset(&["-D", "/dev/stderr", &url]).run();
    run.code(0)
        .stdout_is("{\"ok\":true}\n")
        .stderr_has("sleep: 1000 ms (server asked for 1000 ms)");
    assert!(run.elapsed >= Duration::from_secs(1), "{run:#?}");
    assert_eq!(http.served(), 2);
}

#[test]
#[cfg(unix)] // the real curl and the loopback server
fn a_connection_refused_is_retried_and_a_malformed_url_is_fatal() {
    // A port just freed: nothing listens there.
    let url = format!("http://127.0.0.1:{}/", closed_port());
    retry(&[
        "--preset",
        "curl",
        "-n",
        "2",
        "-b",
        "1ms",
        "--",
        curl(),
        "-sS",
        &url,
    ])
    .run()
    .code(7)
    .stderr_has("giving up after 2 attempts");
    retry(&[
        "--preset",
        "curl",
        "-b",
        "1ms",
        "--",
        curl(),
        "-sS",
        "htp://x",
    ])
    .run()
    .code(1)
    .stderr_has(
        "giving up after attempt 1/5: exit code 1 is fatal (curl preset: a usage, URL, \
         local file, login or TLS certificate error) (reason: fatal)",
    );
}

#[test]
#[cfg(unix)] // the real curl and the loopback server
fn a_flag_or_its_variable_wins_over_the_preset_rule_by_rule() {
    // RETRY_FATAL_ON replaces the preset's fatal codes: 22 now stops at
    // once, while the preset's --retry-on still holds.
    let http = HttpServer::start(vec![(503, "Service Unavailable", "", ""), OK]);
    let url = http.url.clone();
    curl_preset(&[&url])
        .env("RETRY_FATAL_ON", "22")
        .run()
        .code(22)
        .stderr_has("exit code 22 is fatal");
    assert_eq!(http.served(), 1);
    // --stop-if-output replaces the preset's 4xx pattern: a 404 is retried.
    let http = HttpServer::start(vec![(404, "Not Found", "", ""), OK]);
    let url = http.url.clone();
    retry(&[
        "--stop-if-output",
        "never",
        "--preset",
        "curl",
        "-b",
        "1ms",
        "--throttle-base",
        "1ms",
    ])
    .args(&["--", curl(), "-fsS", &url])
    .run()
    .code(0);
    assert_eq!(http.served(), 2);
    // RETRY_PRESET is the same as --preset.
    let http = HttpServer::start(vec![(404, "Not Found", "", "")]);
    let url = http.url.clone();
    retry(&["-b", "1ms", "--", curl(), "-fsS", &url])
        .env("RETRY_PRESET", "curl")
        .run()
        .code(22);
    assert_eq!(http.served(), 1);
}

#[test]
fn unknown_or_empty_names_are_usage_errors_and_nothing_runs() {
    let dir = scratch();
    let marker = dir.path().join("ran");
    let touch = ["touch", marker.to_str().unwrap()];
    for name in ["nope", ""] {
        retry(&["--preset", name, "--"])
            .helper(&touch)
            .run()
            .code(2)
            .stderr_lines(1)
            .stderr_has("known presets: curl");
    }
    retry(&[])
        .helper(&touch)
        .env("RETRY_PRESET", "nope")
        .run()
        .code(2)
        .stderr_is("retry: `RETRY_PRESET=nope`: unknown preset `nope`; known presets: curl, wget, git, ssh, rsync, apt, docker, npm, pip\n");
    assert!(!marker.exists(), "a command ran after a bad preset name");
}

/// One rule for every preset named for a command: through a shell it is
/// taken as given, a wrapper is looked through, and any other program not
/// in its list (a script, `true` under apt's) is said once; it still runs.
#[test]
#[cfg(unix)] // env, sh and true as programs
fn a_preset_named_for_another_program_says_so_once_whatever_the_preset() {
    let bin = scratch();
    let path = fake(bin.path(), "wget", &["exit", "0"]);
    install(bin.path(), "curl", &["exit", "0"]);
    install(bin.path(), "true", &["exit", "0"]);
    for (preset, command, warned) in [
        (
            "curl",
            &["wget", "x"][..],
            Some(
                "--preset curl is for curl, but the command runs wget: its rules judge wget's failures as curl's (--preset wget?)",
            ),
        ),
        (
            "apt",
            &["true"],
            Some(
                "--preset apt is for apt-get, apt, but the command runs true: its rules judge true's failures as apt-get's",
            ),
        ),
        ("curl", &["curl", "x"], None),
        ("curl", &["env", "A=1", "curl", "x"], None),
        (
            "curl",
            &["env", "A=1", "wget", "x"],
            Some("--preset curl is for curl, but the command runs wget"),
        ),
    ] {
        let run = retry(&["--preset", preset, "--"])
            .args(command)
            .env("PATH", &path)
            .run();
        run.code(0);
        match warned {
            Some(warning) => {
                run.stderr_lines(1)
                    .stderr_has(": warning: ")
                    .stderr_has(warning);
            }
            None => {
                run.stderr_is("");
            }
        }
    }
    #[cfg(unix)] // a shell: taken as given
    retry(&["--preset", "curl", "--", "sh", "-c", "exit 0"])
        .run()
        .code(0)
        .stderr_is("");
}

#[test]
#[cfg(unix)] // the real curl and the loopback server
fn presets_name_prints_copy_pastable_flags() {
    let run = retry(&["--presets", "curl"]).run();
    run.code(0).stderr_is("");
    assert_eq!(run.stdout.lines().count(), 3, "{run:#?}");
    assert!(
        run.stdout.starts_with("# curl: for curl; rests on curl(1)"),
        "{run:#?}"
    );
    // What the lookup chooses it for.
    assert_eq!(
        run.stdout.lines().nth(1),
        Some("# chosen without --preset for every call of curl")
    );
    let command = run.stdout.lines().nth(2).unwrap();
    assert!(command.starts_with("retry --retry-on "), "{command}");
    assert!(command.ends_with(" -- curl"), "{command}");
    // What the shell reads back runs the same rules: a 404 stops at once.
    let http = HttpServer::start(vec![(404, "Not Found", "", "")]);
    let url = http.url.clone();
    let script = format!(
        "{} -b 1ms {} -fsS {url}",
        crate::harness::bin(),
        &command[6..]
    );
    let status = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap()
        .status;
    assert_eq!(status.code(), Some(22));
    assert_eq!(http.served(), 1);
    // A mode, never read from the environment.
    retry(&["--", "true"])
        .env("RETRY_PRESETS", "1")
        .run()
        .code(0)
        .stdout_is("");
}

#[test]
fn presets_is_a_table_in_words_within_80_columns_and_verbose_is_every_presets_flags() {
    // No presets file of the user's: the built-in presets alone.
    let config = scratch();
    let ours = |args: &[&str]| retry(args).env("XDG_CONFIG_HOME", config.path()).run();
    let table = ours(&["--presets"]);
    table.code(0).stderr_is("");
    let mut lines = table.stdout.lines();
    assert_eq!(
        lines.next(),
        Some("preset  for      retries                         stops at once")
    );
    for line in table.stdout.lines() {
        assert!(line.chars().count() < 80, "{line:?}");
    }
    for name in [
        "curl", "wget", "git", "ssh", "rsync", "apt", "docker", "npm", "pip",
    ] {
        let row = table
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")));
        assert!(row.is_some(), "no row for {name}\n{}", table.stdout);
    }
    assert!(
        table
            .stdout
            .contains("\ncurl    curl     network failures (DNS,")
    );
    assert!(table.stdout.ends_with("--presets -v, every preset's.\n"));
    // -v: every preset as flags, as --presets NAME prints one.
    let verbose = ours(&["--presets", "-v"]);
    verbose.code(0);
    let curl = ours(&["--presets", "curl"]);
    assert!(verbose.stdout.starts_with(&curl.stdout), "{verbose:#?}");
    assert_eq!(
        verbose.stdout.matches("\nretry --").count(),
        9,
        "{verbose:#?}"
    );
    // An unknown name is a usage error, as for --preset.
    ours(&["--presets", "nope"])
        .code(2)
        .stdout_is("")
        .stderr_has("unknown preset `nope`; known presets: curl, wget,");
}

/// The README's first example, as a newcomer types it (no --preset): a
/// 404 is one request, 503, 503, 200 three with one body on stdout; the
/// same outcome as with --preset curl named; --preset none (or its
/// variable) turns the lookup off, and -v says which preset judged.
#[test]
#[cfg(unix)] // the real curl and the loopback server
fn the_readme_example_judges_curl_as_curl_without_flags() {
    let first = ["--jitter", "full", "--base", "1ms", "--cap", "10ms"];
    for named in [&[][..], &["--preset", "curl"]] {
        let http = HttpServer::start(vec![(404, "Not Found", "", "no\n")]);
        retry(&first)
            .args(named)
            .args(&["--", curl(), "-fsS", &http.url])
            .run()
            .code(22)
            .stdout_is("")
            .stderr_has("(curl preset: an HTTP 4xx but 408, 425, 429; HTTP 501, 505; a TLS protocol mismatch) (reason: stop_if_output)");
        assert_eq!(http.served(), 1, "{named:?}");
        let unavailable = (503, "Service Unavailable", "", "busy\n");
        let http = HttpServer::start(vec![unavailable, unavailable, OK]);
        retry(&first)
            .args(named)
            .args(&["--", curl(), "-fsS", &http.url])
            .run()
            .code(0)
            .stdout_is("{\"ok\":true}\n")
            .stderr_has("attempt 3/5 succeeded");
        assert_eq!(http.served(), 3, "{named:?}");
    }
    // Through the usual wrappers, with their options and values; not
    // inside a script, where the user names the preset.
    let http = HttpServer::start(vec![(404, "Not Found", "", "")]);
    let wrapped = [
        "env",
        "A=1",
        "timeout",
        "-s",
        "KILL",
        "30",
        "nice",
        "-n",
        "5",
        curl(),
    ];
    retry(&["-n", "2", "-b", "1ms", "--"])
        .args(&wrapped)
        .args(&["-fsS", &http.url])
        .run()
        .code(22)
        .stderr_has("giving up after attempt 1/2");
    assert_eq!(http.served(), 1);
    let http = HttpServer::start(vec![(404, "Not Found", "", "")]);
    let script = format!("{} -fsS {}", curl(), http.url);
    retry(&["-n", "2", "-b", "1ms", "--", "sh", "-c", &script])
        .run()
        .code(22)
        .stderr_has("giving up after 2 attempts");
    assert_eq!(http.served(), 2);
    // Turned off, the 404 is retried as any failure (a deploy to appear).
    for off in [
        retry(&["--preset", "none", "-n", "2", "-b", "1ms"]),
        retry(&["-n", "2", "-b", "1ms"]).env("RETRY_PRESET", "none"),
    ] {
        let http = HttpServer::start(vec![(404, "Not Found", "", "")]);
        let run = off.args(&["-v", "--", curl(), "-fsS", &http.url]).run();
        run.code(22).stderr_has("giving up after 2 attempts");
        assert!(!run.stderr.contains("preset"), "{run:#?}");
        assert_eq!(http.served(), 2);
    }
    // -v says which preset judged, and why; JSON records it; plain says nothing.
    let http = HttpServer::start(vec![OK, OK, OK]);
    let url = http.url.clone();
    let run = retry(&["-v", "--", curl(), "-fsS", &url]).run();
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        lines[0],
        "retry: curl: the curl preset judges failures, chosen for `curl` \
         (--preset none turns this off)",
        "{run:#?}"
    );
    retry(&["--", curl(), "-fsS", &url])
        .run()
        .code(0)
        .stderr_is("");
    let json = retry(&["--log-format", "json", "--", curl(), "-fsS", &url]).run();
    assert!(
        json.stderr.starts_with(r#"{"event":"preset","#)
            && json
                .stderr
                .contains(r#""preset":"curl","chosen":true,"why":"chosen for `curl`"}"#),
        "{json:#?}"
    );
    // A named preset is named so.
    let run = retry(&["-v", "--preset", "curl", "--", curl(), "-fsS", &url]).run();
    assert!(
        run.stderr.starts_with(
            "retry: curl: the curl preset judges failures, named by `--preset curl`\n"
        ),
        "{run:#?}"
    );
    // --plan names it too, without running anything.
    if cfg!(feature = "preview") {
        retry(&["--plan", "-n", "2", "--", "sudo", "curl", "x"])
            .run()
            .code(0)
            .stderr_is(
                "retry: the plan for sudo curl x (it is not run); the curl preset judges \
                        its failures, chosen for `curl` (through sudo)\n",
            );
    }
}

#[test]
fn retrys_own_timeout_stays_retried_under_a_preset() {
    // A preset lists the codes it retries; retry's own 124 (--timeout) and
    // 125 (not started) are among them, or a hung curl would not be retried.
    let run = retry(&["--preset", "curl", "-n2", "-b", "1ms", "-t", "50ms"])
        .helper(&["sleep", "5000"])
        .run();
    run.code(124)
        .stderr_has("attempt 1/2 failed with timeout after 50ms")
        .stderr_has("giving up after 2 attempts");
}

/// The guide's pipeline: a `set -euo pipefail` script piping the body to
/// `jq`, with curl 7.84+'s `--write-out` putting the one header retry reads
/// on stderr. The server asks for its wait as an HTTP-date.
#[test]
#[cfg(unix)] // the real curl, bash and jq
fn an_http_date_retry_after_from_write_out_keeps_a_pipefail_script_right() {
    let jq = std::process::Command::new("jq").arg("--version").output();
    assert!(
        jq.is_ok_and(|out| out.status.success()),
        "jq is not installed: this test runs the guide's `| jq` pipeline \
         (apt-get install jq; .ci/run installs it)"
    );
    let at = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(2));
    let header: &'static str = Box::leak(format!("Retry-After: {at}\r\n").into_boxed_str());
    let pipeline = |url: &str| {
        let script = format!(
            "set -euo pipefail\n\
             {} --preset curl -b 1ms --throttle-base 1ms -- {} -fsS \
             --write-out '%{{stderr}}retry-after: %header{{retry-after}}\\n' {url} | jq -r .ok",
            crate::harness::bin(),
            curl()
        );
        let started = std::time::Instant::now();
        let out = std::process::Command::new("bash")
            .args(["-c", &script])
            .env("XDG_CONFIG_HOME", "/nonexistent/retry-tests")
            .output()
            .unwrap();
        (out, started.elapsed())
    };
    let http = HttpServer::start(vec![(503, "Service Unavailable", header, ""), OK]);
    let url = http.url.clone();
    let (out, elapsed) = pipeline(&url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "true\n", "{stderr}");
    assert!(stderr.contains("(server asked for "), "{stderr}");
    // Whole seconds: the date is 1 to 2 s ahead when curl reads it.
    assert!(
        elapsed >= Duration::from_millis(900),
        "{elapsed:?}: {stderr}"
    );
    assert_eq!(http.served(), 2);
    // A 404: one request, nothing reaches jq, and the script fails with
    // curl's 22, not with jq's complaint about a partial body.
    let http = HttpServer::start(vec![(404, "Not Found", "", "{\"partial\n")]);
    let url = http.url.clone();
    let (out, _) = pipeline(&url);
    assert_eq!(out.status.code(), Some(22), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(http.served(), 1);
}

/// The guide's second way to honour Retry-After (curl 7.84+): only that
/// header, written to stderr by --write-out; stdout stays the body alone
/// under --stdout-once, and a response without the header gives no hint.
#[test]
#[cfg(unix)] // the real curl and the loopback server
fn retry_after_by_write_out_keeps_stdout_the_body_alone() {
    let http = HttpServer::start(vec![
        (503, "Service Unavailable", "Retry-After: 1\r\n", "busy\n"),
        (503, "Service Unavailable", "", "busy\n"),
        OK,
    ]);
    let url = http.url.clone();
    let write_out = "%{stderr}retry-after: %header{retry-after}\\n";
    let args = ["--preset", "curl", "--stdout-once", "-b", "1ms", "-c", "2s"];
    let args = [&args[..], &["--throttle-base", "1ms"]].concat();
    let run = retry(&args)
        .args(&["--", curl(), "-fsS", "--write-out", write_out, &url])
        .run();
    run.code(0)
        .stdout_is("{\"ok\":true}\n")
        .stderr_has("sleep: 1000 ms (server asked for 1000 ms)");
    assert!(run.elapsed >= Duration::from_secs(1), "{run:#?}");
    assert!(!run.stderr.contains("invalid"), "{}", run.stderr);
    assert_eq!(http.served(), 3);
}

#[test]
#[cfg(unix)] // sh
fn a_code_outside_a_presets_retry_on_names_the_presets_list() {
    // 40 is in neither of the curl preset's lists: not retryable, and the
    // line says whose list it is not in (the user gave no --retry-on).
    retry(&["--preset", "curl", "--", "sh", "-c", "exit 40"])
        .run()
        .code(40)
        .stderr_has(
            "exit code 40 is not retryable (the curl preset retries network failures (DNS, \
             connect, TLS handshake, reset, timeout); HTTP 408, 425, 429, 5xx with -f) \
             (reason: not_retryable)",
        );
    // The flag given wins over the preset's list, and is named.
    retry(&[
        "--preset",
        "curl",
        "--retry-on",
        "1",
        "--",
        "sh",
        "-c",
        "exit 40",
    ])
    .run()
    .code(40)
    .stderr_has("exit code 40 is not retryable (--retry-on) (reason: not_retryable)");
    // A user's preset without a label for it.
    let config = scratch();
    let dir = config.path().join("retry");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("presets.ini"),
        "[mine]\nretry-on = 7\nsource = a test\n",
    )
    .unwrap();
    retry(&["--preset", "mine", "--", "sh", "-c", "exit 40"])
        .env("XDG_CONFIG_HOME", config.path())
        .run()
        .code(40)
        .stderr_has("exit code 40 is not retryable (not in the mine preset's --retry-on)");
}
