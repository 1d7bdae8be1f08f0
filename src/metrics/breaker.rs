//! A `--breaker` circuit as series, written by every run that consults it
//! (one the open circuit skips too) and by `--breaker-status NAME` with
//! `--metrics-dir`: an hourly job's circuit shows between its runs, and a
//! check every minute shows it as it stands. One file per circuit,
//! `retry-breaker-<name>.prom` (no job's `retry_<job>.prom` can have that
//! name), since jobs that share a circuit must not each serve its series
//! (node_exporter refuses a series two files give). Gauges, labelled
//! `breaker="<name>"`; StatsD gets the same as gauges (`statsd.rs`).

use std::fmt::Write as _;
use std::path::Path;
use std::time::SystemTime;

use crate::state::breaker::{Circuit, State};

/// The series, in the order written, with their HELP.
const STATE: (&str, &str) = (
    "retry_breaker_state",
    "The circuit's state: 0 closed, 1 open, 2 probing.",
);
const FAILURES: (&str, &str) = (
    "retry_breaker_failures",
    "Failed runs the circuit counted in a row.",
);
const NEXT_PROBE: (&str, &str) = (
    "retry_breaker_next_probe_timestamp_seconds",
    "When a run may probe the circuit next (probing: when the probe's lease ends), \
     in seconds since the Unix epoch; 0 when closed.",
);

/// What the series say of `circuit`: its state's number, the failures
/// counted, and the next probe's time in ms since the epoch (0 closed).
pub fn values(circuit: &Circuit) -> (u8, u32, u64) {
    let ms = |ns: u64| ns / 1_000_000;
    match circuit.state {
        State::Closed => (0, circuit.failures, 0),
        State::Open { until } => (1, circuit.failures, ms(until)),
        State::Probing { until, .. } => (2, circuit.failures, ms(until)),
    }
}

/// The file's name for the circuit `name`.
pub fn file_name(name: &str) -> String {
    format!("retry-breaker-{name}.prom")
}

/// The file's text.
pub fn render(name: &str, circuit: &Circuit) -> String {
    let (state, failures, next_ms) = values(circuit);
    let next = format!("{}.{:03}", next_ms / 1000, next_ms % 1000);
    let mut out = String::with_capacity(640);
    for ((series, help), value) in [
        (STATE, state.to_string()),
        (FAILURES, failures.to_string()),
        (NEXT_PROBE, next),
    ] {
        let _ = writeln!(
            out,
            "# HELP {series} {help}\n# TYPE {series} gauge\n{series}{{breaker=\"{name}\"}} {value}"
        );
    }
    out
}

/// Replaces the circuit's file in `dir` with `circuit` as it was `seen`;
/// a warning if it cannot. Runs of jobs that share a circuit end at once:
/// one skipped by the open circuit could write what it saw after a probe
/// that closed it wrote "closed", and the file said open (or probing) until
/// the next run. So the file is dated when its circuit was seen, and under
/// a lock on `.retry-breaker-<name>.prom.lock` a circuit seen before the
/// file's date is older news, not written.
pub fn write(dir: &Path, name: &str, circuit: &Circuit, seen: SystemTime) -> Option<String> {
    use crate::platform::publish;
    let file = file_name(name);
    super::write_locked(dir, &file, "the circuit's", |path, _, _| {
        if publish::dated_after(path, seen) {
            return Ok(());
        }
        let text = render(name, circuit);
        publish::replace_dated(dir, &file, text.as_bytes(), seen)
            .map_err(|error| crate::os_error::describe(&error))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_state_is_written_with_its_next_probe() {
        let s = 1_000_000_000_u64;
        let open = Circuit {
            state: State::Open {
                until: 1_700_000_093 * s + 250_000_000,
            },
            failures: 4,
            level: 1,
            after: 3,
            limit: 0,
        };
        assert_eq!(
            render("db", &open),
            "\
# HELP retry_breaker_state The circuit's state: 0 closed, 1 open, 2 probing.
# TYPE retry_breaker_state gauge
retry_breaker_state{breaker=\"db\"} 1
# HELP retry_breaker_failures Failed runs the circuit counted in a row.
# TYPE retry_breaker_failures gauge
retry_breaker_failures{breaker=\"db\"} 4
# HELP retry_breaker_next_probe_timestamp_seconds When a run may probe the circuit next (probing: when the probe's lease ends), in seconds since the Unix epoch; 0 when closed.
# TYPE retry_breaker_next_probe_timestamp_seconds gauge
retry_breaker_next_probe_timestamp_seconds{breaker=\"db\"} 1700000093.250
"
        );
        let closed = Circuit {
            failures: 2,
            ..Circuit::default()
        };
        assert_eq!(values(&closed), (0, 2, 0));
        let probing = Circuit {
            state: State::Probing {
                lease: 5,
                until: 1_700_000_600 * s,
            },
            ..open
        };
        assert_eq!(values(&probing), (2, 4, 1_700_000_600_000));
        assert!(render("db", &closed).ends_with("{breaker=\"db\"} 0.000\n"));
    }

    #[test]
    fn the_file_is_the_circuits_and_a_failed_write_is_one_warning() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        assert_eq!(write(dir.path(), "db", &Circuit::default(), now), None);
        let text = std::fs::read_to_string(dir.path().join("retry-breaker-db.prom")).unwrap();
        assert!(text.contains("retry_breaker_state{breaker=\"db\"} 0\n"));
        let gone = dir.path().join("gone");
        let warning = write(&gone, "db", &Circuit::default(), now).unwrap();
        assert!(
            warning.starts_with(&format!(
                "cannot write --metrics-dir '{}': ",
                gone.join("retry-breaker-db.prom").display()
            )),
            "{warning}"
        );
    }

    /// Runs of jobs that share a circuit, ending at once: one the open
    /// circuit skipped wrote what it saw after the probe that closed it
    /// wrote "closed" (5 of 10 tries of 30 runs), and the file said
    /// probing until the next run. What was seen before the file's date
    /// is not written now; a date ahead of the clock does not count.
    #[test]
    fn a_circuit_seen_before_the_files_is_not_written_over_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("retry-breaker-db.prom");
        let probing = Circuit {
            state: State::Probing {
                lease: 5,
                until: 1_700_000_600_000_000_000,
            },
            failures: 3,
            level: 0,
            after: 3,
            limit: 0,
        };
        let now = SystemTime::now();
        let ago = |s| now - std::time::Duration::from_secs(s);
        // The probe closed it, seen 10 s ago; the skipped run saw it
        // probing 20 s ago, and writes after.
        assert_eq!(write(dir.path(), "db", &Circuit::default(), ago(10)), None);
        assert_eq!(write(dir.path(), "db", &probing, ago(20)), None);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("retry_breaker_state{breaker=\"db\"} 0\n"),
            "{text}"
        );
        // Seen later: written.
        assert_eq!(write(dir.path(), "db", &probing, ago(5)), None);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("retry_breaker_state{breaker=\"db\"} 2\n"),
            "{text}"
        );
        // A file dated ahead of the clock (a clock that went back) is
        // replaced all the same.
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(now + std::time::Duration::from_secs(3600))
            .unwrap();
        drop(file);
        assert_eq!(write(dir.path(), "db", &Circuit::default(), ago(1)), None);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("retry_breaker_state{breaker=\"db\"} 0\n"),
            "{text}"
        );
    }
}
