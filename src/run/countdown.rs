//! The live countdown on a terminal during a long sleep: one line on
//! stderr, redrawn each second and erased before the next attempt starts.
//! Never written to a file or pipe, so CI logs stay clean.

use std::io::{IsTerminal, Write};
use std::time::Duration;

/// Sleeps up to this long pass without a countdown.
pub const MIN_SLEEP: Duration = Duration::from_secs(1);

/// Only on a terminal, and not when NO_COLOR asks for plain output.
pub fn wanted(stderr_is_terminal: bool, no_color: bool) -> bool {
    stderr_is_terminal && !no_color
}

/// Whether this process's stderr should show one (a Windows console only
/// if it takes the escape that clears the line: `platform`).
pub fn enabled() -> bool {
    wanted(
        std::io::stderr().is_terminal() && crate::platform::stderr_takes_escapes(),
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
    )
}

/// `\rretry: next attempt in 3 s` and clear to the end of the line.
pub fn line(remaining: Duration) -> String {
    let secs = remaining.as_secs() + u64::from(remaining.subsec_nanos() > 0);
    format!("\rretry: next attempt in {secs} s\x1b[K")
}

/// How long until the shown number of seconds changes.
pub fn until_next_second(remaining: Duration) -> Duration {
    match remaining.subsec_nanos() {
        0 => Duration::from_secs(1).min(remaining),
        nanos => Duration::from_nanos(u64::from(nanos)),
    }
}

pub fn draw(remaining: Duration) {
    let _ = std::io::stderr().write_all(line(remaining).as_bytes());
}

pub fn erase() {
    let _ = std::io::stderr().write_all(b"\r\x1b[K");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_on_a_terminal_without_no_color() {
        assert!(wanted(true, false));
        assert!(!wanted(false, false));
        assert!(!wanted(true, true));
    }

    #[test]
    fn counts_whole_seconds_up() {
        assert_eq!(
            line(Duration::from_millis(2300)),
            "\rretry: next attempt in 3 s\x1b[K"
        );
        assert_eq!(
            line(Duration::from_secs(2)),
            "\rretry: next attempt in 2 s\x1b[K"
        );
    }

    #[test]
    fn redraws_when_the_second_changes() {
        assert_eq!(
            until_next_second(Duration::from_millis(2300)),
            Duration::from_millis(300)
        );
        assert_eq!(
            until_next_second(Duration::from_secs(2)),
            Duration::from_secs(1)
        );
    }
}
