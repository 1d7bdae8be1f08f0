//! Presets: named sets of retry's own rules for one program (`--preset
//! curl`), kept as data in `builtin.ini` as ripgrep keeps its file types.
//! This file owns the format (a small INI: one section per preset, keys
//! that are retry's long flags), looking a preset up by name or by the
//! program it fits; `listing.rs` writes them back as plain flags and as
//! `--presets`' table.
//!
//! A team adds presets for its own tools in a file of the same format,
//! `$XDG_CONFIG_HOME/retry/presets.ini` (`Catalog`); a built-in name cannot
//! be taken there, so `--preset curl` means the same on every machine. The
//! file is read as `platform::trusted` allows (a bounded regular file of
//! this user's or root's, never waited on), and one that cannot be read so,
//! or that is malformed, is ignored with one warning: the built-in presets
//! stand alone, and only naming a preset the file alone defines is an error.
//!
//! It knows nothing of what the rules mean: `cli` checks each value with
//! the parser of the flag it names and applies it where the flag was not
//! given, so a preset can do nothing the flags cannot. Nothing here runs
//! unless a preset is named, `--presets` asked for, or a command is run
//! or planned without `--preset none`: then `claims` looks its program
//! up (through `wrappers`) in the presets' `calls`.

pub mod claims;
mod listing;
mod programs_line;
pub mod quiet;
mod resolve;
pub mod wrappers;

pub use listing::{listing, table};

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

pub use claims::{Calls, choose};
pub use resolve::{Resolved, catalog, resolve};

/// `--preset none`: no preset, named or looked up.
pub const NONE: &str = "none";

/// The built-in presets: src/preset/builtin.ini without its comments and
/// blank lines (build.rs), which no reading of the data looks at.
pub const BUILTIN: &str = include_str!(concat!(env!("OUT_DIR"), "/builtin.ini"));

// `BUILTIN_PROGRAMS`: the programs `BUILTIN` names, sorted (build.rs).
include!(concat!(env!("OUT_DIR"), "/builtin_programs.rs"));

/// A flag a preset may set: one of the rules about exit codes and output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    RetryOn,
    FatalOn,
    SuccessOn,
    RetryIfOutput,
    StopIfOutput,
    ThrottleIfOutput,
    DelayFromOutput,
}

impl Rule {
    pub const ALL: [Rule; 7] = [
        Rule::RetryOn,
        Rule::FatalOn,
        Rule::SuccessOn,
        Rule::RetryIfOutput,
        Rule::StopIfOutput,
        Rule::ThrottleIfOutput,
        Rule::DelayFromOutput,
    ];

    /// The long flag, as the data and `--presets` write it.
    pub fn flag(self) -> &'static str {
        match self {
            Rule::RetryOn => "retry-on",
            Rule::FatalOn => "fatal-on",
            Rule::SuccessOn => "success-on",
            Rule::RetryIfOutput => "retry-if-output",
            Rule::StopIfOutput => "stop-if-output",
            Rule::ThrottleIfOutput => "throttle-if-output",
            Rule::DelayFromOutput => "delay-from-output",
        }
    }

    fn from_key(key: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|rule| rule.flag() == key)
    }
}

