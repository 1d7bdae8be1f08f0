//! Presets: named sets of retry's own rules for one program (`--preset
//! curl`), kept as data in `builtin.ini` as ripgrep keeps its file types.
//! This file owns the format (a small INI: one section per preset, keys
//! that are retry's long flags), looking a preset up by name or by the
//! program it fits, and writing one back as plain flags (`--presets`).
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
pub mod wrappers;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

pub use claims::{Calls, choose};

/// `--preset none`: no preset, named or looked up.
pub const NONE: &str = "none";

/// The built-in presets.
pub const BUILTIN: &str = include_str!("builtin.ini");

/// A flag a preset may set: one of the rules about exit codes and output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    RetryOn,
    FatalOn,
    SuccessOn,
    RetryIfOutput,
    StopIfOutput,
    DelayFromOutput,
}

impl Rule {
    pub const ALL: [Rule; 6] = [
        Rule::RetryOn,
        Rule::FatalOn,
        Rule::SuccessOn,
        Rule::RetryIfOutput,
        Rule::StopIfOutput,
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
    /// A line saying the server asked to slow down (`slow-down-if-output`)
    /// and what to do when no wait of its was visible (`.advice`): the
    /// program hides the server's `Retry-After` unless told to show it.
    pub slow_down: Option<SlowDown<'a>>,
}

/// `slow-down-if-output` and its `.advice`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowDown<'a> {
    pub pattern: &'a str,
    pub advice: &'a str,
}

/// The key of a rule's label.
const LABEL: &str = ".label";
/// The calls a preset claims, and the options before them that take a value.
const CALLS: &str = "calls";
const CALL_OPTIONS: &str = "calls.options";
/// The keys of the slow-down line and its advice.
const SLOW_DOWN: &str = "slow-down-if-output";
const ADVICE: &str = "slow-down-if-output.advice";

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
                slow_down: None,
            });
            keys.clear();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(at(format!(
                "`{line}` is neither `key = value` nor `[name]`"
            )));
        };
        let (key, value) = (key.trim(), value.trim());
        let Some(preset) = presets.last_mut() else {
            return Err(at(format!("`{key}` before the first `[name]`")));
        };
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
            SLOW_DOWN => slow_down(preset).pattern = value,
            ADVICE => slow_down(preset).advice = value,
            _ => match key.strip_suffix(LABEL).unwrap_or(key) {
                rule if let Some(rule) = Rule::from_key(rule) => match key.ends_with(LABEL) {
                    true => preset.labels.push((rule, value)),
                    false => preset.rules.push((rule, value)),
                },
                _ => {
                    let known: Vec<&str> = Rule::ALL.iter().map(|r| r.flag()).collect();
                    return Err(at(format!(
                        "unknown key `{key}`; a preset has programs, {CALLS} (with its \
                         .options), source, the rules {} (each may have a RULE.label), and \
                         {SLOW_DOWN} with its .advice",
                        known.join(", ")
                    )));
                }
            },
        }
    }
    finish(presets.last())?;
    Ok(presets)
}

/// Either half of the slow-down pair, the other checked by `finish`.
fn slow_down<'p, 'a>(preset: &'p mut Preset<'a>) -> &'p mut SlowDown<'a> {
    preset.slow_down.get_or_insert(SlowDown {
        pattern: "",
        advice: "",
    })
}

