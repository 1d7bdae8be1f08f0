//! The invariants, judged from a scenario and what its run left.

use std::collections::BTreeSet;

use super::run::{Exit, GONE_WITHIN, Observed, State, WATCHDOG};
use super::scenario::{Expected, LogFault, Reader, Scenario, Tmp};
use nix::sys::signal::Signal;

/// How stdout relates to what the attempts printed.
#[derive(Debug, PartialEq, Eq)]
enum Fit {
    /// Exactly what they printed (with `--stdout-once`: the last attempt).
    Whole,
    /// Nothing (with `--stdout-once`: its output went to stderr).
    Empty,
    /// A proper prefix of it: bytes are missing at the end.
    Cut(usize),
    /// Bytes no attempt printed there.
    Wrong(String),
}

/// Without `--stdout-once` stdout is every attempt's output in turn; an
/// attempt that was stopped before the end of its output left a prefix of it
/// (whole writes: empty or at least its header).
fn fit_in_turn(s: &Scenario, state: &State, stdout: &[u8], pattern: &[u8]) -> Fit {
    let mut at = 0;
    for &number in &state.started {
        let expected = s.output(number, pattern);
        let rest = &stdout[at..];
        let matched = expected.common_prefix(rest);
        if matched == expected.len() {
            at += matched;
        } else if !state.done.contains(&number) {
            // A stop may cut its output anywhere after the header.
            at += if matched < expected.head.len() {
                0
            } else {
                matched
            };
        } else if matched == rest.len() {
            return Fit::Cut(stdout.len());
        } else {
            return Fit::Wrong(format!(
                "attempt {number}'s output differs from its byte {matched} on (stdout byte {})",
                at + matched
            ));
        }
    }
    match (at, stdout.len()) {
        (_, 0) => Fit::Empty,
        (at, len) if at == len => Fit::Whole,
        (at, len) => Fit::Wrong(format!(
            "{} bytes after the attempts' output (from stdout byte {at})",
            len - at
        )),
    }
}

/// With `--stdout-once` stdout is the last attempt's output or nothing.
fn fit_once(s: &Scenario, state: &State, stdout: &[u8], pattern: &[u8]) -> Fit {
    let Some(&last) = state.started.last() else {
        return if stdout.is_empty() {
            Fit::Empty
        } else {
            Fit::Wrong("output, but no attempt ran".into())
        };
    };
    let expected = s.output(last, pattern);
    let matched = expected.common_prefix(stdout);
    match (stdout.len(), matched == stdout.len()) {
        (0, _) => Fit::Empty,
        (len, true) if len == expected.len() => Fit::Whole,
        (len, true) => Fit::Cut(len),
        _ => {
            let earlier = state.started.iter().find(|&&n| {
                let output = s.output(n, pattern);
                n != last && output.common_prefix(stdout) >= output.head.len()
            });
            Fit::Wrong(match earlier {
                Some(n) => format!("it holds the output of attempt {n}, not of the last ({last})"),
                None => format!("it differs from the last attempt's output at byte {matched}"),
            })
        }
    }
}

