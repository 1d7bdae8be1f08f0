//! `--metrics-dir`: the job's series for node_exporter's textfile
//! collector, in `retry_<job>.prom`, replaced whole at the end of each run
//! (`platform::publish`: a temporary file, then a rename, so a scrape never
//! sees half a file). Named as Prometheus names a batch job's: gauges of
//! the last run (`*_timestamp_seconds`, the unit in the name), and
//! counters of every run (`*_total`) for `rate()` and `increase()`, each
//! with `retry_job="<job>"` (`job` is the scrape's own label), the same
//! HELP and TYPE in every file. The counters and the last success outlive
//! a run: they are read back from the file this replaces, if no other user
//! could have written that file (`platform::publish::read`) and it names
//! this job. That read, the sums and the rename happen under a lock on
//! `.retry_<job>.prom.lock` beside it, so concurrent runs of a job lose no
//! increment; a lock not had within `LOCK_WAIT` writes nothing that run,
//! and a lock file removed while held (taken for stale) sends the run back
//! to read again under the new one, so its counters do not go back over
//! the others' (but for a removal between that check and the rename).
//! A file removed starts the counters again, which Prometheus takes as a
//! counter's reset.
//! https://prometheus.io/docs/practices/instrumentation/#batch-jobs

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::{Ending, Outcome, job::Job};
use crate::platform::lock::Lock;

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

/// The counters, in the order written, with their HELP.
const RUNS: (&str, &str) = (
    "retry_runs_total",
    "Runs of the job that ended, by how they ended.",
);
const ATTEMPTS_TOTAL: (&str, &str) = ("retry_attempts_total", "Attempts the job's runs started.");
const RETRIES_TOTAL: (&str, &str) = (
    "retry_retries_total",
    "Attempts the job's runs started after their first, by the class of the failure before.",
);

/// The classes of `retry_retries_total`, in the order written (the
/// `class` label: `events::Class::name`).
const CLASSES: [&str; 2] = ["transient", "throttled"];
const SLEEP_TOTAL: (&str, &str) = (
    "retry_sleep_seconds_total",
    "Time the job's runs slept between attempts.",
);

/// The most of an old file read back: more is not ours.
const READ_LIMIT: u64 = 64 * 1024;

/// How long a run waits for the lock of the job's file before it writes
/// nothing: runs hold it for a read and a rename (about a millisecond),
/// so a lock held longer is a stopped run's, which must not stall this one.
pub const LOCK_WAIT: Duration = Duration::from_secs(1);

/// The job's counters as an old file left them: where this run adds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Runs by outcome, in `Outcome::ALL`'s order.
    pub runs: [u64; Outcome::ALL.len()],
    pub attempts: u64,
    /// Retries after a transient failure, then after a throttled one
    /// (`CLASSES`).
    pub retries: [u64; 2],
    /// The sleeps, in milliseconds (written as seconds to the millisecond,
    /// so the sum is kept exact, never a float's drift).
    pub sleep_ms: u64,
}

impl Counters {
    /// These counters with `ending`'s run added.
    pub fn add(&self, ending: &Ending) -> Counters {
        let mut next = self.clone();
        let at = Outcome::ALL.iter().position(|&o| o == ending.outcome);
        if let Some(runs) = at.and_then(|i| next.runs.get_mut(i)) {
            *runs = runs.saturating_add(1);
        }
        let attempts = u64::from(ending.attempts);
        next.attempts = next.attempts.saturating_add(attempts);
        let retries = attempts.saturating_sub(1);
        let throttled = u64::from(ending.throttled).min(retries);
        for (sum, add) in next
            .retries
            .iter_mut()
            .zip([retries - throttled, throttled])
        {
            *sum = sum.saturating_add(add);
        }
        let slept = u64::try_from(ending.slept.as_millis()).unwrap_or(u64::MAX);
        next.sleep_ms = next.sleep_ms.saturating_add(slept);
        next
    }
}

/// What an old file of the job's carries over to the next.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// The last success, as written.
    pub last_success: Option<String>,
    pub counters: Counters,
}

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
    /// `LOCK_WAIT`; shorter in tests.
    lock_wait: Duration,
}

impl Textfile {
    pub fn new(dir: PathBuf, job: &Job) -> Self {
        Self {
            dir,
            job: job.clone(),
            name: format!("retry_{job}.prom"),
            lock_wait: LOCK_WAIT,
        }
    }

    /// Replaces the file with `ending`'s series, its counters added to
    /// the old file's, under the job's lock; a warning if it cannot, or
    /// else if the old file could not be trusted to read back.
    pub fn write(&self, ending: &Ending) -> Option<String> {
        self.write_pausing(ending, || {})
    }

