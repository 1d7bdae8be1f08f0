//! The documents say what is true: their samples are run and compared
//! with what retry prints, where retry's output can be reproduced (a
//! `--seed`, no network). Every `$ retry` sample of every document is either
//! compared or listed below with the reason it cannot be, so a sample cannot
//! slip by unchecked, wherever it moves.

use crate::harness::retry;

const README: &str = include_str!("../../README.md");

/// Every document with samples or claims about retry: (path, text). A
/// Markdown file of the repository's root or of docs/ missing here fails
/// `every_document_is_checked`.
const DOCUMENTS: &[(&str, &str)] = &[
    ("README.md", README),
    ("docs/guide.md", include_str!("../../docs/guide.md")),
    ("docs/behaviour.md", include_str!("../../docs/behaviour.md")),
    ("docs/action.md", include_str!("../../docs/action.md")),
    (
        "docs/simulation.md",
        include_str!("../../docs/simulation.md"),
    ),
    ("ARCHITECTURE.md", include_str!("../../ARCHITECTURE.md")),
    ("CONTRIBUTING.md", include_str!("../../CONTRIBUTING.md")),
    ("CHANGELOG.md", include_str!("../../CHANGELOG.md")),
];

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
        "network; a shell for fd 3 (tests/integration/logging/destinations.rs runs this pipeline with a local command)",
    ),
];

#[test]
fn every_document_is_checked() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for dir in ["", "docs"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".md") {
                found.push(if dir.is_empty() {
                    name
                } else {
                    format!("{dir}/{name}")
                });
            }
        }
    }
    for path in &found {
        assert!(
            DOCUMENTS.iter().any(|(listed, _)| listed == path),
            "{path} is not in readme.rs's DOCUMENTS: its samples would go unchecked"
        );
    }
    assert!(found.len() >= DOCUMENTS.len(), "{found:?}");
}

/// Each ```console block's samples in every document: (document, command
/// line, the lines shown after it).
fn console_samples() -> Vec<(&'static str, String, String)> {
    let mut samples = Vec::new();
    for (path, text) in DOCUMENTS {
        for block in text.split("```console\n").skip(1) {
            let block = block.split("```").next().unwrap();
            for sample in block.split("$ ").skip(1) {
                let (command, shown) = sample.split_once('\n').unwrap_or((sample, ""));
                samples.push((*path, command.to_owned(), shown.to_owned()));
            }
        }
    }
    samples
}

