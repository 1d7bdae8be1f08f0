//! Bad input: one line naming the option and the value, exit 2, nothing run.
//! The commands are the helper's `true` and `false` (`harness::stand_ins`),
//! so these run on every platform; what is about Unix is gated test by test.

use proptest::prelude::*;

use crate::harness::{Retry, scratch};

// Help, version, the man page and completions.
mod help;

/// `harness::retry`, with the helper's `true` and `false` first on PATH.
fn retry(args: &[&str]) -> Retry {
    crate::harness::retry(args).env("PATH", crate::harness::stand_ins())
}

/// Runs retry with `args` before a command that would leave a marker file.
#[track_caller]
fn refused(args: &[&str], needles: &[&str]) {
    let dir = scratch();
    let marker = dir.path().join("ran");
    let mut all: Vec<&str> = args.to_vec();
    all.push("--");
    let out = retry(&all)
        .helper(&[std::path::Path::new("touch"), marker.as_path()])
        .run();
    out.code(2).stderr_lines(1);
    assert!(out.stderr.starts_with("retry: "), "{out:#?}");
    for needle in needles {
        out.stderr_has(needle);
    }
    assert!(
        !marker.exists(),
        "the command ran despite bad usage: {args:?}"
    );
}

#[test]
fn bare_number_duration_gets_a_hint() {
    refused(
        &["--base", "100"],
        &["--base", "'100'", "did you mean `100ms`"],
    );
}

#[test]
fn malformed_durations_are_refused() {
    refused(&["--cap", "soon"], &["--cap", "'soon'"]);
    refused(&["--timeout", "-1s"], &["--timeout", "'-1s'"]);
}

#[test]
fn cap_below_base_is_refused() {
    refused(&["--base", "2s", "--cap", "1s"], &["--cap 1s", "--base 2s"]);
}

#[test]
fn zero_attempts_points_to_unlimited() {
    refused(&["-n", "0"], &["--max-attempts", "'0'", "unlimited"]);
    refused(&["-n", "lots"], &["--max-attempts", "'lots'"]);
}

#[test]
fn malformed_code_lists_are_refused() {
    refused(&["--retry-on", ""], &["--retry-on", "empty"]);
    refused(&["--retry-on", "1,,2"], &["--retry-on", "'1,,2'"]);
    // Unix codes stop at 255; Windows codes at 32 bits.
    if cfg!(windows) {
        refused(&["--fatal-on", "0x100000000"], &["--fatal-on", "32 bits"]);
    } else {
        refused(&["--fatal-on", "300"], &["--fatal-on", "0-255"]);
    }
    refused(&["--success-on", "9-3"], &["--success-on", "3-9"]);
}

#[test]
fn overlapping_retry_and_success_codes_are_refused() {
    refused(
        &["--retry-on", "0,1"],
        &["--retry-on 0-1", "--success-on 0"],
    );
}

#[test]
fn zero_timeouts_are_refused() {
    refused(&["--timeout", "0s"], &["--timeout 0s"]);
    refused(&["--max-time", "0ms"], &["--max-time 0s"]);
}

#[test]
fn bad_factor_jitter_and_seed_are_refused() {
    refused(&["--factor", "0.5"], &["--factor", "'0.5'"]);
    refused(&["--jitter", "half"], &["--jitter", "'half'"]);
    refused(&["--seed", "-3"], &["--seed"]);
}

#[test]
fn unknown_flags_get_a_suggestion() {
    refused(&["--bse", "1s"], &["'--bse'", "--base"]);
}

