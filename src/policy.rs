//! Judging one attempt's exit status against `--success-on`, `--fatal-on`
//! and `--retry-on`. The order of the checks is the rule: success first,
//! then fatal (which overrides retry), then retry; anything else stops.
//! `Attempts` is the other limit on retrying: how many runs in all.

use crate::codes::CodeSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Success,
    Retry,
    /// Listed in `--fatal-on`.
    Fatal,
    /// Neither success nor listed in `--retry-on`.
    NotRetryable,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    pub success: CodeSet,
    pub retry: CodeSet,
    pub fatal: CodeSet,
}

/// Failures that another attempt cannot mend, left out of the default
/// `--retry-on`: 126 and 127 (the command cannot run, as a shell reports it
/// with `--shell`) and 141 (128 + SIGPIPE: the command's reader went away).
pub const NEVER_RETRIED_BY_DEFAULT: [u8; 3] = [126, 127, 141];

/// The default `--retry-on` beside `success`: every code that is neither
/// a success nor one of `NEVER_RETRIED_BY_DEFAULT`.
pub fn default_retry(success: &CodeSet) -> CodeSet {
    let hopeless = CodeSet::of(&NEVER_RETRIED_BY_DEFAULT);
    success.union(&hopeless).complement()
}

impl Policy {
    /// `retry` defaults to every code that is neither a success nor one of
    /// `NEVER_RETRIED_BY_DEFAULT`.
    pub fn new(success: CodeSet, retry: Option<CodeSet>, fatal: Option<CodeSet>) -> Self {
        let retry = retry.unwrap_or_else(|| default_retry(&success));
        Self {
            success,
            retry,
            fatal: fatal.unwrap_or_default(),
        }
    }

    pub fn classify(&self, code: i32) -> Verdict {
        if self.success.contains(code) {
            Verdict::Success
        } else if self.fatal.contains(code) {
            Verdict::Fatal
        } else if self.retry.contains(code) {
            Verdict::Retry
        } else {
            Verdict::NotRetryable
        }
    }
}

/// `--max-attempts`: a positive count or no limit at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attempts {
    Limit(u32),
    Unlimited,
}

impl Attempts {
    /// Whether attempt number `attempt` (1-based) may be followed by another.
    pub fn allows_after(self, attempt: u32) -> bool {
        match self {
            Attempts::Limit(max) => attempt < max,
            Attempts::Unlimited => true,
        }
    }
}

impl std::fmt::Display for Attempts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attempts::Limit(n) => write!(f, "{n}"),
            Attempts::Unlimited => f.write_str("unlimited"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(text: &str) -> CodeSet {
        text.parse().unwrap()
    }

    #[test]
    fn defaults_retry_every_failure() {
        let p = Policy::new(codes("0"), None, None);
        assert_eq!(p.classify(0), Verdict::Success);
        assert_eq!(p.classify(1), Verdict::Retry);
        assert_eq!(p.classify(124), Verdict::Retry);
        assert_eq!(p.classify(255), Verdict::Retry);
    }

    #[test]
    fn windows_codes_above_255_are_retried_by_default() {
        // A crash, `exit /b -1`, Ctrl-C, .NET's unhandled exception, 256:
        // failures like any other on Windows; a Unix code never exceeds 255.
        let p = Policy::new(codes("0"), None, None);
        let wide = crate::platform::EXIT_CODE_MAX > 255;
        let want = if wide {
            Verdict::Retry
        } else {
            Verdict::NotRetryable
        };
        for code in [0xC000_0005_u32, u32::MAX, 0xC000_013A, 0xE043_4352, 256] {
            assert_eq!(p.classify(code.cast_signed()), want, "{code:#X}");
        }
        if wide {
            let listed = Policy::new(codes("0"), Some(codes("0xC0000005")), Some(codes("-1")));
            assert_eq!(
                listed.classify(0xC000_0005_u32.cast_signed()),
                Verdict::Retry
            );
            assert_eq!(listed.classify(-1), Verdict::Fatal);
            assert_eq!(listed.classify(1), Verdict::NotRetryable);
        }
    }

    #[test]
    fn cannot_run_and_sigpipe_are_not_retried_unless_listed() {
        let p = Policy::new(codes("0"), None, None);
        for hopeless in [126, 127, 141] {
            assert_eq!(p.classify(hopeless), Verdict::NotRetryable, "{hopeless}");
        }
        let listed = Policy::new(codes("0"), Some(codes("1-255")), None);
        assert_eq!(listed.classify(141), Verdict::Retry);
    }

    #[test]
    fn fatal_overrides_retry() {
        let p = Policy::new(codes("0"), Some(codes("1-10")), Some(codes("5")));
        assert_eq!(p.classify(4), Verdict::Retry);
        assert_eq!(p.classify(5), Verdict::Fatal);
        assert_eq!(p.classify(11), Verdict::NotRetryable);
    }

    #[test]
    fn extra_success_codes_are_not_retried_by_default() {
        let p = Policy::new(codes("0,3"), None, None);
        assert_eq!(p.classify(3), Verdict::Success);
        assert_eq!(p.classify(4), Verdict::Retry);
    }
}
