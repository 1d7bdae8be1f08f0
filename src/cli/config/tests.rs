//! The validation's tests: cross-field rules, presets, verbosity.

use std::time::Duration;

use clap::CommandFactory;

use super::*;
use crate::cli::presets::Judging;
use crate::cli::refuse::fmt;
use crate::sinks::log::Verbosity;

/// The options of a run and of its outputs (every case here runs a
/// command or fails).
fn both(args: &[&str]) -> Result<(run::Options, sinks::Settings), String> {
    let args: Vec<_> = ["retry"].iter().chain(args).map(Into::into).collect();
    let parsed =
        crate::cli::parse_from(&args, crate::cli::AfterParsing::Free).map_err(|e| e.to_string())?;
    match from_cli(parsed).map_err(|e| e.to_string())? {
        Mode::Run(options, report, _) => Ok((*options, *report)),
        other => Err(format!("not a run: {other:?}")),
    }
}

/// The options of a run.
fn config(args: &[&str]) -> Result<run::Options, String> {
    both(args).map(|(options, _)| options)
}

/// The options of a run's outputs.
fn report(args: &[&str]) -> Result<sinks::Settings, String> {
    both(args).map(|(_, report)| report)
}

/// The breaker's defaults are no clap defaults (start-up parses nothing
/// for them): its help says them, and they are what a run gets.
#[test]
fn the_breakers_defaults_are_the_ones_its_help_says() {
    use crate::state::breaker::{DEFAULT_AFTER, DEFAULT_COOLDOWN};
    let options = config(&["--breaker", "ci", "true"]).unwrap();
    let params = options.breaker.clone().unwrap().params;
    assert_eq!(
        (params.after, params.cooldown),
        (DEFAULT_AFTER, DEFAULT_COOLDOWN)
    );
    let command = Cli::command();
    let help = |id: &str| {
        let arg = command.get_arguments().find(|a| a.get_id() == id).unwrap();
        arg.get_long_help().or(arg.get_help()).unwrap().to_string()
    };
    assert!(help(id::BREAKER_AFTER).ends_with(&format!("[default: {DEFAULT_AFTER}]")));
    assert!(help(id::BREAKER_COOLDOWN).ends_with(&format!("[default: {}]", fmt(DEFAULT_COOLDOWN))));
    let max = fmt(crate::state::breaker::DEFAULT_COOLDOWN_MAX);
    assert!(help(id::BREAKER_COOLDOWN_MAX).ends_with(&format!("[default: {max}]")));
    use crate::state::breaker::EXIT_OPEN;
    assert_eq!(options.breaker.unwrap().exit_code, EXIT_OPEN);
    assert!(help(id::BREAKER_EXIT_CODE).ends_with(&format!("[default: {EXIT_OPEN}]")));
    let options = config(&["--breaker", "ci", "--breaker-exit-code", "250", "true"]).unwrap();
    assert_eq!(options.breaker.unwrap().exit_code, 250);
}

/// The throttle's defaults, as the breaker's: said by its help, and what
/// a run gets; `--breaker-exit-code` is its skipped status too.
#[test]
fn the_throttles_defaults_are_the_ones_its_help_says() {
    use crate::state::throttle::{DEFAULT_K, DEFAULT_WINDOW};
    let options = config(&["--throttle", "api", "true"]).unwrap();
    let throttle = options.throttle.unwrap();
    assert_eq!(
        (
            throttle.params.k,
            throttle.params.window_ms,
            throttle.exit_code
        ),
        (DEFAULT_K, 120_000, 75)
    );
    assert_eq!(DEFAULT_WINDOW, Duration::from_secs(120));
    let command = Cli::command();
    let help = |id: &str| {
        let arg = command.get_arguments().find(|a| a.get_id() == id).unwrap();
        arg.get_long_help().or(arg.get_help()).unwrap().to_string()
    };
    assert!(help(id::THROTTLE_K).ends_with(&format!("[default: {DEFAULT_K}]")));
    assert!(help(id::THROTTLE_WINDOW).ends_with(&format!("[default: {}]", fmt(DEFAULT_WINDOW))));
    let args = [
        "--throttle",
        "api",
        "--throttle-k",
        "1.5",
        "--throttle-window",
        "30s",
    ];
    let options = config(&[&args[..], &["--breaker-exit-code", "99", "true"]].concat()).unwrap();
    let throttle = options.throttle.unwrap();
    assert_eq!(
        (
            throttle.params.k,
            throttle.params.window_ms,
            throttle.exit_code
        ),
        (1.5, 30_000, 99)
    );
    assert!(options.breaker.is_none());
}

