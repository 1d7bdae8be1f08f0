//! The attempt loop's tests, against the scripted host of `fake.rs`.

use std::time::{Duration, SystemTime};

use super::*;
use crate::run::fake::*;
use crate::run::pipes::OutputSeen;
use crate::state::{breaker, throttle};

/// The options of a run of `cmd`, as `retry --seed 1 ARGS cmd` gives them.
pub(super) fn config(args: &[&str]) -> Options {
    let argv = ["retry", "--seed", "1"].iter().chain(args).chain(&["cmd"]);
    let argv: Vec<std::ffi::OsString> = argv.map(Into::into).collect();
    match crate::cli::config::from_cli(
        crate::cli::parse_from(&argv, crate::cli::AfterParsing::Free).unwrap(),
    )
    .unwrap()
    {
        crate::cli::config::Mode::Run(options, ..) => *options,
        other => panic!("not a run: {other:?}"),
    }
}

#[test]
fn first_success_runs_once_and_sleeps_never() {
    let mut host = FakeHost::new(vec![exit(0)]);
    let (code, events) = run_with(&config(&[]), &mut host);
    assert_eq!(code, 0);
    assert_eq!(host.seen.len(), 1);
    assert!(host.sleeps.is_empty());
    assert!(matches!(events[..], [Event::Succeeded { attempt: 1, .. }]));
}

