//! A preset's rules set as flags: each through the flag's own parser, and
//! only where the user gave the flag neither on the command line nor by
//! its variable; with them, the preset's words that are no flag: the
//! labels of the rules it set and its slow-down advice.

use crate::cli::args::RunArgs;
use crate::cli::id;
use crate::cli::values::{parse_hint_regex, parse_regex};
use crate::preset::{Preset, Rule};
use crate::run::decide::Labels;

/// What a preset says besides its flags, for the run.
#[derive(Debug, Default)]
pub(crate) struct Words {
    /// The labels of the rules that stop a run, where the preset set them.
    pub labels: Labels,
    /// `slow-down-if-output`, and the warning that gives its advice.
    pub slow_down: Option<(regex::bytes::Regex, String)>,
}

/// Sets each rule of `preset` whose flag was given neither on the command
/// line nor by its variable, through the flag's own parser; returns the
/// preset's words for the rules it set.
pub(crate) fn apply_preset(run: &mut RunArgs, preset: &Preset<'_>) -> Result<Words, String> {
    let error = |key: &str, text: &str, e: String| {
        let from = match preset.file {
            Some(file) => format!(" (from {})", file.display()),
            None => String::new(),
        };
        format!("--preset {}{from}: {key} {text}: {e}", preset.name)
    };
    let mut words = Words::default();
    for &(rule, text) in &preset.rules {
        if run.provenance.given(rule_id(rule)) {
            continue;
        }
        set_rule(run, rule, text).map_err(|e| error(&format!("--{}", rule.flag()), text, e))?;
        run.provenance.set_by_preset(preset.name, rule_id(rule));
        let (name, own) = (preset.name, preset.label(rule));
        let label = own.map(|label| format!("{name} preset: {label}").into());
        match rule {
            // Its label says what it retries: a code given up on is not that.
            Rule::RetryOn => {
                words.labels.retry_on = Some(match own {
                    Some(label) => format!("the {name} preset retries {label}").into(),
                    None => format!("not in the {name} preset's --retry-on").into(),
                });
            }
            Rule::FatalOn => words.labels.fatal_on = label,
            Rule::StopIfOutput => words.labels.stop_if = label,
            _ => {}
        }
    }
    if let Some(slow) = preset.slow_down {
        let regex =
            parse_regex(slow.pattern).map_err(|e| error("slow-down-if-output", slow.pattern, e))?;
        let advice = format!(
            "the server asked to slow down, but retry cannot see how long it asked \
             to wait (its Retry-After): {} (--preset {}; said once)",
            slow.advice, preset.name
        );
        words.slow_down = Some((regex, advice));
    }
    Ok(words)
}

/// clap's id for the flag a preset's rule sets.
fn rule_id(rule: Rule) -> &'static str {
    match rule {
        Rule::RetryOn => id::RETRY_ON,
        Rule::FatalOn => id::FATAL_ON,
        Rule::SuccessOn => id::SUCCESS_ON,
        Rule::RetryIfOutput => id::RETRY_IF_OUTPUT,
        Rule::StopIfOutput => id::STOP_IF_OUTPUT,
        Rule::DelayFromOutput => id::DELAY_FROM_OUTPUT,
    }
}

fn set_rule(run: &mut RunArgs, rule: Rule, text: &str) -> Result<(), String> {
    match rule {
        Rule::RetryOn => run.retry_on = Some(text.parse()?),
        Rule::FatalOn => run.fatal_on = Some(text.parse()?),
        Rule::SuccessOn => run.success_on = text.parse()?,
        Rule::RetryIfOutput => run.retry_if_output = Some(parse_regex(text)?),
        Rule::StopIfOutput => run.stop_if_output = Some(parse_regex(text)?),
        Rule::DelayFromOutput => run.delay_from_output = Some(parse_hint_regex(text)?),
    }
    Ok(())
}
