//! A preset's rules set as flags: each through the flag's own parser, and
//! only where the user gave the flag neither on the command line nor by
//! its variable.

use crate::cli::args::RunArgs;
use crate::cli::id;
use crate::cli::values::{parse_hint_regex, parse_regex};
use crate::preset::{Preset, Rule};

/// Sets each rule of `preset` whose flag was given neither on the command
/// line nor by its variable, through the flag's own parser.
pub(crate) fn apply_preset(run: &mut RunArgs, preset: &Preset<'_>) -> Result<(), String> {
    for &(rule, text) in &preset.rules {
        if run.provenance.given(rule_id(rule)) {
            continue;
        }
        set_rule(run, rule, text).map_err(|e| {
            let from = match preset.file {
                Some(file) => format!(" (from {})", file.display()),
                None => String::new(),
            };
            format!(
                "--preset {}{from}: --{} {text}: {e}",
                preset.name,
                rule.flag()
            )
        })?;
        run.provenance.set_by_preset(preset.name, rule_id(rule));
    }
    Ok(())
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
