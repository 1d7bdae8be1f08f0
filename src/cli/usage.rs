//! Usage errors: one line on stderr and exit status 2, whatever clap or a
//! value parser had to say. Help and version go to stdout as usual.
//!
//! clap names the flag in an error even when the value came from a
//! `RETRY_*` variable nobody typed on the command line. Its error does not
//! say where the value came from, so the line asks the record of where
//! each value came from (`provenance.rs`, here from a lenient parse of the
//! refused line) and names a variable as set: "`RETRY_BASE=100`: a
//! duration needs a unit…".
//!
//! Flags of other retry tools (`--retries`, `--delay`) get retry's name for
//! the same thing instead of clap's nearest spelling (`--timeout`). Debian's
//! `retry`, which installs the same name, has two short ones: its `-d N`
//! (seconds of delay) is unknown here, and its `-t N` (tries) is this
//! retry's timeout, whose bare number also gets the difference said.

use std::borrow::Cow;
use std::ffi::OsString;
use std::io::Write;
use std::ops::Range;

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::cli::Cli;
use crate::cli::help::USAGE;
use crate::cli::id;
use crate::cli::provenance::Provenance;
use crate::url;

/// Bad usage, as documented: nothing has run.
const BAD_USAGE: u8 = 2;

/// Prints the error for `args` (the command line that caused it) and gives
/// the exit status.
pub fn exit(error: &clap::Error, args: &[OsString]) -> u8 {
    if is_help_or_version(error) {
        if crate::platform::stdout_was_closed() {
            return stdout_closed();
        }
        let _ = error.print();
        return 0;
    }
    let mut stderr = std::io::stderr();
    // `retry` alone: the usage and where to learn more, as clap would.
    let text = if args.len() <= 1 && error.kind() == ErrorKind::MissingRequiredArgument {
        format!(
            "Usage: {USAGE}\n\nRerun a failing command with exponential backoff and jitter.\n\
             For examples, try 'retry -h'; for every option, 'retry --help'."
        )
    } else {
        line(error, args)
    };
    let _ = writeln!(stderr, "{text}");
    BAD_USAGE
}

/// `--help`, `-h` or `--version`: clap's "error" that is a success.
pub fn is_help_or_version(error: &clap::Error) -> bool {
    matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    )
}

/// A mode that only prints, started with stdout closed: 1, as for any
/// stdout that cannot be written, with one line saying why.
pub fn stdout_closed() -> u8 {
    let _ = writeln!(
        std::io::stderr(),
        "retry: stdout is closed: nothing to print to (it was closed when retry started)"
    );
    1
}

/// The one line: clap's message up to its usage block, its tip as an
/// aside, and each argument whose value came from the environment named by
/// its variable.
pub fn line(error: &clap::Error, args: &[OsString]) -> String {
    if let Some(line) = debian_flags(args) {
        return line;
    }
    if let Some(line) = foreign_flag(error, args) {
        return line;
    }
    // Only clap's own errors name an argument: they need the record.
    let provenance = match error.get(ContextKind::InvalidArg).is_some()
        || error.kind() == ErrorKind::InvalidUtf8
    {
        true => Provenance::lenient(args),
        false => Provenance::default(),
    };
    if error.kind() == ErrorKind::InvalidUtf8 {
        return invalid_utf8(&provenance, args);
    }
    if error.kind() == ErrorKind::MissingRequiredArgument
        && error
            .get(ContextKind::InvalidArg)
            .is_some_and(|a| a.to_string().contains("COMMAND"))
    {
        return format!("retry: no COMMAND to run after the options (usage: {USAGE})");
    }
    // Masked before its lines are joined: a value may hold a newline.
    let rendered = masked(&error.render().to_string(), error, args);
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
    if let Some(ours) = jitter_tip(error) {
        tip = Some(ours);
    }
    let mut line = format!("retry: {}", parts.join(" "));
    if let Some(tip) = tip {
        line.push_str(&format!(" ({tip})"));
    }
    let names = StoreNames::new();
    for (shown, variable) in from_environment(error, &provenance) {
        let value = std::env::var_os(&variable).unwrap_or_default();
        let value = value.to_string_lossy();
        let value = names.shown(&variable, &value);
        let set = format!("`{variable}={value}`");
        let invalid = format!("invalid value '{value}' for '{shown}'");
        line = if line.contains(&invalid) {
            line.replacen(&invalid, &set, 1)
        } else {
            line.replacen(&format!("'{shown}'"), &set, 1)
        };
    }
    if let Some(aside) = debian_tries(error, &provenance) {
        line.push_str(&aside);
    }
    line.replacen(" [possible values: ", ": expected one of [", 1)
}

