//! `--delay-from-output`: a server's own idea of when to come back (HTTP
//! `Retry-After`), captured from an attempt's output, as a delay; and the
//! rule that turns it and the strategy's draw into the sleep.
//!
//! The rule: a failed attempt's hint is a floor under the sleep, never a
//! reason to come back sooner. The sleep is the longer of the hint and
//! the draw, past `--cap` too: a rate-limited API that asks for 30 s gets
//! 30 s, as `curl --retry` gives it. It is never shortened (that would
//! knock again before the server asked); what bounds it is the run's time:
//! `--max-time` when given (a sleep that would end past it gives up), else
//! `CEILING` (or `--cap`, if longer), so that no server can park a cron
//! job for hours. Past that the run gives up, saying which limit it hit.
//! (AWS's SDKs instead clamp a hint to 5 s above their own delay: their
//! calls sit inside a program that has its own deadline; retry's sit in
//! a script, where waiting as asked is what keeps the job from failing.)
//! Only the attempt that just failed counts: an older hint is stale.

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

/// The longest a server may ask retry to wait when `--max-time` is not
/// given (or `--cap`, if that is longer).
pub const CEILING: Duration = Duration::from_secs(5 * 60);

/// The longest hint a run waits for: none of its own with `--max-time`,
/// which bounds every sleep; else `CEILING`, or `cap` if longer.
pub fn ceiling(cap: Duration, max_time: bool) -> Option<Duration> {
    (!max_time).then(|| cap.max(CEILING))
}

pub use crate::events::Hinted;

/// The sleep before the next attempt, or `Err(hint)` when the server asked
/// for longer than `ceiling` (see `ceiling`).
pub fn choose(
    drawn: Sleep,
    hint: Option<Duration>,
    ceiling: Option<Duration>,
) -> Result<(Sleep, Option<Hinted>), Duration> {
    let Some(asked) = hint else {
        return Ok((drawn, None));
    };
    if ceiling.is_some_and(|ceiling| asked > ceiling) {
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
                ceiling(S * 20, false)
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
    fn the_sleep_is_the_longer_of_hint_and_draw_within_the_ceiling() {
        let cap = S * 20;
        let limit = ceiling(cap, false);
        assert_eq!(limit, Some(CEILING));
        assert_eq!(choose(drawn(700), None, limit), Ok((drawn(700), None)));
        let hinted = |asked, d| Hinted {
            asked: MS * asked,
            drawn: MS * d,
        };
        assert_eq!(
            choose(drawn(700), Some(S * 3), limit),
            Ok((drawn(3000), Some(hinted(3000, 700))))
        );
        // A shorter hint does not shorten the draw.
        assert_eq!(
            choose(drawn(700), Some(MS * 100), limit),
            Ok((drawn(700), Some(hinted(100, 700))))
        );
        // Past the cap, as a rate-limited API asks: waited for, not cut.
        assert_eq!(
            choose(drawn(700), Some(S * 30), limit).map(|(s, _)| s.duration),
            Ok(S * 30)
        );
        // Up to the ceiling; beyond it, never shortened but refused.
        assert_eq!(
            choose(drawn(700), Some(CEILING), limit).map(|(s, _)| s.duration),
            Ok(CEILING)
        );
        assert_eq!(
            choose(drawn(700), Some(CEILING + MS), limit),
            Err(CEILING + MS)
        );
        // A cap above the ceiling raises it; --max-time replaces it.
        assert_eq!(ceiling(S * 600, false), Some(S * 600));
        assert_eq!(ceiling(cap, true), None);
        assert!(choose(drawn(700), Some(S * 3600), None).is_ok());
    }
}
