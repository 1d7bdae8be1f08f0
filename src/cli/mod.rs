//! The command line as clap sees it. Each file keeps one concern:
//! `args` (every flag, in groups of one concern under `args/`: help,
//! `RETRY_*` variable, parser, and the group's checks in its `resolve`;
//! `args/simulation.rs` the options only --plan and --simulate read),
//! `values` (the parsers of values that are more than a number), `choices`
//! (the plain choices), `presets` (a preset's rules set as flags), `refuse`
//! (a rule's refusal as a usage error), `config` (the parsed line to a mode,
//! as a table of contents), and here, how a line is parsed: lean for a run,
//! in full for everything else.

pub mod args;
pub mod choices;
pub mod config;
pub mod generate;
pub mod help;
pub mod id;
mod presets;
pub mod provenance;
mod refuse;
pub mod usage;
mod values;

use std::ffi::OsString;

use clap::{Args, Parser};

pub use crate::cli::args::RunArgs;
pub use crate::cli::args::simulation::SimulationArgs;
use crate::cli::args::throttle::{self as throttle_args, ThrottleArgs};
use crate::cli::choices::ModelChoice;
use crate::cli::provenance::Provenance;

#[derive(Debug, Parser)]
#[command(
    name = "retry",
    // The crate name tells this retry from Debian's unrelated /usr/bin/retry.
    version = concat!(env!("CARGO_PKG_VERSION"), " (retry-jitter)"),
    about = "Rerun a failing command with exponential backoff and jitter",
    long_about = "Rerun a failing command with exponential backoff and jitter.\n\n\
        Runs COMMAND; when its exit status is retryable, sleeps for a delay computed by the \
        chosen jitter strategy and runs it again, up to --max-attempts times. The command's \
        stdout and stderr pass through untouched; retry's own messages go to stderr, and retry \
        exits with the command's status (the others are below).",
    override_usage = help::USAGE,
    after_help = help::short_after(),
    after_long_help = help::long_after(),
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub run: RunArgs,

    /// `--throttle`'s options, in the full command only (`parse_from`),
    /// moved into `run` once parsed.
    #[command(flatten)]
    pub throttle: ThrottleArgs,

    #[command(flatten)]
    pub simulation: SimulationArgs,
}

/// A parsed command line.
#[derive(Debug)]
// One per process, moved once into `config`: boxing either variant would
// add an allocation to start-up for nothing.
#[allow(clippy::large_enum_variant)]
pub enum Parsed {
    /// Neither --plan nor --simulate: the simulation's options were not
    /// parsed, their defaults and variables not read.
    Lean(RunArgs),
    /// Every option, --plan and --simulate possible.
    Full(Cli),
}

/// What becomes of clap's parser, its `Command` (some 44 KB in hundreds of
/// small blocks), once it has parsed: the caller's choice, since only the
/// caller knows whether its process parses once and exits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterParsing {
    /// Free it: any process that parses more than once (the fuzz targets,
    /// the tests, a library user), or runs on for long after.
    Free,
    /// Never free it: the `retry` binary only, which parses once and exits.
    /// Freeing it costs start-up time (2.8 % of the instructions of `retry
    /// -- true` and 1.4 % of its time, bench/tricks.sh) for memory `exit`
    /// returns anyway; in a loop it is a leak (20,000 parses grew a process from
    /// 3 MB to 875 MB).
    Leak,
}

impl AfterParsing {
    fn finish(self, command: clap::Command) {
        match self {
            AfterParsing::Free => drop(command),
            AfterParsing::Leak => std::mem::forget(command),
        }
    }
}

