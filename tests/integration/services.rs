//! The recipes of docs/guide.md's "systemd, Kubernetes and cron", checked
//! as far as this machine allows: each unit file by `systemd-analyze
//! verify` (the test's programs in place of `/usr/local/bin`'s), each
//! manifest by `kubernetes-validate --strict` against Kubernetes' own
//! schemas, each retry command line they hold by retry itself (`--plan`:
//! it parses, nothing runs), the crontab line run as cron runs it (`sh
//! -c`, its variables set) against a loopback monitor, and retry as a
//! container's PID 1 (a PID namespace of its own, `unshare`) stopped by
//! SIGTERM as the kubelet stops it.
//!
//! The tools are installed by `.ci/run`, which sets
//! `RETRY_TESTS_NEED_SERVICES`; elsewhere a test whose tool is missing
//! says so and passes.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::pings::Stub;
use crate::harness::{BIN, retry, scratch, tools_for, wait_bounded};

const GUIDE: &str = include_str!("../../docs/guide.md");
const NEED: &str = "RETRY_TESTS_NEED_SERVICES";

/// The guide's section, to the next section.
fn section() -> &'static str {
    let section = GUIDE
        .split("\n## systemd, Kubernetes and cron\n")
        .nth(1)
        .expect("docs/guide.md has the section");
    section.split("\n## ").next().unwrap()
}

/// The section's code blocks in `language`.
fn blocks(language: &str) -> Vec<&'static str> {
    section()
        .split(&format!("```{language}\n"))
        .skip(1)
        .map(|block| block.split("```").next().unwrap())
        .collect()
}