#[test]
fn flags_of_other_retry_tools_get_retrys_name_for_them() {
    let attempts = ["-n/--max-attempts", "counts attempts"];
    for flag in ["--times", "--tries", "--attempts"] {
        refused(
            &[flag, "3"],
            &[&format!("'{flag}'"), attempts[0], attempts[1], "`-n 3`"],
        );
    }
    for flag in ["--retries", "--max-retries"] {
        refused(
            &[flag, "3"],
            &[attempts[0], "not retries", "3 retries are `-n 4`"],
        );
    }
    refused(&["--retries=2"], &["2 retries are `-n 3`"]);
    for flag in ["--delay", "--interval", "--sleep", "--wait"] {
        refused(&[flag, "5s"], &[&format!("'{flag}'"), "-b/--base DURATION"]);
    }
    for flag in ["--max-delay", "--max-wait"] {
        refused(&[flag, "1m"], &["-c/--cap DURATION"]);
    }
    refused(&["--backoff", "2"], &["-f/--factor", "-b/--base"]);
    refused(&["--deadline", "5m"], &["-m/--max-time"]);
    // None of clap's misleading guesses survive.
    for flag in [
        "--times",
        "--retries",
        "--max-retries",
        "--max-delay",
        "--delay",
    ] {
        let out = retry(&[flag, "3", "true"]).run();
        for wrong in ["--timeout", "--max-time", "--net-delay", "use '--"] {
            assert!(!out.stderr.contains(wrong), "{flag}: {}", out.stderr);
        }
    }
}

/// A `--jitter` word that names no strategy gets what it meant, not
/// clap's nearest spelling (`exponential` is not a misspelt `none`).
#[test]
fn jitter_words_get_sensible_suggestions() {
    for word in ["exponential", "Exponential", "backoff"] {
        refused(
            &["--jitter", word],
            &[
                &format!("invalid value '{word}' for '--jitter <JITTER>'"),
                "every strategy backs off exponentially",
            ],
        );
        let out = retry(&["--jitter", word, "true"]).run();
        assert!(!out.stderr.contains("'none'"), "{}", out.stderr);
    }
    refused(&["--jitter", "fixed"], &["`--jitter none --factor 1`"]);
    // A misspelling keeps clap's nearest spelling.
    refused(&["--jitter", "ful"], &["a similar value exists: 'full'"]);
}

/// Debian's `retry` installs the same name: its `-t 5` (five tries) and
/// `-d 1` (a second's delay) are refused with what they are called here.
#[test]
fn debian_retrys_short_flags_get_retrys_names() {
    let timeout = "invalid value '5' for '--timeout <DURATION>': a duration needs a unit: \
                   did you mean `5ms` or `5s`?";
    let debian = "(`-t` is this retry's timeout; Debian's `retry -t 5` counts tries, which \
                  here is `-n 5`)";
    // `-t` keeps meaning a timeout, with the unit hint, and the aside.
    for typed in [&["-t", "5"][..], &["-t5"], &["-vt", "5"]] {
        refused(typed, &[timeout, debian]);
    }
    let out = retry(&["-t", "5", "--", "true"]).run();
    out.code(2)
        .stderr_is(&format!("retry: {timeout} {debian}\n"));
    // A timeout with its unit is just a timeout.
    retry(&["-n", "1", "-t", "5s", "true"]).run().code(0);
    // Not typed as `-t`: `--timeout 5`, the variable, a `-t` of the
    // command's own: the unit hint alone.
    for (args, variable) in [
        (&["--timeout", "5", "true"][..], None),
        (&["true"], Some("5")),
        (&["--timeout", "5", "--", "ssh", "-t", "5"], None),
    ] {
        let mut run = retry(args);
        if let Some(value) = variable {
            run = run.env("RETRY_TIMEOUT", value);
        }
        let out = run.run();
        out.code(2).stderr_lines(1);
        assert!(!out.stderr.contains("Debian"), "{args:?}: {}", out.stderr);
        out.stderr_has("`5ms` or `5s`");
    }
    let base = "the first sleep is -b/--base DURATION";
    for typed in [&["-d", "1"][..], &["-d1"]] {
        refused(
            typed,
            &[
                "unknown option '-d'",
                base,
                "Debian's `retry -d 1` is `-b 1s` here",
            ],
        );
    }
    refused(&["-d", "1s"], &["unknown option '-d'", base]);
    // Several on one line: every one named at once, nothing run.
    retry(&["-t", "5", "-d", "1", "--", "true"])
        .run()
        .code(2)
        .stderr_is(
            "retry: Debian's retry flags, here: `-t 5` is `-n 5` (attempts); `-d 1` is `-b 1s` \
             (the first sleep; `--jitter none --factor 1` keeps it fixed)\n",
        );
}

