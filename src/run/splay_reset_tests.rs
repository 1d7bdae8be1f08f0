//! The loop's tests of `--splay` and `--reset-after`, against the
//! scripted host of `fake.rs`.

use std::ffi::OsStr;
use std::time::Duration;

use super::*;
use crate::run::fake::*;
use crate::run::tests::{config, var};

const S: Duration = Duration::from_secs(1);

/// The numbers of the attempts the host ran, in order.
fn numbers(host: &FakeHost) -> Vec<u32> {
    host.seen.iter().map(|a| a.number).collect()
}

/// What `--splay 10s` (`max`) draws with `--seed 1` for `cmd`.
fn drawn(max: Duration, stable: bool) -> Duration {
    splay::Splay { max, stable }.delay(Some(1), [OsStr::new("cmd")])
}

#[test]
fn a_long_attempt_resets_the_backoff_and_the_count() {
    let args = ["--jitter", "none", "--base", "10ms", "-n", "3"];
    let script = || (0..6).map(|_| exit(1)).collect::<Vec<_>>();
    let long = [1, 1, 200, 1, 1, 1];
    // Without --reset-after, three failures end the run.
    let mut host = FakeHost::new(script());
    host.durations = long.to_vec();
    let (code, _) = run_with(&config(&args), &mut host);
    assert_eq!((code, numbers(&host)), (1, vec![1, 2, 3]));
    // With it, the third ran 200 ms: the next is attempt 1 again, after
    // the first sleep; then three quick failures in a row end the run.
    let mut host = FakeHost::new(script());
    host.durations = long.to_vec();
    let c = config(&[&args[..], &["--reset-after", "100ms", "--on-exit", "ping"]].concat());
    let (code, events) = run_with(&c, &mut host);
    assert_eq!((code, numbers(&host)), (1, vec![1, 2, 3, 1, 2, 3]));
    assert_eq!(host.sleeps, [MS * 10, MS * 20, MS * 10, MS * 20, MS * 40]);
    // Said once, after the failed attempt's line, with how long it ran.
    let resets: Vec<_> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::Reset { .. }))
        .collect();
    assert_eq!(resets.len(), 1, "{events:?}");
    let (at, reset) = resets[0];
    assert!(matches!(reset, Event::Reset { attempt: 3, ran, .. } if *ran == MS * 200));
    assert!(matches!(events[at - 1], Event::Retrying { attempt: 3, .. }));
    assert_eq!(gave_up(&events), &GiveUp::Attempts(Status::exited(1)));
    // --on-exit counts the whole run's attempts.
    assert_eq!(var(&host.once[0], "RETRY_ATTEMPTS"), Some("6"));
}

#[test]
fn a_single_attempt_budget_restarts_after_each_long_run() {
    // -n 1: a long run that fails is followed by another; a quick
    // failure ends the run.
    let mut host = FakeHost::new(vec![exit(1), exit(1), exit(1)]);
    host.durations = vec![500, 500, 1];
    let c = config(&["-n", "1", "--base", "1ms", "--reset-after", "500ms"]);
    let (code, events) = run_with(&c, &mut host);
    assert_eq!((code, numbers(&host)), (1, vec![1, 1, 1]));
    assert_eq!(gave_up(&events), &GiveUp::Attempts(Status::exited(1)));
    // A success after a long run ends it as ever.
    let mut host = FakeHost::new(vec![exit(0)]);
    host.durations = vec![900];
    let (code, events) = run_with(&c, &mut host);
    assert_eq!((code, numbers(&host)), (0, vec![1]));
    assert!(!events.iter().any(|e| matches!(e, Event::Reset { .. })));
}

#[test]
fn a_reset_draws_decorrelated_jitter_from_the_base_again() {
    // Decorrelated jitter's sleeps grow from the previous one; after a
    // reset the next is drawn in [base, 3 × base] again.
    let args = ["--jitter", "decorrelated", "--base", "10ms", "--cap", "1h"];
    let c = config(&[&args[..], &["-n", "unlimited", "--reset-after", "1s"]].concat());
    let mut script: Vec<_> = (0..12).map(|_| exit(1)).collect();
    script.push(exit(0));
    let mut host = FakeHost::new(script);
    host.durations = [vec![1; 10], vec![2000], vec![1; 2]].concat();
    let (code, _) = run_with(&c, &mut host);
    assert_eq!(code, 0);
    assert_eq!(
        numbers(&host),
        [(1..=11).collect::<Vec<_>>(), vec![1, 2]].concat()
    );
    let after_reset = host.sleeps[10];
    assert!(
        (MS * 10..=MS * 30).contains(&after_reset),
        "{:?}",
        host.sleeps
    );
    // Ten growing draws before it reached well past that.
    assert!(host.sleeps[9] > MS * 30, "{:?}", host.sleeps);
}

