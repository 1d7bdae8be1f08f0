//! Bad input: one line naming the option and the value, exit 2, nothing run.

use proptest::prelude::*;

use crate::harness::{retry, scratch};

/// Runs retry with `args` before a command that would leave a marker file.
#[track_caller]
fn refused(args: &[&str], needles: &[&str]) {
    let dir = scratch();
    let marker = dir.path().join("ran");
    let script = format!("touch {}", marker.display());
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--", "sh", "-c", &script]);
    let out = retry(&all).run();
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
    refused(&["--fatal-on", "300"], &["--fatal-on", "0-255"]);
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
fn bad_environment_values_are_refused_like_flags() {
    let out = retry(&["true"]).env("RETRY_BASE", "100").run();
    out.code(2).stderr_has("--base").stderr_has("100ms");
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
        "retry: invalid value '100' for `RETRY_BASE` (--base): a duration needs a unit: did you mean `100ms` or `100s`?",
    );
    refused_from_env(
        &[],
        ("RETRY_RETRY_ON", ",,"),
        "retry: invalid value ',,' for `RETRY_RETRY_ON` (--retry-on): empty item in the code list `,,`",
    );
    refused_from_env(
        &[],
        ("RETRY_MAX_ATTEMPTS", "0"),
        "retry: invalid value '0' for `RETRY_MAX_ATTEMPTS` (--max-attempts): 0 attempts would never run the command; for no limit use `unlimited`",
    );
    let out = retry(&["true"]).env("RETRY_JITTER", "half").run();
    out.code(2)
        .stderr_lines(1)
        .stderr_has("for `RETRY_JITTER` (--jitter)");
    let out = retry(&["true"])
        .env("RETRY_QUIET", "true")
        .env("RETRY_VERBOSE", "true")
        .run();
    out.code(2)
        .stderr_lines(1)
        .stderr_has("`RETRY_QUIET` (--quiet)")
        .stderr_has("`RETRY_VERBOSE` (--verbose)");
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
    refused(&["--retry-on", ",,"], &["empty item in the code list `,,`"]);
}

#[test]
fn missing_command_is_bad_usage() {
    retry(&[])
        .run()
        .code(2)
        .stderr_lines(1)
        .stderr_has("COMMAND");
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
