//! The parsers of values that are more than a number or a duration:
//! attempts, regexes, switches, rates, factors, preset names and
//! `--breaker-exit-code`. Each error is one line, which clap puts after
//! the flag and the value.

use regex::bytes::{Regex, RegexBuilder};

use crate::policy::Attempts;

pub(crate) fn parse_attempts(text: &str) -> Result<Attempts, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("unlimited") {
        return Ok(Attempts::Unlimited);
    }
    match text.parse::<u32>() {
        Ok(0) => Err("0 attempts would never run the command; for no limit use `unlimited`".into()),
        Ok(n) => Ok(Attempts::Limit(n)),
        Err(_) => Err("expected a positive whole number or `unlimited`".into()),
    }
}

/// `--retry-on`: a code list, or `none`: no exit code is retryable by
/// itself, so only an output condition (`--retry-if-output`) retries. The
/// plain form of "retry only when the output says so", which otherwise
/// needs a code no command exits with.
pub(crate) fn parse_retry_on(text: &str) -> Result<crate::codes::CodeSet, String> {
    if text.trim().eq_ignore_ascii_case("none") {
        return Ok(crate::codes::CodeSet::default());
    }
    text.parse()
}

/// A regex for the output conditions, matched against raw bytes with ASCII
/// classes and case folding (a non-ASCII literal still matches its UTF-8).
/// The parser's multi-line report shrinks to its last line, so the usage
/// error stays one line.
pub(crate) fn parse_regex(text: &str) -> Result<Regex, String> {
    // Empty matches every line: one empty quote would rerun every success.
    if text.is_empty() {
        return Err("an empty regex would match every line; leave the option out".into());
    }
    RegexBuilder::new(text)
        .unicode(false)
        .build()
        .map_err(|error| {
            let report = error.to_string();
            let last = report.lines().last().unwrap_or_default().trim();
            last.strip_prefix("error: ").unwrap_or(last).to_owned()
        })
}

/// A switch from the environment (`RETRY_QUIET=1`): what people write for
/// yes and no, in any case; empty is no, as if unset.
pub(crate) fn parse_switch(text: &str) -> Result<bool, String> {
    const YES: [&str; 5] = ["1", "true", "yes", "on", "y"];
    const NO: [&str; 6] = ["", "0", "false", "no", "off", "n"];
    let text = text.trim();
    if YES.iter().any(|word| text.eq_ignore_ascii_case(word)) {
        Ok(true)
    } else if NO.iter().any(|word| text.eq_ignore_ascii_case(word)) {
        Ok(false)
    } else {
        Err("expected 1 or 0, true or false, yes or no, on or off".into())
    }
}

/// `--delay-from-output`: an output regex whose one group is the hint.
pub(crate) fn parse_hint_regex(text: &str) -> Result<Regex, String> {
    let regex = parse_regex(text)?;
    match regex.captures_len() - 1 {
        1 => Ok(regex),
        0 => Err("the regex needs one capture group around the delay, as in `(?i)^retry-after:\\s*(.+)$`".into()),
        n => Err(format!(
            "the regex has {n} capture groups; it needs exactly one around the delay (group others with `(?:...)`)"
        )),
    }
}

/// `--preset`: a name the data or the user's file knows, or `none` (no
/// preset, and no lookup by the program). Its possible
/// values (for help and completions, which are written once for every
/// machine) are the built-in names, read from the data only when asked
/// for, so a run without `--preset` never reads it.
#[derive(Clone, Debug)]
pub(crate) struct PresetName;

impl clap::builder::TypedValueParser for PresetName {
    type Value = String;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let known = |name: &str| {
            if name == crate::preset::NONE {
                return Ok(name.to_owned());
            }
            let catalog = crate::preset::Catalog::load();
            catalog
                .find(&catalog.presets(), name)
                .map(|p| p.name.to_owned())
        };
        clap::builder::TypedValueParser::parse_ref(&known, command, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let names = crate::preset::builtin().into_iter().map(|p| p.name);
        let names = names.chain([crate::preset::NONE]);
        Some(Box::new(names.map(clap::builder::PossibleValue::new)))
    }
}

/// A rate the stores keep as given: 0, or within what they can hold.
pub(crate) fn parse_refill(text: &str) -> Result<f64, String> {
    use crate::state::budget::bucket::{MAX_REFILL, MIN_REFILL};
    match text.trim().parse::<f64>() {
        Ok(rate) if rate == 0.0 || (MIN_REFILL..=MAX_REFILL).contains(&rate) => Ok(rate.abs()),
        _ => Err(format!(
            "expected tokens per second: 0 (only successes refill), or from {MIN_REFILL:.6} \
             to {MAX_REFILL} (what a budget's store holds), such as `5` or `0.5`"
        )),
    }
}

