//! GitHub Actions' step summary and step outputs: two sinks fed by the
//! same events as the log lines, each written once, when the run ends.
//!
//! - The summary (`$GITHUB_STEP_SUMMARY`, on unless `RETRY_STEP_SUMMARY`
//!   is off): a run that retried or gave up appends a short Markdown table
//!   (the command, each failed attempt with its status and the sleep after
//!   it, the outcome); a first-try success adds nothing.
//! - The outputs (`$GITHUB_OUTPUT`, only when `RETRY_GITHUB_OUTPUT` is on,
//!   as the Action sets it): `total_attempts`, `exit_code` and
//!   `exit_error`, nick-fields/retry's names (and `exit_error` in its
//!   words, `exit_error.rs`), from the run's own figures, `reason`,
//!   retry's own words for how it ended, and `skipped=true` for a run the
//!   open `--breaker` circuit skipped.
//!
//! Either file is opened as `--log-file` is (`platform::append`: no wait
//! on a FIFO, no other user's symlink), once, at the end; one that cannot
//! take it costs a warning, never the run. Nothing is kept per attempt
//! when neither variable is set.
//! https://docs.github.com/actions/reference/workflow-commands-for-github-actions

use std::cell::Cell;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use crate::events::{Class, Event, GiveUp, Streaks};
use crate::policy::Attempts;
use crate::sinks::exit_error;
use crate::sinks::log::text;
use crate::sinks::name::CommandName;
use crate::status::Status;

/// Turns the step summary off (`RETRY_STEP_SUMMARY=0`).
pub const SUMMARY_SWITCH: &str = "RETRY_STEP_SUMMARY";
/// Turns the step outputs on (`RETRY_GITHUB_OUTPUT=1`; the Action sets it).
pub const OUTPUT_SWITCH: &str = "RETRY_GITHUB_OUTPUT";

/// A failed attempt, as its row shows it.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    attempt: u32,
    limit: Attempts,
    status: Status,
    /// Its class, when it was retried: a throttled one says why.
    class: Class,
    /// The sleep that followed it; `None` for the last.
    sleep_ms: Option<u128>,
}

/// The attempts a summary shows rows for: the first `FIRST` and the last
/// `LAST`, the ones between counted. A run retried without end (`-n
/// unlimited`) neither grows without bound nor passes GitHub's limit on
/// a step's summary (1 MiB, past which none of it is shown).
const FIRST: usize = 20;
const LAST: usize = 20;

/// The step summary being gathered.
pub struct StepSummary {
    path: PathBuf,
    rows: Vec<Row>,
    /// The attempts between the first and the last rows, not shown.
    left_out: u64,
    /// Whether `--reset-after` started the attempts anew: a success at
    /// attempt 1 then still followed failures.
    reset: bool,
}

/// Where the step outputs go.
pub struct StepOutputs {
    path: PathBuf,
    /// Attempt numbers restart with each streak `--reset-after` begins;
    /// `total_attempts` counts the whole run.
    streaks: Cell<Streaks>,
}

/// A switch as every `RETRY_*` switch takes it: 0, false, no or off.
fn is_off(value: &OsStr) -> bool {
    let value = value.to_string_lossy().to_ascii_lowercase();
    matches!(value.trim(), "0" | "false" | "no" | "off")
}

/// The file a GitHub variable names, if set and not empty.
fn github_file(variable: &str) -> Option<PathBuf> {
    std::env::var_os(variable)
        .filter(|path| !path.is_empty())
        .map(PathBuf::from)
}

impl StepSummary {
    /// Under GitHub Actions (`GITHUB_STEP_SUMMARY` set), unless
    /// `RETRY_STEP_SUMMARY` turns it off.
    pub fn from_env() -> Option<Self> {
        Self::from(
            github_file("GITHUB_STEP_SUMMARY"),
            std::env::var_os(SUMMARY_SWITCH),
        )
    }

    fn from(path: Option<PathBuf>, switch: Option<OsString>) -> Option<Self> {
        if switch.is_some_and(|value| is_off(&value)) {
            return None;
        }
        Some(Self {
            path: path?,
            rows: Vec::new(),
            left_out: 0,
            reset: false,
        })
    }