/// One section of the data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preset<'a> {
    pub name: &'a str,
    /// Basenames of the programs it is written for.
    pub programs: Vec<&'a str>,
    /// The calls of those programs it claims (`calls`): the lookup
    /// chooses it for them when no preset is named. `None`: named only.
    pub calls: Option<Calls<'a>>,
    /// The programs' options before the call that take the next word as
    /// their value (`calls.options`: git's `-C DIR`), skipped to find it.
    pub call_options: Vec<&'a str>,
    /// In the order the data gives them.
    pub rules: Vec<(Rule, &'a str)>,
    /// The documentation the rules rest on.
    pub source: &'a str,
    /// The user's file it comes from; `None` for a built-in preset.
    pub file: Option<&'a Path>,
    /// What a rule matches, in a few words (`stop-if-output.label`): a
    /// give-up line names the rule that stopped the run by it, and the
    /// table of `--presets` says what the preset retries and stops.
    pub labels: Vec<(Rule, &'a str)>,
    /// What to do when a throttle line (`throttle-if-output`, a rule) was
    /// seen but no wait of the server's (`throttle-if-output.advice`): the
    /// program hides the server's `Retry-After` unless told to show it.
    pub advice: Option<&'a str>,
    /// A line showing the program met a transient failure and retried it
    /// itself (`transient-if-output`: pip's `Retrying (Retry(total=…))`
    /// warnings): such an attempt is retried whatever else it printed.
    pub transient: Option<&'a str>,
}

/// The key of a rule's label.
const LABEL: &str = ".label";
/// The calls a preset claims, and the options before them that take a value.
const CALLS: &str = "calls";
const CALL_OPTIONS: &str = "calls.options";
/// The key of the throttle line's advice.
const ADVICE: &str = "throttle-if-output.advice";
/// The throttle line's key and its advice's before they were the one
/// throttle rule (`slow-down-if-output`): a user's file that uses them
/// still works, read as the new ones.
const OLD_KEYS: [(&str, &str); 2] = [
    ("slow-down-if-output", "throttle-if-output"),
    ("slow-down-if-output.advice", ADVICE),
];
/// The key of the line that shows the program retried a transient failure.
const TRANSIENT: &str = "transient-if-output";

/// Reads presets in the data's format. Structure only (sections, keys, a
/// source for each): the values are checked by the flags' own parsers
/// when a preset is applied (and, for the built-in data, by a test).
pub fn parse<'a>(text: &'a str) -> Result<Vec<Preset<'a>>, String> {
    let mut presets: Vec<Preset<'a>> = Vec::new();
    // The names so far, each looked up in constant time: every run reads
    // the user's file, which may hold some fifty thousand sections.
    let mut names: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut keys: Vec<&str> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let at = |message: String| format!("line {}: {message}", number + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            let Some(name) = name.strip_suffix(']').map(str::trim) else {
                return Err(at(format!(
                    "`{line}` is not a section header such as `[curl]`"
                )));
            };
            let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
            if name.is_empty() || !name.chars().all(valid) {
                return Err(at(format!(
                    "preset name `{name}`: use lowercase letters, digits and `-`"
                )));
            }
            if !names.insert(name) {
                return Err(at(format!("preset `{name}` is defined twice")));
            }
            finish(presets.last())?;
            presets.push(Preset {
                name,
                programs: Vec::new(),
                calls: None,
                call_options: Vec::new(),
                rules: Vec::new(),
                source: "",
                file: None,
                labels: Vec::new(),
                advice: None,
                transient: None,
            });
            keys.clear();
            continue;
        }
        let Some((key, value)) = programs_line::key_value(line) else {
            return Err(at(format!(
                "`{line}` is neither `key = value` nor `[name]`"
            )));
        };
        let Some(preset) = presets.last_mut() else {
            return Err(at(format!("`{key}` before the first `[name]`")));
        };
        let key = OLD_KEYS
            .iter()
            .find(|(old, _)| *old == key)
            .map_or(key, |&(_, new)| new);
        if keys.contains(&key) {
            return Err(at(format!("`{key}` is given twice in [{}]", preset.name)));
        }
        keys.push(key);
        if value.is_empty() {
            return Err(at(format!("`{key}` has no value")));
        }
        match key {
            "programs" => preset.programs = value.split_ascii_whitespace().collect(),
            "source" => preset.source = value,
            CALLS => preset.calls = Some(Calls::parse(value).map_err(at)?),
            CALL_OPTIONS => preset.call_options = value.split_ascii_whitespace().collect(),
            ADVICE => preset.advice = Some(value),
            TRANSIENT => preset.transient = Some(value),
            _ => match key.strip_suffix(LABEL).unwrap_or(key) {
                rule if let Some(rule) = Rule::from_key(rule) => match key.ends_with(LABEL) {
                    true => preset.labels.push((rule, value)),
                    false => preset.rules.push((rule, value)),
                },
                _ => {
                    let known: Vec<&str> = Rule::ALL.iter().map(|r| r.flag()).collect();
                    return Err(at(format!(
                        "unknown key `{key}`; a preset has programs, {CALLS} (with its \
                         .options), source, the rules {} (each may have a RULE.label; \
                         throttle-if-output an .advice too), and {TRANSIENT}",
                        known.join(", ")
                    )));
                }
            },
        }
    }
    finish(presets.last())?;
    Ok(presets)
}

