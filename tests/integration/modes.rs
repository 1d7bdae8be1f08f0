//! `--plan` and `--simulate`: they run no command, print to stdout in three
//! formats, and agree with a real run. On every platform (under wine
//! too) but what needs `ulimit`, /proc or a closed stdout.

use crate::harness::{retry, scratch, stand_ins};

fn numbers(json: &str, key: &str) -> Vec<u64> {
    let needle = format!("\"{key}\":");
    json.split(&needle)
        .skip(1)
        .map(|rest| {
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            rest[..end].parse().unwrap()
        })
        .collect()
}

#[test]
fn a_plan_and_a_run_with_one_seed_sleep_alike() {
    let args = ["--seed", "77", "--base", "2ms", "--cap", "40ms", "-n", "5"];
    let plan = retry(&[&args[..], &["--plan", "--format", "json"]].concat()).run();
    plan.code(0);
    let run = retry(&[&args[..], &["--log-format", "json", "false"]].concat())
        .env("PATH", stand_ins())
        .run();
    run.code(1);
    let planned = numbers(&plan.stdout, "sleep_ms");
    assert_eq!(planned.len(), 4, "{plan:#?}");
    assert_eq!(planned, numbers(&run.stderr, "sleep_ms"));
    assert_eq!(
        numbers(&plan.stdout, "ceiling_ms"),
        numbers(&run.stderr, "ceiling_ms")
    );
}

#[test]
fn a_plan_says_the_splay_and_keeps_its_rows() {
    let args = ["--plan", "--seed", "7", "-n", "4", "--format", "csv"];
    let plain = retry(&args).run();
    let splayed = retry(&[&args[..], &["--splay", "30s"]].concat()).run();
    // The splay's own stream: the rows are the seed's without it.
    splayed.code(0).stdout_is(&plain.stdout);
    splayed.stderr_is("retry: splay: 29s 763ms before the first attempt (--seed's draw, below 30s; counted in --max-time)\n");
    // Unseeded, its bound; stable, for the command named, its slot.
    retry(&["--plan", "--splay", "30s"])
        .run()
        .stderr_has("splay: a random time below 30s before the first attempt, drawn each run");
    retry(&["--plan", "--splay", "30s", "--splay-stable", "--", "backup"])
        .run()
        .stderr_has("before the first attempt (this host's slot, below 30s;");
}

#[test]
fn plan_formats_have_the_documented_shapes() {
    let args = ["--plan", "--jitter", "none", "--base", "100ms", "-n", "3"];
    let csv = retry(&[&args[..], &["--format", "csv"]].concat()).run();
    csv.code(0)
        .stdout_is("attempt,ceiling_ms,sleep_ms,cumulative_ms\n1,100,100,100\n2,200,200,300\n");
    let json = retry(&[&args[..], &["--format", "json"]].concat()).run();
    json.code(0).stdout_is(
        "[{\"attempt\":1,\"ceiling_ms\":100,\"sleep_ms\":100,\"cumulative_ms\":100},\n \
         {\"attempt\":2,\"ceiling_ms\":200,\"sleep_ms\":200,\"cumulative_ms\":300}]\n",
    );
    let table = retry(&args).run();
    table.code(0).stderr_is("");
    assert!(table.stdout.ends_with(
        "smallest 300 ms, expected 300 ms, largest 300 ms (no jitter, from the formulas)\n"
    ));
}

/// `--plan` in front of a real command line (issue 33): the same rows as
/// without it, the command named on stderr, and never run.
#[test]
fn a_plan_names_the_command_it_is_for_and_does_not_run_it() {
    let dir = scratch();
    let marker = dir.path().join("ran");
    let args = [
        "--plan", "--jitter", "none", "--base", "100ms", "-n", "3", "--format", "csv",
    ];
    let alone = retry(&args).run();
    let with = retry(&[&args[..], &["--"]].concat())
        .helper(&["touch", marker.to_str().unwrap()])
        .run();
    with.code(0)
        .stdout_is(&alone.stdout)
        .stderr_has("retry: the plan for ")
        .stderr_lines(1);
    assert!(!marker.exists(), "the plan ran the command");
}

