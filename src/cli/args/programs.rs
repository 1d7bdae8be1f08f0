//! The command run and how: its words, through a shell or not, in which
//! process group, and the preset that judges it.

use std::ffi::{OsStr, OsString};

use clap::{Args, ValueHint};

use crate::cli::args::PROGRAMS;
use crate::cli::choices::ForegroundChoice;
use crate::cli::values::{PresetName, parse_switch};
use crate::run::Command;

#[derive(Debug, Args)]
#[group(skip)]
pub struct ProgramsArgs {
    /// Judge failures as one program reports them (retry --presets shows the rules)
    ///
    /// Its transient exit codes are retried, its permanent ones fatal, its
    /// messages and server hints read, as plain flags would (--presets
    /// NAME prints them). A rule given as a flag or by its variable wins
    /// over the preset's. Without --preset, the preset that claims the
    /// command's call is chosen by its program (curl, git fetch, apt-get
    /// install..., looked up through env, sudo, nice, nohup, timeout,
    /// stdbuf, ionice and time; never inside sh -c, never BusyBox's);
    /// chosen, it ends a run only on a line it recognises, never on an exit
    /// code alone; -v says which; --preset none turns the lookup off.
    /// Presets of your own, in the same
    /// format as `retry --presets NAME` shows, go in
    /// $XDG_CONFIG_HOME/retry/presets.ini (~/.config/retry/presets.ini)
    #[arg(long, env = "RETRY_PRESET", value_name = "NAME", value_parser = PresetName,
          value_hint = ValueHint::Other, help_heading = PROGRAMS)]
    pub preset: Option<String>,

    /// Run COMMAND and ARGS joined with spaces through `/bin/sh -c` (for pipelines;
    /// Windows: `cmd /d /s /c`)
    #[arg(short, long, env = "RETRY_SHELL", value_parser = parse_switch)]
    pub shell: bool,

    /// Whether the command stays in retry's process group (so it can read the
    /// terminal, and job control stops and continues both) or gets a process
    /// group of its own (so timeouts and signals reach all its descendants);
    /// `auto` keeps it in retry's group when stdin is a terminal (Windows: a
    /// console process group; there is no job control)
    #[arg(long, env = "RETRY_FOREGROUND", value_enum, default_value_t = ForegroundChoice::Auto,
          value_name = "WHEN", hide_short_help = true)]
    pub foreground: ForegroundChoice,

    /// The command to run and its arguments (`--` before it if it starts with `-`)
    #[arg(value_name = "COMMAND", trailing_var_arg = true,
          required_unless_present = "mode",
          value_hint = ValueHint::CommandWithArguments,
          value_parser = clap::value_parser!(OsString))]
    pub command: Vec<OsString>,
}

impl ProgramsArgs {
    /// COMMAND's words as a program and its arguments (with `-s`, one
    /// script for the shell) and its process group, or none: no COMMAND,
    /// or one `--simulate` refuses.
    pub fn resolve(&self, simulate: bool) -> Option<Command> {
        if self.command.is_empty() || simulate {
            return None;
        }
        let mut words = self.command.iter().cloned();
        let (program, args) = if self.shell {
            let script = words.collect::<Vec<_>>().join(OsStr::new(" "));
            crate::platform::shell(script)
        } else {
            (words.next().unwrap_or_default(), words.collect())
        };
        Some(Command {
            program,
            args,
            foreground: self.foreground.into(),
        })
    }
}