/// Bad input: one line naming the option and its value; nothing runs.
#[test]
fn a_throttle_s_bad_values_are_refused_naming_the_option() {
    for (args, said) in [
        (&["--throttle-k", "0"][..], "'0' for '--throttle-k <K>'"),
        (&["--throttle-k", "-2"], "'-2' for '--throttle-k <K>'"),
        (&["--throttle-k", "NaN"], "'NaN' for '--throttle-k <K>'"),
        (&["--throttle-k", "inf"], "'inf' for '--throttle-k <K>'"),
        (
            &["--throttle-window", "999ms"],
            "--throttle-window 999ms` is under 1s",
        ),
        (
            &["--throttle-window", "25h"],
            "--throttle-window 1day 1h` is over 24h",
        ),
    ] {
        let line = [&["--throttle", "api"][..], args, &["true"]].concat();
        let err = config(&line).unwrap_err();
        assert!(err.contains(said), "{args:?}: {err}");
    }
    let err = config(&["--throttle", "a/b", "true"]).unwrap_err();
    assert!(err.contains("a throttle name is 1 to 64 letters"), "{err}");
    // Its parameters, and the skipped status, need a throttle (or a breaker).
    let err = config(&["--throttle-k", "3", "true"]).unwrap_err();
    assert!(
        err.contains("`--throttle-k` is only for --throttle or --throttle-status"),
        "{err}"
    );
    let err = config(&["--breaker-exit-code", "99", "true"]).unwrap_err();
    assert!(
        err.contains("`--breaker-exit-code` is only for --breaker or --throttle"),
        "{err}"
    );
}

#[test]
fn a_breaker_cooldown_max_below_the_cooldown_is_refused() {
    let err = config(&["--breaker", "ci", "--breaker-cooldown-max", "10s", "true"]).unwrap_err();
    assert!(
        err.contains("--breaker-cooldown-max 10s") && err.contains("30s"),
        "{err}"
    );
    assert!(
        err.contains("; set --breaker-cooldown-max to 30s or more"),
        "{err}"
    );
    let err = config(&[
        "--breaker-status",
        "ci",
        "--breaker-cooldown",
        "1m",
        "--breaker-cooldown-max",
        "30s",
    ])
    .unwrap_err();
    assert!(
        err.contains("--breaker-cooldown-max 30s") && err.contains("--breaker-cooldown 1m"),
        "{err}"
    );
    let options = config(&["--breaker", "ci", "--breaker-cooldown-max", "30s", "true"]).unwrap();
    let params = options.breaker.unwrap().params;
    assert_eq!(
        (params.max, params.cap()),
        (Duration::from_secs(30), Duration::from_secs(30))
    );
    // Not given: the default, or the cooldown if that is longer.
    let options = config(&["--breaker", "ci", "--breaker-cooldown", "5m", "true"]).unwrap();
    let params = options.breaker.unwrap().params;
    assert_eq!(params.max, crate::state::breaker::DEFAULT_COOLDOWN_MAX);
    assert_eq!(params.cap(), Duration::from_secs(300));
}

#[test]
fn cap_below_base_is_refused() {
    let err = config(&["--base", "2s", "--cap", "1s", "true"]).unwrap_err();
    assert!(
        err.contains("--cap 1s") && err.contains("--base 2s"),
        "{err}"
    );
    assert!(config(&["--base", "1s", "--cap", "1s", "true"]).is_ok());
}

