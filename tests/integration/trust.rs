//! What a wrapper must never do: hang, orphan the command, panic, or report
//! success for a run that failed. Each test is a defect once found in
//! retry; pids come from files the command writes, never from timing.

//! What is about Unix (signals, process groups, the subreaper, `ulimit`,
//! /proc) is gated test by test; the rest runs the project's helper, so
//! it runs under wine too.

#![allow(unsafe_code)] // pre_exec, to start retry from a hostile parent

#[cfg(unix)]
use std::os::unix::process::CommandExt;
#[cfg(unix)]
use std::process::{Command, Stdio};
#[cfg(unix)]
use std::time::{Duration, Instant};

#[cfg(unix)]
use nix::sys::signal::{SigSet, SigmaskHow, Signal};

#[cfg(unix)]
use crate::harness::{
    assert_all_gone, assert_died_of, bin, c_library, send, state, wait_bounded, wait_for_file,
};
use crate::harness::{install, on_path, retry, scratch, stand_ins};

#[test]
#[cfg(unix)] // SIGCHLD
fn a_sigchld_blocked_by_the_caller_does_not_hang_it() {
    let mut command = Command::new(bin());
    command.args(["-n1", "--", "sh", "-c", "sleep 0.1; exit 3"]);
    // SAFETY: only async-signal-safe calls (pthread_sigmask) after fork.
    unsafe {
        command.pre_exec(|| {
            let blocked = SigSet::from(Signal::SIGCHLD);
            nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&blocked), None)?;
            Ok(())
        });
    }
    let mut child = command.stderr(Stdio::null()).spawn().unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(3), "the command's status is reported");
}

/// retry started by a caller that ignores SIGCHLD (`$SIG{CHLD}="IGNORE"`
/// in perl, Python's `signal.SIG_IGN`), with `args`.
#[cfg(unix)]
fn with_sigchld_ignored(args: &[&str]) -> Command {
    let mut command = Command::new(bin());
    command.args(args);
    // SAFETY: only an async-signal-safe call (sigaction) after fork.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGCHLD, libc::SIG_IGN);
            Ok(())
        });
    }
    command
}

#[test]
#[cfg(unix)] // SIGCHLD
fn a_sigchld_ignored_by_the_caller_does_not_hang_it() {
    // Without owning SIGCHLD, the kernel reaped every attempt itself and
    // retry waited for ever, even past its own timeout.
    for (args, code) in [
        (&["-n1", "--", "true"][..], 0),
        (&["-n2", "--base", "1ms", "--", "sh", "-c", "exit 3"], 3),
        (&["-n1", "-t", "50ms", "--", "sleep", "5"], 124),
    ] {
        let mut child = with_sigchld_ignored(args)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let status = wait_bounded(&mut child, Duration::from_secs(10));
        assert_eq!(status.code(), Some(code), "{args:?}");
    }
}

#[test]
#[cfg(target_os = "linux")] // /proc/self/status
fn the_command_inherits_the_callers_ignored_sigchld() {
    // retry takes SIGCHLD for itself, but the command sees what it would
    // have seen without retry in between: the disposition the caller left.
    let sigchld_ignored = |command: &mut Command| {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_bounded(&mut child, Duration::from_secs(10));
        let mut text = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut text).unwrap();
        let mask = text
            .lines()
            .find_map(|l| l.strip_prefix("SigIgn:"))
            .map(|m| u64::from_str_radix(m.trim(), 16).unwrap())
            .unwrap_or_else(|| panic!("no SigIgn line in {text:?}"));
        mask & (1 << (libc::SIGCHLD - 1)) != 0
    };
    let words = ["-n1", "--", "grep", "SigIgn", "/proc/self/status"];
    assert!(sigchld_ignored(&mut with_sigchld_ignored(&words)));
    assert!(!sigchld_ignored(Command::new(bin()).args(words)));
}

#[test]
#[cfg(unix)] // signals, and a process group of `sh`
fn a_forwarded_signal_escalates_to_sigkill_after_the_grace() {
    let dir = scratch();
    let pids = dir.path().join("pids");
    // The command and its background child ignore SIGTERM.
    let script = format!(
        "trap '' TERM; sleep 100 >/dev/null 2>&1 & echo \"$$ $!\" > {}; wait",
        pids.display()
    );
    let mut child = retry(&["--kill-after", "100ms", "sh", "-c", &script]).spawn();
    let line = wait_for_file(&pids);
    send(&child, Signal::SIGTERM);
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    assert_died_of(status, Signal::SIGTERM, &line);
    assert_all_gone(&line, "a SIGTERM the command ignores");
}

