//! `--metrics-dir`: the job's series for node_exporter's textfile
//! collector, in `retry_<job>.prom`, replaced whole at the end of each run
//! (`platform::publish`: a temporary file, then a rename, so a scrape never
//! sees half a file). Gauges named as Prometheus names a batch job's
//! (`*_timestamp_seconds`, the unit in the name, no `_total`), each with
//! `retry_job="<job>"` (`job` is the scrape's own label), the same HELP
//! and TYPE in every file. The last success outlives a failed run: it is
//! read back from the file this replaces, if no other user could have
//! written that file (`platform::publish::read`) and it names this job.
//! https://prometheus.io/docs/practices/instrumentation/#batch-jobs

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::{Ending, Outcome, job::Job};

/// The series, in the order written, with their HELP.
const START: (&str, &str) = (
    "retry_last_run_start_timestamp_seconds",
    "When the job's last run started, in seconds since the Unix epoch.",
);
const SUCCESS: (&str, &str) = (
    "retry_last_success_timestamp_seconds",
    "When the job's last successful run ended, in seconds since the Unix epoch.",
);
const DURATION: (&str, &str) = (
    "retry_last_run_duration_seconds",
    "How long the job's last run took, its sleeps included.",
);
const ATTEMPTS: (&str, &str) = (
    "retry_last_run_attempts",
    "How many attempts the job's last run started.",
);
const SLEEP: (&str, &str) = (
    "retry_last_run_sleep_seconds",
    "How long the job's last run slept between attempts.",
);
const EXIT_CODE: (&str, &str) = (
    "retry_last_run_exit_code",
    "retry's exit status for the job's last run (128+N for signal N).",
);
const OUTCOME: (&str, &str) = (
    "retry_last_run_outcome",
    "How the job's last run ended: 1 for its outcome, 0 for the others.",
);

/// The most of an old file read for its last success: more is not ours.
const READ_LIMIT: u64 = 64 * 1024;

/// Whether `dir` can take the textfile: a directory this user may write
/// to. Checked before the run, so a mistyped path is bad usage.
pub fn check_dir(dir: &Path) -> std::io::Result<()> {
    crate::platform::publish::check_dir(dir)
}

/// The warning, before the run, for a `dir` another user may write in
/// (theirs, or open to them): they could replace the job's file.
pub fn shared_dir_warning(dir: &Path) -> Option<String> {
    let shown = format!("--metrics-dir '{}'", dir.display());
    let why = crate::platform::publish::shared_dir(dir, &shown)?;
    Some(format!(
        "{why}; another user could replace or remove the job's file there \
         (only one of yours or root's is read back)"
    ))
}

pub struct Textfile {
    dir: PathBuf,
    job: Job,
    /// `retry_<job>.prom`.
    name: String,
}

impl Textfile {
    pub fn new(dir: PathBuf, job: &Job) -> Self {
        Self {
            dir,
            job: job.clone(),
            name: format!("retry_{job}.prom"),
        }
    }

    /// Replaces the file with `ending`'s series; a warning if it cannot,
    /// or else if the old file could not be trusted to read back.
    pub fn write(&self, ending: &Ending) -> Option<String> {
        let path = self.dir.join(&self.name);
        let (last_success, unread) = match ending.outcome {
            Outcome::Succeeded => (Some(seconds(ending.end)), None),
            _ => match crate::platform::publish::read(&path, READ_LIMIT) {
                Ok(text) => (text.and_then(|text| last_success(&text, &self.job)), None),
                Err(why) => (None, Some(why)),
            },
        };
        let text = render(&self.job, ending, last_success.as_deref());
        let shown = path.display();
        match crate::platform::publish::replace(&self.dir, &self.name, text.as_bytes()) {
            Ok(()) => unread.map(|why| {
                format!(
                    "--metrics-dir: '{shown}' was not read back: {why}; \
                     the job's last success is not carried over"
                )
            }),
            Err(error) => Some(format!(
                "cannot write --metrics-dir '{shown}': {}; its series keep the run before",
                crate::os_error::describe(&error)
            )),
        }
    }
}

