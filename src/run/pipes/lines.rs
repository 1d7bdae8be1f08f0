//! What the output conditions (`--retry-if-output`, `--stop-if-output`,
//! `--throttle-if-output`, `--delay-from-output`) see: an output stream
//! cut into lines, each matched whole without its line ending, so `^` and
//! `$` anchor at the line's ends and a match may span any number of reads.
//!
//! A line is kept in memory until its newline, up to `MAX_LINE` (1 MiB per
//! stream: longer than any log line and most single-line JSON, and small
//! beside the 64 MiB a held-back stdout may take). A longer line is matched
//! on its first `MAX_LINE` bytes only: a match must end within them, and
//! `$` never matches there, since the line goes on. The rest of such a line
//! is not matched. So no anchored pattern matches a piece of a line as if
//! it were the line, and no match inside the limit is missed.

use std::time::SystemTime;

use regex::bytes::Regex;
use regex_automata::meta;
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind};

use crate::run::hint;
use crate::run::pipes::OutputSeen;

/// The longest line matched whole, in bytes without its line ending.
pub const MAX_LINE: usize = 1 << 20;

#[derive(Clone, Debug, Default)]
pub struct Matchers {
    pub retry_if: Option<Regex>,
    pub stop_if: Option<Regex>,
    /// `--throttle-if-output`, or a preset's: the server asked to slow down.
    pub throttle_if: Option<Regex>,
    /// `--delay-from-output`: one capture group, the server's hint.
    pub delay_from: Option<Regex>,
    /// A preset's `transient-if-output`: the program retried a transient
    /// failure itself (`OutputSeen::transient`).
    pub transient: Option<Regex>,
}

impl Matchers {
    pub fn any(&self) -> bool {
        self.retry_if.is_some()
            || self.stop_if.is_some()
            || self.throttle_if.is_some()
            || self.delay_from.is_some()
            || self.transient.is_some()
    }
}

/// The most of a matched line a log line quotes, in characters.
pub const QUOTED: usize = 120;

/// The patterns ready for both kinds of line.
#[derive(Debug)]
pub struct Patterns {
    retry_if: Option<Pattern>,
    stop_if: Option<Pattern>,
    throttle_if: Option<Pattern>,
    /// Matched on whole lines only: a hint is a short header, and the
    /// capture of a line cut at the limit could be cut too.
    delay_from: Option<Regex>,
    /// Whole lines only too: a warning line of the program's own.
    transient: Option<Regex>,
    /// Whether any is set (`Matchers::any`, the one rule).
    any: bool,
}

#[derive(Debug)]
struct Pattern {
    whole: Regex,
    /// The same pattern on the lower-level engine, which can search part of
    /// a haystack while its assertions see the rest: `$` then cannot match
    /// where the search stops. `None` only if it did not build (it is the
    /// pattern `whole` was built from, with the same syntax settings); an
    /// over-long line then matches nothing rather than something false.
    within: Option<meta::Regex>,
}

impl Pattern {
    fn new(whole: &Regex) -> Self {
        // As `regex::bytes::RegexBuilder::unicode(false)` configures it (cli::parse_regex).
        let within = meta::Builder::new()
            .configure(
                meta::Config::new()
                    .match_kind(MatchKind::LeftmostFirst)
                    .utf8_empty(false),
            )
            .syntax(syntax::Config::new().unicode(false).utf8(false))
            .build(whole.as_str())
            .ok();
        Pattern {
            whole: whole.clone(),
            within,
        }
    }

    fn matches(&self, line: Line<'_>) -> bool {
        match line {
            Line::Whole(line) => self.whole.is_match(line),
            // `start` has one byte past the limit, so `$` sees the line go on.
            Line::Start(start, limit) => self
                .within
                .as_ref()
                .is_some_and(|re| re.is_match(Input::new(start).range(..limit))),
        }
    }
}

impl Patterns {
    pub fn new(matchers: &Matchers) -> Self {
        Patterns {
            retry_if: matchers.retry_if.as_ref().map(Pattern::new),
            stop_if: matchers.stop_if.as_ref().map(Pattern::new),
            throttle_if: matchers.throttle_if.as_ref().map(Pattern::new),
            delay_from: matchers.delay_from.clone(),
            transient: matchers.transient.clone(),
            any: matchers.any(),
        }
    }