#[test]
fn retries_until_success_with_the_schedules_sleeps() {
    let mut host = FakeHost::new(vec![exit(1), exit(7), exit(0)]);
    let c = config(&["--jitter", "none", "--base", "10ms"]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!(code, 0);
    assert_eq!(host.sleeps, [MS * 10, MS * 20]);
    let previous: Vec<_> = host
        .seen
        .iter()
        .map(|a| (a.number, a.previous_code))
        .collect();
    assert_eq!(previous, [(1, None), (2, Some(1)), (3, Some(7))]);
    assert!(matches!(
        events.last(),
        Some(Event::Succeeded { attempt: 3, .. })
    ));
}

#[test]
fn exhausted_attempts_exit_with_the_last_status() {
    let mut host = FakeHost::new(vec![exit(1), exit(2), exit(3)]);
    let (code, events) = run_with(&config(&["-n", "3", "--base", "1ms"]), &mut host);
    assert_eq!(code, 3);
    assert_eq!(host.seen.len(), 3);
    assert_eq!(gave_up(&events), &GiveUp::Attempts(Status::exited(3)));
}

#[test]
fn fatal_and_unlisted_codes_stop_at_once() {
    let c = config(&["--retry-on", "1-9", "--fatal-on", "5"]);
    let mut host = FakeHost::new(vec![exit(5)]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!((code, host.seen.len()), (5, 1));
    assert_eq!(gave_up(&events), &GiveUp::Fatal(Status::exited(5), None));

    let mut host = FakeHost::new(vec![exit(42)]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!((code, host.seen.len()), (42, 1));
    assert_eq!(
        gave_up(&events),
        &GiveUp::NotRetryable(Status::exited(42), None)
    );
}

#[test]
fn timeout_is_124_and_retryable() {
    let mut host = FakeHost::new(vec![exit(0)]);
    host.attempt_ms = 50;
    let c = config(&["--timeout", "10ms", "-n", "2", "--base", "1ms"]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!(code, 124);
    assert_eq!(host.seen.len(), 2);
    assert_eq!(
        gave_up(&events),
        &GiveUp::Attempts(Status::timed_out(MS * 10))
    );
}

#[test]
fn timeout_listed_as_fatal_stops() {
    let mut host = FakeHost::new(vec![]);
    host.attempt_ms = 50;
    let c = config(&["--timeout", "10ms", "--fatal-on", "124"]);
    let (code, _) = run_with(&c, &mut host);
    assert_eq!((code, host.seen.len()), (124, 1));
}

#[test]
fn max_time_refuses_a_sleep_that_would_end_past_it() {
    let mut host = FakeHost::new(vec![exit(1), exit(1), exit(1)]);
    // Sleeps 100, 200: the second would end at ~302 ms, past 250 ms.
    let c = config(&[
        "--jitter",
        "none",
        "--base",
        "100ms",
        "--max-time",
        "250ms",
        "-n",
        "9",
    ]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!(code, 1);
    assert_eq!(host.seen.len(), 2);
    assert_eq!(
        gave_up(&events),
        &GiveUp::MaxTimeAhead {
            status: Status::exited(1),
            sleep_ms: 200
        }
    );
}

#[test]
fn max_time_stops_the_running_attempt() {
    let mut host = FakeHost::new(vec![]);
    host.attempt_ms = 1000;
    let c = config(&["--max-time", "30ms", "--timeout", "1h"]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!((code, host.seen.len()), (124, 1));
    assert_eq!(
        gave_up(&events),
        &GiveUp::MaxTimeReached(Status::timed_out(MS * 30))
    );
}

#[test]
fn signal_during_sleep_ends_the_run() {
    let mut host = FakeHost::new(vec![exit(1)]);
    host.signal_in_sleep = Some(15);
    let (code, events) = run_with(&config(&[]), &mut host);
    assert_eq!((code, host.seen.len()), (143, 1));
    assert_eq!(
        gave_up(&events),
        &GiveUp::Signal {
            signal: 15,
            status: None,
            during: Phase::Sleep,
        }
    );
}

#[test]
fn signal_during_attempt_exits_128_plus_n() {
    let status = Status::exited(0);
    let interrupted = Ended::Interrupted {
        signal: 2,
        status: Some(status),
    };
    let mut host = FakeHost::new(vec![ended(interrupted, OutputSeen::default())]);
    let (code, _) = run_with(&config(&[]), &mut host);
    assert_eq!((code, host.seen.len()), (130, 1));
}

#[test]
fn a_signal_during_an_attempt_drops_its_held_output_and_says_so() {
    let interrupted = Ended::Interrupted {
        signal: 15,
        status: None,
    };
    let mut host = FakeHost::new(vec![ended(interrupted, OutputSeen::default())]);
    host.held = 3 << 30;
    let (code, events) = run_with(&config(&["--stdout-once"]), &mut host);
    assert_eq!((code, host.settled.as_slice()), (143, &[][..]));
    let warned = events.iter().any(|e| {
        matches!(e, Event::Warning { message, .. }
        if message.contains("held-back stdout (3 GiB) is dropped"))
    });
    assert!(warned, "{events:?}");
}

#[test]
fn a_signal_while_held_output_is_written_says_what_it_dropped() {
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    host.unsettled = Some(Unsettled::Interrupted {
        signal: 15,
        dropped: 5 << 20,
    });
    let (code, events) = run_with(&config(&["--stdout-once"]), &mut host);
    assert_eq!((code, host.seen.len()), (143, 1));
    let warned: Vec<_> = events
        .iter()
        .filter(|e| {
            matches!(e, Event::Warning { message, .. }
            if message.contains("the rest of the attempt's held-back stdout (5 MiB) is dropped"))
        })
        .collect();
    assert_eq!(warned.len(), 1, "{events:?}");
}

#[test]
fn spawn_failure_is_not_retried() {
    let err = SpawnError {
        code: 127,
        message: "not found".into(),
    };
    let mut host = FakeHost::new(vec![Err(err)]);
    let (code, events) = run_with(&config(&[]), &mut host);
    assert_eq!((code, host.seen.len()), (127, 1));
    assert_eq!(gave_up(&events).reason().name(), "spawn");
}

#[test]
fn retry_events_carry_the_computed_sleep() {
    let mut host = FakeHost::new(vec![exit(22), exit(0)]);
    let (_, events) = run_with(&config(&["--jitter", "full", "--base", "2s"]), &mut host);
    let Event::Retrying {
        attempt,
        sleep,
        status,
        ..
    } = &events[0]
    else {
        panic!("{events:?}")
    };
    assert_eq!((*attempt, status.code), (1, 22));
    assert_eq!(sleep.ceiling, Duration::from_secs(2));
    assert_eq!(host.sleeps, [sleep.duration]);
}

#[test]
fn unlimited_keeps_going() {
    let mut script: Vec<_> = (0..50).map(|_| exit(1)).collect();
    script.push(exit(0));
    let mut host = FakeHost::new(script);
    let (code, _) = run_with(&config(&["-n", "unlimited", "--base", "0ms"]), &mut host);
    assert_eq!((code, host.seen.len()), (0, 51));
}

#[test]
fn success_after_retries_reports_the_sleeps_it_showed() {
    let mut host = FakeHost::new(vec![exit(1), exit(1), exit(0)]);
    host.oversleep = MS * 3;
    let (_, events) = run_with(&config(&["--jitter", "none", "--base", "10ms"]), &mut host);
    let Some(Event::Succeeded {
        attempt: 3,
        slept_ms,
        ..
    }) = events.last()
    else {
        panic!("{events:?}")
    };
    // 10 + 20 ms as shown, not the 36 ms the clock saw.
    assert_eq!(*slept_ms, 30);
}

#[test]
fn on_retry_runs_after_each_retried_failure_only() {
    let mut host = FakeHost::new(vec![exit(3), exit(4), exit(5)]);
    let (code, _) = run_with(
        &config(&["-n", "3", "--base", "1ms", "--on-retry", "rm -f x"]),
        &mut host,
    );
    assert_eq!(code, 5);
    // Not after the last attempt: no retry follows it.
    assert_eq!(
        host.hooks,
        [("rm -f x".to_owned(), 1, 3), ("rm -f x".to_owned(), 2, 4)]
    );
}

#[test]
fn a_failing_hook_is_logged_and_the_run_goes_on() {
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    host.hook_code = 7;
    let (code, events) = run_with(
        &config(&["--base", "1ms", "--on-retry", "false"]),
        &mut host,
    );
    assert_eq!(code, 0);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::HookFailed { attempt: 1, status, .. } if status.code == 7))
    );
}

#[test]
fn a_hook_that_cannot_start_says_why_and_the_run_goes_on() {
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    host.hook_unstartable = Some(SpawnError {
        code: 126,
        message: "cannot run `/bin/sh`: Argument list too long".to_owned(),
    });
    let (code, events) = run_with(&config(&["--base", "1ms", "--on-retry", "true"]), &mut host);
    assert_eq!(code, 0);
    let failed = events.iter().find_map(|e| match e {
        Event::HookFailed { status, error, .. } => Some((status.code, error.clone())),
        _ => None,
    });
    assert_eq!(
        failed,
        Some((
            126,
            Some("cannot run `/bin/sh`: Argument list too long".to_owned())
        ))
    );
}

#[test]
fn hook_time_counts_against_max_time() {
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    host.hook_ms = 200;
    let c = config(&[
        "--jitter",
        "none",
        "--base",
        "50ms",
        "--max-time",
        "150ms",
        "--on-retry",
        "sleep 1",
    ]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!((code, host.seen.len()), (1, 1));
    assert_eq!(gave_up(&events).reason().name(), "max_time");
}

#[test]
fn retry_if_output_retries_even_a_success() {
    let mut host = FakeHost::new(vec![exit_seeing(0, true, false), exit(0)]);
    let (code, events) = run_with(&config(&["--base", "1ms"]), &mut host);
    assert_eq!((code, host.seen.len()), (0, 2));
    let Event::Retrying { status, .. } = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(*status, Status::exited(0).output_matched(true));
    // The first attempt's held stdout goes to stderr, the last one's to stdout.
    assert_eq!(host.settled, [false, true]);
}

#[test]
fn a_run_that_gives_up_on_its_output_does_not_exit_0() {
    let mut host = FakeHost::new(vec![
        exit_seeing(0, true, false),
        exit_seeing(0, true, false),
    ]);
    let (code, events) = run_with(&config(&["-n", "2", "--base", "1ms"]), &mut host);
    assert_eq!(code, 1);
    assert_eq!(gave_up(&events).reason().name(), "attempts");
    // A failing code keeps its own value.
    let mut host = FakeHost::new(vec![exit_seeing(3, true, false)]);
    let (code, _) = run_with(&config(&["-n", "1"]), &mut host);
    assert_eq!(code, 3);
}

#[test]
fn retry_if_output_does_not_override_fatal_codes() {
    let mut host = FakeHost::new(vec![exit_seeing(4, true, false)]);
    let (code, events) = run_with(&config(&["--fatal-on", "4"]), &mut host);
    assert_eq!((code, host.seen.len()), (4, 1));
    assert_eq!(gave_up(&events).reason().name(), "fatal");
}

#[test]
fn a_server_that_asks_to_slow_down_unseen_is_advised_on_once() {
    let slow = |hint| {
        let seen = OutputSeen {
            throttle: true,
            hint,
            ..OutputSeen::default()
        };
        ended(Ended::Exited(Status::exited(22)), seen)
    };
    let advice = |events: &[Event]| {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Warning { attempt, message } if message.contains("slow down") => {
                    Some((*attempt, message.clone()))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let curl = config(&["--preset", "curl", "--base", "1ms", "-n", "4"]);
    let mut host = FakeHost::new(vec![exit(7), slow(None), slow(None), slow(None)]);
    let (_, events) = run_with(&curl, &mut host);
    assert_eq!(
        advice(&events),
        [(
            2,
            "the server asked to slow down, but retry cannot see how long it asked to \
             wait (its Retry-After): add -D /dev/stderr to curl's arguments \
             (--preset curl; said once)"
                .to_owned()
        )]
    );
    // A hint seen in that attempt: nothing to advise.
    let mut host = FakeHost::new(vec![slow(Some(Hint::Delay(MS))), exit(0)]);
    let (_, events) = run_with(&curl, &mut host);
    assert_eq!(advice(&events), []);
    // Nor in a success.
    let seen = OutputSeen {
        throttle: true,
        ..OutputSeen::default()
    };
    let mut host = FakeHost::new(vec![ended(Ended::Exited(Status::exited(0)), seen)]);
    let (code, events) = run_with(&curl, &mut host);
    assert_eq!((code, advice(&events)), (0, vec![]));
    // Without a preset that has the advice, the same output says nothing;
    // nor when the user's own --throttle-if-output stands for the preset's.
    let plain = config(&["--base", "1ms", "-n", "2", "--throttle-if-output", "x"]);
    let mut host = FakeHost::new(vec![slow(None), slow(None)]);
    let (_, events) = run_with(&plain, &mut host);
    assert_eq!(advice(&events), []);
    let own = [
        "--preset",
        "curl",
        "--base",
        "1ms",
        "-n",
        "2",
        "--throttle-if-output",
        "x",
    ];
    let mut host = FakeHost::new(vec![slow(None), slow(None)]);
    let (_, events) = run_with(&config(&own), &mut host);
    assert_eq!(advice(&events), []);
}

/// The warnings whose words contain `words`, with their attempts.
fn warnings_with(events: &[Event], words: &str) -> Vec<u32> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Warning { attempt, message } if message.contains(words) => Some(*attempt),
            _ => None,
        })
        .collect()
}

#[test]
fn a_code_a_chosen_preset_would_stop_on_named_is_retried_and_said_once() {
    use crate::codes::CodeSet;
    use crate::policy::{Attempts, Policy};
    let mut npm = config(&["--base", "1ms", "-n", "4"]);
    // npm's codes, named: 124 and 125 retried, anything else stops.
    let named = Policy::new(CodeSet::of(&[0]), Some(CodeSet::of(&[124, 125])), None);
    npm.named_codes = Some((named, "npm".to_owned()));
    let said = "exit code 1 is retried: the npm preset, chosen by the program's name";
    // A postinstall that fails twice: retried, and said once, at attempt 1.
    let mut host = FakeHost::new(vec![exit(1), exit(1), exit(0)]);
    let (code, events) = run_with(&npm, &mut host);
    assert_eq!((code, host.seen.len()), (0, 3));
    assert_eq!(warnings_with(&events, said), [1]);
    // A transient line matched first (the evidence), then a bare code: said
    // at the bare code only; a code named npm retries too is never said.
    let mut host = FakeHost::new(vec![
        exit_seeing(1, true, false),
        exit(124),
        exit(1),
        exit(0),
    ]);
    let (code, events) = run_with(&npm, &mut host);
    assert_eq!((code, host.seen.len()), (0, 4));
    assert_eq!(warnings_with(&events, "is retried: the npm preset"), [3]);
    // Not on the last attempt: nothing is retried there.
    npm.retries.attempts = Attempts::Limit(1);
    let mut host = FakeHost::new(vec![exit(1)]);
    let (_, events) = run_with(&npm, &mut host);
    assert_eq!(warnings_with(&events, said), Vec::<u32>::new());
}

#[test]
fn what_the_command_s_flags_hide_is_said_at_the_first_failure_only() {
    let mut curl = config(&["--base", "1ms", "-n", "3"]);
    curl.hidden_advice = Some("curl with -s and no -S hides the error line".to_owned());
    let mut host = FakeHost::new(vec![exit(0)]);
    let (_, events) = run_with(&curl, &mut host);
    assert_eq!(warnings_with(&events, "hides"), Vec::<u32>::new());
    let mut host = FakeHost::new(vec![exit(22), exit(22), exit(22)]);
    let (code, events) = run_with(&curl, &mut host);
    assert_eq!((code, host.seen.len()), (22, 3));
    assert_eq!(warnings_with(&events, "hides"), [1]);
    // An attempt that printed a line (a ~/.curlrc's show-error): nothing
    // was hidden then; said at the first that printed none.
    let printed = || {
        let seen = OutputSeen {
            printed: true,
            ..OutputSeen::default()
        };
        ended(Ended::Exited(Status::exited(22)), seen)
    };
    let mut host = FakeHost::new(vec![printed(), exit(22), exit(22)]);
    let (_, events) = run_with(&curl, &mut host);
    assert_eq!(warnings_with(&events, "hides"), [2]);
}

#[test]
fn stop_if_output_stops_with_its_own_status() {
    let mut host = FakeHost::new(vec![exit(1), exit_seeing(9, true, true)]);
    let (code, events) = run_with(&config(&["--base", "1ms"]), &mut host);
    assert_eq!((code, host.seen.len()), (9, 2));
    assert_eq!(
        gave_up(&events),
        &GiveUp::OutputStop {
            status: Status::exited(9),
            line: None,
            label: None
        }
    );
    // A run that gives up sends even its last attempt's held stdout to
    // stderr: a pipe downstream sees nothing of a failed run.
    assert_eq!(host.settled, [false, false]);
}

#[test]
fn output_of_an_attempt_retry_stopped_never_reaches_stdout() {
    let mut host = FakeHost::new(vec![]);
    host.attempt_ms = 50;
    let (code, _) = run_with(&config(&["--timeout", "10ms", "-n", "1"]), &mut host);
    assert_eq!(code, 124);
    assert_eq!(host.settled, [false]);
}

#[test]
fn what_a_timed_out_attempt_printed_counts() {
    // --stop-if-output: the first attempt's match ends the run.
    let mut host = FakeHost::new(vec![]);
    host.attempt_ms = 50;
    host.seen_before_timeout.stop_if = true;
    let (code, events) = run_with(&config(&["--timeout", "10ms", "-n", "3"]), &mut host);
    assert_eq!((code, host.seen.len()), (124, 1));
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::GaveUp {
                reason: GiveUp::OutputStop { .. },
                ..
            }
        )),
        "{events:?}"
    );
    // --delay-from-output: the server's hint sets the sleep.
    let mut host = FakeHost::new(vec![]);
    host.attempt_ms = 50;
    host.seen_before_timeout.hint = Some(Hint::Delay(Duration::from_secs(7)));
    let config = config(&["--timeout", "10ms", "-n", "2", "--cap", "1m"]);
    let (code, _) = run_with(&config, &mut host);
    assert_eq!(
        (code, host.sleeps.as_slice()),
        (124, &[Duration::from_secs(7)][..])
    );
}

