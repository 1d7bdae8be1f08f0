//! GitHub Actions annotations: workflow commands whose level says how bad
//! the event is and whose title names the command; the words are the text
//! lines' own.

use crate::run::events::Event;
use crate::run::log::Context;
use crate::run::log::text::{self, write_message as message};
use std::fmt::{self, Write};

/// GitHub Actions annotations: a retried failure or a failed hook is a
/// warning, giving up is an error, a success after retries a notice. The
/// title names the command, so a job's annotations say which step failed.
/// https://docs.github.com/actions/reference/workflow-commands-for-github-actions
#[cfg(test)]
pub fn line(event: &Event, context: &Context) -> String {
    let mut out = String::new();
    write_line(event, context, &mut out);
    out
}

/// `line`, appended to `out` and escaped on the way: no String of its own
/// (issue 26).
pub fn write_line(event: &Event, context: &Context, out: &mut String) {
    let level = match event {
        Event::Starting { .. } => return text::write_line(event, context, out),
        Event::Retrying { .. } | Event::HookFailed { .. } | Event::Warning { .. } => "warning",
        Event::Succeeded { .. } => "notice",
        Event::GaveUp { .. } => "error",
        Event::Preset(_) => "notice",
    };
    // Writing to a String cannot fail.
    let _ = write!(out, "::{level} title=");
    let _ = write!(Escaping::property(out), "retry: {}", context.name.short);
    out.push_str("::");
    let _ = match event {
        // The level already says it: no second "warning: ".
        Event::Warning { message, .. } => Escaping::message(out).write_str(message),
        _ => message(event, context.name, &mut Escaping::message(out)),
    };
    out.push('\n');
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
    use crate::run::log::fixtures::*;

    #[test]
    fn a_script_is_quoted_as_the_subject() {
        let args = [OsString::from("-c"), OsString::from("make test")];
        let name = CommandName::new(OsStr::new("/bin/sh"), &args);
        assert!(
            text::line(&retrying(), &at(&name, false))
                .starts_with("retry: `make test`: attempt 2/5 failed")
        );
        // A title is no sentence: no quotes, but `:` and `,` escaped.
        assert!(
            line(&retrying(), &at(&name, false))
                .starts_with("::warning title=retry%3A make test::attempt 2/5 failed")
        );
    }

    #[test]
    fn github_annotations_escape_and_pick_levels() {
        assert_eq!(
            github_of(&retrying()),
            "::warning title=retry%3A curl::attempt 2/5 failed with exit code 22; sleep: 692 ms (full jitter, up to 2000 ms)\n"
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
            "::error title=retry%3A curl::cannot run `a%25b%0Ac` (reason: spawn)\n"
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
            "::warning title=retry%3A curl::--budget: cannot lock it; the run goes on without it\n"
        );
        assert_eq!(
            text_of(&warning),
            "retry: curl: warning: --budget: cannot lock it; the run goes on without it\n"
        );
    }
}