/// The file's text. `last_success` as it was written (seconds since the
/// epoch), left out until the job has succeeded once.
pub fn render(job: &Job, ending: &Ending, last_success: Option<&str>) -> String {
    let mut out = String::with_capacity(2048);
    let mut gauge = |(name, help): (&str, &str), values: &[(Option<&str>, &str)]| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for (outcome, value) in values {
            let _ = match outcome {
                Some(outcome) => writeln!(
                    out,
                    "{name}{{retry_job=\"{job}\",outcome=\"{outcome}\"}} {value}"
                ),
                None => writeln!(out, "{name}{{retry_job=\"{job}\"}} {value}"),
            };
        }
    };
    gauge(START, &[(None, &seconds(ending.start))]);
    gauge(SUCCESS, last_success.map(|s| (None, s)).as_slice());
    gauge(DURATION, &[(None, &duration(ending.duration))]);
    gauge(ATTEMPTS, &[(None, &ending.attempts.to_string())]);
    gauge(SLEEP, &[(None, &duration(ending.slept))]);
    gauge(EXIT_CODE, &[(None, &ending.exit_code.to_string())]);
    let outcomes: Vec<(Option<&str>, &str)> = Outcome::ALL
        .iter()
        .map(|&o| (Some(o.name()), if o == ending.outcome { "1" } else { "0" }))
        .collect();
    gauge(OUTCOME, &outcomes);
    out
}

/// The last success an earlier file of `job`'s recorded, as written: a
/// whole line of its series with a plain positive number. A garbled file
/// has none, nor one with a sample of another job's (a file copied or
/// renamed from another job's is not this job's history).
pub fn last_success(text: &str, job: &Job) -> Option<String> {
    let label = format!("{{retry_job=\"{job}\"");
    let lines = || {
        text.split_inclusive('\n')
            .filter_map(|line| line.strip_suffix('\n'))
    };
    let ours = |line: &&str| {
        let labels = line.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
        labels
            .strip_prefix(label.as_str())
            .is_some_and(|rest| rest.starts_with(['}', ',']))
    };
    let samples = || lines().filter(|line| !line.is_empty() && !line.starts_with('#'));
    if !samples().all(|line| ours(&line)) {
        return None;
    }
    samples()
        .filter(|line| {
            line.strip_prefix(SUCCESS.0)
                .is_some_and(|rest| rest.starts_with('{'))
        })
        .filter_map(|line| line.rsplit(' ').next())
        .find(|value| {
            value.len() <= 32
                && value.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                && value.parse::<f64>().is_ok_and(|v| v.is_finite() && v > 0.0)
        })
        .map(str::to_owned)
}

/// Seconds since the epoch, to the millisecond (0 before it).
fn seconds(time: SystemTime) -> String {
    duration(
        time.duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default(),
    )
}

