//! Bad input: one line naming the option and the value, exit 2, nothing run.

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