/// `retry ARGS -- true` with one RETRY_ variable: exit 2 and this one line.
#[track_caller]
fn refused_from_env(args: &[&str], env: (&str, &str), line: &str) {
    let out = retry(args).args(&["--", "true"]).env(env.0, env.1).run();
    out.code(2).stderr_is(&format!("{line}\n"));
}

#[test]
fn a_bad_value_from_the_environment_names_the_variable() {
    refused_from_env(
        &[],
        ("RETRY_BASE", "100"),
        "retry: `RETRY_BASE=100`: a duration needs a unit: did you mean `100ms` or `100s`?",
    );
    refused_from_env(
        &[],
        ("RETRY_RETRY_ON", ",,"),
        "retry: `RETRY_RETRY_ON=,,`: empty item in the code list `,,`",
    );
    refused_from_env(
        &[],
        ("RETRY_MAX_ATTEMPTS", "0"),
        "retry: `RETRY_MAX_ATTEMPTS=0`: 0 attempts would never run the command; for no limit use `unlimited`",
    );
    refused_from_env(
        &[],
        ("RETRY_JITTER", "half"),
        "retry: `RETRY_JITTER=half`: expected one of [none, full, equal, decorrelated, all] (a similar value exists: 'all')",
    );
    let out = retry(&["true"])
        .env("RETRY_QUIET", "true")
        .env("RETRY_VERBOSE", "1")
        .run();
    out.code(2).stderr_is(
        "retry: the argument `RETRY_QUIET=true` cannot be used with `RETRY_VERBOSE=1`\n",
    );
}

#[test]
fn cross_field_errors_say_where_each_value_came_from() {
    // A default the user never set is called one, with what to do.
    refused(
        &["--base", "2m30s"],
        &[
            "retry: `--cap 20s` (the default) is below `--base 2m 30s`: the cap must be at least the base; set --cap to 2m 30s or more\n",
        ],
    );
    refused(
        &["--cap", "500ms"],
        &[
            "`--cap 500ms` is below `--base 1s` (the default)",
            "set --base to 500ms or less",
        ],
    );
    refused(
        &["--retry-on", "0,1"],
        &[
            "`--retry-on 0-1` and `--success-on 0` (the default) both list 0",
            "leave 0 out of --retry-on",
        ],
    );
    // A variable is named as it was set.
    refused_from_env(
        &["--base", "2s"],
        ("RETRY_CAP", "1s"),
        "retry: `RETRY_CAP=1s` is below `--base 2s`: the cap must be at least the base",
    );
    refused_from_env(
        &[],
        ("RETRY_THROTTLE_BASE", "30s"),
        "retry: `--cap 20s` (the default) is below `RETRY_THROTTLE_BASE=30s`: the cap must be at least the throttle base; set --cap to 30s or more",
    );
    refused(
        &["--throttle-base", "0ms"],
        &["retry: `--throttle-base 0s` is below 1ms: a throttled failure's sleep needs a base\n"],
    );
    refused_from_env(
        &[],
        ("RETRY_TIMEOUT", "0ms"),
        "retry: `RETRY_TIMEOUT=0ms` would stop every attempt before it starts; leave it out for no limit",
    );
    refused_from_env(
        &[],
        ("RETRY_JITTER", "all"),
        "retry: `RETRY_JITTER=all` compares strategies in --simulate; a run or a plan needs one of none, full, equal, decorrelated",
    );
    refused_from_env(
        &["--success-on", "0,3"],
        ("RETRY_FATAL_ON", "3"),
        "retry: `RETRY_FATAL_ON=3` and `--success-on 0,3` both list 3: a code cannot be both",
    );
}

