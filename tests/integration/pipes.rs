//! Pipelines: `--stdin`, `--stdout-once` and the output conditions, with
//! what retry promises when none of them is given (no pipe of its own).
//! The commands are the project's helper where it can do what sh did, so
//! those tests run under wine too; the rest are gated test by test.

// Off Unix, some of these serve only the tests that are Unix-only.
#![cfg_attr(not(unix), allow(dead_code, unused_imports))]

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

#[cfg(unix)]
use nix::sys::signal::Signal;

#[cfg(unix)]
use crate::harness::{assert_all_gone, assert_died_of, fail_times, send, wait_for_file};
use crate::harness::{count, fails, retry, scratch};

// --stdin: inherit, null, replay, and a stdin unreadable or too long.
mod stdin;

/// More than the 64 MiB a spool keeps in memory.
const OVER_MEMORY_LIMIT: usize = 70 << 20;

/// Distinct, binary bytes: every value 0..=255, in an order that is not periodic in 256.
fn binary(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

/// How many unlinked temporary files process `pid` holds open.
#[cfg(target_os = "linux")]
const SPILLED: &str = "ls -l /proc/$PPID/fd | grep -c '(deleted)'";
/// Off Linux there is no /proc/PID/fd to count them in: an empty line,
/// and the tests compare the count on Linux only.
#[cfg(not(target_os = "linux"))]
const SPILLED: &str = "echo";

fn is_empty_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

#[test]
#[cfg(unix)] // an sh script, named by its start in the lines
fn stdout_once_writes_only_the_last_attempts_output() {
    let script =
        "printf 'partial %s' $RETRY_ATTEMPT; [ $RETRY_ATTEMPT = 3 ] || exit 1; echo ' complete'";
    let out = retry(&["--stdout-once", "--base", "1ms", "sh", "-c", script]).run();
    out.code(0).stdout_is("partial 3 complete\n");
    // Earlier attempts' output goes to stderr, each before its own log
    // line, which starts a line of its own though the output did not end one.
    out.stderr_has("partial 1\nretry: `printf 'partial %s' $RE…`: attempt 1/5 failed")
        .stderr_has("partial 2\nretry: `printf 'partial %s' $RE…`: attempt 2/5 failed");
    assert!(!out.stderr.contains("partial 3"), "{out:#?}");
    // Nothing is added where retry's lines go elsewhere (or nowhere).
    let out = retry(&["--stdout-once", "-q", "--base", "1ms", "sh", "-c", script]).run();
    out.code(0).stderr_is("partial 1partial 2");
    let dir = scratch();
    let log = dir.path().join("log").display().to_string();
    let args = [
        "--stdout-once",
        "--log-file",
        &log,
        "--base",
        "1ms",
        "sh",
        "-c",
        script,
    ];
    retry(&args).run().code(0).stderr_is("partial 1partial 2");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged.lines().count(), 3, "{logged}");
    assert!(logged.starts_with("retry: `printf"), "{logged}");
}

#[test]
fn a_log_line_after_streamed_stderr_without_a_newline_starts_a_line() {
    let out = retry(&[
        "--retry-if-output",
        "nothing",
        "-n",
        "2",
        "--jitter",
        "none",
        "--base",
        "1ms",
        "--",
    ])
    .helper(&["err", "{\"id\":", "exit", "1"])
    .run();
    let name = crate::harness::helper();
    let name = name.file_name().unwrap().to_string_lossy();
    out.code(1).stderr_is(&format!(
        "{{\"id\":\nretry: {name}: attempt 1/2 failed with exit code 1; \
         sleep: 1 ms (no jitter, up to 1 ms)\n\
         {{\"id\":\nretry: {name}: giving up after 2 attempts: the last failed with exit code 1 (reason: attempts)\n",
    ));
}

