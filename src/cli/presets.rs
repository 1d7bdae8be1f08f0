//! A preset's rules set as flags: each through the flag's own parser, and
//! only where the user gave the flag neither on the command line nor by
//! its variable; with them, the preset's words that are no flag: the
//! labels of the rules it set and its throttle line's advice.
//!
//! A preset chosen by the program's name, not named by the user, sets only
//! what ends a run on evidence (docs/behaviour.md, "Presets"): its output
//! rules, and its `--retry-on` added to the default one. Its `--fatal-on`
//! and `--success-on`, and the "anything else stops" of its `--retry-on`,
//! are left out: an exit code is no evidence when the program may be
//! another one of that name (BusyBox's `wget` exits 1 for every failure)
//! or may pass on a script's status (`npm install`'s postinstall, `git
//! push`'s pre-push hook).

use crate::cli::args::RunArgs;
use crate::cli::id;
use crate::cli::values::{parse_hint_regex, parse_regex};
use crate::codes::CodeSet;
use crate::policy::Policy;
use crate::preset::{Preset, Rule};
use crate::run::decide::Labels;

/// What a preset says besides its flags, for the run.
#[derive(Debug, Default)]
pub(crate) struct Words {
    /// The labels of the rules that stop a run, where the preset set them.
    pub labels: Labels,
    /// What its `throttle-if-output` stands for in a throttled retry's
    /// line, where the preset set it: its label (`HTTP 429`).
    pub throttle: Option<std::sync::Arc<str>>,
    /// The warning that gives the throttle line's advice (how to show the
    /// server's wait), where the preset set that line.
    pub advice: Option<String>,
    /// `transient-if-output`.
    pub transient: Option<regex::bytes::Regex>,
    /// What the command's own flags hide from the preset, and how to show
    /// it (`preset::quiet`): said once, at the first failure.
    pub hidden: Option<String>,
    /// For a preset `Chosen`, the verdicts its codes would give if it were
    /// named: a code it would stop on that is retried is said once.
    pub named_codes: Option<(Policy, String)>,
}

/// How the preset came to judge the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Judging {
    /// `--preset NAME` (or `RETRY_PRESET`): every rule, codes included.
    Named,
    /// Chosen by the program it runs: what ends a run needs a line.
    Chosen,
}

/// Sets each rule of `preset` whose flag was given neither on the command
/// line nor by its variable, through the flag's own parser (for a preset
/// `Chosen`, its output rules and a widened `--retry-on` only); returns the
/// preset's words for the rules it set.
pub(crate) fn apply_preset(
    run: &mut RunArgs,
    preset: &Preset<'_>,
    judging: Judging,
) -> Result<Words, String> {
    let error = |key: &str, text: &str, e: String| {
        let from = match preset.file {
            Some(file) => format!(" (from {})", file.display()),
            None => String::new(),
        };
        format!("--preset {}{from}: {key} {text}: {e}", preset.name)
    };
    let mut words = Words::default();
    let chosen = judging == Judging::Chosen;
    if chosen {
        let policy = named_codes(run, preset)
            .map_err(|(rule, text, e)| error(&format!("--{}", rule.flag()), text, e))?;
        words.named_codes = Some((policy, preset.name.to_owned()));
    }
    for &(rule, text) in &preset.rules {
        if run.provenance.given(rule_id(rule))
            || (chosen && matches!(rule, Rule::FatalOn | Rule::SuccessOn))
        {
            continue;
        }
        set_rule(run, rule, text).map_err(|e| error(&format!("--{}", rule.flag()), text, e))?;
        run.provenance.set_by_preset(preset.name, rule_id(rule));
        let (name, own) = (preset.name, preset.label(rule));
        let label = own.map(|label| format!("{name} preset: {label}").into());
        match rule {
            // What the default retries, and the preset's own codes besides
            // (git's 141): a code the default would retry is retried.
            Rule::RetryOn if chosen => {
                let success = &run.codes.success_on;
                let listed = run.codes.retry_on.take().unwrap_or_default();
                let retry = crate::policy::default_retry(success).union(&listed);
                run.codes.retry_on = Some(retry.intersection(&success.complement()));
            }
            // Its label says what it retries: a code given up on is not that.
            Rule::RetryOn => {
                words.labels.retry_on = Some(match own {
                    Some(label) => format!("the {name} preset retries {label}").into(),
                    None => format!("not in the {name} preset's --retry-on").into(),
                });
            }
            Rule::FatalOn => words.labels.fatal_on = label,
            Rule::StopIfOutput => words.labels.stop_if = label,
            // Bare, as the line gives it: `throttled (HTTP 429)`.
            Rule::ThrottleIfOutput => {
                words.throttle = Some(match own {
                    Some(label) => label.into(),
                    None => format!("the {name} preset's throttle line").into(),
                });
            }
            _ => {}
        }
    }
    say_what_is_hidden(run, preset, &mut words);
    // A `--stop-if-output` of the user's wins over the preset's evidence.
    let users_stop = run.provenance.given(rule_id(Rule::StopIfOutput));
    if let Some(pattern) = preset.transient.filter(|_| !users_stop) {
        let regex = parse_regex(pattern).map_err(|e| error("transient-if-output", pattern, e))?;
        words.transient = Some(regex);
    }
    Ok(words)
}

