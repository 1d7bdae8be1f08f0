//! How retry's log lines name the command, so a CI job with several retry
//! steps says which one failed: short on every line (`curl`, or the start
//! of a `sh -c` script), in full once (`-v`'s first line, JSON's first
//! event). Control characters are escaped as in spawn errors: a word must
//! not forge a line of its own or repaint the terminal.

use std::ffi::{OsStr, OsString};
use std::path::Path;

use crate::escape::{self, cut};
use crate::run::alternates::Repeat;

/// A `sh -c` script longer than this is cut (with `…`) in every line.
const SCRIPT_CHARS: usize = 24;
/// The whole command line shown by `-v` is cut past this.
const FULL_CHARS: usize = 200;
/// Shells whose `-c SCRIPT` is named by the script, not by the shell.
const SHELLS: [&str; 6] = ["sh", "bash", "dash", "zsh", "ksh", "ash"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandName {
    /// The program's base name, or the start of its `-c` script: named in
    /// every line.
    pub short: String,
    /// The whole command line, shell-quoted, escaped and cut if long.
    pub full: String,
    /// The words as given (lossily UTF-8), for JSON.
    pub argv: Vec<String>,
    /// A `-c` script's words, uncut; `None` for a program run directly.
    pub script: Option<Vec<String>>,
    /// A GitHub annotation's title, made at its first line and reused: an
    /// attempt allocates nothing (tests/allocations.rs).
    pub title: std::sync::OnceLock<String>,
    /// With `--alternate`: how each attempt's lines name what it ran.
    pub ran: Option<Ran>,
}

/// With `--alternate`: each entry's name in an attempt's lines (COMMAND's
/// first), and the rotation that says which entry an attempt ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ran {
    pub names: Vec<String>,
    pub repeat: Repeat,
}

impl Ran {
    /// The names of COMMAND (`command`) and its alternates: each one's
    /// short name; where two share one (two mirrors, both `curl`), each
    /// alternate is named by its place too (`alternate 1: curl`).
    pub fn new(command: &CommandName, alternates: &[CommandName], repeat: Repeat) -> Self {
        let mut names = vec![command.short.clone()];
        names.extend(alternates.iter().map(|name| name.short.clone()));
        let shared = (1..names.len()).any(|i| names[..i].contains(&names[i]));
        if shared {
            for (i, name) in names.iter_mut().enumerate().skip(1) {
                *name = format!("alternate {i}: {name}");
            }
        }
        Self { names, repeat }
    }

    /// What attempt `attempt` ran, named.
    pub fn of(&self, attempt: u32) -> &str {
        let entry = crate::run::alternates::entry(attempt, self.names.len() - 1, self.repeat);
        self.names.get(entry).map_or("", String::as_str)
    }
}

/// `CommandName::subject`, written where it goes (no String per line).
pub struct Subject<'a>(&'a str);

impl std::fmt::Display for Subject<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.is_empty() || self.0.contains(' ') {
            true => write!(f, "`{}`", self.0),
            false => f.write_str(self.0),
        }
    }
}

/// A word as the lines show it: a URL's user and password masked
/// (`https://***@host/…`) before anything cuts it, so that no cut can
/// leave a password whose `@` it dropped.
fn masked(word: &str) -> String {
    crate::url::masked(word, crate::url::hidden_in_url(word)).into_owned()
}

/// `text` with each of its words `masked`, its spacing kept.
fn masked_text(text: &str) -> String {
    text.split_inclusive(char::is_whitespace)
        .map(|piece| {
            let word = piece.trim_end_matches(char::is_whitespace);
            masked(word) + &piece[word.len()..]
        })
        .collect()
}

impl CommandName {
    /// What attempt `attempt` ran, named, when the run has alternates.
    pub fn ran(&self, attempt: u32) -> Option<&str> {
        Some(self.ran.as_ref()?.of(attempt))
    }

