//! `--stdin`: inherit, null and replay, replay's spill past the memory
//! limit, and a stdin that is unreadable, too long or endless. Moved out of
//! pipes.rs (issue 51) so each file stays under 800 lines; its gates are
//! pipes.rs's, and test by test.

// Off Unix, some of these serve only the tests that are Unix-only.
#![cfg_attr(not(unix), allow(dead_code, unused_imports))]

use std::process::{Command, Stdio};

use super::{OVER_MEMORY_LIMIT, SPILLED, binary, is_empty_dir};
use crate::harness::{count, fails, retry, scratch};

#[test]
fn stdin_inherit_leaves_a_later_attempt_what_the_first_did_not_read() {
    let out = retry(&["-n", "2", "--base", "1ms", "--"])
        .helper(&["cat", "exit", "1"])
        .input("only once\n")
        .run();
    out.code(1).stdout_is("only once\n");
}

#[test]
fn stdin_null_gives_every_attempt_an_empty_stdin() {
    // retry's own stdin has bytes; the command reads none of them.
    let out = retry(&["--stdin", "null", "-n", "2", "--base", "1ms"])
        .input("not for the command\n")
        .args(&["--"])
        .helper(&[
            "cat",
            "out",
            "read by ",
            "env",
            "RETRY_ATTEMPT",
            "exit",
            "1",
        ])
        .run();
    out.code(1).stdout_is("read by 1\nread by 2\n");
    // A stdin that never ends (a terminal, a stalled pipe) does not hang it either.
    let (_keep_open, reader) = std::io::pipe().unwrap();
    retry(&["--stdin", "null", "--"])
        .helper(&["cat"])
        .stdin(reader)
        .run()
        .code(0)
        .stdout_is("");
}

#[test]
fn stdin_replay_feeds_the_same_bytes_to_every_attempt() {
    let dir = scratch();
    let mut steps = vec!["cat".to_owned()];
    steps.extend(fails(dir.path(), 2, 1));
    let out = retry(&["--stdin", "replay", "--base", "1ms", "--"])
        .helper(&steps)
        .input("a few bytes\n")
        .run();
    out.code(0).stdout_is("a few bytes\n".repeat(3).as_str());
    assert_eq!(count(dir.path()), 3);
}

#[test]
fn stdin_replay_of_nothing_is_an_empty_stdin_each_time() {
    // Each attempt copies what it read, then a comma: nothing between.
    let dir = scratch();
    let mut steps = vec!["cat".to_owned(), "out".to_owned(), ",".to_owned()];
    steps.extend(fails(dir.path(), 2, 1));
    let out = retry(&["--stdin", "replay", "--base", "1ms", "--"])
        .helper(&steps)
        .input("")
        .run();
    out.code(0).stdout_is(",,,");
    assert_eq!(count(dir.path()), 3);
}

#[test]
#[cfg(unix)] // an sh script; the spill files are counted in /proc
fn stdin_replay_over_the_memory_limit_spills_and_leaves_no_file() {
    let dir = scratch();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let expected = dir.path().join("expected");
    let input = binary(OVER_MEMORY_LIMIT);
    std::fs::write(&expected, &input).unwrap();
    // Each attempt compares its stdin with the input byte for byte and
    // counts retry's unlinked spill files.
    let script = format!(
        "cmp - {} && {SPILLED}; [ $RETRY_ATTEMPT = 2 ]",
        expected.display()
    );
    let out = retry(&["--stdin", "replay", "--base", "1ms", "sh", "-c", &script])
        .env("TMPDIR", &tmp)
        .input(input)
        .run();
    // The first attempt may still be reading while the spill happens; the second cannot.
    out.code(0);
    #[cfg(target_os = "linux")] // SPILLED counts on Linux only
    assert!(out.stdout.ends_with("\n1\n"), "{out:#?}");
    assert!(!out.stderr.contains("differ"), "{out:#?}");
    assert!(is_empty_dir(&tmp), "a spill file was left in TMPDIR");
}