/// Parses a command line (the program name first) and RETRY_* variables.
///
/// A run reads none of `SimulationArgs`, so it is parsed without them: a
/// command of `RunArgs` alone saves 47 % of retry's start-up instructions
/// and 13 % of its time (no simulation defaults to parse, no help text to
/// format; bench/tricks.sh). Any
/// other line, and any line the lean command refuses (help, --version, a
/// simulation option, a mistake), is parsed again in full, so help, errors
/// and the modes read exactly as the whole `Cli` defines them.
pub fn parse_from(args: &[OsString], after: AfterParsing) -> Result<Parsed, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let environment = Environment::read();
    let mut lean = environment.unset_empty(RunArgs::augment_args(clap::Command::new("retry")));
    let matches = lean.try_get_matches_from_mut(args);
    after.finish(lean);
    if let Ok(mut matches) = matches
        && !cfg!(retry_without = "lean_parse")
        && !environment.throttle
        && !matches.get_flag(id::PLAN)
        && !matches.get_flag(id::SIMULATE)
    {
        return Ok(Parsed::Lean(run_args(&mut matches, false)?));
    }
    let mut command = environment.unset_empty(Cli::command());
    let matches = command.try_get_matches_from_mut(args);
    after.finish(command);
    let mut matches = match matches {
        // Help as written for every option, each with its variable.
        Err(error) if usage::is_help_or_version(&error) => {
            let mut whole = Cli::command();
            let help = whole.try_get_matches_from_mut(args).err().unwrap_or(error);
            after.finish(whole);
            return Err(help);
        }
        matches => matches?,
    };
    let mut run = run_args(&mut matches, true)?;
    run.throttle = ThrottleArgs::from_arg_matches_mut(&mut matches)?;
    let simulation = SimulationArgs::from_arg_matches_mut(&mut matches)?;
    Ok(Parsed::Full(Cli {
        run,
        throttle: ThrottleArgs::default(),
        simulation,
    }))
}

/// An empty `RETRY_*` variable counts as unset, as POSIX tools take an
/// empty `TMPDIR`: CI templates write `RETRY_X: ${{ vars.X }}`, and a
/// repository variable nobody set must not stop every job (nor an empty
/// `RETRY_RETRY_IF_OUTPUT` match every line). clap reads a variable when
/// the argument is built and has no such rule, so the argument of each
/// empty one forgets its variable before parsing.
///
/// The environment is read once for its empty variables (rarely any), not
/// looked up once per argument: a lookup compares the name with every
/// variable's, and the 43 of them were 12 % of the instructions of `retry
/// -- true` in an environment of 40 variables (issue 45), more in a CI job's.
pub(crate) fn empty_variables_unset(command: clap::Command) -> clap::Command {
    Environment::read().unset_empty(command)
}

/// What the parse needs of the environment, read in one pass: the
/// variables that are empty (`empty_variables_unset`), and whether one of
/// `--throttle`'s is set, when the line is parsed in full (the lean
/// command has no throttle, `args/throttle.rs`).
struct Environment {
    empty: Vec<OsString>,
    throttle: bool,
}

impl Environment {
    fn read() -> Self {
        Self::scan(std::env::vars_os())
    }

    fn scan(variables: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        let mut environment = Environment {
            empty: Vec::new(),
            throttle: false,
        };
        let prefix = throttle_args::VARIABLE_PREFIX.as_bytes();
        for (name, value) in variables {
            if value.is_empty() {
                environment.empty.push(name);
                continue;
            }
            // Windows' variable names are case-insensitive. The first
            // byte first: most variables are not retry's at all.
            let name = name.as_encoded_bytes();
            environment.throttle |= match cfg!(windows) {
                true => name
                    .get(..prefix.len())
                    .is_some_and(|start| start.eq_ignore_ascii_case(prefix)),
                false => name.first() == Some(&b'R') && name.starts_with(prefix),
            };
        }
        environment
    }

    /// `command` with the arguments of the empty variables unset.
    fn unset_empty(&self, mut command: clap::Command) -> clap::Command {
        if self.empty.is_empty() {
            return command;
        }
        // Windows' variable names are case-insensitive, as its lookups are.
        let same = |a: &std::ffi::OsStr, b: &std::ffi::OsStr| match cfg!(windows) {
            true => a.eq_ignore_ascii_case(b),
            false => a == b,
        };
        let empty: Vec<clap::Id> = command
            .get_arguments()
            .filter(|arg| {
                arg.get_env()
                    .is_some_and(|env| self.empty.iter().any(|name| same(name, env)))
            })
            .map(|arg| arg.get_id().clone())
            .collect();
        for id in empty {
            command = command.mut_arg(id, |arg| arg.env(None));
        }
        command
    }
}

/// `RunArgs` out of the matches, with where their values came from, once
/// no option is stray. `simulation`: the matches hold `SimulationArgs` too.
fn run_args(matches: &mut clap::ArgMatches, simulation: bool) -> Result<RunArgs, clap::Error> {
    use clap::FromArgMatches;
    // Read before the values are moved out: converting without a copy of
    // the matches is a sixth of retry's start-up instructions.
    let provenance = Provenance::of(matches);
    refuse_stray(matches, &provenance, simulation)?;
    let mut run = RunArgs::from_arg_matches_mut(matches)?;
    run.provenance = provenance;
    Ok(run)
}