/// How the `--store` option is named, and its old spelling
/// `--budget-store`: their long forms and variables.
struct StoreNames {
    longs: Vec<String>,
    variables: Vec<String>,
}

impl StoreNames {
    fn new() -> Self {
        let command = Cli::command();
        let args = || {
            command
                .get_arguments()
                .filter(|a| [id::STORE, id::BUDGET_STORE].contains(&a.get_id().as_str()))
        };
        StoreNames {
            longs: args()
                .filter_map(|a| Some(format!("--{}", a.get_long()?)))
                .collect(),
            variables: args()
                .filter_map(|a| Some(a.get_env()?.to_string_lossy().into_owned()))
                .collect(),
        }
    }

    fn is_store(&self, option_or_variable: &str) -> bool {
        self.longs
            .iter()
            .chain(&self.variables)
            .any(|n| n == option_or_variable)
    }

    /// What of a value the line must not show, given the option or
    /// variable it came from: a store's userinfo (`url::hidden`: before
    /// its last `@`, whatever it holds), or the password of a URL in any
    /// other value.
    fn hidden(&self, option_or_variable: &str, value: &str) -> Option<Range<usize>> {
        match self.is_store(option_or_variable) {
            true => url::hidden(value),
            false => url::hidden_in_url(value),
        }
    }

    /// The value as the line may quote it.
    fn shown<'v>(&self, option_or_variable: &str, value: &'v str) -> Cow<'v, str> {
        url::masked(value, self.hidden(option_or_variable, value))
    }
}

/// `text` with every value it may quote masked (`StoreNames::hidden`):
/// from the command line, the store's variable, and clap's own record of
/// the value it refused; and any part of one that clap quoted alone (an
/// unknown `--flag` ends at its `=`) with what it holds of the value's
/// hidden part. So no message can show a store's password.
fn masked(text: &str, error: &clap::Error, args: &[OsString]) -> String {
    let names = StoreNames::new();
    let mut values: Vec<(String, Range<usize>)> = Vec::new();
    let mut add = |option: &str, value: &str| {
        if let Some(hidden) = names.hidden(option, value) {
            values.push((value.to_owned(), hidden));
        }
    };
    let words: Vec<Cow<str>> = args.iter().skip(1).map(|a| a.to_string_lossy()).collect();
    for (at, word) in words.iter().enumerate() {
        let option = at.checked_sub(1).map_or("", |before| &*words[before]);
        add(option, word);
        if let Some((flag, value)) = word.split_once('=') {
            add(flag, value);
        }
    }
    for variable in &names.variables {
        if let Some(value) = std::env::var_os(variable) {
            add(variable, &value.to_string_lossy());
        }
    }
    let quoted: Vec<String> = error
        .context()
        .flat_map(|(_, value)| match value {
            ContextValue::String(one) => vec![one.clone()],
            ContextValue::Strings(many) => many.clone(),
            _ => Vec::new(),
        })
        .collect();
    if let (Some(arg), Some(value)) = (
        error.get(ContextKind::InvalidArg),
        error.get(ContextKind::InvalidValue),
    ) && let Some(long) = names
        .longs
        .iter()
        .find(|long| arg.to_string().starts_with(&format!("{long} ")))
    {
        add(long, &value.to_string());
    }
    let mut replace: Vec<(String, String)> = Vec::new();
    for (value, hidden) in &values {
        replace.push((
            value.clone(),
            url::masked(value, Some(hidden.clone())).into_owned(),
        ));
        for part in &quoted {
            let Some(at) = value.find(part.as_str()).filter(|_| part != value) else {
                continue;
            };
            let (start, end) = (hidden.start.max(at), hidden.end.min(at + part.len()));
            if start < end {
                let inside = start - at..end - at;
                replace.push((part.clone(), url::masked(part, Some(inside)).into_owned()));
            }
        }
    }
    // The longest first: a value may hold another.
    replace.sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
    let mut text = text.to_owned();
    for (value, shown) in replace {
        text = text.replace(&value, &shown);
    }
    text
}