#[test]
fn max_time_still_bounds_a_run_of_resets() {
    let mut host = FakeHost::new((0..50).map(|_| exit(1)).collect());
    host.attempt_ms = 200;
    let c = config(&[
        "--base",
        "1ms",
        "-n",
        "2",
        "--reset-after",
        "100ms",
        "--max-time",
        "1s",
    ]);
    let (code, events) = run_with(&c, &mut host);
    // Five attempts of 200 ms, the fifth stopped at the limit.
    assert!(
        matches!(gave_up(&events), GiveUp::MaxTimeReached(_)),
        "{events:?}"
    );
    assert_eq!((code, host.elapsed), (124, S));
    // Every attempt ran long: each was attempt 1 of its streak.
    assert_eq!(numbers(&host), [1; 5]);
}

#[test]
fn the_splay_comes_first_and_counts_in_max_time() {
    let delay = drawn(S * 10, false);
    assert!(delay < S * 10);
    let mut host = FakeHost::new(vec![]);
    host.attempt_ms = 60_000;
    host.hook_ms = 500;
    let c = config(&["--splay", "10s", "--max-time", "11s", "--on-start", "ping"]);
    let (code, events) = run_with(&c, &mut host);
    // The splay, then --on-start, then attempt 1, stopped at --max-time:
    // 11 s after the run began, plus --on-start's own 500 ms.
    assert_eq!(host.sleeps[0], delay);
    assert_eq!(host.once[0].at, delay);
    assert_eq!(host.elapsed, S * 11 + MS * 500);
    assert_eq!(code, 124);
    let max = S * 10;
    assert_eq!(
        events[0],
        Event::Splay {
            delay,
            max,
            stable: false
        }
    );
    assert_eq!(numbers(&host), [1]);
}

#[test]
fn a_splay_leaves_the_seeded_schedule_as_it_was() {
    let args = ["--base", "1s", "--cap", "1m"];
    let script = || vec![exit(1), exit(1), exit(1), exit(0)];
    let mut plain = FakeHost::new(script());
    run_with(&config(&args), &mut plain);
    let mut splayed = FakeHost::new(script());
    run_with(
        &config(&[&args[..], &["--splay", "5s"]].concat()),
        &mut splayed,
    );
    assert_eq!(splayed.sleeps[0], drawn(S * 5, false));
    assert_eq!(splayed.sleeps[1..], plain.sleeps[..]);
}

#[test]
fn a_signal_in_the_splay_ends_the_run_before_anything_runs() {
    let mut host = FakeHost::new(vec![exit(0)]);
    host.signal_in_sleep = Some(15);
    let c = config(&[
        "--splay",
        "1h",
        "--on-start",
        "a",
        "--on-exit",
        "b",
        "--breaker",
        "c",
    ]);
    let (exit, events) = run_exit(&c, &mut host);
    assert_eq!(exit, Exit::Signal(15));
    assert!(host.seen.is_empty() && host.asked == 0 && host.told.is_empty());
    let scripts: Vec<&str> = host.once.iter().map(|h| h.script.as_str()).collect();
    assert_eq!(scripts, ["b"]);
    assert_eq!(var(&host.once[0], "RETRY_OUTCOME"), Some("interrupted"));
    assert_eq!(var(&host.once[0], "RETRY_ATTEMPTS"), Some("0"));
    assert!(host.once[0].after_signal);
    assert!(matches!(
        gave_up(&events),
        GiveUp::Signal {
            signal: 15,
            status: None,
            during: Phase::Splay
        }
    ));
}

#[test]
fn a_stable_splay_is_the_hosts_slot_not_the_seeds_draw() {
    let mut host = FakeHost::new(vec![exit(0)]);
    let (code, events) = run_with(&config(&["--splay", "5m", "--splay-stable"]), &mut host);
    assert_eq!(code, 0);
    let delay = drawn(S * 300, true);
    assert_eq!(host.sleeps, [delay]);
    assert_eq!(
        delay,
        splay::Splay {
            max: S * 300,
            stable: true
        }
        .delay(Some(2), [OsStr::new("cmd")])
    );
    assert!(matches!(events[0], Event::Splay { stable: true, .. }));
}