/// A section is complete once it says what it rests on, each label has
/// its rule, and the slow-down line its advice.
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
    match preset.slow_down {
        Some(SlowDown { pattern: "", .. }) => Err(format!(
            "[{name}] has `{ADVICE}` but no `{SLOW_DOWN}`: advice for which line?"
        )),
        Some(SlowDown { advice: "", .. }) => Err(format!(
            "[{name}] has `{SLOW_DOWN}` but no `{ADVICE}`: say how to show the server's wait"
        )),
        _ => Ok(()),
    }
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
        let texts: Vec<&str> = std::iter::once(BUILTIN).chain(user).collect();
        claims::may_claim(&texts, program, args)
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
    let runs = crate::run::name::escape_control(&name.to_string_lossy());
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

    /// What the preset expands to, as a comment and a command line to
    /// copy: `# curl: for curl; rests on …` then `retry --retry-on … -- curl`.
    pub fn as_flags(&self) -> String {
        let programs = match self.programs.is_empty() {
            true => String::new(),
            false => format!("for {}; ", self.programs.join(", ")),
        };
        let from = match self.file {
            Some(file) => format!(" (from {})", file.display()),
            None => String::new(),
        };
        let mut line = format!(
            "# {}{from}: {programs}rests on {}\n# {}\nretry",
            self.name,
            self.source,
            self.claims()
        );
        for (rule, value) in &self.rules {
            line.push_str(&format!(" --{} {}", rule.flag(), quote(value)));
        }
        let command = self.programs.first().copied().unwrap_or("COMMAND");
        line.push_str(&format!(" -- {}\n", quote(command)));
        line
    }
}

impl Preset<'_> {
    /// What the lookup chooses the preset for, in words (`calls`).
    pub fn claims(&self) -> String {
        let program = self.programs.first().copied().unwrap_or("COMMAND");
        match &self.calls {
            None => "named only: never chosen by the program".to_owned(),
            Some(Calls::Every) => format!(
                "chosen without --preset for every call of {}",
                self.programs.join(", ")
            ),
            Some(Calls::Only(calls)) => {
                let calls: Vec<String> = calls.iter().map(|words| words.join(" ")).collect();
                format!("chosen without --preset for {program} {}", calls.join(", "))
            }
        }
    }
}