#[test]
fn console_samples_print_what_the_readme_shows() {
    let mut compared = 0;
    let samples = console_samples();
    for (start, _) in NOT_RUN {
        assert!(
            samples
                .iter()
                .any(|(_, command, _)| command.starts_with(start)),
            "NOT_RUN lists a sample no document has: {start}"
        );
    }
    for (path, command, shown) in samples {
        if let Some((_, why)) = NOT_RUN.iter().find(|(start, _)| command.starts_with(start)) {
            eprintln!("not run ({why}): {path}: {command}");
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
        compared += 1;
        if !cfg!(feature = "preview") {
            // A build without them refuses the plan or the simulation.
            out.code(2)
                .stderr_has("this retry was built without --plan");
            continue;
        }
        out.code(0);
        assert_eq!(out.stdout, shown, "{path}: sample `{command}` differs");
    }
    assert!(compared >= 2, "only {compared} samples compared");
}

/// The usage line in the README's Quick start, -h and the man page.
#[test]
fn usage_line_is_the_same_everywhere() {
    let section = README.split("## Quick start\n").nth(1).unwrap();
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

/// Every option the documents name in backquotes exists (or is another
/// tool's, named to point to retry's), and a default they state as
/// "`--flag` (default **V**)" is clap's.
#[test]
fn options_the_documents_name_exist_with_their_defaults() {
    let entries = help_entries();
    // Other retry tools' flags, which retry answers with its own name for
    // them, and cargo's.
    const OTHER_TOOLS: [&str; 5] = [
        "--retries",
        "--delay",
        "--max-delay",
        "--features",
        "--no-default-features",
    ];
    let mut named = 0;
    for (path, text) in DOCUMENTS {
        for span in text.split('`').skip(1).step_by(2) {
            let Some(flag) = span.strip_prefix("--") else {
                continue;
            };
            let flag: String = flag
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                .collect();
            let flag = format!("--{flag}");
            if flag == "--" || OTHER_TOOLS.contains(&flag.as_str()) {
                continue;
            }
            assert!(
                entries.iter().any(|(long, _)| *long == flag),
                "{path} names {flag}, which --help does not list"
            );
            named += 1;
        }
        for (at, _) in text.match_indices("` (default **") {
            let flag = text[..at].rsplit('`').next().unwrap();
            let value = text[at + "` (default **".len()..]
                .split("**")
                .next()
                .unwrap();
            let (_, entry) = entries
                .iter()
                .find(|(long, _)| long == flag)
                .unwrap_or_else(|| panic!("{path}: no option {flag}"));
            let clap = entry
                .split("[default: ")
                .nth(1)
                .and_then(|d| d.split(']').next());
            assert_eq!(clap, Some(value), "{path}: the default of {flag}");
        }
    }
    assert!(named > 50, "only {named} options named");
}

/// Every RETRY_ variable the documents name exists: an option's, or one the
/// command sees.
#[test]
fn variables_the_readme_names_exist() {
    let options: Vec<String> = retry_jitter::fuzzing::options()
        .into_iter()
        .filter_map(|(_, env)| env)
        .collect();
    const OTHERS: [&str; 22] = [
        "RETRY_ATTEMPT",
        // The spans' command words, asked for (src/trace/settings.rs).
        "RETRY_TRACE_COMMAND_ARGS",
        // What --on-exit is told (src/run/hooks.rs).
        "RETRY_OUTCOME",
        "RETRY_REASON",
        "RETRY_ATTEMPTS",
        "RETRY_ELAPSED_MS",
        "RETRY_COMMAND",
        // GitHub's step summary and step outputs (src/sinks/summary.rs),
        // and the Action's wishes for the lines (src/sinks/log/action.rs).
        "RETRY_STEP_SUMMARY",
        "RETRY_GITHUB_OUTPUT",
        "RETRY_GITHUB_ACTION",
        "RETRY_GITHUB_TITLE",
        // The install script's mirror and bound (scripts/install.sh,
        // scripts/action.sh).
        "RETRY_INSTALL_FROM",
        "RETRY_INSTALL_TIMEOUT",
        "RETRY_RUN_IDS",
        "RETRY_ATTEMPT_LIMIT",
        "RETRY_PREVIOUS_EXIT_CODE",
        "RETRY_EXIT_CODE",
        "RETRY_UPDATE_GENERATED",
        // For tests only: the Redis breaker's lease (src/state/breaker/fleet.rs).
        "RETRY_TEST_FLEET_LEASE_MS",
        // For the tests only: the build they run and its C library
        // (tests/integration/harness.rs, harness/c_library.rs).
        "RETRY_BIN_UNDER_TEST",
        "RETRY_BIN_UNDER_TEST_LIBC",
        // The README's example of a mode that is not a variable.
        "RETRY_PLAN",
    ];
    let mut seen = 0;
    for (path, text) in DOCUMENTS {
        for (at, _) in text.match_indices("RETRY_") {
            // RETRY_RETRY_ON holds a second RETRY_.
            if text[..at].ends_with(|c: char| c.is_ascii_uppercase() || c == '_') {
                continue;
            }
            let name: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                .collect();
            if name == "RETRY_" || text[at + name.len()..].starts_with('<') {
                continue; // RETRY_<OPTION>
            }
            assert!(
                options.contains(&name) || OTHERS.contains(&name.as_str()),
                "{path} names {name}, which retry does not read or set"
            );
            seen += 1;
        }
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
        retry(&["--retry-if-output", "", "true"]),
    ];
    // The documents wrap long spans: compare with whitespace collapsed.
    let all: String = DOCUMENTS.iter().map(|(_, text)| *text).collect();
    let readme = all.split_whitespace().collect::<Vec<_>>().join(" ");
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
            "no document quotes this message: {printed}"
        );
    }
}

/// The breaker's worst case for the defaults (issue 44), as the README
/// states it: runs resume within the default `--breaker-cooldown-max` and
/// one period, and its figure is the simulated outage's last host, as the
/// table in docs/simulation.md has it for the default cap.
#[test]
fn the_breakers_worst_case_is_the_defaults() {
    let text = README.split_whitespace().collect::<Vec<_>>().join(" ");
    let claim = text
        .split("With the defaults, once the service is back every host's runs resume within ")
        .nth(1)
        .expect("the README states the breaker's worst case for the defaults");
    let minutes: u64 = claim.split(' ').next().unwrap().parse().unwrap();
    let entries = help_entries();
    let (_, cap) = entries
        .iter()
        .find(|(long, _)| long == "--breaker-cooldown-max")
        .unwrap();
    assert!(cap.contains(&format!("[default: {minutes}m]")), "{cap}");
    let period = format!("({} minutes for a job every minute: ", minutes + 1);
    let last: u64 = claim
        .split(&period)
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no {period:?} in the README's worst case"));
    assert!(last <= (minutes + 1) * 60, "{last} s");
    let simulation = include_str!("../../docs/simulation.md");
    let row = format!("| **host breakers, after 3, 30 s, cap {minutes} m** |");
    let row = simulation
        .lines()
        .find(|line| line.starts_with(&row))
        .unwrap_or_else(|| panic!("docs/simulation.md has no row {row}"));
    assert!(row.contains(&format!(", {last}** |")), "{row}");
}