const BUDGET: [&str; 6] = [
    "--budget",
    "ci",
    "--budget-tokens",
    "12",
    "--budget-cost",
    "5",
];

#[test]
fn the_breaker_is_asked_once_at_the_start_and_told_once_how_the_run_ended() {
    use breaker::Ended::{Failed, Neither, Succeeded};
    let with = |rest: &[&str]| {
        let args: Vec<&str> = ["--breaker", "ci", "--base", "1ms", "-n", "3"]
            .iter()
            .chain(rest)
            .copied()
            .collect();
        config(&args)
    };
    for (script, rest, told) in [
        (vec![exit(1), exit(0)], &[][..], Succeeded),
        (vec![exit(1), exit(1), exit(1)], &[], Failed),
        (vec![exit(2)], &["--fatal-on", "2"], Neither),
        (vec![exit(4)], &["--retry-on", "1"], Neither),
    ] {
        let mut host = FakeHost::new(script);
        run_with(&with(rest), &mut host);
        assert_eq!((host.asked, host.told.as_slice()), (1, &[told][..]));
    }
    // Open: nothing runs, exit 75, nothing told.
    let mut host = FakeHost::new(vec![exit(0)]);
    host.circuit_open = Some("--breaker ci: the circuit is open".into());
    let (code, events) = run_with(&with(&[]), &mut host);
    assert_eq!((code, host.seen.len(), host.told.len()), (75, 0, 0));
    assert_eq!(
        gave_up(&events),
        &GiveUp::CircuitOpen("--breaker ci: the circuit is open".into(), 75)
    );
    // --breaker-exit-code: its own status, to tell it from a command's 75.
    let mut host = FakeHost::new(vec![exit(0)]);
    host.circuit_open = Some("--breaker ci: the circuit is open".into());
    let (code, _) = run_with(&with(&["--breaker-exit-code", "99"]), &mut host);
    assert_eq!((code, host.seen.len()), (99, 0));
    // Without --breaker it is never asked.
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    run_with(&config(&["--base", "1ms"]), &mut host);
    assert_eq!((host.asked, host.told.len()), (0, 0));
}

