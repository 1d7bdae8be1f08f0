//! Where each value came from: typed on the command line, set by its
//! `RETRY_*` variable, left at its default, or set by `--preset`. It is
//! recorded once, from clap's `ArgMatches` (`value_source`), and carried
//! with the parsed options, as ripgrep's low-level arguments carry theirs
//! into the high-level ones: the stray-option check, the preset's "given,
//! so the preset leaves it be", the cross-field rules' messages and the
//! `--log-file` open error all ask this record, and nothing reads argv or
//! the environment again to guess.
//!
//! A clap error comes before any matches: for it, the same record is built
//! from a lenient parse of the same command (`Provenance::lenient`): every
//! value taken raw, so one that fails its parser still counts where it came
//! from, and clap's errors ignored. Only its usage errors pay for that
//! second parse. It also tells `-t` from `--timeout`, the one spelling a
//! message needs (Debian's `retry -t 5` counts tries).

use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, CommandFactory, Id};

use crate::cli::{Cli, id};

/// Where each matched argument's value came from (see the module's doc).
/// Empty (a `RunArgs` parsed directly, in tests), every value counts as
/// typed.
#[derive(Clone, Debug, Default)]
pub struct Provenance {
    sources: Vec<(Id, ValueSource)>,
    /// `--preset NAME` and the ids of the rules it set.
    preset: Option<(String, Vec<&'static str>)>,
    /// The values typed after `-t` rather than `--timeout` (a lenient
    /// record only).
    after_short_t: Vec<OsString>,
}

/// `-t` in the lenient command, apart from `--timeout`.
const SHORT_T: &str = "timeout typed as -t";

impl Provenance {
    /// The record of a parse that succeeded, read before the values are
    /// moved out of `matches`.
    pub fn of(matches: &ArgMatches) -> Self {
        let sources = matches
            .ids()
            .filter_map(|id| Some((id.clone(), matches.value_source(id.as_str())?)))
            .collect();
        Provenance {
            sources,
            ..Provenance::default()
        }
    }