    /// `write`, calling `pause` between the read and the rename (in tests,
    /// where another run does its whole write meanwhile).
    fn write_pausing(&self, ending: &Ending, pause: impl Fn()) -> Option<String> {
        let path = self.dir.join(&self.name);
        let shown = path.display();
        let lock_name = format!(".{}.lock", self.name);
        let not_written = |why: String| {
            Some(format!(
                "cannot write --metrics-dir '{shown}': {why}; its series keep the run before"
            ))
        };
        // The wait in all: after a lock file replaced, what is left of it.
        let (mut wait, until) = (self.lock_wait, Instant::now() + self.lock_wait);
        loop {
            let lock_file = match crate::platform::publish::lock_file(&self.dir, &lock_name) {
                Ok(file) => file,
                Err(why) => return not_written(format!("its lock '{lock_name}': {why}")),
            };
            let _lock = match Lock::take(&lock_file, wait) {
                Ok(lock) => lock,
                Err(error) => return not_written(crate::os_error::describe(&error)),
            };
            let (old, unread) = match crate::platform::publish::read(&path, READ_LIMIT) {
                Ok(None) => (History::default(), None),
                Ok(Some(text)) => match history(&text, &self.job) {
                    Ok(old) => (old, None),
                    Err(why) => (History::default(), Some(why)),
                },
                Err(why) => (History::default(), Some(why)),
            };
            let last_success = match ending.outcome {
                Outcome::Succeeded => Some(seconds(ending.end)),
                _ => old.last_success,
            };
            let counters = old.counters.add(ending);
            let text = render(&self.job, ending, last_success.as_deref(), &counters);
            pause();
            // The lock file removed or replaced meanwhile (a run stopped
            // while holding it, its lock taken for stale and removed by
            // hand): another run may have written since this one read, so
            // its counters would go back. Read again under the new lock.
            let still =
                || crate::platform::publish::still_locked(&self.dir, &lock_name, &lock_file);
            match crate::platform::publish::replace_if(
                &self.dir,
                &self.name,
                text.as_bytes(),
                still,
            ) {
                Ok(true) => {}
                Ok(false) => {
                    wait = until.saturating_duration_since(Instant::now());
                    if !wait.is_zero() {
                        continue;
                    }
                    return not_written(format!(
                        "its lock '{lock_name}' was removed or replaced while this run held it"
                    ));
                }
                Err(error) => return not_written(crate::os_error::describe(&error)),
            }
            return unread.map(|why| {
                format!(
                    "--metrics-dir: '{shown}' was not read back: {why}; \
                     the job's counters start again and its last success is not carried over"
                )
            });
        }
    }
}

/// The file's text. `last_success` as it was written (seconds since the
/// epoch), left out until the job has succeeded once; `counters` with
/// this run's already added.
pub fn render(
    job: &Job,
    ending: &Ending,
    last_success: Option<&str>,
    counters: &Counters,
) -> String {
    let mut out = String::with_capacity(4096);
    // Each value with its one label beside the job's, if any: `outcome="…"`.
    let mut series = |kind: &str, (name, help): (&str, &str), values: &[(Option<&str>, &str)]| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (label, value) in values {
            let _ = match label {
                Some(label) => writeln!(out, "{name}{{retry_job=\"{job}\",{label}}} {value}"),
                None => writeln!(out, "{name}{{retry_job=\"{job}\"}} {value}"),
            };
        }
    };
    let outcome = |o: Outcome| format!("outcome=\"{}\"", o.name());
    let mut gauge = |what, values: &[(Option<&str>, &str)]| series("gauge", what, values);
    gauge(START, &[(None, &seconds(ending.start))]);
    gauge(SUCCESS, last_success.map(|s| (None, s)).as_slice());
    gauge(DURATION, &[(None, &duration(ending.duration))]);
    gauge(ATTEMPTS, &[(None, &ending.attempts.to_string())]);
    gauge(SLEEP, &[(None, &duration(ending.slept))]);
    gauge(EXIT_CODE, &[(None, &ending.exit_code.to_string())]);
    let labels: Vec<String> = Outcome::ALL.iter().map(|&o| outcome(o)).collect();
    let outcomes: Vec<(Option<&str>, &str)> = Outcome::ALL
        .iter()
        .zip(&labels)
        .map(|(&o, label)| {
            (
                Some(label.as_str()),
                if o == ending.outcome { "1" } else { "0" },
            )
        })
        .collect();
    gauge(OUTCOME, &outcomes);
    let runs: Vec<String> = counters.runs.iter().map(u64::to_string).collect();
    let runs: Vec<(Option<&str>, &str)> = labels
        .iter()
        .zip(&runs)
        .map(|(label, n)| (Some(label.as_str()), n.as_str()))
        .collect();
    let classes: Vec<String> = CLASSES.iter().map(|c| format!("class=\"{c}\"")).collect();
    let retries: Vec<String> = counters.retries.iter().map(u64::to_string).collect();
    let retries: Vec<(Option<&str>, &str)> = classes
        .iter()
        .zip(&retries)
        .map(|(label, n)| (Some(label.as_str()), n.as_str()))
        .collect();
    let mut counter = |what, values: &[(Option<&str>, &str)]| series("counter", what, values);
    counter(RUNS, &runs);
    counter(ATTEMPTS_TOTAL, &[(None, &counters.attempts.to_string())]);
    counter(RETRIES_TOTAL, &retries);
    let sleep = Duration::from_millis(counters.sleep_ms);
    counter(SLEEP_TOTAL, &[(None, &duration(sleep))]);
    out
}

