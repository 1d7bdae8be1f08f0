//! retry's own messages: text lines, JSON lines, or GitHub Actions
//! workflow commands (annotations), on stderr or in `--log-file`. Each
//! names the command. The command's output never passes through here.
//! Writes never change the exit status: a closed stderr is ignored (not
//! turned into a panic), and a `--log-file` that cannot take a line (a
//! full disk) says so once on stderr.

//!
//! One file per format: `text.rs` (and the words GitHub annotations share),
//! `github.rs`, `json.rs`; this file holds what they share: which events a
//! verbosity shows, when (the event's stamp) and for which run a line is
//! written, and where. `action.rs` is what the Action asks of the lines.

use crate::events::{Event, GiveUp, Stamp, Stamped, Streaks};
use crate::run::pipes;
use crate::sinks::name::CommandName;
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

pub mod action;
mod github;
mod json;
pub mod text;

#[cfg(test)]
pub mod fixtures;

/// How the lines are written (`--log-format`, its `auto` resolved by `cli`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// One readable line per event
    Text,
    /// One JSON object per line
    Json,
    /// GitHub Actions workflow commands: retries as warnings, giving up as an error
    Github,
}

/// Where and how retry's lines are written (`--log-format`, `--log-file`,
/// `--quiet`, `--verbose`), as `cli` resolved them.
#[derive(Clone, Debug)]
pub struct Settings {
    pub format: LogFormat,
    /// `--log-file`: where retry's lines go instead of stderr.
    pub file: Option<PathBuf>,
    pub verbosity: Verbosity,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    Quiet,
    Normal,
    Verbose,
}

pub struct Log {
    format: LogFormat,
    verbosity: Verbosity,
    name: CommandName,
    to: Destination,
    /// The run's id, the one its commands carry in `RETRY_RUN_IDS`.
    run: String,
    pid: u32,
    /// Whether a line was written yet: the first JSON line carries `argv`.
    named: bool,
    /// The line being written, kept with its room: text lines allocate
    /// nothing once it fits the longest (issue 26).
    line: String,
    /// What the Action asks of the GitHub lines (`action.rs`).
    wishes: action::Wishes,
    /// An attempt's `::group::` is open.
    grouped: bool,
    /// The run's count of attempts over the streaks `--reset-after`
    /// began, once one did (JSON's `total_attempts`).
    streaks: Option<Streaks>,
}

/// The line buffer's first room, in bytes.
const LINE_ROOM: usize = 512;

/// Where retry's lines go.
pub enum Destination {
    Stderr,
    /// `--log-file`: stderr then carries only the command's own.
    File(LogFile),
}

/// `--log-file`, open. A line it cannot take (a full disk, `/dev/full`, a
/// reader gone) is dropped, but not silently: the first failure is said
/// once on stderr. The exit status stays the command's.
pub struct LogFile {
    file: File,
    /// As given: the warning names it.
    path: PathBuf,
    warned: bool,
}

impl LogFile {
    fn write(&mut self, line: &str) {
        let Err(error) = (&self.file).write_all(line.as_bytes()) else {
            return;
        };
        if !std::mem::replace(&mut self.warned, true) {
            to_stderr(format!(
                "retry: warning: cannot write to --log-file '{}': {}; \
                 lines that cannot be written are dropped\n",
                self.path.display(),
                crate::os_error::describe(&error)
            ));
        }
    }
}

/// Writes to stderr on a line of its own, even after output that did not
/// end one; an error is ignored (a closed stderr is no reason to panic).
pub(crate) fn to_stderr(mut line: String) {
    if pipes::take_open_line() {
        line.insert(0, '\n');
    }
    write_stderr(&line);
}

/// Bounded once a signal has come: a stalled reader cannot keep retry
/// from ending (`platform::write_stderr`).
fn write_stderr(line: &str) {
    let _ = crate::platform::write_stderr(line.as_bytes());
}