#[test]
#[cfg(unix)] // TMPDIR and sh (portable.rs checks replay and --stdout-once byte for byte)
fn stdout_once_is_binary_safe_and_spills_past_the_memory_limit() {
    let dir = scratch();
    let blob = dir.path().join("blob");
    let bytes = binary(OVER_MEMORY_LIMIT);
    std::fs::write(&blob, &bytes).unwrap();
    let script = format!("cat {}; [ $RETRY_ATTEMPT = 2 ]", blob.display());
    let out = retry(&["--stdout-once", "-q", "--base", "1ms", "sh", "-c", &script]).output();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout == bytes,
        "stdout differs from the last attempt's output"
    );
    assert!(
        out.stderr == bytes,
        "stderr differs from the first attempt's output"
    );
    // Where it cannot be held in full, none of it reaches stdout, and the
    // run fails loudly instead of sending the rest to stderr.
    let script = format!("cat {}", blob.display());
    let out = retry(&["--stdout-once", "-n", "1", "sh", "-c", &script])
        .env("TMPDIR", "/nonexistent")
        .output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(out.stdout.is_empty(), "partial output reached stdout");
    assert!(
        stderr.starts_with("retry: --stdout-once: cannot hold back stdout")
            && stderr.contains("TMPDIR=/nonexistent")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
}