/// A program that exists and does nothing, for the units' workers.
fn true_program() -> String {
    let out = Command::new("sh")
        .args(["-c", "command -v true"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// `/usr/local/bin/retry` as the test's retry, any other program there as
/// `true`.
fn local(text: &str) -> String {
    let text = text.replace("/usr/local/bin/retry", BIN);
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("/usr/local/bin/") {
        out.push_str(&rest[..at]);
        let end = rest[at..]
            .find(|c: char| c.is_whitespace())
            .map_or(rest.len(), |n| at + n);
        out.push_str(&true_program());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// retry's words in a command line: `--plan` put first, so it only parses.
fn parses(words: &[String], what: &str) {
    assert!(
        words[0] == "retry" || words[0] == "/usr/local/bin/retry",
        "{what}: not a retry command: {words:?}"
    );
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let out = retry(&["--plan"]).args(&args).run();
    assert_eq!(out.code, Some(0), "{what}: {words:?}: {out:#?}");
}

#[test]
fn the_unit_files_pass_systemd_analyze_verify() {
    let units = blocks("ini");
    assert_eq!(units.len(), 3, "a service, a oneshot and its timer");
    if !tools_for("the unit files", &["systemd-analyze"], NEED) {
        return;
    }
    let dir = scratch();
    let mut paths = Vec::new();
    for unit in &units {
        let name = unit
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# /etc/systemd/system/"))
            .expect("a unit starts with its path");
        let path = dir.path().join(name);
        std::fs::write(&path, local(unit)).unwrap();
        if let Some(exec) = unit.lines().find_map(|l| l.strip_prefix("ExecStart=")) {
            let words: Vec<String> = exec.split_whitespace().map(str::to_owned).collect();
            parses(&words, name);
        }
        paths.push(path);
    }
    let verify = |paths: &[std::path::PathBuf]| {
        Command::new("systemd-analyze")
            .arg("verify")
            .args(paths)
            .env("SYSTEMD_LOG_LEVEL", "warning")
            .output()
            .unwrap()
    };
    let out = verify(&paths);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && said.trim().is_empty(), "{said}");
    // The check can fail: a setting systemd does not know is said.
    let typo = dir.path().join("typo.service");
    let unit = std::fs::read_to_string(&paths[0]).unwrap();
    std::fs::write(&typo, unit.replace("KillMode=mixed", "KillMode=mixd")).unwrap();
    let out = verify(&[typo]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("mixd"),
        "{out:?}"
    );
}

/// The words of each `command: [...]` of a manifest.
fn commands(manifest: &str) -> Vec<Vec<String>> {
    manifest
        .split("command: [")
        .skip(1)
        .map(|rest| {
            let list = rest.split(']').next().unwrap();
            list.split(',')
                .map(|word| word.trim().trim_matches('"').to_owned())
                .filter(|word| !word.is_empty())
                .collect()
        })
        .collect()
}

#[test]
fn the_manifests_pass_kubernetes_validate_strict() {
    let manifests = blocks("yaml");
    assert_eq!(manifests.len(), 2, "an init container and a Job");
    for manifest in &manifests {
        let commands = commands(manifest);
        assert!(!commands.is_empty(), "{manifest}");
        for words in commands.iter().filter(|w| w[0] == "retry") {
            parses(words, "a container's command");
        }
    }
    if !tools_for("the manifests", &["kubernetes-validate"], NEED) {
        return;
    }
    let dir = scratch();
    let validate = |name: &str, manifest: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, manifest).unwrap();
        Command::new("kubernetes-validate")
            .arg("--strict")
            .arg(&path)
            .output()
            .unwrap()
    };
    for (n, manifest) in manifests.iter().enumerate() {
        let out = validate(&format!("{n}.yaml"), manifest);
        assert!(out.status.success(), "{manifest}\n{out:?}");
    }
    // The check can fail: a field Kubernetes does not know is refused.
    let typo = manifests[1].replace("backoffLimit:", "backofLimit:");
    assert!(!validate("typo.yaml", &typo).status.success());
}

/// The crontab's variables and its job's command, as cron runs it.
fn crontab() -> (Vec<(String, String)>, String) {
    let [block] = blocks("sh")[..] else {
        panic!("one crontab in the section")
    };
    let mut variables = Vec::new();
    let mut jobs = Vec::new();
    for line in block
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        match line.split_once('=') {
            Some((name, value)) if !name.contains(' ') => {
                variables.push((name.to_owned(), value.to_owned()));
            }
            _ => jobs.push(
                line.splitn(6, ' ')
                    .nth(5)
                    .expect("five time fields")
                    .to_owned(),
            ),
        }
    }
    let [job] = &jobs[..] else {
        panic!("one job: {jobs:?}")
    };
    (variables, job.clone())
}

/// The crontab line runs as written under `sh -c` (cron's way), with its
/// monitor a loopback stub, the backup a script of the test's that fails
/// twice, and a splay of 50 ms for 15 minutes: one ping, the success's,
/// with the output's tail.
#[test]
fn the_crontab_line_pings_once_with_the_tail() {
    let (variables, job) = crontab();
    assert!(!job.contains('%'), "cron reads % as a newline: {job}");
    let stub = Stub::start();
    let dir = scratch();
    let backup = dir.path().join("backup");
    std::fs::write(
        &backup,
        format!(
            "#!/bin/sh\necho backing up\nn=$(($(cat '{0}' 2>/dev/null || echo 0) + 1))\n\
             echo $n > '{0}'\n[ $n -ge 3 ]\n",
            dir.path().join("calls").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&backup, std::fs::Permissions::from_mode(0o755)).unwrap();
    let job = job
        .replace("/usr/local/bin/retry", BIN)
        .replace("/usr/local/bin/backup", backup.to_str().unwrap())
        .replace("--splay 15m", "--splay 50ms")
        // A sleep of a few milliseconds between the backup's attempts.
        .replace(" --max-time 1h", " --max-time 1h --base 1ms");
    let mut sh = Command::new("sh");
    sh.args(["-c", &job])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in &variables {
        sh.env(name, value.replace("https://hc-ping.com", &stub.origin()));
    }
    let mut child = sh.spawn().unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(0));
    let pings = stub.take();
    assert_eq!(pings.len(), 1, "{pings:?}");
    assert_eq!(pings[0].path(), "/your-uuid-here/0");
    let body = String::from_utf8_lossy(&pings[0].body);
    assert!(body.contains("backing up"), "{body}");
}

/// retry as a container's first process (PID 1 of a PID namespace of its
/// own, as a pod's): the kubelet's SIGTERM ends it promptly, status 143.
#[test]
#[cfg(target_os = "linux")]
fn retry_as_pid_1_ends_on_sigterm() {
    let probe = Command::new("unshare")
        .args(["-Urpf", "--mount-proc", "true"])
        .stderr(Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        assert!(
            std::env::var_os(NEED).is_none(),
            "unshare -Urpf is refused here"
        );
        eprintln!("unshare -Urpf is refused here (no user namespaces): skipped");
        return;
    }
    let dir = scratch();
    let started = dir.path().join("started");
    let script = format!("echo $$ > '{}'; exec sleep 30", started.display());
    let mut unshare = Command::new("unshare")
        .args([
            "-Urpf",
            "--mount-proc",
            BIN,
            "-n",
            "unlimited",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .spawn()
        .unwrap();
    use std::time::Instant;
    let until = Instant::now() + Duration::from_secs(10);
    while !started.exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    let inside = std::fs::read_to_string(&started).expect("the command started");
    // Its first process, retry, starts the command as PID 2.
    assert_eq!(inside.trim(), "2");
    let children =
        std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", unshare.id())).unwrap();
    let retry_pid: i32 = children.trim().parse().expect("unshare's one child");
    let stopped = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(retry_pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = wait_bounded(&mut unshare, Duration::from_secs(20));
    assert!(
        stopped.elapsed() < Duration::from_secs(10),
        "{:?}",
        stopped.elapsed()
    );
    use std::os::unix::process::ExitStatusExt;
    assert!(
        status.code() == Some(143) || status.signal() == Some(15),
        "{status:?}"
    );
}