#[test]
fn modes_run_no_command_and_take_none() {
    retry(&["--simulate", "true"]).run().code(2).stderr_lines(1);
    retry(&["--plan", "--jitter", "all"])
        .run()
        .code(2)
        .stderr_has("--jitter all");
    retry(&["--svg", "x.svg", "true"])
        .run()
        .code(2)
        .stderr_has("`--svg` is only for --simulate");
    retry(&["--plan", "--reps", "3"])
        .run()
        .code(2)
        .stderr_has("`--reps` is only for --simulate");
    retry(&["--format", "csv", "true"])
        .run()
        .code(2)
        .stderr_has("`--format`");
    retry(&["--simulate", "--clients", "0"])
        .run()
        .code(2)
        .stderr_has("--clients");
}

/// `retry ARGS` under `ulimit -v` (KiB of address space), stdout piped.
#[cfg(target_os = "linux")]
fn under_memory_limit(kib: u32, args: &[&str]) -> std::process::Child {
    let limit = format!("ulimit -v {kib} && exec \"$0\" \"$@\"");
    let bin = crate::harness::bin();
    let mut all = vec!["-c", &limit, &bin];
    all.extend(args);
    std::process::Command::new("sh")
        .args(&all)
        .env_clear()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
#[cfg(target_os = "linux")] // `ulimit -v`: macOS refuses RLIMIT_AS
fn plan_rows_stream_in_constant_memory() {
    // 300,000 rows held in memory need far more than 64 MiB; streamed, a few.
    let child = under_memory_limit(65_536, &["--plan", "-n", "300001", "--format", "csv"]);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 300_001);
    let last = text.lines().last().unwrap();
    assert!(last.starts_with("300000,20000,"), "{last}");
}

#[test]
#[cfg(target_os = "linux")] // `ulimit -v`: macOS refuses RLIMIT_AS
fn a_closed_stdout_ends_a_huge_plan_quietly_with_status_1() {
    use std::io::{BufRead, BufReader};
    for format in ["table", "csv", "json"] {
        let mut child =
            under_memory_limit(65_536, &["--plan", "-n", "4294967295", "--format", format]);
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        for _ in 0..3 {
            lines.next().unwrap().unwrap();
        }
        drop(lines); // like `| head -3`
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}: {out:?}");
        assert!(out.stderr.is_empty(), "{format}: {out:?}");
    }
}

#[test]
fn plan_table_columns_fit_the_largest_possible_values() {
    // Cumulative values wider than their header: the widths come from
    // bounds (retries x cap), not from rows that were never stored.
    let out = retry(&[
        "--plan",
        "-j",
        "none",
        "--base",
        "300000000000y",
        "--cap",
        "300000000000y",
        "-n",
        "50",
    ])
    .run();
    out.code(0).stderr_is("");
    let rows: Vec<&str> = out.stdout.lines().take(50).collect();
    let width = rows[0].len();
    assert!(rows.iter().all(|r| r.len() == width), "{}", out.stdout);
    assert!(
        rows[49].starts_with(
            "     49  9467280000000000000000  9467280000000000000000  463896720000000000000000"
        ),
        "{}",
        rows[49]
    );
}

/// The largest duration the parser accepts (u64::MAX seconds), and the
/// brief's 300 billion years: saturated or computed, never a panic.
const HUGE: [&str; 2] = ["18446744073709551615s", "300000000000y"];

#[test]
fn plans_with_extreme_durations_finish_cleanly() {
    for huge in HUGE {
        for jitter in ["none", "full", "equal", "decorrelated"] {
            for (base, n) in [(huge, "50"), ("1ns", "50"), ("0ns", "unlimited")] {
                for format in ["table", "csv", "json"] {
                    let out = retry(&[
                        "--plan", "-j", jitter, "--base", base, "--cap", huge, "-n", n, "--format",
                        format,
                    ])
                    .run();
                    out.code(0).stderr_is("");
                    let rows = out.stdout.matches("\n").count();
                    assert!(rows >= 20, "{jitter} {base} {format}: {out:#?}");
                    if format == "table" {
                        let total = out.stdout.lines().last().unwrap();
                        assert!(!total.contains("inf") && !total.contains("NaN"), "{total}");
                    }
                }
            }
        }
    }
}

