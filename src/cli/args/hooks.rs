//! The hooks: `--on-retry` between attempts (first, where it always was
//! in the help), then `--on-start` and `--on-exit`, which run once a run,
//! what `--on-exit` reads, and how long either may take. They resolve to
//! `run::hooks::Settings`, with the command's name the log lines use.

use std::time::Duration;

use clap::{Args, ValueHint};

use crate::cli::args::HOOKS;
use crate::cli::choices::ExitStdinChoice;
use crate::cli::id;
use crate::cli::provenance::Provenance;
use crate::cli::refuse::usage;
use crate::duration::parse as parse_duration;
use crate::run::Command;
use crate::run::hooks::{DEFAULT_TIMEOUT, Settings};

#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct HooksArgs {
    /// Shell command run with `sh -c` (Windows: `cmd /d /s /c`) after a failed attempt, before the
    /// sleep (cleanup); it sees RETRY_ATTEMPT and RETRY_EXIT_CODE, its output
    /// goes to stderr, and its failure is logged, not fatal
    #[arg(long, env = "RETRY_ON_RETRY", value_name = "SHELL COMMAND",
          value_parser = clap::builder::NonEmptyStringValueParser::new(), value_hint = ValueHint::CommandString, hide_short_help = true)]
    pub on_retry: Option<String>,

    /// Shell command run once, before the first attempt (a monitor's start ping)
    ///
    /// Shell command run with `sh -c` (Windows: `cmd /d /s /c`) once,
    /// before the first attempt (not when the open --breaker circuit skips
    /// the run): a monitor's start ping. It sees RETRY_COMMAND and
    /// RETRY_ATTEMPT_LIMIT, its output goes to stderr, it is stopped after
    /// --hook-timeout, and its failure is a warning: the run goes on.
    /// --max-time counts from its end
    #[arg(long, env = "RETRY_ON_START", value_name = "SHELL COMMAND",
          value_parser = clap::builder::NonEmptyStringValueParser::new(), value_hint = ValueHint::CommandString,
          help_heading = HOOKS, hide_short_help = true)]
    pub on_start: Option<String>,

    /// Shell command run once the run is over, however it ended (a monitor's ping)
    ///
    /// Shell command run with `sh -c` (Windows: `cmd /d /s /c`) once the
    /// run is over, whatever ended it: a success, giving up, a stop rule,
    /// the open --breaker circuit, --max-time, or a signal (once the
    /// command is stopped; a second signal stops the hook too). It sees
    /// RETRY_OUTCOME (success, gave_up, stopped, skipped or interrupted),
    /// RETRY_REASON, RETRY_EXIT_CODE (retry's own exit status),
    /// RETRY_ATTEMPTS, RETRY_ELAPSED_MS and RETRY_COMMAND; its output goes
    /// to stderr, it is stopped after --hook-timeout, and its failure is a
    /// warning: retry's exit status stays the run's
    #[arg(long, env = "RETRY_ON_EXIT", value_name = "SHELL COMMAND",
          value_parser = clap::builder::NonEmptyStringValueParser::new(), value_hint = ValueHint::CommandString,
          help_heading = HOOKS, hide_short_help = true)]
    pub on_exit: Option<String>,

    /// What --on-exit reads: `tail` the last attempt's output (its last 10 KiB)
    ///
    /// What --on-exit reads as stdin: `null` nothing, or `tail` the last
    /// attempt's stdout and stderr, in the order retry read them, their
    /// last 10 KiB (a monitor's log). With `tail` the attempts' output passes through
    /// retry, as with --retry-if-output: the command's stdout and stderr
    /// are pipes, not a terminal
    #[arg(long, env = "RETRY_ON_EXIT_STDIN", value_enum, default_value_t = ExitStdinChoice::Null,
          value_name = "WHAT", help_heading = HOOKS, hide_short_help = true)]
    pub on_exit_stdin: ExitStdinChoice,

    /// How long --on-start or --on-exit may run: then SIGTERM, and SIGKILL
    /// after --kill-after (what it left running is stopped when it ends)
    #[arg(long, env = "RETRY_HOOK_TIMEOUT", value_name = "DURATION", default_value = DEFAULT_TIMEOUT,
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = HOOKS, hide_short_help = true)]
    pub hook_timeout: Duration,
}

impl HooksArgs {
    /// No hook, as a run that sets none parses (`RunArgs::from`).
    pub fn unset() -> Self {
        HooksArgs {
            on_retry: None,
            on_start: None,
            on_exit: None,
            on_exit_stdin: ExitStdinChoice::Null,
            hook_timeout: parse_duration(DEFAULT_TIMEOUT).expect("the default parses"),
        }
    }
}

impl HooksArgs {
    /// The hooks of a run of `command`; a zero `--hook-timeout` is refused
    /// (it would stop every hook before it starts). The parsers checked
    /// every other value.
    pub fn resolve(
        self,
        provenance: &Provenance,
        command: Option<&Command>,
    ) -> Result<Settings, clap::Error> {
        if self.hook_timeout == Duration::ZERO {
            return Err(usage(format!(
                "{} would stop every hook before it starts; leave it out for the default, {DEFAULT_TIMEOUT}",
                provenance.name(id::HOOK_TIMEOUT, &"0s")
            )));
        }
        // Named only for a hook that is told it: no work for a run without.
        let once = self.on_start.is_some() || self.on_exit.is_some();
        let command = match command.filter(|_| once) {
            Some(command) => command_name(command),
            None => String::new(),
        };
        Ok(Settings {
            on_retry: self.on_retry,
            on_start: self.on_start,
            on_exit: self.on_exit,
            exit_stdin: self.on_exit_stdin.into(),
            timeout: self.hook_timeout,
            command,
        })
    }
}

/// The command's short name, as the log lines give it (the Action's
/// title, when it gives one).
fn command_name(command: &Command) -> String {
    use crate::sinks::name::CommandName;
    let name = CommandName::new(&command.program, &command.args);
    match crate::sinks::log::action::title() {
        Some(title) => name.titled(&title).short,
        None => name.short,
    }
}