#[test]
#[cfg(unix)] // an sh producer and script
fn stdin_replay_starts_the_first_attempt_before_stdin_ends() {
    let dir = scratch();
    let started = dir.path().join("started");
    // The producer finishes its input only once the first attempt has
    // started: were retry to wait for the end of stdin, it would print `late`.
    let mut producer = Command::new("sh")
        .args(["-c", "echo first; i=0; while [ ! -e \"$1\" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; [ -e \"$1\" ] && echo second || echo late", "sh"])
        .arg(&started)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let script = format!("touch {}; cat", started.display());
    let out = retry(&["--stdin", "replay", "sh", "-c", &script])
        .stdin(producer.stdout.take().unwrap())
        .run();
    producer.wait().unwrap();
    out.code(0).stdout_is("first\nsecond\n");
}

#[test]
#[cfg(unix)] // an sh script
fn stdin_replay_of_an_unreadable_stdin_fails_and_feeds_no_attempt() {
    let dir = scratch();
    // A directory: reading it fails at once. No attempt may take that for
    // an empty input; any attempt that started is stopped (here by
    // --timeout at the latest) before wc can print a count.
    let out = retry(&[
        "--stdin",
        "replay",
        "-n",
        "3",
        "--base",
        "1ms",
        "--timeout",
        "1s",
        "sh",
        "-c",
        "wc -c; exit 1",
    ])
    .stdin(std::fs::File::open(dir.path()).unwrap())
    .run();
    out.code(125)
        .stdout_is("")
        .stderr_is("retry: --stdin replay: cannot read stdin: Is a directory; the attempt was stopped so it never sees a truncated input; exiting with 125 (reason: io)\n");
}

#[test]
#[cfg(unix)] // sh scripts and /dev/null
fn stdin_longer_than_the_limit_reaches_the_live_attempt_and_fails_a_retry() {
    let limit_args = [
        "--stdin",
        "replay",
        "--stdin-limit",
        "1KiB",
        "--base",
        "1ms",
    ];
    // At the limit: kept whole, replayed whole. (BSD's and macOS's `wc`
    // pad the count with spaces; GNU's does not.)
    let count = "wc -c | tr -d ' '";
    let script = format!("{count}; [ $RETRY_ATTEMPT = 2 ]");
    let script = script.as_str();
    retry(&limit_args)
        .args(&["-n2", "sh", "-c", script])
        .input(vec![b'x'; 1024])
        .run()
        .code(0)
        .stdout_is("1024\n1024\n");
    // One byte more: the first attempt reads it all as it comes, so a
    // command that succeeds never notices the limit...
    retry(&limit_args)
        .args(&["sh", "-c", count])
        .input(vec![b'x'; 1025])
        .run()
        .code(0)
        .stdout_is("1025\n")
        .stderr_is("");
    // ...but a retry could get only what was kept: none runs, and the run
    // fails naming the option and the limit.
    let out = retry(&limit_args)
        .args(&["-n2", "sh", "-c", script])
        .input(vec![b'x'; 1025])
        .run();
    out.code(125).stdout_is("1025\n").stderr_has(
        "retry: --stdin replay: stdin is longer than --stdin-limit 1 KiB: an earlier attempt read it as it came, but a retry would get only the part that was kept, so none is run with a truncated input",
    );
    // The environment sets it too.
    let out = retry(&["-n2", "--base", "1ms", "sh", "-c", "cat >/dev/null; exit 1"])
        .env("RETRY_STDIN", "replay")
        .env("RETRY_STDIN_LIMIT", "1500")
        .input(vec![b'x'; 1501])
        .run();
    out.code(125).stderr_has("--stdin-limit 1500 bytes");
}

#[test]
#[cfg(unix)] // head and sh
fn an_endless_stdin_ends_the_run_at_the_limit_instead_of_filling_the_disk() {
    let dir = scratch();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut yes = Command::new("yes").stdout(Stdio::piped()).spawn().unwrap();
    // The first attempt reads past the limit and fails: the retry that would
    // need that input ends the run (--max-time is a watchdog that would end
    // it with another status).
    let out = retry(&[
        "--stdin",
        "replay",
        "--stdin-limit",
        "2MiB",
        "-n",
        "unlimited",
        "--base",
        "1ms",
        "--cap",
        "1ms",
        "--max-time",
        "3s",
        "-q",
        "sh",
        "-c",
        "head -c 3000000 >/dev/null; exit 1",
    ])
    .env("TMPDIR", &tmp)
    .stdin(yes.stdout.take().unwrap())
    .run();
    let _ = yes.kill();
    let _ = yes.wait();
    out.code(125).stderr_has("--stdin-limit 2 MiB");
    assert!(is_empty_dir(&tmp), "a spill file was left in TMPDIR");
}