    pub fn any(&self) -> bool {
        self.any
    }

    pub fn check(&self, line: Line<'_>, seen: &mut OutputSeen) {
        seen.printed = true;
        seen.retry_if |= self.retry_if.as_ref().is_some_and(|p| p.matches(line));
        if self.stop_if.as_ref().is_some_and(|p| p.matches(line)) {
            // The first line that stopped the run, for its give-up line
            // (the only copy: one line, once).
            if seen.stop_line.is_none() {
                seen.stop_line = Some(quoted(line));
            }
            seen.stop_if = true;
        }
        seen.throttle |= self.throttle_if.as_ref().is_some_and(|p| p.matches(line));
        if let (Some(regex), Line::Whole(line)) = (&self.transient, line) {
            seen.transient |= regex.is_match(line);
        }
        if let (Some(regex), Line::Whole(line)) = (&self.delay_from, line)
            && let Some(group) = regex.captures(line).and_then(|c| c.get(1))
        {
            // Read as it arrives: an HTTP-date is a delay from then.
            let text = String::from_utf8_lossy(group.as_bytes());
            seen.hint = Some(hint::parse(&text, SystemTime::now()));
        }
    }
}

/// `line` as a log line may quote it: text, its control characters
/// escaped (no forged line or terminal sequence), at most `QUOTED`
/// characters.
fn quoted(line: Line<'_>) -> Box<str> {
    let bytes = match line {
        Line::Whole(bytes) => bytes,
        Line::Start(start, limit) => &start[..limit],
    };
    // No more bytes than the characters shown can take.
    let bytes = &bytes[..bytes.len().min(QUOTED * 4)];
    let text = crate::escape::control(&String::from_utf8_lossy(bytes));
    crate::escape::cut(&text, QUOTED).into_boxed_str()
}