/// A section is complete once it says what it rests on, and each label
/// and the advice have their rule.
fn finish(preset: Option<&Preset<'_>>) -> Result<(), String> {
    let Some(preset) = preset else {
        return Ok(());
    };
    let name = preset.name;
    if preset.calls.is_some() && preset.programs.is_empty() {
        return Err(format!(
            "[{name}] has `{CALLS}` but no `programs`: calls of which program?"
        ));
    }
    if preset.calls.is_none() && !preset.call_options.is_empty() {
        return Err(format!(
            "[{name}] has `{CALL_OPTIONS}` but no `{CALLS}`: options before which call?"
        ));
    }
    if preset.source.is_empty() {
        return Err(format!(
            "[{name}] has no `source`: cite the documentation its rules rest on"
        ));
    }
    if let Some((rule, _)) = preset
        .labels
        .iter()
        .find(|(rule, _)| preset.rule(*rule).is_none())
    {
        let flag = rule.flag();
        return Err(format!(
            "[{name}] has `{flag}{LABEL}` but no `{flag}`: a label names a rule of its preset"
        ));
    }
    if preset.advice.is_some() && preset.rule(Rule::ThrottleIfOutput).is_none() {
        return Err(format!(
            "[{name}] has `{ADVICE}` but no `throttle-if-output`: advice for which line?"
        ));
    }
    Ok(())
}

/// The built-in presets (the data is checked by a unit test).
pub fn builtin() -> Vec<Preset<'static>> {
    #[cfg(test)]
    READS.with(|reads| reads.set(reads.get() + 1));
    parse(BUILTIN).unwrap_or_default()
}

/// The built-in presets' names, by their section headers alone: every run
/// checks the user's file against them, and parsing the whole data for
/// that (twice: the file is read, then its presets listed) cost more than
/// the rest of the lookup.
fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTIN
        .lines()
        .filter_map(|line| line.trim().strip_prefix('[')?.strip_suffix(']'))
        .map(str::trim)
}

#[cfg(test)]
thread_local! {
    /// How often this thread read the data: a run without `--preset` must not.
    pub static READS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Where a user keeps presets of their own: `$XDG_CONFIG_HOME/retry/presets.ini`,
/// else `$HOME/.config/retry/presets.ini` (the XDG base directory rules:
/// a relative `XDG_CONFIG_HOME` is ignored; so is a relative or empty
/// `HOME`, which would name a file in whatever directory retry runs in).
pub fn user_file() -> Option<PathBuf> {
    let absolute = |dir: &PathBuf| dir.is_absolute();
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(absolute)
        .or_else(|| {
            let home = PathBuf::from(std::env::var_os("HOME")?);
            absolute(&home).then(|| home.join(".config"))
        })?;
    Some(config.join("retry").join("presets.ini"))
}

/// The most of the user's file that is read: some fifty times the
/// built-in data, and a bound on what a file that never ends can take.
pub const USER_FILE_LIMIT: u64 = 1 << 20;

/// The built-in presets and the user's own file, read once.
#[derive(Debug, Default)]
pub struct Catalog {
    user: Option<(PathBuf, String)>,
    /// The user's file, set aside, and why: the built-in presets stand
    /// alone, the same on every machine.
    ignored: Option<(PathBuf, String)>,
}

impl Catalog {
    /// Reads the user's file ([`user_file`]); a missing file is no error.
    pub fn load() -> Catalog {
        Catalog::from_file(user_file())
    }

    /// Reads `path` if it is there, and sets it aside, with the reason, if
    /// it cannot be trusted or read (`platform::trusted`), or holds
    /// anything wrong but a rule's value (checked when it is applied): a
    /// broken file never breaks a built-in preset.
    pub fn from_file(path: Option<PathBuf>) -> Catalog {
        let Some(path) = path else {
            return Catalog::default();
        };
        let text = crate::platform::trusted::read(&path, USER_FILE_LIMIT).and_then(|bytes| {
            let Some(bytes) = bytes else {
                return Ok(None);
            };
            let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text")?;
            user_presets(&path, &text)?;
            Ok(Some(text))
        });
        match text {
            Ok(None) => Catalog::default(),
            Ok(Some(text)) => Catalog {
                user: Some((path, text)),
                ignored: None,
            },
            Err(why) => Catalog {
                user: None,
                ignored: Some((path, why)),
            },
        }
    }

    /// Whether a preset of the built-in data or the user's file may claim
    /// the call `program args` makes, before either is parsed
    /// (`claims::may_claim`).
    pub fn may_claim(&self, program: &OsStr, args: &[OsString]) -> bool {
        let user = self.user.as_ref().map(|(_, text)| text.as_str());
        claims::may_claim(BUILTIN_PROGRAMS, user, program, args)
    }

    /// The built-in presets, then the user's.
    pub fn presets(&self) -> Vec<Preset<'_>> {
        let mut presets = builtin();
        if let Some((path, text)) = &self.user {
            presets.extend(user_presets(path, text).unwrap_or_default());
        }
        presets
    }

    /// Why the user's file was set aside, as a warning's one line.
    pub fn warning(&self) -> Option<String> {
        let (path, why) = self.ignored.as_ref()?;
        Some(format!(
            "the presets file {} is ignored: {why}; the built-in presets still apply",
            path.display()
        ))
    }

    /// [`find`], whose error also says why the user's file was set aside:
    /// a preset named that only it defines is an error naming the file.
    pub fn find<'a>(&self, presets: &[Preset<'a>], name: &str) -> Result<Preset<'a>, String> {
        find(presets, name).map_err(|error| match &self.ignored {
            Some((path, why)) => format!(
                "{error}; the presets file {} is ignored: {why}",
                path.display()
            ),
            None => error,
        })
    }
}