#[test]
#[cfg(unix)] // Unix signals
fn every_terminating_signal_stops_the_command_and_kills_retry_by_it() {
    for signal in [Signal::SIGUSR1, Signal::SIGUSR2, Signal::SIGALRM] {
        let dir = scratch();
        let pids = dir.path().join("pids");
        let script = format!(
            "sleep 100 >/dev/null 2>&1 & echo \"$$ $!\" > {}; wait",
            pids.display()
        );
        let mut child = retry(&["sh", "-c", &script]).spawn();
        let line = wait_for_file(&pids);
        send(&child, signal);
        let status = wait_bounded(&mut child, Duration::from_secs(10));
        assert_died_of(status, signal, &line);
        assert_all_gone(&line, &format!("{signal:?} to retry"));
    }
}

/// A real-time signal (outside nix's `Signal` enum) in every place a
/// signal can be: the command's death, the hook's death, and one sent to
/// retry and forwarded. retry used to reap such a child and lose its
/// status, then wait for ever, past `--timeout` and SIGTERM (issue 31).
#[test]
#[cfg(target_os = "linux")] // real-time signals
fn a_real_time_signal_death_is_seen_everywhere() {
    // Real-time as the binary under test numbers them (its C library's).
    let rtmin = c_library::sigrtmin();
    let rt = |n: i32| rtmin + n;
    // The command dies of one: 128+N, within the bound.
    for offset in [0, 6, libc::SIGRTMAX() - rtmin] {
        let signal = rt(offset);
        let script = format!("kill -{signal} $$");
        let mut child = retry(&["-n", "1", "-t", "20s", "--", "sh", "-c", &script]).spawn();
        let status = wait_bounded(&mut child, Duration::from_secs(10));
        let (_, stderr) = crate::harness::outputs(&mut child);
        assert_eq!(status.code(), Some(128 + signal), "{stderr}");
        assert!(
            stderr.contains(&format!("signal {signal} (SIGRTMIN+{offset})")),
            "{stderr}"
        );
    }
    // The hook dies of one: reported, and the run goes on.
    let hook = format!("kill -{} $$", rt(3));
    let mut child = retry(&[
        "-n",
        "2",
        "--base",
        "1ms",
        "--on-retry",
        &hook,
        "--",
        "false",
    ])
    .spawn();
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    let (_, stderr) = crate::harness::outputs(&mut child);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--on-retry command failed with signal"),
        "{stderr}"
    );
    // One sent to retry is forwarded; retry then dies of it.
    let dir = scratch();
    let pids = dir.path().join("pids");
    let script = format!("echo $$ > {}; sleep 100 & wait", pids.display());
    let mut child = retry(&["sh", "-c", &script]).spawn();
    let line = wait_for_file(&pids);
    let signal = rt(2);
    // SAFETY: kill has no memory arguments.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(signal), "{status:?}");
    assert_all_gone(&line, "a real-time signal to retry");
}

/// Waits (bounded) until the pipe retry writes its stderr to holds `at_least`
/// unread bytes: a full pipe, so retry is blocked writing to it.
#[cfg(target_os = "linux")]
fn wait_until_pipe_holds(child: &std::process::Child, at_least: i32) {
    use std::os::fd::AsRawFd;
    let fd = child.stderr.as_ref().unwrap().as_raw_fd();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut unread: libc::c_int = 0;
        // SAFETY: FIONREAD writes one c_int through a pointer to a local.
        assert_eq!(unsafe { libc::ioctl(fd, libc::FIONREAD, &mut unread) }, 0);
        if unread >= at_least {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "stderr never filled: {unread} bytes"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A reader that stopped reading retry's stderr cannot keep it alive after
/// SIGTERM: not while it copies a retried attempt's held-back stdout there,
/// nor while it writes its own lines. It used to block for ever (issue 31).
#[test]
#[cfg(target_os = "linux")] // FIONREAD on the pipe, to know it is full
fn a_stalled_stderr_never_keeps_retry_alive_after_a_signal() {
    // -v names the whole command line as each attempt starts: 2 KB lines
    // fill the pipe in a few dozen attempts, quick even under qemu.
    let long = "x".repeat(2000);
    let cases: [&[&str]; 2] = [
        // A failed attempt's 1 MB of held-back stdout goes to stderr.
        &[
            "--stdout-once",
            "-n",
            "2",
            "--base",
            "1ms",
            "--",
            "sh",
            "-c",
            "head -c 1000000 /dev/zero; exit 1",
        ],
        // Its own lines, an attempt's at a time.
        &[
            "-v", "-n", "1000000", "--base", "1ms", "--cap", "1ms", "--", "sh", "-c", "exit 1",
            "sh", &long,
        ],
    ];
    for args in cases {
        let mut child = retry(args).spawn();
        // A pipe holds 64 KiB: full at 60,000 bytes less a line or two.
        wait_until_pipe_holds(&child, 60_000);
        let started = Instant::now();
        send(&child, Signal::SIGTERM);
        let status = wait_bounded(&mut child, Duration::from_secs(15));
        assert_died_of(status, Signal::SIGTERM, &args);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?} to end after SIGTERM: {args:?}",
            started.elapsed()
        );
    }
}

