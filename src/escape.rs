//! How retry shows text it did not write: a command's words, a variable's
//! value, a message. A leaf that the log, the traces' OTLP JSON and the
//! usage errors share.

use std::fmt::{self, Display, Write as _};

/// JSON string escaping for the few free-text fields (a command name in a message).
pub fn json(text: &str) -> impl Display + '_ {
    fmt::from_fn(move |f| {
        for c in text.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    })
}

/// The command's words as a log line may show them: a newline or an escape
/// sequence in a word must not start a line of its own (a forged GitHub
/// annotation) or repaint the terminal.
pub fn control(text: &str) -> String {
    text.chars()
        .flat_map(|c| match c {
            '\n' => "\\n".chars().collect::<Vec<_>>(),
            '\r' => "\\r".chars().collect(),
            '\t' => "\\t".chars().collect(),
            c if c.is_control() => format!("\\x{:02x}", c as u32).chars().collect(),
            c => vec![c],
        })
        .collect()
}

/// `text` cut to `max` characters, the last of them `…`.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(max - 1).collect();
    short.truncate(short.trim_end().len());
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(control("a\nb\x1b[31m\u{85}ok"), "a\\nb\\x1b[31m\\x85ok");
    }
}
