//! The rules of the attempt loop as one pure function: given how an attempt
//! ended, succeed, give up (and why), or retry after which sleep. Nothing
//! here touches a clock, a process or the output: the loop in `run/mod.rs`
//! gathers the facts and carries the decision out, so each rule is a row of
//! the table tests below.
//!
//! The order is the rule: the output conditions first (a `--stop-if-output`
//! match ends the run, a `--retry-if-output` match makes even a success
//! retryable, but never a fatal code), then the exit code's verdict, then
//! the run's limits (`--max-time` reached, attempts left), then the class
//! of the retry (`class.rs`: throttled or transient), then the sleep drawn
//! on that class's base (the server's hint within its ceiling, a sleep
//! that would end past `--max-time`), and last the shared `--budget`,
//! which pays that class's cost only for a retry that nothing else stops.

use std::time::Duration;

use crate::events::{Class, Evidence, GiveUp, Label, RanOut};
use crate::policy::{Attempts, Policy, Verdict};
use crate::run::class;
use crate::run::hint::{self, Hint, Hinted};
use crate::run::pipes::OutputSeen;
use crate::status::Status;
use crate::strategy::Sleep;

/// What the decision depends on that does not change during a run.
#[derive(Clone, Debug)]
pub struct Rules {
    pub policy: Policy,
    pub limit: Attempts,
    /// `--cap`: the longest sleep drawn; a server's hint may ask for
    /// longer (`hint::ceiling`).
    pub cap: Duration,
    /// The preset's words for the rules that stop a run.
    pub labels: Labels,
    /// What a line the throttle rule matched stands for (the preset's
    /// label, or the user's `--throttle-if-output`); `None` without one.
    pub throttle: Option<Evidence>,
}

/// A preset's labels of `--retry-on`, `--fatal-on` and `--stop-if-output`,
/// where the preset set them (a flag given in their place has none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    pub retry_on: Label,
    pub fatal_on: Label,
    pub stop_if: Label,
}

/// Whether retry itself ended the attempt at a deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The command exited (or died) by itself.
    No,
    /// `--timeout` stopped it.
    ByTimeout,
    /// `--max-time` stopped it.
    ByMaxTime,
}

/// How one attempt ended, as the rules see it.
#[derive(Clone, Debug)]
pub struct Facts {
    /// The attempt's number, from 1.
    pub number: u32,
    /// Its status (124 when retry stopped it at a deadline).
    pub status: Status,
    pub seen: OutputSeen,
    pub stopped: Stopped,
    /// What is left of `--max-time` now, if it was given.
    pub time_left: Option<Duration>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// The run ends with this (successful) status.
    Succeed(Status),
    /// The run ends without success. Held-back output (`--stdout-once`)
    /// goes to stderr: a pipe downstream sees nothing of a run that failed.
    GiveUp(GiveUp),
    /// Another attempt follows after `sleep` (`hint`: the server had a say),
    /// drawn for the failure's `class`.
    Retry {
        status: Status,
        class: Class,
        sleep: Sleep,
        hint: Option<Hinted>,
    },
}