/// What a `--jitter` word that names no strategy meant, where clap's
/// nearest spelling would mislead: `exponential` is not a misspelt `none`,
/// every strategy backs off exponentially.
fn jitter_tip(error: &clap::Error) -> Option<&'static str> {
    let arg = error.get(ContextKind::InvalidArg)?.to_string();
    if error.kind() != ErrorKind::InvalidValue || !arg.contains("--jitter") {
        return None;
    }
    let value = error.get(ContextKind::InvalidValue)?.to_string();
    match value.trim().to_ascii_lowercase().as_str() {
        "exponential"
        | "exp"
        | "expo"
        | "exponential-backoff"
        | "backoff"
        | "random"
        | "jitter" => Some(
            "every strategy backs off exponentially; they differ in how each sleep is \
                 drawn (`full`, the default, draws it at random up to the growing ceiling)",
        ),
        "constant" | "fixed" | "linear" => Some("for a fixed sleep: `--jitter none --factor 1`"),
        _ => None,
    }
}

/// `-t 5` as Debian's `retry` users type it (five tries): a bare number
/// typed after `-t` (not `--timeout`, nor from `RETRY_TIMEOUT`). `-t` stays
/// the timeout; the aside says what counts tries here.
fn debian_tries(error: &clap::Error, provenance: &Provenance) -> Option<String> {
    let arg = error.get(ContextKind::InvalidArg)?.to_string();
    let value = error.get(ContextKind::InvalidValue)?.to_string();
    let tries = value.trim().parse::<u32>().ok()?;
    let timeout = crate::cli::provenance::long(id::TIMEOUT);
    if error.kind() != ErrorKind::ValueValidation
        || !arg.contains(&timeout)
        || !provenance.typed_after_short_t(&value)
    {
        return None;
    }
    Some(format!(
        " (`-t` is this retry's timeout; Debian's `retry -t {tries}` counts tries, \
         which here is `-n {tries}`)"
    ))
}

/// Debian's `retry` flags on a refused line, all named in one message with
/// what each is here: fixing `-d` only to be told of `-t` next is two
/// round trips. Said when the line has one of the flags retry does not
/// share (`-d`, `-u`, `--times`, `--delay`, `--until`, `--message`); then
/// `-t N` (a timeout here) and `-m TEXT` (`--max-time` here) are named too.
/// Before the command (`--` or its first word) only.
fn debian_flags(args: &[OsString]) -> Option<String> {
    // retry's own options that take the next word: skipped with it.
    let command = Cli::command();
    let takes_value: Vec<String> = command
        .get_arguments()
        .filter(|a| {
            a.get_action().takes_values() && a.get_num_args().is_none_or(|n| n.min_values() > 0)
        })
        .flat_map(|a| {
            let short = a.get_short().map(|c| format!("-{c}"));
            let long = a.get_long().map(|l| format!("--{l}"));
            short.into_iter().chain(long)
        })
        .collect();
    let mut found: Vec<String> = Vec::new();
    let mut foreign = false;
    let mut words = args.iter().skip(1).map(|w| w.to_str());
    while let Some(Some(word)) = words.next() {
        if word == "--" || !word.starts_with('-') {
            break;
        }
        if !["-t", "-m"].contains(&word) && takes_value.iter().any(|t| t == word) {
            words.next();
            continue;
        }
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
            // `-t5`: a short flag and its value, split after its one
            // character (which may not be ASCII: `-נּ`).
            _ if !word.starts_with("--") && word.len() > 2 && word.is_char_boundary(2) => {
                (&word[..2], Some(&word[2..]))
            }
            _ => (word, None),
        };
        let debian = [
            "-t",
            "--times",
            "-d",
            "--delay",
            "-u",
            "--until",
            "-m",
            "--message",
        ];
        if !debian.contains(&flag) {
            continue;
        }
        let Some(value) = inline.or_else(|| words.next().flatten()) else {
            break;
        };
        let number = value.parse::<u32>().ok();
        let said = match (flag, number) {
            ("-t" | "--times", Some(n)) => format!("`{flag} {n}` is `-n {n}` (attempts)"),
            ("-d" | "--delay", Some(n)) => format!(
                "`{flag} {n}` is `-b {n}s` (the first sleep; `--jitter none --factor 1` keeps \
                 it fixed)"
            ),
            ("-u" | "--until", _) if value == "success" => {
                format!("`{flag} success` is retry's default")
            }
            ("-u" | "--until", _) => {
                format!("`{flag} {value}` has no match (retry stops at a success)")
            }
            ("-m" | "--message", _) if crate::duration::parse(value).is_err() => format!(
                "`{flag} TEXT` has no match (retry's own lines name the command; `-m` is \
                 --max-time)"
            ),
            _ => continue,
        };
        foreign |= !["-t", "-m"].contains(&flag);
        found.push(said);
    }
    // One flag alone has its own message (`foreign_flag`, `debian_tries`).
    (foreign && found.len() > 1)
        .then(|| format!("retry: Debian's retry flags, here: {}", found.join("; ")))
}