    /// Keeps `row`, and the first and last rows only (`FIRST`, `LAST`).
    fn push(&mut self, row: Row) {
        self.rows.push(row);
        if self.rows.len() > FIRST + LAST {
            self.rows.remove(FIRST);
            self.left_out += 1;
        }
    }

    /// Takes in one event; at the end of a run that retried or gave up,
    /// appends the table.
    pub fn observe(&mut self, event: &Event, name: &CommandName) {
        match event {
            Event::Retrying {
                attempt,
                limit,
                status,
                class,
                sleep,
                ..
            } => self.push(Row {
                attempt: *attempt,
                limit: *limit,
                status: *status,
                class: class.clone(),
                sleep_ms: Some(crate::duration::millis(sleep.duration)),
            }),
            Event::Reset { .. } => self.reset = true,
            Event::Succeeded { attempt, .. } if *attempt > 1 || self.reset => {
                append(
                    &self.path,
                    &markdown(name, &self.rows, self.left_out, event),
                    "step summary",
                );
            }
            Event::GaveUp {
                attempt,
                limit,
                reason,
                took,
            } => {
                // The attempt the run ended with is a row of its own.
                if let (Some(status), Some(_)) = (reason.status(), took) {
                    self.push(Row {
                        attempt: *attempt,
                        limit: *limit,
                        status,
                        class: Class::Transient,
                        sleep_ms: None,
                    });
                }
                append(
                    &self.path,
                    &markdown(name, &self.rows, self.left_out, event),
                    "step summary",
                );
            }
            _ => {}
        }
    }
}

impl StepOutputs {
    /// When `RETRY_GITHUB_OUTPUT` is on and `GITHUB_OUTPUT` set.
    pub fn from_env() -> Option<Self> {
        let on = std::env::var_os(OUTPUT_SWITCH).is_some_and(|value| !is_off(&value));
        Some(Self {
            path: github_file("GITHUB_OUTPUT").filter(|_| on)?,
            streaks: Cell::default(),
        })
    }

    /// At the end of the run, appends the three outputs.
    pub fn observe(&self, event: &Event, name: &CommandName) {
        let mut streaks = self.streaks.get();
        streaks.observe(event);
        self.streaks.set(streaks);
        if let Some(outputs) = outputs(event, name, streaks) {
            append(&self.path, &outputs, "step outputs");
        }
    }
}

/// `total_attempts`, `exit_code`, `exit_error` (nick-fields/retry's words)
/// and `reason` (retry's) as `GITHUB_OUTPUT` takes them (`name=value`
/// lines), for the event that ends a run (its attempts counted over every
/// streak `--reset-after` began); both texts are empty after a
/// success, as nick-fields/retry leaves `exit_error` unset. A run the open
/// `--breaker` circuit did not let start adds `skipped=true`, so a
/// workflow tells it from a command's own exit code (75) without reading
/// `exit_error`.
fn outputs(event: &Event, name: &CommandName, streaks: Streaks) -> Option<String> {
    let (attempt, code, error, why, skipped) = match event {
        Event::Succeeded {
            attempt, status, ..
        } => (*attempt, status.code, String::new(), String::new(), false),
        Event::GaveUp {
            attempt, reason, ..
        } => {
            let mut why = String::new();
            let _ = text::write_message(event, name, &mut why);
            let why = one_line(&why);
            let error = exit_error::nick_fields(reason).unwrap_or_else(|| why.clone());
            // Not run at all: the open circuit, or the throttle every time.
            let skipped = reason.reason() == crate::events::Reason::Breaker
                || matches!(reason, GiveUp::Rejected { status: None, .. });
            (*attempt, reason.exit_code(), error, why, skipped)
        }
        _ => return None,
    };
    let skipped = match skipped {
        true => "skipped=true\n",
        false => "",
    };
    let attempt = streaks.of(attempt);
    Some(format!(
        "total_attempts={attempt}\nexit_code={code}\nexit_error={error}\nreason={why}\n{skipped}"
    ))
}

/// Control characters (a line end would start a forged output) as spaces.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// What GitHub's Markdown gives a meaning to inside a line of a table
/// cell: escapes, code spans, emphasis and strikethrough, links and images,
/// HTML and autolinks, entities, the cell's end, math, and what starts an
/// autolink literal (`http:`, `www.`) or a reference (`#1`, `@user`).
/// Parentheses mean something only after a `]`, lists and headings only
/// at the start of a line, which a cell never is.
const MARKDOWN: &str = "\\`*_~[]<>!&|$:.#@";

