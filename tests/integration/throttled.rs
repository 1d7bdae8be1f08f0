//! Throttled failures end to end (issue 52): a command that prints a 429
//! line, judged by a preset's throttle rule and by `--throttle-if-output`;
//! the text line, the JSON `class`, the metrics' label, and the sleeps
//! drawn on `--throttle-base` with `--seed`, as `--plan` shows them.

use crate::harness::{retry, scratch};

/// curl's line for a 429 with `-f`, as the curl preset's throttle rule has it.
const CURL_429: &str = "curl: (22) The requested URL returned error: 429";

/// A script for `sh -c` that prints `line` to stderr, then exits with
/// `code`: through a shell, so a named preset is taken as given.
fn printing(line: &str, code: i32) -> String {
    format!("echo '{line}' >&2; exit {code}")
}

/// The numbers of `"field":N` in JSON lines, in order.
#[cfg(feature = "preview")]
fn numbers(text: &str, field: &str) -> Vec<u64> {
    let key = format!("\"{field}\":");
    text.match_indices(&key)
        .map(|(at, _)| {
            let rest = &text[at + key.len()..];
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            rest[..end].parse().unwrap()
        })
        .collect()
}

#[test]
fn a_presets_429_is_a_throttled_retry_in_the_text_line() {
    // Two attempts, sleeps of 1 ms for a transient failure and 2 ms for a
    // throttled one, no jitter.
    let twice = |line: &str| {
        retry(&["--preset", "curl", "-n", "2", "--base", "1ms"])
            .args(&["--throttle-base", "2ms", "--jitter", "none", "--"])
            .args(&["sh", "-c", &printing(line, 22)])
            .run()
    };
    let run = twice(CURL_429);
    run.code(22).stderr_has(
        ": attempt 1/2 throttled (HTTP 429), exit code 22; sleep: 2 ms (no jitter, up to 2 ms)\n",
    );
    // A 503 (no Retry-After seen) is a transient failure, as before.
    let run = twice("curl: (22) The requested URL returned error: 503");
    run.code(22).stderr_has(
        ": attempt 1/2 failed with exit code 22; sleep: 1 ms (no jitter, up to 1 ms)\n",
    );
}

/// The sleeps of a run whose every failure is throttled are the plan's
/// throttled rows with the same seed, each under its ceiling; the JSON
/// log names the class and the evidence.
#[test]
#[cfg(feature = "preview")]
fn throttled_sleeps_are_the_plans_throttled_rows_with_one_seed() {
    let args = [
        "--seed",
        "52",
        "-n",
        "4",
        "--base",
        "1ms",
        "--throttle-base",
        "20ms",
        "--cap",
        "200ms",
        "--throttle-if-output",
        "error: 429$",
    ];
    let plan = retry(&[&args[..], &["--plan", "--format", "csv"]].concat()).run();
    plan.code(0);
    let throttled: Vec<u64> = plan
        .stdout
        .lines()
        .filter_map(|row| row.strip_prefix("throttled,"))
        .map(|row| row.split(',').nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(throttled.len(), 3, "{plan:#?}");
    let run = retry(&[&args[..], &["--log-format", "json", "--"]].concat())
        .args(&["sh", "-c", &printing(CURL_429, 1)])
        .run();
    run.code(1);
    let failed: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.starts_with("{\"event\":\"attempt_failed\""))
        .collect();
    assert_eq!(failed.len(), 3, "{run:#?}");
    for line in failed {
        assert!(
            line.ends_with(
                r#","exit_code":1,"class":"throttled","throttled_by":"--throttle-if-output error: 429$"}"#
            ),
            "{line}"
        );
    }
    assert_eq!(numbers(&run.stderr, "sleep_ms"), throttled, "{run:#?}");
    let ceilings = numbers(&run.stderr, "ceiling_ms");
    assert_eq!(ceilings, [20, 40, 80]);
    // Slept for real: at least the sleeps, the run's last line says when.
    let slept: u64 = throttled.iter().sum();
    let elapsed = *numbers(&run.stderr, "elapsed_ms").last().unwrap();
    assert!(elapsed >= slept, "{elapsed} ms for {slept} ms of sleeps");
    // Without a match: transient, on --base (1 ms at most).
    let run = retry(&[&args[..], &["--log-format", "json", "--"]].concat())
        .args(&["sh", "-c", &printing("curl: (7) Failed to connect", 1)])
        .run();
    run.code(1);
    assert!(!run.stderr.contains("throttled"), "{run:#?}");
    assert_eq!(numbers(&run.stderr, "ceiling_ms"), [1, 2, 4]);
}

