//! Help, version, the man page and shell completions: what retry prints
//! when asked about itself. Moved out of usage.rs (issue 51) so each file
//! stays under 800 lines; its gates are usage.rs's, and test by test.

use super::retry;

const USAGE: &str = "retry [OPTIONS] [--] COMMAND [ARGS]...";

#[test]
fn missing_command_is_bad_usage() {
    let alone = retry(&[]).run();
    alone.code(2);
    assert!(
        alone.stderr.starts_with(&format!("Usage: {USAGE}\n")),
        "{alone:#?}"
    );
    alone.stderr_has("'retry --help'");
    retry(&["-n", "3"]).run().code(2).stderr_is(&format!(
        "retry: no COMMAND to run after the options (usage: {USAGE})\n"
    ));
}

#[test]
fn short_help_is_an_overview_with_examples() {
    let short = retry(&["-h"]).run();
    short.code(0);
    let lines = short.stdout.lines().count();
    // An overview fits a terminal's scrollback at a glance (issue 33): the
    // details of each option are the second paragraph of its help, shown
    // by --help only.
    assert!(lines <= 80, "-h has {lines} lines\n{}", short.stdout);
    assert!(short.stdout.contains(&format!("Usage: {USAGE}\n")));
    let examples = short
        .stdout
        .split("Examples:\n")
        .nth(1)
        .expect("-h has examples");
    let commands = examples
        .lines()
        .filter(|l| l.starts_with("  retry "))
        .count();
    assert_eq!(commands, 6, "{examples}");
    // The details are for --help.
    for detail in ["--clients", "--stdin-limit", "--foreground"] {
        assert!(!short.stdout.contains(detail), "-h shows {detail}");
    }
    assert!(short.stdout.contains("retry --help"));
}

