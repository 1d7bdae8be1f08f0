//! The end-to-end promises that hold on every platform, with no program
//! but retry and the project's own helper (`tests/helper/main.rs`): the
//! same tests run natively on Linux and, in .ci/windows, under wine.
//! Exit codes, success after retries, `--stdin replay` and
//! `--stdout-once` byte for byte, `-s`, and a timeout that stops the
//! command's whole tree (a grandchild included).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::harness::helper;

/// retry with `args`, then `--` and the helper with `steps`, its stdin
/// `input`; RETRY_* variables of the caller's are not passed on.
fn run(args: &[&str], steps: &[&str], input: &[u8]) -> Output {
    let mut command = Command::new(bin());
    command.args(args).arg("--").arg(helper()).args(steps);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("RETRY_") {
            command.env_remove(key);
        }
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("retry starts");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    output
}

/// The retry under test: `RETRY_BIN_UNDER_TEST` names another build, as
/// for the rest of the suite (`harness::bin`: the aarch64 build under qemu).
fn bin() -> String {
    std::env::var("RETRY_BIN_UNDER_TEST").unwrap_or_else(|_| env!("CARGO_BIN_EXE_retry").to_owned())
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn path(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_string_lossy().into_owned()
}

#[test]
fn the_commands_exit_code_passes_through() {
    let out = run(&["-n", "1"], &["exit", "7"], b"");
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    let out = run(&["-n", "1"], &["out", "fine", "exit", "0"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, b"fine");
    // 0xC0000005 (an access violation): whole on Windows; Unix keeps its
    // low byte.
    let out = run(&["-n", "1"], &["exit", "3221225477"], b"");
    let whole = if cfg!(windows) {
        0xC000_0005_u32 as i32
    } else {
        5
    };
    assert_eq!(out.status.code(), Some(whole), "{out:?}");
}

#[test]
fn a_command_that_fails_twice_succeeds_on_the_third_attempt() {
    let dir = scratch();
    let counter = path(&dir, "count");
    let out = run(
        &["-n", "5", "--base", "1ms"],
        &["count", &counter, "3", "exit", "0"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "3");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("attempt 3/5 succeeded"), "{log}");
}

#[test]
fn replayed_stdin_and_held_stdout_are_byte_exact() {
    let dir = scratch();
    let counter = path(&dir, "count");
    // Every byte value, CR LF and a lone LF: nothing may be translated.
    let input: Vec<u8> = (0..=255u8).chain(*b"\r\nend\n").collect();
    let out = run(
        &[
            "-n",
            "3",
            "--base",
            "1ms",
            "--stdin",
            "replay",
            "--stdout-once",
        ],
        &["cat", "count", &counter, "3", "exit", "0"],
        &input,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "3");
    // Three attempts read the same input; only the last one's output is shown.
    assert!(out.stdout == input, "stdout differs from the input");
}

#[test]
fn a_shell_script_runs_through_the_platforms_shell() {
    // `exit 5` means the same to `sh -c` and to `cmd /d /s /c`.
    let mut command = Command::new(bin());
    let out = command
        .args(["-n", "1", "-s", "--", "exit 5"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{out:?}");
}

#[test]
fn a_timeout_stops_the_grandchild_too() {
    // The grandchild would write `survived` after `late`; the timeout stops
    // the tree long before. A machine too busy to start it within the
    // timeout (wine on a loaded machine) is given a longer one.
    for timeout_ms in [300u64, 1000, 3000] {
        let dir = scratch();
        let pid = path(&dir, "pid");
        let survived = path(&dir, "survived");
        let late = (timeout_ms * 3 + 500).to_string();
        let start = Instant::now();
        let out = run(
            &["-n", "1", "--timeout", &format!("{timeout_ms}ms")],
            &[
                "child", &pid, "4", "sleep", &late, "touch", &survived, "sleep", "60000",
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(124), "{out:?}");
        if !Path::new(&pid).exists() {
            continue; // stopped before the grandchild started: look again
        }
        let wait = Duration::from_millis(timeout_ms * 3 + 800);
        std::thread::sleep(wait.saturating_sub(start.elapsed()));
        assert!(
            !Path::new(&survived).exists(),
            "the grandchild outlived the timeout"
        );
        return;
    }
    panic!("the grandchild never started, even within 3 s");
}

#[test]
fn output_written_after_the_attempt_still_arrives() {
    // The command ends at once; its child writes 2 s later, through a pipe
    // retry reads (an output condition). retry waits 0.5 s for that pipe
    // to close, then hands it to a copy (`cat`; on Windows retry itself)
    // and exits: the late output arrives after retry has gone.
    let dir = scratch();
    let pid = path(&dir, "pid");
    let mut retry = Command::new(bin())
        .args(["-n", "1", "--retry-if-output", "never-printed", "--"])
        .arg(helper())
        .args([
            "child", &pid, "4", "sleep", "2000", "out", "late", "out", "now",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = retry.stdout.take().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let reader = {
        let seen = std::sync::Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 64];
            while let Ok(n @ 1..) = std::io::Read::read(&mut stdout, &mut buf) {
                seen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    assert_eq!(retry.wait().unwrap().code(), Some(0));
    let at_exit = seen.lock().unwrap().clone();
    reader.join().unwrap();
    assert_eq!(String::from_utf8_lossy(&seen.lock().unwrap()), "nowlate");
    assert!(
        !at_exit.ends_with(b"late"),
        "retry waited for the late output instead of handing it off"
    );
}

#[test]
#[cfg(windows)]
#[ignore = "needs a real Windows console: .github/workflows/ci.yml runs it"]
#[allow(unsafe_code)] // GenerateConsoleCtrlEvent
fn ctrl_break_stops_the_tree_and_exits_0xc000013a() {
    use std::os::windows::process::CommandExt;
    use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, GenerateConsoleCtrlEvent};
    use windows_sys::Win32::System::Threading::CREATE_NEW_PROCESS_GROUP;
    let dir = scratch();
    let pid = path(&dir, "pid");
    let survived = path(&dir, "survived");
    let mut retry = Command::new(bin())
        .args(["-n", "1", "--kill-after", "200ms", "--"])
        .arg(helper())
        .args(["child", &pid, "4", "sleep", "3000", "touch", &survived])
        .args(["sleep", "20000"])
        .stdin(Stdio::null())
        .creation_flags(CREATE_NEW_PROCESS_GROUP)
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !Path::new(&pid).exists() {
        assert!(start.elapsed() < Duration::from_secs(20), "no grandchild");
        std::thread::sleep(Duration::from_millis(10));
    }
    let sent = Instant::now();
    // SAFETY: no memory involved; retry leads the group it names.
    let ok = unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, retry.id()) };
    assert_ne!(ok, 0, "{}", std::io::Error::last_os_error());
    let status = retry.wait().unwrap();
    assert_eq!(status.code(), Some(0xC000_013A_u32 as i32));
    std::thread::sleep(Duration::from_millis(3500).saturating_sub(sent.elapsed()));
    assert!(
        !Path::new(&survived).exists(),
        "the grandchild outlived Ctrl-Break"
    );
}

#[test]
fn the_log_file_and_the_budget_state_are_written() {
    let dir = scratch();
    let log = path(&dir, "retry.log");
    let counter = path(&dir, "count");
    // The budget's per-user directory: $XDG_RUNTIME_DIR/retry, and on
    // Windows %LOCALAPPDATA%\retry.
    let mut command = Command::new(bin());
    let out = command
        .args(["-n", "3", "--base", "1ms", "--log-file", &log])
        .args(["--budget", "portable", "--"])
        .arg(helper())
        .args(["count", &counter, "2", "exit", "0"])
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("LOCALAPPDATA", dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains("attempt 2/3 succeeded"), "{written}");
    let state = dir.path().join("retry").join("portable");
    assert!(state.is_file(), "no budget state at {}", state.display());
}

#[test]
fn output_conditions_and_the_servers_hint_read_the_pipes() {
    // A success whose output says "busy" is retried; the line's hint
    // (250ms) is the least sleep; CR LF line ends are lines too.
    let start = Instant::now();
    let out = run(
        &["-n", "2", "--base", "1ms", "--retry-if-output", "^busy$"],
        &[
            "out",
            "busy\r\n",
            "err",
            "Retry-After: 250ms\r\n",
            "exit",
            "0",
        ],
        b"",
    );
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("giving up after 2 attempts"), "{log}");
    let hinted = run(
        &[
            "-n",
            "2",
            "--base",
            "1ms",
            "--delay-from-output",
            "Retry-After: (\\S+)",
        ],
        &["err", "Retry-After: 250ms\r\n", "exit", "3"],
        b"",
    );
    let log = String::from_utf8_lossy(&hinted.stderr).into_owned();
    assert_eq!(hinted.status.code(), Some(3), "{log}");
    assert!(log.contains("sleep: 250 ms"), "{log}");
    assert!(start.elapsed() >= Duration::from_millis(250));
}

#[test]
fn the_on_retry_hook_runs_through_the_platforms_shell() {
    // `echo` means the same to sh and cmd; the hook's output goes to stderr.
    let dir = scratch();
    let counter = path(&dir, "count");
    let out = run(
        &[
            "-n",
            "3",
            "--base",
            "1ms",
            "--on-retry",
            "echo hooked %RETRY_EXIT_CODE%$RETRY_EXIT_CODE",
        ],
        &["count", &counter, "2", "exit", "0"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let log = String::from_utf8_lossy(&out.stderr);
    // sh leaves `%RETRY_EXIT_CODE%` as it is, cmd leaves `$RETRY_EXIT_CODE`.
    let expected = if cfg!(windows) {
        "hooked 1$RETRY_EXIT_CODE"
    } else {
        "hooked %RETRY_EXIT_CODE%1"
    };
    assert!(log.contains(expected), "{log}");
}

#[test]
fn a_missing_command_is_127_and_never_retried() {
    let out = Command::new(bin())
        .args(["-n", "3", "--", "retry-no-such-program-here"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("command not found"), "{log}");
}

#[test]
fn max_time_stops_a_running_attempt_and_a_failed_run_prints_nothing_held() {
    let start = Instant::now();
    let out = run(
        &["-n", "5", "--max-time", "300ms", "--stdout-once"],
        &["out", "partial", "sleep", "10000", "exit", "0"],
        b"",
    );
    assert_eq!(out.status.code(), Some(124), "{out:?}");
    assert!(
        start.elapsed() < Duration::from_secs(8),
        "{:?}",
        start.elapsed()
    );
    assert!(out.stdout.is_empty(), "{out:?}");
}

/// `retry -- npm ...`: a `.cmd` on PATH runs by its bare name, as in cmd
/// (std alone finds `.exe` files only).
#[test]
#[cfg(windows)]
fn a_script_on_path_runs_by_its_bare_name() {
    let dir = scratch();
    std::fs::write(dir.path().join("retry-test-tool.cmd"), "@exit /b 9\r\n").unwrap();
    let mut path = vec![dir.path().to_owned()];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let out = Command::new(bin())
        .args(["-n", "1", "--", "retry-test-tool"])
        .env("PATH", std::env::join_paths(path).unwrap())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(9), "{out:?}");
}
