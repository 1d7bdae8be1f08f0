//! A team's or a user's presets file: a preset that claims a program,
//! presets for a team's own tools, a file that is wrong, unreadable, a
//! FIFO, a link to /dev/zero or others' to write, each named or set aside.
//! Moved out of presets.rs (issue 51) so each file stays under 800 lines;
//! its gates are presets.rs's, and test by test as they were.

#[cfg(unix)]
use std::time::Duration;

use super::fake;
use crate::harness::{retry, scratch};

/// A team's preset with `calls` is chosen by the program as a built-in
/// one is, and over a built-in one claiming the same program, which -v
/// says; two of the team's claiming one program are a usage error naming
/// both, and nothing runs.
#[test]
fn a_teams_preset_that_claims_a_program_wins_over_the_builtin_and_two_clash() {
    let config = scratch();
    let file = presets_file(config.path());
    std::fs::write(
        &file,
        "[web]\nprograms = curl\ncalls = *\nretry-on = 3\nsource = ours\n",
    )
    .unwrap();
    let bin = scratch();
    let runs = bin.path().join("runs");
    let runs = runs.to_str().unwrap();
    let path = fake(bin.path(), "curl", &["append", runs, "x", "exit", "3"]);
    let run = |args: &[&str]| {
        retry(&["-n", "2", "-b", "1ms"])
            .args(args)
            .args(&["--", "curl", "x"])
            .env("PATH", &path)
            .env("XDG_CONFIG_HOME", config.path())
            .run()
    };
    // 3 is fatal to the built-in curl preset, retried by the team's.
    let verbose = run(&["-v"]);
    verbose
        .code(3)
        .stderr_has("giving up after 2 attempts")
        .stderr_has(&format!(
            "retry: curl: the web preset judges failures, chosen for `curl` from {}, over the \
         built-in curl preset (--preset none turns this off)\n",
            file.display()
        ));
    assert_eq!(
        verbose.stderr.matches("web preset").count(),
        1,
        "{verbose:#?}"
    );
    run(&["--preset", "curl"])
        .code(3)
        .stderr_has("giving up after attempt 1/2");
    std::fs::write(
        &file,
        "[web]\nprograms = curl\ncalls = *\nsource = ours\n\
         [api]\nprograms = curl wget\ncalls = get\nsource = ours\n",
    )
    .unwrap();
    let _ = std::fs::remove_file(runs);
    run(&[])
        .code(2)
        .stdout_is("")
        .stderr_lines(1)
        .stderr_has(&format!(
            "the presets [web] and [api] of {} both claim curl: keep `calls` in one of them",
            file.display()
        ));
    assert!(!std::path::Path::new(runs).exists(), "the command ran");
    // Named, or turned off, the clash does not matter.
    run(&["--preset", "none"]).code(3);
}

