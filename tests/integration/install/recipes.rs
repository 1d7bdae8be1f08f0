//! The README's other ways to install, run as published: the GitLab
//! snippet (with curl, and with busybox alone in its wget form), and
//! cargo-binstall finding the release's own archives. Moved out of
//! install.rs (issue 51) so each file stays under 800 lines; its gates are
//! install.rs's.

use super::without_curl::{busybox, busybox_tools};
// The release served from 127.0.0.1, and the helpers that run the script
// and check what it installed, are install.rs's.
use super::*;

/// The README's GitLab snippet: its `before_script` lines, as one script.
fn gitlab_snippet() -> String {
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let block = readme
        .split("  before_script:")
        .nth(1)
        .expect("the README's GitLab snippet")
        .split("  script:")
        .next()
        .unwrap();
    let lines: Vec<&str> = block
        .lines()
        .filter_map(|l| l.strip_prefix("    - "))
        .collect();
    assert!(
        lines.iter().any(|l| l.contains("sha256sum -c")),
        "the snippet checks install.sh: {lines:?}"
    );
    lines.join("\n")
}

/// The same with its download in the form its comment gives for a
/// system without curl (Alpine, a BusyBox image).
fn gitlab_snippet_with_wget() -> String {
    let snippet = gitlab_snippet();
    let curl = snippet
        .lines()
        .find(|l| l.starts_with("curl "))
        .expect("the snippet's curl line");
    let wget = curl
        .split_once("(no curl): ")
        .expect("the wget form beside curl")
        .1;
    assert!(wget.starts_with("wget "), "{wget}");
    snippet.replace(curl, wget)
}

/// Runs `snippet` under `sh` (the first on PATH) against a release that
/// publishes install.sh, changed if `tampered`: whether it succeeded, its
/// output, and whether retry was installed in HOME. A user, as
/// `id_saying` tells the script; with `as_root` (busybox's sh runs its
/// own `id`), root in a /usr/local of its own, where it must be installed
/// instead (`None` where that cannot be made).
fn run_gitlab_snippet(
    snippet: &str,
    tools: &str,
    tampered: bool,
    as_root: bool,
) -> Option<(bool, String, bool)> {
    // install.sh and its .sha256 as the release publishes them
    // (release.yml calls scripts/dist.sh --install-script).
    let published = scratch();
    let made = Command::new("bash")
        .arg(repo("scripts/dist.sh"))
        .args(["--install-script", "http://127.0.0.1:9/unused"])
        .arg(published.path())
        .status()
        .unwrap();
    assert!(made.success());
    let sum = std::fs::read_to_string(published.path().join("install.sh.sha256")).unwrap();
    let (sum, file) = sum.trim_end().split_once("  ").unwrap();
    assert_eq!(file, "install.sh");
    if tampered {
        let mut script = std::fs::read_to_string(published.path().join("install.sh")).unwrap();
        script.push_str("touch \"$HOME/tampered\"\n");
        std::fs::write(published.path().join("install.sh"), script).unwrap();
    }
    let release = Release::serve_with(None, Some(published.path().to_owned()));
    let (home, cwd, user) = (scratch(), scratch(), id_saying(1000));
    // Where it went, said last (a snippet that fails says nothing more).
    let snippet = format!("{snippet}\nls /usr/local/bin/retry 2>/dev/null || :");
    let sh = Path::new(tools.rsplit(':').next().unwrap()).join("sh");
    let mut command = match as_root {
        true => with_own_usr_local(&sh, &["-ec", &snippet])?,
        false => {
            let mut user = Command::new("sh");
            user.args(["-ec", &snippet]);
            user
        }
    };
    command
        .current_dir(cwd.path())
        .env_clear()
        .env("HOME", home.path())
        .env("TMPDIR", cwd.path())
        .env("PATH", format!("{}:{tools}", user.path().display()))
        .env("RELEASE_URL", release.url().trim_end_matches('/'))
        .env("INSTALL_SHA256", sum)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    let (stdout, stderr) = outputs(&mut child);
    let installed = match as_root {
        true => stdout.ends_with("\n/usr/local/bin/retry\n"),
        false => home.path().join(".local/bin/retry").is_file(),
    };
    assert!(
        !home.path().join("tampered").exists(),
        "a changed install.sh ran"
    );
    Some((status.success(), format!("{stdout}{stderr}"), installed))
}