#[cfg(test)]
mod debian {
    use super::debian_flags;

    fn said(line: &str) -> Option<String> {
        let args: Vec<std::ffi::OsString> = line.split(' ').map(Into::into).collect();
        debian_flags(&args)
    }

    #[test]
    fn every_debian_flag_on_the_line_is_named_at_once() {
        assert_eq!(
            said("retry -t 5 -d 1 -- true").unwrap(),
            "retry: Debian's retry flags, here: `-t 5` is `-n 5` (attempts); `-d 1` is `-b 1s` \
             (the first sleep; `--jitter none --factor 1` keeps it fixed)"
        );
        let all = said("retry -v --times=3 -b 2s -d2 -u fail -m hello true").unwrap();
        for part in [
            "`--times 3` is `-n 3`",
            "`-d 2` is `-b 2s`",
            "`-u fail` has no match",
            "`-m TEXT` has no match",
        ] {
            assert!(all.contains(part), "{part}: {all}");
        }
        // A line without a flag only Debian's has, or with one flag alone,
        // is left to the other rules.
        assert_eq!(said("retry -t 5 -- true"), None);
        assert_eq!(said("retry -d 1 -- true"), None);
        assert_eq!(said("retry -m 5m -n 3 true"), None);
        // The command's own flags are not retry's.
        assert_eq!(said("retry -n 3 curl -d 1"), None);
        // A short flag whose one character is not ASCII is not cut inside it.
        assert_eq!(said("retry -\u{fb35}x -d 1 -- true"), None);
    }
}

/// The one line for a flag of another retry tool, if it is one.
fn foreign_flag(error: &clap::Error, args: &[OsString]) -> Option<String> {
    if error.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let typed = error.get(ContextKind::InvalidArg)?.to_string();
    let flag = typed
        .split_once('=')
        .map_or(typed.as_str(), |(flag, _)| flag);
    let short = !flag.starts_with("--");
    // `--retries 3` or `--retries=3` (`-d 1` or `-d1`): the value, to
    // translate the number.
    let value = args.iter().enumerate().find_map(|(at, word)| {
        let word = word.to_str()?;
        match word.strip_prefix(flag)? {
            "" => args.get(at + 1)?.to_str(),
            inline if short => Some(inline.strip_prefix('=').unwrap_or(inline)),
            inline => inline.strip_prefix('='),
        }
    });
    let count = value.and_then(|v| v.trim().parse::<u32>().ok());
    let advice = match flag {
        "--times" | "--tries" | "--attempts" | "--max-tries" | "--max-attempt" | "--count" => {
            let example = count.map_or(String::new(), |n| format!(": `-n {n}`"));
            format!("use -n/--max-attempts N: it counts attempts, the first included{example}")
        }
        "--retries" | "--max-retries" | "--retry" | "--retry-count" | "--num-retries" => {
            let example = count.map_or(String::new(), |n| {
                format!(": {n} retries are `-n {}`", n.saturating_add(1))
            });
            format!(
                "use -n/--max-attempts N: it counts attempts, not retries (the first run is \
                 one){example}"
            )
        }
        "--delay" | "--interval" | "--sleep" | "--wait" | "--initial-delay" | "--min-delay"
        | "--pause" | "-d" => {
            // Debian's `retry -d N` waits N seconds.
            let example = match (flag, count) {
                ("-d", Some(n)) => format!("; Debian's `retry -d {n}` is `-b {n}s` here"),
                _ => String::new(),
            };
            format!(
                "the first sleep is -b/--base DURATION (later ones grow by --factor up to \
                 --cap; `--jitter none --factor 1` keeps it fixed){example}"
            )
        }
        "--max-delay" | "--max-sleep" | "--max-wait" | "--max-interval" | "--max-backoff"
        | "--delay-max" => "the largest sleep is -c/--cap DURATION".to_owned(),
        "--backoff" | "--exponential" | "--exponential-backoff" | "--multiplier" => {
            "retry always backs off: -b/--base is the first sleep, -f/--factor its growth, \
             -c/--cap the largest, -j/--jitter the strategy"
                .to_owned()
        }
        "--deadline" | "--max-duration" | "--total-timeout" => {
            "-m/--max-time DURATION limits the whole run, -t/--timeout one attempt".to_owned()
        }
        _ => return None,
    };
    Some(format!("retry: unknown option '{flag}': {advice}"))
}