#[test]
fn the_circuit_as_the_run_left_it_is_its_last_event() {
    let seen = SystemTime::UNIX_EPOCH + EPOCH;
    let circuit = breaker::Circuit {
        failures: 2,
        ..breaker::Circuit::default()
    };
    let args = ["--breaker", "ci", "--base", "1ms", "-n", "2"];
    // After the attempts, and when the open circuit skipped them.
    for (script, open) in [
        (vec![exit(1), exit(1)], None),
        (vec![exit(0)], Some("--breaker ci: the circuit is open")),
    ] {
        let mut host = FakeHost::new(script);
        host.circuit_open = open.map(Into::into);
        host.circuit = Some(("ci".into(), circuit, seen));
        let (_, mut events) = run_with(&config(&args), &mut host);
        let last = events.pop();
        assert!(matches!(events.last(), Some(Event::GaveUp { .. })));
        assert_eq!(
            last,
            Some(Event::CircuitSeen {
                name: "ci".into(),
                circuit,
                seen
            })
        );
    }
}

#[test]
fn a_budget_that_cannot_pay_ends_the_run_at_once() {
    let mut host = FakeHost::new((0..9).map(|_| exit(3)).collect());
    host.tokens = 12;
    let args: Vec<&str> = BUDGET
        .iter()
        .copied()
        .chain(["-n", "9", "--base", "1ms"])
        .collect();
    let (code, events) = run_with(&config(&args), &mut host);
    // 12 tokens at 5 pay for two retries; the third is refused, unslept.
    assert_eq!((code, host.seen.len(), host.sleeps.len()), (3, 3, 2));
    assert_eq!(host.budget, [-5, -5]);
    assert_eq!(gave_up(&events), &GiveUp::Budget(Status::exited(3)));
    // Without --budget, the host's budget is never asked.
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    run_with(&config(&["--base", "1ms"]), &mut host);
    assert!(host.budget.is_empty());
}

#[test]
fn successes_refund_and_timeouts_cost_as_any_transient_failure() {
    let args: Vec<&str> = BUDGET.iter().copied().chain(["--base", "1ms"]).collect();
    // First try: the budget is never asked (no +1: time refills it).
    // After retries: the last retry's cost comes back.
    let mut host = FakeHost::new(vec![exit(0)]);
    host.tokens = 12;
    run_with(&config(&args), &mut host);
    assert!(host.budget.is_empty(), "{:?}", host.budget);
    let mut host = FakeHost::new(vec![exit(1), exit(1), exit(0)]);
    host.tokens = 12;
    run_with(&config(&args), &mut host);
    assert_eq!(host.budget, [-5, -5, 5]);
    // A retry after a timeout costs 5, as any transient one (no longer
    // twice that): 12 tokens pay for two, and the third is refused.
    let mut host = FakeHost::new(vec![]);
    host.attempt_ms = 50;
    host.tokens = 12;
    let timed: Vec<&str> = args.iter().copied().chain(["--timeout", "10ms"]).collect();
    let (code, events) = run_with(&config(&timed), &mut host);
    assert_eq!((code, host.seen.len()), (124, 3));
    assert_eq!(host.budget, [-5, -5]);
    assert_eq!(gave_up(&events).reason().name(), "budget");
}

