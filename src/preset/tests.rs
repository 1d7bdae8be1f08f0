//! The presets' format, catalog and listing, as tables of cases.

use super::listing::{TABLE_WIDTH, quote, wrap};
use super::*;

const TWO: &str = "# test data\n[curl]\nprograms = curl\nretry-on = 6,7\nsource = a\n\n\
                   [wget]\nprograms = wget wget2\nfatal-on = 1\nsource = b\n";

#[test]
fn the_builtin_data_parses() {
    let presets = parse(BUILTIN).unwrap();
    let names: Vec<&str> = presets.iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        [
            "curl", "wget", "git", "ssh", "rsync", "apt", "docker", "npm", "pip"
        ]
    );
    assert_eq!(builtin(), presets);
}

#[test]
fn the_builtin_data_is_the_committed_file_without_its_comments() {
    let committed = include_str!("builtin.ini");
    assert!(BUILTIN.len() < committed.len() && !BUILTIN.contains("\n#"));
    assert_eq!(parse(BUILTIN).unwrap(), parse(committed).unwrap());
    let lines = |text: &'static str| -> Vec<&'static str> {
        text.lines()
            .filter(|line| !line.trim().is_empty() && !line.trim().starts_with('#'))
            .collect()
    };
    assert_eq!(lines(BUILTIN), lines(committed));
}

/// A catalog whose user file holds `text`.
fn user(text: &str) -> (tempfile::TempDir, Catalog) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("presets.ini");
    std::fs::write(&path, text).unwrap();
    let catalog = Catalog::from_file(Some(path));
    (dir, catalog)
}

#[test]
fn the_users_presets_follow_the_builtin_ones() {
    let (dir, catalog) = user("[deploy]\nprograms = deploy\nretry-on = 75\nsource = our wiki\n");
    assert_eq!(catalog.warning(), None);
    let presets = catalog.presets();
    assert_eq!(presets.len(), builtin().len() + 1);
    let ours = catalog.find(&presets, "deploy").unwrap();
    assert_eq!(ours.rules, [(Rule::RetryOn, "75")]);
    let file = dir.path().join("presets.ini");
    assert_eq!(ours.file, Some(file.as_path()));
    assert!(find(&presets, "curl").unwrap().file.is_none());
    let flags = ours.as_flags();
    assert!(
        flags.starts_with(&format!("# deploy (from {}): for deploy;", file.display())),
        "{flags}"
    );
    // No file: the built-in presets alone, and nothing to say.
    let none = Catalog::from_file(Some(dir.path().join("missing.ini")));
    assert_eq!(none.presets(), builtin());
    assert_eq!(none.warning(), None);
}

#[test]
fn a_users_file_that_is_wrong_is_ignored_and_the_builtin_ones_stay() {
    let ignored = |dir: &tempfile::TempDir, catalog: &Catalog, why: &str| {
        let file = dir.path().join("presets.ini");
        let file = file.display();
        assert_eq!(
            catalog.warning().unwrap(),
            format!("the presets file {file} is ignored: {why}; the built-in presets still apply")
        );
        // The built-in presets, as on every machine: curl is curl's.
        let presets = catalog.presets();
        assert_eq!(presets, builtin());
        assert!(catalog.find(&presets, "curl").unwrap().file.is_none());
        // Naming a preset only the file could define names the file.
        assert_eq!(
            catalog.find(&presets, "ours").unwrap_err(),
            format!(
                "unknown preset `ours`; known presets: curl, wget, git, ssh, rsync, apt, \
                 docker, npm, pip; the presets file {file} is ignored: {why}"
            )
        );
    };
    let (dir, clash) = user("[ours]\nsource = s\n[curl]\nretry-on = 22\nsource = s\n");
    let why = "[curl] is a built-in preset; give yours another name, \
               so that --preset curl means the same on every machine";
    ignored(&dir, &clash, why);
    let (dir, broken) = user("[ours]\nretry_on = 22\n");
    let why = "line 2: unknown key `retry_on`; a preset has programs, calls (with its \
               .options), source, the rules retry-on, fatal-on, success-on, retry-if-output, stop-if-output, \
               throttle-if-output, delay-from-output (each may have a RULE.label; \
               throttle-if-output an .advice too), and transient-if-output";
    ignored(&dir, &broken, why);
    // Bytes that are not text, and more than presets could need (at
    // most the limit is read).
    let written = |bytes: &[u8]| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("presets.ini"), bytes).unwrap();
        let catalog = Catalog::from_file(Some(dir.path().join("presets.ini")));
        (dir, catalog)
    };
    let (dir, binary) = written(b"[ours]\nsource = \xff\n");
    ignored(&dir, &binary, "it is not UTF-8 text");
    let (dir, long) = written(&b"# a comment\n".repeat(USER_FILE_LIMIT as usize / 10));
    ignored(&dir, &long, "it is larger than 1 MiB");
    // A directory in its place.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("presets.ini")).unwrap();
    let catalog = Catalog::from_file(Some(dir.path().join("presets.ini")));
    ignored(&dir, &catalog, "it is a directory, not a regular file");
}

