//! install.sh as root, through sudo: another retry first on sudo's
//! secure_path named, and /usr/local installed into (in a mount namespace
//! of its own) with HOME left alone. Moved out of install.rs (issue 51) so
//! each file stays under 800 lines; its gates are install.rs's.

// The release served from 127.0.0.1, and the helpers that run the script
// and check what it installed, are install.rs's.
use super::*;

/// A `sudo` that answers `sudo -n -l` with `secure_path`, as sudo lists
/// its defaults to root, and writes how it was called to `log`.
fn fake_sudo(dir: &Path, secure_path: &str, log: &Path) {
    let sudo = dir.join("sudo");
    let escaped = secure_path.replace(':', "\\:");
    std::fs::write(
        &sudo,
        format!(
            "#!/bin/sh\necho \"$*\" >>'{}'\n\
             echo 'Matching Defaults entries for root on ci:'\n\
             echo '    env_reset, mail_badpass, secure_path={escaped}, use_pty'\n\
             echo\necho 'User root may run the following commands on ci:'\n\
             echo '    (ALL : ALL) ALL'\n",
            log.display()
        ),
    )
    .unwrap();
    executable(&sudo);
}

/// A retry of another project at `dir/retry` (Debian's, say).
fn another_retry(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let other = dir.join("retry");
    std::fs::write(&other, "#!/bin/sh\nexit 0\n").unwrap();
    executable(&other);
    other
}

/// Under sudo a command is looked up on sudo's `secure_path`, not on
/// PATH: `sudo -u nobody retry` ran Debian's /usr/bin/retry. The script
/// says when another retry would come first there: as root from sudo's own
/// list (`sudo -n -l`), as another user (who may not read sudoers, and is
/// never made to run sudo) from Debian's and Ubuntu's, on Linux.
#[test]
fn another_retry_first_on_sudos_secure_path_is_named() {
    let release = Release::serve(None);
    let (home, prefix, other, fake, tmp) = (scratch(), scratch(), scratch(), scratch(), scratch());
    let bin = prefix.path().join("bin");
    let other = another_retry(&other.path().join("sbin"));
    let log = fake.path().join("sudo.log");
    let secure = format!(
        "{}:{}:/usr/bin",
        other.parent().unwrap().display(),
        bin.display()
    );
    fake_sudo(fake.path(), &secure, &log);
    let env = [
        ("HOME", home.path().to_str().unwrap()),
        ("PATH", &path_with(&[fake.path(), &bin])),
        ("RETRY_INSTALL_FROM", &release.url()),
    ];
    let args = ["--prefix", prefix.path().to_str().unwrap()];
    let ran = install_as(0, "sh", &args, &env, tmp.path());
    assert_installed(&ran, &bin, &prefix.path().join("share"));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "-n -l\n");
    let said: Vec<&str> = ran.stdout.lines().filter(|l| l.contains("sudo")).collect();
    assert_eq!(
        said,
        [format!(
            "under sudo another retry comes first: {}, from sudo's secure_path, {secure} \
             (it has {} before {}); under sudo, give this one's path: {}",
            other.display(),
            other.parent().unwrap().display(),
            bin.display(),
            bin.join("retry").display()
        )],
        "{}",
        ran.stdout
    );
    // As a user: sudo is never run, and the usual secure_path is taken on
    // Linux; what comes first there is whatever this machine has.
    std::fs::remove_file(&log).unwrap();
    let ran = install(&args, &env, tmp.path());
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(!log.exists(), "a user's install ran sudo");
    let usual = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    let first = usual
        .split(':')
        .map(|dir| Path::new(dir).join("retry"))
        .find(|retry| retry.is_file());
    let said: Vec<&str> = ran.stdout.lines().filter(|l| l.contains("sudo")).collect();
    match first {
        Some(first) if cfg!(target_os = "linux") => assert_eq!(
            said,
            [format!(
                "under sudo another retry comes first: {}, from sudo's usual secure_path \
                 (Debian's, Ubuntu's), {usual} (it leaves out {}); under sudo, give this \
                 one's path: {}{}",
                first.display(),
                bin.display(),
                bin.join("retry").display(),
                match first.starts_with("/usr/local/sbin") {
                    true => "",
                    false => ", or install as root (into /usr/local/bin)",
                }
            )],
            "{}",
            ran.stdout
        ),
        _ => assert_eq!(said, Vec::<&str>::new(), "{}", ran.stdout),
    }
}

/// Run as root, the script installs for every user into /usr/local,
/// where sudo's secure_path finds it too, and leaves the HOME it was given
/// (another user's, under `sudo -E` or `su`) alone; it still says when
/// another retry comes first under sudo. In a /usr/local of its own.
#[test]
fn as_root_it_installs_into_usr_local_and_leaves_home_alone() {
    let (home, fake, tmp) = (scratch(), scratch(), scratch());
    let log = fake.path().join("sudo.log");
    fake_sudo(
        fake.path(),
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
        &log,
    );
    // What runs inside: a retry of another project in /usr/local/sbin,
    // the script, then the files it left under /usr/local.
    let script = format!(
        "mkdir -p /usr/local/sbin && printf '#!/bin/sh\\n' >/usr/local/sbin/retry && \
         chmod 755 /usr/local/sbin/retry && sh '{}' && cd /usr/local && find . -type f | sort",
        repo("scripts/install.sh").display()
    );
    let Some(mut command) = with_own_usr_local(Path::new("/bin/sh"), &["-c", &script]) else {
        eprintln!("note: not root, or no mount namespace: skipped (it installs into /usr/local)");
        return;
    };
    let release = Release::serve(None);
    command
        .env_clear()
        .env("HOME", home.path())
        .env("TMPDIR", tmp.path())
        .env("PATH", path_with(&[fake.path()]))
        .env("RETRY_INSTALL_FROM", release.url())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    let (stdout, stderr) = outputs(&mut child);
    assert!(status.success(), "{stdout}{stderr}");
    for file in [
        "installed /usr/local/bin/retry",
        "installed /usr/local/share/man/man1/retry.1",
        "installed /usr/local/share/bash-completion/completions/retry",
        "installed /usr/local/share/zsh/site-functions/_retry",
        "installed /usr/local/share/fish/vendor_completions.d/retry.fish",
        "/usr/local/bin is on PATH",
        "under sudo another retry comes first: /usr/local/sbin/retry, from sudo's secure_path, \
         /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin (it has /usr/local/sbin before \
         /usr/local/bin); under sudo, give this one's path: /usr/local/bin/retry",
    ] {
        assert!(
            stdout.lines().any(|line| line == file),
            "no {file:?} in\n{stdout}"
        );
    }
    let found: Vec<&str> = stdout.lines().filter(|l| l.starts_with("./")).collect();
    assert_eq!(
        found,
        [
            "./bin/retry",
            "./sbin/retry",
            "./share/bash-completion/completions/retry",
            "./share/fish/vendor_completions.d/retry.fish",
            "./share/man/man1/retry.1",
            "./share/zsh/site-functions/_retry",
        ]
    );
    assert_eq!(
        files_under(home.path()),
        Vec::<String>::new(),
        "HOME touched"
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "-n -l\n");
}
