//! The modes that run no command: a plan, a simulation, and those that
//! only print.

use clap::{Args, ValueHint};

use crate::cli::args::MODES;
use crate::cli::generate::Shell;
use crate::cli::refuse::usage;
use crate::cli::values::PresetName;

#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct ModesArgs {
    /// Print the sleeps a run with these options would take, and run nothing
    ///
    /// Print the sleeps a run with these options would take, and run nothing.
    /// A COMMAND after the options is named (on stderr), never run:
    /// `retry --plan -n 6 --base 1s -- make deploy`. With --max-time the
    /// rows stop at the first sleep that would end past it, where a run
    /// gives up at the latest.
    #[arg(long, group = "mode", help_heading = MODES)]
    pub plan: bool,

    /// Simulate competing clients as in the AWS post, and run nothing
    ///
    /// The experiment of the AWS "Exponential Backoff And Jitter" post: work
    /// and completion time per strategy. Without --base/--cap it uses the
    /// post's: 10ms (5ms for decorrelated), 2s.
    #[arg(long, group = "mode", conflicts_with = "command", help_heading = MODES)]
    pub simulate: bool,

    /// Print a completion script for SHELL to stdout, and run nothing
    #[arg(long, value_name = "SHELL", value_enum, group = "mode", conflicts_with = "command", help_heading = MODES,
          hide_short_help = true)]
    pub completions: Option<Shell>,

    /// Print the man page (roff) to stdout, and run nothing
    #[arg(long, group = "mode", conflicts_with = "command", help_heading = MODES, hide_short_help = true)]
    pub man: bool,

    /// Print the presets as a table, or preset NAME as flags, and run nothing
    ///
    /// Print the presets as a table: each preset's name, the programs it
    /// is for, what it retries and what stops at once, in words. With
    /// NAME, that preset as the plain flags it stands for, with the
    /// documentation it rests on; with --verbose, every preset so.
    // The names are the table's first column: one line in -h.
    #[arg(long, value_name = "NAME", num_args = 0..=1, value_parser = PresetName,
          hide_possible_values = true, value_hint = ValueHint::Other, group = "mode", conflicts_with = "command",
          help_heading = MODES)]
    pub presets: Option<Option<String>>,

    /// Print the state of the shared retry budget NAME, and run nothing
    #[arg(long, value_name = "NAME", group = "mode", conflicts_with = "command", value_parser = crate::state::budget::parse_name,
          value_hint = ValueHint::Other, help_heading = MODES, hide_short_help = true)]
    pub budget_status: Option<String>,

    /// Print the state of the circuit breaker NAME, and run nothing
    ///
    /// Closed, open or probing, the failed runs counted, the cooldown's level
    /// and when the next probe may run; with --store, the fleet's circuit.
    /// With --metrics-dir or --statsd, the circuit's series too (as every
    /// run with --breaker writes them), for a check run every minute.
    #[arg(long, value_name = "NAME", group = "mode", conflicts_with = "command", value_parser = crate::state::breaker::parse_name,
          value_hint = ValueHint::Other, help_heading = MODES, hide_short_help = true)]
    pub breaker_status: Option<String>,
}

/// The mode asked for (clap lets one at most be).
#[derive(Debug, PartialEq, Eq)]
pub enum Asked {
    Run,
    Plan,
    Simulate,
    Print(Print),
}

/// The modes that only print, each with its own options.
#[derive(Debug, PartialEq, Eq)]
pub enum Print {
    Completions(Shell),
    Man,
    Presets(Option<String>),
    BudgetStatus(String),
    BreakerStatus(String),
    ThrottleStatus(String),
}

impl ModesArgs {
    /// The mode; `--plan` and `--simulate` in a retry built without them
    /// (the cargo feature `preview`) are refused, before any other rule, as
    /// the options stay defined (help, the man page and completions are the
    /// same in every build).
    pub fn resolve(&mut self) -> Result<Asked, clap::Error> {
        let asked = if self.plan {
            Asked::Plan
        } else if self.simulate {
            Asked::Simulate
        } else if let Some(shell) = self.completions {
            Asked::Print(Print::Completions(shell))
        } else if self.man {
            Asked::Print(Print::Man)
        } else if let Some(name) = self.presets.take() {
            Asked::Print(Print::Presets(name))
        } else if let Some(name) = self.budget_status.take() {
            Asked::Print(Print::BudgetStatus(name))
        } else if let Some(name) = self.breaker_status.take() {
            Asked::Print(Print::BreakerStatus(name))
        } else {
            Asked::Run
        };
        let mode = match asked {
            Asked::Plan => "--plan",
            Asked::Simulate => "--simulate",
            _ => return Ok(asked),
        };
        match cfg!(feature = "preview") {
            true => Ok(asked),
            false => Err(usage(format!(
                "{mode}: this retry was built without --plan and --simulate (the cargo feature `preview`)"
            ))),
        }
    }
}
