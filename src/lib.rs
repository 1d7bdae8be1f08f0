//! `retry`: rerun a failing command with exponential backoff and jitter.
//!
//! The layout shows the architecture, top floor first (ARCHITECTURE.md
//! has a row for every file): each module imports only those listed after
//! it.
//! - `cli/`: the command line (flags, validation into a `Mode` with its
//!   options, usage errors, completions and the man page), and `preset/`,
//!   the presets it applies as flags;
//! - `plan/`, `simulate/` and `table`: the modes that only print (the
//!   cargo feature `preview`, on by default);
//! - `sinks/`: the reporter, which hands each event to every output asked
//!   for (the log lines, GitHub's step summary and outputs, the metrics,
//!   the spans);
//! - `metrics/`: the library of the Prometheus textfile and StatsD;
//! - `run/`: everything that runs a command (the attempt loop, the child's
//!   supervisor, pipes), told as events;
//! - `trace/`: the library of OpenTelemetry's protocol, knowing nothing of
//!   runs;
//! - `state/`: what outlives a run (the budget, the breaker, the throttle,
//!   their stores);
//! - the rules all of these share, one file each: `events` (what happened,
//!   stamped once, the vocabulary of `run/` and the outputs), `policy`
//!   (which exit codes retry), `codes`, `status`;
//! - `platform/`: every call to the OS about processes, signals and files,
//!   and the one wait for a child, a signal or a deadline;
//! - the leaves, which import nothing of the crate: `strategy` (backoff and
//!   jitter), `escape` (text retry did not write, as it shows it),
//!   `duration`, `size`, `os_error`, and `arena`, the binary's allocator
//!   (start-up speed).
//!
//! `fuzzing` is for `fuzz/` only.

pub mod arena;
mod cli;
mod codes;
mod duration;
mod escape;
mod events;
mod metrics;
mod os_error;
#[cfg(feature = "preview")]
mod plan;
mod platform;
mod policy;
mod preset;
mod run;
#[cfg(feature = "preview")]
mod simulate;
mod sinks;
mod size;
mod state;
mod status;
mod strategy;
#[cfg(feature = "preview")]
mod table;
mod trace;
mod url;

/// For the binary's C `main` (src/main.rs).
pub use cli::AfterParsing;
pub use platform::start;

use std::io::Write;

use crate::cli::config::Mode;
use crate::cli::{generate, usage};
use crate::platform::signals;
use crate::run::{Host, supervisor};
use crate::sinks::log;

