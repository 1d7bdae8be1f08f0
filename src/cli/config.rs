//! From what clap parsed to what a mode needs, read as a table of
//! contents: the modes that only print, the preset, the groups' settings
//! (each group of `args/` checks its own options in its `resolve`), then
//! the mode. The rest of the program only ever sees valid options of the
//! mode it runs.

use crate::cli::args;
use crate::cli::args::modes::{Asked, Print};
use crate::cli::presets::{Judging, Words, apply_preset};
use crate::cli::provenance::Provenance;
use crate::cli::refuse::usage;
use crate::cli::{Cli, Parsed, RunArgs, id};
use crate::events::PresetLine;
use crate::run;
use crate::sinks;

/// What retry was asked to do, each mode with its own options.
#[derive(Debug)]
pub enum Mode {
    /// A run, its outputs, and where its values came from (for the errors
    /// of what is checked only when the run starts, such as opening
    /// `--log-file`).
    Run(Box<run::Options>, Box<sinks::Settings>, Provenance),
    #[cfg(feature = "preview")]
    Plan(crate::plan::Options),
    #[cfg(feature = "preview")]
    Simulate(crate::simulate::Options),
    /// `--simulate --model outage`.
    #[cfg(feature = "preview")]
    Outage(crate::simulate::outage::Options),
    /// `--simulate --model throttle`.
    #[cfg(feature = "preview")]
    Throttle(crate::simulate::throttle::Options),
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
    /// `--throttle-status NAME`, and where its series go, as the breaker's.
    ThrottleStatus(
        crate::state::throttle::Settings,
        crate::metrics::Settings,
        Provenance,
    ),
}

/// The mode asked for, with its options checked: the modes that only
/// print, the preset, the groups' settings, then the mode.
pub fn from_cli(parsed: Parsed) -> Result<Mode, clap::Error> {
    let (mut cli, simulation) = match parsed {
        Parsed::Lean(run) => (run, None),
        Parsed::Full(Cli {
            run, simulation, ..
        }) => (run, Some(simulation)),
    };
    // The modes that only print come first, before the run's rules (as
    // ripgrep decides its special modes): an environment set up for jobs
    // (`RETRY_BASE=10s RETRY_CAP=1s`) must not break a shell profile's
    // `retry --completions bash`. Each checks its own options only.
    // `--throttle-status` is the throttle's (parsed in full only); clap
    // lets one mode at most be given.
    let throttle_status = cli.throttle.throttle_status.take();
    let asked = match throttle_status.map(|name| Asked::Print(Print::ThrottleStatus(name))) {
        Some(asked) => asked,
        None => cli.modes.resolve()?,
    };
    let asked = match asked {
        Asked::Print(print) => return printing(cli, print),
        asked => asked,
    };
    let simulate = asked == Asked::Simulate;
    // A preset named, or looked up by the program it wraps: only a run or
    // a plan of a command reads the data and the user's file.
    let command = cli.programs.resolve(simulate);
    let name = cli.programs.preset.take();
    let catalog = crate::preset::catalog(name.as_deref(), command.is_some());
    let words_of = (command.as_ref()).map(|c| (c.program.as_os_str(), c.args.as_slice()));
    let chosen = crate::preset::resolve(&catalog, name.as_deref(), words_of, &PLATFORM_FILES)
        .map_err(usage)?;
    let words = match &chosen.preset {
        Some(preset) => apply_preset(&mut cli, preset, judging(&chosen)).map_err(usage)?,
        None => Words::default(),
    };
    // Each group checks its own options; the first refusal is said.
    let resolved = cli.resolve(simulate)?;
    // `Parsed::Lean` is never a plan or a simulation.
    match (asked, simulation) {
        #[cfg(feature = "preview")]
        (Asked::Plan, Some(simulation)) => Ok(plan(&cli, resolved, &chosen, simulation, command)),
        #[cfg(feature = "preview")]
        (Asked::Simulate, Some(simulation)) => {
            use crate::cli::args::simulation::Simulation;
            let (budget, breaker) = (resolved.budget.params, resolved.circuit.params);
            Ok(
                match simulation.resolve(&cli, resolved.retries.backoff, budget, breaker)? {
                    Simulation::Sweep(options) => Mode::Simulate(options),
                    Simulation::Outage(options) => Mode::Outage(options),
                    Simulation::Throttle(options) => Mode::Throttle(options),
                },
            )
        }
        _ => run(cli, resolved, words, chosen, command),
    }
}