#[test]
#[cfg(unix)] // FIFOs and modes
fn a_fifo_or_a_file_others_may_write_is_ignored_at_once() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, _) = user("");
    let file = dir.path().join("presets.ini");
    std::fs::remove_file(&file).unwrap();
    nix::unistd::mkfifo(&file, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // No writer: on main the read waited for one forever.
    let catalog = Catalog::from_file(Some(file.clone()));
    assert!(
        catalog
            .warning()
            .unwrap()
            .contains("it is a FIFO, not a regular file"),
        "{catalog:?}"
    );
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, "[ours]\nretry-if-output = .\nsource = s\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let catalog = Catalog::from_file(Some(file.clone()));
    assert!(
        catalog
            .warning()
            .unwrap()
            .contains("it is writable by other users (mode 666)"),
        "{catalog:?}"
    );
    assert_eq!(catalog.presets(), builtin());
}

#[test]
fn sections_keys_and_comments() {
    let presets = parse(TWO).unwrap();
    assert_eq!(
        presets[1],
        Preset {
            name: "wget",
            programs: vec!["wget", "wget2"],
            calls: None,
            call_options: vec![],
            rules: vec![(Rule::FatalOn, "1")],
            source: "b",
            file: None,
            labels: vec![],
            advice: None,
            transient: None,
        }
    );
    // The value is everything after the first `=`, trimmed.
    let regex = parse("[x]\nstop-if-output = a=b \nsource = s").unwrap();
    assert_eq!(regex[0].rules, [(Rule::StopIfOutput, "a=b")]);
}