#[test]
fn a_team_writes_presets_for_its_own_tools() {
    let config = scratch();
    let dir = config.path().join("retry");
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("presets.ini");
    std::fs::write(
        &file,
        "# Our deploy tool: 75 is its 'try again', 'no such service' is final.\n\
         [deploy]\nprograms = sh\nretry-on = 75\nstop-if-output = ^no such service\n\
         source = the deploy tool's README\n",
    )
    .unwrap();
    let home = config.path().display().to_string();
    // The helper stands in for the deploy tool (`programs = sh` only
    // names it in the listing).
    let ours = |steps: &[&str]| {
        retry(&["--preset", "deploy", "-n", "3", "-b", "1ms"])
            .helper(steps)
            .env("XDG_CONFIG_HOME", &home)
            .run()
    };
    ours(&["exit", "75"])
        .code(75)
        .stderr_has("giving up after 3 attempts");
    ours(&["err", "no such service\n", "exit", "75"])
        .code(75)
        .stderr_has("giving up after attempt 1/3");
    // --presets -v lists it after the built-in ones, naming its file.
    let listing = retry(&["--presets", "-v"])
        .env("XDG_CONFIG_HOME", &home)
        .run();
    listing.code(0);
    let header = format!("# deploy (from {}): for sh;", file.display());
    assert!(listing.stdout.contains(&header), "{listing:#?}");
    assert!(listing.stdout.find("# curl").unwrap() < listing.stdout.find(&header).unwrap());
    // The table tells it by its codes and rules, having no labels; with
    // them, by its words, and the give-up line names its rule.
    let table = retry(&["--presets"]).env("XDG_CONFIG_HOME", &home).run();
    let row = table
        .stdout
        .lines()
        .find(|l| l.starts_with("deploy "))
        .unwrap();
    assert!(row.starts_with("deploy  sh       exit 75"), "{table:#?}");
    std::fs::write(
        &file,
        "[deploy]\nprograms = sh\nretry-on = 75\nretry-on.label = a busy deploy lock\n\
         stop-if-output = ^no such service\nstop-if-output.label = a service that does not exist\n\
         source = the deploy tool's README\n",
    )
    .unwrap();
    let table = retry(&["--presets"]).env("XDG_CONFIG_HOME", &home).run();
    let row = table
        .stdout
        .lines()
        .find(|l| l.starts_with("deploy "))
        .unwrap();
    assert!(
        row.starts_with("deploy  sh       a busy deploy lock"),
        "{table:#?}"
    );
    ours(&["err", "no such service: web\n", "exit", "75"])
        .code(75)
        .stderr_has(
            "giving up after attempt 1/3 (exit code 75): `no such service: web` is \
             permanent (deploy preset: a service that does not exist) (reason: stop_if_output)",
        );
    // RETRY_PRESET names it too; a relative XDG_CONFIG_HOME is ignored for
    // $HOME/.config, as the XDG rules say.
    std::fs::create_dir(config.path().join(".config")).unwrap();
    std::fs::rename(&dir, config.path().join(".config/retry")).unwrap();
    retry(&["-n", "2", "-b", "1ms"])
        .helper(&["exit", "75"])
        .env("RETRY_PRESET", "deploy")
        .env("XDG_CONFIG_HOME", "relative")
        .env("HOME", &home)
        .run()
        .code(75)
        .stderr_has("giving up after 2 attempts");
}

