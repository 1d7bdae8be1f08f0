//! `--alternate`: later attempts run another command (a mirror's), in
//! turn or staying on the last, each named in its lines and judged by its
//! own program's preset; an alternate that cannot run is refused before
//! anything runs. The portable cases run programs made of the project's
//! helper (`harness::install`), so they run under wine too; the presets'
//! cases run the real curl and wget against loopback.

use std::path::Path;

use crate::harness::{Finished, install, on_path, retry, scratch};

/// `mirror-a`, `mirror-b` and `mirror-c` in `dir`, each appending its
/// letter to `dir/ran` and failing with 1, but `ok`, which prints `ok`.
fn mirrors(dir: &Path) -> std::ffi::OsString {
    let ran = dir.join("ran");
    let ran = ran.to_string_lossy();
    for letter in ["a", "b", "c"] {
        let name = format!("mirror-{letter}");
        install(dir, &name, &["append", &ran, letter, "exit", "1"]);
    }
    install(dir, "ok", &["append", &ran, "k", "out", "ok", "exit", "0"]);
    on_path(dir)
}

/// retry with `args` (then `--` and COMMAND) on a PATH of `mirrors`.
fn with_mirrors(dir: &Path, args: &[&str]) -> Finished {
    let path = mirrors(dir);
    retry(&["--base", "1ms"]).args(args).env("PATH", path).run()
}

fn ran(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("ran")).unwrap_or_default()
}

#[test]
fn the_alternate_runs_when_the_command_failed_and_its_success_ends_the_run() {
    let dir = scratch();
    let run = with_mirrors(
        dir.path(),
        &["-n", "3", "--alternate", "ok", "--", "mirror-a"],
    );
    run.code(0)
        .stdout_is("ok")
        .stderr_has("retry: mirror-a: attempt 1/3 (mirror-a) failed with exit code 1; sleep: ")
        .stderr_has("retry: mirror-a: attempt 2/3 (ok) succeeded; 2 attempts, ")
        .stderr_lines(2);
    assert_eq!(ran(dir.path()), "ak");
}

#[test]
fn attempts_rotate_back_to_the_command_or_stay_on_the_last_alternate() {
    let alternates = ["--alternate", "mirror-b", "--alternate", "mirror-c"];
    let dir = scratch();
    let rotate = with_mirrors(
        dir.path(),
        &[&["-n", "5"][..], &alternates, &["mirror-a"]].concat(),
    );
    rotate
        .code(1)
        .stderr_has("attempt 4/5 (mirror-a) failed")
        .stderr_has("giving up after 5 attempts: the last (mirror-b) failed with exit code 1");
    assert_eq!(ran(dir.path()), "abcab");
    let dir = scratch();
    let stay = [
        &["-n", "5", "--alternate-repeat", "last"][..],
        &alternates,
        &["mirror-a"],
    ];
    with_mirrors(dir.path(), &stay.concat())
        .code(1)
        .stderr_has("the last (mirror-c) failed");
    assert_eq!(ran(dir.path()), "abccc");
    // Without alternates the lines name no entry: as they always were.
    let dir = scratch();
    let plain = with_mirrors(dir.path(), &["-n", "2", "mirror-a"]);
    plain
        .code(1)
        .stderr_has("retry: mirror-a: attempt 1/2 failed with exit code 1;");
    assert_eq!(ran(dir.path()), "aa");
}

#[test]
fn an_alternate_is_split_into_words_as_sh_splits_them_and_sees_retry_attempt() {
    let helper = crate::harness::helper();
    let helper = helper.to_string_lossy();
    // Quotes make one word of two, on every platform (Windows' command
    // line is built from the words); nothing is expanded.
    let alternate = format!("'{helper}' env RETRY_ATTEMPT out 'two words' out \"$HOME\" exit 0");
    let run = retry(&["--base", "1ms", "--alternate", &alternate, "--"])
        .helper(&["env", "RETRY_ATTEMPT", "exit", "3"])
        .run();
    run.code(0).stdout_is("1\n2\ntwo words$HOME");
}

#[test]
fn an_alternate_that_cannot_run_or_is_empty_is_refused_and_nothing_runs() {
    let dir = scratch();
    let typo = with_mirrors(
        dir.path(),
        &["--alternate", "mirror-x -q", "--", "mirror-a"],
    );
    typo.code(2).stdout_is("").stderr_is(
        "retry: `--alternate mirror-x -q`: cannot run `mirror-x`: command not found \
         (checked before the first attempt)\n",
    );
    // Found, but no program: a file without execute permission, a directory.
    #[cfg(unix)]
    for path in ["/etc/passwd", "/"] {
        let alternate = format!("{path} -q");
        let refused = with_mirrors(dir.path(), &["--alternate", &alternate, "--", "mirror-a"]);
        refused.code(2).stdout_is("").stderr_is(&format!(
            "retry: `--alternate {path} -q`: cannot run `{path}`: permission denied: not an \
             executable file (checked before the first attempt)\n",
        ));
    }
    let empty = with_mirrors(dir.path(), &["--alternate", " ", "--", "mirror-a"]);
    empty
        .code(2)
        .stderr_has("an empty alternate would run nothing")
        .stderr_lines(1);
    let open = with_mirrors(
        dir.path(),
        &["--alternate", "mirror-b 'x", "--", "mirror-a"],
    );
    open.code(2)
        .stderr_has("a quote is left open")
        .stderr_lines(1);
    let stray = with_mirrors(
        dir.path(),
        &["--alternate-repeat", "last", "--", "mirror-a"],
    );
    stray
        .code(2)
        .stderr_has("`--alternate-repeat` is only for --alternate");
    assert_eq!(ran(dir.path()), "", "an attempt ran");
}