    /// The short name as the subject of a text line: quoted when it has
    /// several words, so it reads as one.
    pub fn subject(&self) -> Subject<'_> {
        Subject(&self.short)
    }

    /// `name` shown as `script` (the Action's `RETRY_GITHUB_TITLE`: the
    /// user's command rather than the wrapper that runs it), as a `sh -c`
    /// script is; JSON's `argv` stays the words run.
    pub fn titled(self, script: &str) -> Self {
        let words: Vec<String> = script.split_whitespace().map(masked).collect();
        Self {
            short: escape::control(&cut(&words.join(" "), SCRIPT_CHARS)),
            full: cut(&escape::control(&masked_text(script)), FULL_CHARS),
            argv: self.argv,
            // The annotations' title is made from the user's words too.
            script: Some(words),
            title: std::sync::OnceLock::new(),
            ran: self.ran,
        }
    }

    pub fn new(program: &OsStr, args: &[OsString]) -> Self {
        let argv: Vec<String> = std::iter::once(program)
            .chain(args.iter().map(OsString::as_os_str))
            .map(|word| word.to_string_lossy().into_owned())
            .collect();
        let base = Path::new(program)
            .file_name()
            .unwrap_or(program)
            .to_string_lossy();
        let script = match args {
            [flag, script, ..] if flag == "-c" && SHELLS.contains(&&*base) => Some(script),
            _ => cmd_script(&base, args),
        };
        let script: Option<Vec<String>> = script.map(|script| {
            let script = script.to_string_lossy();
            script.split_whitespace().map(masked).collect()
        });
        let short = match &script {
            Some(words) => cut(&words.join(" "), SCRIPT_CHARS),
            None => base.into_owned(),
        };
        let quoted: Vec<String> = argv.iter().map(|word| shell_quote(&masked(word))).collect();
        Self {
            short: escape::control(&short),
            full: cut(&escape::control(&quoted.join(" ")), FULL_CHARS),
            argv,
            script,
            title: std::sync::OnceLock::new(),
            ran: None,
        }
    }
}

/// The script of `cmd /d /s /c SCRIPT` (Windows' `-s` and `--on-retry`)
/// or of any `cmd` run with `/c` after its other switches, as cmd reads
/// them: names and switches in any case.
fn cmd_script<'a>(base: &str, args: &'a [OsString]) -> Option<&'a OsString> {
    if !["cmd", "cmd.exe"]
        .iter()
        .any(|cmd| base.eq_ignore_ascii_case(cmd))
    {
        return None;
    }
    let mut words = args.iter();
    loop {
        let word = words.next()?.to_str()?;
        if word.eq_ignore_ascii_case("/c") {
            return words.next();
        }
        // /d, /s, /q, /u, /e:on...: switches; anything else is no script.
        if !word.starts_with('/') {
            return None;
        }
    }
}