    /// Records `ids` as left at their defaults: the defaulted options of
    /// the groups a parse of `CommonArgs` leaves out.
    pub fn defaulted(&mut self, ids: &[&'static str]) {
        let defaulted = ids
            .iter()
            .map(|id| (Id::from(*id), ValueSource::DefaultValue));
        self.sources.extend(defaulted);
    }

    /// The record of a command line clap refused (program name first):
    /// as far as clap got, what it typed and what the environment set.
    pub fn lenient(args: &[OsString]) -> Self {
        let command = crate::cli::empty_variables_unset(Cli::command())
            .ignore_errors(true)
            .mut_args(raw)
            .mut_arg(id::TIMEOUT, |timeout| timeout.short(None))
            .arg(raw(Arg::new(SHORT_T)
                .short('t')
                .action(ArgAction::Append)
                .allow_hyphen_values(true)));
        let Ok(matches) = command.try_get_matches_from(args) else {
            // Help or version: nothing to record.
            return Provenance::default();
        };
        let mut record = Provenance::of(&matches);
        if let Some(values) = matches.get_raw(SHORT_T) {
            record.after_short_t = values.map(ToOwned::to_owned).collect();
            record.sources.retain(|(id, _)| id != id::TIMEOUT);
            record
                .sources
                .push((Id::from(id::TIMEOUT), ValueSource::CommandLine));
        }
        record
    }

    fn source(&self, id: &str) -> Option<ValueSource> {
        self.sources
            .iter()
            .find(|(known, _)| known == id)
            .map(|(_, source)| *source)
    }

    /// Typed on the command line.
    pub fn typed(&self, id: &str) -> bool {
        self.source(id) == Some(ValueSource::CommandLine)
    }

    /// Given on the command line or by its variable: a preset leaves it be.
    pub fn given(&self, id: &str) -> bool {
        matches!(
            self.source(id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        )
    }

    /// Set at all: typed, by its variable or by its default.
    pub fn present(&self, id: &str) -> bool {
        self.source(id).is_some()
    }

    pub fn is_default(&self, id: &str) -> bool {
        self.source(id) == Some(ValueSource::DefaultValue)
    }

    /// Set by its `RETRY_*` variable, not typed.
    pub fn set_by_variable(&self, id: &str) -> bool {
        self.source(id) == Some(ValueSource::EnvVariable)
    }

    /// Whether `value` was typed after `-t`, not `--timeout`.
    pub fn typed_after_short_t(&self, value: &str) -> bool {
        self.after_short_t.iter().any(|typed| typed == value)
    }

    /// Records that `--preset preset` set `id`, so an error names it.
    pub fn set_by_preset(&mut self, preset: &str, id: &'static str) {
        let (_, ids) = self
            .preset
            .get_or_insert_with(|| (preset.to_owned(), Vec::new()));
        ids.push(id);
    }

    /// The option as an error names it: "`RETRY_LOG_FILE` (--log-file)"
    /// when its variable set it, else "--log-file".
    pub fn option(&self, id: &str) -> String {
        let flag = long(id);
        match self.set_by_variable(id) {
            true => format!("`{}` ({flag})", variable(id)),
            false => flag,
        }
    }

    /// The option with its value: `--cap 20s`, `RETRY_CAP=20s` (as
    /// written), `--cap 20s` (the default) or (from --preset NAME).
    pub fn name(&self, id: &str, value: &dyn std::fmt::Display) -> String {
        let flag = long(id);
        match self.source(id) {
            Some(ValueSource::EnvVariable) => {
                let variable = variable(id);
                let written = std::env::var_os(&variable)
                    .map_or_else(|| value.to_string(), |v| v.to_string_lossy().into_owned());
                format!("`{variable}={written}`")
            }
            _ if let Some((preset, ids)) = &self.preset
                && ids.contains(&id) =>
            {
                format!("`{flag} {value}` (from --preset {preset})")
            }
            Some(ValueSource::DefaultValue) => format!("`{flag} {value}` (the default)"),
            _ => format!("`{flag} {value}`"),
        }
    }
}

/// `--max-time` for `max_time`.
pub fn long(id: &str) -> String {
    format!("--{}", id.replace('_', "-"))
}

/// `RETRY_MAX_TIME` for `max_time` (a test holds every option to the rule).
fn variable(id: &str) -> String {
    format!("RETRY_{}", id.to_uppercase())
}

/// An argument of the lenient command: whatever it is given is kept as
/// typed, so a value its own parser refuses still shows where it came from.
fn raw(arg: Arg) -> Arg {
    match arg.get_action() {
        ArgAction::Set | ArgAction::Append | ArgAction::SetTrue | ArgAction::SetFalse => {
            arg.value_parser(clap::builder::ValueParser::os_string())
        }
        _ => arg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        ["retry"].iter().chain(words).map(Into::into).collect()
    }

    #[test]
    fn a_lenient_record_knows_where_a_refused_value_came_from() {
        // Typed, though its parser refuses it, and a variable nobody typed.
        let record = Provenance::lenient(&args(&["--base", "100", "-n", "x", "true"]));
        assert!(record.typed(id::BASE) && record.typed("max_attempts"));
        assert!(record.is_default(id::CAP) && !record.given(id::TIMEOUT));
        // The command's own words are not retry's options.
        let record = Provenance::lenient(&args(&["-n", "x", "--", "echo", "--log-file", "-t"]));
        assert!(!record.present(id::LOG_FILE) && !record.present(id::TIMEOUT));
    }

    #[test]
    fn a_lenient_record_tells_short_t_from_timeout() {
        let record = Provenance::lenient(&args(&["-t", "5", "true"]));
        assert!(record.typed(id::TIMEOUT) && record.typed_after_short_t("5"));
        let record = Provenance::lenient(&args(&["-qt5", "true"]));
        assert!(record.typed_after_short_t("5"));
        let record = Provenance::lenient(&args(&["--timeout", "5", "true"]));
        assert!(record.typed(id::TIMEOUT) && !record.typed_after_short_t("5"));
    }

    #[test]
    fn options_are_named_by_where_they_came_from() {
        let mut record = Provenance::lenient(&args(&["--cap", "1s", "true"]));
        assert_eq!(record.name(id::CAP, &"1s"), "`--cap 1s`");
        assert_eq!(record.name(id::BASE, &"1s"), "`--base 1s` (the default)");
        assert_eq!(record.option(id::LOG_FILE), "--log-file");
        record.set_by_preset("curl", id::RETRY_ON);
        assert_eq!(
            record.name(id::RETRY_ON, &"5-7"),
            "`--retry-on 5-7` (from --preset curl)"
        );
        record
            .sources
            .push((Id::from(id::LOG_FILE), ValueSource::EnvVariable));
        assert_eq!(record.option(id::LOG_FILE), "`RETRY_LOG_FILE` (--log-file)");
    }
}