/// What a line says besides its event.
pub struct Context<'a> {
    pub name: &'a CommandName,
    /// Which run wrote it: its id and retry's pid (JSON's `run` and `pid`),
    /// so the lines of runs sharing a log file can be told apart.
    pub run: &'a str,
    pub pid: u32,
    pub stamp: Stamp,
    /// The run's first line: JSON adds the whole command line.
    pub first: bool,
    /// Once `--reset-after` began a new streak, the run's count of
    /// attempts: JSON's end adds `total_attempts`.
    pub streaks: Option<Streaks>,
}

/// `event` as `format` writes it: one line, or two for JSON's retry.
#[cfg(test)]
fn written(format: LogFormat, event: &Event, context: &Context) -> String {
    let mut line = String::new();
    write_into(format, event, context, &mut line);
    line
}

/// `written`, appended to `out`: text lines without a String of their own.
fn write_into(format: LogFormat, event: &Event, context: &Context, out: &mut String) {
    match format {
        LogFormat::Json => json::write_lines(event, context, out),
        LogFormat::Github => github::write_line(event, context, out),
        LogFormat::Text => text::write_line(event, context, out),
    }
}

/// Opens `--log-file` for appending; created readable by its owner only,
/// as the command line it records may hold a token. Never waits: a FIFO
/// without a reader, or what cannot take appended lines, is refused, and
/// so is a symlink another user owns (`platform::append` has the rules).
pub fn open(path: &Path) -> std::io::Result<LogFile> {
    Ok(LogFile {
        file: crate::platform::append::open(path)?,
        path: path.to_owned(),
        warned: false,
    })
}

impl Log {
    pub fn new(
        format: LogFormat,
        verbosity: Verbosity,
        name: CommandName,
        to: Destination,
        run: String,
    ) -> Self {
        Self {
            format,
            verbosity,
            name,
            to,
            run,
            pid: std::process::id(),
            named: false,
            // Room for any usual line, so a longer attempt number
            // (9/100 to 10/100) does not move it.
            line: String::with_capacity(LINE_ROOM),
            wishes: action::Wishes::default(),
            grouped: false,
            streaks: None,
        }
    }

    /// Writes the lines as the Action asks, when it runs retry (`action.rs`).
    pub fn with_action_wishes(mut self) -> Self {
        self.wishes = action::Wishes::from_env();
        self
    }

    /// The command's name as the lines give it.
    pub fn name(&self) -> &CommandName {
        &self.name
    }

    /// The Action's fold of each attempt's output: opened as an attempt
    /// starts, closed before the line about how it ended; with the GitHub
    /// lines on stderr, whatever the verbosity.
    fn fold(&mut self, event: &Event) {
        if !self.wishes.groups
            || self.format != LogFormat::Github
            || !matches!(self.to, Destination::Stderr)
        {
            return;
        }
        let mut line = String::new();
        match event {
            Event::Starting { attempt, .. } => {
                if std::mem::replace(&mut self.grouped, true) {
                    line.push_str("::endgroup::\n");
                }
                let _ = writeln!(line, "::group::Attempt {attempt}");
            }
            Event::Retrying { .. }
            | Event::HookFailed { .. }
            | Event::Succeeded { .. }
            | Event::GaveUp { .. }
                if std::mem::replace(&mut self.grouped, false) =>
            {
                line.push_str("::endgroup::\n");
            }
            _ => return,
        }
        // On a line of its own, even after output that did not end one;
        // on stdout, as nick-fields writes it, in order with the command's
        // own stdout (the runner reads its two pipes apart).
        if pipes::take_open_line() {
            line.insert(0, '\n');
        }
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(line.as_bytes());
        let _ = stdout.flush();
    }

    /// The format this event is written in: the Action may want retries
    /// as plain lines among GitHub's.
    fn format_of(&self, event: &Event) -> LogFormat {
        match event {
            Event::GaveUp { .. } => self.format,
            _ if self.format == LogFormat::Github && self.wishes.plain_retries => LogFormat::Text,
            _ => self.format,
        }
    }