#[test]
fn simulations_with_extreme_durations_finish_cleanly() {
    let dir = scratch();
    let svg = dir.path().join("charts.svg");
    for huge in HUGE {
        let out = retry(&[
            "--simulate",
            "--clients",
            "1",
            "--reps",
            "1",
            "--base",
            huge,
            "--cap",
            huge,
            "--net-delay",
            huge,
        ])
        .run();
        out.code(0).stderr_is("");
        let out = retry(&[
            "--simulate",
            "--jitter",
            "all",
            "--clients",
            "1,4",
            "--reps",
            "2",
            "--base",
            "1ns",
            "--cap",
            huge,
            "--net-delay",
            huge,
            "--net-sd",
            huge,
            "--format",
            "csv",
            "--svg",
            svg.to_str().unwrap(),
        ])
        .run();
        out.code(0).stderr_is("");
        assert_eq!(out.stdout.lines().count(), 11, "{out:#?}");
        assert!(!out.stdout.contains("inf") && !out.stdout.contains("NaN"));
        assert!(
            std::fs::read_to_string(&svg)
                .unwrap()
                .trim_end()
                .ends_with("</svg>")
        );
    }
}

const SIM: [&str; 8] = [
    "--simulate",
    "--jitter",
    "all",
    "--clients",
    "1,4",
    "--reps",
    "5",
    "--seed",
];

#[test]
fn simulate_csv_has_one_row_per_strategy_and_count() {
    let out = retry(&[&SIM[..], &["3", "--format", "csv"]].concat()).run();
    out.code(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "strategy,clients,reps,work_mean,work_sd,time_ms_mean,time_ms_sd"
    );
    assert_eq!(lines.len(), 1 + 5 * 2, "{out:#?}");
    let names: Vec<&str> = lines[1..]
        .iter()
        .step_by(2)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["none", "full", "equal", "decorrelated", "no-backoff"]
    );
    // One client always needs exactly one write.
    assert!(lines[1].starts_with("none,1,5,1.0,0.0,"), "{}", lines[1]);
}

#[test]
fn simulate_is_reproducible_with_a_seed() {
    let run = |seed| {
        retry(&[&SIM[..], &[seed, "--format", "json"]].concat())
            .run()
            .stdout
    };
    let first = run("9");
    assert!(
        first.starts_with("[{\"strategy\":\"none\",\"clients\":1,\"reps\":5,\"work_mean\":1.0,"),
        "{first}"
    );
    assert_eq!(first, run("9"));
    assert_ne!(first, run("10"));
}

