//! GitHub Actions annotations: workflow commands whose level says how bad
//! the event is and whose title names the command; the words are the text
//! lines' own.

use crate::escape;
use crate::escape::cut;
use crate::events::Event;
use crate::sinks::log::Context;
use crate::sinks::log::text::{self, write_message as message};
use crate::sinks::name::CommandName;
use std::fmt::{self, Write};

/// GitHub Actions annotations: a retried failure or a failed hook is a
/// warning, giving up is an error, a success after retries a notice. The
/// title names the command, so a job's annotations say which step failed.
/// Appended to `out` and escaped on the way: no String of its own (issue
/// 26).
/// https://docs.github.com/actions/reference/workflow-commands-for-github-actions
pub fn write_line(event: &Event, context: &Context, out: &mut String) {
    let level = match event {
        Event::Starting { .. } | Event::Splay { .. } => {
            return text::write_line(event, context, out);
        }
        Event::Retrying { .. }
        | Event::Reset { .. }
        | Event::Rejected { .. }
        | Event::HookFailed { .. }
        | Event::Warning { .. } => "warning",
        Event::Succeeded { .. } => "notice",
        Event::GaveUp { .. } => "error",
        Event::Preset(_) | Event::NoPreset(_) => "notice",
        // The metrics' alone: never shown (`Log::shows`).
        Event::CircuitSeen { .. } | Event::ThrottleSeen { .. } | Event::Ran { .. } => return,
    };
    // Writing to a String cannot fail.
    let _ = write!(out, "::{level} title=");
    let title = context.name.title.get_or_init(|| title(context.name));
    let _ = write!(Escaping::property(out), "retry: {title}");
    out.push_str("::");
    let _ = match event {
        // The level already says it: no second "warning: ".
        Event::Warning { message, .. } => Escaping::message(out).write_str(message),
        _ => message(event, context.name, &mut Escaping::message(out)),
    };
    out.push('\n');
}

/// The most characters of a title after `retry: `: GitHub lists a job's
/// annotations by title, one line each.
const TITLE_CHARS: usize = 48;

/// What tells one step's annotations from another's: the command line if
/// it fits (a script's words, or the program's base name and its
/// arguments), else the program and its last argument (`curl …
/// api.example.com/v1/items`: a URL by its host and path, no scheme,
/// credentials or query), cut at a word or path boundary, never mid-word.
fn title(name: &CommandName) -> String {
    let words: Vec<String> = match &name.script {
        Some(words) => words.clone(),
        None => {
            let program = std::path::Path::new(name.argv.first().map_or("", String::as_str))
                .file_name()
                .map_or_else(String::new, |p| p.to_string_lossy().into_owned());
            std::iter::once(program)
                .chain(name.argv.iter().skip(1).cloned())
                .collect()
        }
    };
    let words: Vec<String> = words
        .iter()
        .map(|w| escape::control(&host_and_path(&no_credentials(w))))
        .collect();
    let whole = words.join(" ");
    let (Some(program), Some(last)) = (words.first(), words.get(1..).and_then(<[_]>::last)) else {
        return cut(&whole, TITLE_CHARS);
    };
    if whole.chars().count() <= TITLE_CHARS {
        return whole;
    }
    let gap = if words.len() > 2 { " … " } else { " " };
    let head = format!("{}{gap}", cut(program, TITLE_CHARS / 2));
    let room = TITLE_CHARS.saturating_sub(head.chars().count());
    format!("{head}{}", cut_at_slash(last, room))
}

/// A URL's host and path (`https://user:pw@host/a/b?q` → `host/a/b`); a
/// scheme-less one (`host/a?token=x`, as curl and wget take it) without
/// its query; any other word as it is.
fn host_and_path(word: &str) -> String {
    let Some((_, rest)) = word.split_once("://") else {
        return match scheme_less_url(word) {
            true => word.split(['?', '#']).next().unwrap_or(word).to_owned(),
            false => word.to_owned(),
        };
    };
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    rest.trim_end_matches('/').to_owned()
}

/// A word that may be a URL without its scheme (`user:pw@host/path?q`):
/// no option, and a host or path before any query.
fn scheme_less_url(word: &str) -> bool {
    let before_query = word.split(['?', '#']).next().unwrap_or(word);
    !word.starts_with('-') && before_query.contains(['.', '/', '@'])
}

/// A URL's `user:password@` left out, with or without its scheme (curl
/// takes `user:pw@host/path`): a title is shown to everyone who can read
/// the job.
fn no_credentials(word: &str) -> String {
    let (scheme, rest) = match word.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None if scheme_less_url(word) => (String::new(), word),
        None => return word.to_owned(),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        // Scheme-less, only `user:password@`: `git@host:repo` holds no secret.
        Some(at) if !scheme.is_empty() || rest[..at].contains(':') => {
            format!("{scheme}{}", &rest[at + 1..])
        }
        _ => word.to_owned(),
    }
}

/// `text` within `max` characters: whole, else cut after a `/` (a path
/// boundary) and ended with `…`, else cut as any text.
fn cut_at_slash(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let fits: String = text.chars().take(max.saturating_sub(1)).collect();
    match fits.rfind('/') {
        Some(at) if at > 0 => format!("{}…", &fits[..=at]),
        _ => cut(text, max),
    }
}