#[test]
fn the_metrics_count_retries_by_class() {
    let dir = scratch();
    let metrics = dir.path().to_str().unwrap();
    let count = dir.path().join("count");
    // Throttled twice, then transient once, then a success.
    let script = format!(
        "n=$(cat '{0}' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '{0}'; \
         [ $n -le 2 ] && {{ echo 'rate limit exceeded' >&2; exit 1; }}; [ $n -eq 3 ] && exit 1; exit 0",
        count.display()
    );
    retry(&["-n", "5", "--base", "1ms", "--throttle-base", "1ms"])
        .args(&[
            "--throttle-if-output",
            "rate limit",
            "--metrics-dir",
            metrics,
        ])
        .args(&["--job", "sync", "--", "sh", "-c", &script])
        .run()
        .code(0)
        .stderr_has("attempt 2/5 throttled (--throttle-if-output rate limit), exit code 1; ")
        .stderr_has("attempt 3/5 failed with exit code 1; ");
    let text = std::fs::read_to_string(dir.path().join("retry_sync.prom")).unwrap();
    for line in [
        "retry_retries_total{retry_job=\"sync\",class=\"transient\"} 1\n",
        "retry_retries_total{retry_job=\"sync\",class=\"throttled\"} 2\n",
        "retry_attempts_total{retry_job=\"sync\"} 4\n",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}

/// A throttle line never stops a run: a code the preset does not retry
/// is retried for it (the server that said slow down is up), a fatal one
/// is still fatal.
#[test]
fn a_throttle_line_makes_a_retry_but_never_overrides_a_fatal_code() {
    let named = [
        "--preset",
        "curl",
        "-n",
        "2",
        "--base",
        "1ms",
        "--throttle-base",
        "1ms",
        "--",
    ];
    // curl's 75 is in neither of the named preset's lists: stopped alone,
    // retried with the 429 line.
    retry(&named)
        .args(&["sh", "-c", &printing("no line", 75)])
        .run()
        .code(75)
        .stderr_has("(reason: not_retryable)");
    retry(&named)
        .args(&["sh", "-c", &printing(CURL_429, 75)])
        .run()
        .code(75)
        .stderr_has("attempt 1/2 throttled (HTTP 429), exit code 75; ")
        .stderr_has("(reason: attempts)");
    // 3 is fatal for the curl preset (a malformed URL), 429 line or not.
    retry(&named)
        .args(&["sh", "-c", &printing(CURL_429, 3)])
        .run()
        .code(3)
        .stderr_has("(reason: fatal)");
}

/// The AWS CLI has no preset; docs/behaviour.md's `--throttle-if-output`
/// for it classes the lines aws-cli 1.45.11 printed against a loopback
/// stub answering botocore's throttling codes (bench/presets/README.md).
#[test]
fn the_documented_aws_cli_throttle_rule_matches_its_lines() {
    let doc = include_str!("../../docs/behaviour.md");
    let rule = doc
        .split("retry --throttle-if-output '")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .expect("docs/behaviour.md gives the AWS CLI's --throttle-if-output");
    for (line, throttled) in [
        (
            "An error occurred (ThrottlingException) when calling the ListTables operation (reached max retries: 9): Rate exceeded",
            true,
        ),
        (
            "An error occurred (SlowDown) when calling the ListObjectsV2 operation (reached max retries: 4): Please reduce your request rate.",
            true,
        ),
        (
            "An error occurred (RequestLimitExceeded) when calling the DescribeRegions operation (reached max retries: 4): Request limit exceeded.",
            true,
        ),
        (
            "An error occurred (Throttling) when calling the GetCallerIdentity operation (reached max retries: 4): Rate exceeded",
            true,
        ),
        (
            "An error occurred (TooManyRequestsException) when calling the ListFunctions operation (reached max retries: 4): Rate Exceeded.",
            true,
        ),
        (
            "An error occurred (ProvisionedThroughputExceededException) when calling the ListTables operation (reached max retries: 9): Rate exceeded",
            true,
        ),
        (
            "An error occurred (InternalFailure) when calling the GetCallerIdentity operation (reached max retries: 4): Rate exceeded",
            false,
        ),
        (
            "An error occurred (AccessDenied) when calling the GetCallerIdentity operation: Rate exceeded",
            false,
        ),
    ] {
        let run = retry(&["-n", "2", "--base", "1ms", "--throttle-base", "1ms"])
            .args(&["--throttle-if-output", rule, "--"])
            .args(&["sh", "-c", &printing(line, 255)])
            .run();
        run.code(255);
        assert_eq!(
            run.stderr.contains(" throttled ("),
            throttled,
            "{line}\n{run:#?}"
        );
    }
}