#[test]
fn labels_and_the_throttle_advice_go_with_their_rules() {
    let text = "[x]\nretry-on = 7\nretry-on.label = refused\nstop-if-output = ^no$\n\
                stop-if-output.label = a no\nthrottle-if-output = ^slow$\n\
                throttle-if-output.label = slow\nthrottle-if-output.advice = add -v\nsource = s\n";
    let x = &parse(text).unwrap()[0];
    assert_eq!(
        x.labels,
        [
            (Rule::RetryOn, "refused"),
            (Rule::StopIfOutput, "a no"),
            (Rule::ThrottleIfOutput, "slow")
        ]
    );
    assert_eq!(x.label(Rule::StopIfOutput), Some("a no"));
    assert_eq!(x.label(Rule::FatalOn), None);
    assert_eq!(
        x.rules,
        [
            (Rule::RetryOn, "7"),
            (Rule::StopIfOutput, "^no$"),
            (Rule::ThrottleIfOutput, "^slow$")
        ]
    );
    assert_eq!(x.advice, Some("add -v"));
    // A file of the old keys reads the same: the slow-down line is the
    // throttle rule, its advice the rule's; and an advice is optional.
    let old = "[x]\nslow-down-if-output = ^slow$\nslow-down-if-output.advice = add -v\n\
               source = s\n";
    let old = &parse(old).unwrap()[0];
    assert_eq!(
        (old.rules.as_slice(), old.advice),
        (&[(Rule::ThrottleIfOutput, "^slow$")][..], Some("add -v"))
    );
    let bare = &parse("[x]\nthrottle-if-output = a\nsource = s\n").unwrap()[0];
    assert_eq!(bare.advice, None);
    // The label comes before or after its rule, never without it.
    let before = parse("[x]\nfatal-on.label = f\nfatal-on = 1\nsource = s\n").unwrap();
    assert_eq!(before[0].label(Rule::FatalOn), Some("f"));
    for (text, error) in [
        (
            "[x]\nfatal-on.label = f\nsource = s\n",
            "[x] has `fatal-on.label` but no `fatal-on`: a label names a rule of its preset",
        ),
        (
            "[x]\nslow-down-if-output.advice = a\nsource = s\n",
            "[x] has `throttle-if-output.advice` but no `throttle-if-output`",
        ),
        (
            "[x]\nthrottle-if-output.advice = a\nsource = s\n",
            "[x] has `throttle-if-output.advice` but no `throttle-if-output`",
        ),
        // The old key and the new are one key: given twice.
        (
            "[x]\nslow-down-if-output = a\nthrottle-if-output = b\nsource = s\n",
            "line 3: `throttle-if-output` is given twice",
        ),
        (
            "[x]\nsource.label = a\nsource = s\n",
            "unknown key `source.label`",
        ),
        (
            "[x]\nretry-on.lable = a\nsource = s\n",
            "unknown key `retry-on.lable`",
        ),
        (
            "[x]\nretry-on = 1\nretry-on.label = a\nretry-on.label = b\nsource = s\n",
            "line 4: `retry-on.label` is given twice",
        ),
    ] {
        let got = parse(text).unwrap_err();
        assert!(got.contains(error), "{text:?}: {got}");
    }
}

#[test]
fn every_builtin_rule_that_stops_has_a_label_and_curl_and_wget_advise() {
    for preset in builtin() {
        // A throttle line's label is the evidence a throttled retry's line gives.
        for rule in [Rule::FatalOn, Rule::StopIfOutput, Rule::ThrottleIfOutput] {
            if preset.rule(rule).is_some() {
                assert!(preset.label(rule).is_some(), "[{}] {rule:?}", preset.name);
            }
        }
    }
    let advice = |name| find(&builtin(), name).unwrap().advice;
    assert_eq!(
        advice("curl"),
        Some("add -D /dev/stderr to curl's arguments")
    );
    assert_eq!(
        advice("wget"),
        Some("add -S (--server-response) to wget's arguments")
    );
}

#[test]
fn the_table_has_every_preset_in_words_within_80_columns() {
    let table = table(&builtin());
    for line in table.lines() {
        assert!(line.chars().count() <= TABLE_WIDTH, "{line:?}");
        assert_eq!(line, line.trim_end(), "no trailing blanks");
    }
    let mut lines = table.lines();
    let head = lines.next().unwrap();
    assert!(head.starts_with("preset  for"), "{head}");
    let (retries, stops) = (
        head.find("retries").unwrap(),
        head.find("stops at once").unwrap(),
    );
    // Each preset's row starts with its name, its words in their columns.
    for preset in builtin() {
        let row = table
            .lines()
            .find(|line| line.split(' ').next() == Some(preset.name))
            .unwrap_or_else(|| panic!("no row for {}", preset.name));
        assert!(row[8..].starts_with(preset.programs[0]), "{row}");
        assert!(row.len() > stops, "{row}");
    }
    let curl = table.lines().find(|l| l.starts_with("curl ")).unwrap();
    assert_eq!(&curl[retries..retries + 16], "network failures", "{curl}");
    assert_eq!(&curl[stops..stops + 11], "a usage, UR", "{curl}");
    assert!(
        table.contains("retry --presets NAME prints a preset's flags"),
        "{table}"
    );
}