/// Decides what follows an attempt. `draw` computes the next sleep for a
/// failure of a class (true: throttled, on `--throttle-base`); it is called
/// only when a retry is possible, so a run that succeeds at once never
/// seeds a random generator. `pay` asks the `--budget` for a retry (true: a
/// throttled failure's) and is called only when nothing else stops it, so
/// no token pays for a retry that does not happen.
pub fn decide(
    rules: &Rules,
    facts: &Facts,
    draw: impl FnOnce(bool) -> Sleep,
    pay: impl FnOnce(bool) -> bool,
) -> Decision {
    let Facts {
        number,
        status,
        ref seen,
        stopped,
        time_left,
    } = *facts;
    let verdict = rules.policy.classify(status.code);
    // A failure of a program that retried a transient failure itself (a
    // preset's `transient-if-output`) is that failure, whatever its last
    // line says. A success is still one (pip's own retry succeeded).
    let transient = seen.transient && verdict != Verdict::Success;
    let stop_if = seen.stop_if && !transient;
    // A server that asked to slow down is up: its failure is retried
    // whatever the code says, but a fatal one (`class.rs`).
    let throttled = class::throttle_line(seen, rules.throttle.as_ref());
    let (status, verdict) = match verdict {
        _ if stop_if => (status, verdict),
        Verdict::Success if !seen.retry_if => (status, verdict),
        Verdict::Success | Verdict::Retry | Verdict::NotRetryable if seen.retry_if => (
            status.output_matched(verdict == Verdict::Success),
            Verdict::Retry,
        ),
        Verdict::NotRetryable if transient || throttled => (status.as_failure(), Verdict::Retry),
        // A failure never reports 0: `retry ... && deploy` must not deploy.
        _ => (status.as_failure(), verdict),
    };
    let give_up = Decision::GiveUp;
    // Output was lost and all later output would be: whatever the attempt's
    // status, the run ends as a writer to a closed pipe does (SIGPIPE).
    if seen.stdout_closed {
        return give_up(GiveUp::StdoutClosed);
    }
    match verdict {
        // `--stop-if-output` keeps the command's own status, even 0.
        _ if stop_if => {
            return give_up(GiveUp::OutputStop {
                status,
                line: seen.stop_line.clone(),
                label: rules.labels.stop_if.clone(),
            });
        }
        Verdict::Success => return Decision::Succeed(status),
        _ if stopped == Stopped::ByMaxTime => return give_up(GiveUp::MaxTimeReached(status)),
        Verdict::Fatal => return give_up(GiveUp::Fatal(status, rules.labels.fatal_on.clone())),
        Verdict::NotRetryable => {
            return give_up(GiveUp::NotRetryable(status, rules.labels.retry_on.clone()));
        }
        Verdict::Retry => {}
    }
    if !rules.limit.allows_after(number) {
        return give_up(GiveUp::Attempts(status));
    }
    // An unreadable hint is no hint (the loop logs it).
    let asked = match seen.hint {
        Some(Hint::Delay(asked)) => Some(asked),
        _ => None,
    };
    let class = class::class(seen, rules.throttle.as_ref());
    let ceiling = hint::ceiling(rules.cap, time_left.is_some());
    let (sleep, hint) = match hint::choose(draw(class.is_throttled()), asked, ceiling) {
        Ok(chosen) => chosen,
        Err(asked) => {
            return give_up(GiveUp::HintTooLong {
                status,
                hint_ms: crate::duration::millis(asked),
                limit_ms: crate::duration::millis(ceiling.unwrap_or_default()),
            });
        }
    };
    if !fits(sleep.duration, time_left) {
        let sleep_ms = crate::duration::millis(sleep.duration);
        return give_up(GiveUp::MaxTimeAhead { status, sleep_ms });
    }
    if !pay(class.is_throttled()) {
        return give_up(GiveUp::Budget(status));
    }
    Decision::Retry {
        status,
        class,
        sleep,
        hint,
    }
}

/// What follows an attempt `--throttle` rejected, which counts as a
/// throttled failure: another attempt after the schedule's next sleep for
/// that class (`draw(true)`, on `--throttle-base`), unless the run's
/// attempts, `--max-time` (the sleep would end past it) or the `--budget`
/// (`pay(true)`, a throttled retry's cost, asked last, as for a retry) let
/// none follow. A run still gives up only by its own limits.
pub fn after_rejection(
    rules: &Rules,
    number: u32,
    time_left: Option<Duration>,
    draw: impl FnOnce(bool) -> Sleep,
    pay: impl FnOnce(bool) -> bool,
) -> Result<Sleep, RanOut> {
    if !rules.limit.allows_after(number) {
        return Err(RanOut::Attempts);
    }
    let sleep = draw(true);
    if !fits(sleep.duration, time_left) {
        let sleep_ms = crate::duration::millis(sleep.duration);
        return Err(RanOut::MaxTime { sleep_ms });
    }
    if !pay(true) {
        return Err(RanOut::Budget);
    }
    Ok(sleep)
}