/// Under `ulimit -v` (48 MiB of address space: three times what a run
/// needs, far from the 64 MiB a spool may keep in memory), 80 MiB held
/// back spill to the file as soon as memory cannot grow, and reach stdout
/// whole; with no room for the file either, the run stops with 125 and one
/// line. Before, the allocator's failure aborted retry (134).
#[test]
#[cfg(target_os = "linux")] // `ulimit -v`: macOS refuses RLIMIT_AS
fn stdout_once_spills_when_memory_runs_out_or_stops_with_125() {
    const HELD: usize = 80 << 20;
    let (tmp, out_dir) = (scratch(), scratch());
    // Its streams go to files, and the wait is bounded: a retry that
    // aborts can hang in the allocator.
    let run = |tmpdir: &Path| {
        let (stdout, stderr) = (out_dir.path().join("stdout"), out_dir.path().join("stderr"));
        let mut child = Command::new("sh")
            .args(["-c", "ulimit -v 49152 && exec \"$0\" \"$@\""])
            .arg(crate::harness::bin())
            .args(["--stdout-once", "-n", "1", "--", "head", "-c"])
            .arg(HELD.to_string())
            .arg("/dev/zero")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TMPDIR", tmpdir)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let status = crate::harness::wait_bounded(&mut child, Duration::from_secs(30));
        std::process::Output {
            status,
            stdout: std::fs::read(&stdout).unwrap(),
            stderr: std::fs::read(&stderr).unwrap(),
        }
    };
    let out = run(tmp.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr, "");
    assert_eq!(out.stdout.len(), HELD);
    assert!(
        out.stdout.iter().all(|&b| b == 0),
        "stdout is not what was held"
    );
    assert!(is_empty_dir(tmp.path()), "a spill file was left in TMPDIR");
    let out = run(Path::new("/nonexistent"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(out.stdout.is_empty(), "partial output reached stdout");
    assert!(
        stderr.starts_with("retry: --stdout-once: cannot hold back stdout")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
}

#[test]
#[cfg(unix)] // SIGTERM
fn stdout_once_on_sigterm_drops_held_output_and_leaves_no_file() {
    let dir = scratch();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let started = dir.path().join("started");
    let pid = dir.path().join("pid");
    // Enough output to spill to a file, then wait to be stopped (with the
    // output closed, so a survivor fails `gone_soon` rather than hold the pipes).
    let script = format!(
        "head -c {OVER_MEMORY_LIMIT} /dev/zero; echo; echo $$ > {}; {SPILLED} > {}; exec sleep 100 >/dev/null 2>&1",
        pid.display(),
        started.display()
    );
    let child = retry(&["--stdout-once", "sh", "-c", &script])
        .env("TMPDIR", &tmp)
        .spawn();
    let spilled = wait_for_file(&started);
    if cfg!(target_os = "linux") {
        // SPILLED counts on Linux only
        assert_eq!(spilled, "1\n", "stdout did not spill to a file");
    }
    send(&child, Signal::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_died_of(out.status, Signal::SIGTERM, &out);
    assert!(
        out.stdout.is_empty(),
        "a stopped attempt's output reached stdout"
    );
    // Dropped, not written: a signal ends the run promptly.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = format!(
        "held-back stdout ({} bytes) is dropped",
        OVER_MEMORY_LIMIT + 1
    );
    assert!(stderr.contains(&said), "{stderr}");
    assert!(!out.stderr.contains(&0), "held output reached stderr");
    assert!(is_empty_dir(&tmp), "a spill file was left in TMPDIR");
    assert_all_gone(&std::fs::read_to_string(&pid).unwrap(), "SIGTERM to retry");
}

#[test]
#[cfg(unix)] // sh branches on the count
fn retry_if_output_on_stdout_retries_a_success() {
    let dir = scratch();
    let script = format!(
        "{}; [ $(cat {}) = 1 ] && echo 'rate limit exceeded' || echo done",
        fail_times(dir.path(), 0, 1),
        dir.path().join("count").display()
    );
    let out = retry(&[
        "--retry-if-output",
        "rate limit",
        "--base",
        "1ms",
        "sh",
        "-c",
        &script,
    ])
    .run();
    // The output streams through as usual; only the verdict changes.
    out.code(0)
        .stdout_is("rate limit exceeded\ndone\n")
        .stderr_has("attempt 1/5 failed with exit code 0 and output matching --retry-if-output (counted as exit code 1)");
    assert_eq!(count(dir.path()), 2);
}

#[test]
fn stop_if_output_on_stderr_stops_with_the_commands_status() {
    let out = retry(&["--stop-if-output", "(?i)Permission Denied", "--"])
        .helper(&["err", "error: permission denied\n", "exit", "3"])
        .run();
    out.code(3)
        .stderr_has("error: permission denied\n")
        .stderr_has(
            "giving up after attempt 1/5 (exit code 3): its output matched --stop-if-output",
        )
        .stderr_lines(2);
}

#[test]
#[cfg(unix)] // an sh script
fn what_an_attempt_printed_counts_when_a_timeout_stops_it() {
    // It printed the stop condition, then hung until --timeout stopped it:
    // the match ends the run after one attempt, with the timeout's status.
    let script = "echo 'error: permission denied'; sleep 5";
    let out = retry(&["-n3", "-t", "200ms", "--stop-if-output", "denied"])
        .args(&["sh", "-c", script])
        .run();
    out.code(124)
        .stdout_is("error: permission denied\n")
        .stderr_has("giving up after attempt 1/3 (timeout after 200ms (exit code 124)): its output matched --stop-if-output");
    assert!(out.elapsed < Duration::from_secs(3), "{:?}", out.elapsed);
    // A server's hint printed before the timeout sets the sleep.
    let script = "echo 'Retry-After: 0.05'; sleep 5";
    let out = retry(&[
        "-n2",
        "-t",
        "200ms",
        "--base",
        "1ms",
        "--throttle-base",
        "1ms",
    ])
    .args(&[
        "--delay-from-output",
        "Retry-After: (.*)",
        "sh",
        "-c",
        script,
    ])
    .run();
    out.code(124)
        .stderr_has("sleep: 50 ms (server asked for 50 ms)");
}

#[test]
#[cfg(unix)] // a signal
fn a_signal_ends_the_run_promptly_and_drops_the_held_output() {
    // 64 MiB held back, then SIGTERM while nobody reads retry's stderr:
    // writing the held output there would keep retry alive indefinitely.
    let dir = scratch();
    let ready = dir.path().join("ready");
    let script = format!(
        "head -c 67108864 /dev/zero; echo > {}; sleep 100",
        ready.display()
    );
    let mut child = retry(&["--stdout-once", "sh", "-c", &script]).spawn();
    wait_for_file(&ready);
    let sent = Instant::now();
    send(&child, Signal::SIGTERM);
    let status = crate::harness::wait_bounded(&mut child, Duration::from_secs(10));
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(15)
    );
    let (_, stderr) = crate::harness::outputs(&mut child);
    assert!(
        stderr.contains("--stdout-once: the attempt's held-back stdout (64 MiB) is dropped: a signal ends the run"),
        "{stderr}"
    );
    assert!(stderr.len() < 1000, "held output reached stderr");
}

#[test]
fn stdout_once_sends_nothing_of_a_failed_run_down_the_pipe() {
    // Every attempt prints half a body and fails: `| jq` would choke on it
    // and, under pipefail, report its own status instead of curl's.
    let out = retry(&["-n2", "--base", "1ms", "--stdout-once"])
        .args(&["--"])
        .helper(&["out", "{\"items\": [1,", "exit", "18"])
        .run();
    out.code(18).stdout_is("");
    let bodies = out.stderr.lines().filter(|l| *l == "{\"items\": [1,");
    assert_eq!(bodies.count(), 2, "{}", out.stderr);
    // A run that succeeds writes the successful attempt's stdout once.
    let dir = scratch();
    let mut steps = vec!["out".to_owned(), "body ".to_owned(), "env".to_owned()];
    steps.push("RETRY_ATTEMPT".to_owned());
    steps.extend(fails(dir.path(), 1, 1));
    let out = retry(&["-n2", "--base", "1ms", "--stdout-once", "--"])
        .helper(&steps)
        .run();
    out.code(0).stdout_is("body 2\n").stderr_has("body 1\n");
}

#[test]
fn a_match_split_across_two_writes_is_found() {
    // Two writes 50 ms apart reach retry as two reads.
    let out = retry(&[
        "--retry-if-output",
        "^rate limit$",
        "-n",
        "2",
        "--base",
        "1ms",
        "--",
    ])
    .helper(&["out", "rate li", "sleep", "50", "out", "mit\n", "exit", "0"])
    .run();
    // Still matching when the attempts ran out: the run failed, whatever the code said.
    out.code(1)
        .stdout_is("rate limit\nrate limit\n")
        .stderr_has("attempt 1/2 failed with exit code 0 and output matching")
        .stderr_has("giving up after 2 attempts: the last failed with exit code 0 and output matching --retry-if-output (counted as exit code 1)");
}

#[test]
#[cfg(unix)] // an sh script that waits for a file
fn output_conditions_stream_output_as_it_is_produced() {
    let dir = scratch();
    let go = dir.path().join("go");
    // The command prints a line, then waits for the test to have read it.
    let script = format!(
        "echo first; i=0; while [ ! -e {go} ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; [ -e {go} ] && echo streamed || echo buffered",
        go = go.display()
    );
    let mut child = retry(&["--retry-if-output", "never", "sh", "-c", &script]).spawn();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "first\n");
    std::fs::write(&go, "").unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "streamed\n");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
#[cfg(target_os = "linux")] // /proc/PID/fd
fn without_pipeline_flags_the_command_gets_retrys_own_stdio() {
    // The command's fds 0, 1 and 2 are the very pipes retry was given.
    let script = "for fd in 0 1 2; do [ \"$(readlink /proc/$$/fd/$fd)\" = \"$(readlink /proc/$PPID/fd/$fd)\" ] && printf same, || printf other,; done";
    retry(&["sh", "-c", script])
        .stdin(Stdio::piped())
        .run()
        .code(0)
        .stdout_is("same,same,same,");
    retry(&["--stdout-once", "--stdin", "replay", "sh", "-c", script])
        .input("")
        .run()
        .code(0)
        .stdout_is("other,other,same,");
}

#[test]
fn a_bad_regex_is_bad_usage_and_runs_nothing() {
    let dir = scratch();
    let marker = dir.path().join("ran");
    let out = retry(&["--stop-if-output", "(oops", "--"])
        .helper(&[Path::new("touch"), marker.as_path()])
        .run();
    out.code(2)
        .stderr_is("retry: invalid value '(oops' for '--stop-if-output <REGEX>': unclosed group\n");
    assert!(!marker.exists());
}

/// `retry ARGS...` as a bare `Command`, for tests that give it stdio of their own.
fn retry_command(args: &[&str]) -> Command {
    let mut command = Command::new(crate::harness::bin());
    command.args(args).stdin(Stdio::null());
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("RETRY_") {
            command.env_remove(key);
        }
    }
    command
}