#[test]
fn after_a_reset_the_new_streak_starts_with_the_command_again() {
    // mirror-b runs past --reset-after: the next attempt is attempt 1 of a
    // new streak, which runs COMMAND (its second call succeeds). COMMAND's
    // own attempt is far below the bound, even on a loaded machine.
    let dir = scratch();
    let path = mirrors(dir.path());
    let (ran, count) = (dir.path().join("ran"), dir.path().join("count"));
    let (ran, count) = (ran.to_string_lossy(), count.to_string_lossy());
    install(
        dir.path(),
        "slow",
        &["append", &ran, "s", "sleep", "800", "exit", "1"],
    );
    install(
        dir.path(),
        "twice",
        &["append", &ran, "t", "count", &count, "2"],
    );
    let run = retry(&["--base", "1ms", "-n", "3", "--reset-after", "500ms"])
        .args(&["--alternate", "slow", "--", "twice"])
        .env("PATH", path)
        .run();
    // A first attempt's success is silent: `ran` says what ran.
    run.code(0).stderr_has("attempt 2/3 (slow) ran ");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ran")).unwrap(),
        "tst"
    );
}

#[cfg(unix)]
mod presets {
    //! Each attempt judged by the preset of the program it ran: the real
    //! curl and wget against loopback.

    use crate::harness::loopback::{HttpServer, closed_port, installed};
    use crate::harness::retry;

    #[test]
    fn each_program_judges_its_own_attempt_by_its_own_preset() {
        let (curl, wget) = (installed("curl", "curl"), installed("wget", "wget"));
        // curl's refused connection (7) is retried by curl's preset; wget's
        // 404 is stopped by wget's, on its error line, at attempt 2.
        let http = HttpServer::start(vec![(404, "Not Found", "", "")]);
        let closed = format!("http://127.0.0.1:{}/x", closed_port());
        let alternate = format!("{wget} -nv -O - {}", http.url);
        let run = retry(&["-n", "4", "--base", "1ms", "--alternate", &alternate, "--"])
            .args(&[curl, "-sS", &closed])
            .env("LC_ALL", "C")
            .run();
        run.code(8)
            .stderr_has("attempt 1/4 (curl) failed with exit code 7")
            .stderr_has("giving up after attempt 2/4 (wget) (exit code 8): `")
            .stderr_has("(wget preset: ");
        assert_eq!(http.served(), 1);
    }

    #[test]
    fn the_commands_stop_rule_never_stops_an_alternate_of_another_program() {
        let curl = installed("curl", "curl");
        // curl's preset stops on its 404 line; `sh` has no preset, so the
        // same line from it is retried (a mirror's own words are its own).
        let closed = format!("http://127.0.0.1:{}/x", closed_port());
        let said = "echo 'curl: (22) The requested URL returned error: 404' >&2; exit 22";
        let alternate = format!("sh -c \"{said}\"");
        let run = retry(&["-n", "3", "--base", "1ms", "--alternate", &alternate, "--"])
            .args(&[curl, "-sS", &closed])
            .env("LC_ALL", "C")
            .run();
        run.code(7)
            .stderr_has("attempt 2/3 (echo 'curl: (22) ")
            .stderr_has(") failed with exit code 22; sleep")
            .stderr_has("giving up after 3 attempts: the last (curl) failed with exit code 7");
        // Named, a preset judges every attempt: curl's line stops sh too.
        let run = retry(&["--preset", "curl", "-n", "3", "--base", "1ms"])
            .args(&["--alternate", &alternate, "--", curl, "-sS", &closed])
            .env("LC_ALL", "C")
            .run();
        run.code(22).stderr_has("giving up after attempt 2/3");
    }
}

#[cfg(feature = "preview")]
#[test]
fn the_plan_says_what_each_attempt_runs_only_with_alternates() {
    let dir = scratch();
    let plan = |args: &[&str]| {
        let path = mirrors(dir.path());
        let line = [
            &["--plan", "--seed", "1", "--format", "csv", "-n", "4"][..],
            args,
        ]
        .concat();
        retry(&line).env("PATH", path).run()
    };
    let rotate = plan(&["--alternate", "mirror-b", "--", "mirror-a"]);
    let rows: Vec<String> = rotate
        .stdout
        .lines()
        .map(|l| l.split(',').take(2).collect::<Vec<_>>().join(","))
        .collect();
    assert_eq!(
        rows,
        ["attempt,runs", "1,mirror-a", "2,mirror-b", "3,mirror-a"]
    );
    rotate
        .code(0)
        .stderr_has("; attempt 4, the last, runs mirror-b\n");
    let stay = plan(&[
        "--alternate-repeat",
        "last",
        "--alternate",
        "mirror-b",
        "--",
        "mirror-a",
    ]);
    assert!(stay.stdout.contains("\n3,mirror-b,"), "{stay:#?}");
    // Other plans keep their columns.
    let plain = plan(&["--", "mirror-a"]);
    assert!(
        plain.stdout.starts_with("attempt,ceiling_ms,"),
        "{plain:#?}"
    );
    assert_eq!(ran(dir.path()), "", "a plan ran an attempt");
}
