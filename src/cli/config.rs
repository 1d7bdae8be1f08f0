//! From what clap parsed to what a mode needs: the cross-field rules that no
//! single value parser can check, applied once, so the rest of the program
//! only ever sees valid options of the mode it runs.

use std::time::Duration;

use clap::CommandFactory;
use clap::error::ErrorKind;

use crate::cli::provenance::Provenance;
use crate::cli::{Cli, Parsed, RunArgs, id};
use crate::codes::CodeSet;
use crate::policy::Policy;
use crate::run;
use crate::sinks;
use crate::sinks::log::Verbosity;
use crate::strategy::{Backoff, Jitter};
#[cfg(feature = "preview")]
use crate::{
    cli::SimulationArgs,
    cli::choices::ModelChoice,
    plan,
    simulate::{self, Experiment, Model, Net},
};

/// What retry was asked to do, each mode with its own options.
#[derive(Debug)]
pub enum Mode {
    /// A run, its outputs, and where its values came from (for the errors
    /// of what is checked only when the run starts, such as opening
    /// `--log-file`).
    Run(Box<run::Options>, Box<sinks::Settings>, Provenance),
    #[cfg(feature = "preview")]
    Plan(plan::Options),
    #[cfg(feature = "preview")]
    Simulate(crate::simulate::Options),
    /// `--simulate --model outage`.
    #[cfg(feature = "preview")]
    Outage(crate::simulate::outage::Options),
    Completions(crate::cli::generate::Shell),
    Man,
    /// `--presets`: what it prints, and why the user's file was ignored.
    Presets {
        listing: String,
        warning: Option<String>,
    },
    /// `--budget-status NAME`.
    BudgetStatus(crate::state::budget::Settings),
    /// `--breaker-status NAME`, and where its circuit's metrics go
    /// (`--metrics-dir`, `--statsd`), with where they came from.
    BreakerStatus(
        crate::state::breaker::Settings,
        crate::metrics::Settings,
        Provenance,
    ),
}