/// Whether `RETRY_QUIET=value` made a failing run quiet (no retry line).
fn quiet_with(value: &str) -> bool {
    let out = retry(&["-n", "2", "--base", "1ms", "false"])
        .env("RETRY_QUIET", value)
        .run();
    out.code(1);
    !out.stderr.contains("attempt 1/2 failed")
}

#[test]
fn switches_from_the_environment_take_what_people_write() {
    for yes in ["1", "true", "TRUE", "yes", "Yes", "on", "y"] {
        assert!(quiet_with(yes), "RETRY_QUIET={yes} was not taken as yes");
    }
    for no in ["0", "false", "no", "OFF", "n", ""] {
        assert!(!quiet_with(no), "RETRY_QUIET={no} was not taken as no");
    }
    refused_from_env(
        &[],
        ("RETRY_QUIET", "maybe"),
        "retry: `RETRY_QUIET=maybe`: expected 1 or 0, true or false, yes or no, on or off",
    );
    // Every switch, not only --quiet: `exit 3` runs through sh only with --shell.
    retry(&["-n", "1", "exit 3"])
        .env("RETRY_SHELL", "on")
        .run()
        .code(3);
    retry(&["-n", "1", "exit 3"])
        .env("RETRY_SHELL", "off")
        .run()
        .code(127);
}

#[test]
fn modes_are_not_read_from_the_environment_and_everything_else_is() {
    // RETRY_PLAN and friends are not variables: the command still runs.
    for mode in [
        "RETRY_PLAN",
        "RETRY_SIMULATE",
        "RETRY_MAN",
        "RETRY_COMPLETIONS",
    ] {
        let out = retry(&["-n", "1", "--"])
            .helper(&["out", "ran\n"])
            .env(mode, "bash")
            .run();
        out.code(0).stdout_is("ran\n");
    }
    // RETRY_SVG is read by --simulate, and a run ignores it.
    if !cfg!(feature = "preview") {
        return;
    }
    let dir = scratch();
    let svg = dir.path().join("charts.svg");
    let out = retry(&["--simulate", "--clients", "2", "--reps", "1", "--seed", "1"])
        .env("RETRY_SVG", &svg)
        .run();
    out.code(0);
    assert!(svg.exists(), "RETRY_SVG was ignored\n{out:#?}");
    retry(&["true"]).env("RETRY_SVG", &svg).run().code(0);
}

/// CI templates write `RETRY_X: ${{ vars.X }}`: a variable nobody set
/// arrives empty and counts as unset, every one of them at once.
#[test]
fn an_empty_variable_is_an_unset_one() {
    let variables: Vec<String> = retry_jitter::fuzzing::options()
        .into_iter()
        .filter_map(|(_, env)| env)
        .collect();
    assert!(variables.len() > 30, "{variables:?}");
    let empty = |mut run: Retry| {
        for variable in &variables {
            run = run.env(variable, "");
        }
        run
    };
    // A success that prints runs once: no empty pattern matched its line.
    let dir = scratch();
    let runs = dir.path().join("runs");
    let runs_text = runs.to_str().unwrap();
    empty(retry(&["--"]))
        .helper(&["append", runs_text, "x", "out", "ok\n"])
        .run()
        .code(0)
        .stdout_is("ok\n")
        .stderr_is("");
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "x");
    // The two, alone: RETRY_RETRY_IF_OUTPUT= and RETRY_MAX_ATTEMPTS=.
    retry(&["-b", "1ms", "--"])
        .helper(&["append", runs_text, "y", "out", "ok\n"])
        .env("RETRY_RETRY_IF_OUTPUT", "")
        .run()
        .code(0)
        .stderr_is("");
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "xy");
    retry(&["-b", "1ms", "--"])
        .helper(&crate::harness::fails(dir.path(), 9, 3))
        .env("RETRY_MAX_ATTEMPTS", "")
        .run()
        .code(3)
        .stderr_has("giving up after 5 attempts");
    assert_eq!(crate::harness::count(dir.path()), 5);
    // The defaults, each of them: the plan is the plain one.
    if cfg!(feature = "preview") {
        let plain = retry(&["--plan", "--seed", "7"]).run();
        plain.code(0);
        empty(retry(&["--plan", "--seed", "7"]))
            .run()
            .code(0)
            .stdout_is(&plain.stdout);
    }
}