#[test]
fn overlapping_lists_are_refused() {
    let err = config(&["--retry-on", "0-3", "true"]).unwrap_err();
    assert!(
        err.contains("--retry-on 0-3") && err.contains("both list 0"),
        "{err}"
    );
    let err = config(&["--fatal-on", "2", "--success-on", "0,2", "true"]).unwrap_err();
    assert!(err.contains("both list 2"), "{err}");
}

#[test]
fn zero_limits_are_refused() {
    assert!(
        config(&["--timeout", "0s", "true"])
            .unwrap_err()
            .contains("--timeout 0s")
    );
    assert!(
        config(&["--max-time", "0ms", "true"])
            .unwrap_err()
            .contains("--max-time 0s")
    );
    let err = config(&["--budget", "b", "--budget-timeout", "0ms", "true"]).unwrap_err();
    assert!(
        err.contains("`--budget-timeout 0s` would give up on the store before it could answer"),
        "{err}"
    );
}

#[test]
fn a_splay_and_a_reset_are_checked_against_max_time() {
    let refused = |args: &[&str]| config(&[args, &["true"][..]].concat()).unwrap_err();
    let err = refused(&["--splay", "10s", "--max-time", "10s"]);
    assert!(
        err.contains("`--splay 10s` is not below `--max-time 10s`: the splay would use up"),
        "{err}"
    );
    let err = refused(&["--splay-stable"]);
    assert!(err.contains("--splay-stable needs --splay"), "{err}");
    let err = refused(&["--reset-after", "0s"]);
    assert!(
        err.contains("`--reset-after 0s` would start the attempts anew after every failure"),
        "{err}"
    );
    let err = refused(&["--reset-after", "10m", "--max-time", "5m"]);
    assert!(
        err.contains(
            "`--reset-after 10m` is not below `--max-time 5m`: no attempt could run that long"
        ),
        "{err}"
    );
    // The supervisor, with the default --cap of 20 s: a reset
    // longer than the cap is what it is for.
    let options = config(&["-n", "unlimited", "--reset-after", "10m", "true"]).unwrap();
    assert_eq!(options.limits.reset_after, Some(Duration::from_secs(600)));
    let options = config(&[
        "--splay",
        "5m",
        "--splay-stable",
        "--max-time",
        "6m",
        "true",
    ])
    .unwrap();
    let splay = options.limits.splay.unwrap();
    assert_eq!((splay.max, splay.stable), (Duration::from_secs(300), true));
    // No splay is none at all.
    assert!(
        config(&["--splay", "0s", "true"])
            .unwrap()
            .limits
            .splay
            .is_none()
    );
}

#[test]
#[cfg(unix)] // Unix paths, programs or errno wording
fn shell_mode_joins_words_into_one_script() {
    let c = config(&["-s", "echo", "a|", "wc"]).unwrap();
    assert_eq!(c.command.program, "/bin/sh");
    assert_eq!(c.command.args, ["-c", "echo a| wc"]);
    let c = config(&["echo", "a|", "wc"]).unwrap();
    assert_eq!(
        (c.command.program.as_os_str(), c.command.args.len()),
        ("echo".as_ref(), 2)
    );
}

#[test]
fn jitter_all_is_only_for_simulate() {
    let err = config(&["--jitter", "all", "true"]).unwrap_err();
    assert!(
        err.contains("--jitter all") && err.contains("--simulate"),
        "{err}"
    );
    assert!(config(&["--jitter", "all", "--plan"]).is_err());
}

#[test]
fn stdin_limit_takes_sizes_and_defaults_to_1_gib() {
    let limit = |args: &[&str]| config(args).map(|c| c.pipes.stdin_limit.bytes());
    assert_eq!(limit(&["true"]), Ok(1 << 30));
    assert_eq!(limit(&["--stdin-limit", "64MiB", "true"]), Ok(64 << 20));
    let err = limit(&["--stdin-limit", "64M", "true"]).unwrap_err();
    assert!(err.contains("did you mean `64MiB` or `64MB`?"), "{err}");
}

