//! The README says what is true: its samples are run and compared with
//! what retry prints, where retry's output can be reproduced (a `--seed`,
//! no network). Every `$ retry` sample is either compared or listed below
//! with the reason it cannot be, so a new sample cannot slip by unchecked.

use crate::harness::retry;

const README: &str = include_str!("../../README.md");

/// `$ ` samples not run, and why.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "retry --jitter full --base 100ms --cap 10s --seed 2 -- curl",
        "network",
    ),
    ("TMPDIR=/full retry --stdin replay", "needs a full disk"),
    (
        "retry --stdout-once --base 100ms --seed 2 -- curl",
        "network",
    ),
    (
        "retry --seed 3 --retry-if-output '(?i)rate limit' --stop-if-output",
        "network (GitHub API)",
    ),
    (
        "retry --log-format json --log-file /dev/fd/3 --base 100ms --seed 2 -- curl",
        "network; a shell for fd 3 (tests/integration/logging.rs runs this pipeline with a local command)",
    ),
];

/// Each ```console block's samples: (command line, the lines shown after it).
fn console_samples() -> Vec<(String, String)> {
    let mut samples = Vec::new();
    for block in README.split("```console\n").skip(1) {
        let block = block.split("```").next().unwrap();
        for sample in block.split("$ ").skip(1) {
            let (command, shown) = sample.split_once('\n').unwrap_or((sample, ""));
            samples.push((command.to_owned(), shown.to_owned()));
        }
    }
    samples
}

#[test]
fn console_samples_print_what_the_readme_shows() {
    let mut compared = 0;
    for (command, shown) in console_samples() {
        if let Some((_, why)) = NOT_RUN.iter().find(|(start, _)| command.starts_with(start)) {
            eprintln!("not run ({why}): {command}");
            continue;
        }
        let words: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(words[0], "retry", "a sample that is not retry: {command}");
        assert!(
            words.contains(&"--seed")
                && (words.contains(&"--plan") || words.contains(&"--simulate")),
            "a sample neither reproducible nor listed in NOT_RUN: {command}"
        );
        let out = retry(&words[1..]).run();
        out.code(0);
        assert_eq!(out.stdout, shown, "README sample `{command}` differs");
        compared += 1;
    }
    assert!(compared >= 2, "only {compared} samples compared");
}

/// The usage line in the README's Usage section, -h and the man page.
#[test]
fn usage_line_is_the_same_everywhere() {
    let section = README.split("## Usage\n").nth(1).unwrap();
    let readme = section
        .split("```text\n")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    let help = retry(&["-h"]).run().stdout;
    let usage = help
        .lines()
        .find_map(|l| l.strip_prefix("Usage: "))
        .unwrap();
    assert_eq!(readme, usage);
    let man = retry(&["--man"]).run().stdout.replace("\\-", "-");
    let man = man
        .replace("\\fB", "")
        .replace("\\fI", "")
        .replace("\\fR", "");
    assert!(man.contains(&format!(".SH SYNOPSIS\n{usage}\n")));
}

/// Each option's entry in `--help`, whitespace collapsed, by long flag.
fn help_entries() -> Vec<(String, String)> {
    let help = retry(&["--help"]).run().stdout;
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in help.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let head = trimmed.split("  ").next().unwrap_or_default();
        let long = head
            .split([' ', ','])
            .find(|w| w.starts_with("--"))
            .filter(|_| trimmed.starts_with('-') && indent <= 6);
        match long {
            Some(long) => entries.push((long.to_owned(), trimmed.to_owned())),
            None if line.starts_with(' ') => {
                if let Some((_, text)) = entries.last_mut() {
                    text.push(' ');
                    text.push_str(trimmed);
                }
            }
            None => {}
        }
    }
    entries
}