/// What an earlier file of `job`'s carries over: its last success and its
/// counters, none from a file with a sample of another job's (as
/// `last_success`). `Err` when a counter of the job's is not a number as
/// retry writes it (then none is trusted), a clause about "it".
pub fn history(text: &str, job: &Job) -> Result<History, String> {
    let Some(last_success) = last_success_of(text, job) else {
        return Ok(History::default());
    };
    let mut counters = Counters::default();
    let whole = text
        .split_inclusive('\n')
        .filter_map(|line| line.strip_suffix('\n'));
    for line in whole.filter(|line| !line.starts_with('#')) {
        let Some((name, rest)) = line.split_once('{') else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let slot = match name {
            n if n == RUNS.0 => Outcome::ALL
                .iter()
                .position(|o| labels.ends_with(&format!(",outcome=\"{}\"", o.name())))
                .and_then(|i| counters.runs.get_mut(i)),
            n if n == ATTEMPTS_TOTAL.0 => Some(&mut counters.attempts),
            // A file written before the classes has one series: every
            // retry then was a transient failure's.
            n if n == RETRIES_TOTAL.0 => {
                let class = CLASSES
                    .iter()
                    .position(|c| labels.ends_with(&format!(",class=\"{c}\"")));
                match (class, labels.contains(',')) {
                    (Some(i), _) => counters.retries.get_mut(i),
                    (None, false) => counters.retries.first_mut(),
                    (None, true) => None,
                }
            }
            n if n == SLEEP_TOTAL.0 => {
                counters.sleep_ms = millis(value).ok_or_else(not_numbers)?;
                continue;
            }
            _ => continue,
        };
        let Some(slot) = slot else { continue };
        *slot = whole_number(value).ok_or_else(not_numbers)?;
    }
    Ok(History {
        last_success: last_success.map(str::to_owned),
        counters,
    })
}

fn not_numbers() -> String {
    "its counters are not numbers".into()
}

/// A counter as retry writes it: 1 to 20 decimal digits that fit `u64`.
fn whole_number(text: &str) -> Option<u64> {
    let digits = !text.is_empty() && text.len() <= 20 && text.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| text.parse().ok()).flatten()
}

/// Seconds to the millisecond as `duration` writes them (`12.345`), in
/// milliseconds.
fn millis(text: &str) -> Option<u64> {
    let (secs, frac) = text.split_once('.')?;
    let frac = (frac.len() == 3).then(|| whole_number(frac)).flatten()?;
    whole_number(secs)?.checked_mul(1000)?.checked_add(frac)
}

/// The last success an earlier file of `job`'s recorded, as written: a
/// whole line of its series with a plain positive number. A garbled file
/// has none, nor one with a sample of another job's (a file copied or
/// renamed from another job's is not this job's history).
#[cfg(test)]
pub fn last_success(text: &str, job: &Job) -> Option<String> {
    last_success_of(text, job).flatten().map(str::to_owned)
}

/// `None` when the file is not the job's; else its last success, if any.
fn last_success_of<'t>(text: &'t str, job: &Job) -> Option<Option<&'t str>> {
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
    let found = samples()
        .filter(|line| {
            line.strip_prefix(SUCCESS.0)
                .is_some_and(|rest| rest.starts_with('{'))
        })
        .filter_map(|line| line.rsplit(' ').next())
        .find(|value| {
            value.len() <= 32
                && value.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                && value.parse::<f64>().is_ok_and(|v| v.is_finite() && v > 0.0)
        });
    Some(found)
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
mod tests;