#[test]
fn a_preset_sets_the_rules_not_given_rule_by_rule() {
    let curl = config(&["--preset", "curl", "curl", "-fsS", "x"]).unwrap();
    let policy = curl.policy;
    assert_eq!(
        policy.retry.to_string(),
        "5-7,12,16,18,22,28,35,52,55-56,92,95-96,124-125"
    );
    assert!(policy.fatal.contains(3) && policy.fatal.contains(60));
    assert!(curl.pipes.matchers.stop_if.is_some() && curl.pipes.matchers.delay_from.is_some());
    let line = report(&["--preset", "curl", "curl", "-fsS", "x"])
        .unwrap()
        .preset
        .unwrap();
    assert_eq!((line.name.as_str(), line.chosen), ("curl", false));
    assert_eq!(line.why, "named by `--preset curl`");
    // A flag wins for its own rule only.
    let mixed = config(&["--retry-on", "1-100", "--preset", "curl", "curl", "x"]).unwrap();
    assert_eq!(mixed.policy.retry.to_string(), "1-100");
    assert_eq!(mixed.policy.fatal, policy.fatal);
    let stop = config(&["--stop-if-output", "nope", "--preset", "curl", "curl"]).unwrap();
    let stop_if = stop.pipes.matchers.stop_if.unwrap();
    assert_eq!(stop_if.as_str(), "nope");
    assert!(stop.pipes.matchers.delay_from.is_some());
    // With --preset none nothing changes, whatever the program.
    let plain = config(&["--preset", "none", "curl", "x"]).unwrap();
    assert!(plain.policy.fatal.is_empty() && plain.pipes.matchers.stop_if.is_none());
    assert!(
        report(&["--preset", "none", "curl", "x"])
            .unwrap()
            .preset
            .is_none()
    );
    // A cross-field error says which value the preset set.
    let error = config(&["--success-on", "0,22", "--preset", "curl", "curl"]).unwrap_err();
    assert!(
        error.contains("124-125` (from --preset curl) and `--success-on 0,22` both list 22"),
        "{error}"
    );
}

#[test]
fn a_preset_chosen_by_the_program_judges_by_lines_as_the_named_one() {
    // What ends a run on evidence: the output rules and their labels.
    let judged = |options: &run::Options| {
        format!(
            "{:?} {:?} {:?} {:?}",
            options.pipes.matchers.retry_if.as_ref().map(|r| r.as_str()),
            options.pipes.matchers.stop_if.as_ref().map(|r| r.as_str()),
            options
                .pipes
                .matchers
                .delay_from
                .as_ref()
                .map(|r| r.as_str()),
            options.labels.stop_if,
        )
    };
    for (looked_up, named) in [
        (
            vec!["curl", "-fsS", "x"],
            vec!["--preset", "curl", "curl", "-fsS", "x"],
        ),
        (
            vec!["--retry-on", "1-100", "sudo", "git", "fetch"],
            vec![
                "--retry-on",
                "1-100",
                "--preset",
                "git",
                "sudo",
                "git",
                "fetch",
            ],
        ),
        (
            vec!["--stop-if-output", "nope", "apt-get", "install", "x"],
            vec![
                "--stop-if-output",
                "nope",
                "--preset",
                "apt",
                "apt-get",
                "install",
                "x",
            ],
        ),
    ] {
        let (chosen, given) = (config(&looked_up).unwrap(), config(&named).unwrap());
        assert_eq!(judged(&chosen), judged(&given), "{looked_up:?}");
        // Its codes end no run the default would retry: no fatal code,
        // every code the default retries retried (and the preset's own),
        // but where the user gave --retry-on.
        let default = crate::policy::default_retry(&chosen.policy.success);
        assert!(chosen.policy.fatal.is_empty(), "{looked_up:?}");
        let retry = &chosen.policy.retry;
        let users = looked_up.contains(&"--retry-on");
        assert_eq!(users, retry.union(&default) != *retry, "{looked_up:?}");
        // What the named preset would say of a code, kept for the word
        // said when such a code is retried.
        let (named_codes, name) = chosen.named_codes.clone().unwrap();
        assert_eq!(named_codes, given.policy, "{looked_up:?}");
        assert_eq!(
            Some(name.as_str()),
            named[named.iter().position(|w| *w == "--preset").unwrap() + 1..]
                .first()
                .copied()
        );
        assert!(given.named_codes.is_none());
        let line = report(&looked_up).unwrap().preset.unwrap();
        assert!(
            line.chosen && line.why.starts_with("chosen for `"),
            "{line:?}"
        );
    }
    // The chosen preset's retry-on leaves out the user's success codes
    // (named, the two lists clash: a cross-field error, above).
    let chosen = config(&["--success-on", "0,22", "curl"]).unwrap();
    assert!(!chosen.policy.retry.contains(22) && chosen.policy.retry.contains(7));
    // git's 141 (a git:// reset) is retried beside the default's codes.
    let git = config(&["git", "fetch"]).unwrap();
    assert!(git.policy.retry.contains(141) && git.policy.retry.contains(1));
    assert!(
        !config(&["git", "status"])
            .unwrap()
            .policy
            .retry
            .contains(141)
    );
    // Calls that pass on another program's status keep retry's defaults.
    for line in [
        &["npm", "test"][..],
        &["ssh", "h", "make"],
        &["git", "status"],
    ] {
        let plain = config(line).unwrap();
        assert!(
            report(line).unwrap().preset.is_none() && plain.policy.fatal.is_empty(),
            "{line:?}"
        );
    }
}