#[test]
fn version_is_as_the_readme_says() {
    let version = retry(&["--version"]).run().stdout;
    let claim = format!("prints `{}`", version.trim_end());
    assert!(README.contains(&claim), "README lacks {claim:?}");
}

/// The targets of a Markdown text's links that point into the repository
/// (no scheme, no space), each with its `#anchor` if it has one.
fn relative_links(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("](")
        .map(|(i, _)| text[i + 2..].split(')').next().unwrap_or_default())
        .filter(|target| !target.contains(':') && !target.contains(char::is_whitespace))
}

/// Every link in `dir`'s Markdown files that points at a file, relative:
/// (document, target without its #anchor).
#[cfg(unix)]
fn file_links(dir: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    let mut docs = vec![dir.join("README.md")];
    for entry in std::fs::read_dir(dir.join("docs")).unwrap() {
        docs.push(entry.unwrap().path());
    }
    let mut links = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(&doc).unwrap();
        for target in relative_links(&text) {
            let path = target.split('#').next().unwrap_or_default();
            if !path.is_empty() {
                links.push((doc.clone(), path.to_owned()));
            }
        }
    }
    links
}

/// The release archive stands alone (issue 33): it holds the licenses, and
/// no link in its README or docs points at a file it does not hold.
#[test]
#[cfg(unix)] // bash and perl, as scripts/dist.sh runs on every release runner
fn the_release_archive_links_only_to_what_it_holds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let staged = dir.path().join("retry");
    let stage = |readme: Option<&std::path::Path>| {
        let _ = std::fs::remove_dir_all(&staged);
        let mut command = std::process::Command::new("bash");
        command
            .current_dir(root)
            .arg("scripts/dist.sh")
            .arg("--docs")
            .arg(&staged);
        if let Some(readme) = readme {
            command.env("DIST_README", readme);
        }
        let out = command.output().unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    stage(None);
    for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
        assert!(
            staged.join(license).is_file(),
            "{license} is not in the archive"
        );
    }
    let links = file_links(&staged);
    assert!(
        links.iter().any(|(_, l)| l == "docs/behaviour.md"),
        "{links:?}"
    );
    for (doc, link) in &links {
        let target = doc.parent().unwrap().join(link);
        assert!(
            target.exists(),
            "{} links to {link}, not in the archive",
            doc.display()
        );
    }
    // A link to a file the archive lacks keeps its text, not its target.
    let readme = dir.path().join("README.md");
    std::fs::write(&readme, "[the code](src/main.rs), [behaviour](docs/behaviour.md#logs), [web](https://example.com/x)\n").unwrap();
    stage(Some(&readme));
    assert_eq!(
        std::fs::read_to_string(staged.join("README.md")).unwrap(),
        "the code, [behaviour](docs/behaviour.md#logs), [web](https://example.com/x)\n"
    );
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped
/// (backquotes too), spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor of a Markdown text's headings (`## Quick start` gives
/// `quick-start`; a repeated heading gets `-1`, `-2`), outside code blocks.
fn anchors(text: &str) -> Vec<String> {
    let (mut found, mut fenced) = (Vec::new(), false);
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if let (false, Some(heading)) = (fenced, line.strip_prefix('#')) {
            let base = anchor(heading.trim_start_matches('#'));
            let count = seen.entry(base.clone()).or_default();
            found.push(match *count {
                0 => base,
                n => format!("{base}-{n}"),
            });
            *count += 1;
        }
    }
    found
}

/// `path` (relative to the repository's root) without its `..`, or
/// `None` if it climbs out of the repository.
fn within(path: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut parts = Vec::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                parts.pop()?;
            }
            std::path::Component::Normal(name) => parts.push(name),
            _ => {}
        }
    }
    Some(parts.iter().collect())
}

