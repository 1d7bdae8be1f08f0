//! Durations on the command line (`250ms`, `1s`, `2m 30s`) and in messages.
//!
//! A bare number is refused rather than guessed: `--base 100` could mean
//! seconds or milliseconds, and a wrong guess is off by a factor of 1000.

use std::time::Duration;

pub fn parse(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.parse::<f64>().is_ok() {
        return Err(format!(
            "a duration needs a unit: did you mean `{trimmed}ms` or `{trimmed}s`?"
        ));
    }
    humantime::parse_duration(trimmed)
        .map_err(|e| format!("expected a duration such as `250ms`, `1s` or `2m 30s` ({e})"))
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