/// Waits for `child`, killing it and failing the test after 10 s: a
/// regression here means retry hangs, and the test must say so, not hang too.
#[track_caller]
fn wait_at_most_10s(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("retry was still running after 10 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// retry ended as a command killed by SIGPIPE does, as the shell sees it (141).
#[cfg(unix)]
fn as_if_sigpipe(status: ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.code() == Some(128 + Signal::SIGPIPE as i32)
        || status.signal() == Some(Signal::SIGPIPE as i32)
}

#[test]
#[cfg(target_os = "linux")] // /dev/full: Linux (macOS has none)
fn output_that_cannot_be_written_to_stdout_is_exit_125() {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    // Held back, then released into a full device.
    let out = retry_command(&["-n", "1", "--stdout-once", "echo", "hi"])
        .stdout(full())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert_eq!(
        stderr,
        "retry: cannot write the command's output to stdout: No space left on device; exiting with 125 (reason: io)\n"
    );
    // Streamed through the output conditions.
    let out = retry_command(&["-n", "1", "--retry-if-output", "ZZZ", "echo", "hi"])
        .stdout(full())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(
        stderr.starts_with("retry: cannot write the command's stdout: No space left on device")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
}

#[test]
#[cfg(unix)] // SIGPIPE
fn a_reader_that_goes_away_stops_the_command_as_without_retry() {
    // `retry ... -- yes | head -c4`, on stdout and on stderr: once the reader
    // is gone, yes gets SIGPIPE and the run ends.
    for (stream, script) in [("stdout", "exec yes"), ("stderr", "exec yes >&2")] {
        let mut child = retry_command(&["-n", "1", "--retry-if-output", "ZZZ", "sh", "-c", script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe: Box<dyn Read> = match stream {
            "stdout" => Box::new(child.stdout.take().unwrap()),
            _ => Box::new(child.stderr.take().unwrap()),
        };
        let mut four = [0u8; 4];
        pipe.read_exact(&mut four).unwrap();
        assert_eq!(&four, b"y\ny\n");
        drop(pipe);
        let status = wait_at_most_10s(&mut child);
        assert!(as_if_sigpipe(status), "{stream}: {status:?}");
    }
    // Held-back stdout released to a reader that is already gone.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = retry_command(&["-n", "1", "--stdout-once", "echo", "hi"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_at_most_10s(&mut child);
    assert!(as_if_sigpipe(status), "release: {status:?}");
}

#[test]
#[cfg(unix)] // head, tr and sh
fn long_lines_are_matched_whole_up_to_1_mib_and_never_falsely_anchored() {
    // Only the status and stderr are shown on failure: stdout is megabytes.
    let run = |args: &[&str]| {
        let out = retry(args).output();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // A 200 KB line of `a`s ending in `b`, then a line past the 1 MiB limit
    // of `a`s and a `b`: no piece of either may pass for a line of `a`s.
    let script = "head -c 200000 /dev/zero | tr '\\0' a; echo b; \
                  head -c 1100000 /dev/zero | tr '\\0' a; echo b";
    let (code, stderr) = run(&["-n", "1", "--retry-if-output", "^a+$", "sh", "-c", script]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    // A match straddling the old 64 KiB pieces, deep inside a long line.
    let script = "head -c 524284 /dev/zero | tr '\\0' x; printf 'rate limit'; \
                  head -c 300000 /dev/zero | tr '\\0' x; echo; exit 3";
    let (code, stderr) = run(&["--stop-if-output", "rate limit", "sh", "-c", script]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("its output matched --stop-if-output"),
        "{stderr}"
    );
}

#[test]
#[cfg(unix)] // an sh background job (portable.rs checks the hand-off)
fn stdout_once_writes_late_output_of_a_background_process_to_stderr() {
    let dir = scratch();
    let go = dir.path().join("go");
    // The background process writes only once retry has exited.
    let script = format!(
        "(i=0; while [ ! -e {go} ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; echo late) & echo now",
        go = go.display()
    );
    let mut child = retry_command(&["--stdout-once", "sh", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_at_most_10s(&mut child);
    assert_eq!(status.code(), Some(0));
    std::fs::write(&go, "").unwrap();
    let (stdout, stderr) = crate::harness::outputs(&mut child);
    assert_eq!(stdout, "now\n");
    assert_eq!(stderr, "late\n");
}

#[test]
#[cfg(unix)] // head and sh
fn output_a_slow_reader_has_not_taken_yet_is_still_matched_and_written() {
    let dir = scratch();
    let done = dir.path().join("done");
    // 100 kB and the matching line fit in the pipes between the command and
    // this test, so the command exits while retry still has them to write.
    let script = format!(
        "head -c 100000 /dev/zero; echo; echo 'rate limit'; touch {}",
        done.display()
    );
    let mut child = retry_command(&[
        "-n",
        "1",
        "--retry-if-output",
        "rate limit",
        "sh",
        "-c",
        &script,
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for_file_to_exist(&done);
    // Longer than retry's half-second grace for pipes left open.
    std::thread::sleep(Duration::from_millis(700));
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let status = wait_at_most_10s(&mut child);
    assert_eq!(stdout.len(), 100_000 + 1 + 11, "output was lost");
    assert_eq!(status.code(), Some(1), "the matching line was not matched");
}

#[track_caller]
fn wait_for_file_to_exist(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}