/// What the command's own flags hide from `preset` (curl's `-s`), and,
/// for its throttle line, how to show the server's wait: each said once.
fn say_what_is_hidden(run: &RunArgs, preset: &Preset<'_>, words: &mut Words) {
    let seen = match (run.programs.shell, run.programs.command.split_first()) {
        (false, Some((program, args))) => crate::preset::quiet::seen(program, args),
        _ => Default::default(),
    };
    words.hidden = seen
        .hidden
        .map(|advice| format!("{advice} (--preset {}; said once)", preset.name));
    // Headers already shown on a pipe: an answer simply had no Retry-After.
    // Only for the preset's own throttle line: a user's may mean anything.
    if let Some(advice) = preset
        .advice
        .filter(|_| !seen.headers && words.throttle.is_some())
    {
        words.advice = Some(format!(
            "the server asked to slow down, but retry cannot see how long it asked \
             to wait (its Retry-After): {advice} (--preset {}; said once)",
            preset.name
        ));
    }
}

/// The codes' verdicts `preset` gives when named: its code rules where the
/// user gave no flag in their place, else the user's.
fn named_codes<'a>(run: &RunArgs, preset: &Preset<'a>) -> Result<Policy, (Rule, &'a str, String)> {
    let rule = |rule: Rule| -> Result<Option<CodeSet>, _> {
        match preset.rule(rule) {
            Some(text) if !run.provenance.given(rule_id(rule)) => {
                text.parse().map(Some).map_err(|e| (rule, text, e))
            }
            _ => Ok(None),
        }
    };
    let success = rule(Rule::SuccessOn)?.unwrap_or_else(|| run.codes.success_on.clone());
    let retry = rule(Rule::RetryOn)?.or_else(|| run.codes.retry_on.clone());
    let fatal = rule(Rule::FatalOn)?.or_else(|| run.codes.fatal_on.clone());
    Ok(Policy::new(success, retry, fatal))
}

/// clap's id for the flag a preset's rule sets.
fn rule_id(rule: Rule) -> &'static str {
    match rule {
        Rule::RetryOn => id::RETRY_ON,
        Rule::FatalOn => id::FATAL_ON,
        Rule::SuccessOn => id::SUCCESS_ON,
        Rule::RetryIfOutput => id::RETRY_IF_OUTPUT,
        Rule::StopIfOutput => id::STOP_IF_OUTPUT,
        Rule::ThrottleIfOutput => id::THROTTLE_IF_OUTPUT,
        Rule::DelayFromOutput => id::DELAY_FROM_OUTPUT,
    }
}

fn set_rule(run: &mut RunArgs, rule: Rule, text: &str) -> Result<(), String> {
    match rule {
        Rule::RetryOn => run.codes.retry_on = Some(text.parse()?),
        Rule::FatalOn => run.codes.fatal_on = Some(text.parse()?),
        Rule::SuccessOn => run.codes.success_on = text.parse()?,
        Rule::RetryIfOutput => run.pipes.retry_if_output = Some(parse_regex(text)?),
        Rule::StopIfOutput => run.pipes.stop_if_output = Some(parse_regex(text)?),
        Rule::ThrottleIfOutput => run.pipes.throttle_if_output = Some(parse_regex(text)?),
        Rule::DelayFromOutput => run.pipes.delay_from_output = Some(parse_hint_regex(text)?),
    }
    Ok(())
}