/// A line as the patterns see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A complete line without its line ending.
    Whole(&'a [u8]),
    /// The start of a line longer than the limit (the second field): the
    /// limit's bytes and the one after them.
    Start(&'a [u8], usize),
}

/// Cuts a stream into lines as its reads arrive.
pub struct Lines {
    /// The line so far (its line ending not yet seen).
    buf: Vec<u8>,
    limit: usize,
    /// In the rest of a line that was longer than the limit: not matched.
    skipping: bool,
}

impl Lines {
    pub fn new(limit: usize) -> Self {
        Lines {
            buf: Vec::new(),
            limit,
            skipping: false,
        }
    }

    /// Takes the next bytes of the stream; calls `check` for each line they complete.
    pub fn feed(&mut self, chunk: &[u8], check: &mut impl FnMut(Line<'_>)) {
        for piece in chunk.split_inclusive(|&b| b == b'\n') {
            let ends = piece.ends_with(b"\n");
            if self.skipping {
                self.skipping = !ends;
                continue;
            }
            if ends && self.buf.is_empty() {
                // The whole line is in this read: no copy.
                self.line(&piece[..piece.len() - 1], check);
                continue;
            }
            // Two bytes past the limit can only be a longer line, even if
            // the last of them is the `\r` of a `\r\n`.
            let room = (self.limit + 2).saturating_sub(self.buf.len());
            self.buf.extend_from_slice(&piece[..piece.len().min(room)]);
            if ends && piece.len() <= room {
                let line = std::mem::take(&mut self.buf);
                self.line(&line[..line.len() - 1], check);
                self.buf = line; // keeps the allocation
                self.buf.clear();
            } else if self.buf.len() >= self.limit + 2 {
                check(Line::Start(&self.buf[..=self.limit], self.limit));
                self.buf.clear();
                self.buf.shrink_to(64 * 1024);
                self.skipping = !ends;
            }
        }
    }

    /// The stream ended: a last line without a newline is still a line.
    pub fn finish(&mut self, check: &mut impl FnMut(Line<'_>)) {
        if !self.skipping && !self.buf.is_empty() {
            let line = std::mem::take(&mut self.buf);
            self.line(&line, check);
        }
    }

    /// One line without its `\n`: drops a `\r` before it, applies the limit.
    fn line(&self, line: &[u8], check: &mut impl FnMut(Line<'_>)) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() <= self.limit {
            check(Line::Whole(line));
        } else {
            check(Line::Start(&line[..=self.limit], self.limit));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines `chunks` make, as the patterns would see them.
    fn lines(limit: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut lines = Lines::new(limit);
        let mut seen = Vec::new();
        let mut record = |line: Line<'_>| {
            seen.push(match line {
                Line::Whole(l) => String::from_utf8_lossy(l).into_owned(),
                Line::Start(s, limit) => {
                    assert_eq!(s.len(), limit + 1);
                    format!("{}...", String::from_utf8_lossy(s))
                }
            })
        };
        for chunk in chunks {
            lines.feed(chunk, &mut record);
        }
        lines.finish(&mut record);
        seen
    }

    #[test]
    fn lines_are_whole_whatever_the_reads() {
        assert_eq!(lines(8, &[b"ab\r\ncd", b"ef\n", b"g"]), ["ab", "cdef", "g"]);
        assert_eq!(
            lines(8, &[b"12345678\n", b"1234567", b"8\r\n"]),
            ["12345678", "12345678"]
        );
        assert_eq!(lines(8, &[b"\n\n"]), ["", ""]);
    }

    #[test]
    fn a_longer_line_shows_its_start_and_one_byte_more_once() {
        assert_eq!(lines(4, &[b"123456789\nok\n"]), ["12345...", "ok"]);
        assert_eq!(
            lines(4, &[b"12", b"34", b"5", b"6789", b"\n", b"ok"]),
            ["12345...", "ok"]
        );
        // Just past the limit, ended in the same read or in the last one.
        assert_eq!(lines(4, &[b"12345\n"]), ["12345..."]);
        assert_eq!(lines(4, &[b"123", b"45"]), ["12345..."]);
        assert_eq!(lines(4, &[b"1234\r", b"\n"]), ["1234"]);
    }

    #[test]
    fn the_first_line_that_stops_is_kept_quoted_and_a_throttle_is_seen() {
        let regex = |p: &str| regex::bytes::Regex::new(p).unwrap();
        let patterns = Patterns::new(&Matchers {
            stop_if: Some(regex("^stop")),
            throttle_if: Some(regex("^slow$")),
            ..Matchers::default()
        });
        let mut seen = OutputSeen::default();
        let mut lines = Lines::new(MAX_LINE);
        let long = format!("stop {}\n", "x".repeat(500));
        for chunk in [
            &b"slow\nstop \x1b[2J\tnow\r\n"[..],
            b"stop again\n",
            long.as_bytes(),
        ] {
            lines.feed(chunk, &mut |line| patterns.check(line, &mut seen));
        }
        assert!(seen.stop_if && seen.throttle);
        // Escaped: no terminal sequence or forged line in a log line.
        assert_eq!(seen.stop_line.as_deref(), Some("stop \\x1b[2J\\tnow"));
        // A long line is cut.
        let mut seen = OutputSeen::default();
        patterns.check(Line::Whole(long.trim_end().as_bytes()), &mut seen);
        let quoted = seen.stop_line.unwrap();
        assert_eq!(quoted.chars().count(), QUOTED);
        assert!(quoted.ends_with("x…"), "{quoted}");
        // No match, no copy; `$` never matches the start of a long line
        // (as for --retry-if-output); but the attempt printed something.
        let mut seen = OutputSeen::default();
        patterns.check(Line::Whole(b"fine"), &mut seen);
        patterns.check(Line::Start(b"slow", 3), &mut seen);
        let printed = OutputSeen {
            printed: true,
            ..OutputSeen::default()
        };
        assert_eq!(seen, printed);
        // The start of a long line is matched as --retry-if-output's is.
        let unanchored = Patterns::new(&Matchers {
            throttle_if: Some(regex("^slow")),
            ..Matchers::default()
        });
        let mut seen = OutputSeen::default();
        unanchored.check(Line::Start(b"slow down", 4), &mut seen);
        assert!(seen.throttle);
    }

    fn matcher(pattern: &str) -> Patterns {
        let regex = regex::bytes::RegexBuilder::new(pattern)
            .unicode(false)
            .build()
            .unwrap();
        Patterns::new(&Matchers {
            retry_if: Some(regex),
            ..Matchers::default()
        })
    }

    /// Whether `pattern` matches a line of the stream `chunks`, with lines
    /// matched whole up to `limit` bytes.
    fn matches_within(limit: usize, pattern: &str, chunks: &[&[u8]]) -> bool {
        let patterns = matcher(pattern);
        let mut seen = OutputSeen::default();
        let mut lines = Lines::new(limit);
        let mut check = |line: Line<'_>| patterns.check(line, &mut seen);
        for chunk in chunks {
            lines.feed(chunk, &mut check);
        }
        lines.finish(&mut check);
        seen.retry_if
    }

    fn matches(pattern: &str, chunks: &[&[u8]]) -> bool {
        matches_within(8, pattern, chunks)
    }

    #[test]
    fn matches_span_reads_and_anchor_at_line_ends() {
        let matches = |pattern, chunks| matches_within(MAX_LINE, pattern, chunks);
        assert!(matches("rate limit", &[b"ok\nrate li", b"mit exceeded\n"]));
        assert!(matches("^rate$", &[b"x\r\nrate\r\n"]));
        assert!(!matches("rate limit", &[b"rate\nlimit\n"]));
        assert!(matches("(?i)QUOTA", &[b"x\nquota"]));
    }

    #[test]
    fn in_a_longer_line_a_match_must_end_within_the_limit() {
        // Within the first 8 bytes, even split across reads, found.
        assert!(matches("45678", &[b"1234", b"5678", b"9abc\n"]));
        assert!(matches("^12345678", &[b"123456789abc\n"]));
        // Ending past them: not matched, and nothing after them is.
        assert!(!matches("56789", &[b"123456789abc\n"]));
        assert!(!matches("abc", &[b"123456789abc\n"]));
        // No false anchor where the line was cut, however the reads fall.
        assert!(!matches("^1+$", &[b"111111111111x\n"]));
        assert!(!matches("^1+$", &[b"1111", b"1111", b"1111", b"x"]));
        assert!(!matches(r"8\b", &[b"123456789\n"]));
        assert!(matches(r"7\b", &[b"1234567 89\n"]));
        // The line after a long one is matched as usual.
        assert!(matches("^ok$", &[b"123456789abc\nok\n"]));
    }

    /// The hint the last matching line of `chunks` carried.
    fn hint(pattern: &str, chunks: &[&[u8]]) -> Option<hint::Hint> {
        let regex = regex::bytes::RegexBuilder::new(pattern)
            .unicode(false)
            .build()
            .unwrap();
        let patterns = Patterns::new(&Matchers {
            delay_from: Some(regex),
            ..Matchers::default()
        });
        let mut seen = OutputSeen::default();
        let mut lines = Lines::new(64);
        let mut check = |line: Line<'_>| patterns.check(line, &mut seen);
        for chunk in chunks {
            lines.feed(chunk, &mut check);
        }
        lines.finish(&mut check);
        assert!(!seen.retry_if && !seen.stop_if);
        seen.hint
    }

    #[test]
    fn hints_are_captured_from_whole_lines_the_last_one_winning() {
        use hint::Hint::{Delay, Unparseable};
        use std::time::Duration;
        let header = r"(?i)^retry-after:\s*(.+)$";
        let secs = |s| Some(Delay(Duration::from_secs(s)));
        // Across reads, with a CRLF header as curl -D prints it.
        assert_eq!(
            hint(header, &[b"HTTP/1.1 429\r\nRetry-Af", b"ter: 120\r\n\r\n"]),
            secs(120)
        );
        assert_eq!(
            hint(header, &[b"retry-after: 1\nRETRY-AFTER: 2\n"]),
            secs(2)
        );
        assert_eq!(hint(header, &[b"no header\n"]), None);
        assert_eq!(
            hint(header, &[b"Retry-After: soon"]),
            Some(Unparseable("soon".into()))
        );
        // A line over the limit carries no hint: its capture could be cut.
        let long = format!("Retry-After: 1{}\n", " ".repeat(100));
        assert_eq!(hint(header, &[long.as_bytes()]), None);
    }
}