#[test]
fn preset_none_reads_no_data() {
    let reads = || crate::preset::READS.with(std::cell::Cell::get);
    let before = reads();
    config(&["--preset", "none", "-n", "2", "curl", "-fsS", "x"]).unwrap();
    assert_eq!(reads(), before, "--preset none read the presets");
    config(&["curl"]).unwrap();
    assert!(reads() > before);
}

/// `retry true` as parsed, before any preset.
fn plain_run_args() -> RunArgs {
    let args = ["retry".into(), "true".into()];
    match crate::cli::parse_from(&args, crate::cli::AfterParsing::Free).unwrap() {
        Parsed::Lean(run) => run,
        Parsed::Full(cli) => cli.run,
    }
}

#[test]
fn every_builtin_preset_passes_the_flags_own_parsers() {
    for preset in crate::preset::builtin() {
        let mut run = plain_run_args();
        crate::cli::presets::apply_preset(&mut run, &preset, Judging::Named).unwrap();
        // And the result passes the cross-field rules.
        let args = [
            "--preset",
            preset.name,
            preset.programs.first().copied().unwrap_or("x"),
        ];
        config(&args).unwrap_or_else(|e| panic!("[{}]: {e}", preset.name));
    }
    // Out of range on every platform (Windows: past 32 bits).
    let bad = crate::preset::parse("[x]\nretry-on = 1-0x100000000\nsource = s\n").unwrap();
    let mut run = plain_run_args();
    let error = crate::cli::presets::apply_preset(&mut run, &bad[0], Judging::Named).unwrap_err();
    assert!(
        error.starts_with("--preset x: --retry-on 1-0x100000000: exit code"),
        "{error}"
    );
}

#[test]
fn quiet_and_verbose_choose_verbosity() {
    assert_eq!(
        report(&["-q", "true"]).unwrap().log.verbosity,
        Verbosity::Quiet
    );
    assert_eq!(
        report(&["-v", "true"]).unwrap().log.verbosity,
        Verbosity::Verbose
    );
    assert!(config(&["-q", "-v", "true"]).is_err());
}

#[test]
fn a_program_no_preset_names_reads_no_data() {
    let reads = || crate::preset::READS.with(std::cell::Cell::get);
    let before = reads();
    // `sh` is a part of `ssh`, not a word; `make` is a word of a
    // comment only, and `true` not in the data at all.
    for line in [&["true"][..], &["sh", "-c", "x"], &["env", "A=1", "make"]] {
        let plain = report(line).unwrap();
        assert!(plain.preset.is_none(), "{line:?}");
    }
    assert_eq!(
        reads(),
        before,
        "a run of no preset's program read the data"
    );
    // Through a wrapper, a program that one names is still chosen.
    let chosen = report(&["env", "A=1", "curl", "-fsS", "x"]).unwrap();
    assert!(chosen.preset.is_some());
    assert!(reads() > before);
}

