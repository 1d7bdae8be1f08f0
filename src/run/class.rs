//! The class of a failed attempt that is retried, as one pure rule beside
//! `decide.rs`'s: **throttled** when the server asked to slow down,
//! **transient** otherwise. (A permanent failure is no class: it ends the
//! run, as `decide` says.)
//!
//! The evidence of a throttle, in this order:
//! 1. a line the throttle rule matched: a preset's `throttle-if-output`
//!    (curl's `HTTP 429`, S3's `SlowDown`, docker's `toomanyrequests`…),
//!    or the user's `--throttle-if-output` for a program without one;
//! 2. a wait the server asked for, read by `--delay-from-output` (HTTP
//!    `Retry-After`: a 503 that carries one is a throttle, a bare 503 is
//!    not). An unreadable hint is no hint, and no evidence.
//!
//! A throttle never ends a run: it only classes a retry. A throttle line
//! also makes a failure retryable whose exit code alone would stop the run
//! as not retryable (a server that said "slow down" said it is up), as a
//! preset's `transient-if-output` does; never a fatal code, a success, or
//! a line `--stop-if-output` matched, which keep their verdicts.

use crate::events::{Class, Evidence};
use crate::run::hint::Hint;
use crate::run::pipes::OutputSeen;

/// The class of a failed attempt that is retried, given what its output
/// showed and the evidence a throttle line stands for in this run
/// (`line`: `None` when no throttle rule is set).
pub fn class(seen: &OutputSeen, line: Option<&Evidence>) -> Class {
    match line {
        Some(evidence) if seen.throttle => Class::Throttled(evidence.clone()),
        _ if matches!(seen.hint, Some(Hint::Delay(_))) => Class::Throttled(Evidence::Hint),
        _ => Class::Transient,
    }
}

/// Whether the output alone makes a failed attempt retryable whose code is
/// not: a throttle line (see the module's comment).
pub fn throttle_line(seen: &OutputSeen, line: Option<&Evidence>) -> bool {
    seen.throttle && line.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn seen(throttle: bool, hint: Option<Hint>) -> OutputSeen {
        OutputSeen {
            throttle,
            hint,
            ..OutputSeen::default()
        }
    }

    #[test]
    fn each_piece_of_evidence_as_a_row() {
        let label = Evidence::Line("HTTP 429".into());
        let rule = Some(&label);
        let wait = || Some(Hint::Delay(Duration::from_secs(30)));
        let unreadable = || Some(Hint::Unparseable("soon".into()));
        let throttled = |evidence: &Evidence| Class::Throttled(evidence.clone());
        let rows = [
            // Nothing: transient, as every retry was before.
            (seen(false, None), rule, Class::Transient),
            (seen(false, None), None, Class::Transient),
            // A throttle line, by the rule's evidence.
            (seen(true, None), rule, throttled(&label)),
            // With a hint too: the line names it better.
            (seen(true, wait()), rule, throttled(&label)),
            // A hint alone (a 503 with Retry-After).
            (seen(false, wait()), rule, throttled(&Evidence::Hint)),
            (seen(false, wait()), None, throttled(&Evidence::Hint)),
            // A hint of 0 s is still the server's say.
            (
                seen(false, Some(Hint::Delay(Duration::ZERO))),
                None,
                throttled(&Evidence::Hint),
            ),
            // An unreadable hint is none.
            (seen(false, unreadable()), None, Class::Transient),
            (seen(true, unreadable()), rule, throttled(&label)),
            // A line matched without a rule set cannot be (no evidence).
            (seen(true, None), None, Class::Transient),
        ];
        for (i, (seen, line, want)) in rows.into_iter().enumerate() {
            assert_eq!(class(&seen, line), want, "row {i}");
        }
    }

    #[test]
    fn only_a_throttle_line_makes_a_failure_retryable() {
        let label = Evidence::Line("HTTP 429".into());
        assert!(throttle_line(&seen(true, None), Some(&label)));
        assert!(!throttle_line(&seen(false, None), Some(&label)));
        // A hint classes a retry but makes none: Retry-After also comes
        // with redirects and 201s.
        let wait = Some(Hint::Delay(Duration::from_secs(1)));
        assert!(!throttle_line(&seen(false, wait), Some(&label)));
        assert!(!throttle_line(&seen(true, None), None));
    }
}