#[test]
fn a_paid_retry_that_does_not_happen_gives_its_tokens_back() {
    let args: Vec<&str> = BUDGET.iter().copied().chain(["--base", "1ms"]).collect();
    let mut host = FakeHost::new(vec![exit(1)]);
    host.tokens = 12;
    host.signal_in_sleep = Some(15);
    let (code, _) = run_with(&config(&args), &mut host);
    assert_eq!(code, 143);
    assert_eq!((host.budget.as_slice(), host.tokens), (&[-5, 5][..], 12));
}

#[test]
fn what_the_budget_says_is_logged_and_the_run_goes_on() {
    let args: Vec<&str> = BUDGET.iter().copied().chain(["--base", "1ms"]).collect();
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    host.tokens = 12;
    host.budget_says = Some("cannot lock it".into());
    let (code, events) = run_with(&config(&args), &mut host);
    assert_eq!(code, 0);
    // Each after the line of the attempt whose end asked the budget.
    let said =
        |e: &Event| matches!(e, Event::Warning { message, .. } if message == "cannot lock it");
    let lines: Vec<&str> = events
        .iter()
        .filter(|e| !matches!(e, Event::Starting { .. }))
        .map(|e| match e {
            Event::Retrying { attempt: 1, .. } => "retrying",
            Event::Succeeded { attempt: 2, .. } => "succeeded",
            e if said(e) => "said",
            _ => "other",
        })
        .collect();
    assert_eq!(lines, ["retrying", "said", "succeeded", "said"]);
    // And after the line that gives up, when it cannot pay.
    let mut host = FakeHost::new(vec![exit(1)]);
    host.tokens = 0;
    host.budget_says = Some("cannot lock it".into());
    let (_, events) = run_with(&config(&args), &mut host);
    let last: Vec<_> = events.iter().rev().take(2).collect();
    assert!(said(last[0]), "{events:?}");
    assert!(matches!(last[1], Event::GaveUp { .. }), "{events:?}");
}

#[test]
fn a_servers_hint_sets_the_sleep() {
    let s = Duration::from_secs(1);
    let mut host = FakeHost::new(vec![exit_hinting(1, Hint::Delay(s * 3)), exit(1), exit(0)]);
    // A hint makes the retry throttled: its draw is on --throttle-base.
    let c = config(&[
        "--jitter",
        "none",
        "--base",
        "10ms",
        "--throttle-base",
        "10ms",
    ]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!(code, 0);
    // The hint for the attempt that had one; the draw after one that had none.
    assert_eq!(host.sleeps, [s * 3, MS * 20]);
    let hints: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Retrying { hint, .. } => Some(*hint),
            _ => None,
        })
        .collect();
    let hinted = Hinted {
        asked: s * 3,
        drawn: MS * 10,
    };
    assert_eq!(hints, [Some(hinted), None]);
    // Longer than --cap (here 20 s): waited for, as the server asked.
    let mut host = FakeHost::new(vec![exit_hinting(1, Hint::Delay(s * 30)), exit(0)]);
    let (code, _) = run_with(&c, &mut host);
    assert_eq!((code, host.sleeps.as_slice()), (0, &[s * 30][..]));
    // Longer than the ceiling without --max-time: no retry at all.
    let mut host = FakeHost::new(vec![exit_hinting(1, Hint::Delay(s * 301))]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!((code, host.seen.len()), (1, 1));
    assert_eq!(gave_up(&events).reason().name(), "hint");
}

#[test]
fn an_unreadable_hint_is_logged_once() {
    let soon = || exit_hinting(1, Hint::Unparseable("soon".into()));
    let mut host = FakeHost::new(vec![soon(), soon(), exit(0)]);
    let (code, events) = run_with(&config(&["--base", "1ms"]), &mut host);
    assert_eq!((code, host.seen.len()), (0, 3));
    let warnings: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Warning { attempt, message } => Some((*attempt, message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].0, 1);
    assert!(warnings[0].1.contains("`soon`"), "{warnings:?}");
}

/// Each attempt's end says how long it ran (the fake clock's 40 ms);
/// an ending that came in the sleep, not with an attempt, says none.
#[test]
fn an_attempts_end_carries_its_duration() {
    let took = |events: &[Event]| -> Vec<Option<Duration>> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Retrying { took, .. } | Event::Succeeded { took, .. } => Some(Some(*took)),
                Event::GaveUp { took, .. } => Some(*took),
                _ => None,
            })
            .collect()
    };
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    host.attempt_ms = 40;
    let (_, events) = run_with(&config(&["--base", "1ms"]), &mut host);
    assert_eq!(took(&events), [Some(40 * MS), Some(40 * MS)]);
    let mut host = FakeHost::new(vec![exit(1), exit(1)]);
    host.attempt_ms = 40;
    let (_, events) = run_with(&config(&["-n", "2", "--base", "1ms"]), &mut host);
    assert_eq!(took(&events), [Some(40 * MS), Some(40 * MS)]);
    let mut host = FakeHost::new(vec![exit(1)]);
    host.attempt_ms = 40;
    host.signal_in_sleep = Some(15);
    let (_, events) = run_with(&config(&["--base", "1ms"]), &mut host);
    assert_eq!(took(&events), [Some(40 * MS), None]);
}

/// Every event is stamped when the loop makes it, by the host's clock:
/// here the fake one, which no output could read on its own.
#[test]
fn events_are_stamped_by_the_hosts_clock() {
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    host.attempt_ms = 40;
    let options = config(&["--jitter", "none", "--base", "5ms"]);
    let (_, events) = run_stamped(&options, &mut host);
    let stamps: Vec<(u64, u128)> = events
        .iter()
        .map(|e| {
            let since_epoch = e.stamp.time.duration_since(std::time::UNIX_EPOCH).unwrap();
            (
                (since_epoch - EPOCH).as_millis() as u64,
                e.stamp.elapsed.as_millis(),
            )
        })
        .collect();
    // The first attempt's end at 40 ms; the second's after a 5 ms sleep.
    assert_eq!(stamps, [(40, 40), (85, 85)], "{events:?}");
}

/// An attempt whose output showed a throttle (`throttle`) or a server's
/// wait (`hint`), exiting with `code`.
fn throttled_exit(code: i32, throttle: bool, hint: Option<Hint>) -> Result<Attempt, SpawnError> {
    let seen = OutputSeen {
        throttle,
        hint,
        ..OutputSeen::default()
    };
    ended(Ended::Exited(Status::exited(code)), seen)
}

