//! The built-in presets other than curl's (presets.rs) with the real
//! programs: wget against an HTTP server, git against `git daemon`, rsync
//! against `rsync --daemon`, ssh against a server that offers no key
//! exchange it knows, apt-get against an HTTP repository, and each against
//! a closed port, all on 127.0.0.1 or in a temp dir. For each preset one
//! transient failure is retried and one permanent failure stops at once.
//! docker, npm, pip and apt's held locks are judged on recorded output (the
//! lines and codes the real programs printed against loopback servers, as
//! bench/presets/README.md records): installing docker or node here is
//! heavy, and pip and npm take most of a second to start. Last, every line
//! of bench/presets/tests/samples.tsv is judged as that file says.
//!
//! git, wget and apt translate their messages, and the presets match the
//! English ones, so those run with LC_ALL=C, as docs/guide.md tells users to.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;

use crate::harness::loopback::{Answer, Daemon, HttpServer, Server, closed_port, installed};
use crate::harness::{Finished, retry, scratch};

/// `retry --preset NAME -n 2 -b 1ms -- COMMAND...` in the C locale.
fn with_preset(name: &str, command: &[&str]) -> Finished {
    retry(&["--preset", name, "-n", "2", "-b", "1ms", "--"])
        .args(command)
        .env("LC_ALL", "C")
        .run()
}

/// Asserts the run was retried to the end (both attempts failed).
#[track_caller]
fn retried(run: &Finished, code: i32) -> &Finished {
    run.code(code).stderr_has("giving up after 2 attempts")
}

/// Asserts the run stopped after its first attempt.
#[track_caller]
fn stopped(run: &Finished, code: i32) -> &Finished {
    run.code(code).stderr_has("giving up after attempt 1/2")
}

// ---- wget

#[test]
fn wget_retries_a_503_reading_retry_after_and_stops_on_a_404_or_a_bad_url() {
    let wget = installed("wget", "wget");
    let ok: Answer = (200, "OK", "", "ok\n");
    // -S shows the headers, indented, on stderr: the preset reads the wait.
    let http = HttpServer::start(vec![
        (503, "Service Unavailable", "Retry-After: 0\r\n", ""),
        ok,
    ]);
    let run = with_preset("wget", &[wget, "-nv", "-S", "-O", "-", &http.url]);
    run.code(0)
        .stdout_is("ok\n")
        .stderr_has("ERROR 503: Service Unavailable.")
        .stderr_has("server asked for 0 ms");
    assert!(!run.stderr.contains("slow down"), "{run:#?}");
    assert_eq!(http.served(), 2);
    // Without -S wget hides the wait: said once (of two 429s) how to show it.
    let http = HttpServer::start(vec![(429, "Too Many Requests", "Retry-After: 0\r\n", "")]);
    let run = with_preset("wget", &[wget, "-nv", "-O", "-", &http.url]);
    retried(&run, 8).stderr_has("ERROR 429: Too Many Requests.");
    let advice = "retry: wget: warning: the server asked to slow down, but retry cannot see \
                  how long it asked to wait (its Retry-After): add -S (--server-response) to \
                  wget's arguments (--preset wget; said once)\n";
    assert_eq!(run.stderr.matches(advice).count(), 1, "{run:#?}");
    assert_eq!(http.served(), 2);
    // A 404 is exit 8 like a 503: the message tells them apart.
    let http = HttpServer::start(vec![(404, "Not Found", "", ""), ok]);
    stopped(
        &with_preset("wget", &[wget, "-nv", "-O", "-", &http.url]),
        8,
    )
    .stderr_has("ERROR 404: Not Found.");
    assert_eq!(http.served(), 1);
    // A refused connection is exit 4, retried; a malformed URL, 1, fatal.
    let closed = format!("http://127.0.0.1:{}/", closed_port());
    retried(&with_preset("wget", &[wget, "-nv", "-O", "-", &closed]), 4);
    stopped(&with_preset("wget", &[wget, "-nv", "htp://x"]), 1);
}

// ---- git