/// The presets of the user's file `path`, which holds `text`; an error
/// names what is wrong in it.
fn user_presets<'a>(path: &'a Path, text: &'a str) -> Result<Vec<Preset<'a>>, String> {
    let builtin: Vec<&str> = builtin_names().collect();
    let mut presets = parse(text)?;
    for preset in &mut presets {
        if preset.name == NONE {
            return Err(format!(
                "[{NONE}] is no preset's name: --preset {NONE} turns the lookup off"
            ));
        }
        if builtin.contains(&preset.name) {
            return Err(format!(
                "[{}] is a built-in preset; give yours another name, so that \
                 --preset {} means the same on every machine",
                preset.name, preset.name
            ));
        }
        preset.file = Some(path);
    }
    Ok(presets)
}

/// The preset called `name`, or the one line saying which exist.
pub fn find<'a>(presets: &[Preset<'a>], name: &str) -> Result<Preset<'a>, String> {
    if let Some(preset) = presets.iter().find(|p| p.name == name) {
        return Ok(preset.clone());
    }
    let known: Vec<&str> = presets.iter().map(|p| p.name).collect();
    let what = match name {
        "" => "an empty preset name".to_owned(),
        _ => format!("unknown preset `{name}`"),
    };
    Err(format!("{what}; known presets: {}", known.join(", ")))
}

use wrappers::basename;

/// Programs that run a script, whose program a preset named with them
/// may well be (`sh -c 'curl ...'`): the user names the preset there.
const SHELLS: [&str; 10] = [
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "ash",
    "fish",
    "cmd",
    "pwsh",
    "powershell",
];

/// One rule for every preset named for a command: through a shell it is
/// taken as given (the script may run the preset's program), a known
/// wrapper is looked through to the program it runs (`sudo curl` is curl),
/// and any other program not in its `programs` gets one warning, naming the preset written for it if there is one. A warning,
/// not a refusal: a script of the user's (`./fetch.sh`) may run curl, and
/// retry cannot tell it from one that does not.
pub fn check_fits(
    chosen: &Preset<'_>,
    program: &OsStr,
    args: &[std::ffi::OsString],
) -> Option<String> {
    let real = wrappers::unwrap(program, args)?;
    let name = basename(real.program);
    let is = |known: &&str| OsStr::new(*known) == name;
    let plain = |name: &str| {
        name.strip_suffix(".exe")
            .unwrap_or(name)
            .to_ascii_lowercase()
    };
    let shell = SHELLS.contains(&plain(&name.to_string_lossy()).as_str());
    if chosen.programs.iter().any(is) || shell || (chosen.programs.is_empty()) {
        return None;
    }
    let other = builtin()
        .into_iter()
        .find(|p| p.programs.iter().any(is))
        .map(|p| format!(" (--preset {}?)", p.name))
        .unwrap_or_default();
    // Escaped as log lines name the command: a newline in the program's
    // name must not forge a line, nor an escape sequence repaint the terminal.
    let runs = crate::escape::control(&name.to_string_lossy());
    Some(format!(
        "--preset {} is for {}, but the command runs {runs}: its rules judge {runs}'s \
         failures as {}'s{other}",
        chosen.name,
        chosen.programs.join(", "),
        chosen.programs[0],
    ))
}

impl<'a> Preset<'a> {
    /// The value the preset gives `rule`, if it gives one.
    pub fn rule(&self, rule: Rule) -> Option<&'a str> {
        self.rules.iter().find(|(r, _)| *r == rule).map(|&(_, v)| v)
    }

    /// The label of `rule`, if the preset gives one.
    pub fn label(&self, rule: Rule) -> Option<&'a str> {
        self.labels
            .iter()
            .find(|(r, _)| *r == rule)
            .map(|&(_, v)| v)
    }
}

#[cfg(test)]
mod tests;