#[test]
fn one_seed_gives_a_strategy_one_answer_alone_or_among_all() {
    let sweep = |jitter| {
        let args = [
            "--simulate",
            "--clients",
            "3,8",
            "--reps",
            "4",
            "--seed",
            "3",
        ];
        let out = retry(&[&args[..], &["--jitter", jitter, "--format", "csv"]].concat()).run();
        out.code(0);
        out.stdout
            .lines()
            .filter(|l| l.starts_with("full,"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let alone = sweep("full");
    assert_eq!(alone.len(), 2);
    assert_eq!(alone, sweep("all"));
}

/// A field of /proc/PID/status in KiB, or /proc/PID/stat's CPU ticks.
#[cfg(target_os = "linux")]
fn proc_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[cfg(target_os = "linux")]
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    // utime and stime: fields 14 and 15 of stat, 12 and 13 after the name.
    fields
        .get(11..13)
        .map_or(0, |f| f.iter().filter_map(|t| t.parse::<u64>().ok()).sum())
}

#[test]
#[cfg(target_os = "linux")] // `ulimit -v`, and /proc for CPU time and peak memory
fn a_sweep_of_four_billion_reps_runs_in_constant_memory() {
    let mut child = under_memory_limit(
        1 << 20,
        &[
            "--simulate",
            "--clients",
            "1",
            "--reps",
            "4294967295",
            "--seed",
            "1",
        ],
    );
    let pid = child.id();
    // Synchronise on work done, not on time: a third of a CPU second of
    // simulating (a list of every task would have failed at once).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while cpu_ticks(pid) < 30 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended: {:?}",
            child.wait_with_output()
        );
        assert!(std::time::Instant::now() < deadline, "no progress");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let peak = proc_kib(pid, "VmHWM:");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(peak > 0 && peak < 20_000, "peak resident memory {peak} KiB");
}

#[test]
fn an_unwritable_svg_path_is_refused_before_simulating() {
    let dir = scratch();
    let missing = dir.path().join("no/such/dir/charts.svg");
    for path in [missing.to_str().unwrap(), dir.path().to_str().unwrap()] {
        let out = retry(&[
            "--simulate",
            "--clients",
            "1",
            "--reps",
            "4294967295",
            "--svg",
            path,
        ])
        .run();
        out.code(2).stderr_lines(1).stdout_is("");
        out.stderr_has("retry: cannot write `--svg ")
            .stderr_has(path);
    }
    assert!(!missing.parent().unwrap().exists());
}

#[test]
fn an_existing_svg_is_replaced_by_the_new_charts() {
    let dir = scratch();
    let svg = dir.path().join("charts.svg");
    std::fs::write(&svg, "x".repeat(100_000)).unwrap();
    retry(&[
        "--simulate",
        "--clients",
        "1",
        "--reps",
        "2",
        "--svg",
        svg.to_str().unwrap(),
    ])
    .run()
    .code(0);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
}

#[test]
fn simulate_draws_both_charts_as_well_formed_svg() {
    let dir = scratch();
    let svg = dir.path().join("charts.svg");
    let out = retry(&[&SIM[..], &["1", "--svg", svg.to_str().unwrap()]].concat()).run();
    out.code(0);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert_balanced(&text);
    for needle in [
        "Work: conditional writes against clients",
        "Completion time against clients",
        "clients",
        "decorrelated",
        "no-backoff",
    ] {
        assert!(text.contains(needle), "the SVG lacks {needle:?}");
    }
    // Five strategies in each of two charts, and a legend sample for each.
    let thick = text
        .split("<polyline")
        .filter(|p| p.contains("stroke-width=\"2\""))
        .count();
    assert_eq!(
        thick, 20,
        "one line per strategy in each chart, plus the legends"
    );
}

/// Every opened element is closed, in order (a small well-formedness check).
fn assert_balanced(svg: &str) {
    let mut open: Vec<&str> = Vec::new();
    for tag in svg.split('<').skip(1) {
        let tag = &tag[..tag.find('>').expect("an unterminated tag")];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop(), Some(name.trim()), "mismatched </{name}>");
        } else if !tag.ends_with('/') && !tag.starts_with('?') && !tag.starts_with('!') {
            open.push(tag.split_whitespace().next().unwrap_or(""));
        }
    }
    assert!(open.is_empty(), "unclosed elements: {open:?}");
}

#[test]
fn simulate_defaults_to_the_posts_parameters() {
    // With the post's 10 ms base, one client finishes in about four network hops.
    let out = retry(&[
        "--simulate",
        "--jitter",
        "full",
        "--clients",
        "1",
        "--reps",
        "20",
        "--format",
        "csv",
        "--seed",
        "2",
    ])
    .run();
    out.code(0);
    let row: Vec<&str> = out.stdout.lines().nth(1).unwrap().split(',').collect();
    let time: f64 = row[5].parse().unwrap();
    assert!((30.0..50.0).contains(&time), "{out:#?}");
}

#[test]
fn completions_and_man_page_print_to_stdout() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = retry(&["--completions", shell]).run();
        out.code(0).stderr_is("");
        assert!(
            out.stdout.contains("max-attempts"),
            "{shell} completions lack --max-attempts"
        );
    }
    let man = retry(&["--man"]).run();
    man.code(0);
    assert!(man.stdout.contains(".TH retry 1"), "{man:#?}");
    retry(&["--completions", "tcsh"])
        .run()
        .code(2)
        .stderr_has("--completions");
}

