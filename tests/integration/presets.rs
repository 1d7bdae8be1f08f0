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

#[cfg(unix)]
const OK: Answer = (200, "OK", "", "{\"ok\":true}\n");

#[test]
#[cfg(unix)] // the real curl and the loopback server
fn a_404_stops_after_one_attempt_with_curls_22() {
    let http = HttpServer::start(vec![(404, "Not Found", "", "no\n")]);
    let url = http.url.clone();
    retry(&["--preset", "curl", "-b", "1ms", "--", curl(), "-fsS", &url])
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
    let run = retry(&["--preset", "curl", "-b", "1ms", "--", curl(), "-fsS", &url]).run();
    run.code(0).stdout_is("{\"ok\":true}\n");
    assert_eq!(run.stderr.matches(SHOW_THE_WAIT).count(), 1, "{run:#?}");
    // Said with the first attempt, before its retry line.
    let advised = run.stderr.find(SHOW_THE_WAIT).unwrap();
    let first = run.stderr.find("retry: curl: attempt 1/5 failed").unwrap();
    assert!(advised < first, "{run:#?}");
    assert_eq!(http.served(), 4);
    // With the headers shown, the wait is honoured and nothing is advised.
    let http = HttpServer::start(vec![slow_down, OK]);
    let url = http.url.clone();
    let run = retry(&["--preset", "curl", "-b", "1ms", "--", curl(), "-fsS"])
        .args(&["-D", "/dev/stderr", &url])
        .run();
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
        let run = retry(&["--preset", "curl", "-b", "1ms", "--", curl(), "-fsS", &url]).run();
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
    let args = ["--preset", "curl", "-b", "1ms", "--", curl(), "-fsS"];
    let run = retry(&args).args(&["-D", "/dev/stderr", &url]).run();
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
    retry(&["--preset", "curl", "-b", "1ms", "--", curl(), "-fsS", &url])
        .env("RETRY_FATAL_ON", "22")
        .run()
        .code(22)
        .stderr_has("exit code 22 is fatal");
    assert_eq!(http.served(), 1);
    // --stop-if-output replaces the preset's 4xx pattern: a 404 is retried.
    let http = HttpServer::start(vec![(404, "Not Found", "", ""), OK]);
    let url = http.url.clone();
    retry(&["--stop-if-output", "never", "--preset", "curl", "-b", "1ms"])
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
    retry(&["--plan", "-n", "2", "--", "sudo", "curl", "x"])
        .run()
        .code(0)
        .stderr_is(
            "retry: the plan for sudo curl x (it is not run); the curl preset judges \
                    its failures, chosen for `curl` (through sudo)\n",
        );
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

/// A team's preset with `calls` is chosen by the program as a built-in
/// one is, and over a built-in one claiming the same program, which -v
/// says; two of the team's claiming one program are a usage error naming
/// both, and nothing runs.
#[test]
fn a_teams_preset_that_claims_a_program_wins_over_the_builtin_and_two_clash() {
    let config = scratch();
    let file = presets_file(config.path());
    std::fs::write(
        &file,
        "[web]\nprograms = curl\ncalls = *\nretry-on = 3\nsource = ours\n",
    )
    .unwrap();
    let bin = scratch();
    let runs = bin.path().join("runs");
    let runs = runs.to_str().unwrap();
    let path = fake(bin.path(), "curl", &["append", runs, "x", "exit", "3"]);
    let run = |args: &[&str]| {
        retry(&["-n", "2", "-b", "1ms"])
            .args(args)
            .args(&["--", "curl", "x"])
            .env("PATH", &path)
            .env("XDG_CONFIG_HOME", config.path())
            .run()
    };
    // 3 is fatal to the built-in curl preset, retried by the team's.
    let verbose = run(&["-v"]);
    verbose
        .code(3)
        .stderr_has("giving up after 2 attempts")
        .stderr_has(&format!(
            "retry: curl: the web preset judges failures, chosen for `curl` from {}, over the \
         built-in curl preset (--preset none turns this off)\n",
            file.display()
        ));
    assert_eq!(
        verbose.stderr.matches("web preset").count(),
        1,
        "{verbose:#?}"
    );
    run(&["--preset", "curl"])
        .code(3)
        .stderr_has("giving up after attempt 1/2");
    std::fs::write(
        &file,
        "[web]\nprograms = curl\ncalls = *\nsource = ours\n\
         [api]\nprograms = curl wget\ncalls = get\nsource = ours\n",
    )
    .unwrap();
    let _ = std::fs::remove_file(runs);
    run(&[])
        .code(2)
        .stdout_is("")
        .stderr_lines(1)
        .stderr_has(&format!(
            "the presets [web] and [api] of {} both claim curl: keep `calls` in one of them",
            file.display()
        ));
    assert!(!std::path::Path::new(runs).exists(), "the command ran");
    // Named, or turned off, the clash does not matter.
    run(&["--preset", "none"]).code(3);
}

#[test]
fn a_team_writes_presets_for_its_own_tools() {
    let config = scratch();
    let dir = config.path().join("retry");
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("presets.ini");
    std::fs::write(
        &file,
        "# Our deploy tool: 75 is its 'try again', 'no such service' is final.\n\
         [deploy]\nprograms = sh\nretry-on = 75\nstop-if-output = ^no such service\n\
         source = the deploy tool's README\n",
    )
    .unwrap();
    let home = config.path().display().to_string();
    // The helper stands in for the deploy tool (`programs = sh` only
    // names it in the listing).
    let ours = |steps: &[&str]| {
        retry(&["--preset", "deploy", "-n", "3", "-b", "1ms"])
            .helper(steps)
            .env("XDG_CONFIG_HOME", &home)
            .run()
    };
    ours(&["exit", "75"])
        .code(75)
        .stderr_has("giving up after 3 attempts");
    ours(&["err", "no such service\n", "exit", "75"])
        .code(75)
        .stderr_has("giving up after attempt 1/3");
    // --presets -v lists it after the built-in ones, naming its file.
    let listing = retry(&["--presets", "-v"])
        .env("XDG_CONFIG_HOME", &home)
        .run();
    listing.code(0);
    let header = format!("# deploy (from {}): for sh;", file.display());
    assert!(listing.stdout.contains(&header), "{listing:#?}");
    assert!(listing.stdout.find("# curl").unwrap() < listing.stdout.find(&header).unwrap());
    // The table tells it by its codes and rules, having no labels; with
    // them, by its words, and the give-up line names its rule.
    let table = retry(&["--presets"]).env("XDG_CONFIG_HOME", &home).run();
    let row = table
        .stdout
        .lines()
        .find(|l| l.starts_with("deploy "))
        .unwrap();
    assert!(row.starts_with("deploy  sh       exit 75"), "{table:#?}");
    std::fs::write(
        &file,
        "[deploy]\nprograms = sh\nretry-on = 75\nretry-on.label = a busy deploy lock\n\
         stop-if-output = ^no such service\nstop-if-output.label = a service that does not exist\n\
         source = the deploy tool's README\n",
    )
    .unwrap();
    let table = retry(&["--presets"]).env("XDG_CONFIG_HOME", &home).run();
    let row = table
        .stdout
        .lines()
        .find(|l| l.starts_with("deploy "))
        .unwrap();
    assert!(
        row.starts_with("deploy  sh       a busy deploy lock"),
        "{table:#?}"
    );
    ours(&["err", "no such service: web\n", "exit", "75"])
        .code(75)
        .stderr_has(
            "giving up after attempt 1/3 (exit code 75): `no such service: web` is \
             permanent (deploy preset: a service that does not exist) (reason: stop_if_output)",
        );
    // RETRY_PRESET names it too; a relative XDG_CONFIG_HOME is ignored for
    // $HOME/.config, as the XDG rules say.
    std::fs::create_dir(config.path().join(".config")).unwrap();
    std::fs::rename(&dir, config.path().join(".config/retry")).unwrap();
    retry(&["-n", "2", "-b", "1ms"])
        .helper(&["exit", "75"])
        .env("RETRY_PRESET", "deploy")
        .env("XDG_CONFIG_HOME", "relative")
        .env("HOME", &home)
        .run()
        .code(75)
        .stderr_has("giving up after 2 attempts");
}

#[test]
fn a_users_preset_file_that_is_wrong_is_named_and_nothing_runs() {
    let config = scratch();
    let dir = config.path().join("retry");
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("presets.ini");
    let home = config.path().display().to_string();
    let marker = config.path().join("ran");
    let touch = ["touch", marker.to_str().unwrap()];
    for (text, says) in [
        (
            "[curl]\nretry-on = 22\nsource = ours\n",
            "[curl] is a built-in preset; give yours another name",
        ),
        ("[ours]\nretry_on = 22\n", "line 2: unknown key `retry_on`"),
        (
            "[ours]\nretry-on = 1-0x100000000\nsource = s\n",
            "--retry-on 1-0x100000000: exit code `0x100000000` is out of range",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let run = retry(&["--preset", "ours"])
            .helper(&touch)
            .env("XDG_CONFIG_HOME", &home)
            .run();
        run.code(2)
            .stderr_lines(1)
            .stderr_has(says)
            .stderr_has(&file.display().to_string());
        assert!(!marker.exists(), "{text}: the command ran");
    }
    // A broken file is only read when a preset is named.
    retry(&[])
        .helper(&["exit", "0"])
        .env("XDG_CONFIG_HOME", &home)
        .run()
        .code(0)
        .stderr_is("");
}

/// An empty or relative HOME names no presets file: it would be one in
/// whatever directory retry runs in, anyone's.
#[test]
fn a_relative_home_names_no_presets_file() {
    let cwd = scratch();
    std::fs::create_dir(cwd.path().join(".config")).unwrap();
    let file = presets_file(&cwd.path().join(".config"));
    std::fs::write(&file, "[ours]\nretry-on = 75\nsource = s\n").unwrap();
    for home in ["", "."] {
        retry(&["--preset", "ours", "--"])
            .helper(&["exit", "0"])
            .env("XDG_CONFIG_HOME", "")
            .env("HOME", home)
            .current_dir(cwd.path())
            .run()
            .code(2)
            .stderr_lines(1)
            .stderr_has("unknown preset `ours`");
    }
}

/// `config/retry/presets.ini`, its directory made (`0755`, whatever the umask).
fn presets_file(config: &std::path::Path) -> std::path::PathBuf {
    let dir = config.join("retry");
    std::fs::create_dir(&dir).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir.join("presets.ini")
}

/// The one warning of a presets file set aside, and why.
fn ignored(file: &std::path::Path, why: &str) -> String {
    format!(
        "warning: the presets file {} is ignored: {why}; the built-in presets still apply\n",
        file.display()
    )
}

/// `RETRY_PRESET=curl`, set fleet-wide, means the same on every host: a
/// user's file that is broken is set aside with one warning, and curl's
/// rules still judge (3 is fatal to curl, retried by default).
#[test]
fn a_broken_users_file_never_breaks_a_builtin_preset() {
    let config = scratch();
    let file = presets_file(config.path());
    for (text, why) in [
        (
            "[curl]\nretry-on = 3\nsource = ours\n",
            "[curl] is a built-in preset; give yours another name, so that \
             --preset curl means the same on every machine",
        ),
        ("[ours]\nretry_on = 22\n", "line 2: unknown key `retry_on`"),
    ] {
        std::fs::write(&file, text).unwrap();
        let bin = scratch();
        let run = retry(&["-n", "3", "-b", "1ms", "--", "curl"])
            .env("PATH", fake(bin.path(), "curl", &["exit", "3"]))
            .env("RETRY_PRESET", "curl")
            .env("XDG_CONFIG_HOME", config.path())
            .run();
        run.code(3)
            .stderr_has("giving up after attempt 1/3")
            .stderr_lines(2);
        let first = run.stderr.lines().next().unwrap();
        let warning = format!(
            "warning: the presets file {} is ignored: {why}",
            file.display()
        );
        assert!(first.contains(&warning), "{run:#?}");
        assert!(
            first.ends_with("; the built-in presets still apply"),
            "{run:#?}"
        );
    }
    // Without --preset the lookup reads it: one warning, before the run.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let run = retry(&["-n", "1"])
        .helper(&["exit", "3"])
        .env("XDG_CONFIG_HOME", config.path())
        .run();
    run.code(3).stderr_lines(2);
    let first = run.stderr.lines().next().unwrap().to_owned() + "\n";
    assert!(
        first.ends_with(&ignored(&file, "it is a directory, not a regular file")),
        "{run:#?}"
    );
    // --presets lists the built-in ones, and says why once.
    let listing = retry(&["--presets"])
        .env("XDG_CONFIG_HOME", config.path())
        .run();
    listing.code(0).stderr_is(&format!(
        "retry: {}",
        ignored(&file, "it is a directory, not a regular file")
    ));
    assert!(listing.stdout.starts_with("preset  for"), "{listing:#?}");
}

/// A FIFO hung retry before the command ran (`-v`) or as it gave up (its
/// note), and a link to /dev/zero took memory until there was none: each
/// is set aside at once with one warning. The run is held to 4 GB of
/// address space, so that an unbounded read fails rather than takes the
/// machine.
#[test]
#[cfg(unix)] // FIFOs, /dev/zero, sh's ulimit
fn a_presets_file_that_would_hang_or_exhaust_retry_is_ignored_at_once() {
    use crate::harness::{outputs, wait_bounded};
    let config = scratch();
    let file = presets_file(config.path());
    let cases: [(&dyn Fn(), &str); 2] = [
        (
            &|| nix::unistd::mkfifo(&file, nix::sys::stat::Mode::S_IRWXU).unwrap(),
            "it is a FIFO, not a regular file",
        ),
        (
            &|| std::os::unix::fs::symlink("/dev/zero", &file).unwrap(),
            "it is a character device, not a regular file",
        ),
    ];
    for (make, why) in cases {
        let _ = std::fs::remove_file(&file);
        make();
        for verbose in [&["-v"][..], &[]] {
            let inner = retry(verbose)
                .args(&["-n", "2", "-b", "1ms", "--"])
                .helper(&["exit", "1"])
                .env("XDG_CONFIG_HOME", config.path())
                .into_command();
            let mut bounded = std::process::Command::new("sh");
            bounded
                .args(["-c", "ulimit -v 4000000 && exec \"$@\"", "sh"])
                .arg(inner.get_program())
                .args(inner.get_args())
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            for (key, value) in inner.get_envs() {
                match value {
                    Some(value) => bounded.env(key, value),
                    None => bounded.env_remove(key),
                };
            }
            let mut child = bounded.spawn().unwrap();
            let status = wait_bounded(&mut child, Duration::from_secs(20));
            let (_, stderr) = outputs(&mut child);
            assert_eq!(status.code(), Some(1), "{why} {verbose:?}: {stderr}");
            assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
            assert!(stderr.contains(&ignored(&file, why)), "{stderr}");
            assert!(stderr.contains("giving up after 2 attempts"), "{stderr}");
        }
    }
}

/// A presets file others may write, or another user's, is theirs to set:
/// set aside, and a preset only it defines is an error naming it. (As
/// root, another user's `retry-if-output = .` ran a success four times.)
#[test]
#[cfg(unix)] // modes, owners and chown
fn a_presets_file_others_could_write_is_not_trusted() {
    use std::os::unix::fs::PermissionsExt;
    let config = scratch();
    let file = presets_file(config.path());
    let dir = file.parent().unwrap().to_owned();
    std::fs::write(
        &file,
        "[deploy]\nprograms = deploy\nretry-if-output = .\nsource = theirs\n",
    )
    .unwrap();
    let runs = config.path().join("runs");
    let runs_text = runs.to_str().unwrap().to_owned();
    let bin = scratch();
    let path = fake(
        bin.path(),
        "curl",
        &["append", &runs_text, "x", "out", "deployed"],
    );
    let deploy = |preset: &str| {
        retry(&["-n", "4", "-b", "1ms", "--preset", preset, "--", "curl"])
            .env("PATH", &path)
            .env("XDG_CONFIG_HOME", config.path())
            .run()
    };
    let refused = |why: &str| {
        let _ = std::fs::remove_file(&runs);
        let run = deploy("deploy");
        run.code(2).stderr_lines(1).stderr_has(&format!(
            "unknown preset `deploy`; known presets: curl, wget, git, ssh, rsync, apt, docker, \
             npm, pip; the presets file {} is ignored: {why}",
            file.display()
        ));
        assert!(!runs.exists(), "{why}: the command ran");
        // A built-in preset goes on, with one warning.
        let run = deploy("curl");
        run.code(0).stdout_is("deployed");
        let warning = ignored(&file, why);
        assert_eq!(run.stderr, format!("retry: curl: {warning}"));
        assert_eq!(std::fs::read_to_string(&runs).unwrap(), "x");
    };
    let mode = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    mode(&file, 0o664);
    refused("it is writable by other users (mode 664); make it 0644");
    mode(&file, 0o644);
    mode(&dir, 0o757);
    refused(&format!(
        "{} is writable by other users (mode 757); make it 0755",
        dir.display()
    ));
    mode(&dir, 0o755);
    // The user's own, as it should be, means what it says: every line
    // matches, so each success is retried (and the run gives up).
    let _ = std::fs::remove_file(&runs);
    deploy("deploy").code(1);
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "xxxx");
    if nix::unistd::geteuid().as_raw() != 0 {
        return eprintln!("skipped: only root can hand a file to another user");
    }
    // As root, in another user's configuration directory.
    std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
    refused(&format!(
        "{} is owned by user id 65534, not by you (0) or root",
        dir.display()
    ));
    std::os::unix::fs::chown(&dir, Some(0), None).unwrap();
    std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
    refused("it is owned by user id 65534, not by you (0) or root");
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
             {} --preset curl -b 1ms -- {} -fsS \
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
