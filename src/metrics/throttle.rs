//! A `--throttle` as series, written by every run that consults it and by
//! `--throttle-status NAME` with `--metrics-dir`, in a file of its own per
//! throttle, `retry-throttle-<name>.prom`, as the breaker's circuit is (no
//! job's `retry_<job>.prom` can have that name, and jobs that share a
//! throttle must not each serve its series): the attempts it rejected on
//! this host, a counter read back from the file this replaces and added to
//! under its lock, and as the run last saw it, the probability that a
//! request is rejected now and the window's counts, gauges. Labelled
//! `throttle="<name>"`; StatsD gets the same (`statsd.rs`).

use std::fmt::Write as _;
use std::path::Path;

use crate::platform::publish;
use crate::state::throttle::Seen;

/// The series, in the order written, with their HELP.
const REJECTED: (&str, &str) = (
    "retry_throttle_rejected_total",
    "Attempts the throttle rejected locally, of the runs on this host.",
);
const PROBABILITY: (&str, &str) = (
    "retry_throttle_reject_probability",
    "The probability that the throttle rejects a request now, as a run last saw it.",
);
const REQUESTS: (&str, &str) = (
    "retry_throttle_requests",
    "Requests the throttle counted over its sliding window, as a run last saw it.",
);
const ACCEPTS: (&str, &str) = (
    "retry_throttle_accepts",
    "Requests the service accepted over the throttle's sliding window, as a run last saw it.",
);

/// The most of an old file read back: more is not ours.
const READ_LIMIT: u64 = 16 * 1024;

/// The file's name for the throttle `name`.
pub fn file_name(name: &str) -> String {
    format!("retry-throttle-{name}.prom")
}

/// The file's text: `rejected`, the counter with this run's added.
pub fn render(name: &str, rejected: u64, seen: &Seen) -> String {
    let mut out = String::with_capacity(1024);
    for ((series, help), kind, value) in [
        (REJECTED, "counter", rejected.to_string()),
        (PROBABILITY, "gauge", format!("{:.6}", seen.probability)),
        (REQUESTS, "gauge", format!("{:.3}", seen.requests)),
        (ACCEPTS, "gauge", format!("{:.3}", seen.accepts)),
    ] {
        let _ = writeln!(
            out,
            "# HELP {series} {help}\n# TYPE {series} {kind}\n{series}{{throttle=\"{name}\"}} {value}"
        );
    }
    out
}

/// The counter an old file of this throttle's holds, if it holds one.
fn rejected_in(text: &str, name: &str) -> Option<u64> {
    let line = format!("{}{{throttle=\"{name}\"}} ", REJECTED.0);
    let value = text.lines().find_map(|l| l.strip_prefix(line.as_str()))?;
    value
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| value.parse().ok())?
}

/// Replaces the throttle's file in `dir` with `seen`, `rejected` added to
/// the counter the old file holds, under a lock on
/// `.retry-throttle-<name>.prom.lock`; a warning if it cannot. An old file
/// that cannot be trusted to read back (another user's, or open to others)
/// starts the counter again, which Prometheus takes as a reset.
pub fn write(dir: &Path, name: &str, rejected: u64, seen: &Seen) -> Option<String> {
    let file = file_name(name);
    super::write_locked(
        dir,
        &file,
        "the throttle's",
        |path, lock_file, lock_name| {
            let old = match publish::read(path, READ_LIMIT) {
                Ok(Some(text)) => rejected_in(&text, name).unwrap_or(0),
                Ok(None) | Err(_) => 0,
            };
            let text = render(name, old.saturating_add(rejected), seen);
            let still = || publish::still_locked(dir, lock_name, lock_file);
            match publish::replace_if(dir, &file, text.as_bytes(), still) {
                Ok(true) => Ok(()),
                Ok(false) => Err(format!(
                    "its lock '{lock_name}' was removed or replaced while this run held it"
                )),
                Err(error) => Err(crate::os_error::describe(&error)),
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    fn seen(probability: f64) -> Seen {
        Seen {
            probability,
            requests: 101.0,
            accepts: 10.5,
            at: SystemTime::now(),
        }
    }

    #[test]
    fn the_series_are_the_counter_and_the_gauges() {
        assert_eq!(
            render("api", 7, &seen(80.0 / 101.0)),
            "\
# HELP retry_throttle_rejected_total Attempts the throttle rejected locally, of the runs on this host.
# TYPE retry_throttle_rejected_total counter
retry_throttle_rejected_total{throttle=\"api\"} 7
# HELP retry_throttle_reject_probability The probability that the throttle rejects a request now, as a run last saw it.
# TYPE retry_throttle_reject_probability gauge
retry_throttle_reject_probability{throttle=\"api\"} 0.792079
# HELP retry_throttle_requests Requests the throttle counted over its sliding window, as a run last saw it.
# TYPE retry_throttle_requests gauge
retry_throttle_requests{throttle=\"api\"} 101.000
# HELP retry_throttle_accepts Requests the service accepted over the throttle's sliding window, as a run last saw it.
# TYPE retry_throttle_accepts gauge
retry_throttle_accepts{throttle=\"api\"} 10.500
"
        );
    }

    #[test]
    fn the_counter_is_added_to_and_a_failed_write_is_one_warning() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(write(dir.path(), "api", 3, &seen(0.5)), None);
        assert_eq!(write(dir.path(), "api", 4, &seen(0.25)), None);
        let text = std::fs::read_to_string(dir.path().join("retry-throttle-api.prom")).unwrap();
        assert!(
            text.contains("retry_throttle_rejected_total{throttle=\"api\"} 7\n"),
            "{text}"
        );
        assert!(text.contains("{throttle=\"api\"} 0.250000\n"), "{text}");
        // Another throttle's file is its own.
        assert_eq!(write(dir.path(), "db", 1, &seen(0.0)), None);
        let db = std::fs::read_to_string(dir.path().join("retry-throttle-db.prom")).unwrap();
        assert!(
            db.contains("retry_throttle_rejected_total{throttle=\"db\"} 1\n"),
            "{db}"
        );
        let gone = dir.path().join("gone");
        let warning = write(&gone, "api", 1, &seen(0.0)).unwrap();
        assert!(
            warning.starts_with("cannot write --metrics-dir '"),
            "{warning}"
        );
    }

    #[test]
    fn a_counter_that_is_no_number_starts_again() {
        for text in [
            "",
            "retry_throttle_rejected_total{throttle=\"api\"} -3\n",
            "x",
        ] {
            assert_eq!(rejected_in(text, "api"), None, "{text}");
        }
        let other = "retry_throttle_rejected_total{throttle=\"db\"} 9\n";
        assert_eq!(rejected_in(other, "api"), None);
        assert_eq!(rejected_in(other, "db"), Some(9));
    }
}