/// Whether the service accepted an attempt that ran, as `--throttle`
/// counts accepts, from what the rules decided of it: `None` when it
/// tells nothing of the service (the command could not start, a signal,
/// retry's own failure; a give-up the attempt did not decide).
///
/// The one place that says what is accepted: a success, and a failure
/// retrying cannot mend (the service answered). Every failure that is
/// retried, or would have been but for the run's limits, is the service's
/// refusal: throttled or transient, as `class.rs` classes it, both are
/// what the SRE book does not count as accepted.
pub fn accepted(decision: &Decision) -> Option<bool> {
    match decision {
        Decision::Succeed(_) => Some(true),
        Decision::Retry { .. } => Some(false),
        Decision::GiveUp(reason) => match reason {
            GiveUp::Fatal(..) | GiveUp::NotRetryable(..) | GiveUp::OutputStop { .. } => Some(true),
            GiveUp::Attempts(_)
            | GiveUp::MaxTimeReached(_)
            | GiveUp::MaxTimeAhead { .. }
            | GiveUp::HintTooLong { .. }
            | GiveUp::Budget(_) => Some(false),
            GiveUp::MaxTimeInHook(_)
            | GiveUp::Signal { .. }
            | GiveUp::Spawn { .. }
            | GiveUp::Failed(_)
            | GiveUp::StdoutClosed
            | GiveUp::CircuitOpen(..)
            | GiveUp::Rejected { .. } => None,
        },
    }
}

