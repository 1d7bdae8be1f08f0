//! `--simulate --model throttle`: small seeded tables end to end, checked
//! by invariants that hold for any seed (the numbers themselves are the
//! unit tests' and docs/simulation.md's), and the one-line usage errors of
//! its options.

use crate::harness::retry;
use crate::outage::{Row, csv_rows, num};

/// 4 requests a second, hosts every 10 s for a minute: at ten times the
/// capacity a few thousand runs a row, quick in a debug build.
const SMALL: [&str; 20] = [
    "--simulate",
    "--model",
    "throttle",
    "--capacity",
    "4",
    "--every",
    "10s",
    "--span",
    "1m",
    "--hints",
    "none",
    "--throttle-bases",
    "5s",
    "--throttle-ks",
    "2",
    "--throttle-windows",
    "1m",
    "--error-rate",
    "1%",
    "--format",
];

/// The rows of every case, in order.
const ROWS: [&str; 13] = [
    "none",
    "backoff",
    "throttle-base",
    "host-budget-old",
    "host-budget-2026",
    "fleet-budget-old",
    "fleet-budget-2026",
    "host-breaker",
    "fleet-breaker",
    "host-throttle",
    "fleet-throttle",
    "host-throttle-budget",
    "fleet-throttle-budget",
];

/// The CSV's rows with `seed`, at half and ten times the capacity, from
/// both kinds of arrivals.
fn table(seed: &str, more: &[&str]) -> Vec<Row> {
    let cases = ["--loads", "0.5,10", "--arrivals", "cron,clients"];
    let out = retry(&[&SMALL[..], &["csv", "--seed", seed], &cases, more].concat()).run();
    out.code(0);
    csv_rows(&out.stdout)
}

#[test]
fn every_case_has_every_row_and_the_service_is_held_to_its_capacity() {
    for seed in ["1", "2"] {
        let rows = table(seed, &["--reps", "1"]);
        assert_eq!(rows.len(), 4 * ROWS.len());
        for (i, row) in rows.iter().enumerate() {
            let (arrivals, load) = (&row["arrivals"], num(row, "load"));
            let case = i / ROWS.len();
            assert_eq!(row["policy"], ROWS[i % ROWS.len()], "{row:?}");
            assert_eq!(*arrivals, ["cron", "clients"][case / 2], "{row:?}");
            assert_eq!(load, [0.5, 10.0][case % 2], "{row:?}");
            // load × capacity × every.
            assert_eq!(num(row, "hosts"), load * 40.0, "{row:?}");
            if arrivals == "cron" {
                // Each host's 6 runs in the minute.
                assert_eq!(num(row, "runs"), load * 240.0, "{row:?}");
            }
            assert!(num(row, "goodput_rps") <= 4.0, "{row:?}");
            let gave_up = num(row, "gave_up");
            assert!((0.0..=1.0).contains(&gave_up), "{row:?}");
            if !row["policy"].contains("throttle") {
                assert_eq!(num(row, "rejected_rps"), 0.0, "{row:?}");
            }
        }
        let at = |arrivals: &str, load: f64, policy: &str| {
            (rows.iter())
                .find(|r| {
                    r["arrivals"] == arrivals && num(r, "load") == load && r["policy"] == policy
                })
                .unwrap()
        };
        for arrivals in ["cron", "clients"] {
            // Without retries, ten times the capacity is mostly refused; the
            // fleet's throttle keeps most of the retries from the service.
            let none = at(arrivals, 10.0, "none");
            assert!(
                num(none, "refused_rps") > 4.0 * num(none, "goodput_rps"),
                "{none:?}"
            );
            let backoff = at(arrivals, 10.0, "backoff");
            let throttle = at(arrivals, 10.0, "fleet-throttle");
            assert!(
                num(throttle, "refused_rps") * 2.0 < num(backoff, "refused_rps"),
                "{throttle:?} {backoff:?}"
            );
            assert!(num(throttle, "rejected_rps") > 0.0, "{throttle:?}");
        }
    }
}

#[test]
fn the_table_is_reproducible_with_a_seed_and_takes_few_repetitions_by_default() {
    let run = |seed: &str| {
        retry(
            &[
                &SMALL[..],
                &[
                    "json",
                    "--seed",
                    seed,
                    "--arrivals",
                    "clients",
                    "--loads",
                    "2",
                ],
            ]
            .concat(),
        )
        .run()
        .stdout
    };
    let first = run("7");
    assert!(
        first.starts_with(
            "[{\"arrivals\":\"clients\",\"load\":\"2\",\"hint\":\"none\",\"policy\":\"none\",\"params\":\"-n 1\",\"reps\":3,"
        ),
        "{first}"
    );
    assert_eq!(first, run("7"));
    assert_ne!(first, run("8"));
}

#[test]
fn its_options_need_the_model_and_bad_values_are_one_line() {
    let throttle =
        |more: &[&'static str]| [&["--simulate", "--model", "throttle"][..], more].concat();
    for (args, says) in [
        (
            vec!["--simulate", "--loads", "2"],
            "`--loads` is only for --simulate --model throttle",
        ),
        (
            vec!["--simulate", "--model", "outage", "--throttle-ks", "2"],
            "`--throttle-ks` is only for --simulate --model throttle",
        ),
        (
            vec!["--simulate", "--model", "busy", "--capacity", "5"],
            "`--capacity` is only for --simulate --model outage or throttle",
        ),
        (
            throttle(&["--hosts", "5"]),
            "`--hosts` is only for --simulate --model outage",
        ),
        (
            throttle(&["--clients", "5"]),
            "`--clients` is only for --simulate --model occ or busy",
        ),
        (
            throttle(&["--loads", "0"]),
            "`0`: expected a multiple of the capacity",
        ),
        (
            throttle(&["--loads", "2,x"]),
            "`x`: expected a multiple of the capacity",
        ),
        (throttle(&["--loads", "1001"]), "at most 1000"),
        (
            throttle(&["--arrivals", "cron,ftp"]),
            "`ftp`: expected `cron` or `clients`",
        ),
        (
            throttle(&["--hints", "maybe"]),
            "`maybe`: expected `none` or `retry-after`",
        ),
        (throttle(&["--error-rate", "1"]), "expected a percentage"),
        (throttle(&["--error-rate", "100%"]), "expected a percentage"),
        (
            throttle(&["--throttle-bases", "1s,0s"]),
            "`0s`: a throttle base is at least 1ms",
        ),
        (
            throttle(&["--throttle-bases", "5s,30s"]),
            "`--throttle-bases 5s,30s` has 30s above `--cap 20s`",
        ),
        (
            throttle(&["--throttle-ks", "2,0"]),
            "`0`: expected a K above 0",
        ),
        (
            throttle(&["--throttle-ks", "inf"]),
            "`inf`: expected a K above 0",
        ),
        (
            throttle(&["--throttle-windows", "500ms"]),
            "`500ms`: a throttle window is at least 1s",
        ),
        (
            throttle(&["-n", "unlimited"]),
            "--model throttle needs a number of attempts",
        ),
        (
            throttle(&["--jitter", "all"]),
            "--model throttle runs one of",
        ),
        (
            throttle(&["--loads", "1000", "--capacity", "1000"]),
            "60000000 hosts and up to",
        ),
    ] {
        retry(&args).run().code(2).stderr_lines(1).stderr_has(says);
    }
    retry(&["--simulate", "--model", "throttle"])
        .env("RETRY_THROTTLE_KS", "0")
        .run()
        .code(2)
        .stderr_lines(1)
        .stderr_has("RETRY_THROTTLE_KS");
}