pub fn check(s: &Scenario, o: &Observed, pattern: &[u8]) -> Vec<String> {
    let mut violations = Vec::new();
    let mut violation = |text: String| violations.push(text);

    if o.hung {
        violation(format!("hang: retry still ran after {WATCHDOG:?} (killed)"));
    }
    if o.held_open {
        violation(format!(
            "retry's stdout or stderr was still open {GONE_WITHIN:?} after it ended"
        ));
    }
    // Invariant 2: nothing of the run is left.
    for survivor in &o.survivors {
        violation(format!(
            "{survivor} was alive {GONE_WITHIN:?} after retry ended"
        ));
    }
    // Invariant 3: no temporary file is left.
    if !o.tmp_left.is_empty() {
        violation(format!("TMPDIR holds {:?} after the run", o.tmp_left));
    }
    // Invariant 5: a process retry adopted that is not the command's is
    // never stopped.
    if let Some((pid, false)) = o.bystander {
        violation(format!(
            "the bystander daemon {pid}, adopted by retry during the run, was killed"
        ));
    }
    // A --log-file that cannot be opened without waiting: refused, and
    // nothing ran; the other invariants have nothing to judge.
    if s.log == Some(LogFault::Fifo) {
        let refused = o.exit == Exit::Code(2)
            && o.state.started.is_empty()
            && String::from_utf8_lossy(&o.stderr).contains("--log-file");
        // (A signal may come first: then nothing ran either.)
        let stopped_first = o.signal_sent && o.state.started.is_empty();
        if !(refused || stopped_first) {
            violation(format!(
                "a --log-file FIFO without a reader was not refused: {}, attempts {:?}",
                o.exit, o.state.started
            ));
        }
        return violations;
    }
    // An unusable --budget is said once (in the log), and changes nothing
    // else. The budget is opened at the first retry (a first-try success,
    // or a run that never retries, costs nothing and opens nothing), so a
    // run with a second attempt said it exactly once, and any run at most
    // once (a signal in the sleep can stop a run that did open it).
    // A store that trickles its answers is the same: one warning, once.
    let budget_fault = s.budget_unusable || s.store_trickles || s.state.budget_record.is_some();
    if budget_fault && s.log.is_none() {
        let said = String::from_utf8_lossy(&o.stderr)
            .matches("running without the budget")
            .count();
        let retried = o.state.started.len() > 1;
        if said > 1 || (retried && said != 1) {
            violation(format!(
                "the unusable --budget was said {said} times, not once, in a run of {} attempts",
                o.state.started.len()
            ));
        }
    }
    // A presets file that cannot be trusted or read is never waited on (a
    // hang is caught above), is said at most once (before the first
    // attempt, when the lookup reads it), and once by a run that gave up
    // with its last line on stderr, and its preset is never taken.
    if s.presets.is_some() {
        let stderr = String::from_utf8_lossy(&o.stderr);
        let said = stderr.matches("warning: the presets file").count();
        let gave_up = matches!(o.exit, Exit::Code(code) if code != 0)
            && !o.signal_sent
            && s.log.is_none()
            && s.reader == Reader::Fast;
        if said > 1 || (gave_up && said != 1) {
            violation(format!(
                "the presets file set aside was said {said} times, not {}",
                if gave_up { "once" } else { "at most once" }
            ));
        }
        if stderr.contains("--preset chaos") || stderr.contains("chaos preset") {
            violation("a preset from a presets file that cannot be trusted was taken".into());
        }
    }
    super::state::check(s, o, &mut violation);
    if s.log == Some(LogFault::Full) {
        let warnings = String::from_utf8_lossy(&o.stderr)
            .matches("cannot write to --log-file")
            .count();
        if warnings > 1 {
            violation(format!(
                "{warnings} warnings about the full --log-file, not one"
            ));
        }
    }
    for number in &o.state.mismatched {
        violation(format!(
            "attempt {number} read a stdin different from retry's input (--stdin replay)"
        ));
    }

    // Invariant 1: the exit status.
    let stdout_broken = s.reader == Reader::Full || o.closed_early;
    let cannot_keep = s.tmpdir != Tmp::Fresh && s.spills();
    let said_so = o.stderr.windows(7).any(|w| w == b"retry: ");
    // A circuit open far ahead skips the run: 75, nothing run.
    let codes = match s.state.skips() {
        true => BTreeSet::from([75]),
        false => s.possible_codes(),
    };
    // Whether a write to stdout must have failed: /dev/full takes no byte.
    // A reader that closed after `limit` bytes fails only the writes made
    // after it closed; more than `limit` plus what the pipe holds cannot all
    // have been written before (less may have been: then nothing failed).
    let written = written(s, &o.state, pattern);
    let must_fail = match s.reader {
        Reader::Full => Some("stdout is /dev/full".to_owned()),
        Reader::ClosesAfter(0) if written > 0 => {
            Some("stdout was closed before retry started".into())
        }
        Reader::ClosesAfter(limit)
            if o.closed_early && written > limit.saturating_add(o.pipe_capacity) =>
        {
            Some(format!(
                "its reader closed it after {limit} bytes, and the pipe holds {}",
                o.pipe_capacity
            ))
        }
        _ => None,
    };
    match o.exit {
        Exit::Code(0) if !codes.contains(&0) => {
            violation(format!("exit 0, but only {codes:?} are possible"));
        }
        Exit::Code(0) if must_fail.is_some() => violation(format!(
            "exit 0, though writing the {written} bytes of stdout must have failed: {}",
            must_fail.as_deref().unwrap_or_default()
        )),
        Exit::Code(0) => {}
        Exit::Code(code) => {
            let documented = codes.contains(&code)
                // The command's writes failed: its code is its own.
                || stdout_broken
                || (code == 125 && cannot_keep);
            if !documented {
                violation(format!(
                    "exit {code}, not a status this run allows: {codes:?}{}",
                    if cannot_keep { " or 125" } else { "" }
                ));
            }
            if !said_so {
                violation(format!("exit {code} without a `retry:` line on stderr"));
            }
        }
        Exit::Signal(n) => {
            let sent = o.signal_sent && s.signal.is_some_and(|(signal, _)| signal == n);
            // A reader that went away is a quiet end, as for any pipeline.
            let pipe = n == Signal::SIGPIPE as i32 && o.closed_early;
            if !sent && !pipe {
                violation(format!("{}, a signal nobody sent", o.exit));
            }
            // Before its handlers exist retry dies silently; then no attempt has started.
            if sent && !o.state.started.is_empty() && !said_so {
                violation(format!("{} without a `retry:` line on stderr", o.exit));
            }
        }
    }

    // Invariant 4: stdout, then held-back and late output.
    let late = s.has_late_output();
    let stdout = if late {
        strip_late(&o.stdout)
    } else {
        o.stdout.clone()
    };
    let stderr = if late {
        strip_late(&o.stderr)
    } else {
        o.stderr.clone()
    };
    let fit = match s.reader {
        Reader::Full => Fit::Empty, // /dev/full: nothing to compare
        _ if s.stdout_once => fit_once(s, &o.state, &stdout, pattern),
        _ => fit_in_turn(s, &o.state, &stdout, pattern),
    };
    let last = o.state.started.last().copied();
    let last_done = last.is_some_and(|n| o.state.done.contains(&n));
    match (&fit, o.exit) {
        (Fit::Wrong(why), _) => {
            violation(format!("stdout is not what the attempts printed: {why}"))
        }
        (Fit::Whole, Exit::Code(0)) if last_done => {}
        // Everything may have been written before the reader closed.
        (Fit::Cut(_), Exit::Code(0)) if o.closed_early && must_fail.is_none() => {}
        // With a failed write, the exit status is the violation (above).
        (_, Exit::Code(0)) if must_fail.is_none() => violation(format!(
            "exit 0, but stdout is {fit:?} ({} bytes) of the {written} bytes the attempts printed",
            stdout.len(),
        )),
        // Cut short under the command's own status passes off a lost tail
        // as the command's output; 125 says retry could not keep it.
        (Fit::Cut(at), exit) if !stdout_broken && !o.signal_sent && exit != Exit::Code(125) => {
            violation(format!(
                "stdout cut short after {at} bytes ({exit}), though its reader took everything and no signal came"
            ))
        }
        _ => {}
    }
    // With --stdout-once a run that gave up sends nothing down the pipe. (A
    // signal, a closed reader or 125 may cut the success's output short.)
    let gave_up = matches!(o.exit, Exit::Code(code) if code != 0 && code != 125);
    if s.stdout_once && gave_up && !stdout_broken && !stdout.is_empty() {
        violation(format!(
            "{}, but {} bytes of held-back output reached stdout",
            o.exit,
            stdout.len()
        ));
    }
    if s.stdout_once && !o.signal_sent {
        for &number in &o.state.started {
            let is_last = Some(number) == last;
            let on_stdout = is_last && matches!(fit, Fit::Whole | Fit::Cut(_));
            // Output that could not be kept or written is not looked for.
            let excused = is_last && (o.exit == Exit::Code(125) || stdout_broken);
            if o.state.done.contains(&number)
                && !on_stdout
                && !excused
                && let Some(problem) = on_stderr_once(&s.output(number, pattern), number, &stderr)
            {
                violation(format!("attempt {number}'s held-back output {problem}"));
            }
        }
    }
    if late && !o.signal_sent && !stdout_broken {
        for &(number, at) in &o.state.late_written {
            let line = format!("@late{number}\n").into_bytes();
            let times = count(&o.stdout, &line) + count(&o.stderr, &line);
            if times != 1 {
                violation(format!(
                    "the line a background process of attempt {number} wrote after it ended ({}) is on stdout and stderr {times} times, not once",
                    relative(at, o.ended_at)
                ));
            }
        }
        for &(number, at) in &o.state.late_lost {
            violation(format!(
                "the line a background process of attempt {number} wrote after it ended was lost: its write failed with EPIPE ({}), nobody read the pipe",
                relative(at, o.ended_at)
            ));
        }
    }
    violations
}