    /// Writes one event's line, if its verbosity shows it, at its stamp's time.
    pub fn emit(&mut self, stamped: &Stamped) {
        let event = &stamped.event;
        self.fold(event);
        if matches!(event, Event::Reset { .. }) && self.streaks.is_none() {
            self.streaks = Some(Streaks::default());
        }
        if let Some(streaks) = &mut self.streaks {
            streaks.observe(event);
        }
        if !self.shows(event) {
            return;
        }
        let context = Context {
            name: &self.name,
            run: &self.run,
            pid: self.pid,
            stamp: stamped.stamp,
            first: !self.named,
            streaks: self.streaks,
        };
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        // On stderr, on a line of its own even after output that did not end one.
        if matches!(self.to, Destination::Stderr) && pipes::take_open_line() {
            line.push('\n');
        }
        let at = line.len();
        write_into(self.format_of(event), event, &context, &mut line);
        if self.wishes.give_up_warning
            && matches!(event, Event::GaveUp { .. })
            && line[at..].starts_with("::error ")
        {
            line.replace_range(at..at + "::error".len(), "::warning");
        }
        self.named = true;
        // One write per event, so lines from retry never interleave mid-line.
        match &mut self.to {
            Destination::Stderr => write_stderr(&line),
            Destination::File(file) => file.write(&line),
        }
        self.line = line;
    }