pub(crate) fn parse_factor(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if f.is_finite() && f >= 1.0 => Ok(f),
        Ok(_) => Err(
            "the factor must be a finite number of at least 1 (1 keeps the delay constant)".into(),
        ),
        Err(_) => Err("expected a number such as `2` or `1.5`".into()),
    }
}

/// `--throttle-k`: a finite number above 0 (0 or less would reject
/// requests the service accepts; NaN or infinity means nothing).
pub(crate) fn parse_throttle_k(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(k) if k.is_finite() && k > 0.0 => Ok(k),
        Ok(_) => Err("K must be a finite number above 0, such as `2` or `1.5` \
                      (larger rejects less)"
            .into()),
        Err(_) => Err("expected a number above 0, such as `2` or `1.5`".into()),
    }
}

/// `--breaker-exit-code`: 1 to 255, but none of the statuses retry gives a
/// meaning of its own, which a skipped run would pass for.
pub(crate) fn parse_breaker_exit_code(text: &str) -> Result<u8, String> {
    let meaning = |code: u8| match code {
        2 => Some("bad usage"),
        124 => Some("a timed-out attempt"),
        125 => Some("its own failure"),
        126 => Some("a command that cannot run"),
        127 => Some("a command not found"),
        _ => None,
    };
    match text.trim().parse::<u8>() {
        Ok(0) | Err(_) => Err("expected an exit status from 1 to 255".into()),
        Ok(code) => match meaning(code) {
            None => Ok(code),
            Some(what) => Err(format!(
                "{code} is retry's own status for {what}, which a skipped run would pass for; \
                 choose one of 1 to 255 but 2 and 124 to 127"
            )),
        },
    }
}

/// An alternate's line, checked: split into words as `sh` would split it
/// before expanding anything (`'…'`, `"…"` and `\\` quote; `$VAR`, `~` and
/// `*` stay as written), refused when a quote is left open or no word is
/// left. Kept as typed (a `String`, as clap's other values: a type of its
/// own would cost the binary clap's code for it); `alternate_words`
/// splits it again.
pub(crate) fn parse_alternate(text: &str) -> Result<String, String> {
    let words = alternate_words(text)
        .ok_or("a quote is left open (an alternate is split into words as sh splits a command)")?;
    if words.is_empty() {
        return Err("an empty alternate would run nothing; leave the option out".into());
    }
    Ok(text.to_owned())
}

/// An alternate's words, as `sh` splits a simple command; `None` when a
/// quote is left open.
pub(crate) fn alternate_words(line: &str) -> Option<Vec<String>> {
    shlex::split(line)
}

#[cfg(test)]
mod tests {

    #[test]
    fn retry_on_takes_none_for_no_code() {
        assert!(parse_retry_on("none").unwrap().is_empty());
        assert!(parse_retry_on(" NONE ").unwrap().is_empty());
        assert!(parse_retry_on("1,3").unwrap().contains(3));
        assert!(parse_retry_on("nothing").is_err());
    }

    use super::*;

    #[test]
    fn switches_take_yes_and_no_in_their_usual_spellings() {
        for yes in ["1", "true", "Yes", "ON", "y", " on "] {
            assert_eq!(parse_switch(yes), Ok(true), "{yes}");
        }
        for no in ["0", "FALSE", "no", "off", "N", ""] {
            assert_eq!(parse_switch(no), Ok(false), "{no}");
        }
        assert!(parse_switch("2").is_err() && parse_switch("enabled").is_err());
    }