#[test]
fn the_busy_model_adds_the_servers_utilisation() {
    let out = retry(&[
        "--simulate",
        "--model",
        "busy",
        "--jitter",
        "all",
        "--clients",
        "1,4",
        "--reps",
        "3",
        "--seed",
        "3",
        "--format",
        "csv",
    ])
    .run();
    out.code(0).stderr_is("");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "strategy,clients,reps,work_mean,work_sd,time_ms_mean,time_ms_sd,utilisation"
    );
    assert_eq!(lines.len(), 1 + 5 * 2, "{out:#?}");
    // One client finds the server idle: one request, served at once.
    assert!(lines[1].starts_with("none,1,3,1.0,0.0,"), "{}", lines[1]);
    for line in &lines[1..] {
        let utilisation: f64 = line.rsplit(',').next().unwrap().parse().unwrap();
        assert!(utilisation > 0.0 && utilisation < 1.0, "{line}");
    }
}

#[test]
fn a_repetition_stops_at_max_work_and_its_row_says_so() {
    let out = retry(&[
        "--simulate",
        "--model",
        "busy",
        "--jitter",
        "none",
        "--clients",
        "50",
        "--reps",
        "2",
        "--max-work",
        "100",
        "--seed",
        "1",
        "--format",
        "csv",
    ])
    .run();
    out.code(0).stderr_lines(1).stderr_has("--max-work 100");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].ends_with(",utilisation,capped"), "{}", lines[0]);
    assert!(lines[1].starts_with("none,50,2,100.0,0.0,"), "{}", lines[1]);
    assert!(lines[1].ends_with(",2"), "{}", lines[1]);
}

#[test]
fn the_busy_models_options_need_it() {
    retry(&["--simulate", "--service-time", "5ms"])
        .run()
        .code(2)
        .stderr_has("`--service-time` is only for --simulate --model busy");
    retry(&["--plan", "--model", "busy"])
        .run()
        .code(2)
        .stderr_has("`--model` is only for --simulate");
    retry(&["--simulate", "--max-work", "0"])
        .run()
        .code(2)
        .stderr_has("--max-work");
}

#[test]
#[cfg(unix)] // a stdout closed at start, by sh's `>&-`
fn a_mode_that_only_prints_exits_1_when_stdout_was_closed() {
    use crate::harness::bin;
    // The closed stdout is /dev/null by the time a mode prints, so writing
    // would succeed and show nothing: said on stderr, exit 1.
    let closed = |words: &str| {
        let script = format!("exec \"$0\" {words} >&-");
        std::process::Command::new("sh")
            .args(["-c", &script, &bin()])
            .output()
            .unwrap()
    };
    for words in [
        "--plan -n 3",
        "--completions bash",
        "--man",
        "--help",
        "--version",
    ] {
        let out = closed(words);
        assert_eq!(out.status.code(), Some(1), "{words}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "retry: stdout is closed: nothing to print to (it was closed when retry started)\n",
            "{words}"
        );
    }
    // A run goes on: the command's output is discarded, as into /dev/null.
    let out = closed("-n1 -- echo hi");
    assert_eq!((out.status.code(), out.stderr.len()), (Some(0), 0));
}

/// The modes that only print are decided before the run's cross-field
/// rules: an environment set up for jobs (a cap below the base, `all`
/// jitter, zero timeouts, overlapping codes, a preset) must not break a
/// shell profile's `retry --completions bash`.
#[test]
fn print_only_modes_ignore_the_runs_rules_under_a_hostile_environment() {
    let state = scratch();
    let hostile = |args: &[&str]| {
        retry(args)
            .env("RETRY_BASE", "10s")
            .env("RETRY_CAP", "1s")
            .env("RETRY_JITTER", "all")
            .env("RETRY_TIMEOUT", "0s")
            .env("RETRY_MAX_TIME", "0s")
            .env("RETRY_SUCCESS_ON", "0,1")
            .env("RETRY_RETRY_ON", "1")
            .env("RETRY_PRESET", "curl")
            .env("XDG_STATE_HOME", state.path())
            .env("XDG_RUNTIME_DIR", state.path())
            .run()
    };
    for args in [
        &["--completions", "bash"][..],
        &["--man"],
        &["--presets"],
        &["--presets", "git"],
        &["--budget-status", "ci"],
        &["--breaker-status", "ci"],
    ] {
        let run = hostile(args);
        run.code(0);
        assert!(!run.stdout.is_empty(), "{args:?}: {run:#?}");
    }
    // A run still checks them all.
    hostile(&["--", "true"])
        .code(2)
        .stderr_has("is below `RETRY_BASE=10s`");
}