#[test]
fn a_users_preset_file_that_is_wrong_is_named_and_nothing_runs() {
    let config = scratch();
    let dir = config.path().join("retry");
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("presets.ini");
    let home = config.path().display().to_string();
    let marker = config.path().join("ran");
    let touch = ["touch", marker.to_str().unwrap()];
    for (text, says) in [
        (
            "[curl]\nretry-on = 22\nsource = ours\n",
            "[curl] is a built-in preset; give yours another name",
        ),
        ("[ours]\nretry_on = 22\n", "line 2: unknown key `retry_on`"),
        (
            "[ours]\nretry-on = 1-0x100000000\nsource = s\n",
            "--retry-on 1-0x100000000: exit code `0x100000000` is out of range",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let run = retry(&["--preset", "ours"])
            .helper(&touch)
            .env("XDG_CONFIG_HOME", &home)
            .run();
        run.code(2)
            .stderr_lines(1)
            .stderr_has(says)
            .stderr_has(&file.display().to_string());
        assert!(!marker.exists(), "{text}: the command ran");
    }
    // A broken file is only read when a preset is named.
    retry(&[])
        .helper(&["exit", "0"])
        .env("XDG_CONFIG_HOME", &home)
        .run()
        .code(0)
        .stderr_is("");
}

/// An empty or relative HOME names no presets file: it would be one in
/// whatever directory retry runs in, anyone's.
#[test]
fn a_relative_home_names_no_presets_file() {
    let cwd = scratch();
    std::fs::create_dir(cwd.path().join(".config")).unwrap();
    let file = presets_file(&cwd.path().join(".config"));
    std::fs::write(&file, "[ours]\nretry-on = 75\nsource = s\n").unwrap();
    for home in ["", "."] {
        retry(&["--preset", "ours", "--"])
            .helper(&["exit", "0"])
            .env("XDG_CONFIG_HOME", "")
            .env("HOME", home)
            .current_dir(cwd.path())
            .run()
            .code(2)
            .stderr_lines(1)
            .stderr_has("unknown preset `ours`");
    }
}

/// `config/retry/presets.ini`, its directory made (`0755`, whatever the umask).
fn presets_file(config: &std::path::Path) -> std::path::PathBuf {
    let dir = config.join("retry");
    std::fs::create_dir(&dir).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir.join("presets.ini")
}

/// The one warning of a presets file set aside, and why.
fn ignored(file: &std::path::Path, why: &str) -> String {
    format!(
        "warning: the presets file {} is ignored: {why}; the built-in presets still apply\n",
        file.display()
    )
}

/// `RETRY_PRESET=curl`, set fleet-wide, means the same on every host: a
/// user's file that is broken is set aside with one warning, and curl's
/// rules still judge (3 is fatal to curl, retried by default).
#[test]
fn a_broken_users_file_never_breaks_a_builtin_preset() {
    let config = scratch();
    let file = presets_file(config.path());
    for (text, why) in [
        (
            "[curl]\nretry-on = 3\nsource = ours\n",
            "[curl] is a built-in preset; give yours another name, so that \
             --preset curl means the same on every machine",
        ),
        ("[ours]\nretry_on = 22\n", "line 2: unknown key `retry_on`"),
    ] {
        std::fs::write(&file, text).unwrap();
        let bin = scratch();
        let run = retry(&["-n", "3", "-b", "1ms", "--", "curl"])
            .env("PATH", fake(bin.path(), "curl", &["exit", "3"]))
            .env("RETRY_PRESET", "curl")
            .env("XDG_CONFIG_HOME", config.path())
            .run();
        run.code(3)
            .stderr_has("giving up after attempt 1/3")
            .stderr_lines(2);
        let first = run.stderr.lines().next().unwrap();
        let warning = format!(
            "warning: the presets file {} is ignored: {why}",
            file.display()
        );
        assert!(first.contains(&warning), "{run:#?}");
        assert!(
            first.ends_with("; the built-in presets still apply"),
            "{run:#?}"
        );
    }
    // Without --preset the lookup reads it: one warning, before the run.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let run = retry(&["-n", "1"])
        .helper(&["exit", "3"])
        .env("XDG_CONFIG_HOME", config.path())
        .run();
    run.code(3).stderr_lines(2);
    let first = run.stderr.lines().next().unwrap().to_owned() + "\n";
    assert!(
        first.ends_with(&ignored(&file, "it is a directory, not a regular file")),
        "{run:#?}"
    );
    // --presets lists the built-in ones, and says why once.
    let listing = retry(&["--presets"])
        .env("XDG_CONFIG_HOME", config.path())
        .run();
    listing.code(0).stderr_is(&format!(
        "retry: {}",
        ignored(&file, "it is a directory, not a regular file")
    ));
    assert!(listing.stdout.starts_with("preset  for"), "{listing:#?}");
}

/// A FIFO hung retry before the command ran (`-v`) or as it gave up (its
/// note), and a link to /dev/zero took memory until there was none: each
/// is set aside at once with one warning. The run is held to 4 GB of
/// address space, so that an unbounded read fails rather than takes the
/// machine.
#[test]
#[cfg(unix)] // FIFOs, /dev/zero, sh's ulimit
fn a_presets_file_that_would_hang_or_exhaust_retry_is_ignored_at_once() {
    use crate::harness::{outputs, wait_bounded};
    let config = scratch();
    let file = presets_file(config.path());
    let cases: [(&dyn Fn(), &str); 2] = [
        (
            &|| nix::unistd::mkfifo(&file, nix::sys::stat::Mode::S_IRWXU).unwrap(),
            "it is a FIFO, not a regular file",
        ),
        (
            &|| std::os::unix::fs::symlink("/dev/zero", &file).unwrap(),
            "it is a character device, not a regular file",
        ),
    ];
    for (make, why) in cases {
        let _ = std::fs::remove_file(&file);
        make();
        for verbose in [&["-v"][..], &[]] {
            let inner = retry(verbose)
                .args(&["-n", "2", "-b", "1ms", "--"])
                .helper(&["exit", "1"])
                .env("XDG_CONFIG_HOME", config.path())
                .into_command();
            let mut bounded = std::process::Command::new("sh");
            bounded
                .args(["-c", "ulimit -v 4000000 && exec \"$@\"", "sh"])
                .arg(inner.get_program())
                .args(inner.get_args())
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            for (key, value) in inner.get_envs() {
                match value {
                    Some(value) => bounded.env(key, value),
                    None => bounded.env_remove(key),
                };
            }
            let mut child = bounded.spawn().unwrap();
            let status = wait_bounded(&mut child, Duration::from_secs(20));
            let (_, stderr) = outputs(&mut child);
            assert_eq!(status.code(), Some(1), "{why} {verbose:?}: {stderr}");
            assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
            assert!(stderr.contains(&ignored(&file, why)), "{stderr}");
            assert!(stderr.contains("giving up after 2 attempts"), "{stderr}");
        }
    }
}

/// A presets file others may write, or another user's, is theirs to set:
/// set aside, and a preset only it defines is an error naming it. (As
/// root, another user's `retry-if-output = .` ran a success four times.)
#[test]
#[cfg(unix)] // modes, owners and chown
fn a_presets_file_others_could_write_is_not_trusted() {
    use std::os::unix::fs::PermissionsExt;
    let config = scratch();
    let file = presets_file(config.path());
    let dir = file.parent().unwrap().to_owned();
    std::fs::write(
        &file,
        "[deploy]\nprograms = deploy\nretry-if-output = .\nsource = theirs\n",
    )
    .unwrap();
    let runs = config.path().join("runs");
    let runs_text = runs.to_str().unwrap().to_owned();
    let bin = scratch();
    let path = fake(
        bin.path(),
        "curl",
        &["append", &runs_text, "x", "out", "deployed"],
    );
    let deploy = |preset: &str| {
        retry(&["-n", "4", "-b", "1ms", "--preset", preset, "--", "curl"])
            .env("PATH", &path)
            .env("XDG_CONFIG_HOME", config.path())
            .run()
    };
    let refused = |why: &str| {
        let _ = std::fs::remove_file(&runs);
        let run = deploy("deploy");
        run.code(2).stderr_lines(1).stderr_has(&format!(
            "unknown preset `deploy`; known presets: curl, wget, git, ssh, rsync, apt, docker, \
             npm, pip; the presets file {} is ignored: {why}",
            file.display()
        ));
        assert!(!runs.exists(), "{why}: the command ran");
        // A built-in preset goes on, with one warning.
        let run = deploy("curl");
        run.code(0).stdout_is("deployed");
        let warning = ignored(&file, why);
        assert_eq!(run.stderr, format!("retry: curl: {warning}"));
        assert_eq!(std::fs::read_to_string(&runs).unwrap(), "x");
    };
    let mode = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    mode(&file, 0o664);
    refused("it is writable by other users (mode 664); make it 0644");
    mode(&file, 0o644);
    mode(&dir, 0o757);
    refused(&format!(
        "{} is writable by other users (mode 757); make it 0755",
        dir.display()
    ));
    mode(&dir, 0o755);
    // The user's own, as it should be, means what it says: every line
    // matches, so each success is retried (and the run gives up).
    let _ = std::fs::remove_file(&runs);
    deploy("deploy").code(1);
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "xxxx");
    if nix::unistd::geteuid().as_raw() != 0 {
        return eprintln!("skipped: only root can hand a file to another user");
    }
    // As root, in another user's configuration directory.
    std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
    refused(&format!(
        "{} is owned by user id 65534, not by you (0) or root",
        dir.display()
    ));
    std::os::unix::fs::chown(&dir, Some(0), None).unwrap();
    std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
    refused("it is owned by user id 65534, not by you (0) or root");
}
