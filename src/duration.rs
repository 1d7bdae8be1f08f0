//! Durations on the command line (`250ms`, `1s`, `2m 30s`) and in messages.
//!
//! A bare number is refused rather than guessed: `--base 100` could mean
//! seconds or milliseconds, and a wrong guess is off by a factor of 1000.

use std::time::Duration;

pub fn parse(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    // An option taken as the value (`--spawn-time --span 1m`): the value
    // is missing, not negative.
    let short = trimmed.len() == 2 && trimmed.as_bytes()[1].is_ascii_alphabetic();
    let long = (trimmed.strip_prefix("--")).is_some_and(|name| {
        name.len() <= 40 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    });
    if long || (trimmed.starts_with('-') && short) {
        return Err(format!(
            "a value is missing: `{trimmed}` is an option, not a duration"
        ));
    }
    if trimmed.starts_with('-') {
        return Err("a duration cannot be negative".into());
    }
    if is_bare_number(trimmed) {
        // Suggest only what would itself be accepted (not `1e400ms`).
        let hints: Vec<String> = ["ms", "s"]
            .iter()
            .map(|unit| format!("{trimmed}{unit}"))
            .filter(|hint| humantime::parse_duration(hint).is_ok())
            .collect();
        return Err(match hints.as_slice() {
            [ms, s] => format!("a duration needs a unit: did you mean `{ms}` or `{s}`?"),
            [one] => format!("a duration needs a unit: did you mean `{one}`?"),
            _ => "a duration needs a unit, and this number is too large for one".into(),
        });
    }
    humantime::parse_duration(trimmed).map_err(|e| match e {
        humantime::DurationError::NumberOverflow => {
            "out of range: a duration is a whole number of \
            nanoseconds up to 18446744073709551615s (about 584 billion years)"
                .into()
        }
        other => format!("expected a duration such as `250ms`, `1s` or `2m 30s` ({other})"),
    })
}

/// Digits with at most one decimal point: what a unit would make a duration
/// of. Not `nan`, `inf` or `1e3`, which Rust's float parser also takes.
fn is_bare_number(text: &str) -> bool {
    text.bytes().any(|b| b.is_ascii_digit())
        && text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && text.bytes().filter(|&b| b == b'.').count() <= 1
}

/// Milliseconds, rounded to the nearest: the unit of every log line.
pub fn millis(d: Duration) -> u128 {
    millis_of_nanos(d.as_nanos())
}

/// The same for a count of nanoseconds beyond `Duration` (a plan's running
/// total: four billion sleeps of up to `Duration::MAX` fit in a u128).
pub fn millis_of_nanos(nanos: u128) -> u128 {
    nanos / 1_000_000 + u128::from(nanos % 1_000_000 >= 500_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_humantime_syntax() {
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("2m 30s"), Ok(Duration::from_secs(150)));
        assert_eq!(parse("0ms"), Ok(Duration::ZERO));
        assert_eq!(parse("100y").unwrap().as_secs() / 86_400 / 365, 100);
    }

    #[test]
    fn bare_number_gets_a_hint() {
        let err = parse("100").unwrap_err();
        assert!(err.contains("did you mean `100ms`"), "{err}");
        assert!(parse("1.5").unwrap_err().contains("`1.5s`"));
    }

    #[test]
    fn hints_only_suggest_durations_that_parse() {
        for text in [
            "nan", "NaN", "inf", "-inf", "infinity", "1e3", "+5", "1e400", "-1", "-1.5",
        ] {
            let err = parse(text).unwrap_err();
            assert!(!err.contains("did you mean"), "{text}: {err}");
            assert!(!err.contains(&format!("`{text}ms`")), "{text}: {err}");
        }
        // Every hint offered is itself a valid duration.
        for text in [
            "0",
            "7",
            "1.5",
            "0.25",
            "99999999999999999999",
            "18446744073709551615",
        ] {
            let err = parse(text).unwrap_err();
            for hint in err.split('`').skip(1).step_by(2) {
                assert!(
                    parse(hint).is_ok(),
                    "{text}: hint {hint} does not parse ({err})"
                );
            }
        }
    }

    #[test]
    fn negative_durations_are_named_as_such() {
        for text in ["-1", "-1s", " -250ms", "-0"] {
            let err = parse(text).unwrap_err();
            assert!(err.contains("cannot be negative"), "{text}: {err}");
        }
    }

    #[test]
    fn an_option_taken_as_the_value_is_named_as_such() {
        for text in ["--span", "-n", "--", "---"] {
            let err = parse(text).unwrap_err();
            assert!(err.contains("a value is missing"), "{text}: {err}");
            assert!(!err.contains("negative"), "{text}: {err}");
        }
        assert!(parse("-inf").unwrap_err().contains("negative"));
        // Only what looks like an option is named: the text is quoted
        // whole, and a message is one line.
        let odd = parse("--k\n0ms2hs--k\n0ms").unwrap_err();
        assert!(!odd.contains('\n') && odd.contains("negative"), "{odd}");
    }

    #[test]
    fn out_of_range_durations_say_the_range() {
        let err = parse("584942417356y").unwrap_err();
        assert!(err.contains("584 billion years"), "{err}");
        assert_eq!(parse("18446744073709551615s").unwrap().as_secs(), u64::MAX);
    }

    #[test]
    fn refuses_garbage() {
        for bad in ["", "fast", "10 parsecs", "-1s", "1s-"] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn millis_rounds_to_nearest() {
        assert_eq!(millis(Duration::from_micros(691_600)), 692);
        assert_eq!(millis(Duration::from_micros(499)), 0);
        assert_eq!(millis(Duration::from_secs(2)), 2000);
        assert_eq!(millis_of_nanos(u128::MAX), u128::MAX / 1_000_000);
    }

    proptest! {
        #[test]
        fn parsing_never_panics(text in ".{0,30}") {
            let _ = parse(&text);
        }
    }
}