/// A mode's options on the command line without the mode are a mistake
/// (from the environment they may be meant for another invocation).
/// `simulation`: the matches hold `SimulationArgs` too.
fn refuse_stray(
    matches: &clap::ArgMatches,
    provenance: &Provenance,
    simulation: bool,
) -> Result<(), clap::Error> {
    let typed = |id: &&&str| provenance.typed(id);
    let stray =
        if simulation && matches.get_flag(id::SIMULATE) {
            let model = matches.get_one::<ModelChoice>(id::MODEL);
            let (busy, outage, throttle) = (
                model == Some(&ModelChoice::Busy),
                model == Some(&ModelChoice::Outage),
                model == Some(&ModelChoice::Throttle),
            );
            let only = |ids: &'static [&'static str], wanted: bool, mode| {
                ids.iter()
                    .find(typed)
                    .filter(|_| !wanted)
                    .map(|id| (*id, mode))
            };
            let fleet = outage || throttle;
            only(&id::BUSY_ONLY, busy, "--simulate --model busy")
                .or_else(|| only(&id::OUTAGE_ONLY, outage, "--simulate --model outage"))
                .or_else(|| only(&id::THROTTLE_ONLY, throttle, "--simulate --model throttle"))
                .or_else(|| {
                    only(
                        &id::FLEET_ONLY,
                        fleet,
                        "--simulate --model outage or throttle",
                    )
                })
                .or_else(|| only(&id::SWEEP_ONLY, !fleet, "--simulate --model occ or busy"))
        } else if let Some(id) = id::SIMULATE_ONLY.iter().filter(|_| simulation).find(typed) {
            Some((*id, "--simulate"))
        } else if simulation && !matches.get_flag(id::PLAN) && provenance.typed(id::FORMAT) {
            Some((id::FORMAT, "--plan or --simulate"))
        } else if let Some(id) = id::BUDGET_ONLY
            .iter()
            .find(typed)
            .filter(|_| !provenance.present(id::BUDGET) && !provenance.present(id::BUDGET_STATUS))
        {
            Some((*id, "--budget or --budget-status"))
        } else if let Some(id) = id::BREAKER_ONLY
            .iter()
            .find(typed)
            .filter(|_| !provenance.present(id::BREAKER) && !provenance.present(id::BREAKER_STATUS))
        {
            Some((*id, "--breaker or --breaker-status"))
        } else if let Some(id) = id::THROTTLE_RULE.iter().find(typed).filter(|_| {
            !provenance.present(id::THROTTLE) && !provenance.present(id::THROTTLE_STATUS)
        }) {
            Some((*id, "--throttle or --throttle-status"))
        } else if provenance.typed(id::BREAKER_EXIT_CODE)
            && !id::SKIPPED_USERS.iter().any(|id| provenance.present(id))
        {
            Some((id::BREAKER_EXIT_CODE, "--breaker or --throttle"))
        } else if let Some(id) = id::ON_EXIT_ONLY
            .iter()
            .find(typed)
            .filter(|_| !provenance.present(id::ON_EXIT))
        {
            Some((*id, "--on-exit"))
        } else if let Some(id) = id::ONCE_HOOKS_ONLY
            .iter()
            .find(typed)
            .filter(|_| !provenance.present(id::ON_START) && !provenance.present(id::ON_EXIT))
        {
            Some((*id, "--on-start or --on-exit"))
        } else if provenance.typed(id::STATSD_TAGS) && !provenance.present(id::STATSD) {
            Some((id::STATSD_TAGS, "--statsd"))
        } else if provenance.typed(id::JOB)
            && !provenance.present(id::METRICS_DIR)
            && !provenance.present(id::STATSD)
        {
            Some((id::JOB, "--metrics-dir or --statsd"))
        } else {
            // What is typed first, the few lookups a plain run makes: each one
            // a scan of the record.
            id::STORE_ONLY
                .iter()
                .find(typed)
                .filter(|_| !id::STORE_USERS.iter().any(|id| provenance.present(id)))
                .map(|id| (*id, "--budget, --breaker, --throttle and their --*-status"))
        };
    match stray {
        None => Ok(()),
        Some((id, mode)) => {
            let flag = provenance::long(id);
            Err(refuse::usage(format!("`{flag}` is only for {mode}")))
        }
    }
}