/// An inherited RETRY_RUN_IDS just under Linux's limit for one variable
/// (128 KiB) cannot make every attempt fail with E2BIG once retry adds its
/// own id: the inherited value is bounded (issue 31).
#[test]
#[cfg(target_os = "linux")] // MAX_ARG_STRLEN
fn a_huge_inherited_run_id_list_does_not_stop_every_attempt() {
    let huge = "a".repeat(128 * 1024 - "RETRY_RUN_IDS=".len() - 8);
    let out = retry(&[
        "-n",
        "2",
        "--base",
        "1ms",
        "--",
        "sh",
        "-c",
        "echo ${#RETRY_RUN_IDS}",
    ])
    .env("RETRY_RUN_IDS", &huge)
    .output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // Only this run's own id is left (21 bytes at most).
    let len: usize = stdout.trim().parse().unwrap();
    assert!((1..=21).contains(&len), "{stdout}");
}

/// Runs an attempt that starts a descendant in a session of its own and
/// times out; returns the descendant's pid. Its parent dies at the
/// timeout, so only a subreaper can still find it. (A `setsid` binary:
/// util-linux's, so Linux only.)
#[cfg(target_os = "linux")]
fn time_out_with_an_escaped_descendant(dir: &std::path::Path) -> String {
    let pids = dir.join("pids");
    let script = format!(
        "setsid sleep 100 >/dev/null 2>&1 & echo $! > {}; sleep 100",
        pids.display()
    );
    let out = retry(&[
        "-t",
        "200ms",
        "--kill-after",
        "100ms",
        "-n",
        "1",
        "sh",
        "-c",
        &script,
    ])
    .run();
    out.code(124);
    std::fs::read_to_string(&pids).unwrap()
}

#[test]
#[cfg(all(target_os = "linux", not(feature = "portable")))]
fn descendants_that_left_the_group_are_stopped_at_a_timeout() {
    let dir = scratch();
    let pid = time_out_with_an_escaped_descendant(dir.path());
    assert_all_gone(&pid, "the timeout");
}

/// The portable path (macOS, the BSDs; `--features portable` here) has no
/// subreaper: an escaped descendant outlives the attempt, as
/// docs/behaviour.md says. This pins that documented limit, then cleans up after it.
#[test]
#[cfg(all(target_os = "linux", feature = "portable"))] // `setsid`, util-linux's
fn without_a_subreaper_an_escaped_descendant_outlives_the_attempt() {
    let dir = scratch();
    let pid: i32 = time_out_with_an_escaped_descendant(dir.path())
        .trim()
        .parse()
        .unwrap();
    let survived = crate::harness::alive(pid);
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
    assert!(
        survived,
        "the portable build adopted {pid}: update docs/behaviour.md"
    );
}

#[test]
#[cfg(target_os = "linux")]
fn a_daemon_left_on_purpose_by_a_finished_attempt_is_spared() {
    let dir = scratch();
    let pids = dir.path().join("pids");
    // Attempt 1 leaves a daemon and fails; attempt 2 times out: the daemon
    // was not part of the attempt that was stopped.
    let script = format!(
        "if [ \"$RETRY_ATTEMPT\" = 1 ]; then setsid sleep 30 >/dev/null 2>&1 & echo $! > {}; exit 1; fi; sleep 100",
        pids.display()
    );
    let out = retry(&[
        "-t", "300ms", "-n", "2", "--base", "1ms", "sh", "-c", &script,
    ])
    .run();
    out.code(124);
    let daemon: i32 = std::fs::read_to_string(&pids)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        crate::harness::alive(daemon),
        "the daemon of attempt 1 was killed"
    );
    crate::harness::kill_pid(daemon);
}