#[test]
fn an_empty_value_typed_is_refused() {
    refused(
        &["--retry-if-output", ""],
        &["for '--retry-if-output <REGEX>': an empty regex would match every line"],
    );
    refused(&["--stop-if-output="], &["'--stop-if-output <REGEX>'"]);
    refused(&["--on-retry", ""], &["'--on-retry <SHELL COMMAND>'"]);
    refused(&["--max-attempts", ""], &["'--max-attempts <N|unlimited>'"]);
}

#[test]
fn a_flag_typed_is_named_as_typed_even_with_the_variable_set() {
    // The command line wins: a bad flag is the flag's fault...
    let out = retry(&["--base", "100", "true"])
        .env("RETRY_BASE", "100")
        .run();
    out.code(2)
        .stderr_lines(1)
        .stderr_has("for '--base <DURATION>'");
    // ...and a good flag hides a bad variable.
    retry(&["--base", "1ms", "-n", "1", "true"])
        .env("RETRY_BASE", "100")
        .run()
        .code(0);
}

#[test]
fn hints_never_suggest_invalid_values() {
    refused(&["--base", "nan"], &["--base", "'nan'"]);
    let out = retry(&["--base", "nan", "true"]).run();
    assert!(!out.stderr.contains("nanms"), "{out:#?}");
    refused(&["--base", "-1"], &["'-1'", "cannot be negative"]);
    let out = retry(&["--base", "-1", "true"]).run();
    assert!(!out.stderr.contains("-1ms"), "{out:#?}");
    // An option where the value was missing is named, not called negative.
    for (args, option) in [
        (&["--base", "-n", "3"][..], "'-n' for '--base"),
        (
            &[
                "--simulate",
                "--model",
                "throttle",
                "--spawn-time",
                "--span",
                "1m",
            ],
            "'--span' for '--spawn-time",
        ),
    ] {
        refused(args, &[option, "a value is missing"]);
    }
    refused(&["--retry-on", ",,"], &["empty item in the code list `,,`"]);
}

/// Values chosen to break parsers: huge, negative, not a number, empty,
/// unicode, past every integer type, and a few valid ones to get further.
const HOSTILE: &[&str] = &[
    "300000000000y",
    "18446744073709551615s",
    "18446744073709551616s",
    "584942417355y",
    "0.5ns",
    "-1",
    "-1s",
    "-0",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e400",
    "",
    " ",
    ",",
    ",,",
    "-",
    ":",
    "0",
    "1",
    "0s",
    "1ns",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999999999",
    "-9223372036854775808",
    "0-255",
    "255-0",
    "1-100000",
    "1-100000:1",
    "100000-100000",
    "1,,2",
    "unlimited",
    "all",
    "decorrelated",
    "1e308",
    "1.0000000001",
    "é",
    "∞",
    "\u{202e}1s",
    "1\u{0}s",
    "(",
    "[a-",
    "--",
    "-n",
];

fn hostile_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(HOSTILE).prop_map(str::to_owned),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => (any::<u64>(), proptest::sample::select(&["ns", "ms", "s", "m", "h", "d", "y"][..]))
            .prop_map(|(n, unit)| format!("{n}{unit}")),
        1 => any::<f64>().prop_map(|x| format!("{x}s")),
        1 => "\\PC{0,12}",
    ]
}