/// A workflow command's message ends at a newline, and `%` starts an
/// escape; a property (the title) also ends at `,` and `:`. Escapes what
/// is written through it into `out`.
struct Escaping<'a> {
    out: &'a mut String,
    property: bool,
}

impl<'a> Escaping<'a> {
    fn message(out: &'a mut String) -> Self {
        Escaping {
            out,
            property: false,
        }
    }

    fn property(out: &'a mut String) -> Self {
        Escaping {
            out,
            property: true,
        }
    }
}

impl Write for Escaping<'_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        for c in text.chars() {
            match c {
                '%' => self.out.push_str("%25"),
                '\r' => self.out.push_str("%0D"),
                '\n' => self.out.push_str("%0A"),
                ':' if self.property => self.out.push_str("%3A"),
                ',' if self.property => self.out.push_str("%2C"),
                c => self.out.push(c),
            }
        }
        Ok(())
    }
}

/// A property's escaping, into a String of its own (tests).
#[cfg(test)]
fn escape_property(text: &str) -> String {
    let mut out = String::new();
    let _ = Escaping::property(&mut out).write_str(text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sinks::log::fixtures::*;
    use crate::sinks::log::{LogFormat, written};

    #[test]
    fn titles_keep_the_program_and_its_last_argument_cut_at_a_boundary() {
        let title_of = |program: &str, args: &[&str]| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            title(&CommandName::new(OsStr::new(program), &args))
        };
        // Short enough: the whole line, which tells steps apart.
        assert_eq!(
            title_of("/usr/bin/curl", &["-fsS", "https://example.com/health"]),
            "curl -fsS example.com/health"
        );
        // The script that was cut mid-word (`curl -fsS -D /dev/stder…`).
        let script = "curl -fsS -D /dev/stderr --retry-max-time 30 https://user:secret@api.example.com/v1/items?page=2";
        assert_eq!(
            title_of("sh", &["-c", script]),
            "curl … api.example.com/v1/items"
        );
        let other = script.replace("items", "orders");
        assert_eq!(
            title_of("sh", &["-c", &other]),
            "curl … api.example.com/v1/orders"
        );
        // A long path is cut after a `/`, never mid-word; no credentials.
        let long = "https://u:pw@registry.example.com/a/very/long/path/to/some/artifact.tar.gz";
        let got = title_of("/usr/bin/curl", &["-fsSLO", "--retry", "0", long]);
        assert_eq!(got, "curl … registry.example.com/a/very/long/path/…");
        assert!(!title_of("curl", &["https://u:pw@h/x"]).contains("pw"));
        // Without a scheme, as curl and wget take a URL: no password, no query.
        let bare = title_of(
            "curl",
            &["-fsS", "admin:hunter2@api.example.com/v1?token=s3"],
        );
        assert_eq!(bare, "curl -fsS api.example.com/v1");
        let script = "curl -fsS 'ci:hunter2@h.example.com/x#k=s3'";
        assert_eq!(title_of("sh", &["-c", script]), "curl -fsS h.example.com/x");
        assert_eq!(
            title_of("git", &["clone", "git@example.com:org/repo.git"]),
            "git clone git@example.com:org/repo.git"
        );
        assert_eq!(title_of("make", &[]), "make");
    }

    #[test]
    fn a_script_is_quoted_as_the_subject() {
        let args = [OsString::from("-c"), OsString::from("make test")];
        let name = CommandName::new(OsStr::new("/bin/sh"), &args);
        assert!(
            written(LogFormat::Text, &retrying(), &at(&name, false))
                .starts_with("retry: `make test`: attempt 2/5 failed")
        );
        // A title is no sentence: no quotes, but `:` and `,` escaped.
        assert!(
            written(LogFormat::Github, &retrying(), &at(&name, false))
                .starts_with("::warning title=retry%3A make test::attempt 2/5 failed")
        );
    }

    #[test]
    fn github_annotations_escape_and_pick_levels() {
        assert_eq!(
            github_of(&retrying()),
            "::warning title=retry%3A curl -fsS example.com/health::attempt 2/5 failed with exit code 22; sleep: 692 ms (full jitter, up to 2000 ms)\n"
        );
        let gave_up = Event::GaveUp {
            attempt: 1,
            limit: Attempts::Limit(5),
            reason: GiveUp::Spawn {
                code: 127,
                message: "cannot run `a%b\nc`".into(),
            },
            took: None,
        };
        assert_eq!(
            github_of(&gave_up),
            "::error title=retry%3A curl -fsS example.com/health::cannot run `a%25b%0Ac` (reason: spawn)\n"
        );
        // A spawn error names the command itself: no subject before it.
        assert_eq!(
            text_of(&gave_up),
            "retry: cannot run `a%b\nc` (reason: spawn)\n"
        );
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    /// A warning annotation says "warning" once, by its level.
    #[test]
    fn a_warning_is_not_called_a_warning_twice() {
        let warning = Event::Warning {
            attempt: 1,
            message: "--budget: cannot lock it; the run goes on without it".into(),
        };
        assert_eq!(
            github_of(&warning),
            "::warning title=retry%3A curl -fsS example.com/health::--budget: cannot lock it; the run goes on without it\n"
        );
        assert_eq!(
            text_of(&warning),
            "retry: curl: warning: --budget: cannot lock it; the run goes on without it\n"
        );
    }
}