/// A word as a POSIX shell reads it back: bare if it is plain, else in
/// single quotes (a `'` inside written `'\''`).
fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-+=.,/:@%^".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(words: &[&str]) -> CommandName {
        let args: Vec<OsString> = words[1..].iter().map(OsString::from).collect();
        CommandName::new(OsStr::new(words[0]), &args)
    }

    #[test]
    fn a_program_is_named_by_its_base_name() {
        let curl = name(&["/usr/bin/curl", "-fsS", "https://example.com/a b"]);
        assert_eq!(curl.short, "curl");
        assert_eq!(curl.full, "/usr/bin/curl -fsS 'https://example.com/a b'");
        assert_eq!(
            curl.argv,
            ["/usr/bin/curl", "-fsS", "https://example.com/a b"]
        );
        assert_eq!(name(&["./deploy.sh"]).short, "deploy.sh");
        assert_eq!(name(&["my tool"]).subject().to_string(), "`my tool`");
    }

    /// The attacker's case: a `sh -c` script's start, cut at 24
    /// characters, kept the password once its `@` was cut away.
    #[test]
    fn a_urls_password_is_masked_before_any_cut() {
        let script = name(&["sh", "-c", "echo https://u:secretpw@h/x"]);
        assert_eq!(script.short, "echo https://***@h/x");
        assert!(!script.full.contains("secretpw"), "{}", script.full);
        let curl = name(&["curl", "-u", "x", "https://me:token@example.com/a"]);
        assert_eq!(curl.full, "curl -u x 'https://***@example.com/a'");
        let titled = curl.titled("curl  https://me:token@h/x\n  -o out");
        assert_eq!(titled.full, "curl  https://***@h/x\\n  -o out");
        assert!(!titled.short.contains("token"), "{}", titled.short);
        // The words as given stay in JSON's argv: the user's own record.
        assert_eq!(
            name(&["curl", "https://me:token@h"]).argv[1],
            "https://me:token@h"
        );
    }

    #[test]
    fn a_shell_script_is_named_by_its_start() {
        let short = name(&["/bin/sh", "-c", "echo oops >&2;\n exit 22"]);
        assert_eq!(short.short, "echo oops >&2; exit 22");
        assert_eq!(short.subject().to_string(), "`echo oops >&2; exit 22`");
        assert_eq!(short.full, r"/bin/sh -c 'echo oops >&2;\n exit 22'");
        let long = name(&["bash", "-c", "curl -fsS https://example.com/health | jq ."]);
        assert_eq!(long.short, "curl -fsS https://examp…");
        assert_eq!(long.short.chars().count(), SCRIPT_CHARS);
        // A cut never ends in a space before the `…`.
        assert_eq!(cut("abc def", 5), "abc…");
        // Not a shell, or no script: the program's name.
        assert_eq!(
            name(&["python3", "-c", "print(1)"]).subject().to_string(),
            "python3"
        );
        assert_eq!(name(&["sh", "build.sh"]).short, "sh");
    }

    #[test]
    fn a_cmd_script_is_named_by_its_start_as_a_shell_script_is() {
        // `platform::shell` on Windows, for `-s` and `--on-retry`.
        let (shell, words) = (OsStr::new("cmd.exe"), ["/d", "/s", "/c", "exit /b 5"]);
        let args: Vec<OsString> = words.iter().map(OsString::from).collect();
        let named = CommandName::new(shell, &args);
        assert_eq!(named.subject().to_string(), "`exit /b 5`");
        assert_eq!(named.full, "cmd.exe /d /s /c 'exit /b 5'");
        let long = name(&["CMD.EXE", "/C", "npm ci && npm run build-all"]);
        assert_eq!(long.short, "npm ci && npm run build…");
        // No `/c`, or an argument before it: the program's name.
        assert_eq!(name(&["cmd.exe", "/k", "dir"]).short, "cmd.exe");
        assert_eq!(name(&["cmd", "build.cmd", "/c", "x"]).short, "cmd");
        assert_eq!(name(&["cmd.exe", "/d", "/c"]).short, "cmd.exe");
        assert_eq!(name(&["notcmd.exe", "/c", "x"]).short, "notcmd.exe");
    }

    #[test]
    fn control_characters_cannot_start_a_line() {
        let evil = name(&["x\n::error::forged", "a\x1b[31m"]);
        assert_eq!(evil.short, r"x\n::error::forged");
        assert!(!evil.full.contains(['\n', '\x1b']), "{}", evil.full);
        assert_eq!(evil.argv[0], "x\n::error::forged");
    }

    #[test]
    fn quoting_round_trips_through_a_shell() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a=b,c:d/e"), "a=b,c:d/e");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn a_long_command_line_is_cut() {
        let long = "x".repeat(500);
        let full = name(&["echo", &long]).full;
        assert_eq!(full.chars().count(), FULL_CHARS);
        assert!(full.ends_with('…'));
    }
}