#[test]
#[cfg(target_os = "linux")]
fn a_bystander_adopted_during_an_attempt_is_never_stopped() {
    let dir = scratch();
    let pids = dir.path().join("pids");
    // retry's parent leaves a child behind and execs retry; during the
    // attempt that child starts a daemon and dies, so the kernel hands the
    // daemon to retry, the subreaper. It is not the attempt's to stop.
    let bystander = format!(
        "sleep 0.2; setsid sleep 30 >/dev/null 2>&1 & echo $! > {}",
        pids.display()
    );
    let script = format!(
        "sh -c '{bystander}' & exec \"$0\" -n1 -t 1s --kill-after 100ms -- sh -c 'sleep 10'"
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script, &bin()])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(out.code(), Some(124));
    let pid: i32 = wait_for_file(&pids).trim().parse().unwrap();
    let survived = crate::harness::alive(pid);
    crate::harness::kill_pid(pid);
    assert!(survived, "the bystander {pid} was killed with the attempt");
}

#[test]
#[cfg(unix)] // `ulimit -n`, EMFILE
fn a_command_that_cannot_start_for_want_of_a_resource_is_retried() {
    // With few file descriptors, retry starts but an attempt's pipes cannot
    // be made (EMFILE): a passing shortage, retried, then 125; never the
    // 126 of a command that cannot run. Which limit that is depends on the
    // platform's start-up, so the first limit that shows it is taken.
    let shown = (5..16).find_map(|limit| {
        let script = format!("ulimit -n {limit}; exec \"$0\" -n2 --base 1ms --stdout-once echo hi");
        let out = Command::new("sh")
            .args(["-c", &script, &bin()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        stderr
            .contains("a start error")
            .then_some((out.status.code(), stderr))
    });
    let (code, stderr) = shown.expect("no file descriptor limit gave a start error");
    assert_eq!(code, Some(125), "{stderr}");
    // EMFILE in the words of retry's C library: glibc's "Too many open
    // files", musl's "No file descriptors available".
    let emfile = c_library::strerror(libc::EMFILE);
    assert!(
        stderr.contains(&format!(
            "attempt 1/2 failed with a start error: {emfile} (exit code 125)"
        )),
        "{stderr}"
    );
}

#[test]
fn limits_too_large_to_represent_mean_no_limit_and_never_panic() {
    let huge = "300000000000y";
    for flag in ["--timeout", "--max-time", "--kill-after"] {
        retry(&[flag, huge, "-n", "1", "--"])
            .helper(&["exit", "0"])
            .run()
            .code(0);
    }
    retry(&["-n", "1", "--"])
        .helper(&["exit", "0"])
        .env("RETRY_TIMEOUT", huge)
        .run()
        .code(0);
    // A huge grace after a timeout: the timeout still ends the command.
    retry(&["-t", "50ms", "--kill-after", huge, "-n", "1", "--"])
        .helper(&["sleep", "100000"])
        .run()
        .code(124);
}

#[test]
#[cfg(unix)] // SIGTERM, to end the sleep
fn a_sleep_too_large_to_represent_is_entered_and_a_signal_ends_it() {
    let huge = "300000000000y";
    let dir = scratch();
    let ready = dir.path().join("ready");
    let script = format!("echo x > {}; exit 1", ready.display());
    let args = [
        "-n2", "-j", "none", "--base", huge, "--cap", huge, "sh", "-c", &script,
    ];
    let mut child = retry(&args).spawn();
    wait_for_file(&ready);
    std::thread::sleep(Duration::from_millis(50));
    send(&child, Signal::SIGTERM);
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    assert_died_of(status, Signal::SIGTERM, &"a signal during the huge sleep");
}

#[test]
fn a_run_that_gives_up_never_exits_0() {
    // `true`: the helper's, on every platform.
    retry(&["-n2", "--base", "1ms", "--success-on", "1", "true"])
        .env("PATH", stand_ins())
        .run()
        .code(1)
        .stderr_has("exit code 0, not listed in --success-on (counted as exit code 1)");
    retry(&["--success-on", "1", "--retry-on", "2", "true"])
        .env("PATH", stand_ins())
        .run()
        .code(1);
}

#[test]
#[cfg(unix)] // SIGPIPE, and `sh`'s 127
fn what_another_attempt_cannot_mend_is_not_retried_by_default() {
    // Killed by SIGPIPE: its reader went away.
    let out = retry(&["--base", "1ms", "sh", "-c", "echo x >> n; kill -PIPE $$"])
        .current_dir(scratch().path())
        .run();
    out.code(141).stderr_has("not retryable");
    // sh's "command not found" under --shell, as without it.
    retry(&["-s", "--base", "1ms", "no-such-command-anywhere"])
        .run()
        .code(127)
        .stderr_has("giving up after attempt 1/5");
    // Still retried when listed.
    retry(&[
        "--retry-on",
        "141",
        "-n",
        "2",
        "--base",
        "1ms",
        "sh",
        "-c",
        "kill -PIPE $$",
    ])
    .run()
    .code(141)
    .stderr_has("giving up after 2 attempts");
}

#[test]
#[cfg(unix)] // SIGTSTP and SIGCONT: job control
fn a_stopped_command_stops_retry_until_it_is_continued() {
    let dir = scratch();
    let ready = dir.path().join("ready");
    // The command stops itself, as Ctrl-Z or reading the terminal from the
    // background would (SIGTSTP, SIGTTIN: job control, not a plain SIGSTOP).
    let script = format!("echo $$ > {}; kill -TSTP $$; echo resumed", ready.display());
    let mut child = retry(&["--foreground", "never", "sh", "-c", &script]).spawn();
    wait_for_file(&ready);
    let retry_pid = child.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(10);
    while state(retry_pid) != Some('T') {
        assert!(
            Instant::now() < deadline,
            "retry never stopped with its command"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // `fg`/`bg` continue retry; retry continues the command.
    send(&child, Signal::SIGCONT);
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0));
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert_eq!(stdout, "resumed\n");
}

#[test]
#[cfg(target_os = "linux")] // /proc/PID/status, and the C library's signals below SIGRTMIN
fn children_start_with_default_dispositions_and_inherit_ignored_ones() {
    use std::os::unix::process::ExitStatusExt;
    // The command ignores exactly what retry inherited as ignored, nothing
    // of retry's own. SIGPIPE is the exception: retry ignores it itself,
    // and every child gets it back at its default. So are the C library's
    // own signals (32 up to SIGRTMIN, as retry's C library has it): retry
    // was started here by std's posix_spawn, which on glibc leaves them
    // ignored, and retry's own posix_spawn gives the command them at their
    // default. (The portable build forks, and its children inherit them as
    // retry has them.)
    let out = retry(&[
        "sh",
        "-c",
        "grep SigIgn /proc/$PPID/status /proc/self/status",
    ])
    .run();
    let masks: Vec<u64> = out
        .stdout
        .lines()
        .map(|l| u64::from_str_radix(l.rsplit('\t').next().unwrap(), 16).unwrap())
        .collect();
    let sigpipe = 1u64 << (libc::SIGPIPE - 1);
    let reserved = c_library::reserved_signals_mask();
    assert_eq!(masks.len(), 2, "{out:#?}");
    let (retry_mask, command) = (masks[0], masks[1]);
    assert_ne!(retry_mask & sigpipe, 0, "retry itself ignores SIGPIPE");
    assert_eq!(
        command & !reserved,
        retry_mask & !sigpipe & !reserved,
        "retry {retry_mask:x}, command {command:x}"
    );
    if cfg!(not(feature = "portable")) {
        assert_eq!(command & reserved, 0, "command {command:x}");
    }

    // Under nohup, SIGHUP stays ignored: the command inherits it, and a
    // hangup ends neither the command nor retry.
    let dir = scratch();
    let ready = dir.path().join("ready");
    let script = format!(
        "grep SigIgn /proc/self/status; echo x > {}; sleep 0.3",
        ready.display()
    );
    let mut command = Command::new(bin());
    command.args(["sh", "-c", &script]).stdout(Stdio::piped());
    // SAFETY: only async-signal-safe calls (sigaction) after fork.
    unsafe {
        command.pre_exec(|| {
            nix::sys::signal::signal(Signal::SIGHUP, nix::sys::signal::SigHandler::SigIgn)?;
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    wait_for_file(&ready);
    send(&child, Signal::SIGHUP);
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{:?}", status.signal());
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let mask = u64::from_str_radix(stdout.trim().rsplit('\t').next().unwrap(), 16).unwrap();
    assert_ne!(
        mask & 1,
        0,
        "SIGHUP is not ignored in the command: {stdout}"
    );
}

#[test]
#[cfg(unix)] // SIGTERM
fn signals_are_honoured_while_held_output_waits_for_a_stalled_reader() {
    let dir = scratch();
    let done = dir.path().join("done");
    // More than a pipe holds: writing it blocks while nobody reads stdout.
    let script = format!("head -c 1000000 /dev/zero; echo x > {}", done.display());
    let mut child = retry(&["--stdout-once", "sh", "-c", &script]).spawn();
    wait_for_file(&done);
    std::thread::sleep(Duration::from_millis(100));
    send(&child, Signal::SIGTERM);
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    assert_died_of(status, Signal::SIGTERM, &"blocked writing held output");
}

#[test]
#[cfg(unix)] // SIGINT
fn a_signal_says_what_retry_was_doing() {
    let dir = scratch();
    let ready = dir.path().join("ready");
    let script = format!("echo $$ > {}; exit 1", ready.display());
    let child = retry(&[
        "--jitter", "none", "--base", "1h", "--cap", "1h", "sh", "-c", &script,
    ])
    .spawn();
    wait_for_file(&ready);
    std::thread::sleep(Duration::from_millis(50));
    send(&child, Signal::SIGINT);
    let mut child = child;
    wait_bounded(&mut child, Duration::from_secs(10));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("interrupted by SIGINT during the sleep after attempt 1/5"),
        "{stderr}"
    );
}

#[test]
fn a_hook_that_outlives_max_time_is_a_timeout() {
    // The hook is a program of the helper's on PATH: one word, the same
    // script to sh and cmd.
    // A machine too busy to end the first attempt within --max-time
    // (wine on a loaded machine) is given a longer one.
    let dir = scratch();
    install(dir.path(), "linger", &["sleep", "100000"]);
    for max_time in ["300ms", "1s", "3s"] {
        let out = retry(&[
            "--max-time",
            max_time,
            "--base",
            "1ms",
            "--kill-after",
            "100ms",
            "--on-retry",
            "linger",
            "--",
        ])
        .helper(&["exit", "1"])
        .env("PATH", on_path(dir.path()))
        .run();
        out.code(124);
        if out.stderr.contains("--max-time reached during attempt 1/5") {
            continue;
        }
        out.stderr_has("--max-time reached during the --on-retry command after attempt 1/5");
        return;
    }
    panic!("the first attempt outlived --max-time, even at 3 s");
}

#[test]
fn the_commands_words_cannot_forge_log_lines() {
    let out = retry(&["-n", "1", "x\n::error::INJECTED\x1b[31m"]).run();
    out.code(127);
    assert_eq!(out.stderr.lines().count(), 1, "{out:#?}");
    assert!(!out.stderr.contains('\x1b'), "{out:#?}");
    assert!(
        out.stderr.contains(r"x\n::error::INJECTED\x1b[31m"),
        "{out:#?}"
    );
}

#[test]
#[cfg(target_os = "linux")] // /proc/PID/fd
fn closed_standard_streams_are_dev_null_for_retry_and_the_command() {
    // Started with stdin, stdout and stderr closed, retry opens /dev/null
    // in their place before anything else: a self-pipe or log file never
    // takes their numbers, and the command inherits all three open.
    let check = "for fd in 0 1 2; do \
        [ /proc/$$/fd/$fd -ef /dev/null ] && [ /proc/$PPID/fd/$fd -ef /dev/null ] || exit 9; done";
    let status = Command::new("sh")
        .args([
            "-c",
            r#"exec "$0" -n 2 --base 1ms -- sh -c "$1" <&- >&- 2>&-"#,
        ])
        .args([&bin(), check])
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn a_directory_as_command_says_so() {
    let dir = scratch();
    let out = retry(&[dir.path().to_str().unwrap()]).run();
    out.code(126);
    // The reason is the system's: Windows has no "is a directory" for
    // CreateProcess (wine says "Invalid handle"), so it is checked on Unix.
    if cfg!(unix) {
        out.stderr_has("is a directory");
    }
}