/// The modes that only print, each from its own options.
fn printing(cli: RunArgs, print: Print) -> Result<Mode, clap::Error> {
    let provenance = &cli.provenance;
    Ok(match print {
        Print::Completions(shell) => Mode::Completions(shell),
        Print::Man => Mode::Man,
        Print::Presets(name) => presets(name.as_deref(), cli.logging.verbose).map_err(usage)?,
        Print::BudgetStatus(name) => {
            let store = cli.store.resolve(provenance)?;
            let budget = cli.budget.resolve(provenance)?;
            Mode::BudgetStatus(budget.named(name, store))
        }
        Print::BreakerStatus(name) => {
            let circuit = cli.breaker.resolve(provenance)?;
            let store = cli.store.resolve(provenance)?;
            // The circuit's series are the breaker's, of no job.
            let metrics = crate::metrics::Settings {
                job: None,
                ..cli.metrics.resolve()
            };
            let circuit = circuit.named(name, cli.process.max_time, store);
            Mode::BreakerStatus(circuit, metrics, cli.provenance)
        }
        Print::ThrottleStatus(name) => {
            let throttle = cli.throttle.resolve(provenance)?;
            let store = cli.store.resolve(provenance)?;
            // The throttle's series are its own, of no job.
            let metrics = crate::metrics::Settings {
                job: None,
                ..cli.metrics.resolve()
            };
            let throttle = throttle.named(name, store, crate::state::breaker::EXIT_OPEN);
            Mode::ThrottleStatus(throttle, metrics, cli.provenance)
        }
    })
}

/// `--presets [NAME]`: a table to read; the flags of one preset, or of
/// all with -v.
fn presets(name: Option<&str>, verbose: bool) -> Result<Mode, String> {
    let catalog = crate::preset::Catalog::load();
    let presets = catalog.presets();
    let listing = match (name, verbose) {
        (Some(name), _) => catalog.find(&presets, name)?.as_flags(),
        (None, true) => crate::preset::listing(&presets),
        (None, false) => crate::preset::table(&presets),
    };
    Ok(Mode::Presets {
        listing,
        warning: catalog.warning(),
    })
}

/// A preset chosen by the program's call judges it on evidence only.
fn judging(chosen: &crate::preset::Resolved<'_>) -> Judging {
    match chosen.chosen_for {
        Some(_) => Judging::Chosen,
        None => Judging::Named,
    }
}

/// What -v, --plan and the JSON log say of the preset that judges the run.
fn preset_line(
    chosen: &crate::preset::Resolved<'_>,
    provenance: &Provenance,
) -> Option<PresetLine> {
    let preset = chosen.preset.as_ref()?;
    Some(PresetLine {
        name: preset.name.to_owned(),
        chosen: chosen.chosen_for.is_some(),
        why: chosen
            .chosen_for
            .clone()
            .unwrap_or_else(|| format!("named by {}", provenance.name(id::PRESET, &preset.name))),
    })
}