#[test]
fn a_preset_without_labels_is_told_by_its_codes_and_rules() {
    let ours = parse("[ours]\nprograms = deploy\nretry-on = 75\nstop-if-output = x\nsource = s\n")
        .unwrap();
    let table = table(&ours);
    let row = table.lines().nth(1).unwrap();
    assert!(row.starts_with("ours    deploy  exit 75"), "{row}");
    assert!(row.ends_with("lines matching its"), "{table}");
    assert!(
        table.lines().nth(2).unwrap().ends_with("--stop-if-output"),
        "{table}"
    );
    let none = parse("[none]\nsource = s\n").unwrap();
    let row = table_row(&none);
    assert!(row.contains("every failure but 126, 127, 141"), "{row}");
    assert!(row.ends_with(" -"), "{row}");
    assert_eq!(wrap("a bb ccc", 4), ["a bb", "ccc"]);
    assert_eq!(wrap("abcdef g", 4), ["abcdef", "g"]);
    assert_eq!(wrap("", 4), [""]);
}

/// The table's first row, the one preset of `presets`.
fn table_row(presets: &[Preset<'_>]) -> String {
    table(presets).lines().nth(1).unwrap().to_owned()
}

#[test]
fn a_catalog_with_a_users_file_reads_the_builtin_data_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("presets.ini");
    std::fs::write(&path, "[web]\nprograms = w\ncalls = *\nsource = s\n").unwrap();
    let reads = || READS.with(std::cell::Cell::get);
    let before = reads();
    let catalog = Catalog::from_file(Some(path));
    let names: Vec<&str> = catalog.presets().iter().map(|p| p.name).collect();
    assert_eq!(reads() - before, 1, "{names:?}");
    assert_eq!(names.last(), Some(&"web"));
    assert_eq!(
        builtin_names().collect::<Vec<_>>(),
        builtin().iter().map(|p| p.name).collect::<Vec<_>>()
    );
}

#[test]
fn a_user_file_as_large_as_allowed_is_read_in_linear_time() {
    // Every run reads the user's file: one of USER_FILE_LIMIT bytes of
    // small sections took half a minute when each name was compared
    // with every other; now milliseconds. The bound is generous.
    let mut text = String::new();
    while text.len() < USER_FILE_LIMIT as usize - 40 {
        text.push_str(&format!("[p{}]\nsource = s\n", text.len()));
    }
    let started = std::time::Instant::now();
    let presets = user_presets(Path::new("/u/presets.ini"), &text).unwrap();
    assert!(presets.len() > 50_000, "{}", presets.len());
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
}

#[test]
fn bad_data_is_refused_with_its_line() {
    for (text, error) in [
        ("[x]\nretry-on = 1\n", "[x] has no `source`"),
        (
            "[x]\nsource = a\n[y]\nretry-on = 1\n",
            "[y] has no `source`",
        ),
        (
            "[x]\nsource = a\n[x]\nsource = b\n",
            "line 3: preset `x` is defined twice",
        ),
        (
            "[x]\nsource = a\nretry_on = 1\n",
            "line 3: unknown key `retry_on`",
        ),
        (
            "[x]\nsource = a\nmax-attempts = 3\n",
            "unknown key `max-attempts`",
        ),
        ("[x]\nsource = a\nsource = b\n", "`source` is given twice"),
        (
            "retry-on = 1\n",
            "line 1: `retry-on` before the first `[name]`",
        ),
        ("[x\n", "not a section header"),
        ("[X y]\n", "preset name `X y`"),
        ("[x]\nsource\n", "neither `key = value`"),
        ("[x]\nsource = a\nretry-on =\n", "`retry-on` has no value"),
    ] {
        let got = parse(text).unwrap_err();
        assert!(got.contains(error), "{text:?}: {got}");
    }
    assert_eq!(parse("# nothing\n"), Ok(vec![]));
}

#[test]
fn unknown_and_empty_names_list_the_known_ones() {
    let presets = parse(TWO).unwrap();
    assert_eq!(find(&presets, "wget").unwrap().name, "wget");
    assert_eq!(
        find(&presets, "wgte").unwrap_err(),
        "unknown preset `wgte`; known presets: curl, wget"
    );
    assert!(
        find(&presets, "")
            .unwrap_err()
            .starts_with("an empty preset name;")
    );
}