/// The options table lists every option, with clap's default where the
/// README gives one as a value.
#[test]
fn options_table_lists_every_option_with_its_default() {
    let entries = help_entries();
    let table: Vec<&str> = README
        .lines()
        .skip_while(|l| !l.starts_with("| option | meaning | default |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(table.len() > 10, "no options table");
    for (long, _) in &entries {
        if long == "--help" || long == "--version" {
            continue;
        }
        let listed = table
            .iter()
            .any(|row| row.split(['`', ' ', ',']).any(|w| w == long));
        assert!(listed, "the options table lacks {long}");
    }
    let mut compared = 0;
    for row in &table[2..] {
        let cells: Vec<&str> = row.split(" | ").collect();
        let flags: Vec<&str> = cells[0]
            .split(['`', ' ', ','])
            .filter(|w| w.starts_with("--"))
            .collect();
        let defaults: Vec<&str> = cells
            .last()
            .unwrap()
            .trim_end_matches(" |")
            .split(", ")
            .collect();
        if flags.len() != defaults.len() {
            continue;
        }
        for (flag, default) in flags.iter().zip(defaults) {
            let Some(value) = default.strip_prefix('`').and_then(|d| d.strip_suffix('`')) else {
                continue;
            };
            let (_, text) = entries.iter().find(|(long, _)| long == flag).unwrap();
            let clap = text
                .split("[default: ")
                .nth(1)
                .and_then(|d| d.split(']').next());
            assert_eq!(clap, Some(value), "README's default for {flag}");
            compared += 1;
        }
    }
    assert!(compared >= 10, "only {compared} defaults compared");
}

/// Every RETRY_ variable the README names exists: an option's, or one the
/// command sees.
#[test]
fn variables_the_readme_names_exist() {
    let options: Vec<String> = retry_jitter::fuzzing::options()
        .into_iter()
        .filter_map(|(_, env)| env)
        .collect();
    const OTHERS: [&str; 7] = [
        "RETRY_ATTEMPT",
        "RETRY_RUN_IDS",
        "RETRY_ATTEMPT_LIMIT",
        "RETRY_PREVIOUS_EXIT_CODE",
        "RETRY_EXIT_CODE",
        "RETRY_UPDATE_GENERATED",
        // The README's example of a mode that is not a variable.
        "RETRY_PLAN",
    ];
    let mut seen = 0;
    for (at, _) in README.match_indices("RETRY_") {
        // RETRY_RETRY_ON holds a second RETRY_.
        if README[..at].ends_with(|c: char| c.is_ascii_uppercase() || c == '_') {
            continue;
        }
        let name: String = README[at..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || *c == '_')
            .collect();
        if name == "RETRY_" || README[at + name.len()..].starts_with('<') {
            continue; // RETRY_<OPTION>
        }
        assert!(
            options.contains(&name) || OTHERS.contains(&name.as_str()),
            "the README names {name}, which retry does not read or set"
        );
        seen += 1;
    }
    assert!(seen > 10);
    assert!(
        retry(&["-n", "1", "echo", "ran"])
            .env("RETRY_PLAN", "1")
            .run()
            .stdout
            == "ran\n"
    );
}

/// One-line messages the README quotes (up to a `…`), and how to get them.
#[test]
fn quoted_messages_are_what_retry_prints() {
    let cases = [
        retry(&["--base", "100", "true"]),
        retry(&["true"]).env("RETRY_BASE", "100"),
        retry(&["--base", "2m30s", "true"]),
        retry(&["--retries", "3", "true"]),
    ];
    // The README wraps long spans: compare with whitespace collapsed.
    let readme = README.split_whitespace().collect::<Vec<_>>().join(" ");
    for run in cases {
        let out = run.run();
        out.code(2);
        let printed = out.stderr.trim_end();
        let quoted = readme
            .match_indices("``retry: ")
            .map(|(at, _)| readme[at + 2..].split("``").next().unwrap().trim_end())
            .find(|q| {
                let q = q.trim_end_matches('…').trim_end();
                printed.starts_with(q) && q.len() > "retry: ".len() + 10
            });
        assert!(
            quoted.is_some(),
            "the README does not quote this message: {printed}"
        );
    }
}

#[test]
fn version_is_as_the_readme_says() {
    let version = retry(&["--version"]).run().stdout;
    let claim = format!("prints `{}`", version.trim_end());
    assert!(README.contains(&claim), "README lacks {claim:?}");
}