/// Of two mistakes the one said is the first rule's, in the order the
/// rules have always run: `--jitter all` outside --simulate after a zero
/// --timeout, before a budget that could never pay.
#[test]
fn of_two_mistakes_the_first_rule_speaks() {
    let error = config(&["--jitter", "all", "--timeout", "0s", "true"]).unwrap_err();
    assert!(error.contains("`--timeout 0s` would stop"), "{error}");
    let budget = ["--budget", "b", "--budget-tokens", "1", "true"];
    let error = config(&[&["--jitter", "all"][..], &budget].concat()).unwrap_err();
    assert!(error.contains("compares strategies"), "{error}");
    let error = config(&["--cap", "1s", "--base", "2s", "--timeout", "0s", "true"]).unwrap_err();
    assert!(
        error.contains("the cap must be at least the base"),
        "{error}"
    );
}

/// The throttle base's and the throttle cost's defaults are no clap
/// defaults either: the help says them, and they are what a run gets.
#[test]
fn the_throttle_defaults_are_the_ones_the_help_says() {
    let command = Cli::command();
    let help = |id: &str| {
        let arg = command.get_arguments().find(|a| a.get_id() == id).unwrap();
        arg.get_long_help().or(arg.get_help()).unwrap().to_string()
    };
    let base = fmt(crate::strategy::DEFAULT_THROTTLE_BASE);
    assert!(help(id::THROTTLE_BASE).ends_with(&format!("[default: {base}]")));
    let cost = crate::state::budget::bucket::DEFAULT_THROTTLE_COST;
    assert!(help(id::BUDGET_THROTTLE_COST).ends_with(&format!("[default: {cost}]")));
    let options = config(&["--budget", "ci", "true"]).unwrap();
    assert_eq!(options.budget.unwrap().params.throttle_cost, cost);
}

/// `--throttle-base`: at least 1 ms, and at most the cap as `--base` is
/// (the same message); left at its default, it is the cap when that is
/// shorter, so that a `--cap` under the default still stands.
#[test]
fn the_throttle_base_is_checked_against_the_cap_as_the_base_is() {
    let base = |args: &[&str]| config(args).map(|o| o.retries.throttle_base);
    let default = crate::strategy::DEFAULT_THROTTLE_BASE;
    assert_eq!(base(&["true"]), Ok(default));
    assert_eq!(
        base(&["--throttle-base", "2s", "true"]),
        Ok(Duration::from_secs(2))
    );
    assert_eq!(
        base(&["--cap", "1s", "--base", "1ms", "true"]),
        Ok(Duration::from_secs(1).min(default))
    );
    for (args, says) in [
        (
            &["--throttle-base", "0s", "true"][..],
            "`--throttle-base 0s` is below 1ms: a throttled failure's sleep needs a base"
                .to_owned(),
        ),
        (
            &["--throttle-base", "999us", "true"],
            "`--throttle-base 999us` is below 1ms".to_owned(),
        ),
        (
            &["--throttle-base", "1m", "true"],
            "`--cap 20s` (the default) is below `--throttle-base 1m`: the cap must be at least \
             the throttle base; set --cap to 1m or more"
                .to_owned(),
        ),
        (
            &["--cap", "2s", "--throttle-base", "3s", "true"],
            "`--cap 2s` is below `--throttle-base 3s`: the cap must be at least the throttle base"
                .to_owned(),
        ),
    ] {
        let error = config(args).unwrap_err();
        assert!(error.contains(&says), "{args:?}: {error}");
    }
    // Exactly the cap, and exactly 1 ms, stand.
    assert!(config(&["--cap", "3s", "--throttle-base", "3s", "true"]).is_ok());
    assert!(config(&["--throttle-base", "1ms", "true"]).is_ok());
}