/// A table cell's text, shown as it is: each of those characters
/// backslash-escaped, which CommonMark reads as the character and nothing
/// more, and which GitHub's table reads as part of the cell for a `|`;
/// line ends as spaces.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in one_line(text).chars() {
        if MARKDOWN.contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` as a code span in a table cell: a fence longer than any run of
/// backticks inside, so nothing inside can close it (CommonMark 6.1);
/// each `|` after a backslash, which GitHub's table takes away before the
/// span is read (so a backslash of the text before a `|` stays).
fn code_cell(text: &str) -> String {
    code(&one_line(text)).replace('|', "\\|")
}

/// `text` as a code span: a fence longer than any run of backticks inside.
fn code(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    match longest {
        0 => format!("{fence}{text}{fence}"),
        _ => format!("{fence} {text} {fence}"),
    }
}

/// The outcome in the log lines' words, as a cell: the line of output it
/// quotes (`--stop-if-output`) as a code span, the rest escaped.
fn outcome(end: &Event, name: &CommandName) -> String {
    let mut message = String::new();
    let _ = text::write_message(end, name, &mut message);
    let line = match end {
        Event::GaveUp {
            reason: GiveUp::OutputStop {
                line: Some(line), ..
            },
            ..
        } => Some(line),
        _ => None,
    };
    let quoted = line.and_then(|line| Some((line, message.split_once(&format!("`{line}`"))?)));
    match quoted {
        Some((line, (before, after))) => {
            format!("{}{}{}", cell(before), code_cell(line), cell(after))
        }
        None => cell(&message),
    }
}

/// The table: the command (its whole line as `-v` shows it, a password in
/// a URL masked), one row per failed attempt, then the outcome in the log
/// lines' words.
fn markdown(name: &CommandName, rows: &[Row], left_out: u64, end: &Event) -> String {
    use crate::url::{hidden_in_url, masked};
    // Word by word, as usage errors mask what they quote.
    let command: Vec<_> = name
        .full
        .split(' ')
        .map(|word| masked(word, hidden_in_url(word)))
        .collect();
    let command = command.join(" ");
    let mut out = format!("| retry | {} |\n|---|---|\n", code_cell(&command));
    for (shown, row) in rows.iter().enumerate() {
        if shown == FIRST && left_out > 0 {
            let _ = writeln!(out, "| … | {left_out} more failed attempts |");
        }
        let mut status = row.status.describe().to_string();
        if let Class::Throttled(evidence) = &row.class {
            let _ = write!(status, ", throttled ({})", evidence.words());
        }
        if let Some(ms) = row.sleep_ms {
            let _ = write!(status, "; slept {ms} ms");
        }
        let _ = writeln!(
            out,
            "| attempt {}/{} | {} |",
            row.attempt,
            row.limit,
            cell(&status)
        );
    }
    let _ = writeln!(out, "| outcome | {} |\n", outcome(end, name));
    out
}

/// Appends `text` to `path` in one write; a failure is one warning on
/// stderr and the run goes on.
fn append(path: &std::path::Path, text: &str, what: &str) {
    let written =
        crate::platform::append::open(path).and_then(|mut file| file.write_all(text.as_bytes()));
    if let Err(error) = written {
        crate::sinks::log::to_stderr(format!(
            "retry: warning: cannot write the {what} to '{}': {}\n",
            path.display(),
            crate::os_error::describe(&error)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sinks::log::fixtures::*;
    use std::ffi::OsStr;

    fn row(attempt: u32, code: i32, sleep_ms: Option<u128>) -> Row {
        Row {
            attempt,
            limit: Attempts::Limit(5),
            status: Status::exited(code),
            class: Class::Transient,
            sleep_ms,
        }
    }

    #[test]
    fn a_table_of_failed_attempts_and_the_outcome() {
        let args = [OsString::from("-c"), OsString::from("make test | tee log")];
        let name = CommandName::new(OsStr::new("sh"), &args);
        let end = Event::GaveUp {
            attempt: 2,
            limit: Attempts::Limit(5),
            reason: GiveUp::Fatal(Status::exited(2), None),
            took: Some(Duration::from_millis(3)),
        };
        let rows = [row(1, 2, Some(692)), row(2, 2, None)];
        assert_eq!(
            markdown(&name, &rows, 0, &end),
            "| retry | `sh -c 'make test \\| tee log'` |\n\
             |---|---|\n\
             | attempt 1/5 | exit code 2; slept 692 ms |\n\
             | attempt 2/5 | exit code 2 |\n\
             | outcome | giving up after attempt 2/5\\: exit code 2 is fatal (--fatal-on) (reason\\: fatal) |\n\n"
        );
    }

    #[test]
    fn a_throttled_attempt_says_so_in_its_row() {
        let mut summary = StepSummary {
            path: PathBuf::new(),
            rows: Vec::new(),
            left_out: 0,
            reset: false,
        };
        summary.observe(&throttled(), &curl());
        let table = markdown(&curl(), &summary.rows, 0, &retrying_end());
        assert!(
            table.contains("| attempt 2/5 | exit code 22, throttled (HTTP 429); slept 692 ms |"),
            "{table}"
        );
    }

    #[test]
    fn the_command_is_escaped_and_its_password_masked() {
        let args = [
            OsString::from("-u"),
            OsString::from("redis://me:s3cret@db:6379"),
            OsString::from("a`b"),
        ];
        let name = CommandName::new(OsStr::new("redis-cli"), &args);
        let table = markdown(&name, &[], 0, &retrying_end());
        let first = table.lines().next().unwrap();
        assert!(!table.contains("s3cret"), "{table}");
        assert!(first.starts_with("| retry | `` redis-cli -u"), "{first}");
        assert!(cell("a|b\nc").eq("a\\|b c"));
    }

    /// The row's cells as GitHub's table splits them: at each `|` that no
    /// backslash comes right before (cmark-gfm's `table_cell` scanner).
    fn cells(row: &str) -> Vec<String> {
        let mut cells = vec![String::new()];
        let mut before = ' ';
        for c in row.chars() {
            match c {
                '|' if before != '\\' => cells.push(String::new()),
                _ => cells.last_mut().unwrap().push(c),
            }
            before = c;
        }
        cells
    }

    /// Issue 40: a line of output could close its code span with a
    /// backtick and put an image, a link or HTML into the step summary.
    #[test]
    fn output_is_quoted_in_a_span_it_cannot_close() {
        let line = "a`b ![x](http://e.test/x.png) c\\|d |e ``<img src=x>`";
        let end = Event::GaveUp {
            attempt: 2,
            limit: Attempts::Limit(5),
            reason: GiveUp::OutputStop {
                status: Status::exited(22),
                line: Some(line.into()),
                label: None,
            },
            took: Some(Duration::from_millis(3)),
        };
        let table = markdown(&curl(), &[], 0, &end);
        let row = table.lines().nth(2).unwrap();
        assert_eq!(
            row,
            concat!(
                r"| outcome | giving up after attempt 2/5 (exit code 22)\: ",
                r"its output matched --stop-if-output\: ",
                r"``` a`b ![x](http://e.test/x.png) c\\|d \|e ``<img src=x>` ``` ",
                r"(reason\: stop\_if\_output) |"
            )
        );
        // Two cells, the outcome in one code span.
        assert_eq!(cells(row).len(), 4, "{row}");
        // What a command writes that a plain cell would have taken.
        let name = CommandName::new(OsStr::new("sh"), &[OsString::from("-c")]);
        let stop = |line: &str| Event::GaveUp {
            attempt: 1,
            limit: Attempts::Limit(1),
            reason: GiveUp::Spawn {
                code: 127,
                message: line.into(),
            },
            took: None,
        };
        let row = markdown(&name, &[], 0, &stop("x\\|y ![i](u) <b>`c`</b> &amp; *e*"))
            .lines()
            .nth(2)
            .unwrap()
            .to_owned();
        assert_eq!(
            row,
            r"| outcome | x\\\|y \!\[i\](u) \<b\>\`c\`\</b\> \&amp; \*e\* (reason\: spawn) |"
        );
        assert_eq!(cells(&row).len(), 4, "{row}");
    }

    fn retrying_end() -> Event {
        Event::Succeeded {
            attempt: 2,
            limit: Attempts::Limit(5),
            status: Status::exited(0),
            slept_ms: 5,
            took: Duration::ZERO,
        }
    }

    #[test]
    fn a_first_try_success_adds_nothing_and_a_retried_one_a_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.md");
        let mut summary = StepSummary::from(Some(path.clone()), None).unwrap();
        summary.observe(
            &Event::Succeeded {
                attempt: 1,
                limit: Attempts::Limit(5),
                status: Status::exited(0),
                slept_ms: 0,
                took: Duration::ZERO,
            },
            &curl(),
        );
        assert!(!path.exists());
        summary.observe(&retrying(), &curl());
        summary.observe(&retrying_end(), &curl());
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(
            written.contains("| attempt 2/5 | exit code 22; slept 692 ms |"),
            "{written}"
        );
        assert!(
            written.contains("| outcome | attempt 2/5 succeeded;"),
            "{written}"
        );
    }

    /// A run retried 10,000 times: the first and last attempts' rows,
    /// the count of those between, and a summary of a few kilobytes.
    #[test]
    fn a_long_run_s_summary_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.md");
        let mut summary = StepSummary::from(Some(path.clone()), None).unwrap();
        let Event::Retrying {
            limit,
            status,
            sleep,
            jitter,
            hint,
            took,
            ..
        } = retrying()
        else {
            unreachable!()
        };
        for attempt in 1..=10_000 {
            let event = Event::Retrying {
                attempt,
                limit,
                status,
                class: Class::Transient,
                sleep,
                jitter,
                hint,
                took,
            };
            summary.observe(&event, &curl());
        }
        assert_eq!(summary.rows.len(), FIRST + LAST);
        summary.observe(&retrying_end(), &curl());
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(written.len() < 4096, "{} bytes", written.len());
        let attempts: Vec<&str> = written
            .lines()
            .filter(|l| l.starts_with("| attempt "))
            .collect();
        assert_eq!(attempts.len(), FIRST + LAST);
        assert!(attempts[FIRST - 1].starts_with("| attempt 20/5 |"));
        assert!(attempts[FIRST].starts_with("| attempt 9981/5 |"));
        assert!(written.contains("| … | 9960 more failed attempts |\n| attempt 9981/5 |"));
    }

    #[test]
    fn the_switch_turns_it_off() {
        let path = Some(PathBuf::from("summary.md"));
        for off in ["0", "false", "No", "off"] {
            assert!(StepSummary::from(path.clone(), Some(off.into())).is_none());
        }
        assert!(StepSummary::from(path.clone(), Some("1".into())).is_some());
        assert!(StepSummary::from(path, None).is_some());
        assert!(StepSummary::from(None, None).is_none());
    }

    #[test]
    fn outputs_are_the_run_s_own_figures() {
        assert_eq!(
            outputs(&retrying_end(), &curl(), Streaks::default()).unwrap(),
            "total_attempts=2\nexit_code=0\nexit_error=\nreason=\n"
        );
        let timed_out = Event::GaveUp {
            attempt: 3,
            limit: Attempts::Limit(3),
            reason: GiveUp::Attempts(Status::timed_out(Duration::from_secs(1))),
            took: Some(Duration::from_secs(1)),
        };
        let written = outputs(&timed_out, &curl(), Streaks::default()).unwrap();
        assert!(
            written.starts_with(
                "total_attempts=3\nexit_code=124\n\
                 exit_error=Final attempt failed. Timeout of 1000ms hit\n\
                 reason=giving up after 3 attempts"
            ),
            "{written}"
        );
        assert_eq!(written.lines().count(), 4);
        assert!(outputs(&retrying(), &curl(), Streaks::default()).is_none());
        // A run the open circuit skipped says so in an output of its own.
        let skipped = Event::GaveUp {
            attempt: 0,
            limit: Attempts::Limit(3),
            reason: GiveUp::CircuitOpen("--breaker ci: the circuit is open".into(), 75),
            took: None,
        };
        let written = outputs(&skipped, &curl(), Streaks::default()).unwrap();
        assert!(written.starts_with("total_attempts=0\nexit_code=75\nexit_error="));
        assert!(written.ends_with("\nskipped=true\n"), "{written}");
        assert_eq!(written.lines().count(), 5, "{written}");
    }
}
