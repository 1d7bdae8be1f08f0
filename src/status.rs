//! One attempt's result as retry reports it: a single exit code (0..=255,
//! or 128+N for death by signal N, as shells do) and how it came about.

use std::time::Duration;

/// The status `timeout(1)` uses for an attempt stopped at its limit.
pub const TIMED_OUT: i32 = 124;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    Exited,
    /// Killed by this signal number.
    Signaled(i32),
    /// Stopped by retry at `--timeout` or `--max-time`, after this long.
    TimedOut(Duration),
    /// Exited with this code, but its output matched `--retry-if-output`.
    OutputMatched(i32),
    /// Exited 0, which `--success-on` does not list: counted as 1, so a run
    /// that gives up never exits 0.
    ZeroNotSuccess,
    /// Could not be started for want of a resource (this errno: the
    /// process limit, file descriptors, memory): retry's own failure, 125.
    NotStarted(i32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    pub code: i32,
    pub cause: Cause,
}

impl Status {
    pub fn exited(code: i32) -> Self {
        Self {
            code,
            cause: Cause::Exited,
        }
    }

    pub fn signaled(signal: i32) -> Self {
        Self {
            code: 128 + signal,
            cause: Cause::Signaled(signal),
        }
    }

    /// A failed attempt's status as a run reports it: never 0, since a
    /// script reads 0 as success (`retry ... && deploy`).
    pub fn as_failure(self) -> Self {
        match self.cause {
            Cause::Exited if self.code == 0 => Self {
                code: 1,
                cause: Cause::ZeroNotSuccess,
            },
            _ => self,
        }
    }

    /// An attempt that could not be started for want of a resource (a
    /// passing shortage, retried like any failure): 125, retry's own failure.
    pub fn not_started(errno: i32) -> Self {
        Self {
            code: 125,
            cause: Cause::NotStarted(errno),
        }
    }

    pub fn timed_out(after: Duration) -> Self {
        Self {
            code: TIMED_OUT,
            cause: Cause::TimedOut(after),
        }
    }

    /// An attempt whose output matched `--retry-if-output`: it failed, so a
    /// success code (or 0) counts as 1 (a script must not read success from
    /// a run that gave up on it); a failing code stays as it is.
    pub fn output_matched(self, success: bool) -> Self {
        Self {
            code: if success || self.code == 0 {
                1
            } else {
                self.code
            },
            cause: Cause::OutputMatched(self.code),
        }
    }

    /// "exit code 22", "signal 9 (SIGKILL), exit code 137", "timeout after
    /// 2s (exit code 124)": written where it goes, without a String of its
    /// own (a log line per attempt allocates nothing, issue 26).
    pub fn describe(&self) -> Description {
        Description(*self)
    }
}

/// A status in words (`Status::describe`).
pub struct Description(Status);

impl std::fmt::Display for Description {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let code = Code(self.0.code);
        match self.0.cause {
            Cause::Exited => write!(f, "exit code {code}"),
            Cause::Signaled(signal) => write!(
                f,
                "signal {signal} ({}), exit code {code}",
                signal_name(signal)
            ),
            Cause::OutputMatched(exited) if exited == self.0.code => {
                let exited = Code(exited);
                write!(
                    f,
                    "exit code {exited} and output matching --retry-if-output"
                )
            }
            Cause::OutputMatched(exited) => write!(
                f,
                "exit code {} and output matching --retry-if-output (counted as exit code {code})",
                Code(exited)
            ),
            Cause::ZeroNotSuccess => {
                f.write_str("exit code 0, not listed in --success-on (counted as exit code 1)")
            }
            Cause::TimedOut(after) => write!(
                f,
                "timeout after {} (exit code {code})",
                humantime::format_duration(after)
            ),
            Cause::NotStarted(errno) => {
                write!(f, "a start error: {} (exit code {code})", error_text(errno))
            }
        }
    }
}

/// An exit code as its platform writes it: a number, except a Windows
/// NTSTATUS (negative as an i32: 0xC000013A after Ctrl-C, 0xC0000005 after
/// an access violation), which Windows users know in hex.
pub struct Code(pub i32);

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            code if code < 0 => write!(f, "{:#010X}", code.cast_unsigned()),
            code => write!(f, "{code}"),
        }
    }
}

/// "Resource temporarily unavailable" for EAGAIN: the system's words,
/// without Rust's "(os error 11)".
pub fn error_text(errno: i32) -> String {
    crate::os_error::describe(&std::io::Error::from_raw_os_error(errno))
}

/// `SIGTERM` for 15, `SIGRTMIN+6` for a real-time signal; the number
/// itself for a signal the platform does not name. Written where it goes,
/// without a String of its own.
pub fn signal_name(signal: i32) -> impl std::fmt::Display {
    std::fmt::from_fn(move |f| match crate::platform::signal_name(signal) {
        Some(name) => f.write_str(name),
        None => match crate::platform::realtime_offset(signal) {
            Some(offset) => write!(f, "SIGRTMIN+{offset}"),
            None => write!(f, "signal {signal}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_status_codes_are_written_in_hex() {
        assert_eq!(
            Status::exited(0xC000_013A_u32.cast_signed())
                .describe()
                .to_string(),
            "exit code 0xC000013A"
        );
        assert_eq!(Status::exited(22).describe().to_string(), "exit code 22");
    }

    #[test]
    fn signal_death_is_128_plus_n() {
        let status = Status::signaled(9);
        assert_eq!(
            status,
            Status {
                code: 137,
                cause: Cause::Signaled(9)
            }
        );
        assert_eq!(
            status.describe().to_string(),
            "signal 9 (SIGKILL), exit code 137"
        );
    }

    #[test]
    fn a_failure_never_reports_0() {
        let zero = Status::exited(0).as_failure();
        assert_eq!(zero.code, 1);
        assert!(
            zero.describe()
                .to_string()
                .contains("not listed in --success-on"),
            "{}",
            zero.describe()
        );
        assert_eq!(Status::exited(3).as_failure(), Status::exited(3));
        assert_eq!(Status::signaled(9).as_failure().code, 137);
    }

    #[test]
    #[cfg(unix)] // Unix paths, programs or errno wording
    fn an_attempt_not_started_is_125_with_the_reason() {
        let status = Status::not_started(libc::EAGAIN);
        assert_eq!(status.code, 125);
        assert_eq!(
            status.describe().to_string(),
            "a start error: Resource temporarily unavailable (exit code 125)"
        );
    }

    #[test]
    fn timeouts_are_124() {
        let status = Status::timed_out(Duration::from_secs(2));
        assert_eq!(status.code, 124);
        assert_eq!(
            status.describe().to_string(),
            "timeout after 2s (exit code 124)"
        );
    }
}