/// Which value is not UTF-8, which clap does not say: a `RETRY_*` variable
/// that set its option, else the first such word on the command line, with
/// the option it belongs to.
fn invalid_utf8(provenance: &Provenance, args: &[OsString]) -> String {
    for arg in Cli::command().get_arguments() {
        let (Some(variable), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let Some(value) = std::env::var_os(variable).filter(|v| v.to_str().is_none()) else {
            continue;
        };
        if provenance.set_by_variable(arg.get_id().as_str()) {
            let variable = variable.to_string_lossy();
            let value = value.to_string_lossy();
            return format!(
                "retry: `{variable}` (--{long}) is not valid UTF-8: '{}'",
                StoreNames::new().shown(&variable, &value).escape_debug()
            );
        }
    }
    let Some(at) = args.iter().skip(1).position(|a| a.to_str().is_none()) else {
        return "retry: a value is not valid UTF-8".to_owned();
    };
    let word = args[at + 1].to_string_lossy();
    let (option, value) = match word.split_once('=') {
        Some((flag, value)) if flag.starts_with('-') => (flag.to_owned(), value),
        _ => (args[at].to_string_lossy().into_owned(), &*word),
    };
    let value = StoreNames::new().shown(&option, value);
    // Escaped: a newline in the value must not start a second line.
    let (option, value) = (option.escape_debug(), value.escape_debug());
    format!("retry: the value of `{option}` is not valid UTF-8: '{value}'")
}

/// (how clap showed the argument, its variable) for each argument in the
/// error whose value came from its variable.
fn from_environment(error: &clap::Error, provenance: &Provenance) -> Vec<(String, String)> {
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
        let Some(variable) = arg.get_env() else {
            continue;
        };
        if provenance.set_by_variable(arg.get_id().as_str()) {
            found.push((shown.to_owned(), variable.to_string_lossy().into_owned()));
        }
    }
    found
}

/// The line for `args` (after `retry`), or "" if they parse: for tests.
#[cfg(test)]
pub(crate) fn line_for(args: &[&str]) -> String {
    let args: Vec<OsString> = ["retry"].iter().chain(args).map(Into::into).collect();
    match crate::cli::parse_from(&args, crate::cli::AfterParsing::Free) {
        Err(error) => line(&error, &args),
        Ok(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(args: &[&str]) -> (clap::Error, Vec<OsString>) {
        let args: Vec<OsString> = ["retry"].iter().chain(args).map(Into::into).collect();
        let error = crate::cli::parse_from(&args, crate::cli::AfterParsing::Free)
            .err()
            .unwrap();
        (error, args)
    }

    #[test]
    #[cfg(unix)] // bytes that are no UTF-8; Windows arguments are UTF-16
    fn a_value_that_is_not_utf8_is_named_by_its_flag() {
        use std::os::unix::ffi::OsStringExt;
        let bad = OsString::from_vec(b"1\xffs".to_vec());
        for args in [
            vec!["retry".into(), "--base".into(), bad.clone(), "true".into()],
            vec![
                "retry".into(),
                OsString::from_vec(b"--base=1\xffs".to_vec()),
                "true".into(),
            ],
            // Found by the argv fuzz target: one line, whatever the value holds.
            vec![
                "retry".into(),
                "--base".into(),
                OsString::from_vec(b"1\n\xff".to_vec()),
            ],
        ] {
            let error = crate::cli::parse_from(&args, crate::cli::AfterParsing::Free)
                .err()
                .unwrap();
            assert_eq!(error.kind(), ErrorKind::InvalidUtf8);
            let line = line(&error, &args);
            assert!(
                line.starts_with("retry: the value of `--base` is not valid UTF-8: '1"),
                "{line}"
            );
            assert!(!line.contains('\n'), "{line}");
        }
    }

    #[test]
    fn a_store_value_taken_for_a_flag_is_quoted_masked() {
        // Found by the store fuzz target: clap quotes an unknown `--flag`
        // only up to its `=`, which the whole value's mask never matched.
        let line = line_for(&[
            "--budget",
            "ci",
            "--budget-store",
            "--x\tsecret@h\tre=:",
            "true",
        ]);
        assert!(
            line.starts_with("retry: unexpected argument '***@h\tre' found"),
            "{line}"
        );
        // A part before the `@`: all of it.
        let line = line_for(&["--budget", "ci", "--budget-store", "--x:s=ecret@h", "true"]);
        assert!(
            line.starts_with("retry: unexpected argument '***' found"),
            "{line}"
        );
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