/// One word or flag of an argument vector: `--opt value`, `--opt=value`,
/// `--opt` alone, or a loose word.
fn argument() -> impl Strategy<Value = Vec<String>> {
    let options: Vec<String> = retry_jitter::fuzzing::options()
        .into_iter()
        .map(|(flag, _)| flag)
        .collect();
    let flag = proptest::sample::select(options);
    prop_oneof![
        3 => (flag.clone(), hostile_value()).prop_map(|(f, v)| vec![f, v]),
        1 => (flag.clone(), hostile_value()).prop_map(|(f, v)| vec![format!("{f}={v}")]),
        1 => flag.prop_map(|f| vec![f]),
        1 => hostile_value().prop_map(|v| vec![v]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Parsing and validation never panic, and a refusal is one line.
    #[test]
    fn no_argument_vector_panics_parse_or_validation(
        words in proptest::collection::vec(argument(), 0..7),
        mode in proptest::sample::select(&["--plan", "--simulate", "", "true"][..]),
    ) {
        let mut args: Vec<std::ffi::OsString> = vec!["retry".into()];
        args.extend(words.into_iter().flatten().map(Into::into));
        if !mode.is_empty() {
            args.push(mode.into());
        }
        if let Err(line) = retry_jitter::fuzzing::argv(&args) {
            prop_assert!(line.starts_with("retry: "), "{line:?}");
            prop_assert!(!line.contains('\n'), "{line:?}");
        }
    }
}

proptest! {
    // Each case starts the real binary: clap reads RETRY_* from the process
    // environment, which a test cannot change in-process safely.
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Hostile values in RETRY_* variables, under --plan so nothing runs:
    /// exit 0 or 2, and a refusal is one line.
    #[test]
    fn no_environment_value_panics(
        variables in proptest::collection::vec(
            (proptest::sample::select(
                retry_jitter::fuzzing::options().into_iter().filter_map(|(_, env)| env).collect::<Vec<_>>()
            ), hostile_value().prop_filter("no NUL in the environment", |v| !v.contains('\0'))),
            1..4,
        ),
    ) {
        let mut run = retry(&["--plan", "-n", "3"]);
        for (name, value) in &variables {
            run = run.env(name, value);
        }
        let out = run.run();
        prop_assert!(matches!(out.code, Some(0 | 2)), "{variables:?}: {out:#?}");
        if out.code == Some(2) {
            prop_assert!(out.stderr.starts_with("retry: ") && out.stderr.lines().count() == 1, "{variables:?}: {out:#?}");
        }
    }
}

#[test]
#[cfg(unix)] // bytes that are not UTF-8 in a variable: Unix's (Windows has UTF-16)
fn a_variable_that_is_not_utf8_is_named() {
    use std::os::unix::ffi::OsStringExt;
    let bad = std::ffi::OsString::from_vec(b"2\xffs".to_vec());
    retry(&["-n1", "true"])
        .env("RETRY_BASE", &bad)
        .run()
        .code(2)
        .stderr_is("retry: `RETRY_BASE` (--base) is not valid UTF-8: '2\u{fffd}s'\n");
    // A flag on the command line wins over the variable, as ever.
    retry(&["-n1", "--base", "1s", "true"])
        .env("RETRY_BASE", &bad)
        .run()
        .code(0);
}

/// A retry built without `preview` keeps --plan and --simulate in its help
/// (the same man page and completions for every build) and refuses them
/// in one line, before any other rule, running nothing.
#[cfg(not(feature = "preview"))]
#[test]
fn a_build_without_the_modes_that_only_print_refuses_them() {
    for (args, mode) in [
        (&["--plan"][..], "--plan"),
        (&["--simulate", "--reps", "1"], "--simulate"),
        (&["--plan", "--jitter", "all", "--cap", "1ms"], "--plan"),
    ] {
        let out = retry(args).run();
        out.code(2).stdout_is("").stderr_is(&format!(
            "retry: {mode}: this retry was built without --plan and --simulate \
             (the cargo feature `preview`)\n"
        ));
    }
    // Their options stay known, and stray without their mode as ever.
    retry(&["--reps", "1", "true"])
        .run()
        .code(2)
        .stderr_has("`--reps` is only for --simulate");
    let out = retry(&["--help"]).run();
    out.code(0);
    assert!(out.stdout.contains("--simulate"), "{}", out.stdout);
}
