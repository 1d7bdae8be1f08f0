//! The end-to-end promises that hold on every platform, with no program
//! but retry and the project's own helper (`tests/helper/main.rs`): the
//! same tests run natively on Linux and, in .ci/windows, under wine.
//! Exit codes, success after retries, `--stdin replay` and
//! `--stdout-once` byte for byte, `-s`, and a timeout that stops the
//! command's whole tree (a grandchild included).

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::harness::{Finished, Spoiled, again_if_wine_spoiled, retry, wine_spoiled};

/// retry with `args`, then `--` and the helper with `steps`, its stdin
/// `input`; RETRY_* variables of the caller's are not passed on. Through
/// the harness, so a run wine spoiled runs again (`harness::wine_spoiled`).
fn run(args: &[&str], steps: &[&str], input: &[u8]) -> Output {
    retry(args)
        .args(&["--"])
        .helper(steps)
        .input(input)
        .output()
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
    retry(&["-n", "1", "-s", "--", "exit 5"]).run().code(5);
}

#[test]
fn a_shell_script_and_its_hook_are_named_by_the_script_on_every_platform() {
    // Not `cmd.exe` on Windows: the script, as `sh -c`'s is on Unix.
    let out = retry(&[
        "-n",
        "2",
        "--base",
        "1ms",
        "--on-retry",
        "exit 3",
        "-s",
        "--",
        "exit 5",
    ])
    .run();
    out.code(5)
        .stderr_has("retry: `exit 5`: attempt 1/2 failed with exit code 5;")
        .stderr_has(
            "retry: `exit 5`: --on-retry command failed with exit code 3 after attempt 1/2;",
        )
        .stderr_has("retry: `exit 5`: giving up after 2 attempts");
    assert!(!out.stderr.contains("cmd"), "{out:#?}");
}

/// A crash (0xC0000005), `exit /b -1`, Ctrl-C's 0xC000013A, .NET's
/// unhandled exception (0xE0434352), 256: on Windows, failures that are
/// retried like any other, and that CODES name whole.
#[test]
#[cfg(windows)]
fn whole_windows_exit_codes_are_retried_and_listed() {
    let codes = [
        ("3221225477", "0xC0000005"),
        ("-1", "0xFFFFFFFF"),
        ("3221225786", "0xC000013A"),
        ("3762504530", "0xE0434352"),
        ("256", "256"),
    ];
    for (code, shown) in codes {
        let whole = code
            .parse::<i32>()
            .unwrap_or_else(|_| code.parse::<u32>().unwrap().cast_signed());
        helper_run(&["-n", "3", "--base", "1ms"], &["exit", code])
            .code(whole)
            .stderr_has(&format!("attempt 2/3 failed with exit code {shown};"))
            .stderr_has(&format!(
                "giving up after 3 attempts: the last failed with exit code {shown} "
            ));
    }
    // Listed in hex, in decimal, or negative as %ERRORLEVEL% shows them.
    let retry_on = ["-n", "3", "--base", "1ms", "--retry-on", "0xc0000005"];
    helper_run(&retry_on, &["exit", "3221225477"]).stderr_has("giving up after 3 attempts");
    helper_run(&["-n", "3", "--fatal-on=-1,0xE0434352"], &["exit", "-1"])
        .code(-1)
        .stderr_has("giving up after attempt 1/3: exit code 0xFFFFFFFF is fatal (--fatal-on)");
    helper_run(
        &["-n", "3", "--success-on", "0,3221225786"],
        &["exit", "3221225786"],
    )
    .code(0xC000_013A_u32.cast_signed())
    .stderr_is("");
}

/// Unix keeps its codes at 0..=255 (a parent sees the low byte); hex is
/// read there too.
#[test]
#[cfg(unix)]
fn unix_exit_code_lists_stop_at_255_and_read_hex() {
    helper_run(&["--retry-on", "0xC0000005"], &["exit", "0"])
        .code(2)
        .stderr_has("exit code `0xC0000005` is out of range 0-255");
    helper_run(
        &["-n", "2", "--base", "1ms", "--retry-on", "0x4B"],
        &["exit", "75"],
    )
    .code(75)
    .stderr_has("giving up after 2 attempts");
}

/// retry with `args`, then `--` and the helper with `steps`.
fn helper_run(args: &[&str], steps: &[&str]) -> Finished {
    retry(args).args(&["--"]).helper(steps).run()
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
    // Under wine, run again if wine failed to start the grandchild or
    // the copy (its error is on stderr).
    let (at_exit, seen) = again_if_wine_spoiled("late output", || {
        let dir = scratch();
        let pid = path(&dir, "pid");
        let mut retry = retry(&["-n", "1", "--retry-if-output", "never-printed", "--"])
            .helper(&[
                "child", &pid, "4", "sleep", "2000", "out", "late", "out", "now",
            ])
            .spawn();
        let (mut stdout, mut stderr) = (retry.stdout.take().unwrap(), retry.stderr.take().unwrap());
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
        let errors = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = std::io::Read::read_to_end(&mut stderr, &mut text);
            text
        });
        assert_eq!(retry.wait().unwrap().code(), Some(0));
        let at_exit = seen.lock().unwrap().clone();
        reader.join().unwrap();
        if wine_spoiled(&errors.join().unwrap()) {
            return Err(Spoiled);
        }
        let seen = seen.lock().unwrap().clone();
        Ok((at_exit, seen))
    });
    assert_eq!(String::from_utf8_lossy(&seen), "nowlate");
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
    use crate::harness::{bin, helper};
    use std::os::windows::process::CommandExt;
    use std::process::{Command, Stdio};
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
    let out = retry(&["-n", "3", "--base", "1ms", "--log-file", &log])
        .args(&["--budget", "portable", "--"])
        .helper(&["count", &counter, "2", "exit", "0"])
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("LOCALAPPDATA", dir.path())
        .run();
    out.code(0);
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
            "--throttle-base",
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
    retry(&["-n", "3", "--", "retry-no-such-program-here"])
        .run()
        .code(127)
        .stderr_has("command not found");
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
    retry(&["-n", "1", "--", "retry-test-tool"])
        .env("PATH", std::env::join_paths(path).unwrap())
        .run()
        .code(9);
}

#[test]
fn a_stable_splay_is_the_same_each_run_on_this_host() {
    // Its JSON event says the delay, below 200 ms; the OS's host name
    // (gethostname, GetComputerNameExW under wine) keeps it the same.
    let delay = || {
        let out = run(
            &["--splay", "200ms", "--splay-stable", "--log-format", "json"],
            &["exit", "0"],
            b"",
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        let line = log.lines().find(|l| l.starts_with(r#"{"event":"splay""#));
        let line = line
            .unwrap_or_else(|| panic!("no splay event: {log}"))
            .to_owned();
        assert!(line.contains(r#""splay_ms":200,"stable":true"#), "{line}");
        let ms = line
            .split(r#""sleep_ms":"#)
            .nth(1)
            .and_then(|rest| rest.split(',').next());
        ms.and_then(|ms| ms.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{line}"))
    };
    let first = delay();
    assert!(first < 200);
    assert_eq!(delay(), first);
}