#[test]
fn a_preset_named_for_another_program_is_said_once_through_a_shell_or_wrapper_not() {
    let presets = builtin();
    let fits = |name: &str, line: &str| {
        let words: Vec<std::ffi::OsString> = line.split(' ').map(Into::into).collect();
        check_fits(&find(&presets, name).unwrap(), &words[0], &words[1..])
    };
    assert_eq!(fits("curl", "curl x"), None);
    assert_eq!(fits("curl", "/usr/bin/curl x"), None);
    assert_eq!(fits("apt", "apt-get install x"), None);
    // The same rule for every preset: wget under curl's, true under apt's.
    assert_eq!(
        fits("curl", "/usr/bin/wget x").unwrap(),
        "--preset curl is for curl, but the command runs wget: its rules judge \
         wget's failures as curl's (--preset wget?)"
    );
    assert_eq!(
        fits("apt", "true").unwrap(),
        "--preset apt is for apt-get, apt, but the command runs true: its rules judge \
         true's failures as apt-get's"
    );
    assert!(fits("curl", "./fetch.sh").is_some());
    let forged = fits("curl", "x\nretry:\x1b[31m").unwrap();
    assert!(forged.contains("runs x\\nretry:\\x1b[31m: "), "{forged}");
    // Through a shell or a known wrapper: taken as given.
    for line in [
        "sh -c x",
        "/bin/bash -c x",
        "sudo -u x curl y",
        "env A=1 timeout 9 curl",
    ] {
        assert_eq!(fits("curl", line), None, "{line}");
    }
    assert!(fits("curl", "sudo wget x").is_some());
}

/// `resolve`: the preset named, or the one the program's call chose, or
/// none and why; the file the spawn would run is the caller's answer.
#[test]
fn resolve_names_chooses_or_says_why_none() {
    let catalog = Catalog::default();
    let resolve = |name: Option<&str>, line: &[&str], file: Option<std::path::PathBuf>| {
        let words: Vec<OsString> = line.iter().map(OsString::from).collect();
        let command = words.split_first().map(|(p, a)| (p.as_os_str(), a));
        let find = |_: &OsStr, _: Option<&OsStr>| file.clone();
        let files = crate::preset::claims::Files {
            find: &find,
            same: &|_, _| false,
        };
        let resolved = resolve(&catalog, name, command, &files);
        resolved.map(|r| {
            let name = r.preset.map(|preset| preset.name);
            (name, r.chosen_for.is_some(), r.no_preset, r.warnings.len())
        })
    };
    // Named: it judges every rule, and one for another program is warned of.
    assert_eq!(
        resolve(Some("curl"), &["make"], None),
        Ok((Some("curl"), false, None, 1))
    );
    assert_eq!(
        resolve(Some("curl"), &[], None),
        Ok((Some("curl"), false, None, 0))
    );
    assert_eq!(
        resolve(Some(NONE), &["curl"], None),
        Ok((None, false, None, 0))
    );
    assert!(resolve(Some("nope"), &["curl"], None).is_err());
    // Chosen by the call, unless the file that runs is another program.
    assert_eq!(
        resolve(None, &["curl", "-fsS", "x"], None),
        Ok((Some("curl"), true, None, 0))
    );
    let dir = tempfile::tempdir().unwrap();
    let busybox = dir.path().join("busybox");
    std::fs::write(&busybox, "").unwrap();
    let (preset, _, why, _) = resolve(None, &["wget", "x"], Some(busybox)).unwrap();
    assert_eq!(preset, None);
    assert!(why.unwrap().contains("BusyBox"));
    // A shell's script is no call a preset claims: -v says so.
    let (preset, _, why, _) = resolve(None, &["sh", "-c", "curl x"], None).unwrap();
    assert_eq!(preset, None);
    assert!(why.is_some());
    assert_eq!(resolve(None, &["true"], None), Ok((None, false, None, 0)));
}

