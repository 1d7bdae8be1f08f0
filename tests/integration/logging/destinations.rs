//! Where retry's lines go: a log file apart from the command's stderr,
//! a descriptor, a FIFO, a device, a file that cannot be opened or
//! written, a symlink another user owns. Moved out of logging.rs (issue
//! 51) so each file stays under 800 lines; its gates are logging.rs's, and
//! test by test.

#[cfg(unix)]
use std::path::Path;

#[cfg(unix)]
use crate::harness::{Finished, Retry, wait_bounded};
use crate::harness::{retry, scratch};

#[test]
fn a_log_file_keeps_retrys_lines_apart_from_the_commands_stderr() {
    let dir = scratch();
    let log = dir.path().join("retry.jsonl");
    let log_arg = log.display().to_string();
    let command = ["out", "out\n", "err", "err\n", "exit", "1"];
    let args = ["--log-format", "json", "-n", "2", "--base", "1ms"];
    let out = retry(&[&args[..], &["--log-file", &log_arg, "--"]].concat())
        .helper(&command)
        .run();
    out.code(1).stdout_is("out\nout\n").stderr_is("err\nerr\n");
    let written = std::fs::read_to_string(&log).unwrap();
    assert_eq!(written.lines().count(), 3, "{written}");
    assert!(
        written.lines().all(|l| l.starts_with(r#"{"event":"#)),
        "{written}"
    );
    // Appended by the next run, named by the environment as well.
    let out = retry(&[&args[..], &["--"]].concat())
        .helper(&command)
        .env("RETRY_LOG_FILE", &log)
        .run();
    out.code(1).stderr_is("err\nerr\n");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 6);
}

#[test]
#[cfg(unix)] // /dev/fd/3 and an sh pipeline
fn a_log_descriptor_pipes_json_into_jq_while_stderr_stays_on_screen() {
    // The guide's example (Logs): retry's lines on fd 3, into the pipe; stdout
    // dropped; the command's stderr where it was.
    if std::process::Command::new("jq")
        .arg("--version")
        .output()
        .is_err()
    {
        return eprintln!("skipped: jq is not installed");
    }
    let pipeline = format!(
        "{} --log-format json --log-file /dev/fd/3 -n 2 --base 1ms -- \
         sh -c 'echo out; echo err >&2; exit 7' 3>&1 >/dev/null | jq -c '[.event, .exit_code]'",
        crate::harness::bin()
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &pipeline])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "[\"attempt_failed\",7]\n[\"sleep\",7]\n[\"gave_up\",7]\n"
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "err\nerr\n");
}

#[test]
#[cfg(unix)] // Unix's paths and error text
fn a_log_file_that_cannot_be_opened_is_bad_usage_and_nothing_runs() {
    let dir = scratch();
    let ran = dir.path().join("ran");
    let touch = format!("touch {}", ran.display());
    let out = retry(&["--log-file", "/nonexistent/retry.log", "sh", "-c", &touch]).run();
    out.code(2).stderr_is(
        "retry: cannot open --log-file '/nonexistent/retry.log': No such file or directory\n",
    );
    let out = retry(&["sh", "-c", &touch])
        .env("RETRY_LOG_FILE", dir.path())
        .run();
    out.code(2)
        .stderr_lines(1)
        .stderr_has("retry: cannot open `RETRY_LOG_FILE` (--log-file) '");
    assert!(!ran.exists(), "the command ran");
}

/// The command's own words are not retry's options: a `--log-file` after
/// `--` does not make the variable's path a typed one (issue 22).
#[test]
#[cfg(unix)] // Unix's paths and error text
fn a_log_file_from_its_variable_is_named_so_whatever_the_command_says() {
    let dir = scratch();
    let ran = dir.path().join("ran");
    let touch = format!("touch {} # --log-file", ran.display());
    for command in [&["echo", "--log-file"][..], &["sh", "-c", &touch]] {
        let args: Vec<&str> = ["--"].iter().chain(command).copied().collect();
        let out = retry(&args)
            .env("RETRY_LOG_FILE", "/nonexistent/dir/log")
            .run();
        out.code(2).stdout_is("").stderr_is(
            "retry: cannot open `RETRY_LOG_FILE` (--log-file) '/nonexistent/dir/log': \
             No such file or directory\n",
        );
    }
    assert!(!ran.exists(), "the command ran");
}

/// Runs retry to its end, or fails the test after 10 s instead of hanging.
#[cfg(unix)]
fn run_bounded(retry: Retry) -> Finished {
    let start = std::time::Instant::now();
    let mut child = retry.spawn();
    let status = wait_bounded(&mut child, std::time::Duration::from_secs(10));
    let (stdout, stderr) = crate::harness::outputs(&mut child);
    Finished {
        code: status.code(),
        stdout,
        stderr,
        elapsed: start.elapsed(),
    }
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.unwrap().success(), "mkfifo {}", path.display());
}

