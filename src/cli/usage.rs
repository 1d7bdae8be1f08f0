//! Usage errors: one line on stderr and exit status 2, whatever clap or a
//! value parser had to say. Help and version go to stdout as usual.
//!
//! clap names the flag in an error even when the value came from a
//! `RETRY_*` variable nobody typed on the command line. Its error does not
//! say where the value came from, so each argument it names is checked by
//! parsing again with that argument's variable ignored: if the error goes
//! away, the variable was the culprit, and the line names it:
//! "invalid value '100' for `RETRY_BASE` (--base): …".

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::cli::Cli;

/// Bad usage, as documented: nothing has run.
const USAGE: u8 = 2;

/// Prints the error for `args` (the command line that caused it) and gives
/// the exit status.
pub fn exit(error: &clap::Error, args: &[OsString]) -> ExitCode {
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = error.print();
        return ExitCode::SUCCESS;
    }
    let _ = writeln!(std::io::stderr(), "{}", line(error, args));
    ExitCode::from(USAGE)
}

/// The one line: clap's message up to its usage block, its tip as an
/// aside, and each argument whose value came from the environment named by
/// its variable.
pub fn line(error: &clap::Error, args: &[OsString]) -> String {
    let rendered = error.render().to_string();
    let mut parts: Vec<&str> = Vec::new();
    let mut tip = None;
    for line in rendered.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        match line.strip_prefix("tip: ") {
            Some(text) => {
                tip.get_or_insert(text);
            }
            None => parts.push(line.strip_prefix("error: ").unwrap_or(line)),
        }
    }
    let mut line = format!("retry: {}", parts.join(" "));
    if let Some(tip) = tip {
        line.push_str(&format!(" ({tip})"));
    }
    for (shown, variable, flag) in from_environment(error, args) {
        line = line.replacen(&format!("'{shown}'"), &format!("`{variable}` ({flag})"), 1);
    }
    line
}

/// (how clap showed the argument, its variable, its flag) for each
/// argument in the error whose value came from its variable.
fn from_environment(error: &clap::Error, args: &[OsString]) -> Vec<(String, String, String)> {
    let shown: Vec<&str> = [ContextKind::InvalidArg, ContextKind::PriorArg]
        .into_iter()
        .filter_map(|kind| error.get(kind))
        .flat_map(|value| match value {
            ContextValue::String(one) => vec![one.as_str()],
            ContextValue::Strings(many) => many.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        })
        .collect();
    let mut command = Cli::command();
    // Finish the definition, so each argument displays as in clap's errors.
    command.build();
    let mut found = Vec::new();
    for shown in shown {
        let Some(arg) = command.get_arguments().find(|a| a.to_string() == shown) else {
            continue;
        };
        let (Some(variable), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        if std::env::var_os(variable).is_none() {
            continue;
        }
        let id = arg.get_id().clone();
        let without = Cli::command()
            .mut_arg(id, |a| a.env(None))
            .try_get_matches_from(args);
        if !same_error(error, without.err().as_ref()) {
            found.push((
                shown.to_owned(),
                variable.to_string_lossy().into_owned(),
                format!("--{long}"),
            ));
        }
    }
    found
}

/// The same complaint: kind, argument and value.
fn same_error(error: &clap::Error, other: Option<&clap::Error>) -> bool {
    let key = |e: &clap::Error| {
        (
            e.kind(),
            e.get(ContextKind::InvalidArg).map(ToString::to_string),
            e.get(ContextKind::InvalidValue).map(ToString::to_string),
        )
    };
    other.is_some_and(|other| key(error) == key(other))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(args: &[&str]) -> (clap::Error, Vec<OsString>) {
        let args: Vec<OsString> = ["retry"].iter().chain(args).map(Into::into).collect();
        let error = crate::cli::parse_from(&args).err().unwrap();
        (error, args)
    }

    #[test]
    fn a_typed_value_is_named_by_its_flag() {
        let (e, args) = error(&["--base", "100", "true"]);
        assert_eq!(
            line(&e, &args),
            "retry: invalid value '100' for '--base <DURATION>': a duration needs a unit: did you mean `100ms` or `100s`?"
        );
    }

    #[test]
    fn clap_tips_become_an_aside_on_the_same_line() {
        let (e, args) = error(&["--bse", "1s", "true"]);
        let line = line(&e, &args);
        assert!(
            !line.contains('\n') && line.contains("'--bse'") && line.contains("exists: '--base')"),
            "{line}"
        );
    }
}