/// `text` as one word for a POSIX shell: as it is when nothing in it is
/// special, else in single quotes (a `'` inside written `'\''`).
pub fn quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `--presets`: every preset in a row of a table of four columns (name,
/// programs, what it retries, what stops at once), in words from the
/// labels, each cell wrapped to fit an 80-column terminal.
pub fn table(presets: &[Preset<'_>]) -> String {
    const HEAD: [&str; 4] = ["preset", "for", "retries", "stops at once"];
    let rows: Vec<[String; 4]> = presets
        .iter()
        .map(|p| {
            [
                p.name.to_owned(),
                p.programs.join(" "),
                p.retries(),
                p.stops(),
            ]
        })
        .collect();
    // Name and programs as wide as their longest word, the rest shared.
    let widest = |column: usize| {
        rows.iter()
            .flat_map(|row| row[column].split(' '))
            .chain([HEAD[column]])
            .map(|word| word.chars().count())
            .max()
            .unwrap_or(0)
    };
    let (name, programs) = (widest(0), widest(1));
    let words = (TABLE_WIDTH.saturating_sub(name + programs + 3 * GAP) / 2).max(MIN_WORDS);
    let widths = [name, programs, words, words];
    let mut out = String::new();
    for (n, row) in std::iter::once(HEAD.map(str::to_owned))
        .chain(rows)
        .enumerate()
    {
        // A blank line between presets: their rows take several lines.
        if n > 1 {
            out.push('\n');
        }
        let cells: Vec<Vec<String>> = (0..4).map(|i| wrap(&row[i], widths[i])).collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for line in 0..height {
            let mut text = String::new();
            for (i, cell) in cells.iter().enumerate() {
                let part = cell.get(line).map_or("", String::as_str);
                let pad = widths[i] - part.chars().count().min(widths[i]);
                text.push_str(part);
                if i < 3 {
                    text.push_str(&" ".repeat(pad + GAP));
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        }
    }
    out.push_str(
        "\nWhat neither column names stops too.\n\
         retry --presets NAME prints a preset's flags; --presets -v, every preset's.\n",
    );
    out
}

/// The widest line of `--presets`' table: less than 80, so that a
/// terminal of 80 columns never wraps it.
pub const TABLE_WIDTH: usize = 79;
/// The space between two columns.
const GAP: usize = 2;
/// The narrowest the two columns of words get, beside long names.
const MIN_WORDS: usize = 16;

/// `text` cut into lines of at most `width` characters, at spaces (a
/// longer word stands alone on its line).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_ascii_whitespace() {
        let line = lines.last_mut().expect("never empty");
        if line.is_empty() {
            line.push_str(word);
        } else if line.chars().count() + 1 + word.chars().count() <= width {
            line.push(' ');
            line.push_str(word);
        } else {
            lines.push(word.to_owned());
        }
    }
    lines
}

impl Preset<'_> {
    /// What the preset retries, in words (the table, the man page).
    pub fn retries(&self) -> String {
        self.in_words(&[Rule::RetryOn, Rule::RetryIfOutput])
    }

    /// What stops at once, in words.
    pub fn stops(&self) -> String {
        self.in_words(&[Rule::FatalOn, Rule::StopIfOutput])
    }

    /// What `rules` of the preset do, in words: their labels, else (a
    /// preset of the user's without them) the codes or which output rule.
    fn in_words(&self, rules: &[Rule]) -> String {
        let given = || rules.iter().filter_map(|&r| Some((r, self.rule(r)?)));
        let labelled: Vec<&str> = rules.iter().filter_map(|&r| self.label(r)).collect();
        let words: Vec<String> = match labelled.is_empty() {
            false => labelled.into_iter().map(str::to_owned).collect(),
            true => given()
                .map(|(rule, value)| match rule {
                    Rule::RetryOn | Rule::FatalOn | Rule::SuccessOn => format!("exit {value}"),
                    _ => format!("lines matching its --{}", rule.flag()),
                })
                .collect(),
        };
        match (words.is_empty(), rules.contains(&Rule::RetryOn)) {
            (false, _) => words.join("; "),
            // Without --retry-on, retry's defaults.
            (true, true) => "every failure but 126, 127, 141".to_owned(),
            (true, false) => "-".to_owned(),
        }
    }
}

/// `--presets NAME` and `--presets -v`: every preset as flags, a blank line between them.
pub fn listing(presets: &[Preset<'_>]) -> String {
    presets
        .iter()
        .map(Preset::as_flags)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "# test data\n[curl]\nprograms = curl\nretry-on = 6,7\nsource = a\n\n\
                       [wget]\nprograms = wget wget2\nfatal-on = 1\nsource = b\n";

    #[test]
    fn the_builtin_data_parses() {
        let presets = parse(BUILTIN).unwrap();
        let names: Vec<&str> = presets.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "curl", "wget", "git", "ssh", "rsync", "apt", "docker", "npm", "pip"
            ]
        );
        assert_eq!(builtin(), presets);
    }

    /// A catalog whose user file holds `text`.
    fn user(text: &str) -> (tempfile::TempDir, Catalog) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("presets.ini");
        std::fs::write(&path, text).unwrap();
        let catalog = Catalog::from_file(Some(path));
        (dir, catalog)
    }

    #[test]
    fn the_users_presets_follow_the_builtin_ones() {
        let (dir, catalog) =
            user("[deploy]\nprograms = deploy\nretry-on = 75\nsource = our wiki\n");
        assert_eq!(catalog.warning(), None);
        let presets = catalog.presets();
        assert_eq!(presets.len(), builtin().len() + 1);
        let ours = catalog.find(&presets, "deploy").unwrap();
        assert_eq!(ours.rules, [(Rule::RetryOn, "75")]);
        let file = dir.path().join("presets.ini");
        assert_eq!(ours.file, Some(file.as_path()));
        assert!(find(&presets, "curl").unwrap().file.is_none());
        let flags = ours.as_flags();
        assert!(
            flags.starts_with(&format!("# deploy (from {}): for deploy;", file.display())),
            "{flags}"
        );
        // No file: the built-in presets alone, and nothing to say.
        let none = Catalog::from_file(Some(dir.path().join("missing.ini")));
        assert_eq!(none.presets(), builtin());
        assert_eq!(none.warning(), None);
    }

    #[test]
    fn a_users_file_that_is_wrong_is_ignored_and_the_builtin_ones_stay() {
        let ignored = |dir: &tempfile::TempDir, catalog: &Catalog, why: &str| {
            let file = dir.path().join("presets.ini");
            let file = file.display();
            assert_eq!(
                catalog.warning().unwrap(),
                format!(
                    "the presets file {file} is ignored: {why}; the built-in presets still apply"
                )
            );
            // The built-in presets, as on every machine: curl is curl's.
            let presets = catalog.presets();
            assert_eq!(presets, builtin());
            assert!(catalog.find(&presets, "curl").unwrap().file.is_none());
            // Naming a preset only the file could define names the file.
            assert_eq!(
                catalog.find(&presets, "ours").unwrap_err(),
                format!(
                    "unknown preset `ours`; known presets: curl, wget, git, ssh, rsync, apt, \
                     docker, npm, pip; the presets file {file} is ignored: {why}"
                )
            );
        };
        let (dir, clash) = user("[ours]\nsource = s\n[curl]\nretry-on = 22\nsource = s\n");
        let why = "[curl] is a built-in preset; give yours another name, \
                   so that --preset curl means the same on every machine";
        ignored(&dir, &clash, why);
        let (dir, broken) = user("[ours]\nretry_on = 22\n");
        let why = "line 2: unknown key `retry_on`; a preset has programs, calls (with its \
                   .options), source, the rules retry-on, fatal-on, success-on, retry-if-output, stop-if-output, \
                   delay-from-output (each may have a RULE.label), and slow-down-if-output \
                   with its .advice";
        ignored(&dir, &broken, why);
        // Bytes that are not text, and more than presets could need (at
        // most the limit is read).
        let written = |bytes: &[u8]| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("presets.ini"), bytes).unwrap();
            let catalog = Catalog::from_file(Some(dir.path().join("presets.ini")));
            (dir, catalog)
        };
        let (dir, binary) = written(b"[ours]\nsource = \xff\n");
        ignored(&dir, &binary, "it is not UTF-8 text");
        let (dir, long) = written(&b"# a comment\n".repeat(USER_FILE_LIMIT as usize / 10));
        ignored(&dir, &long, "it is larger than 1 MiB");
        // A directory in its place.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("presets.ini")).unwrap();
        let catalog = Catalog::from_file(Some(dir.path().join("presets.ini")));
        ignored(&dir, &catalog, "it is a directory, not a regular file");
    }

    #[test]
    #[cfg(unix)] // FIFOs and modes
    fn a_fifo_or_a_file_others_may_write_is_ignored_at_once() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, _) = user("");
        let file = dir.path().join("presets.ini");
        std::fs::remove_file(&file).unwrap();
        nix::unistd::mkfifo(&file, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // No writer: on main the read waited for one forever.
        let catalog = Catalog::from_file(Some(file.clone()));
        assert!(
            catalog
                .warning()
                .unwrap()
                .contains("it is a FIFO, not a regular file"),
            "{catalog:?}"
        );
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, "[ours]\nretry-if-output = .\nsource = s\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let catalog = Catalog::from_file(Some(file.clone()));
        assert!(
            catalog
                .warning()
                .unwrap()
                .contains("it is writable by other users (mode 666)"),
            "{catalog:?}"
        );
        assert_eq!(catalog.presets(), builtin());
    }

    #[test]
    fn sections_keys_and_comments() {
        let presets = parse(TWO).unwrap();
        assert_eq!(
            presets[1],
            Preset {
                name: "wget",
                programs: vec!["wget", "wget2"],
                calls: None,
                call_options: vec![],
                rules: vec![(Rule::FatalOn, "1")],
                source: "b",
                file: None,
                labels: vec![],
                slow_down: None,
            }
        );
        // The value is everything after the first `=`, trimmed.
        let regex = parse("[x]\nstop-if-output = a=b \nsource = s").unwrap();
        assert_eq!(regex[0].rules, [(Rule::StopIfOutput, "a=b")]);
    }

    #[test]
    fn labels_and_the_slow_down_advice_go_with_their_rules() {
        let text = "[x]\nretry-on = 7\nretry-on.label = refused\nstop-if-output = ^no$\n\
                    stop-if-output.label = a no\nslow-down-if-output = ^slow$\n\
                    slow-down-if-output.advice = add -v\nsource = s\n";
        let x = &parse(text).unwrap()[0];
        assert_eq!(
            x.labels,
            [(Rule::RetryOn, "refused"), (Rule::StopIfOutput, "a no")]
        );
        assert_eq!(x.label(Rule::StopIfOutput), Some("a no"));
        assert_eq!(x.label(Rule::FatalOn), None);
        assert_eq!(
            x.rules,
            [(Rule::RetryOn, "7"), (Rule::StopIfOutput, "^no$")]
        );
        assert_eq!(
            x.slow_down,
            Some(SlowDown {
                pattern: "^slow$",
                advice: "add -v"
            })
        );
        // The label comes before or after its rule, never without it.
        let before = parse("[x]\nfatal-on.label = f\nfatal-on = 1\nsource = s\n").unwrap();
        assert_eq!(before[0].label(Rule::FatalOn), Some("f"));
        for (text, error) in [
            (
                "[x]\nfatal-on.label = f\nsource = s\n",
                "[x] has `fatal-on.label` but no `fatal-on`: a label names a rule of its preset",
            ),
            (
                "[x]\nslow-down-if-output = a\nsource = s\n",
                "[x] has `slow-down-if-output` but no `slow-down-if-output.advice`",
            ),
            (
                "[x]\nslow-down-if-output.advice = a\nsource = s\n",
                "[x] has `slow-down-if-output.advice` but no `slow-down-if-output`",
            ),
            (
                "[x]\nsource.label = a\nsource = s\n",
                "unknown key `source.label`",
            ),
            (
                "[x]\nretry-on.lable = a\nsource = s\n",
                "unknown key `retry-on.lable`",
            ),
            (
                "[x]\nretry-on = 1\nretry-on.label = a\nretry-on.label = b\nsource = s\n",
                "line 4: `retry-on.label` is given twice",
            ),
        ] {
            let got = parse(text).unwrap_err();
            assert!(got.contains(error), "{text:?}: {got}");
        }
    }

    #[test]
    fn every_builtin_rule_that_stops_has_a_label_and_curl_and_wget_advise() {
        for preset in builtin() {
            for rule in [Rule::FatalOn, Rule::StopIfOutput] {
                if preset.rule(rule).is_some() {
                    assert!(preset.label(rule).is_some(), "[{}] {rule:?}", preset.name);
                }
            }
        }
        let advice = |name| find(&builtin(), name).unwrap().slow_down.map(|s| s.advice);
        assert_eq!(
            advice("curl"),
            Some("add -D /dev/stderr to curl's arguments")
        );
        assert_eq!(
            advice("wget"),
            Some("add -S (--server-response) to wget's arguments")
        );
    }

    #[test]
    fn the_table_has_every_preset_in_words_within_80_columns() {
        let table = table(&builtin());
        for line in table.lines() {
            assert!(line.chars().count() <= TABLE_WIDTH, "{line:?}");
            assert_eq!(line, line.trim_end(), "no trailing blanks");
        }
        let mut lines = table.lines();
        let head = lines.next().unwrap();
        assert!(head.starts_with("preset  for"), "{head}");
        let (retries, stops) = (
            head.find("retries").unwrap(),
            head.find("stops at once").unwrap(),
        );
        // Each preset's row starts with its name, its words in their columns.
        for preset in builtin() {
            let row = table
                .lines()
                .find(|line| line.split(' ').next() == Some(preset.name))
                .unwrap_or_else(|| panic!("no row for {}", preset.name));
            assert!(row[8..].starts_with(preset.programs[0]), "{row}");
            assert!(row.len() > stops, "{row}");
        }
        let curl = table.lines().find(|l| l.starts_with("curl ")).unwrap();
        assert_eq!(&curl[retries..retries + 16], "network failures", "{curl}");
        assert_eq!(&curl[stops..stops + 11], "a usage, UR", "{curl}");
        assert!(
            table.contains("retry --presets NAME prints a preset's flags"),
            "{table}"
        );
    }

    #[test]
    fn a_preset_without_labels_is_told_by_its_codes_and_rules() {
        let ours =
            parse("[ours]\nprograms = deploy\nretry-on = 75\nstop-if-output = x\nsource = s\n")
                .unwrap();
        let table = table(&ours);
        let row = table.lines().nth(1).unwrap();
        assert!(row.starts_with("ours    deploy  exit 75"), "{row}");
        assert!(row.ends_with("lines matching its"), "{table}");
        assert!(
            table.lines().nth(2).unwrap().ends_with("--stop-if-output"),
            "{table}"
        );
        let none = parse("[none]\nsource = s\n").unwrap();
        let row = table_row(&none);
        assert!(row.contains("every failure but 126, 127, 141"), "{row}");
        assert!(row.ends_with(" -"), "{row}");
        assert_eq!(wrap("a bb ccc", 4), ["a bb", "ccc"]);
        assert_eq!(wrap("abcdef g", 4), ["abcdef", "g"]);
        assert_eq!(wrap("", 4), [""]);
    }

    /// The table's first row, the one preset of `presets`.
    fn table_row(presets: &[Preset<'_>]) -> String {
        table(presets).lines().nth(1).unwrap().to_owned()
    }

    #[test]
    fn a_catalog_with_a_users_file_reads_the_builtin_data_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("presets.ini");
        std::fs::write(&path, "[web]\nprograms = w\ncalls = *\nsource = s\n").unwrap();
        let reads = || READS.with(std::cell::Cell::get);
        let before = reads();
        let catalog = Catalog::from_file(Some(path));
        let names: Vec<&str> = catalog.presets().iter().map(|p| p.name).collect();
        assert_eq!(reads() - before, 1, "{names:?}");
        assert_eq!(names.last(), Some(&"web"));
        assert_eq!(
            builtin_names().collect::<Vec<_>>(),
            builtin().iter().map(|p| p.name).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_user_file_as_large_as_allowed_is_read_in_linear_time() {
        // Every run reads the user's file: one of USER_FILE_LIMIT bytes of
        // small sections took half a minute when each name was compared
        // with every other; now milliseconds. The bound is generous.
        let mut text = String::new();
        while text.len() < USER_FILE_LIMIT as usize - 40 {
            text.push_str(&format!("[p{}]\nsource = s\n", text.len()));
        }
        let started = std::time::Instant::now();
        let presets = user_presets(Path::new("/u/presets.ini"), &text).unwrap();
        assert!(presets.len() > 50_000, "{}", presets.len());
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    }

    #[test]
    fn bad_data_is_refused_with_its_line() {
        for (text, error) in [
            ("[x]\nretry-on = 1\n", "[x] has no `source`"),
            (
                "[x]\nsource = a\n[y]\nretry-on = 1\n",
                "[y] has no `source`",
            ),
            (
                "[x]\nsource = a\n[x]\nsource = b\n",
                "line 3: preset `x` is defined twice",
            ),
            (
                "[x]\nsource = a\nretry_on = 1\n",
                "line 3: unknown key `retry_on`",
            ),
            (
                "[x]\nsource = a\nmax-attempts = 3\n",
                "unknown key `max-attempts`",
            ),
            ("[x]\nsource = a\nsource = b\n", "`source` is given twice"),
            (
                "retry-on = 1\n",
                "line 1: `retry-on` before the first `[name]`",
            ),
            ("[x\n", "not a section header"),
            ("[X y]\n", "preset name `X y`"),
            ("[x]\nsource\n", "neither `key = value`"),
            ("[x]\nsource = a\nretry-on =\n", "`retry-on` has no value"),
        ] {
            let got = parse(text).unwrap_err();
            assert!(got.contains(error), "{text:?}: {got}");
        }
        assert_eq!(parse("# nothing\n"), Ok(vec![]));
    }

    #[test]
    fn unknown_and_empty_names_list_the_known_ones() {
        let presets = parse(TWO).unwrap();
        assert_eq!(find(&presets, "wget").unwrap().name, "wget");
        assert_eq!(
            find(&presets, "wgte").unwrap_err(),
            "unknown preset `wgte`; known presets: curl, wget"
        );
        assert!(
            find(&presets, "")
                .unwrap_err()
                .starts_with("an empty preset name;")
        );
    }

    #[test]
    fn a_preset_named_for_another_program_is_said_once_through_a_shell_or_wrapper_not() {
        let presets = builtin();
        let fits = |name: &str, line: &str| {
            let words: Vec<std::ffi::OsString> = line.split(' ').map(Into::into).collect();
            check_fits(&find(&presets, name).unwrap(), &words[0], &words[1..])
        };
        assert_eq!(fits("curl", "curl x"), None);
        assert_eq!(fits("curl", "/usr/bin/curl x"), None);
        assert_eq!(fits("apt", "apt-get install x"), None);
        // The same rule for every preset: wget under curl's, true under apt's.
        assert_eq!(
            fits("curl", "/usr/bin/wget x").unwrap(),
            "--preset curl is for curl, but the command runs wget: its rules judge \
             wget's failures as curl's (--preset wget?)"
        );
        assert_eq!(
            fits("apt", "true").unwrap(),
            "--preset apt is for apt-get, apt, but the command runs true: its rules judge \
             true's failures as apt-get's"
        );
        assert!(fits("curl", "./fetch.sh").is_some());
        let forged = fits("curl", "x\nretry:\x1b[31m").unwrap();
        assert!(forged.contains("runs x\\nretry:\\x1b[31m: "), "{forged}");
        // Through a shell or a known wrapper: taken as given.
        for line in [
            "sh -c x",
            "/bin/bash -c x",
            "sudo -u x curl y",
            "env A=1 timeout 9 curl",
        ] {
            assert_eq!(fits("curl", line), None, "{line}");
        }
        assert!(fits("curl", "sudo wget x").is_some());
    }

    #[test]
    fn presets_print_as_flags_to_copy() {
        let preset = Preset {
            name: "x",
            programs: vec!["x", "y"],
            calls: None,
            call_options: vec![],
            rules: vec![(Rule::RetryOn, "5-7,28"), (Rule::StopIfOutput, r"it's \d")],
            source: "x(1)",
            file: None,
            labels: vec![],
            slow_down: None,
        };
        assert_eq!(
            preset.as_flags(),
            "# x: for x, y; rests on x(1)\n# named only: never chosen by the program\nretry --retry-on 5-7,28 --stop-if-output 'it'\\''s \\d' -- x\n"
        );
        assert!(listing(&builtin()).starts_with("# curl: for curl; rests on curl(1)"));
        let git = find(&builtin(), "git").unwrap().as_flags();
        assert!(
            git.contains(
                "\n# chosen without --preset for git clone, fetch, pull, push, ls-remote, \
                 submodule update\nretry "
            ),
            "{git}"
        );
        let curl = find(&builtin(), "curl").unwrap().as_flags();
        assert!(
            curl.contains("\n# chosen without --preset for every call of curl\n"),
            "{curl}"
        );
    }

    #[test]
    #[cfg(unix)] // Unix paths, programs or errno wording
    fn quoting_keeps_every_word_whole() {
        assert_eq!(quote("1-4,27"), "1-4,27");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("$(x)`y`\\"), "'$(x)`y`\\'");
        assert_eq!(quote("'"), r"''\'''");
        // What sh reads back is the text itself.
        for text in [r"(?i)^retry-after:[ \t]*(.+)$", "it's", "a\"b'c"] {
            let out = std::process::Command::new("sh")
                .args(["-c", &format!("printf %s {}", quote(text))])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), text);
        }
    }

    proptest::proptest! {
        #[test]
        fn parsing_never_panics(text in "[\\[\\]=#a-z \n-]{0,80}") {
            let _ = parse(&text);
        }

        #[test]
        fn a_quoted_word_is_one_word_with_no_unquoted_specials(text in ".{0,20}") {
            let quoted = quote(&text);
            let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
            proptest::prop_assert!(
                quoted.chars().all(plain) || (quoted.starts_with('\'') && quoted.ends_with('\''))
            );
        }
    }
}