/// `--plan`: the sleeps a run would take, for the command it names.
#[cfg(feature = "preview")]
fn plan(
    cli: &RunArgs,
    resolved: args::Settings,
    chosen: &crate::preset::Resolved<'_>,
    simulation: crate::cli::SimulationArgs,
    command: Option<run::Command>,
) -> Mode {
    let plan_command = command;
    let command = (plan_command.as_ref())
        .map(|c| crate::sinks::name::CommandName::new(&c.program, &c.args).full);
    // A run that can class a failure throttled sleeps on --throttle-base
    // after it: the plan shows that schedule too.
    let throttles = cli.pipes.throttle_if_output.is_some()
        || cli.pipes.delay_from_output.is_some()
        || cli.provenance.given(id::THROTTLE_BASE)
        || cli.throttle.throttle.is_some();
    let seed = resolved.limits.seed;
    let splay = resolved.limits.splay.map(|splay| {
        let fixed = match splay.stable {
            true => command.is_some(),
            false => seed.is_some(),
        };
        let job = (plan_command.as_ref())
            .map(|c| c.words())
            .into_iter()
            .flatten();
        crate::plan::Splay {
            max: splay.max,
            stable: splay.stable,
            delay: fixed.then(|| splay.delay(seed, job)),
        }
    });
    Mode::Plan(crate::plan::Options {
        splay,
        preset: preset_line(chosen, &cli.provenance),
        backoff: resolved.retries.backoff,
        throttle_base: throttles.then_some(resolved.retries.throttle_base),
        attempts: resolved.retries.attempts,
        seed: resolved.limits.seed,
        format: simulation.format.into(),
        max_time: resolved.limits.max_time,
        command,
    })
}

/// A run: its options, its outputs', and where their values came from;
/// the hooks' group checked last, as it is told the command's name.
fn run(
    cli: RunArgs,
    resolved: args::Settings,
    words: Words,
    chosen: crate::preset::Resolved<'_>,
    command: Option<run::Command>,
) -> Result<Mode, clap::Error> {
    let args::Settings {
        retries,
        policy,
        limits,
        circuit,
        throttle: adaptive,
        store,
        budget,
    } = resolved;
    let Words {
        labels,
        throttle,
        advice: throttle_advice,
        transient,
        hidden,
        named_codes,
    } = words;
    let hooks = cli.hooks.resolve(&cli.provenance, command.as_ref())?;
    let pipes = cli.pipes.resolve(transient, hooks.wants_tail());
    let throttled_by = pipes.matchers.throttle_if.as_ref().map(|regex| {
        crate::events::Evidence::Line(throttle.unwrap_or_else(|| users_throttle(regex)))
    });
    let budget = (cli.budget.budget).map(|name| budget.named(name, store.clone()));
    let skipped = circuit.exit_code();
    let adaptive = (cli.throttle.throttle).map(|name| adaptive.named(name, store.clone(), skipped));
    let breaker = (cli.breaker.breaker).map(|name| circuit.named(name, limits.max_time, store));
    let report = sinks::Settings {
        log: cli.logging.resolve(),
        metrics: cli.metrics.resolve(),
        preset: preset_line(&chosen, &cli.provenance),
        preset_warnings: chosen.warnings,
        no_preset: chosen.no_preset,
    };
    // clap guarantees at least one word when a command is run.
    let command = command.unwrap_or_default();
    let options = run::Options {
        retries,
        policy,
        limits,
        countdown: report.countdown(),
        withheld: &sinks::WITHHELD,
        hooks,
        pipes,
        budget,
        breaker,
        throttle: adaptive,
        labels,
        throttled_by,
        throttle_advice,
        hidden_advice: hidden,
        named_codes,
        command,
    };
    Ok(Mode::Run(
        Box::new(options),
        Box::new(report),
        cli.provenance,
    ))
}

/// The user's `--throttle-if-output` as a throttled retry's line names
/// it: the flag and its regex, escaped and cut as a quoted line is.
fn users_throttle(regex: &regex::bytes::Regex) -> std::sync::Arc<str> {
    let shown = crate::escape::control(regex.as_str());
    format!("--throttle-if-output {}", crate::escape::cut(&shown, 60)).into()
}

/// How the preset lookup finds the file that will run, as the spawn does.
const PLATFORM_FILES: crate::preset::claims::Files<'static> = crate::preset::claims::Files {
    find: &crate::platform::spawn::program_file,
    same: &crate::platform::owner::same_path,
};

#[cfg(test)]
mod tests;