    fn shows(&self, event: &Event) -> bool {
        match event {
            Event::Starting { .. } => self.verbosity == Verbosity::Verbose,
            // JSON records the splay drawn; a reader asks with -v.
            Event::Splay { .. } => {
                self.format == LogFormat::Json || self.verbosity == Verbosity::Verbose
            }
            Event::Retrying { .. }
            | Event::Reset { .. }
            | Event::Rejected { .. }
            | Event::HookFailed { .. }
            | Event::Warning { .. } => self.verbosity >= Verbosity::Normal,
            // A first-try success is silent: retry is invisible when nothing failed.
            Event::Succeeded { attempt, .. } => {
                self.verbosity == Verbosity::Verbose
                    || (*attempt > 1 && self.verbosity >= Verbosity::Normal)
            }
            // A reader that went away is a quiet end, as for any pipeline.
            Event::GaveUp {
                reason: GiveUp::StdoutClosed,
                ..
            } => self.verbosity == Verbosity::Verbose,
            Event::GaveUp { .. } => true,
            // JSON records what judged the run; a reader asks with -v.
            Event::Preset(_) => {
                self.format == LogFormat::Json || self.verbosity == Verbosity::Verbose
            }
            Event::NoPreset(_) => self.verbosity == Verbosity::Verbose,
            // The metrics' alone.
            Event::CircuitSeen { .. } | Event::ThrottleSeen { .. } | Event::Ran { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Reason;
    use crate::sinks::log::fixtures::*;

    #[test]
    fn success_after_retries_is_a_summary() {
        let event = |slept_ms| Event::Succeeded {
            attempt: 3,
            limit: Attempts::Limit(5),
            status: Status::exited(0),
            slept_ms,
            took: Duration::from_millis(250),
        };
        assert_eq!(
            text_of(&event(1234)),
            "retry: curl: attempt 3/5 succeeded; 3 attempts, 1234 ms spent sleeping\n"
        );
        assert_eq!(
            github_of(&event(1234)),
            "::notice title=retry%3A curl -fsS example.com/health::attempt 3/5 succeeded; 3 attempts, 1234 ms spent sleeping\n"
        );
        assert_eq!(
            json_of(&event(1234)),
            format!(
                "{{\"event\":\"succeeded\",{HEAD},\"attempt\":3,\"max_attempts\":5,\"duration_ms\":250,\"exit_code\":0,\"slept_ms\":1234}}\n"
            )
        );
        assert!(
            text_of(&event(61_000)).ends_with("3 attempts, 61000 ms (1 min 1 s) spent sleeping\n")
        );
    }

    #[test]
    fn first_try_success_is_silent_unless_verbose() {
        let ok = |attempt| Event::Succeeded {
            attempt,
            limit: Attempts::Limit(3),
            status: Status::exited(0),
            slept_ms: 0,
            took: Duration::ZERO,
        };
        let log = |verbosity| {
            Log::new(
                LogFormat::Text,
                verbosity,
                curl(),
                Destination::Stderr,
                RUN.into(),
            )
        };
        let normal = log(Verbosity::Normal);
        assert!(!normal.shows(&ok(1)) && normal.shows(&ok(2)));
        assert!(log(Verbosity::Verbose).shows(&ok(1)));
        assert!(!log(Verbosity::Quiet).shows(&retrying()));
    }

    #[test]
    fn the_circuit_after_the_run_is_no_line_in_any_format() {
        let seen = Event::CircuitSeen {
            name: "ci".into(),
            circuit: crate::state::breaker::Circuit::default(),
            seen: std::time::SystemTime::UNIX_EPOCH,
        };
        for format in [LogFormat::Text, LogFormat::Json, LogFormat::Github] {
            let log = Log::new(
                format,
                Verbosity::Verbose,
                curl(),
                Destination::Stderr,
                RUN.into(),
            );
            assert!(!log.shows(&seen));
        }
    }

    #[test]
    fn a_log_file_gets_the_lines_and_only_the_first_has_argv() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("retry.log");
        std::fs::write(&path, "before\n").unwrap();
        let file = open(&path).unwrap();
        let mut log = Log::new(
            LogFormat::Json,
            Verbosity::Normal,
            curl(),
            Destination::File(file),
            RUN.into(),
        );
        log.emit(&stamped(retrying()));
        log.emit(&stamped(retrying()));
        let written = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = written.lines().collect();
        // At the time of the events' stamp, read from no clock of its own.
        let when = r#""time":"2026-11-23T11:56:00.250Z","elapsed_ms":1234,"#;
        assert!(lines[1].contains(when), "{written}");
        // Appended, four lines, the run's first alone naming argv.
        assert_eq!(lines.len(), 5, "{written}");
        assert_eq!(lines[0], "before");
        assert_eq!(written.matches("\"argv\"").count(), 1, "{written}");
        assert!(lines[1].contains("\"argv\""), "{written}");
        // Windows has no mode bits: the directory's access list applies.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let other = tempfile::tempdir().unwrap();
            let created = other.path().join("new.log");
            drop(open(&created).unwrap());
            let mode = std::fs::metadata(&created).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
    }

    #[test]
    fn budget_and_hint_endings_and_warnings() {
        let gave_up = |reason| Event::GaveUp {
            attempt: 3,
            limit: Attempts::Limit(5),
            reason,
            took: Some(Duration::from_millis(40)),
        };
        let budget = gave_up(GiveUp::Budget(Status::exited(7)));
        assert_eq!(
            text_of(&budget),
            "retry: curl: giving up after attempt 3/5 failed with exit code 7: the shared --budget cannot pay for a retry (reason: budget)\n"
        );
        assert_eq!(
            json_of(&budget),
            format!(
                "{{\"event\":\"gave_up\",{HEAD},\"attempt\":3,\"max_attempts\":5,\"duration_ms\":40,\"exit_code\":7,\"reason\":\"budget\",\"command_exit_code\":7}}\n"
            )
        );
        let hint = gave_up(GiveUp::HintTooLong {
            status: Status::exited(22),
            hint_ms: 600_000,
            limit_ms: 300_000,
        });
        assert!(text_of(&hint).ends_with(
            "the server asked to wait 600000 ms (10 min), longer than the 300000 ms (5 min) retry waits for a server without --max-time (reason: hint)\n"
        ), "{}", text_of(&hint));
        assert!(json_of(&hint).ends_with(
            "\"reason\":\"hint\",\"command_exit_code\":22,\"hint_ms\":600000,\"limit_ms\":300000}\n"
        ));
        let warning = Event::Warning {
            attempt: 1,
            message: "a \"b\"".into(),
        };
        assert_eq!(text_of(&warning), "retry: curl: warning: a \"b\"\n");
        assert_eq!(
            json_of(&warning),
            format!("{{\"event\":\"warning\",{HEAD},\"attempt\":1,\"message\":\"a \\\"b\\\"\"}}\n")
        );
        assert_eq!(
            github_of(&warning),
            "::warning title=retry%3A curl -fsS example.com/health::a \"b\"\n"
        );
    }

    #[test]
    fn the_preset_that_judges_is_a_verbose_text_line_and_always_a_json_event() {
        let chosen = Event::Preset(crate::events::PresetLine {
            name: "curl".into(),
            chosen: true,
            why: "chosen for `curl`".into(),
        });
        assert_eq!(
            text_of(&chosen),
            "retry: curl: the curl preset judges failures, chosen for `curl` \
             (--preset none turns this off)\n"
        );
        assert!(
            github_of(&chosen).starts_with(
                "::notice title=retry%3A curl -fsS example.com/health::the curl preset"
            )
        );
        assert_eq!(
            json_of(&chosen),
            format!(
                "{{\"event\":\"preset\",{HEAD},\"preset\":\"curl\",\"chosen\":true,\
                 \"why\":\"chosen for `curl`\"}}\n"
            )
        );
        let log = |format, verbosity| {
            Log::new(format, verbosity, curl(), Destination::Stderr, RUN.into())
        };
        assert!(log(LogFormat::Text, Verbosity::Verbose).shows(&chosen));
        assert!(!log(LogFormat::Text, Verbosity::Normal).shows(&chosen));
        assert!(!log(LogFormat::Github, Verbosity::Normal).shows(&chosen));
        assert!(log(LogFormat::Json, Verbosity::Normal).shows(&chosen));
    }

    /// A run that gave up for `reason`, as the loop would report it.
    fn gave_up_for(reason: Reason) -> Event {
        let status = Status::exited(3);
        let reason = match reason {
            Reason::Attempts => GiveUp::Attempts(status),
            Reason::Fatal => GiveUp::Fatal(status, None),
            Reason::NotRetryable => GiveUp::NotRetryable(status, None),
            Reason::StopIfOutput => GiveUp::OutputStop {
                status,
                line: None,
                label: None,
            },
            Reason::MaxTime => GiveUp::MaxTimeReached(status),
            Reason::Hint => GiveUp::HintTooLong {
                status,
                hint_ms: 900_000,
                limit_ms: 300_000,
            },
            Reason::Budget => GiveUp::Budget(status),
            Reason::Signal => GiveUp::Signal {
                signal: 2,
                status: None,
                during: Phase::Sleep,
            },
            Reason::Spawn => GiveUp::Spawn {
                code: 127,
                message: "cannot run `nope`: command not found".into(),
            },
            Reason::Io => GiveUp::Failed("cannot write to stdout".into()),
            Reason::StdoutClosed => GiveUp::StdoutClosed,
            Reason::Breaker => GiveUp::CircuitOpen(
                "--breaker ci: the circuit is open after 3 failed runs in a row; \
                 a probe may run at 2026-11-23T11:57:33Z (in 93 s); the command was not run"
                    .into(),
                75,
            ),
            Reason::Throttle => GiveUp::Rejected {
                throttle: "api".into(),
                probability: 0.9,
                status: None,
                ran_out: crate::events::RanOut::Attempts,
                code: 75,
            },
        };
        Event::GaveUp {
            attempt: 2,
            limit: Attempts::Limit(5),
            reason,
            took: None,
        }
    }

    #[test]
    fn every_reason_has_one_name_in_text_and_json() {
        let mut names: Vec<&str> = Reason::ALL.iter().map(|r| r.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Reason::ALL.len(), "two reasons share a name");
        for reason in Reason::ALL {
            let event = gave_up_for(reason);
            let Event::GaveUp { reason: ending, .. } = &event else {
                unreachable!()
            };
            assert_eq!(ending.reason(), reason);
            let name = reason.name();
            let text = text_of(&event);
            assert!(text.ends_with(&format!(" (reason: {name})\n")), "{text}");
            let json = json_of(&event);
            assert!(json.contains(&format!(r#","reason":"{name}""#)), "{json}");
            assert!(!json.contains("duration_ms"), "{json}");
        }
        // The reason --stop-if-output gives is its own, not `fatal`.
        assert!(
            text_of(&gave_up_for(Reason::StopIfOutput)).ends_with(
                "giving up after attempt 2/5 (exit code 3): its output matched --stop-if-output (reason: stop_if_output)\n"
            )
        );
    }
}