/// Whether a sleep ends within what is left of `--max-time`.
pub fn fits(sleep: Duration, time_left: Option<Duration>) -> bool {
    time_left.is_none_or(|left| sleep <= left)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::CodeSet;

    const MS: Duration = Duration::from_millis(1);

    fn rules(limit: u32) -> Rules {
        Rules {
            // The defaults: 0 succeeds, everything else but 126/127/141 retries.
            policy: Policy::new(CodeSet::of(&[0]), None, Some(CodeSet::of(&[5]))),
            limit: Attempts::Limit(limit),
            cap: MS * 1000,
            labels: Labels::default(),
            throttle: None,
        }
    }

    fn sleep(ms: u32) -> Sleep {
        Sleep {
            duration: MS * ms,
            ceiling: MS * ms,
        }
    }

    /// One row: attempt number, code, what the output matched (retry, stop),
    /// how it was stopped, time left (ms), the drawn sleep (ms).
    fn decide_row(
        number: u32,
        code: i32,
        seen: (bool, bool),
        stopped: Stopped,
        left_ms: Option<u32>,
    ) -> Decision {
        let facts = Facts {
            number,
            status: match stopped {
                Stopped::No => Status::exited(code),
                _ => Status::timed_out(MS * 10),
            },
            seen: OutputSeen {
                retry_if: seen.0,
                stop_if: seen.1,
                ..OutputSeen::default()
            },
            stopped,
            time_left: left_ms.map(|ms| MS * ms),
        };
        decide(&rules(3), &facts, |_| sleep(100), |_| true)
    }

    fn gives_up(reason: GiveUp) -> Decision {
        Decision::GiveUp(reason)
    }

    #[test]
    fn each_rule_as_a_row() {
        use Stopped::{ByMaxTime, ByTimeout, No};
        let exited = Status::exited;
        let nothing = (false, false);
        let retry_match = (true, false);
        let stop_match = (false, true);
        let retry = |status| Decision::Retry {
            status,
            class: Class::Transient,
            sleep: sleep(100),
            hint: None,
        };
        let timed_out = Status::timed_out(MS * 10);
        let rows = [
            // A success ends the run, however late.
            (
                decide_row(1, 0, nothing, No, None),
                Decision::Succeed(exited(0)),
            ),
            (
                decide_row(3, 0, nothing, No, Some(0)),
                Decision::Succeed(exited(0)),
            ),
            // A retryable failure retries while attempts are left.
            (decide_row(1, 1, nothing, No, None), retry(exited(1))),
            (decide_row(2, 7, nothing, No, None), retry(exited(7))),
            (
                decide_row(3, 7, nothing, No, None),
                gives_up(GiveUp::Attempts(exited(7))),
            ),
            // Fatal and not-retryable codes stop at once.
            (
                decide_row(1, 5, nothing, No, None),
                gives_up(GiveUp::Fatal(exited(5), None)),
            ),
            (
                decide_row(1, 127, nothing, No, None),
                gives_up(GiveUp::NotRetryable(exited(127), None)),
            ),
            // A retry match retries a success (counted as 1) and a
            // not-retryable code, never a fatal one.
            (
                decide_row(1, 0, retry_match, No, None),
                retry(exited(0).output_matched(true)),
            ),
            (
                decide_row(1, 127, retry_match, No, None),
                retry(exited(127).output_matched(false)),
            ),
            (
                decide_row(1, 5, retry_match, No, None),
                gives_up(GiveUp::Fatal(exited(5), None)),
            ),
            (
                decide_row(3, 0, retry_match, No, None),
                gives_up(GiveUp::Attempts(exited(0).output_matched(true))),
            ),
            // A stop match wins over everything and keeps the status, even 0.
            (
                decide_row(1, 0, stop_match, No, None),
                gives_up(stop(exited(0))),
            ),
            (
                decide_row(1, 9, (true, true), No, None),
                gives_up(stop(exited(9))),
            ),
            // Timeouts are 124 and retryable; their partial output is not stdout.
            (decide_row(1, 0, nothing, ByTimeout, None), retry(timed_out)),
            (
                decide_row(3, 0, nothing, ByTimeout, None),
                gives_up(GiveUp::Attempts(timed_out)),
            ),
            (
                decide_row(1, 0, nothing, ByMaxTime, None),
                gives_up(GiveUp::MaxTimeReached(timed_out)),
            ),
            // A sleep must end within --max-time (100 ms drawn).
            (decide_row(1, 1, nothing, No, Some(100)), retry(exited(1))),
            (
                decide_row(1, 1, nothing, No, Some(99)),
                gives_up(GiveUp::MaxTimeAhead {
                    status: exited(1),
                    sleep_ms: 100,
                }),
            ),
        ];
        for (i, (got, want)) in rows.into_iter().enumerate() {
            assert_eq!(got, want, "row {i}");
        }
    }

    #[test]
    fn a_closed_stdout_ends_the_run_whatever_the_status() {
        for code in [0, 1, 5] {
            let facts = Facts {
                number: 1,
                status: Status::exited(code),
                seen: OutputSeen {
                    stdout_closed: true,
                    ..OutputSeen::default()
                },
                stopped: Stopped::No,
                time_left: None,
            };
            let decision = decide(&rules(3), &facts, |_| sleep(1), |_| true);
            assert_eq!(decision, gives_up(GiveUp::StdoutClosed), "exit code {code}");
        }
    }

    #[test]
    fn a_program_that_retried_a_transient_failure_itself_is_retried() {
        // pip's own retry warning, then "No matching distribution" (a stop
        // line) and exit 1, which the named pip preset does not retry.
        let pip = Rules {
            policy: Policy::new(CodeSet::of(&[0]), Some(CodeSet::of(&[124])), None),
            ..rules(3)
        };
        let facts = |transient| Facts {
            number: 1,
            status: Status::exited(1),
            seen: OutputSeen {
                stop_if: true,
                transient,
                ..OutputSeen::default()
            },
            stopped: Stopped::No,
            time_left: None,
        };
        let decision = decide(&pip, &facts(true), |_| sleep(1), |_| true);
        assert!(matches!(decision, Decision::Retry { .. }), "{decision:?}");
        let decision = decide(&pip, &facts(false), |_| sleep(1), |_| true);
        assert!(
            matches!(decision, Decision::GiveUp(GiveUp::OutputStop { .. })),
            "{decision:?}"
        );
        // A bare exit 1 with the warning alone: retried too, as a plain
        // failure (no output rule of the user's matched).
        let mut alone = facts(true);
        alone.seen.stop_if = false;
        let decision = decide(&pip, &alone, |_| sleep(1), |_| true);
        assert!(
            matches!(decision, Decision::Retry { status, .. } if status == Status::exited(1)),
            "{decision:?}"
        );
        // pip's own retry that then succeeded: a success.
        let mut succeeded = facts(true);
        (succeeded.status, succeeded.seen.stop_if) = (Status::exited(0), false);
        let decision = decide(&pip, &succeeded, |_| sleep(1), |_| true);
        assert_eq!(decision, Decision::Succeed(Status::exited(0)));
    }

    /// A stop by `--stop-if-output` given as a flag, its line not kept.
    fn stop(status: Status) -> GiveUp {
        GiveUp::OutputStop {
            status,
            line: None,
            label: None,
        }
    }

    #[test]
    fn a_presets_rule_that_stops_is_named_by_its_label_with_the_line_it_matched() {
        let label = |text: &str| Some(std::sync::Arc::from(text));
        let rules = Rules {
            policy: Policy::new(
                CodeSet::of(&[0]),
                Some(CodeSet::of(&[7])),
                Some(CodeSet::of(&[5])),
            ),
            labels: Labels {
                retry_on: label("the curl preset retries a reset"),
                fatal_on: label("curl preset: usage"),
                stop_if: label("curl preset: a 4xx"),
            },
            ..rules(3)
        };
        let facts = |code, stop_line: Option<&str>| Facts {
            number: 1,
            status: Status::exited(code),
            seen: OutputSeen {
                stop_if: stop_line.is_some(),
                stop_line: stop_line.map(Box::from),
                ..OutputSeen::default()
            },
            stopped: Stopped::No,
            time_left: None,
        };
        let decided = |facts| decide(&rules, &facts, |_| sleep(1), |_| true);
        assert_eq!(
            decided(facts(22, Some("error: 404"))),
            gives_up(GiveUp::OutputStop {
                status: Status::exited(22),
                line: Some("error: 404".into()),
                label: label("curl preset: a 4xx"),
            })
        );
        assert_eq!(
            decided(facts(5, None)),
            gives_up(GiveUp::Fatal(
                Status::exited(5),
                label("curl preset: usage")
            ))
        );
        // A code in neither list names the list it is not in.
        assert_eq!(
            decided(facts(40, None)),
            gives_up(GiveUp::NotRetryable(
                Status::exited(40),
                label("the curl preset retries a reset")
            ))
        );
        // A retry carries no label.
        assert!(matches!(decided(facts(7, None)), Decision::Retry { .. }));
    }

    #[test]
    fn a_failure_that_exits_0_is_reported_as_1() {
        // 0 is not a success here; giving up must not exit 0.
        let rules = Rules {
            policy: Policy::new(CodeSet::of(&[3]), None, None),
            limit: Attempts::Limit(1),
            cap: MS * 1000,
            labels: Labels::default(),
            throttle: None,
        };
        let facts = Facts {
            number: 1,
            status: Status::exited(0),
            seen: OutputSeen::default(),
            stopped: Stopped::No,
            time_left: None,
        };
        let Decision::GiveUp(reason) = decide(&rules, &facts, |_| sleep(1), |_| true) else {
            panic!("expected a give-up")
        };
        assert_eq!(reason, GiveUp::Attempts(Status::exited(0).as_failure()));
        assert_eq!(crate::run::Exit::of(&reason), crate::run::Exit::Code(1));
    }

    #[test]
    fn the_sleep_is_drawn_only_when_a_retry_is_possible() {
        let mut drawn = 0;
        for (code, number) in [(0, 1), (5, 1), (1, 3)] {
            let facts = Facts {
                number,
                status: Status::exited(code),
                seen: OutputSeen::default(),
                stopped: Stopped::No,
                time_left: None,
            };
            decide(
                &rules(3),
                &facts,
                |_| {
                    drawn += 1;
                    sleep(1)
                },
                |_| panic!("paid for a retry that cannot happen"),
            );
        }
        assert_eq!(drawn, 0);
    }

    #[test]
    fn unlimited_attempts_always_allow_another() {
        let rules = Rules {
            limit: Attempts::Unlimited,
            ..rules(1)
        };
        let facts = Facts {
            number: u32::MAX,
            status: Status::exited(1),
            seen: OutputSeen::default(),
            stopped: Stopped::No,
            time_left: None,
        };
        assert!(matches!(
            decide(&rules, &facts, |_| sleep(1), |_| true),
            Decision::Retry { .. }
        ));
    }

    /// A failed attempt (exit 1, attempt 1 of 3) whose output carried
    /// `hint`, with `left_ms` of --max-time, a draw of 100 ms, a cap of
    /// 1000 ms and a budget that pays if `budget` says so; the decision,
    /// and what the budget was asked for (Some(throttled)).
    fn hinted_row(
        hint: Option<Hint>,
        stopped: Stopped,
        left_ms: Option<u32>,
        budget: bool,
    ) -> (Decision, Option<bool>) {
        let facts = Facts {
            number: 1,
            status: Status::exited(1),
            seen: OutputSeen {
                hint,
                ..OutputSeen::default()
            },
            stopped,
            time_left: left_ms.map(|ms| MS * ms),
        };
        let mut asked = None;
        let decision = decide(
            &rules(3),
            &facts,
            |_| sleep(100),
            |timeout| {
                asked = Some(timeout);
                budget
            },
        );
        (decision, asked)
    }

    /// What follows a rejection, as rows: attempts, time and the budget,
    /// each asked only if those before let another attempt follow.
    #[test]
    fn a_rejection_is_retried_unless_the_run_s_limits_say_no() {
        let rows = [
            // (attempt, time left, budget pays) -> (result, drawn, asked)
            ((1, None, true), (Ok(sleep(100)), true, true)),
            ((3, None, true), (Err(RanOut::Attempts), false, false)),
            (
                (1, Some(99), true),
                (Err(RanOut::MaxTime { sleep_ms: 100 }), true, false),
            ),
            ((1, Some(100), true), (Ok(sleep(100)), true, true)),
            ((2, None, false), (Err(RanOut::Budget), true, true)),
        ];
        for ((number, left, pays), (want, drawn, asked)) in rows {
            let (mut did_draw, mut did_ask) = (false, false);
            let got = after_rejection(
                &rules(3),
                number,
                left.map(|ms| MS * ms),
                |throttled| {
                    // A rejection is a throttled failure: its class's sleep
                    // and cost.
                    assert!(throttled);
                    did_draw = true;
                    sleep(100)
                },
                |throttled| {
                    assert!(throttled);
                    did_ask = true;
                    pays
                },
            );
            assert_eq!(
                (got, did_draw, did_ask),
                (want, drawn, asked),
                "{number} {left:?} {pays}"
            );
        }
    }

    /// What `--throttle` counts as accepted, for every decision.
    #[test]
    fn a_success_and_a_permanent_failure_are_accepted_a_retried_one_not() {
        let s = Status::exited(1);
        let retried = |class| Decision::Retry {
            status: s,
            class,
            sleep: sleep(1),
            hint: None,
        };
        let throttled = Class::Throttled(Evidence::Hint);
        let rows = [
            (Decision::Succeed(Status::exited(0)), Some(true)),
            (retried(Class::Transient), Some(false)),
            (retried(throttled), Some(false)),
            (Decision::GiveUp(GiveUp::Fatal(s, None)), Some(true)),
            (Decision::GiveUp(GiveUp::NotRetryable(s, None)), Some(true)),
            (
                Decision::GiveUp(GiveUp::OutputStop {
                    status: s,
                    line: None,
                    label: None,
                }),
                Some(true),
            ),
            (Decision::GiveUp(GiveUp::Attempts(s)), Some(false)),
            (Decision::GiveUp(GiveUp::MaxTimeReached(s)), Some(false)),
            (Decision::GiveUp(GiveUp::Budget(s)), Some(false)),
            (
                Decision::GiveUp(GiveUp::HintTooLong {
                    status: s,
                    hint_ms: 2,
                    limit_ms: 1,
                }),
                Some(false),
            ),
            (Decision::GiveUp(GiveUp::StdoutClosed), None),
        ];
        for (decision, want) in rows {
            assert_eq!(accepted(&decision), want, "{decision:?}");
        }
    }

    #[test]
    fn hints_and_the_budget_as_rows() {
        use Stopped::{ByTimeout, No};
        let status = Status::exited(1);
        let delay = |ms| Some(Hint::Delay(MS * ms));
        // A readable hint makes the retry a throttled one (`class.rs`).
        let retry = |ms, hint: Option<(u32, u32)>| Decision::Retry {
            status,
            class: match hint {
                Some(_) => Class::Throttled(Evidence::Hint),
                None => Class::Transient,
            },
            sleep: Sleep {
                duration: MS * ms,
                ceiling: MS * 100,
            },
            hint: hint.map(|(asked, drawn)| Hinted {
                asked: MS * asked,
                drawn: MS * drawn,
            }),
        };
        let rows = [
            // No hint: the draw, paid for by the budget.
            (
                hinted_row(None, No, None, true),
                (retry(100, None), Some(false)),
            ),
            // A longer hint is the sleep; a shorter one leaves the draw.
            (
                hinted_row(delay(400), No, None, true),
                (retry(400, Some((400, 100))), Some(true)),
            ),
            (
                hinted_row(delay(40), No, None, true),
                (retry(100, Some((40, 100))), Some(true)),
            ),
            // Past the cap (1000 ms) too, as the server asked.
            (
                hinted_row(delay(1001), No, None, true),
                (retry(1001, Some((1001, 100))), Some(true)),
            ),
            // Up to the ceiling without --max-time, not one millisecond
            // more: then give up, unpaid, naming the limit.
            (
                hinted_row(delay(300_000), No, None, true),
                (retry(300_000, Some((300_000, 100))), Some(true)),
            ),
            (
                hinted_row(delay(300_001), No, None, true),
                (
                    gives_up(GiveUp::HintTooLong {
                        status,
                        hint_ms: 300_001,
                        limit_ms: 300_000,
                    }),
                    None,
                ),
            ),
            // With --max-time, it is the only bound.
            (
                hinted_row(delay(400_000), No, Some(400_000), true),
                (retry(400_000, Some((400_000, 100))), Some(true)),
            ),
            // A hint that would end past --max-time gives up, unpaid.
            (
                hinted_row(delay(400), No, Some(399), true),
                (
                    gives_up(GiveUp::MaxTimeAhead {
                        status,
                        sleep_ms: 400,
                    }),
                    None,
                ),
            ),
            // An unreadable hint is none.
            (
                hinted_row(Some(Hint::Unparseable("soon".into())), No, None, true),
                (retry(100, None), Some(false)),
            ),
            // A budget that cannot pay ends the run with the last status.
            (
                hinted_row(None, No, None, false),
                (gives_up(GiveUp::Budget(status)), Some(false)),
            ),
            // A retry after a timeout is a transient failure's, as any.
            (
                hinted_row(None, ByTimeout, None, false),
                (gives_up(GiveUp::Budget(Status::exited(1))), Some(false)),
            ),
        ];
        for (i, (got, want)) in rows.into_iter().enumerate() {
            assert_eq!(got, want, "row {i}");
        }
    }

    /// An attempt that printed a throttle line (or not), with `code`, under
    /// the rules of a preset that retries 22 and stops on 3: the decision,
    /// the class the sleep was drawn for and the budget asked to pay
    /// (each Some(throttled)). The draw is 100 ms transient, 500 throttled.
    fn throttle_row(code: i32, line: bool, stop: bool) -> (Decision, Option<bool>, Option<bool>) {
        let rules = Rules {
            policy: Policy::new(
                CodeSet::of(&[0]),
                Some(CodeSet::of(&[22])),
                Some(CodeSet::of(&[3])),
            ),
            throttle: Some(Evidence::Line("HTTP 429".into())),
            ..rules(3)
        };
        let facts = Facts {
            number: 1,
            status: Status::exited(code),
            seen: OutputSeen {
                throttle: line,
                stop_if: stop,
                ..OutputSeen::default()
            },
            stopped: Stopped::No,
            time_left: None,
        };
        let (mut drawn, mut paid) = (None, None);
        let decision = decide(
            &rules,
            &facts,
            |throttled| {
                drawn = Some(throttled);
                sleep(if throttled { 500 } else { 100 })
            },
            |throttled| {
                paid = Some(throttled);
                true
            },
        );
        (decision, drawn, paid)
    }

    #[test]
    fn a_throttle_line_classes_the_retry_and_never_stops_a_run() {
        let throttled = |status, ms| Decision::Retry {
            status,
            class: Class::Throttled(Evidence::Line("HTTP 429".into())),
            sleep: sleep(ms),
            hint: None,
        };
        let yes = Some(true);
        let rows = [
            // A retried code with the line: throttled, drawn and paid so.
            (
                throttle_row(22, true, false),
                (throttled(Status::exited(22), 500), yes, yes),
            ),
            // Without it: transient, as before.
            (
                throttle_row(22, false, false),
                (
                    Decision::Retry {
                        status: Status::exited(22),
                        class: Class::Transient,
                        sleep: sleep(100),
                        hint: None,
                    },
                    Some(false),
                    Some(false),
                ),
            ),
            // A code not retried: the line makes it a retry (the server is up).
            (
                throttle_row(7, true, false),
                (throttled(Status::exited(7), 500), yes, yes),
            ),
            (
                throttle_row(7, false, false),
                (
                    gives_up(GiveUp::NotRetryable(Status::exited(7), None)),
                    None,
                    None,
                ),
            ),
            // A fatal code stays fatal, a success a success, a stop line a stop.
            (
                throttle_row(3, true, false),
                (gives_up(GiveUp::Fatal(Status::exited(3), None)), None, None),
            ),
            (
                throttle_row(0, true, false),
                (Decision::Succeed(Status::exited(0)), None, None),
            ),
            (
                throttle_row(22, true, true),
                (gives_up(stop(Status::exited(22))), None, None),
            ),
        ];
        for (i, (got, want)) in rows.into_iter().enumerate() {
            assert_eq!(got, want, "row {i}");
        }
    }
}
