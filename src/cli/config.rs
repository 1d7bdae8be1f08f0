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
use crate::run::log::Verbosity;
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
    /// A run, and where its values came from (for the errors of what is
    /// checked only when the run starts, such as opening `--log-file`).
    Run(Box<run::Options>, Provenance),
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
    } else if let Some(name) = &cli.budget_status {
        let store = store(&cli)?;
        return Ok(Mode::BudgetStatus(budget_settings(
            &cli,
            budget_params(&cli)?,
            store,
            name.clone(),
        )));
    } else if let Some(name) = &cli.breaker_status {
        if cli.breaker_cooldown == Some(Duration::ZERO) {
            return Err(usage(breaker_cooldown_zero(&cli)));
        }
        if let Some(message) = breaker_max_short(&cli) {
            return Err(usage(message));
        }
        let store = store(&cli)?;
        let metrics = crate::metrics::Settings {
            job: None,
            dir: cli.metrics_dir.clone(),
            statsd: cli.statsd.clone(),
            statsd_tags: cli.statsd_tags,
        };
        return Ok(Mode::BreakerStatus(
            breaker_settings(&cli, store, name.clone()),
            metrics,
            cli.provenance.clone(),
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
    let (preset, chosen_for) = match (cli.preset.as_deref(), &command) {
        (Some(crate::preset::NONE), _) | (None, None) => (None, None),
        (Some(name), _) => (Some(catalog.find(&presets, name).map_err(usage)?), None),
        (None, Some((program, args))) => {
            match crate::preset::choose(&presets, program, args).map_err(usage)? {
                Some(chosen) => (Some(chosen.preset.clone()), Some(chosen.why)),
                None => (None, None),
            }
        }
    };
    let words = match &preset {
        Some(preset) => crate::cli::apply_preset(&mut cli, preset).map_err(usage)?,
        None => Default::default(),
    };
    let crate::cli::presets::Words { labels, slow_down } = words;
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
    if cli.breaker_cooldown == Some(Duration::ZERO) {
        return Err(usage(breaker_cooldown_zero(&cli)));
    }
    if let Some(message) = breaker_max_short(&cli) {
        return Err(usage(message));
    }
    let store = store(&cli)?;

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
    let budget_params = budget_params(&cli)?;
    // What -v, --plan and the JSON log say of the preset that judges the run.
    let preset_line = preset
        .as_ref()
        .map(|preset| crate::run::events::PresetLine {
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
                .map(|(program, args)| crate::run::name::CommandName::new(program, args).full);
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
            return outage_options(&cli, simulation, backoff, budget_params);
        }
        Some(simulation) if cli.simulate => {
            return Ok(Mode::Simulate(simulate_options(&cli, simulation, backoff)));
        }
        _ => {}
    }

    // clap guarantees at least one word when a command is run.
    let (program, args) = command.unwrap_or_default();
    let budget =
        (cli.budget.clone()).map(|name| budget_settings(&cli, budget_params, store.clone(), name));
    let breaker = (cli.breaker.clone()).map(|name| breaker_settings(&cli, store.clone(), name));
    let mut preset_warnings: Vec<String> = catalog.warning().into_iter().collect();
    if let (Some(preset), None) = (&preset, &chosen_for) {
        preset_warnings.extend(crate::preset::check_fits(preset, &program, &args));
    }

    Ok(Mode::Run(
        Box::new(run::Options {
            backoff,
            attempts: cli.max_attempts,
            policy: Policy::new(cli.success_on, cli.retry_on, cli.fatal_on),
            timeout: cli.timeout,
            kill_after: cli.kill_after,
            max_time: cli.max_time,
            seed: cli.seed,
            log_format: cli
                .log_format
                .resolve(std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")),
            log_file: cli.log_file,
            verbosity: match (cli.quiet, cli.verbose) {
                (true, _) => Verbosity::Quiet,
                (_, true) => Verbosity::Verbose,
                _ => Verbosity::Normal,
            },
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
                },
            },
            budget,
            breaker,
            metrics: crate::metrics::Settings {
                job: cli.job,
                dir: cli.metrics_dir,
                statsd: cli.statsd,
                statsd_tags: cli.statsd_tags,
            },
            preset: preset_line,
            preset_warnings,
            labels,
            slow_down_advice,
            program,
            args,
        }),
        cli.provenance,
    ))
}

/// `--store` (or `--budget-store`) and `--store-timeout` (or
/// `--budget-timeout`), for the budget, the breaker and their status.
fn store(cli: &RunArgs) -> Result<(crate::state::store::Store, Duration), clap::Error> {
    let (store_timeout, timeout_id) = spelled(
        &cli.provenance,
        (cli.store_timeout, id::STORE_TIMEOUT),
        (cli.budget_timeout, id::BUDGET_TIMEOUT),
    );
    if store_timeout == Some(Duration::ZERO) {
        return Err(usage(format!(
            "{} would give up on the store before it could answer; leave it out for {} ms",
            cli.provenance.name(timeout_id, &"0s"),
            crate::duration::millis(crate::state::store::DEFAULT_TIMEOUT)
        )));
    }
    let (store, _) = spelled(
        &cli.provenance,
        (cli.store.clone(), id::STORE),
        (cli.budget_store.clone(), id::BUDGET_STORE),
    );
    let timeout = store_timeout.unwrap_or(crate::state::store::DEFAULT_TIMEOUT);
    Ok((store.unwrap_or_default(), timeout))
}

/// The budget called `name`.
fn budget_settings(
    cli: &RunArgs,
    params: crate::state::budget::Params,
    (store, timeout): (crate::state::store::Store, Duration),
    name: String,
) -> crate::state::budget::Settings {
    crate::state::budget::Settings {
        name,
        params,
        size_given: cli.provenance.given(id::BUDGET_TOKENS)
            || cli.provenance.given(id::BUDGET_REFILL),
        store,
        timeout,
    }
}

/// A `--breaker-cooldown` of zero, refused for a run and the breaker's status.
/// `--breaker-cooldown-max` below the first cooldown (given, or the
/// default): the cooldown could not grow to it.
fn breaker_max_short(cli: &RunArgs) -> Option<String> {
    let max = cli.breaker_cooldown_max?;
    let cooldown = cli
        .breaker_cooldown
        .unwrap_or(crate::state::breaker::DEFAULT_COOLDOWN);
    (max < cooldown).then(|| {
        let (first, fix) = match cli.breaker_cooldown {
            Some(_) => (
                cli.provenance.name(id::BREAKER_COOLDOWN, &fmt(cooldown)),
                String::new(),
            ),
            None => (
                format!("the default --breaker-cooldown, {}", fmt(cooldown)),
                format!("; set --breaker-cooldown-max to {} or more", fmt(cooldown)),
            ),
        };
        format!(
            "{} is below {first}: the longest cooldown must be at least the first{fix}",
            cli.provenance.name(id::BREAKER_COOLDOWN_MAX, &fmt(max)),
        )
    })
}

fn breaker_cooldown_zero(cli: &RunArgs) -> String {
    format!(
        "{} would close the circuit as soon as it opens; give a cooldown such as 1m",
        cli.provenance.name(id::BREAKER_COOLDOWN, &"0s")
    )
}

/// The circuit breaker called `name`.
fn breaker_settings(
    cli: &RunArgs,
    (store, timeout): (crate::state::store::Store, Duration),
    name: String,
) -> crate::state::breaker::Settings {
    crate::state::breaker::Settings {
        name,
        params: crate::state::breaker::Params {
            after: cli
                .breaker_after
                .unwrap_or(crate::state::breaker::DEFAULT_AFTER),
            cooldown: cli
                .breaker_cooldown
                .unwrap_or(crate::state::breaker::DEFAULT_COOLDOWN),
            max: cli
                .breaker_cooldown_max
                .unwrap_or(crate::state::breaker::DEFAULT_COOLDOWN_MAX),
        },
        lease: crate::state::breaker::lease(cli.max_time),
        exit_code: cli
            .breaker_exit_code
            .map_or(crate::state::breaker::EXIT_OPEN, i32::from),
        store,
        timeout,
    }
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

/// An option given under its name or its old spelling (`--store`,
/// `--budget-store`): typed wins over a variable, and the name over the old
/// spelling. The value, and the id it came from (for messages).
fn spelled<T>(
    provenance: &Provenance,
    name: (Option<T>, &'static str),
    old: (Option<T>, &'static str),
) -> (Option<T>, &'static str) {
    let typed_old = provenance.typed(old.1) && !provenance.typed(name.1);
    match (name, old) {
        ((Some(value), id), _) if !typed_old => (Some(value), id),
        (_, (Some(value), id)) => (Some(value), id),
        ((value, id), _) => (value, id),
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

/// `--budget-tokens`, `--budget-cost`, `--budget-refill`: a budget that
/// could never pay for one retry is a mistake, not a way to turn retries off.
fn budget_params(cli: &RunArgs) -> Result<crate::state::budget::Params, clap::Error> {
    if cli.budget_tokens < cli.budget_cost {
        return Err(usage(format!(
            "{} is below {}: the budget could never pay for a retry",
            cli.provenance.name(id::BUDGET_TOKENS, &cli.budget_tokens),
            cli.provenance.name(id::BUDGET_COST, &cli.budget_cost),
        )));
    }
    Ok(crate::state::budget::Params {
        tokens: cli.budget_tokens,
        cost: cli.budget_cost,
        refill: cli.budget_refill,
    })
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

fn fmt(duration: Duration) -> String {
    humantime::format_duration(duration).to_string()
}

/// A usage error in clap's own shape, so it is printed and exits like one.
pub(crate) fn usage(message: String) -> clap::Error {
    Cli::command().error(ErrorKind::ArgumentConflict, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options of a run (every case here runs a command or fails).
    fn config(args: &[&str]) -> Result<run::Options, String> {
        let args: Vec<_> = ["retry"].iter().chain(args).map(Into::into).collect();
        let parsed = crate::cli::parse_from(&args, crate::cli::AfterParsing::Free)
            .map_err(|e| e.to_string())?;
        match from_cli(parsed).map_err(|e| e.to_string())? {
            Mode::Run(options, _) => Ok(*options),
            other => Err(format!("not a run: {other:?}")),
        }
    }

    /// The breaker's defaults are no clap defaults (start-up parses nothing
    /// for them): its help says them, and they are what a run gets.
    #[test]
    fn the_breakers_defaults_are_the_ones_its_help_says() {
        use crate::state::breaker::{DEFAULT_AFTER, DEFAULT_COOLDOWN};
        let options = config(&["--breaker", "ci", "true"]).unwrap();
        let params = options.breaker.clone().unwrap().params;
        assert_eq!(
            (params.after, params.cooldown),
            (DEFAULT_AFTER, DEFAULT_COOLDOWN)
        );
        let command = Cli::command();
        let help = |id: &str| {
            let arg = command.get_arguments().find(|a| a.get_id() == id).unwrap();
            arg.get_long_help().or(arg.get_help()).unwrap().to_string()
        };
        assert!(help(id::BREAKER_AFTER).ends_with(&format!("[default: {DEFAULT_AFTER}]")));
        assert!(
            help(id::BREAKER_COOLDOWN).ends_with(&format!("[default: {}]", fmt(DEFAULT_COOLDOWN)))
        );
        let max = fmt(crate::state::breaker::DEFAULT_COOLDOWN_MAX);
        assert!(help(id::BREAKER_COOLDOWN_MAX).ends_with(&format!("[default: {max}]")));
        use crate::state::breaker::EXIT_OPEN;
        assert_eq!(options.breaker.unwrap().exit_code, EXIT_OPEN);
        assert!(help(id::BREAKER_EXIT_CODE).ends_with(&format!("[default: {EXIT_OPEN}]")));
        let options = config(&["--breaker", "ci", "--breaker-exit-code", "250", "true"]).unwrap();
        assert_eq!(options.breaker.unwrap().exit_code, 250);
    }

    #[test]
    fn a_breaker_cooldown_max_below_the_cooldown_is_refused() {
        let err =
            config(&["--breaker", "ci", "--breaker-cooldown-max", "10s", "true"]).unwrap_err();
        assert!(
            err.contains("--breaker-cooldown-max 10s") && err.contains("30s"),
            "{err}"
        );
        assert!(
            err.contains("; set --breaker-cooldown-max to 30s or more"),
            "{err}"
        );
        let err = config(&[
            "--breaker-status",
            "ci",
            "--breaker-cooldown",
            "1m",
            "--breaker-cooldown-max",
            "30s",
        ])
        .unwrap_err();
        assert!(
            err.contains("--breaker-cooldown-max 30s") && err.contains("--breaker-cooldown 1m"),
            "{err}"
        );
        let options =
            config(&["--breaker", "ci", "--breaker-cooldown-max", "30s", "true"]).unwrap();
        let params = options.breaker.unwrap().params;
        assert_eq!(
            (params.max, params.cap()),
            (Duration::from_secs(30), Duration::from_secs(30))
        );
        // Not given: the default, or the cooldown if that is longer.
        let options = config(&["--breaker", "ci", "--breaker-cooldown", "5m", "true"]).unwrap();
        let params = options.breaker.unwrap().params;
        assert_eq!(params.max, crate::state::breaker::DEFAULT_COOLDOWN_MAX);
        assert_eq!(params.cap(), Duration::from_secs(300));
    }

    #[test]
    fn cap_below_base_is_refused() {
        let err = config(&["--base", "2s", "--cap", "1s", "true"]).unwrap_err();
        assert!(
            err.contains("--cap 1s") && err.contains("--base 2s"),
            "{err}"
        );
        assert!(config(&["--base", "1s", "--cap", "1s", "true"]).is_ok());
    }

    #[test]
    fn overlapping_lists_are_refused() {
        let err = config(&["--retry-on", "0-3", "true"]).unwrap_err();
        assert!(
            err.contains("--retry-on 0-3") && err.contains("both list 0"),
            "{err}"
        );
        let err = config(&["--fatal-on", "2", "--success-on", "0,2", "true"]).unwrap_err();
        assert!(err.contains("both list 2"), "{err}");
    }

    #[test]
    fn zero_limits_are_refused() {
        assert!(
            config(&["--timeout", "0s", "true"])
                .unwrap_err()
                .contains("--timeout 0s")
        );
        assert!(
            config(&["--max-time", "0ms", "true"])
                .unwrap_err()
                .contains("--max-time 0s")
        );
        let err = config(&["--budget", "b", "--budget-timeout", "0ms", "true"]).unwrap_err();
        assert!(
            err.contains("`--budget-timeout 0s` would give up on the store before it could answer"),
            "{err}"
        );
    }

    #[test]
    #[cfg(unix)] // Unix paths, programs or errno wording
    fn shell_mode_joins_words_into_one_script() {
        let c = config(&["-s", "echo", "a|", "wc"]).unwrap();
        assert_eq!(c.program, "/bin/sh");
        assert_eq!(c.args, ["-c", "echo a| wc"]);
        let c = config(&["echo", "a|", "wc"]).unwrap();
        assert_eq!((c.program.as_os_str(), c.args.len()), ("echo".as_ref(), 2));
    }

    #[test]
    fn jitter_all_is_only_for_simulate() {
        let err = config(&["--jitter", "all", "true"]).unwrap_err();
        assert!(
            err.contains("--jitter all") && err.contains("--simulate"),
            "{err}"
        );
        assert!(config(&["--jitter", "all", "--plan"]).is_err());
    }

    #[test]
    fn stdin_limit_takes_sizes_and_defaults_to_1_gib() {
        let limit = |args: &[&str]| config(args).map(|c| c.pipes.stdin_limit.bytes());
        assert_eq!(limit(&["true"]), Ok(1 << 30));
        assert_eq!(limit(&["--stdin-limit", "64MiB", "true"]), Ok(64 << 20));
        let err = limit(&["--stdin-limit", "64M", "true"]).unwrap_err();
        assert!(err.contains("did you mean `64MiB` or `64MB`?"), "{err}");
    }

    #[test]
    fn a_preset_sets_the_rules_not_given_rule_by_rule() {
        let curl = config(&["--preset", "curl", "curl", "-fsS", "x"]).unwrap();
        let policy = curl.policy;
        assert_eq!(
            policy.retry.to_string(),
            "5-7,12,16,18,22,28,35,52,55-56,92,95-96,124-125"
        );
        assert!(policy.fatal.contains(3) && policy.fatal.contains(60));
        assert!(curl.pipes.matchers.stop_if.is_some() && curl.pipes.matchers.delay_from.is_some());
        let line = curl.preset.unwrap();
        assert_eq!((line.name.as_str(), line.chosen), ("curl", false));
        assert_eq!(line.why, "named by `--preset curl`");
        // A flag wins for its own rule only.
        let mixed = config(&["--retry-on", "1-100", "--preset", "curl", "curl", "x"]).unwrap();
        assert_eq!(mixed.policy.retry.to_string(), "1-100");
        assert_eq!(mixed.policy.fatal, policy.fatal);
        let stop = config(&["--stop-if-output", "nope", "--preset", "curl", "curl"]).unwrap();
        let stop_if = stop.pipes.matchers.stop_if.unwrap();
        assert_eq!(stop_if.as_str(), "nope");
        assert!(stop.pipes.matchers.delay_from.is_some());
        // With --preset none nothing changes, whatever the program.
        let plain = config(&["--preset", "none", "curl", "x"]).unwrap();
        assert!(plain.policy.fatal.is_empty() && plain.pipes.matchers.stop_if.is_none());
        assert!(plain.preset.is_none());
        // A cross-field error says which value the preset set.
        let error = config(&["--success-on", "0,22", "--preset", "curl", "curl"]).unwrap_err();
        assert!(
            error.contains("124-125` (from --preset curl) and `--success-on 0,22` both list 22"),
            "{error}"
        );
    }

    #[test]
    fn a_preset_chosen_by_the_program_judges_as_the_named_one() {
        // What a run is judged by, flags and output rules alike.
        let judged = |options: &run::Options| {
            format!(
                "{:?} {:?} {:?} {:?} {:?}",
                options.policy,
                options.pipes.matchers.retry_if.as_ref().map(|r| r.as_str()),
                options.pipes.matchers.stop_if.as_ref().map(|r| r.as_str()),
                options
                    .pipes
                    .matchers
                    .delay_from
                    .as_ref()
                    .map(|r| r.as_str()),
                options.labels,
            )
        };
        for (looked_up, named) in [
            (
                vec!["curl", "-fsS", "x"],
                vec!["--preset", "curl", "curl", "-fsS", "x"],
            ),
            (
                vec!["--retry-on", "1-100", "sudo", "git", "fetch"],
                vec![
                    "--retry-on",
                    "1-100",
                    "--preset",
                    "git",
                    "sudo",
                    "git",
                    "fetch",
                ],
            ),
            (
                vec!["--stop-if-output", "nope", "apt-get", "install", "x"],
                vec![
                    "--stop-if-output",
                    "nope",
                    "--preset",
                    "apt",
                    "apt-get",
                    "install",
                    "x",
                ],
            ),
        ] {
            let (chosen, given) = (config(&looked_up).unwrap(), config(&named).unwrap());
            assert_eq!(judged(&chosen), judged(&given), "{looked_up:?}");
            let line = chosen.preset.unwrap();
            assert!(
                line.chosen && line.why.starts_with("chosen for `"),
                "{line:?}"
            );
        }
        // A cross-field error names the chosen preset as it names a named one.
        let error = config(&["--success-on", "0,22", "curl"]).unwrap_err();
        assert!(error.contains("(from --preset curl)"), "{error}");
        // Calls that pass on another program's status keep retry's defaults.
        for line in [
            &["npm", "test"][..],
            &["ssh", "h", "make"],
            &["git", "status"],
        ] {
            let plain = config(line).unwrap();
            assert!(
                plain.preset.is_none() && plain.policy.fatal.is_empty(),
                "{line:?}"
            );
        }
    }

    #[test]
    fn preset_none_reads_no_data() {
        let reads = || crate::preset::READS.with(std::cell::Cell::get);
        let before = reads();
        config(&["--preset", "none", "-n", "2", "curl", "-fsS", "x"]).unwrap();
        assert_eq!(reads(), before, "--preset none read the presets");
        config(&["curl"]).unwrap();
        assert!(reads() > before);
    }

    #[test]
    fn a_program_no_preset_names_reads_no_data() {
        let reads = || crate::preset::READS.with(std::cell::Cell::get);
        let before = reads();
        // `sh` is a part of `ssh`, not a word; `make` is a word of a
        // comment only, and `true` not in the data at all.
        for line in [&["true"][..], &["sh", "-c", "x"], &["env", "A=1", "make"]] {
            let plain = config(line).unwrap();
            assert!(plain.preset.is_none(), "{line:?}");
        }
        assert_eq!(
            reads(),
            before,
            "a run of no preset's program read the data"
        );
        // Through a wrapper, a program that one names is still chosen.
        let chosen = config(&["env", "A=1", "curl", "-fsS", "x"]).unwrap();
        assert!(chosen.preset.is_some());
        assert!(reads() > before);
    }

    /// `retry true` as parsed, before any preset.
    fn plain_run_args() -> RunArgs {
        let args = ["retry".into(), "true".into()];
        match crate::cli::parse_from(&args, crate::cli::AfterParsing::Free).unwrap() {
            Parsed::Lean(run) => run,
            Parsed::Full(cli) => cli.run,
        }
    }

    #[test]
    fn every_builtin_preset_passes_the_flags_own_parsers() {
        for preset in crate::preset::builtin() {
            let mut run = plain_run_args();
            crate::cli::apply_preset(&mut run, &preset).unwrap();
            // And the result passes the cross-field rules.
            let args = [
                "--preset",
                preset.name,
                preset.programs.first().copied().unwrap_or("x"),
            ];
            config(&args).unwrap_or_else(|e| panic!("[{}]: {e}", preset.name));
        }
        // Out of range on every platform (Windows: past 32 bits).
        let bad = crate::preset::parse("[x]\nretry-on = 1-0x100000000\nsource = s\n").unwrap();
        let mut run = plain_run_args();
        let error = crate::cli::apply_preset(&mut run, &bad[0]).unwrap_err();
        assert!(
            error.starts_with("--preset x: --retry-on 1-0x100000000: exit code"),
            "{error}"
        );
    }

    #[test]
    fn quiet_and_verbose_choose_verbosity() {
        assert_eq!(config(&["-q", "true"]).unwrap().verbosity, Verbosity::Quiet);
        assert_eq!(
            config(&["-v", "true"]).unwrap().verbosity,
            Verbosity::Verbose
        );
        assert!(config(&["-q", "-v", "true"]).is_err());
    }
}
