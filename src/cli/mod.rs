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
/// format; bench/tricks.sh). It is parsed in two tiers: first without the
/// rarer groups too (`parse_common`), then, for a line or a variable of
/// theirs, with every option of a run (`parse_lean`). Any other line, and
/// any line the lean commands refuse (help, --version, a simulation
/// option, a mistake), is parsed again in full, so help, errors and the
/// modes read exactly as the whole `Cli` defines them.
pub fn parse_from(args: &[OsString], after: AfterParsing) -> Result<Parsed, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let environment = Environment::read();
    if !cfg!(retry_without = "lean_parse") && !environment.throttle {
        if let Some(run) = parse_common(args, &environment, after) {
            return run.map(Parsed::Lean);
        }
        if let Some(run) = parse_lean(args, &environment, after) {
            return run.map(Parsed::Lean);
        }
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

/// The first tier of the lean parse: a run of the common groups alone
/// (`CommonArgs`), the rarer ones left at their defaults. `None` when a
/// rarer group's variable is set, or the command refuses the line (a
/// rarer group's option, help, a mistake), or it is a plan or a
/// simulation: then `parse_lean` or the full parse reads it. It saves
/// what clap spends on the rarer groups' 23 options at every start.
fn parse_common(
    args: &[OsString],
    environment: &Environment,
    after: AfterParsing,
) -> Option<Result<RunArgs, clap::Error>> {
    use clap::FromArgMatches;
    if environment.rare || cfg!(retry_without = "common_parse") {
        return None;
    }
    let mut common =
        environment.unset_empty(args::CommonArgs::augment_args(clap::Command::new("retry")));
    let matches = common.try_get_matches_from_mut(args);
    after.finish(common);
    let mut matches = matches
        .ok()
        .filter(|matches| !matches.get_flag(id::PLAN) && !matches.get_flag(id::SIMULATE))?;
    let mut provenance = Provenance::of(&matches);
    provenance.defaulted(&args::RARE_DEFAULTS);
    Some(
        refuse_stray(&matches, &provenance, false)
            .and_then(|()| args::CommonArgs::from_arg_matches_mut(&mut matches))
            .map(|common| RunArgs {
                provenance,
                ..RunArgs::from(common)
            }),
    )
}

/// The second tier: every option of a run (`RunArgs`), none of the
/// simulation's. `None` when the command refuses the line or it is a plan
/// or a simulation: then the full parse reads it.
fn parse_lean(
    args: &[OsString],
    environment: &Environment,
    after: AfterParsing,
) -> Option<Result<RunArgs, clap::Error>> {
    let mut lean = environment.unset_empty(RunArgs::augment_args(clap::Command::new("retry")));
    let matches = lean.try_get_matches_from_mut(args);
    after.finish(lean);
    let mut matches = matches
        .ok()
        .filter(|matches| !matches.get_flag(id::PLAN) && !matches.get_flag(id::SIMULATE))?;
    Some(run_args(&mut matches, false))
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
/// variables that are empty (`empty_variables_unset`), whether one of the
/// rarer groups' is set (the first tier of the lean parse has none of
/// them), and whether one of `--throttle`'s is, when the line is parsed
/// in full (neither lean command has a throttle, `args/throttle.rs`).
#[derive(Default)]
struct Environment {
    empty: Vec<OsString>,
    rare: bool,
    throttle: bool,
}

impl Environment {
    fn read() -> Self {
        let mut environment = Environment::default();
        crate::platform::each_variable(|name, value| environment.note(name, value));
        environment
    }

    #[cfg(test)]
    fn scan(variables: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        let mut environment = Environment::default();
        for (name, value) in variables {
            environment.note(&name, &value);
        }
        environment
    }

    fn note(&mut self, name: &std::ffi::OsStr, value: &std::ffi::OsStr) {
        if value.is_empty() {
            self.empty.push(name.to_owned());
            return;
        }
        // The first byte first: most variables are not retry's at all.
        let bytes = name.as_encoded_bytes();
        if !bytes.first().is_some_and(|b| b.eq_ignore_ascii_case(&b'R')) {
            return;
        }
        let prefix = throttle_args::VARIABLE_PREFIX.as_bytes();
        // Windows' variable names are case-insensitive.
        self.throttle |= match cfg!(windows) {
            true => bytes
                .get(..prefix.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(prefix)),
            false => bytes.starts_with(prefix),
        };
        self.rare = self.rare
            || args::RARE_VARIABLES
                .iter()
                .any(|rare| same_variable(name, rare.as_ref()));
    }

    /// `command`, each argument whose variable is empty made to forget it.
    fn unset_empty(&self, mut command: clap::Command) -> clap::Command {
        if self.empty.is_empty() {
            return command;
        }
        let empty: Vec<clap::Id> = command
            .get_arguments()
            .filter(|arg| {
                arg.get_env()
                    .is_some_and(|env| self.empty.iter().any(|name| same_variable(name, env)))
            })
            .map(|arg| arg.get_id().clone())
            .collect();
        for id in empty {
            command = command.mut_arg(id, |arg| arg.env(None));
        }
        command
    }
}

/// Windows' variable names are case-insensitive, as its lookups are.
fn same_variable(a: &std::ffi::OsStr, b: &std::ffi::OsStr) -> bool {
    match cfg!(windows) {
        true => a.eq_ignore_ascii_case(b),
        false => a == b,
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
            stray_in_simulation(matches, provenance)
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
        } else if let Some(id) = id::ALTERNATE_ONLY
            .iter()
            .find(typed)
            .filter(|_| !provenance.present(id::ALTERNATE))
        {
            Some((*id, "--alternate"))
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

/// A `--simulate` option of another model than the one asked for, and
/// the model it is for.
fn stray_in_simulation(
    matches: &clap::ArgMatches,
    provenance: &Provenance,
) -> Option<(&'static str, &'static str)> {
    let typed = |id: &&&str| provenance.typed(id);
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
        args::CommonArgs::augment_args(clap::Command::new("retry")).debug_assert();
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
            &["--on-start", "a", "--hook-timeout", "2s", "x"],
            &[
                "--breaker",
                "c",
                "--store",
                "host",
                "--metrics-dir",
                ".",
                "x",
            ],
            &[
                "--statsd",
                "127.0.0.1:8125",
                "--statsd-tags",
                "--job",
                "j",
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
            assert!(lean(args).is_some(), "{args:?}");
            let all: Vec<OsString> = ["retry"].iter().chain(args).map(Into::into).collect();
            let mut matches = Cli::command().try_get_matches_from(&all).unwrap();
            let mut full = run_args(&mut matches, true).unwrap();
            let full_record = std::mem::take(&mut full.provenance);
            // Both tiers, as an environment without the rarer groups'
            // variables has them: the first takes a line of the common
            // groups alone, the second every run.
            let plain = Environment::default();
            let rare = rare_arguments();
            let names_rare = args.iter().any(|typed| {
                rare.iter().any(|arg| {
                    arg.get_long()
                        .is_some_and(|long| *typed == format!("--{long}"))
                })
            });
            let common = parse_common(&all, &plain, AfterParsing::Free);
            assert_eq!(common.is_some(), !names_rare, "{args:?}");
            let lean = parse_lean(&all, &plain, AfterParsing::Free);
            for (tier, run) in [("common", common), ("lean", lean)] {
                let Some(mut run) = run.map(Result::unwrap) else {
                    continue;
                };
                // The full record also holds the simulation's defaults.
                let record = std::mem::take(&mut run.provenance);
                assert_eq!(format!("{run:?}"), format!("{full:?}"), "{tier}");
                for id in Cli::command().get_arguments().map(|a| a.get_id().as_str()) {
                    let same = record.typed(id) == full_record.typed(id)
                        && record.given(id) == full_record.given(id)
                        && ((record.present(id) == full_record.present(id)
                            && record.is_default(id) == full_record.is_default(id))
                            || id::SIMULATE_ONLY.contains(&id)
                            || id == id::FORMAT);
                    assert!(same, "{tier} {args:?}: {id}");
                }
            }
        }
    }

    /// The arguments of the groups `CommonArgs` leaves out.
    fn rare_arguments() -> Vec<clap::Arg> {
        let mut all = RunArgs::augment_args(clap::Command::new("retry"));
        let mut common = args::CommonArgs::augment_args(clap::Command::new("retry"));
        all.build();
        common.build();
        let common: Vec<&clap::Id> = common.get_arguments().map(|a| a.get_id()).collect();
        all.get_arguments()
            .filter(|arg| !common.contains(&arg.get_id()))
            .cloned()
            .collect()
    }

    #[test]
    fn the_rare_lists_name_what_the_common_parse_leaves_out() {
        let rare = rare_arguments();
        assert!(rare.len() >= 20, "{}", rare.len());
        let mut variables: Vec<String> = rare
            .iter()
            .map(|arg| arg.get_env().unwrap().to_string_lossy().into_owned())
            .collect();
        let mut listed: Vec<String> = args::RARE_VARIABLES.map(String::from).to_vec();
        variables.sort();
        listed.sort();
        assert_eq!(variables, listed);
        let mut defaulted: Vec<&str> = rare
            .iter()
            .filter(|arg| !arg.get_default_values().is_empty())
            .map(|arg| arg.get_id().as_str())
            .collect();
        let mut listed = args::RARE_DEFAULTS.to_vec();
        defaulted.sort();
        listed.sort();
        assert_eq!(defaulted, listed);
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
