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
//! - `state/`: what outlives a run (the budget, the breaker, their stores);
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
                Ok(settings) => settings,
                Err(line) => {
                    let _ = writeln!(std::io::stderr(), "{line}");
                    return 2;
                }
            };
            let to = match check_metrics_dir(&report.metrics, provenance)
                .and_then(|()| open_log(report, provenance))
            {
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
        Mode::Completions(shell) => print(generate::completions(*shell)),
        Mode::Man => print(generate::man()),
        Mode::Presets { listing, warning } => {
            if let Some(warning) = warning {
                let _ = writeln!(std::io::stderr(), "retry: warning: {warning}");
            }
            print(listing.as_bytes())
        }
        Mode::BudgetStatus(settings) => crate::state::budget::print_status(settings),
        Mode::BreakerStatus(settings, sinks, provenance) => {
            // A directory that cannot take the file is bad usage, as for a run.
            if let Err(line) = check_metrics_dir(sinks, provenance) {
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
    }
}

/// Writes a mode's output; 1 if stdout is closed or full.
fn print(bytes: &[u8]) -> u8 {
    u8::from(std::io::stdout().write_all(bytes).is_err())
}

/// Where retry's lines go, set up before anything runs: a `--log-file`
/// that cannot be opened is a bad value, named with its variable if it
/// came from one.
fn open_log(
    report: &sinks::Settings,
    provenance: &cli::provenance::Provenance,
) -> Result<log::Destination, String> {
    match &report.log_file {
        None => Ok(log::Destination::Stderr),
        Some(path) => match log::open(path) {
            Ok(file) => Ok(log::Destination::File(file)),
            Err(error) => Err(format!(
                "retry: cannot open {} '{}': {}",
                provenance.option(cli::id::LOG_FILE),
                path.display(),
                crate::os_error::describe(&error)
            )),
        },
    }
}

/// `--metrics-dir`, checked before anything runs: a directory that is
/// missing or not writable is a bad value, as a `--log-file` that cannot
/// be opened is, rather than a warning after the run that a cron job's
/// owner never reads.
fn check_metrics_dir(
    metrics: &metrics::Settings,
    provenance: &cli::provenance::Provenance,
) -> Result<(), String> {
    let Some(dir) = &metrics.dir else {
        return Ok(());
    };
    metrics::textfile::check_dir(dir).map_err(|error| {
        format!(
            "retry: cannot write to {} '{}': {}",
            provenance.option(cli::id::METRICS_DIR),
            dir.display(),
            crate::os_error::describe(&error)
        )
    })
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
    let command = (options.program.as_os_str(), options.args.as_slice());
    let mut reporter = sinks::Reporter::new(report, to, id, origin, tracing, command);
    reporter.begin(report, said, host.now());
    let seed = options.seed;
    let exit = run::run(
        options,
        &mut host,
        origin,
        &mut |event| reporter.emit(event),
        || strategy::rng(seed),
    );
    reporter.finish(host.circuit(), host.signals(), || host.now());
    exit
}

/// Entry points for the fuzz targets in `fuzz/` and the argument property
/// tests: thin wrappers over the parsers and validation, not an API.
#[doc(hidden)]
pub mod fuzzing {
    use std::ffi::OsString;
    use std::time::Duration;

    #[cfg(feature = "preview")]
    use crate::cli::config::Mode;
    #[cfg(feature = "preview")]
    use crate::policy::Attempts;

    /// A `--base`/`--cap`/... value.
    pub fn duration(text: &str) -> Result<Duration, String> {
        crate::duration::parse(text)
    }

    /// A `--retry-on`/`--fatal-on`/`--success-on` list, written back.
    pub fn codes(text: &str) -> Result<String, String> {
        text.parse::<crate::codes::CodeSet>()
            .map(|set| set.to_string())
    }

    /// A `--clients` list.
    pub fn clients(text: &str) -> Result<Vec<u32>, String> {
        crate::cli::simulation::parse_clients(text).map(|counts| counts.0)
    }

    /// A `--store` value, however retry was built: the store as
    /// messages show it (`None` for `host`), or the parser's error.
    pub fn store(text: &str) -> Result<Option<String>, String> {
        crate::state::store::remote(text).map(|r| r.map(|r| r.to_string()))
    }

    /// The same value as a usage error quotes one that is not a store.
    pub fn store_masked(text: &str) -> String {
        crate::url::mask(text).into_owned()
    }

    /// A `TRACEPARENT` value: its trace id, parent id and sampled flag, or
    /// why it is set aside.
    pub fn traceparent(text: &str) -> Result<([u8; 16], [u8; 8], bool), &'static str> {
        crate::trace::context::parse(text).map(|p| (p.trace_id, p.span_id, p.sampled))
    }

    /// A parent written as `TRACEPARENT` (what each attempt gets).
    pub fn traceparent_written(trace_id: &[u8; 16], span_id: &[u8; 8], sampled: bool) -> String {
        let written = crate::trace::context::format(trace_id, span_id, sampled);
        String::from_utf8_lossy(&written).into_owned()
    }

    /// The `OTEL_*` variables as `get` gives them (`None`: unset): the
    /// warnings they cost and the export's timeout, `None` without an
    /// endpoint, or the usage error's line.
    pub fn otel_settings(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<(Vec<String>, Duration)>, String> {
        crate::trace::Settings::from_lookup(get).map(|s| s.map(|s| (s.warnings, s.timeout)))
    }

    /// A host breaker's record (`.breakers/NAME`) as a run with the
    /// default options reads it at some time.
    pub struct BreakerRecord {
        /// The record written back from the circuit it held.
        pub written: Vec<u8>,
        /// What `--breaker-status` prints (and the warning of a clamped end).
        pub status: String,
        /// Until when a run would be turned away, if it would be.
        pub skip_until: Option<u64>,
        /// The circuit's end, once a far-future one is clamped.
        pub end: Option<u64>,
    }

    /// `bytes` read as a host breaker's record at `now` (ns); `None` if
    /// they are not one.
    pub fn breaker_record(bytes: &[u8], now: u64) -> Option<BreakerRecord> {
        use crate::state::breaker::Admit;
        let (written, status, admit, end) = crate::state::breaker::read_record(bytes, now)?;
        let skip_until = match admit {
            Admit::Skip { until, .. } => Some(until),
            Admit::Run | Admit::Probe(_) => None,
        };
        Some(BreakerRecord {
            written,
            status,
            skip_until,
            end,
        })
    }

    /// A host breaker's record with its end moved to `until` (ns), as a
    /// clock far ahead would have written it; `None` if `bytes` are not a
    /// record of an open or probing circuit.
    pub fn breaker_record_ending_at(bytes: &[u8], until: u64) -> Option<Vec<u8>> {
        crate::state::breaker::record_ending_at(bytes, until)
    }

    /// `body` sealed as a state file's record is (its checksum appended).
    pub fn sealed(body: &str) -> Vec<u8> {
        crate::state::store::file::seal(body).into_bytes()
    }

    /// How far ahead of now a record's end may lie with the default
    /// options (ns): the longest cooldown and the lease.
    pub fn breaker_horizon() -> u64 {
        use crate::state::breaker::{DEFAULT_COOLDOWN_MAX, DEFAULT_LEASE, machine};
        machine::horizon(DEFAULT_COOLDOWN_MAX, machine::nanos(DEFAULT_LEASE))
    }

    /// Every long option, `--base` and so on, with its `RETRY_*` variable if any.
    pub fn options() -> Vec<(String, Option<String>)> {
        crate::cli::long_options()
    }

    /// A whole command line (program name first) through clap and validation,
    /// as `retry` would take it; nothing is run. A valid `--plan` also
    /// computes its totals and its first rows. The error is the one line
    /// retry would print; help and version count as success.
    pub fn argv(args: &[OsString]) -> Result<(), String> {
        let mode = match crate::cli::parse_from(args, crate::cli::AfterParsing::Free)
            .and_then(crate::cli::config::from_cli)
        {
            Ok(mode) => mode,
            Err(error) => {
                if crate::cli::usage::is_help_or_version(&error) {
                    return Ok(());
                }
                return Err(crate::cli::usage::line(&error, args));
            }
        };
        #[cfg(not(feature = "preview"))]
        let _ = mode;
        #[cfg(feature = "preview")]
        if let Mode::Plan(config) = mode {
            let retries = match config.attempts {
                Attempts::Limit(n) => n - 1,
                Attempts::Unlimited => 20,
            };
            crate::plan::totals(config.backoff, retries);
            let first = Attempts::Limit(retries.min(32) + 1);
            let mut sink = std::io::sink();
            let _ = crate::plan::write(
                &mut sink,
                config.backoff,
                first,
                config.seed,
                crate::table::Format::Table,
                config.max_time,
            );
        }
        Ok(())
    }
}