/// Every long option, `--base` and so on, with its `RETRY_*` variable if any.
pub fn long_options() -> Vec<(String, Option<String>)> {
    use clap::CommandFactory;
    Cli::command()
        .get_arguments()
        .filter_map(|arg| {
            let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
            Some((format!("--{}", arg.get_long()?), env))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Attempts;
    use clap::CommandFactory;

    #[test]
    fn modes_need_no_command_and_refuse_one() {
        assert!(
            Cli::try_parse_from(["retry", "--plan"])
                .unwrap()
                .run
                .modes
                .plan
        );
        // A plan may name the command it is for; it is not run.
        assert!(Cli::try_parse_from(["retry", "--plan", "--", "make", "deploy"]).is_ok());
        assert!(Cli::try_parse_from(["retry", "--simulate", "--", "true"]).is_err());
        assert!(Cli::try_parse_from(["retry", "--plan", "--simulate"]).is_err());
        assert!(Cli::try_parse_from(["retry"]).is_err());
    }

    fn parse(args: &[&str]) -> Result<Parsed, clap::Error> {
        let args: Vec<OsString> = ["retry"].iter().chain(args).map(Into::into).collect();
        parse_from(&args, AfterParsing::Free)
    }

    /// The arguments of a lean parse, or `None` for a full one.
    fn lean(args: &[&str]) -> Option<RunArgs> {
        match parse(args).unwrap() {
            Parsed::Lean(run) => Some(run),
            Parsed::Full(_) => None,
        }
    }

    #[test]
    fn every_option_refuses_an_empty_value_typed() {
        // None takes '' to mean something, and `--retry-if-output ''` would
        // match every line: each says so, naming itself, before anything runs.
        let mut checked = 0;
        for arg in Cli::command().get_arguments() {
            let Some(long) = arg.get_long().filter(|_| arg.get_action().takes_values()) else {
                continue;
            };
            for typed in [vec![format!("--{long}="), "--".into(), "true".into()], {
                vec![
                    format!("--{long}"),
                    String::new(),
                    "--".into(),
                    "true".into(),
                ]
            }] {
                let typed: Vec<&str> = typed.iter().map(String::as_str).collect();
                let Err(error) = parse(&typed) else {
                    panic!("{typed:?} was taken");
                };
                let error = error.to_string();
                // `--presets [<NAME>]`: its value is optional, never empty.
                let named = [format!("'--{long} <"), format!("'--{long} [<")];
                assert!(named.iter().any(|n| error.contains(n)), "{error}");
                checked += 1;
            }
        }
        assert!(checked > 60, "{checked}");
    }

    #[test]
    fn definition_is_consistent() {
        Cli::command().debug_assert();
        RunArgs::augment_args(clap::Command::new("retry")).debug_assert();
    }

    /// A run without a throttle pays nothing for its options: the lean
    /// command has none of them. Named on the line, or set by a
    /// variable, they are parsed in full, and a run gets them.
    #[test]
    fn only_a_throttle_s_lines_parse_its_options() {
        assert!(lean(&["-n", "2", "--breaker", "b", "true"]).is_some());
        for line in [
            &["--throttle", "api", "true"][..],
            &["--throttle-status", "api"],
            &[
                "--throttle",
                "api",
                "--throttle-k",
                "3",
                "--throttle-window",
                "10s",
                "true",
            ],
        ] {
            let Parsed::Full(cli) = parse(line).unwrap() else {
                panic!("{line:?} was parsed lean");
            };
            assert_eq!(cli.run.throttle.throttle.is_some(), line[0] == "--throttle");
            assert_eq!(
                cli.run.throttle.throttle_status.is_some(),
                line[0] != "--throttle"
            );
        }
        let Parsed::Full(cli) = parse(&["--throttle", "api", "--throttle-k", "3", "true"]).unwrap()
        else {
            unreachable!()
        };
        assert_eq!(cli.run.throttle.throttle_k, Some(3.0));
        assert!(cli.run.provenance.typed(id::THROTTLE_K));
        // A variable alone: in full too (the lean command would not see it).
        let prefix = args::throttle::VARIABLE_PREFIX.as_bytes();
        let set = |name: &str, value: &str| Environment::scan([(name.into(), value.into())]);
        assert!(set("RETRY_THROTTLE", "api").throttle);
        assert!(set("RETRY_THROTTLE_WINDOW", "1m").throttle);
        assert!(!set("RETRY_THROTTLE", "").throttle, "an empty one is unset");
        assert!(!set("RETRY_BREAKER", "ci").throttle);
        assert!(!set("RETRY_THROTTL", "x").throttle);
        assert_eq!(prefix, b"RETRY_THROTTLE");
    }

    #[test]
    fn only_plans_and_simulations_parse_the_simulations_options() {
        for run in [
            &["true"][..],
            &["-n", "2", "--budget", "b", "true"],
            &["--man"],
        ] {
            assert!(lean(run).is_some(), "{run:?}");
        }
        for full in [
            &["--plan"][..],
            &["--simulate", "--reps", "2"],
            &["--format", "csv", "--plan"],
        ] {
            assert!(lean(full).is_none(), "{full:?}");
        }
        // What the lean command refuses is refused, or helped, as in full.
        let error = |args| parse(args).unwrap_err().to_string();
        assert!(error(&["--reps", "2", "true"]).contains("`--reps` is only for --simulate"));
        assert!(error(&["--budget-cost", "2", "true"]).contains("only for --budget"));
        assert!(error(&["--help"]).contains("--net-delay <DURATION>"));
        assert!(error(&["--help"]).contains("Exit status:"));
    }

    #[test]
    fn a_lean_parse_reads_a_run_as_the_full_one_does() {
        for args in [
            &["true"][..],
            &[
                "-j",
                "equal",
                "-b",
                "5ms",
                "-c",
                "1s",
                "-f",
                "3",
                "-n",
                "unlimited",
                "x",
                "-y",
            ],
            &[
                "--retry-on",
                "1-9",
                "--fatal-on",
                "4",
                "--success-on",
                "0,10",
                "-t",
                "1s",
                "x",
            ],
            &[
                "--budget",
                "b",
                "--budget-tokens",
                "9",
                "--budget-refill",
                "0.5",
                "-q",
                "x",
            ],
            &[
                "--stdin",
                "replay",
                "--stdout-once",
                "--retry-if-output",
                "a.c",
                "-s",
                "x",
            ],
        ] {
            let Some(lean) = lean(args) else {
                panic!("{args:?}")
            };
            let all = ["retry"].iter().chain(args);
            let mut matches = Cli::command().try_get_matches_from(all).unwrap();
            let mut full = run_args(&mut matches, true).unwrap();
            let mut lean = lean;
            // The full record also holds the simulation's defaults.
            let (lean_record, full_record) = (
                std::mem::take(&mut lean.provenance),
                std::mem::take(&mut full.provenance),
            );
            assert_eq!(format!("{lean:?}"), format!("{full:?}"));
            for id in Cli::command().get_arguments().map(|a| a.get_id().as_str()) {
                let same = lean_record.typed(id) == full_record.typed(id)
                    && lean_record.given(id) == full_record.given(id)
                    && (lean_record.is_default(id) == full_record.is_default(id)
                        || id::SIMULATE_ONLY.contains(&id)
                        || id == id::FORMAT);
                assert!(same, "{args:?}: {id}");
            }
        }
    }

    #[test]
    fn every_option_but_the_modes_has_its_variable() {
        let mut command = Cli::command();
        command.build();
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
            if help::NOT_FROM_ENVIRONMENT.contains(&long) {
                assert_eq!(
                    env, None,
                    "--{long} is a mode, not read from the environment"
                );
            } else {
                let wanted = format!("RETRY_{}", long.replace('-', "_").to_uppercase());
                assert_eq!(env, Some(wanted), "--{long}");
            }
        }
    }

    #[test]
    fn command_after_options_keeps_its_own_flags() {
        let cli = lean(&["-n", "3", "curl", "-fsS", "--retry", "x"]).unwrap();
        assert_eq!(cli.backoff.max_attempts, Attempts::Limit(3));
        assert_eq!(cli.programs.command, ["curl", "-fsS", "--retry", "x"]);
        let dashed = lean(&["--", "-weird", "-n"]).unwrap();
        assert_eq!(dashed.programs.command, ["-weird", "-n"]);
    }
}