#[test]
fn a_throttled_failure_sleeps_on_the_throttle_base_and_pays_its_cost() {
    let args = [
        "--jitter",
        "none",
        "--base",
        "10ms",
        "--throttle-base",
        "300ms",
        "--throttle-if-output",
        "429",
        "--budget",
        "ci",
        "--budget-tokens",
        "100",
    ];
    let mut host = FakeHost::new(vec![
        throttled_exit(1, true, None),
        throttled_exit(1, false, None),
        throttled_exit(1, true, None),
        exit(0),
    ]);
    host.tokens = 100;
    let (code, events) = run_with(&config(&args), &mut host);
    assert_eq!(code, 0);
    // One count of retries: 300 ms, then 10 × 2, then 300 × 4.
    assert_eq!(host.sleeps, [MS * 300, MS * 20, MS * 1200]);
    // A throttled retry costs 5, a transient one 14; the success gives
    // back what the last retry cost.
    assert_eq!(host.budget, [-5, -14, -5, 5]);
    let classes: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Retrying { class, .. } => Some(match class {
                Class::Throttled(evidence) => format!("throttled: {}", evidence.words()),
                Class::Transient => "transient".to_owned(),
            }),
            _ => None,
        })
        .collect();
    assert_eq!(
        classes,
        [
            "throttled: --throttle-if-output 429",
            "transient",
            "throttled: --throttle-if-output 429",
        ]
    );
}

#[test]
fn a_hint_alone_throttles_and_a_line_without_a_rule_does_not() {
    let args = [
        "--jitter",
        "none",
        "--base",
        "10ms",
        "--throttle-base",
        "50ms",
        "-n",
        "3",
    ];
    // A wait of 1 ms (under the draw): throttled by the hint, on its base.
    let mut host = FakeHost::new(vec![
        throttled_exit(1, false, Some(Hint::Delay(MS))),
        throttled_exit(1, true, None),
        exit(0),
    ]);
    let (code, events) = run_with(&config(&args), &mut host);
    assert_eq!(code, 0);
    // The second printed a throttle line, but no rule was set: transient.
    assert_eq!(host.sleeps, [MS * 50, MS * 20]);
    let throttled: Vec<bool> = events
        .iter()
        .filter_map(|e| match e {
            Event::Retrying { class, .. } => Some(class.is_throttled()),
            _ => None,
        })
        .collect();
    assert_eq!(throttled, [true, false]);
}

#[test]
fn a_timeouts_retry_costs_what_any_transient_one_does() {
    let args = [
        "--base",
        "1ms",
        "--budget",
        "ci",
        "--timeout",
        "10ms",
        "-n",
        "2",
    ];
    let mut host = FakeHost::new(vec![]);
    host.attempt_ms = 50;
    host.tokens = 500;
    let (code, _) = run_with(&config(&args), &mut host);
    assert_eq!((code, host.budget.as_slice()), (124, &[-14][..]));
}

/// A once-hook's variable, as the fake saw it given.
pub(super) fn var<'a>(hook: &'a OnceRun, name: &str) -> Option<&'a str> {
    let (_, value) = hook.variables.iter().find(|(n, _)| *n == name)?;
    value.as_deref()
}

/// What `--on-exit` was told: outcome, reason, exit code, attempts.
fn told(hook: &OnceRun) -> [Option<&str>; 4] {
    [
        "RETRY_OUTCOME",
        "RETRY_REASON",
        "RETRY_EXIT_CODE",
        "RETRY_ATTEMPTS",
    ]
    .map(|n| var(hook, n))
}

/// A run's attempts, its options, the circuit's refusal if open, and what
/// `--on-exit` is told.
type EndCase<'a> = (
    Vec<Result<Attempt, SpawnError>>,
    &'a [&'a str],
    Option<&'a str>,
    [&'a str; 4],
);

#[test]
fn on_exit_runs_once_whatever_ended_the_run_and_is_told_how() {
    let on_exit = ["--base", "1ms", "-n", "3", "--on-exit", "ping"];
    let with = |rest: &[&str]| config(&[&on_exit[..], rest].concat());
    let breaker = ["--breaker", "ci"];
    let cases: [EndCase; 7] = [
        // The budget's refusal: an empty fake budget.
        (
            vec![exit(1)],
            &["--budget", "b"],
            None,
            ["gave_up", "budget", "1", "1"],
        ),
        (vec![exit(0)], &[], None, ["success", "success", "0", "1"]),
        (
            vec![exit(1), exit(1), exit(0)],
            &[],
            None,
            ["success", "success", "0", "3"],
        ),
        (
            vec![exit(1), exit(2), exit(7)],
            &[],
            None,
            ["gave_up", "attempts", "7", "3"],
        ),
        (
            vec![exit(4)],
            &["--fatal-on", "4"],
            None,
            ["stopped", "fatal", "4", "1"],
        ),
        (
            vec![exit(1), exit(1)],
            &["--max-time", "3ms", "--jitter", "none"],
            None,
            ["gave_up", "max_time", "1", "2"],
        ),
        (
            vec![exit(0)],
            &breaker,
            Some("--breaker ci: the circuit is open"),
            ["skipped", "breaker", "75", "0"],
        ),
    ];
    for (script, rest, open, expected) in cases {
        let mut host = FakeHost::new(script);
        host.circuit_open = open.map(Into::into);
        let (code, _) = run_with(&with(rest), &mut host);
        assert_eq!(host.once.len(), 1, "{rest:?}");
        let hook = &host.once[0];
        assert_eq!(hook.script, "ping");
        assert_eq!(told(hook), expected.map(Some), "{rest:?}");
        assert_eq!(
            code.to_string(),
            expected[2],
            "retry's status is the one told"
        );
        assert_eq!(var(hook, "RETRY_COMMAND"), Some("cmd"));
        assert_eq!(var(hook, "RETRY_ATTEMPT"), None);
        assert!(!hook.tail && !hook.after_signal);
    }
    // Without --on-exit, nothing runs once.
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    run_with(&config(&["--base", "1ms"]), &mut host);
    assert!(host.once.is_empty());
}

#[test]
fn on_exit_after_a_signal_runs_once_the_command_is_stopped() {
    let mut host = FakeHost::new(vec![exit(1)]);
    host.signal_in_sleep = Some(15);
    let c = config(&["--on-exit", "ping", "--on-exit-stdin", "tail"]);
    let (exit, events) = run_exit(&c, &mut host);
    // retry still dies of the signal, after the hook.
    assert_eq!(exit, Exit::Signal(15));
    let hook = &host.once[0];
    // 143 on Unix; the code a Ctrl-Break ends a process with on Windows.
    let code = Exit::Signal(15).code().to_string();
    assert_eq!(
        told(hook),
        [
            Some("interrupted"),
            Some("signal"),
            Some(code.as_str()),
            Some("1")
        ]
    );
    // The next signal is the second one: it stops the hook at once.
    assert!(hook.after_signal && hook.tail);
    assert!(matches!(events.last(), Some(Event::GaveUp { .. })));
}

