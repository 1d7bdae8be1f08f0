//! The command run and how: its words, through a shell or not, in which
//! process group, and the preset that judges it.

use std::ffi::{OsStr, OsString};

use clap::{Args, ValueHint};

use crate::cli::args::PROGRAMS;
use crate::cli::choices::{ForegroundChoice, RepeatChoice};
use crate::cli::id;
use crate::cli::provenance::Provenance;
use crate::cli::refuse::usage;
use crate::cli::values::{PresetName, alternate_words, parse_alternate, parse_switch};
use crate::run::Command;
use crate::run::alternates::Alternate;

#[derive(Clone, Debug, Args)]
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

    /// Run CMD in COMMAND's place on a later attempt (repeatable: a mirror's command)
    ///
    /// Run CMD in COMMAND's place on a later attempt, as a mirror's
    /// command: attempt 2 runs the first --alternate, attempt 3 the
    /// second, and after the last COMMAND again (--alternate-repeat).
    /// Without --shell, CMD is split into words as sh splits a simple
    /// command (quotes and backslashes), and nothing in it is expanded: no
    /// variables, no ~, no globbing; with --shell it is the shell's line.
    /// A program that cannot be found is refused before the first attempt.
    /// Each attempt is judged by the preset its own program chose, and its
    /// log lines name it. RETRY_ALTERNATE holds one
    #[arg(long, env = "RETRY_ALTERNATE", value_name = "CMD",
          action = clap::ArgAction::Append, value_parser = parse_alternate,
          value_hint = ValueHint::CommandString, hide_short_help = true)]
    pub alternate: Vec<String>,

    /// What follows the last --alternate: `all` (COMMAND and each again) or `last`
    #[arg(long, env = "RETRY_ALTERNATE_REPEAT", value_enum, default_value_t = RepeatChoice::All,
          value_name = "WHICH", hide_short_help = true)]
    pub alternate_repeat: RepeatChoice,

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
        let alternates = (self.alternate.iter())
            .map(|alternate| {
                let (program, args) = self.alternate_words(alternate);
                Alternate {
                    program,
                    args,
                    judge: None,
                }
            })
            .collect();
        Some(Command {
            program,
            args,
            foreground: self.foreground.into(),
            alternates,
            repeat: self.alternate_repeat.into(),
        })
    }

    /// Each `--alternate` whose program cannot be found, refused before
    /// anything runs: a typo in a mirror's command would otherwise show
    /// only at the attempt that runs it. With `-s` the shell finds it.
    pub fn check_alternates(&self, provenance: &Provenance) -> Result<(), clap::Error> {
        if self.shell {
            return Ok(());
        }
        for alternate in &self.alternate {
            let words = alternate_words(alternate).unwrap_or_default();
            let Some(program) = words.first() else {
                continue;
            };
            let program = OsStr::new(program);
            let found =
                crate::platform::spawn::program_file(program, None).is_some_and(|file| runs(&file));
            // Found, but a directory or a file without execute permission
            // (`/etc/passwd`) would fail its attempt with 126 all the same.
            let why = match found {
                false => Some("command not found"),
                true => {
                    let path = std::env::var_os("PATH");
                    crate::platform::spawn::why_not_startable(program, path.as_deref())
                        .map(|_| "permission denied: not an executable file")
                }
            };
            if let Some(why) = why {
                return Err(usage(format!(
                    "{}: cannot run `{}`: {why} (checked before the first attempt)",
                    provenance.name(id::ALTERNATE, &crate::escape::control(alternate)),
                    crate::escape::control(&program.to_string_lossy()),
                )));
            }
        }
        Ok(())
    }

    /// An alternate's program and arguments: its words, or with `-s` its
    /// line for the shell, as COMMAND's.
    fn alternate_words(&self, alternate: &str) -> (OsString, Vec<OsString>) {
        if self.shell {
            return crate::platform::shell(alternate.into());
        }
        // Checked by its parser: it splits.
        let words = alternate_words(alternate).unwrap_or_default();
        let mut words = words.into_iter().map(OsString::from);
        (words.next().unwrap_or_default(), words.collect())
    }
}

/// Whether the file a start would run exists (a path is taken as given,
/// and Windows adds `.exe` to one without an extension).
fn runs(file: &std::path::Path) -> bool {
    file.exists() || (file.extension().is_none() && file.with_extension("exe").exists())
}