#[test]
#[cfg(unix)] // FIFOs
fn a_fifo_without_a_reader_is_refused_at_once_and_nothing_runs() {
    // Opening a FIFO for writing waits for a reader: retry must not.
    let dir = scratch();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let ran = dir.path().join("ran");
    let touch = format!("touch {}", ran.display());
    let out =
        run_bounded(retry(&["--log-file"]).args(&[fifo.to_str().unwrap(), "sh", "-c", &touch]));
    out.code(2).stderr_is(&format!(
        "retry: cannot open --log-file '{}': a FIFO with no reader; retry does not wait for one\n",
        fifo.display()
    ));
    assert!(!ran.exists(), "the command ran");
}

#[test]
#[cfg(unix)] // FIFOs and /dev
fn a_fifo_with_a_reader_and_character_devices_take_the_lines() {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = scratch();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    // A reader already there (opened without waiting for a writer).
    let mut reader = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let out =
        run_bounded(retry(&["-n", "1", "--log-file"]).args(&[fifo.to_str().unwrap(), "false"]));
    out.code(1).stderr_is("");
    let mut lines = String::new();
    reader.read_to_string(&mut lines).unwrap();
    assert_eq!(
        lines,
        "retry: false: giving up after 1 attempt: it failed with exit code 1 (reason: attempts)\n"
    );
    for device in ["/dev/null", "/dev/stderr"] {
        let out = run_bounded(retry(&["-n", "1", "--log-file", device, "false"]));
        out.code(1);
        assert_eq!(
            out.stderr.is_empty(),
            device == "/dev/null",
            "{device}: {out:#?}"
        );
    }
}

#[test]
#[cfg(target_os = "linux")] // /dev/full: Linux (macOS has none)
fn a_log_file_that_cannot_be_written_warns_once_and_keeps_the_status() {
    // /dev/full: every write fails with ENOSPC, as on a full disk.
    let out = retry(&["--log-file", "/dev/full", "-n", "3", "--base", "1ms"])
        .args(&["sh", "-c", "echo err >&2; exit 4"])
        .run();
    out.code(4).stdout_is("").stderr_is(
        "err\n\
         retry: warning: cannot write to --log-file '/dev/full': No space left on device; \
         lines that cannot be written are dropped\n\
         err\nerr\n",
    );
}

#[test]
#[cfg(unix)] // root, owners and lchown
fn a_symlink_another_user_owns_is_not_followed() {
    // As root, a link owned by someone else could lead retry to append to
    // any file: a link must be the user's own, or root's.
    if nix::unistd::geteuid().as_raw() != 0 {
        return eprintln!("skipped: only root can hand a symlink to another user");
    }
    use std::os::unix::fs::{lchown, symlink};
    let dir = scratch();
    let target = dir.path().join("target");
    std::fs::write(&target, "precious\n").unwrap();
    let theirs = dir.path().join("theirs");
    symlink(&target, &theirs).unwrap();
    lchown(&theirs, Some(65534), Some(65534)).unwrap();
    // A link of root's own that leads to theirs.
    let mine = dir.path().join("mine");
    symlink("theirs", &mine).unwrap();
    let ran = dir.path().join("ran");
    let touch = format!("touch {}", ran.display());
    let refusal = "a symlink owned by user id 65534, not by you (0) or root; refusing to follow it";
    for (path, says) in [
        (&theirs, format!("it is {refusal}")),
        (
            &mine,
            format!("it leads to '{}', {refusal}", theirs.display()),
        ),
    ] {
        let out = retry(&["-n", "1", "--log-file"])
            .args(&[path.to_str().unwrap(), "sh", "-c", &touch])
            .run();
        out.code(2).stderr_is(&format!(
            "retry: cannot open --log-file '{}': {says}\n",
            path.display()
        ));
    }
    assert!(!ran.exists(), "the command ran");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
    // A link of one's own is followed, to a file or to one not there yet.
    let own = dir.path().join("own");
    symlink(&target, &own).unwrap();
    let dangling = dir.path().join("dangling");
    symlink("new.log", &dangling).unwrap();
    for path in [&own, &dangling] {
        let out = retry(&["-n", "1", "--log-file", path.to_str().unwrap(), "false"]).run();
        out.code(1).stderr_is("");
    }
    let appended = std::fs::read_to_string(&target).unwrap();
    assert!(
        appended.starts_with("precious\nretry: false: giving up"),
        "{appended}"
    );
    let created = std::fs::read_to_string(dir.path().join("new.log")).unwrap();
    assert!(created.starts_with("retry: false: giving up"), "{created}");
}