/// Applies the cross-field rules and picks the mode.
pub fn from_cli(parsed: Parsed) -> Result<Mode, clap::Error> {
    let (mut cli, simulation) = match parsed {
        Parsed::Lean(run) => (run, None),
        Parsed::Full(Cli { run, simulation }) => (run, Some(simulation)),
    };
    preview_built(&cli)?;
    // The modes that only print come first, before the run's rules (as
    // ripgrep decides its special modes): an environment set up for jobs
    // (`RETRY_BASE=10s RETRY_CAP=1s`) must not break a shell profile's
    // `retry --completions bash`. Each checks its own options only.
    if let Some(shell) = cli.completions {
        return Ok(Mode::Completions(shell));
    } else if cli.man {
        return Ok(Mode::Man);
    } else if let Some(name) = &cli.presets {
        let catalog = crate::preset::Catalog::load();
        let presets = catalog.presets();
        // A table to read; the flags of one preset, or of all with -v.
        let listing = match (name, cli.verbose) {
            (Some(name), _) => catalog.find(&presets, name).map_err(usage)?.as_flags(),
            (None, true) => crate::preset::listing(&presets),
            (None, false) => crate::preset::table(&presets),
        };
        return Ok(Mode::Presets {
            listing,
            warning: catalog.warning(),
        });
    } else if let Some(name) = cli.budget_status.take() {
        let store = cli.store.resolve(&cli.provenance)?;
        let budget = cli.budget.resolve(&cli.provenance)?;
        return Ok(Mode::BudgetStatus(budget.named(name, store)));
    } else if let Some(name) = cli.breaker_status.take() {
        let circuit = cli.breaker.resolve(&cli.provenance)?;
        let store = cli.store.resolve(&cli.provenance)?;
        // The circuit's series are the breaker's, of no job.
        let metrics = crate::metrics::Settings {
            job: None,
            ..cli.metrics.resolve()
        };
        return Ok(Mode::BreakerStatus(
            circuit.named(name, cli.max_time, store),
            metrics,
            cli.provenance,
        ));
    }
    // A preset named, or looked up by the program it wraps: only a run or
    // a plan of a command reads the data and the user's file.
    let command = (!cli.command.is_empty() && !cli.simulate)
        .then(|| program_and_args(cli.command.clone(), cli.shell));
    let catalog = match (cli.preset.as_deref(), &command) {
        (Some(crate::preset::NONE), _) | (None, None) => crate::preset::Catalog::default(),
        _ => crate::preset::Catalog::load(),
    };
    let presets = match (cli.preset.as_deref(), &command) {
        (Some(crate::preset::NONE), _) | (None, None) => Vec::new(),
        // A program no preset names: nothing to parse, none is chosen.
        (None, Some((program, args))) if !catalog.may_claim(program, args) => Vec::new(),
        _ => catalog.presets(),
    };
    let (preset, chosen_for, no_preset) = match (cli.preset.as_deref(), &command) {
        (Some(crate::preset::NONE), _) | (None, None) => (None, None, None),
        (Some(name), _) => (
            Some(catalog.find(&presets, name).map_err(usage)?),
            None,
            None,
        ),
        (None, Some((program, args))) => {
            use crate::preset::claims;
            match crate::preset::choose(&presets, program, args).map_err(usage)? {
                // The file that will run, as the spawn finds it: BusyBox's
                // `wget` is not the wget the preset describes.
                Some(chosen) => match claims::another_program(
                    &chosen.program,
                    crate::platform::spawn::program_file(&chosen.program),
                ) {
                    Some(why) => (None, None, Some(why)),
                    None => (Some(chosen.preset.clone()), Some(chosen.why), None),
                },
                None => (None, None, claims::shell(program, args)),
            }
        }
    };
    let words = match &preset {
        Some(preset) => {
            let judging = match chosen_for {
                Some(_) => crate::cli::Judging::Chosen,
                None => crate::cli::Judging::Named,
            };
            crate::cli::apply_preset(&mut cli, preset, judging).map_err(usage)?
        }
        None => Default::default(),
    };
    let crate::cli::presets::Words {
        labels,
        slow_down,
        transient,
        hidden,
        named_codes,
    } = words;
    let (slow_down, slow_down_advice) = slow_down.unzip();
    let named = |id, value: &dyn std::fmt::Display| cli.provenance.name(id, value);
    if cli.cap < cli.base {
        let (cap, base) = (fmt(cli.cap), fmt(cli.base));
        let fix = if cli.provenance.is_default(id::CAP) {
            format!("; set --cap to {base} or more")
        } else if cli.provenance.is_default(id::BASE) {
            format!("; set --base to {cap} or less")
        } else {
            String::new()
        };
        return Err(usage(format!(
            "{} is below {}: the cap must be at least the base{fix}",
            named(id::CAP, &cap),
            named(id::BASE, &base),
        )));
    }
    for (id, list) in [(id::RETRY_ON, &cli.retry_on), (id::FATAL_ON, &cli.fatal_on)] {
        if let Some(list) = list {
            disjoint_from_success(&cli.provenance, id, list, &cli.success_on)?;
        }
    }
    if cli.timeout == Some(Duration::ZERO) {
        return Err(usage(format!(
            "{} would stop every attempt before it starts; leave it out for no limit",
            named(id::TIMEOUT, &"0s")
        )));
    }
    if cli.max_time == Some(Duration::ZERO) {
        return Err(usage(format!(
            "{} would stop the run before it starts; leave it out for no limit",
            named(id::MAX_TIME, &"0s")
        )));
    }
    let circuit = cli.breaker.resolve(&cli.provenance)?;
    let store = cli.store.resolve(&cli.provenance)?;

    let jitter = match (cli.jitter.single(), cli.simulate) {
        (Some(jitter), _) => jitter,
        // The run's own backoff is unused when every strategy is simulated.
        (None, true) => Jitter::Full,
        (None, false) => {
            return Err(usage(format!(
                "{} compares strategies in --simulate; a run or a plan needs one of none, full, equal, decorrelated",
                named(id::JITTER, &"all")
            )));
        }
    };
    let backoff = Backoff {
        jitter,
        base: cli.base,
        cap: cli.cap,
        factor: cli.factor,
    };
    let budget = cli.budget.resolve(&cli.provenance)?;
    // What -v, --plan and the JSON log say of the preset that judges the run.
    let preset_line = preset.as_ref().map(|preset| crate::events::PresetLine {
        name: preset.name.to_owned(),
        chosen: chosen_for.is_some(),
        why: chosen_for.clone().unwrap_or_else(|| {
            format!("named by {}", cli.provenance.name(id::PRESET, &preset.name))
        }),
    });
    // `Parsed::Lean` is never a plan or a simulation.
    #[cfg(not(feature = "preview"))]
    let _ = simulation;
    #[cfg(feature = "preview")]
    match simulation {
        Some(simulation) if cli.plan => {
            let command = command
                .as_ref()
                .map(|(program, args)| crate::sinks::name::CommandName::new(program, args).full);
            return Ok(Mode::Plan(plan::Options {
                preset: preset_line,
                backoff,
                attempts: cli.max_attempts,
                seed: cli.seed,
                format: simulation.format.into(),
                max_time: cli.max_time,
                command,
            }));
        }
        Some(simulation) if cli.simulate && simulation.model == ModelChoice::Outage => {
            return outage_options(&cli, simulation, backoff, budget.params);
        }
        Some(simulation) if cli.simulate => {
            return Ok(Mode::Simulate(simulate_options(&cli, simulation, backoff)));
        }
        _ => {}
    }

    // clap guarantees at least one word when a command is run.
    let (program, args) = command.unwrap_or_default();
    let budget = (cli.budget.budget.take()).map(|name| budget.named(name, store.clone()));
    let breaker = (cli.breaker.breaker.take()).map(|name| circuit.named(name, cli.max_time, store));
    let mut preset_warnings: Vec<String> = catalog.warning().into_iter().collect();
    if let (Some(preset), None) = (&preset, &chosen_for) {
        preset_warnings.extend(crate::preset::check_fits(preset, &program, &args));
    }

    let report = sinks::Settings {
        log_format: cli
            .log_format
            .resolve(std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")),
        log_file: cli.log_file,
        verbosity: match (cli.quiet, cli.verbose) {
            (true, _) => Verbosity::Quiet,
            (_, true) => Verbosity::Verbose,
            _ => Verbosity::Normal,
        },
        metrics: cli.metrics.resolve(),
        preset: preset_line,
        preset_warnings,
        no_preset,
    };
    Ok(Mode::Run(
        Box::new(run::Options {
            backoff,
            attempts: cli.max_attempts,
            policy: Policy::new(cli.success_on, cli.retry_on, cli.fatal_on),
            timeout: cli.timeout,
            kill_after: cli.kill_after,
            max_time: cli.max_time,
            seed: cli.seed,
            countdown: report.countdown(),
            withheld: &sinks::WITHHELD,
            foreground: cli.foreground.into(),
            on_retry: cli.on_retry,
            pipes: crate::run::pipes::Settings {
                stdin: cli.stdin.into(),
                stdin_limit: cli.stdin_limit,
                stdout_once: cli.stdout_once,
                matchers: crate::run::pipes::Matchers {
                    retry_if: cli.retry_if_output,
                    stop_if: cli.stop_if_output,
                    delay_from: cli.delay_from_output,
                    slow_down,
                    transient,
                },
            },
            budget,
            breaker,
            labels,
            slow_down_advice,
            hidden_advice: hidden,
            named_codes,
            program,
            args,
        }),
        Box::new(report),
        cli.provenance,
    ))
}

/// COMMAND's words as a program and its arguments: with `-s`, one script
/// for the shell.
fn program_and_args(
    words: Vec<std::ffi::OsString>,
    shell: bool,
) -> (std::ffi::OsString, Vec<std::ffi::OsString>) {
    let mut words = words.into_iter();
    if shell {
        let script = words.collect::<Vec<_>>().join(std::ffi::OsStr::new(" "));
        crate::platform::shell(script)
    } else {
        (words.next().unwrap_or_default(), words.collect())
    }
}

/// `--plan` and `--simulate` in a retry built without them (the cargo
/// feature `preview`): one line, before any other rule, as the options
/// stay defined (help, the man page and completions are the same in every
/// build).
fn preview_built(cli: &RunArgs) -> Result<(), clap::Error> {
    let mode = match (cli.plan, cli.simulate) {
        (true, _) => "--plan",
        (_, true) => "--simulate",
        _ => return Ok(()),
    };
    if cfg!(feature = "preview") {
        return Ok(());
    }
    Err(usage(format!(
        "{mode}: this retry was built without --plan and --simulate (the cargo feature `preview`)"
    )))
}

/// `--simulate`'s experiment from its flags. Left at their defaults,
/// --base and --cap become the post's (see `simulate::contenders`).
#[cfg(feature = "preview")]
fn simulate_options(cli: &RunArgs, sim: SimulationArgs, backoff: Backoff) -> simulate::Options {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let model = match sim.model {
        ModelChoice::Occ => Model::Occ,
        ModelChoice::Busy => Model::Busy {
            mean_ms: ms(sim.service_time),
            sd_ms: ms(sim.service_sd),
        },
        ModelChoice::Outage => unreachable!("the outage model has options of its own"),
    };
    simulate::Options {
        experiment: Experiment {
            model,
            net: Net {
                mean_ms: ms(sim.net_delay),
                sd_ms: ms(sim.net_sd),
            },
            max_work: sim.max_work,
        },
        contenders: simulate::contenders(
            cli.jitter.single(),
            backoff,
            cli.provenance.is_default(id::BASE) && cli.provenance.is_default(id::CAP),
        ),
        clients: sim.clients.0,
        reps: sim.reps,
        svg: sim.svg,
        seed: cli.seed,
        format: sim.format.into(),
    }
}

/// The most runs (hosts × span / every) `--model outage` simulates per
/// row and repetition: some 20 bytes each in the queue at worst, and
/// seconds of work per ten million.
#[cfg(feature = "preview")]
const MAX_OUTAGE_RUNS: f64 = 1e9;

/// Repetitions of `--model outage` when `--reps` is left at its default
/// (100, for the sweeps' small runs): each of its rows is a whole fleet.
#[cfg(feature = "preview")]
const OUTAGE_REPS: u32 = 3;

/// `--simulate --model outage`'s scenario and rows from its flags and the
/// run's own (-n, --base, --cap, --jitter, --factor, the --budget-* values).
#[cfg(feature = "preview")]
fn outage_options(
    cli: &RunArgs,
    sim: SimulationArgs,
    backoff: Backoff,
    budget: crate::state::budget::Params,
) -> Result<Mode, clap::Error> {
    use crate::simulate::outage::{Options, Scenario, policies};
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    if cli.jitter.single().is_none() {
        return Err(usage(format!(
            "{} compares strategies in --simulate's occ and busy models; --model outage runs one of none, full, equal, decorrelated",
            cli.provenance.name(id::JITTER, &"all")
        )));
    }
    let runs = f64::from(sim.hosts) * sim.span.as_secs_f64() / sim.every.as_secs_f64();
    if runs > MAX_OUTAGE_RUNS {
        return Err(usage(format!(
            "{}, {} and {} make {runs:.0} runs, more than {MAX_OUTAGE_RUNS:.0}: fewer hosts, a longer --every or a shorter --span",
            cli.provenance.name(id::HOSTS, &sim.hosts),
            cli.provenance.name(id::SPAN, &fmt(sim.span)),
            cli.provenance.name(id::EVERY, &fmt(sim.every)),
        )));
    }
    let scenario = Scenario {
        hosts: sim.hosts,
        every: sim.every,
        outage: sim.outage,
        capacity: sim.capacity,
        span: sim.span,
        net: Net {
            mean_ms: ms(sim.net_delay),
            sd_ms: ms(sim.net_sd),
        },
        backoff,
        attempts: cli.max_attempts,
    };
    let reps = match cli.provenance.is_default(id::REPS) {
        true => OUTAGE_REPS,
        false => sim.reps,
    };
    Ok(Mode::Outage(Options {
        policies: policies(
            &scenario,
            budget,
            &sim.breaker_afters.0,
            &sim.breaker_cooldowns.0,
            &sim.breaker_cooldown_maxes.0,
        ),
        scenario,
        reps,
        seed: cli.seed,
        format: sim.format.into(),
    }))
}

/// A code cannot both end the run as a success and be retried or fatal.
fn disjoint_from_success(
    provenance: &Provenance,
    id: &str,
    list: &CodeSet,
    success: &CodeSet,
) -> Result<(), clap::Error> {
    let overlap = list.intersection(success);
    if overlap.is_empty() {
        return Ok(());
    }
    let fix = if provenance.is_default(id::SUCCESS_ON) {
        format!(
            "; leave {overlap} out of {}",
            crate::cli::provenance::long(id)
        )
    } else {
        String::new()
    };
    Err(usage(format!(
        "{} and {} both list {overlap}: a code cannot be both{fix}",
        provenance.name(id, list),
        provenance.name(id::SUCCESS_ON, success),
    )))
}

pub(crate) fn fmt(duration: Duration) -> String {
    humantime::format_duration(duration).to_string()
}

/// A usage error in clap's own shape, so it is printed and exits like one.
pub(crate) fn usage(message: String) -> clap::Error {
    Cli::command().error(ErrorKind::ArgumentConflict, message)
}

#[cfg(test)]
mod tests;