/// Seconds, to the millisecond: `12.345`.
fn duration(d: Duration) -> String {
    format!("{}.{:03}", d.as_secs(), d.subsec_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ending(outcome: Outcome) -> Ending {
        let start = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_250);
        Ending {
            start,
            end: start + Duration::from_millis(4_500),
            duration: Duration::from_millis(4_500),
            attempts: 3,
            slept: Duration::from_millis(3_750),
            exit_code: if outcome == Outcome::Succeeded { 0 } else { 7 },
            outcome,
        }
    }

    fn job() -> Job {
        super::super::job::parse("nightly").unwrap()
    }

    #[test]
    fn a_run_is_written_as_gauges_with_help_and_type() {
        let text = render(&job(), &ending(Outcome::Exhausted), Some("1699990000.000"));
        let expected = "\
# HELP retry_last_run_start_timestamp_seconds When the job's last run started, in seconds since the Unix epoch.
# TYPE retry_last_run_start_timestamp_seconds gauge
retry_last_run_start_timestamp_seconds{retry_job=\"nightly\"} 1700000000.250
# HELP retry_last_success_timestamp_seconds When the job's last successful run ended, in seconds since the Unix epoch.
# TYPE retry_last_success_timestamp_seconds gauge
retry_last_success_timestamp_seconds{retry_job=\"nightly\"} 1699990000.000
# HELP retry_last_run_duration_seconds How long the job's last run took, its sleeps included.
# TYPE retry_last_run_duration_seconds gauge
retry_last_run_duration_seconds{retry_job=\"nightly\"} 4.500
# HELP retry_last_run_attempts How many attempts the job's last run started.
# TYPE retry_last_run_attempts gauge
retry_last_run_attempts{retry_job=\"nightly\"} 3
# HELP retry_last_run_sleep_seconds How long the job's last run slept between attempts.
# TYPE retry_last_run_sleep_seconds gauge
retry_last_run_sleep_seconds{retry_job=\"nightly\"} 3.750
# HELP retry_last_run_exit_code retry's exit status for the job's last run (128+N for signal N).
# TYPE retry_last_run_exit_code gauge
retry_last_run_exit_code{retry_job=\"nightly\"} 7
# HELP retry_last_run_outcome How the job's last run ended: 1 for its outcome, 0 for the others.
# TYPE retry_last_run_outcome gauge
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"succeeded\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"exhausted\"} 1
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"fatal\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"timeout\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"deadline\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"budget\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"interrupted\"} 0
retry_last_run_outcome{retry_job=\"nightly\",outcome=\"skipped\"} 0
";
        assert_eq!(text, expected);
        // Never succeeded: the series has its HELP and TYPE, and no sample.
        let never = render(&job(), &ending(Outcome::Fatal), None);
        assert!(!never.contains("retry_last_success_timestamp_seconds{"));
        assert!(never.contains("# TYPE retry_last_success_timestamp_seconds gauge\n"));
        let helps = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| l.starts_with('#'))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(helps(&never), helps(&text));
    }

    #[test]
    fn the_last_success_is_read_back_and_garbage_is_not() {
        let text = render(&job(), &ending(Outcome::Exhausted), Some("1699990000.125"));
        assert_eq!(
            last_success(&text, &job()).as_deref(),
            Some("1699990000.125")
        );
        for garbled in [
            "",
            "\0\u{fffd}\n",
            "retry_last_success_timestamp_seconds{retry_job=\"nightly\"} NaN\n",
            "retry_last_success_timestamp_seconds{retry_job=\"nightly\"} -5\n",
            "retry_last_success_timestamp_seconds{retry_job=\"nightly\"} 1e9\n",
            "retry_last_success_timestamp_seconds{retry_job=\"nightly\"}\n",
            "retry_last_success_timestamp_seconds_other{retry_job=\"nightly\"} 5\n",
            "# retry_last_success_timestamp_seconds 5\n",
            "retry_last_success_timestamp_seconds{retry_job=\"nightly\"} 1.2.3\n",
        ] {
            assert_eq!(last_success(garbled, &job()), None, "{garbled:?}");
        }
        // A line cut short is not read, one whole is.
        let end = text.find("# HELP retry_last_run_duration").unwrap();
        assert_eq!(last_success(&text[..end - 2], &job()), None);
        assert_eq!(
            last_success(&text[..end], &job()).as_deref(),
            Some("1699990000.125")
        );
    }

    /// A file whose samples name another job, even one of them, or none,
    /// is not this job's history (a forged year 2100 was carried on).
    #[test]
    fn only_a_file_of_this_jobs_samples_is_read_back() {
        let other = super::super::job::parse("nightly2").unwrap();
        let theirs = render(&other, &ending(Outcome::Exhausted), Some("4102444800.000"));
        assert_eq!(
            last_success(&theirs, &other).as_deref(),
            Some("4102444800.000")
        );
        assert_eq!(last_success(&theirs, &job()), None);
        let ours = render(&job(), &ending(Outcome::Exhausted), Some("1699990000.125"));
        let success = "retry_last_success_timestamp_seconds";
        for forged in [
            format!("{success} 4102444800\n"),
            format!(
                "{success}{{retry_job=\"nightly\"}} 4102444800\n{success}{{retry_job=\"x\"}} 1\n"
            ),
            format!(
                "{success}{{retry_job=\"nightly\"}} 4102444800\nretry_last_run_attempts{{retry_job=\"x\"}} 1\n"
            ),
            format!("{ours}retry_last_run_attempts 1\n"),
        ] {
            let found = last_success(&forged, &job());
            assert!(found.is_none(), "{forged:?} gave {found:?}");
        }
        // A label after this job's is allowed, as the outcome's is.
        assert!(ours.contains("{retry_job=\"nightly\",outcome="));
        assert_eq!(
            last_success(&ours, &job()).as_deref(),
            Some("1699990000.125")
        );
    }

    #[test]
    fn the_file_is_replaced_and_keeps_the_last_success() {
        let dir = tempfile::tempdir().unwrap();
        let file = Textfile::new(dir.path().to_owned(), &job());
        let path = dir.path().join("retry_nightly.prom");
        let read = || last_success(&std::fs::read_to_string(&path).unwrap(), &job());
        assert_eq!(file.write(&ending(Outcome::Succeeded)), None);
        assert_eq!(read().as_deref(), Some("1700000004.750"));
        assert_eq!(file.write(&ending(Outcome::Exhausted)), None);
        assert_eq!(read().as_deref(), Some("1700000004.750"));
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(after.contains("outcome=\"exhausted\"} 1\n"));
        // A garbled file loses it, and is replaced whole.
        std::fs::write(&path, b"\xff\xfegarbage {{{").unwrap();
        assert_eq!(file.write(&ending(Outcome::Fatal)), None);
        assert_eq!(read(), None);
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(after.ends_with("outcome=\"skipped\"} 0\n"));
        // Only the job's file is left: no temporary one.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    /// An old file that is not a regular one is not read, with one
    /// warning, and is replaced all the same.
    #[test]
    #[cfg(unix)] // FIFOs
    fn an_old_file_that_is_no_regular_file_is_one_warning() {
        let dir = tempfile::tempdir().unwrap();
        let file = Textfile::new(dir.path().to_owned(), &job());
        let path = dir.path().join("retry_nightly.prom");
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let warning = file.write(&ending(Outcome::Exhausted)).unwrap();
        assert_eq!(
            warning,
            format!(
                "--metrics-dir: '{}' was not read back: it is a FIFO, not a regular file; \
                 the job's last success is not carried over",
                path.display()
            )
        );
        assert!(path.metadata().unwrap().is_file(), "not replaced");
    }

    /// An old file others may write is not read (one warning): it is as
    /// good as theirs.
    #[test]
    #[cfg(unix)] // modes
    fn an_old_file_others_may_write_is_one_warning() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = Textfile::new(dir.path().to_owned(), &job());
        let path = dir.path().join("retry_nightly.prom");
        assert_eq!(file.write(&ending(Outcome::Succeeded)), None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let warning = file.write(&ending(Outcome::Exhausted)).unwrap();
        assert_eq!(
            warning,
            format!(
                "--metrics-dir: '{}' was not read back: it is writable by other users (mode 666); \
                 make it 0644; the job's last success is not carried over",
                path.display()
            )
        );
        let after = std::fs::read_to_string(&path).unwrap();
        assert_eq!(last_success(&after, &job()), None);
        // Replaced by this run's own file, which is read back.
        let mode = path.metadata().unwrap().permissions().mode();
        assert_eq!(mode & 0o022, 0, "{mode:o}");
        assert_eq!(file.write(&ending(Outcome::Exhausted)), None);
    }

    #[test]
    fn a_write_that_fails_is_one_warning() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let file = Textfile::new(gone.clone(), &job());
        let warning = file.write(&ending(Outcome::Succeeded)).unwrap();
        assert!(
            warning.starts_with(&format!(
                "cannot write --metrics-dir '{}': ",
                gone.join("retry_nightly.prom").display()
            )),
            "{warning}"
        );
    }
}
