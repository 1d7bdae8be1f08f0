//! `--delay-from-output`: a server's own idea of when to come back (HTTP
//! `Retry-After`), captured from an attempt's output, as a delay; and the
//! rule that turns it and the strategy's draw into the sleep.
//!
//! The rule: a failed attempt's hint is a floor under the sleep, never a
//! reason to come back sooner. The sleep is the longer of the hint and
//! the draw; a hint longer than `--cap` is not shortened to it (that would
//! knock again before the server asked): the run gives up instead, as it
//! does when the sleep would end past `--max-time`. Only the attempt that
//! just failed counts: an older hint is stale.

use std::time::{Duration, SystemTime};

use crate::strategy::Sleep;

/// What a captured hint says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hint {
    /// Wait this long from when it was read.
    Delay(Duration),
    /// Text that is none of the forms below, kept (shortened) to log once.
    Unparseable(String),
}

/// The longest piece of an unparseable capture repeated in the log.
const SHOWN: usize = 80;

/// Reads a captured hint: seconds (`120`, `1.5`, as `Retry-After` has them),
/// a duration (`250ms`, `2m`), or an HTTP-date (`Wed, 21 Oct 2026 07:28:00
/// GMT`), which is a delay from `now` (none if it has passed).
pub fn parse(text: &str, now: SystemTime) -> Hint {
    let text = text.trim();
    let seconds = text.bytes().any(|b| b.is_ascii_digit())
        && text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && text.bytes().filter(|&b| b == b'.').count() <= 1;
    let delay = if seconds {
        // Past what a Duration holds (2^64 s and more) is still a number
        // of seconds: longer than any limit, so given up on like one.
        text.parse::<f64>()
            .ok()
            .map(|s| Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX))
    } else if let Ok(date) = httpdate::parse_http_date(text) {
        Some(date.duration_since(now).unwrap_or_default())
    } else {
        crate::duration::parse(text).ok()
    };
    delay.map_or_else(
        || Hint::Unparseable(text.chars().take(SHOWN).collect()),
        Hint::Delay,
    )
}

/// A sleep the server's hint had a say in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hinted {
    /// What the server asked for.
    pub asked: Duration,
    /// What the strategy drew (the sleep is the longer of the two).
    pub drawn: Duration,
}

/// The sleep before the next attempt, or `Err(hint)` when the server asked
/// for longer than `cap` allows.
pub fn choose(
    drawn: Sleep,
    hint: Option<Duration>,
    cap: Duration,
) -> Result<(Sleep, Option<Hinted>), Duration> {
    let Some(asked) = hint else {
        return Ok((drawn, None));
    };
    if asked > cap {
        return Err(asked);
    }
    let sleep = Sleep {
        duration: drawn.duration.max(asked),
        ceiling: drawn.ceiling,
    };
    let hinted = Hinted {
        asked,
        drawn: drawn.duration,
    };
    Ok((sleep, Some(hinted)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);
    const MS: Duration = Duration::from_millis(1);

    /// 2026-10-21 07:28:00 UTC.
    fn oct_21() -> SystemTime {
        SystemTime::UNIX_EPOCH + S * 1_792_567_680
    }

    #[test]
    fn seconds_and_durations() {
        let now = oct_21();
        assert_eq!(parse("120", now), Hint::Delay(S * 120));
        assert_eq!(parse(" 1.5 ", now), Hint::Delay(MS * 1500));
        assert_eq!(parse("0", now), Hint::Delay(Duration::ZERO));
        assert_eq!(parse("250ms", now), Hint::Delay(MS * 250));
        assert_eq!(parse("2m 30s", now), Hint::Delay(S * 150));
        // Too long for a Duration: the longest, which no limit allows.
        for huge in ["18446744073709551616", &"9".repeat(400)] {
            assert_eq!(parse(huge, now), Hint::Delay(Duration::MAX), "{huge}");
        }
        assert!(
            choose(
                Sleep {
                    duration: S,
                    ceiling: S
                },
                Some(Duration::MAX),
                S * 20
            )
            .is_err()
        );
    }

    #[test]
    fn http_dates_are_a_delay_from_now_in_all_three_forms() {
        let now = oct_21();
        for date in [
            "Wed, 21 Oct 2026 07:30:00 GMT",
            "Wednesday, 21-Oct-26 07:30:00 GMT",
            "Wed Oct 21 07:30:00 2026",
        ] {
            assert_eq!(parse(date, now), Hint::Delay(S * 120), "{date}");
        }
        // A date already past: no wait at all, not an error.
        assert_eq!(
            parse("Wed, 21 Oct 2026 07:00:00 GMT", now),
            Hint::Delay(Duration::ZERO)
        );
        // Whatever the clock says.
        let later = now + S * 90;
        assert_eq!(
            parse("Wed, 21 Oct 2026 07:30:00 GMT", later),
            Hint::Delay(S * 30)
        );
    }

    #[test]
    fn anything_else_is_kept_to_be_logged() {
        let now = oct_21();
        for bad in [
            "soon",
            "-5",
            "1.2.3",
            "",
            "Wed, 32 Oct 2026 07:30:00 GMT",
            "1e3",
            "inf",
        ] {
            assert_eq!(parse(bad, now), Hint::Unparseable(bad.into()), "{bad:?}");
        }
        let long = "x".repeat(500);
        assert_eq!(parse(&long, now), Hint::Unparseable("x".repeat(SHOWN)));
    }

    fn drawn(ms: u32) -> Sleep {
        Sleep {
            duration: MS * ms,
            ceiling: MS * 8000,
        }
    }

    #[test]
    fn the_sleep_is_the_longer_of_hint_and_draw_within_the_cap() {
        let cap = S * 20;
        assert_eq!(choose(drawn(700), None, cap), Ok((drawn(700), None)));
        let hinted = |asked, d| Hinted {
            asked: MS * asked,
            drawn: MS * d,
        };
        assert_eq!(
            choose(drawn(700), Some(S * 3), cap),
            Ok((drawn(3000), Some(hinted(3000, 700))))
        );
        // A shorter hint does not shorten the draw.
        assert_eq!(
            choose(drawn(700), Some(MS * 100), cap),
            Ok((drawn(700), Some(hinted(100, 700))))
        );
        // Exactly the cap is allowed; beyond it is not shortened but refused.
        assert_eq!(
            choose(drawn(700), Some(cap), cap).map(|(s, _)| s.duration),
            Ok(cap)
        );
        assert_eq!(choose(drawn(700), Some(S * 21), cap), Err(S * 21));
    }
}