#[test]
fn on_exit_trouble_is_one_warning_and_never_the_exit_status() {
    for ended in [
        Ok(Ended::Exited(Status::exited(9))),
        Ok(Ended::TimedOut),
        Err(SpawnError {
            code: 127,
            message: "cannot run `ping`: command not found".into(),
        }),
    ] {
        let mut host = FakeHost::new(vec![exit(1), exit(0)]);
        host.once_ends = vec![ended];
        let (code, events) = run_with(&config(&["--base", "1ms", "--on-exit", "ping"]), &mut host);
        assert_eq!(code, 0);
        let warnings: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                Event::Warning { message, .. } => Some(message.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(warnings.len(), 1, "{events:?}");
        assert!(
            warnings[0].starts_with("--on-exit command "),
            "{warnings:?}"
        );
        // Said after the run's own last line.
        assert!(matches!(
            events.last(),
            Some(Event::Warning { attempt: 2, .. })
        ));
    }
}

#[test]
fn on_exit_is_told_the_time_since_retry_started() {
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    host.attempt_ms = 40;
    let c = config(&["--jitter", "none", "--base", "25ms", "--on-exit", "ping"]);
    run_with(&c, &mut host);
    // Two attempts of 40 ms and a sleep of 25 ms.
    assert_eq!(var(&host.once[0], "RETRY_ELAPSED_MS"), Some("105"));
    assert_eq!(host.once[0].timeout, Duration::from_secs(10));
}

#[test]
fn on_start_runs_once_before_the_first_attempt_and_its_trouble_is_a_warning() {
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    host.once_ends = vec![Ok(Ended::Exited(Status::exited(3)))];
    let c = config(&[
        "--base",
        "1ms",
        "--on-start",
        "start",
        "--on-exit",
        "end",
        "--hook-timeout",
        "2s",
    ]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!((code, host.seen.len()), (0, 2));
    let scripts: Vec<&str> = host.once.iter().map(|h| h.script.as_str()).collect();
    assert_eq!(scripts, ["start", "end"]);
    let start = &host.once[0];
    assert_eq!(start.at, Duration::ZERO);
    assert_eq!(start.timeout, Duration::from_secs(2));
    assert_eq!(var(start, "RETRY_COMMAND"), Some("cmd"));
    assert_eq!(var(start, "RETRY_ATTEMPT_LIMIT"), Some("5"));
    assert_eq!(var(start, "RETRY_OUTCOME"), None);
    assert!(matches!(
        &events[0],
        Event::Warning { message, .. }
            if message == "--on-start command failed with exit code 3; the run goes on"
    ));
}

#[test]
fn on_start_is_outside_max_time_and_not_run_for_a_skipped_run() {
    let mut host = FakeHost::new(vec![exit(0)]);
    host.hook_ms = 500;
    let c = config(&["--max-time", "100ms", "--on-start", "start"]);
    let (code, _) = run_with(&c, &mut host);
    assert_eq!((code, host.seen.len()), (0, 1));
    // The open circuit: no start, only the end.
    let mut host = FakeHost::new(vec![exit(0)]);
    host.circuit_open = Some("--breaker ci: the circuit is open".into());
    let c = config(&["--breaker", "ci", "--on-start", "start", "--on-exit", "end"]);
    run_with(&c, &mut host);
    let scripts: Vec<&str> = host.once.iter().map(|h| h.script.as_str()).collect();
    assert_eq!(scripts, ["end"]);
}

#[test]
fn a_signal_during_on_start_ends_the_run_before_any_attempt() {
    let mut host = FakeHost::new(vec![exit(0)]);
    host.once_ends = vec![Ok(Ended::Interrupted {
        signal: 2,
        status: Some(Status::signaled(2)),
    })];
    let c = config(&["--breaker", "ci", "--on-start", "start", "--on-exit", "end"]);
    let (exit, events) = run_exit(&c, &mut host);
    assert_eq!((exit, host.seen.len()), (Exit::Signal(2), 0));
    assert_eq!(
        gave_up(&events),
        &GiveUp::Signal {
            signal: 2,
            status: None,
            during: Phase::StartHook,
        }
    );
    // The breaker, which let the run start, is told it ended (as neither).
    assert_eq!(host.told, [breaker::Ended::Neither]);
    let end = &host.once[1];
    let code = Exit::Signal(2).code().to_string();
    assert_eq!(
        told(end),
        [
            Some("interrupted"),
            Some("signal"),
            Some(code.as_str()),
            Some("0")
        ]
    );
    assert!(end.after_signal);
}

/// `retry --throttle api -n 3 REST`, with `--base 1ms` unless REST sets it.
fn throttled(rest: &[&str]) -> Options {
    let base: &[&str] = match rest.contains(&"--base") {
        true => &[],
        false => &["--base", "1ms"],
    };
    let head = ["--throttle", "api", "-n", "3"];
    let args: Vec<&str> = head.iter().chain(base).chain(rest).copied().collect();
    config(&args)
}

#[test]
fn the_throttle_is_asked_before_every_attempt_and_told_each_outcome() {
    // A failure and a success: the failure's outcome goes with the second
    // ask, the success's at the end.
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    let (code, _) = run_with(&throttled(&[]), &mut host);
    assert_eq!(code, 0);
    let told: Vec<Option<bool>> = host.throttle_asked.iter().map(|(t, _)| *t).collect();
    assert_eq!(told, [None, Some(false)]);
    assert_eq!(host.throttle_told, [Some(true)]);
    // A first-try success: asked once, its accept told at the end.
    let mut host = FakeHost::new(vec![exit(0)]);
    run_with(&throttled(&[]), &mut host);
    assert_eq!(
        (host.throttle_asked.len(), host.throttle_told.as_slice()),
        (1, &[Some(true)][..])
    );
    // A permanent failure is the service's answer: accepted.
    let mut host = FakeHost::new(vec![exit(2)]);
    run_with(&throttled(&["--fatal-on", "2"]), &mut host);
    assert_eq!(host.throttle_told, [Some(true)]);
    // Attempts that ran out on a transient failure: not accepted.
    let mut host = FakeHost::new(vec![exit(1), exit(1), exit(1)]);
    run_with(&throttled(&[]), &mut host);
    assert_eq!(host.throttle_told, [Some(false)]);
    // Without --throttle it is never asked nor told.
    let mut host = FakeHost::new(vec![exit(1), exit(0)]);
    run_with(&config(&["--base", "1ms"]), &mut host);
    assert_eq!(
        (host.throttle_asked.len(), host.throttle_told.len()),
        (0, 0)
    );
}

/// The draws come from the run's seeded RNG: the same with `--seed`.
#[test]
fn the_throttle_s_draws_are_the_run_s_seeded_ones() {
    let draws = || {
        let mut host = FakeHost::new(vec![exit(1), exit(1), exit(1)]);
        run_with(&throttled(&[]), &mut host);
        host.throttle_asked
            .iter()
            .map(|(_, d)| *d)
            .collect::<Vec<f64>>()
    };
    let first = draws();
    assert_eq!(first.len(), 3);
    assert!(first.iter().all(|d| (0.0..1.0).contains(d)), "{first:?}");
    assert!(first[0] != first[1], "{first:?}");
    assert_eq!(first, draws());
}

#[test]
fn a_rejected_attempt_does_not_run_and_is_retried_after_the_backoff() {
    let mut host = FakeHost::new(vec![exit(0)]);
    host.rejects = vec![true];
    // A throttled failure's sleep: on --throttle-base, not --base.
    let c = throttled(&[
        "--jitter",
        "none",
        "--base",
        "10ms",
        "--throttle-base",
        "30ms",
    ]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!((code, host.seen.len()), (0, 1));
    assert_eq!(host.seen[0].number, 2, "the attempt after the rejected one");
    assert_eq!(host.sleeps, [MS * 30]);
    let Event::Rejected {
        attempt,
        throttle,
        probability,
        sleep,
        ..
    } = &events[0]
    else {
        panic!("{events:?}")
    };
    assert_eq!((*attempt, &**throttle, *probability), (1, "api", 0.75));
    assert_eq!(sleep.duration, MS * 30);
    assert!(matches!(
        events[1],
        Event::Succeeded {
            attempt: 2,
            slept_ms: 30,
            ..
        }
    ));
    // The rejected attempt told nothing: none ran before the second ask.
    let told: Vec<Option<bool>> = host.throttle_asked.iter().map(|(t, _)| *t).collect();
    assert_eq!(told, [None, None]);
}

#[test]
fn a_run_whose_every_attempt_was_rejected_exits_75_or_the_skipped_status() {
    for (rest, exit_code) in [(&[][..], 75), (&["--breaker-exit-code", "99"][..], 99)] {
        let mut host = FakeHost::new(vec![]);
        host.rejects = vec![true; 3];
        let (code, events) = run_with(&throttled(rest), &mut host);
        assert_eq!(
            (code, host.seen.len(), host.sleeps.len()),
            (exit_code, 0, 2)
        );
        assert_eq!(
            gave_up(&events),
            &GiveUp::Rejected {
                throttle: "api".into(),
                probability: 0.75,
                status: None,
                ran_out: crate::events::RanOut::Attempts,
                code: exit_code,
            }
        );
        assert_eq!(host.throttle_told, [None]);
    }
}

/// Attempts that ran, then a rejected last one: the command's last status,
/// and for the breaker a failed run.
#[test]
fn a_run_that_ends_rejected_after_failures_exits_with_their_status() {
    let mut host = FakeHost::new(vec![exit(4), exit(5)]);
    host.rejects = vec![false, false, true];
    let (code, events) = run_with(&throttled(&["--breaker", "ci"]), &mut host);
    assert_eq!((code, host.seen.len()), (5, 2));
    let reason = gave_up(&events);
    assert!(matches!(
        reason,
        GiveUp::Rejected {
            status: Some(s),
            ran_out: crate::events::RanOut::Attempts,
            ..
        } if *s == Status::exited(5)
    ));
    assert_eq!(host.told, [breaker::Ended::Failed]);
    // The last attempt that ran was told with the ask that rejected the next.
    assert_eq!(host.throttle_asked[2].0, Some(false));
    assert_eq!(host.throttle_told, [None]);
}

#[test]
fn a_rejection_gives_up_on_max_time_and_the_budget_as_a_failure_does() {
    use crate::events::RanOut;
    // The sleep after it would end past --max-time.
    let mut host = FakeHost::new(vec![]);
    host.rejects = vec![true];
    let c = throttled(&[
        "--jitter",
        "none",
        "--throttle-base",
        "2s",
        "--max-time",
        "1s",
    ]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!(code, 75);
    assert!(matches!(
        gave_up(&events),
        GiveUp::Rejected {
            ran_out: RanOut::MaxTime { sleep_ms: 2000 },
            ..
        }
    ));
    // The budget pays a throttled retry's cost for the retry after a
    // rejection, and refuses the next.
    let mut host = FakeHost::new(vec![exit(3)]);
    host.tokens = 5;
    host.rejects = vec![true, true];
    let args = [
        "--budget",
        "ci",
        "--budget-tokens",
        "5",
        "--budget-cost",
        "5",
        "--budget-throttle-cost",
        "4",
    ];
    let (code, events) = run_with(&throttled(&args), &mut host);
    assert_eq!(
        (code, host.seen.len(), host.budget.as_slice()),
        (75, 0, &[-4][..])
    );
    assert!(matches!(
        gave_up(&events),
        GiveUp::Rejected {
            ran_out: RanOut::Budget,
            ..
        }
    ));
}

#[test]
fn the_throttle_s_warning_is_logged_and_what_it_saw_is_the_last_event() {
    let seen = throttle::Seen {
        probability: 0.5,
        requests: 4.0,
        accepts: 1.0,
        at: SystemTime::UNIX_EPOCH + EPOCH,
    };
    let mut host = FakeHost::new(vec![exit(0)]);
    host.throttle_says = Some("--throttle api: the store failed".into());
    host.throttle_seen = Some(("api".into(), seen));
    let (_, events) = run_with(&throttled(&[]), &mut host);
    assert_eq!(
        events[0],
        Event::Warning {
            attempt: 1,
            message: "--throttle api: the store failed".into()
        }
    );
    assert_eq!(
        events.last(),
        Some(&Event::ThrottleSeen {
            name: "api".into(),
            seen
        })
    );
}