/// Every link between the documents resolves: the file is in the
/// repository and its `#anchor` is one of that file's headings (a link
/// into the hosting site, such as `../../releases`, is left out).
#[test]
fn links_between_documents_resolve() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    for (doc, text) in DOCUMENTS {
        let dir = std::path::Path::new(doc).parent().unwrap();
        for target in relative_links(text) {
            let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
            let relative = if path.is_empty() {
                std::path::Path::new(doc)
            } else {
                &dir.join(path)
            };
            let Some(file) = within(relative) else {
                continue; // the hosting site's pages (`../../releases`)
            };
            let file = root.join(file);
            if !file.exists() {
                broken.push(format!("{doc}: {target} (no such file)"));
                continue;
            }
            let markdown = file.extension().is_some_and(|e| e == "md");
            if !fragment.is_empty() && markdown {
                let headings = anchors(&std::fs::read_to_string(&file).unwrap());
                if !headings.iter().any(|a| a == fragment) {
                    broken.push(format!("{doc}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links that lead nowhere:\n{}",
        broken.join("\n")
    );
}

#[test]
fn anchors_are_githubs() {
    assert_eq!(
        anchors("# A\n## Quick start\n```\n# not a heading\n```\n### `--plan`: a schedule\n## A\n"),
        ["a", "quick-start", "--plan-a-schedule", "a-1"]
    );
}

/// ARCHITECTURE.md's rows, as paths from the repository's root. Its format:
/// a heading whose first backquoted word ends in `/` names a folder
/// (`` ## `src/run/`: running a command ``), and each table row below it
/// names, in backquotes in its first cell, files (or folders, ending in
/// `/`) relative to that folder (`` | `fleet.rs`, `bucket.lua` | … ``); a
/// heading that names no folder (`## Crates`) ends the rows.
fn architecture_rows(text: &str) -> Vec<String> {
    let (mut rows, mut folder) = (Vec::new(), None);
    for line in text.lines() {
        if line.starts_with('#') {
            folder = line
                .split('`')
                .nth(1)
                .filter(|word| word.ends_with('/'))
                .map(str::to_owned);
        } else if let (Some(folder), Some(row)) = (&folder, line.strip_prefix('|')) {
            let first = row.split('|').next().unwrap_or_default();
            for name in first.split('`').skip(1).step_by(2) {
                rows.push(format!("{folder}{name}"));
            }
        }
    }
    rows
}

/// Every file of `src/` that is code or data (`.rs`, `.ini`, `.lua`), as
/// paths from the repository's root.
fn source_files(dir: &std::path::Path, root: &std::path::Path, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, root, found);
        } else if path
            .extension()
            .is_some_and(|e| e == "rs" || e == "ini" || e == "lua")
        {
            let relative = path.strip_prefix(root).unwrap();
            found.push(relative.to_str().unwrap().replace('\\', "/"));
        }
    }
}

/// What `architecture_names_every_source_file` finds wrong: files of `src/`
/// without a row, and rows naming nothing that exists.
fn architecture_gaps(text: &str, root: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let rows = architecture_rows(text);
    let mut files = Vec::new();
    source_files(&root.join("src"), root, &mut files);
    let unnamed = files.into_iter().filter(|f| !rows.contains(f)).collect();
    let phantoms = rows
        .into_iter()
        .filter(|row| !root.join(row).exists())
        .collect();
    (unnamed, phantoms)
}

/// ARCHITECTURE.md has a row for every file of `src/`, and no row for a
/// file that is gone: a file added or moved must be placed in the map.
#[test]
fn architecture_names_every_source_file() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = DOCUMENTS
        .iter()
        .find(|(path, _)| *path == "ARCHITECTURE.md")
        .unwrap()
        .1;
    assert!(architecture_rows(text).len() > 100);
    let (unnamed, phantoms) = architecture_gaps(text, root);
    assert!(
        unnamed.is_empty(),
        "files of src/ without a row in ARCHITECTURE.md: {unnamed:?}"
    );
    assert!(
        phantoms.is_empty(),
        "ARCHITECTURE.md's rows that name no file: {phantoms:?}"
    );
    // The check itself: a row dropped leaves its file unnamed, and a row
    // for a file that does not exist is found.
    let dropped = text.replace("| `lineage.rs` |", "| lineage |");
    assert_eq!(architecture_gaps(&dropped, root).0, ["src/run/lineage.rs"]);
    let phantom = text.replace("| `lineage.rs` |", "| `lineage.rs`, `gone.rs` |");
    assert_eq!(architecture_gaps(&phantom, root).1, ["src/run/gone.rs"]);
}