/// git with no configuration of the machine's or the user's.
fn git(home: &Path) -> Command {
    let mut git = Command::new(installed("git", "git"));
    git.env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0");
    git
}

#[test]
fn git_retries_a_closed_port_and_a_held_lock_and_stops_on_a_repository_that_does_not_exist() {
    let dir = scratch();
    let home = dir.path();
    let init = git(home)
        .args(["init", "-q", "--bare"])
        .arg(home.join("repo.git"))
        .status()
        .unwrap();
    assert!(init.success());
    let port = closed_port();
    let mut daemon = git(home);
    daemon
        .args([
            "daemon",
            "--reuseaddr",
            "--listen=127.0.0.1",
            "--export-all",
        ])
        .arg(format!("--port={port}"))
        .arg(format!("--base-path={}", home.display()))
        .arg(home);
    let _daemon = Daemon::start(daemon, port);
    let remote = |repo: &str| format!("git://127.0.0.1:{port}/{repo}");
    let run = |args: &[&str]| {
        retry(&["--preset", "git", "-n", "2", "-b", "1ms", "--", "git"])
            .args(args)
            .env("LC_ALL", "C")
            .env("HOME", home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .run()
    };
    run(&["ls-remote", &remote("repo.git")]).code(0);
    stopped(&run(&["ls-remote", &remote("missing.git")]), 128)
        .stderr_has("fatal: remote error: access denied or repository not exported");
    let closed = format!("git://127.0.0.1:{}/repo.git", closed_port());
    retried(&run(&["ls-remote", &closed]), 128).stderr_has("errno=Connection refused");
    // Another git holding the index: transient.
    let work = home.join("work");
    assert!(
        git(home)
            .arg("init")
            .arg("-q")
            .arg(&work)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(work.join("f"), "x\n").unwrap();
    std::fs::write(work.join(".git/index.lock"), "").unwrap();
    let work = work.display().to_string();
    retried(&run(&["-C", &work, "add", "f"]), 128).stderr_has("index.lock': File exists.");
    // A usage error: 129, fatal.
    stopped(&run(&["ls-remote", "--no-such-option"]), 129);
}

// ---- ssh

/// The opening of an SSH server that offers only a key exchange no client
/// knows (RFC 4253: the version line, then SSH_MSG_KEXINIT in a packet).
fn ssh_offering_nothing_known() -> Vec<u8> {
    let name_list = |names: &str| {
        let mut field = (names.len() as u32).to_be_bytes().to_vec();
        field.extend_from_slice(names.as_bytes());
        field
    };
    let mut payload = vec![20u8]; // SSH_MSG_KEXINIT
    payload.extend_from_slice(&[0; 16]); // cookie
    for names in [
        "none@retry.invalid",
        "ssh-ed25519",
        "aes128-ctr",
        "aes128-ctr",
        "hmac-sha2-256",
        "hmac-sha2-256",
        "none",
        "none",
        "",
        "",
    ] {
        payload.extend(name_list(names));
    }
    payload.extend_from_slice(&[0, 0, 0, 0, 0]); // first_kex_packet_follows, reserved
    // The packet, padded (at least 4 bytes) to a multiple of 8.
    let mut padding = 8 - (payload.len() + 5) % 8;
    if padding < 4 {
        padding += 8;
    }
    let mut opening = b"SSH-2.0-retry-test\r\n".to_vec();
    opening.extend(((payload.len() + padding + 1) as u32).to_be_bytes());
    opening.push(padding as u8);
    opening.extend(payload);
    opening.extend(vec![0; padding]);
    opening
}

/// `ssh ... -p PORT 127.0.0.1 true`, asking nothing and trusting no file.
fn ssh_to<'a>(ssh: &'a str, port: &'a str) -> Vec<&'a str> {
    let mut command = vec![ssh, "-F", "/dev/null", "-o", "BatchMode=yes"];
    command.extend(["-o", "StrictHostKeyChecking=no"]);
    command.extend(["-o", "UserKnownHostsFile=/dev/null"]);
    command.extend(["-p", port, "127.0.0.1", "true"]);
    command
}

#[test]
fn ssh_retries_a_closed_port_and_stops_on_no_common_algorithm_or_a_bad_option() {
    let ssh = installed("ssh", "openssh-client");
    let closed = closed_port().to_string();
    retried(&with_preset("ssh", &ssh_to(ssh, &closed)), 255).stderr_has("Connection refused");
    let opening = ssh_offering_nothing_known();
    let server = Server::start(move |mut stream, _| {
        let _ = stream.write_all(&opening);
        let _ = stream.read_to_end(&mut Vec::new());
    });
    let port = server.port().to_string();
    stopped(&with_preset("ssh", &ssh_to(ssh, &port)), 255)
        .stderr_has("Unable to negotiate with 127.0.0.1");
    assert_eq!(server.served(), 1);
    stopped(
        &with_preset("ssh", &[ssh, "-o", "NoSuchOption=1", "x"]),
        255,
    );
}

// ---- rsync

#[test]
fn rsync_retries_a_closed_port_and_a_busy_module_and_stops_on_a_module_the_daemon_refuses() {
    let rsync = installed("rsync", "rsync");
    let dir = scratch();
    let root = dir.path();
    std::fs::create_dir(root.join("data")).unwrap();
    std::fs::write(root.join("data/f"), "x\n").unwrap();
    let config = root.join("rsyncd.conf");
    // As root the daemon would serve as nobody: it stays root. Any other
    // user's daemon stays that user, and must not be given a uid or gid
    // (it would call setgroups and refuse every module).
    let user = if nix::unistd::geteuid().is_root() {
        "uid = 0\ngid = 0\n"
    } else {
        ""
    };
    std::fs::write(
        &config,
        format!(
            "use chroot = no\n{user}pid file = {root}/rsyncd.pid\n\
             log file = {root}/rsyncd.log\nlock file = {root}/rsyncd.lock\n\
             [data]\npath = {root}/data\nread only = yes\n\
             [busy]\npath = {root}/data\nmax connections = 1\n",
            root = root.display(),
        ),
    )
    .unwrap();
    let port = closed_port();
    let mut daemon = Command::new(rsync);
    daemon
        .args(["--daemon", "--no-detach", "--address=127.0.0.1"])
        .arg(format!("--port={port}"))
        .arg(format!("--config={}", config.display()));
    let _daemon = Daemon::start(daemon, port);
    let dest = format!("{}/dest/", root.display());
    let from = |module: &str| format!("rsync://127.0.0.1:{port}/{module}/");
    with_preset("rsync", &[rsync, "-r", &from("data"), &dest]).code(0);
    assert!(root.join("dest/f").exists());
    stopped(
        &with_preset("rsync", &[rsync, "-r", &from("nomodule"), &dest]),
        5,
    )
    .stderr_has("@ERROR: Unknown module 'nomodule'");
    let closed = format!("rsync://127.0.0.1:{}/data/", closed_port());
    retried(&with_preset("rsync", &[rsync, "-r", &closed, &dest]), 10);
    // A module at its "max connections": "try again later", retried.
    let _holder = hold_rsync_module(port, "busy");
    retried(
        &with_preset("rsync", &[rsync, "-r", &from("busy"), &dest]),
        5,
    )
    .stderr_has("@ERROR: max connections (1) reached -- try again later");
    // Over ssh, to a closed port: ssh's refusal, retried.
    let shell = format!("ssh -F /dev/null -o BatchMode=yes -p {}", closed_port());
    let run = with_preset("rsync", &[rsync, "-e", &shell, "127.0.0.1:/x", &dest]);
    run.stderr_has("Connection refused")
        .stderr_has("giving up after 2 attempts");
    // A usage error: 1, fatal.
    stopped(&with_preset("rsync", &[rsync, "--no-such-option"]), 1);
}

/// A connection to an rsync daemon that has chosen `module` and holds it.
fn hold_rsync_module(port: u16, module: &str) -> std::net::TcpStream {
    use std::io::{BufRead, BufReader};
    let stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    // The daemon's greeting names its protocol and the digests it takes:
    // answering with the same line agrees to both.
    let mut greeting = String::new();
    reader.read_line(&mut greeting).unwrap();
    assert!(greeting.starts_with("@RSYNCD: "), "{greeting:?}");
    (&stream)
        .write_all(format!("{greeting}{module}\n").as_bytes())
        .unwrap();
    let mut reply = String::new();
    reader.read_line(&mut reply).unwrap();
    assert_eq!(
        reply, "@RSYNCD: OK\n",
        "the daemon did not let us hold {module}"
    );
    stream
}

// ---- apt

#[test]
fn apt_get_retries_a_repository_answering_503_and_stops_on_a_package_that_does_not_exist() {
    // apt is Debian's: elsewhere there is nothing to retry.
    if !Command::new("sh")
        .args(["-c", "command -v apt-get"])
        .output()
        .is_ok_and(|out| out.status.success())
    {
        eprintln!("skipped: no apt-get on this system");
        return;
    }
    // apt's state, lists, cache and sources in a temp dir: the system's are
    // neither read nor touched.
    let dir = scratch();
    let root = dir.path();
    for sub in ["lists/partial", "cache/archives/partial"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    std::fs::write(root.join("status"), "").unwrap();
    let http = HttpServer::start(vec![(503, "Service Unavailable", "", "")]);
    std::fs::write(
        root.join("sources.list"),
        format!("deb [trusted=yes] {}debian bookworm main\n", http.url),
    )
    .unwrap();
    let at = |key: &str, path: &str| format!("{key}={}/{path}", root.display());
    let options = [
        at("Dir::Etc::SourceList", "sources.list"),
        at("Dir::Etc::SourceParts", "none"),
        at("Dir::State::Lists", "lists"),
        at("Dir::Cache", "cache"),
        at("Dir::State::status", "status"),
        "Acquire::Retries=0".to_owned(),
    ];
    let apt_get = |args: &[&str]| {
        let mut command = vec!["apt-get".to_owned()];
        for option in &options {
            command.extend(["-o".to_owned(), option.clone()]);
        }
        command.extend(args.iter().map(|a| a.to_string()));
        let command: Vec<&str> = command.iter().map(String::as_str).collect();
        with_preset("apt", &command)
    };
    // A mirror answering 503: "E: Failed to fetch ... 503", retried.
    retried(&apt_get(&["update"]), 100).stderr_has("503  Service Unavailable");
    assert!(http.served() >= 2);
    stopped(
        &apt_get(&["install", "-s", "no-such-package-retry-test"]),
        100,
    )
    .stderr_has("E: Unable to locate package no-such-package-retry-test");
}

// ---- recorded output: apt's lock, docker, npm, pip

/// A program named `program` in `dir` that prints `lines` on stderr and
/// exits with `code`: what the real one printed against a loopback server
/// (bench/presets/README.md has the command each line came from).
fn recorded(dir: &Path, program: &str, lines: &str, code: i32) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(program);
    std::fs::write(
        &path,
        format!("#!/bin/sh\ncat >&2 <<'RECORDED'\n{lines}\nRECORDED\nexit {code}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[test]
fn docker_npm_pip_and_apts_lock_on_recorded_output() {
    // (preset, program, what it printed, its exit code, retried?)
    let cases: &[(&str, &str, &str, i32, bool)] = &[
        (
            "apt",
            "apt-get",
            "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)\n\
             E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?",
            100,
            true,
        ),
        (
            "apt",
            "apt-get",
            "E: Failed to fetch http://127.0.0.1:40000/debian/pool/main/f/fakepkg404_1.0_all.deb  404  Not Found [IP: 127.0.0.1 40000]",
            100,
            false,
        ),
        (
            "docker",
            "docker",
            "Error response from daemon: received unexpected HTTP status: 503 Service Unavailable",
            1,
            true,
        ),
        (
            "docker",
            "docker",
            "Error response from daemon: toomanyrequests: status 429",
            1,
            true,
        ),
        (
            "docker",
            "docker",
            "Cannot connect to the Docker daemon at unix:///tmp/nodaemon.sock. Is the docker daemon running?",
            1,
            true,
        ),
        (
            "docker",
            "docker",
            "Error response from daemon: manifest for 127.0.0.1:40000/status404/img:latest not found: manifest unknown: status 404",
            1,
            false,
        ),
        (
            "docker",
            "docker",
            "Error response from daemon: pull access denied for 127.0.0.1:40000/status403/img, repository does not exist or may require 'docker login': denied: status 403",
            1,
            false,
        ),
        (
            "npm",
            "npm",
            "npm error code E503\n\
             npm error 503 Service Unavailable - GET http://127.0.0.1:40000/left-pad",
            1,
            true,
        ),
        (
            "npm",
            "npm",
            "npm error code ECONNREFUSED\nnpm error syscall connect",
            1,
            true,
        ),
        (
            "npm",
            "npm",
            "npm error code E404\n\
             npm error 404 Not Found - GET http://127.0.0.1:40000/left-pad",
            1,
            false,
        ),
        ("npm", "npm", "npm error code EUSAGE", 1, false),
        (
            "pip",
            "pip",
            "ERROR: Could not install packages due to an OSError: HTTPConnectionPool(host='127.0.0.1', port=40000): Max retries exceeded with url: /files/status503/fakepkg503-1.0-py3-none-any.whl (Caused by ResponseError('too many 503 error responses'))",
            1,
            true,
        ),
        (
            "pip",
            "pip",
            "  ERROR: HTTP error 404 while getting http://127.0.0.1:40000/files/status404/fakepkg404-1.0-py3-none-any.whl (from http://127.0.0.1:40000/simple/fakepkg404/)",
            1,
            false,
        ),
        (
            "pip",
            "pip",
            "ERROR: Could not find a version that satisfies the requirement xyz (from versions: none)\n\
             ERROR: No matching distribution found for xyz",
            1,
            false,
        ),
    ];
    let dir = scratch();
    for &(preset, program, lines, code, retry_it) in cases {
        let stub = recorded(dir.path(), program, lines, code);
        let run = with_preset(preset, &[&stub]);
        run.code(code);
        let (expected, other) = match retry_it {
            true => ("giving up after 2 attempts", "giving up after attempt 1/2"),
            false => ("giving up after attempt 1/2", "giving up after 2 attempts"),
        };
        assert!(
            run.stderr.contains(expected) && !run.stderr.contains(other),
            "--preset {preset} on {lines:?}: {run:#?}"
        );
    }
}

/// bench/presets/tests/samples.tsv: lines the programs print (most seen
/// with the real program, the rest from its documentation or source), each
/// with what the built-in preset must make of it: `retry` (a transient
/// line), `stop` (a permanent one) or `none`, and `+throttled` for a line
/// of its throttle rule. Each line is printed by a command that exits 0, so
/// retry's own judgement tells the three apart: retried to the end (exit
/// 1), stopped by --stop-if-output, or a success; then by one that exits
/// 75, whose retry line says `throttled (` for a throttle line alone.
#[test]
fn the_recorded_lines_of_bench_presets_are_judged_as_it_says() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/bench/presets/tests/samples.tsv"
    );
    let samples = std::fs::read_to_string(path).unwrap();
    let cases: Vec<(&str, &str, &str)> = samples
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let mut fields = line.splitn(3, '\t');
            let mut next = || fields.next().unwrap_or_else(|| panic!("{path}: {line:?}"));
            (next(), next(), next())
        })
        .collect();
    assert!(cases.len() > 100, "{path}: {} lines", cases.len());
    // All at once: each is a few milliseconds of retry and printf.
    let children: Vec<_> = cases
        .iter()
        .map(|(preset, _, line)| {
            // Through a shell, so the preset is taken as given.
            retry(&["--preset", preset, "-n", "2", "-b", "1ms", "--"])
                .args(&["sh", "-c", "printf '%s\\n' \"$1\"", "sh", line])
                .into_command()
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // The same lines ending a failure of exit 75 (no preset's fatal-on):
    // a throttle line makes it a throttled retry, never a stop.
    let failing: Vec<_> = cases
        .iter()
        .map(|(preset, _, line)| {
            retry(&["--preset", preset, "-n", "2", "-b", "1ms", "--"])
                .args(&["sh", "-c", "printf '%s\\n' \"$1\"; exit 75", "sh", line])
                .into_command()
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut wrong = Vec::new();
    for (((preset, expected, line), child), failed) in cases.iter().zip(children).zip(failing) {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let got = match out.status.code() {
            Some(1) if stderr.contains("giving up after 2 attempts") => "retry",
            Some(0) if stderr.contains("(reason: stop_if_output)") => "stop",
            Some(0) if stderr.is_empty() => "none",
            _ => "?",
        };
        let failed = failed.wait_with_output().unwrap();
        let failed = String::from_utf8_lossy(&failed.stderr);
        let throttled = failed.contains("attempt 1/2 throttled (");
        let got = match throttled {
            true => format!("{got}+throttled"),
            false => got.to_owned(),
        };
        if got != *expected {
            wrong.push(format!(
                "[{preset}] {expected}, got {got}: {line}\n{stderr}{failed}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// ---- the preset looked up by the program (no --preset)

/// The real git judged with the preset looked up and with it named: the
/// same outcome. A missing repository stops at once, a closed port is
/// retried; `git status` (a local call the preset does not claim) fails
/// and is retried as without a preset.
#[test]
fn git_looked_up_judges_as_git_named_and_git_status_is_retried_as_before() {
    let git = installed("git", "git");
    let dir = scratch();
    let home = dir.path().to_str().unwrap();
    let run = |preset: &[&str], args: &[&str]| {
        retry(&["-n", "2", "-b", "1ms"])
            .args(preset)
            .args(&["--", git])
            .args(args)
            .env("LC_ALL", "C")
            .env("HOME", home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .current_dir(dir.path())
            .run()
    };
    let missing = dir.path().join("missing.git");
    let missing = missing.to_str().unwrap();
    let closed = format!("git://127.0.0.1:{}/repo.git", closed_port());
    for preset in [&[][..], &["--preset", "git"]] {
        stopped(&run(preset, &["ls-remote", missing]), 128)
            .stderr_has("does not appear to be a git repository")
            .stderr_has("(git preset: no such repository or ref;");
        retried(&run(preset, &["ls-remote", &closed]), 128);
    }
    // Not a repository: a local failure, retried as any failure.
    let status = run(&[], &["status"]);
    retried(&status, 128).stderr_has("not a git repository");
    assert!(!status.stderr.contains("preset"), "{status:#?}");
}

/// Programs that pass on another program's status keep retry's default:
/// a flaky `npm test` and a remote command over ssh (stand-ins on PATH
/// that fail once) are retried and succeed; `npm ci` failing the same way
/// is judged by the npm preset (exit 1 with no known message stops).
#[test]
fn a_flaky_npm_test_and_a_remote_command_over_ssh_are_still_retried() {
    use crate::harness::{fails, install, on_path};
    for (program, args) in [
        ("npm", &["test"][..]),
        ("npm", &["run", "build"]),
        ("ssh", &["-p", "22", "host", "make", "test"]),
        ("docker", &["run", "alpine", "true"]),
    ] {
        let dir = scratch();
        let steps = fails(dir.path(), 1, 1);
        let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
        install(dir.path(), program, &steps);
        retry(&["-n", "3", "-b", "1ms", "--", program])
            .args(args)
            .env("PATH", on_path(dir.path()))
            .run()
            .code(0)
            .stderr_has("attempt 2/3 succeeded");
    }
    let dir = scratch();
    install(
        dir.path(),
        "npm",
        &["err", "npm error code E404", "exit", "1"],
    );
    retry(&["-n", "3", "-b", "1ms", "--", "npm", "ci"])
        .env("PATH", on_path(dir.path()))
        .run()
        .code(1)
        .stderr_has("giving up after attempt 1/3")
        .stderr_has("(npm preset: registry 4xx;");
}