/// -h names the options people reach for, each under the heading of its
/// situation (issue 22: they were only in --help).
#[test]
fn short_help_shows_the_options_of_each_situation() {
    let short = retry(&["-h"]).run().stdout;
    let under = |heading: &str| -> String {
        let section = short
            .split(&format!("\n{heading}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("-h has no heading {heading:?}\n{short}"));
        section
            .lines()
            .take_while(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let situations = [
        ("Logging:", &["--log-format", "--log-file", "--quiet"][..]),
        (
            "Pipelines:",
            &["--stdin", "--stdout-once", "--retry-if-output"][..],
        ),
        (
            "Programs and servers (curl, apt, git…):",
            &["--preset", "--delay-from-output"][..],
        ),
        ("Shared retry budget (--budget):", &["--budget <NAME>"][..]),
        ("Modes (run no command):", &["--plan", "--presets"][..]),
    ];
    for (heading, flags) in situations {
        let section = under(heading);
        for flag in flags {
            assert!(
                section.contains(flag),
                "-h lacks {flag} under {heading}\n{section}"
            );
        }
    }
    // The presets' names, as clap lists a value's choices.
    let programs = under("Programs and servers (curl, apt, git…):");
    assert!(programs.contains("possible values:") && programs.contains("curl"));
}

#[test]
fn long_help_is_complete_and_groups_simulate_only_options() {
    let long = retry(&["--help"]).run();
    long.code(0);
    for (flag, _) in retry_jitter::fuzzing::options() {
        assert!(long.stdout.contains(&flag), "--help lacks {flag}");
    }
    let simulation = long
        .stdout
        .split("Simulation (--simulate only):\n")
        .nth(1)
        .expect("--help has a heading for --simulate's options");
    let simulation: Vec<&str> = simulation
        .lines()
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect();
    let simulation = simulation.join("\n");
    for flag in ["--clients", "--reps", "--net-delay", "--net-sd", "--svg"] {
        assert!(simulation.contains(flag), "{flag} is not under Simulation");
    }
    for section in [
        "Examples:",
        "Environment:",
        "DURATION:",
        "CODES:",
        "Exit status:",
    ] {
        assert!(long.stdout.contains(section), "--help lacks {section}");
    }
}

#[test]
fn man_page_has_the_sections_of_a_man_page() {
    let man = retry(&["--man"]).run();
    man.code(0);
    assert!(
        !man.stdout.contains('\r'),
        "retry --man prints CRs: man/retry.1 was checked out with CRLF line endings \
         (.gitattributes keeps it LF)"
    );
    let page = man.stdout.replace("\\-", "-");
    let sections: Vec<&str> = page
        .lines()
        .filter_map(|l| l.strip_prefix(".SH "))
        .map(|s| s.trim_matches('"'))
        .collect();
    for wanted in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "OPTIONS",
        "DURATION AND CODES",
        "ENVIRONMENT",
        "EXIT STATUS",
        "EXAMPLES",
        "SEE ALSO",
    ] {
        assert!(sections.contains(&wanted), "no {wanted} in {sections:?}");
    }
    let plain = page
        .replace("\\fB", "")
        .replace("\\fI", "")
        .replace("\\fR", "");
    let synopsis = plain.split(".SH SYNOPSIS\n").nth(1).unwrap();
    assert_eq!(synopsis.lines().next(), Some(USAGE));
    let environment = plain.split(".SH ENVIRONMENT\n").nth(1).unwrap();
    let environment = environment.split(".SH").next().unwrap();
    for (flag, variable) in retry_jitter::fuzzing::options() {
        if let Some(variable) = variable {
            assert!(
                environment.contains(&variable),
                "ENVIRONMENT lacks {variable} ({flag})"
            );
        }
    }
    for seen in [
        "RETRY_ATTEMPT",
        "RETRY_PREVIOUS_EXIT_CODE",
        "RETRY_EXIT_CODE",
    ] {
        assert!(environment.contains(seen), "ENVIRONMENT lacks {seen}");
    }
}

/// The man page renders without a warning from groff, at the widths man
/// uses on a terminal (`-rLL`; plain `groff -man` hides "can't break line")
/// and on a device without Unicode. Skipped where groff is not installed
/// (`.ci/run` installs it).
#[test]
fn the_man_page_renders_without_troff_warnings() {
    let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man/retry.1");
    let mut runs = 0;
    for device in ["-Tutf8", "-Tascii"] {
        for width in ["-rLL=78n", "-rLL=65n", "-rLL=100n"] {
            let Ok(out) = std::process::Command::new("groff")
                .args(["-ww", "-z", "-man", device, width])
                .arg(&page)
                .output()
            else {
                eprintln!("groff is not installed: the man page's troff warnings are not checked");
                return;
            };
            let warnings = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && warnings.is_empty(),
                "groff {device} {width}: {warnings}"
            );
            runs += 1;
        }
    }
    assert_eq!(runs, 6);
}

/// What bash completes for the words of `line` (the last one being completed),
/// with retry's script sourced, in `dir`, with `dir` first in PATH.
#[cfg(unix)]
fn bash_completes(dir: &std::path::Path, line: &[&str]) -> Vec<String> {
    bash_completes_on(dir, &[dir], line)
}

/// `bash_completes` with `first` before the PATH.
#[cfg(unix)]
fn bash_completes_on(
    dir: &std::path::Path,
    first: &[&std::path::Path],
    line: &[&str],
) -> Vec<String> {
    let script = dir.join("retry.bash");
    let out = retry(&["--completions", "bash"]).run();
    std::fs::write(&script, &out.stdout).unwrap();
    let test = r#"source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
        _retry retry "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf '%s\n' "${COMPREPLY[@]}""#;
    let first: Vec<String> = first.iter().map(|d| d.display().to_string()).collect();
    let path = format!(
        "{}:{}",
        first.join(":"),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", test, "bash"])
        .arg(&script)
        .args(line)
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .expect("bash runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
#[cfg(unix)] // bash, and an executable made by its mode bits
fn bash_completes_retrys_options_then_the_commands_own() {
    let dir = crate::harness::scratch();
    let program = dir.path().join("zz-retry-test-program");
    std::fs::write(&program, "#!/bin/sh\n").unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&program).unwrap().permissions(),
        0o755,
    );
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(dir.path().join("a-file"), "").unwrap();
    let has =
        |line: &[&str], word: &str| bash_completes(dir.path(), line).iter().any(|w| w == word);
    // Before COMMAND: retry's own options and values.
    assert!(has(&["retry", "--ti"], "--timeout"));
    assert!(has(&["retry", "-n", "3", "--jitter", "f"], "full"));
    // What a run takes: `all` is for --simulate, which a run refuses.
    assert_eq!(
        bash_completes(dir.path(), &["retry", "--jitter", ""]),
        ["none", "full", "equal", "decorrelated"]
    );
    // A duration is not a file name.
    assert!(!has(&["retry", "--base", ""], "a-file"));
    assert!(!has(&["retry", "-t", "a"], "a-file"));
    // COMMAND's place: command names, after options and after `--`.
    assert!(has(&["retry", "zz-retry-test"], "zz-retry-test-program"));
    assert!(has(
        &["retry", "-n", "3", "--base", "1s", "zz-retry"],
        "zz-retry-test-program"
    ));
    assert!(has(&["retry", "--", "zz-retry"], "zz-retry-test-program"));
    // A name in two PATH directories (/bin and /usr/bin on a merged /usr)
    // is offered once: `-o nosort` keeps readline from dropping repeats.
    let again = dir.path().join("again");
    std::fs::create_dir(&again).unwrap();
    std::fs::copy(&program, again.join("zz-retry-test-program")).unwrap();
    let both = [dir.path(), again.as_path()];
    for line in [&["retry", "zz-retry"][..], &["retry", "--", "zz-retry"]] {
        assert_eq!(
            bash_completes_on(dir.path(), &both, line),
            ["zz-retry-test-program"],
            "{line:?}"
        );
    }
    // After COMMAND: never retry's options.
    for line in [
        &["retry", "--", "curl", "--ti"][..],
        &["retry", "-n", "2", "curl", "--ti"],
    ] {
        assert!(!has(line, "--timeout"), "{line:?} offers retry's --timeout");
    }
}

#[test]
fn zsh_and_fish_complete_commands_and_no_files_for_durations() {
    let zsh = retry(&["--completions", "zsh"]).run().stdout;
    assert!(
        zsh.contains(":_cmdambivalent'"),
        "zsh does not complete COMMAND"
    );
    let base = zsh.lines().find(|l| l.starts_with("'--base=")).unwrap();
    assert!(base.ends_with(":DURATION:' \\"), "{base}");
    let fish = retry(&["--completions", "fish"]).run().stdout;
    let base = fish.lines().find(|l| l.contains("-l base ")).unwrap();
    assert!(base.ends_with(" -r -f"), "{base}");
}

#[test]
fn help_and_version_go_to_stdout() {
    let help = retry(&["--help"]).run();
    help.code(0);
    for needle in [
        "--jitter",
        "--max-attempts",
        "RETRY_",
        "defeats jitter",
        "--foreground",
    ] {
        assert!(help.stdout.contains(needle), "--help lacks {needle}");
    }
    let version = retry(&["--version"]).run();
    version.code(0).stdout_is(&format!(
        "retry {} (retry-jitter)\n",
        env!("CARGO_PKG_VERSION")
    ));
}