/// The bytes that reached stdout's pipe for certain: the output of every
/// attempt that finished its output (with `--stdout-once`, the last one's).
fn written(s: &Scenario, state: &State, pattern: &[u8]) -> usize {
    let counted = if s.stdout_once {
        &state.started[state.started.len().saturating_sub(1)..]
    } else {
        &state.started[..]
    };
    counted
        .iter()
        .filter(|n| state.done.contains(n))
        .map(|&n| s.output(n, pattern).len())
        .sum()
}

/// When a late line was written, against retry's end (seen within 5 ms).
fn relative(at: u128, ended_at: u128) -> String {
    let ms = |ns: u128| ns / 1_000_000;
    if at >= ended_at {
        format!("{} ms after retry exited", ms(at - ended_at))
    } else {
        format!("{} ms before retry exited", ms(ended_at - at))
    }
}

/// `None` if `expected` is on stderr whole and once; else what is wrong.
fn on_stderr_once(expected: &Expected<'_>, number: usize, stderr: &[u8]) -> Option<String> {
    let header = format!("#a{number}\n").into_bytes();
    let places = find_all(stderr, &header);
    match places.as_slice() {
        [] => Some("is missing from stderr".into()),
        [at] => {
            let matched = expected.common_prefix(&stderr[*at..]);
            (matched < expected.len()).then(|| {
                format!(
                    "on stderr differs from its byte {matched} on (of {})",
                    expected.len()
                )
            })
        }
        more => Some(format!("is on stderr {} times", more.len())),
    }
}