#[test]
fn presets_print_as_flags_to_copy() {
    let preset = Preset {
        name: "x",
        programs: vec!["x", "y"],
        calls: None,
        call_options: vec![],
        rules: vec![(Rule::RetryOn, "5-7,28"), (Rule::StopIfOutput, r"it's \d")],
        source: "x(1)",
        file: None,
        labels: vec![],
        advice: None,
        transient: None,
    };
    assert_eq!(
        preset.as_flags(),
        "# x: for x, y; rests on x(1)\n# named only: never chosen by the program\nretry --retry-on 5-7,28 --stop-if-output 'it'\\''s \\d' -- x\n"
    );
    assert!(listing(&builtin()).starts_with("# curl: for curl; rests on curl(1)"));
    let git = find(&builtin(), "git").unwrap().as_flags();
    assert!(
        git.contains(
            "\n# chosen without --preset for git clone, fetch, pull, push, ls-remote, \
             submodule update\nretry "
        ),
        "{git}"
    );
    let curl = find(&builtin(), "curl").unwrap().as_flags();
    assert!(
        curl.contains("\n# chosen without --preset for every call of curl\n"),
        "{curl}"
    );
}

#[test]
#[cfg(unix)] // Unix paths, programs or errno wording
fn quoting_keeps_every_word_whole() {
    assert_eq!(quote("1-4,27"), "1-4,27");
    assert_eq!(quote(""), "''");
    assert_eq!(quote("a b"), "'a b'");
    assert_eq!(quote("$(x)`y`\\"), "'$(x)`y`\\'");
    assert_eq!(quote("'"), r"''\'''");
    // What sh reads back is the text itself.
    for text in [r"(?i)^retry-after:[ \t]*(.+)$", "it's", "a\"b'c"] {
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("printf %s {}", quote(text))])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), text);
    }
}

proptest::proptest! {
    #[test]
    fn parsing_never_panics(text in "[\\[\\]=#a-z \n-]{0,80}") {
        let _ = parse(&text);
    }

    #[test]
    fn a_quoted_word_is_one_word_with_no_unquoted_specials(text in ".{0,20}") {
        let quoted = quote(&text);
        let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
        proptest::prop_assert!(
            quoted.chars().all(plain) || (quoted.starts_with('\'') && quoted.ends_with('\''))
        );
    }
}

#[test]
fn pip_s_own_retry_warnings_are_transient_and_a_missing_name_is_not() {
    let presets = builtin();
    let pip = presets.iter().find(|p| p.name == "pip").unwrap();
    let regex = regex::Regex::new(pip.transient.unwrap()).unwrap();
    let warning = |cause: &str| {
        format!(
            "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, \
             status=None)) after connection broken by '{cause}': /simple/xyz/"
        )
    };
    for cause in [
        // Seen with pip 23.2.1 against a closed loopback port.
        "NewConnectionError('<pip._vendor.urllib3.connection.HTTPConnection object at \
         0x7f>: Failed to establish a new connection: [Errno 111] Connection refused')",
        "NewConnectionError('<...>: Failed to establish a new connection: [Errno -3] \
         Temporary failure in name resolution')",
        "ReadTimeoutError(\"HTTPSConnectionPool(host='x', port=443): Read timed out.\")",
        "ProtocolError('Connection aborted.', RemoteDisconnected('closed'))",
        "ResponseError('too many 503 error responses')",
        "ResponseError('too many 429 error responses')",
    ] {
        assert!(regex.is_match(&warning(cause)), "{cause}");
    }
    for line in [
        warning(
            "NewConnectionError('<...>: Failed to establish a new connection: [Errno -2] \
             Name or service not known')",
        ),
        warning("ResponseError('too many 404 error responses')"),
        "ERROR: No matching distribution found for xyz".to_owned(),
    ] {
        assert!(!regex.is_match(&line), "{line}");
    }
    // No other built-in preset has such a line.
    assert!(
        presets
            .iter()
            .all(|p| p.name == "pip" || p.transient.is_none())
    );
}