/// The whole program: parse `args` (the program name first), validate,
/// then run the chosen mode; returns the exit status. `after_parsing`:
/// whether clap's parser is freed (`Leak` only in a process that exits
/// after this call).
pub fn main(args: Vec<std::ffi::OsString>, after_parsing: AfterParsing) -> u8 {
    let mode = match cli::parse_from(&args, after_parsing).and_then(cli::config::from_cli) {
        Ok(mode) => mode,
        Err(error) => return usage::exit(&error, &args),
    };
    match &mode {
        Mode::Run(options, report, provenance) => {
            // One id for the run: its log lines carry it, and so does every
            // process it starts (`RETRY_RUN_IDS`), so the two can be matched.
            let id = run::lineage::Lineage::unique_id();
            // Read before anything runs: a malformed endpoint is bad usage.
            let tracing = match trace::Settings::from_env() {
                Ok(settings) => settings.map(|settings| settings.with_argv(&args)),
                Err(line) => {
                    let _ = writeln!(std::io::stderr(), "{line}");
                    return 2;
                }
            };
            let named = |id| provenance.option(id);
            let to = match report.open(&named(cli::id::LOG_FILE), &named(cli::id::METRICS_DIR)) {
                Ok(to) => to,
                Err(line) => {
                    let _ = writeln!(std::io::stderr(), "{line}");
                    // Bad usage, as for any other bad value: nothing has run.
                    return 2;
                }
            };
            match run_command(options, report, to, id, tracing) {
                run::Exit::Code(code) => platform::exit_code(code),
                // Everything is cleaned up: die as the command would have.
                run::Exit::Signal(signal) => platform::die_by(signal),
            }
        }
        // A closed stdout is /dev/null by now (`platform::start`): printing
        // would succeed and show nothing.
        _ if platform::stdout_was_closed() => usage::stdout_closed(),
        #[cfg(feature = "preview")]
        Mode::Plan(options) => plan::print(options),
        #[cfg(feature = "preview")]
        Mode::Simulate(options) => simulate::run(options),
        #[cfg(feature = "preview")]
        Mode::Outage(options) => simulate::outage::run(options),
        #[cfg(feature = "preview")]
        Mode::Throttle(options) => simulate::throttle::run(options),
        Mode::Completions(shell) => print(&generate::completions(*shell)),
        Mode::Man => print(&generate::man()),
        Mode::Presets { listing, warning } => {
            if let Some(warning) = warning {
                let _ = writeln!(std::io::stderr(), "retry: warning: {warning}");
            }
            print(listing.as_bytes())
        }
        Mode::BudgetStatus(settings) => crate::state::budget::print_status(settings),
        Mode::BreakerStatus(settings, sinks, provenance) => {
            // A directory that cannot take the file is bad usage, as for a run.
            if let Err(line) = sinks.check_dir(&provenance.option(cli::id::METRICS_DIR)) {
                let _ = writeln!(std::io::stderr(), "{line}");
                return 2;
            }
            let (code, circuit) = crate::state::breaker::print_status(settings);
            let warning = circuit.and_then(|c| metrics::breaker_status(sinks, &settings.name, &c));
            if let Some(warning) = warning {
                let _ = writeln!(std::io::stderr(), "retry: warning: {warning}");
            }
            code
        }
        Mode::ThrottleStatus(settings, sinks, provenance) => {
            // As for the breaker's status.
            if let Err(line) = sinks.check_dir(&provenance.option(cli::id::METRICS_DIR)) {
                let _ = writeln!(std::io::stderr(), "{line}");
                return 2;
            }
            let (code, seen) = crate::state::throttle::print_status(settings);
            let warning = seen.and_then(|s| metrics::throttle_status(sinks, &settings.name, &s));
            if let Some(warning) = warning {
                let _ = writeln!(std::io::stderr(), "retry: warning: {warning}");
            }
            code
        }
    }
}

/// Writes a mode's output; 1 if stdout is closed or full.
fn print(bytes: &[u8]) -> u8 {
    u8::from(std::io::stdout().write_all(bytes).is_err())
}

/// The real thing: run COMMAND until it succeeds or retry gives up, its
/// events handed to the outputs `report` asks for (`sinks::Reporter`),
/// the lines going `to`. `tracing`: the `OTEL_*` settings, when an OTLP
/// endpoint is set.
fn run_command(
    options: &run::Options,
    report: &sinks::Settings,
    to: log::Destination,
    id: String,
    tracing: Option<trace::Settings>,
) -> run::Exit {
    let signals = match signals::Signals::install() {
        Ok(signals) => signals,
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "retry: cannot install signal handlers: {error}"
            );
            return run::Exit::Code(events::RETRY_FAILED);
        }
    };
    let mut host = supervisor::Supervisor::new(options, signals, id.clone());
    let mut said = Vec::new();
    let tracing = tracing.map(|settings| {
        let (ids, warnings) = trace::start(&settings);
        said = warnings;
        (settings, ids)
    });
    if let Some((_, ids)) = &tracing {
        host = host.with_trace(*ids);
    }
    // The run begins: the one reading of the wall clock, from which every
    // event's stamp follows the host's clock.
    let origin = events::Origin::new(std::time::SystemTime::now(), host.now());
    let mut reporter = sinks::Reporter::new(report, to, id, origin, tracing, &options.command);
    reporter.begin(report, said, host.now());
    let seed = options.limits.seed;
    let exit = run::run(
        options,
        &mut host,
        origin,
        &mut |event| reporter.emit(event),
        || strategy::rng(seed),
    );
    reporter.finish(host.signals(), || host.now());
    exit
}

/// Entry points for the fuzz targets in `fuzz/` and the argument property
/// tests (`fuzzing.rs`): not an API.
#[doc(hidden)]
pub mod fuzzing;