#[test]
fn the_readme_s_gitlab_snippet_runs_install_sh_only_as_published() {
    let snippet = gitlab_snippet();
    let run = |tampered| run_gitlab_snippet(&snippet, &path_with(&[]), tampered, false).unwrap();
    let (ok, said, installed) = run(false);
    assert!(ok && installed, "{said}");
    let (ok, said, installed) = run(true);
    assert!(!ok && !installed, "{said}");
    assert!(said.contains("install.sh: FAILED"), "{said}");
}

/// Its wget form, where BusyBox is all there is (sh, wget, sha256sum,
/// tar: an Alpine or BusyBox image): installs as published, and refuses a
/// changed script as the curl form does.
#[test]
fn the_readme_s_gitlab_snippet_runs_with_busybox_alone_in_its_wget_form() {
    let Some(busybox) = busybox() else {
        eprintln!("note: no busybox here (apt-get install busybox): skipped");
        return;
    };
    let tools = scratch();
    busybox_tools(tools.path(), busybox);
    let tools = tools.path().to_str().unwrap();
    let snippet = gitlab_snippet_with_wget();
    // busybox's sh runs its own `id`: run as root, the script installs
    // into /usr/local, here a tmpfs of the run's own.
    let root = nix::unistd::geteuid().is_root();
    let Some((ok, said, installed)) = run_gitlab_snippet(&snippet, tools, false, root) else {
        return;
    };
    assert!(ok && installed, "{said}");
    let (ok, said, installed) = run_gitlab_snippet(&snippet, tools, true, root).unwrap();
    assert!(!ok && !installed, "{said}");
    assert!(said.contains("install.sh: FAILED"), "{said}");
}

/// A key's value in a section of Cargo.toml (`key = "value"` lines).
fn cargo_toml_value(section: &str, key: &str) -> Option<String> {
    let toml = std::fs::read_to_string(repo("Cargo.toml")).unwrap();
    let body = toml.split(&format!("\n[{section}]\n")).nth(1)?;
    body.lines()
        .take_while(|l| !l.starts_with('['))
        .find_map(|l| l.strip_prefix(&format!("{key} = \"")))
        .and_then(|v| v.strip_suffix('"'))
        .map(str::to_owned)
}

#[test]
fn cargo_binstall_finds_the_release_s_own_archives() {
    let version = "9.8.7";
    let (targets, _) = release_yml(version);
    let windows = "x86_64-pc-windows-msvc";
    let base = "package.metadata.binstall";
    let repo_url = "https://git.example.test/o/retry";
    let expand = |template: &str, target: &str, ext: &str| {
        template
            .replace("{ repo }", repo_url)
            .replace("{ version }", version)
            .replace("{ target }", target)
            .replace("{ bin }", "retry")
            .replace("{ binary-ext }", ext)
    };
    let bin_dir = cargo_toml_value(base, "bin-dir").expect("binstall's bin-dir");
    for target in targets.iter().map(String::as_str).chain([windows]) {
        let (section, ext) = if target == windows {
            (format!("{base}.overrides.{windows}"), ".exe")
        } else {
            (base.to_owned(), "")
        };
        let url = cargo_toml_value(&section, "pkg-url").expect("binstall's pkg-url");
        let archive = rule(version, target);
        assert_eq!(
            expand(&url, target, ext),
            format!("{repo_url}/releases/download/v{version}/{archive}"),
            "{target}"
        );
        // The archive's one directory, the binary in it (scripts/dist.sh).
        let stem = archive.trim_end_matches(".tar.gz").trim_end_matches(".zip");
        assert_eq!(expand(&bin_dir, target, ext), format!("{stem}/retry{ext}"));
        let format = cargo_toml_value(&section, "pkg-fmt").expect("binstall's pkg-fmt");
        assert_eq!(format, if target == windows { "zip" } else { "tgz" });
    }
    // Templated, never a hosting address.
    let toml = std::fs::read_to_string(repo("Cargo.toml")).unwrap();
    assert!(
        !toml.contains("github.com"),
        "Cargo.toml names a hosting address"
    );
}