fn find_all(haystack: &[u8], needle: &[u8]) -> Vec<usize> {
    let first = needle[0];
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = haystack[from..].iter().position(|&b| b == first) {
        let at = from + i;
        if haystack[at..].starts_with(needle) {
            found.push(at);
        }
        from = at + 1;
    }
    found
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    find_all(haystack, needle).len()
}

/// Removes the lines background processes wrote late (`@lateN\n`): where
/// they land is checked apart, and they may land inside other output.
fn strip_late(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut from = 0;
    for at in find_all(bytes, b"@late") {
        if at < from {
            continue;
        }
        let digits = bytes[at + 5..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = at + 5 + digits;
        if digits > 0 && bytes.get(end) == Some(&b'\n') {
            out.extend_from_slice(&bytes[from..at]);
            from = end + 1;
        }
    }
    out.extend_from_slice(&bytes[from..]);
    out
}

mod tests {
    use super::*;

    #[test]
    fn late_lines_are_cut_out_wherever_they_land() {
        assert_eq!(strip_late(b"#a1\n01@late2\n23\n@late10\n"), b"#a1\n0123\n");
        // Not a whole late line: left alone.
        assert_eq!(strip_late(b"@late\n@late3"), b"@late\n@late3");
        assert_eq!(find_all(b"xx#a1\n#a1\n", b"#a1\n"), [2, 6]);
    }
}