    #[test]
    fn an_alternate_is_split_as_sh_splits_a_simple_command() {
        // (line, words)
        let cases: [(&str, &[&str]); 9] = [
            (
                "curl -fsS https://b/x.tgz -o x.tgz",
                &["curl", "-fsS", "https://b/x.tgz", "-o", "x.tgz"],
            ),
            ("  wget   -q  URL ", &["wget", "-q", "URL"]),
            (
                "printf '%s\\n' 'two words'",
                &["printf", "%s\\n", "two words"],
            ),
            (r#"echo "a \"b\" c" d"#, &["echo", r#"a "b" c"#, "d"]),
            (r"echo a\ b", &["echo", "a b"]),
            ("echo $HOME ~ *", &["echo", "$HOME", "~", "*"]),
            ("echo 'it''s'", &["echo", "its"]),
            ("curl https://host/#frag", &["curl", "https://host/#frag"]),
            ("echo '' x", &["echo", "", "x"]),
        ];
        for (line, words) in cases {
            let parsed = parse_alternate(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(parsed, line);
            assert_eq!(alternate_words(line).unwrap(), words, "{line}");
        }
        for open in ["curl 'https://b/x", "echo \"a", "echo a\\"] {
            let error = parse_alternate(open).unwrap_err();
            assert!(error.contains("a quote is left open"), "{open}: {error}");
        }
        for empty in ["", "   ", "\t\n", "# only a comment"] {
            let error = parse_alternate(empty).unwrap_err();
            assert!(error.contains("an empty alternate"), "{empty:?}: {error}");
        }
    }

    #[test]
    fn attempts_accept_counts_and_unlimited() {
        assert_eq!(parse_attempts("3"), Ok(Attempts::Limit(3)));
        assert_eq!(parse_attempts("Unlimited"), Ok(Attempts::Unlimited));
        assert!(parse_attempts("0").unwrap_err().contains("unlimited"));
        assert!(parse_attempts("-1").is_err() && parse_attempts("many").is_err());
    }

    #[test]
    fn attempts_limit_the_next_one() {
        assert!(Attempts::Limit(2).allows_after(1));
        assert!(!Attempts::Limit(2).allows_after(2));
        assert!(Attempts::Unlimited.allows_after(u32::MAX));
    }

    #[test]
    fn regex_errors_are_one_line() {
        let regex = parse_regex(r"(?i)rate limit|\d{3} \w+|échec").unwrap();
        for line in ["RATE LIMIT", "429 Too", "échec"] {
            assert!(regex.is_match(line.as_bytes()), "{line}");
        }
        assert!(!regex.is_match(b"rate-limit"));
        assert_eq!(parse_regex("(unclosed").unwrap_err(), "unclosed group");
    }

    #[test]
    fn refills_are_what_the_stores_can_hold() {
        for (good, rate) in [("0", 0.0), ("-0", 0.0), ("0.000001", 1e-6), ("5", 5.0)] {
            assert_eq!(parse_refill(good), Ok(rate));
        }
        assert_eq!(parse_refill("4294967295"), Ok(4294967295.0));
        // Below a millionth the stores would keep 0; above, a bucket's size.
        for bad in [
            "0.0000001",
            "1e-9",
            "4294967296",
            "1e20",
            "inf",
            "NaN",
            "-1",
            "x",
        ] {
            let error = parse_refill(bad).unwrap_err();
            assert!(
                error.contains("from 0.000001 to 4294967295"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn a_throttle_k_is_a_finite_number_above_zero() {
        for (text, k) in [("2", 2.0), ("1.5", 1.5), (" 0.25 ", 0.25), ("1e3", 1000.0)] {
            assert_eq!(parse_throttle_k(text), Ok(k), "{text}");
        }
        for bad in ["0", "-1", "-0", "NaN", "inf", "-inf", "1e999"] {
            let said = parse_throttle_k(bad).unwrap_err();
            assert!(
                said.starts_with("K must be a finite number above 0"),
                "{bad}: {said}"
            );
        }
        for bad in ["two", "", "2x"] {
            let said = parse_throttle_k(bad).unwrap_err();
            assert!(
                said.starts_with("expected a number above 0"),
                "{bad}: {said}"
            );
        }
    }

    #[test]
    fn a_breaker_exit_code_is_none_of_retry_s_own_statuses() {
        for (text, code) in [
            ("1", 1),
            ("75", 75),
            ("99", 99),
            (" 123 ", 123),
            ("128", 128),
            ("255", 255),
        ] {
            assert_eq!(parse_breaker_exit_code(text), Ok(code), "{text}");
        }
        for code in ["2", "124", "125", "126", "127"] {
            let said = parse_breaker_exit_code(code).unwrap_err();
            assert!(
                said.starts_with(&format!("{code} is retry's own status for ")),
                "{said}"
            );
            assert!(!said.contains('\n'), "{said}");
        }
        for bad in ["0", "256", "-1", "", "x", "0x4b"] {
            let said = parse_breaker_exit_code(bad).unwrap_err();
            assert_eq!(said, "expected an exit status from 1 to 255", "{bad}");
        }
    }

    #[test]
    fn factor_must_be_finite_and_at_least_one() {
        assert_eq!(parse_factor("1"), Ok(1.0));
        assert_eq!(parse_factor("2.5"), Ok(2.5));
        for bad in ["0.5", "inf", "NaN", "-2", "x"] {
            assert!(parse_factor(bad).is_err(), "{bad} was accepted");
        }
    }
}
