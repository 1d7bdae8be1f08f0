//! Entry points for the fuzz targets in `fuzz/` and the argument property
//! tests: thin wrappers over the parsers and validation, not an API.

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
    crate::cli::args::simulation::parse_clients(text).map(|counts| counts.0)
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
    /// How far ahead of now that end could lie (ns): the default options'
    /// cooldown and lease (`breaker_horizon`), or the limit the record
    /// keeps if longer.
    pub reach: u64,
}

/// `bytes` read as a host breaker's record at `now` (ns); `None` if
/// they are not one.
pub fn breaker_record(bytes: &[u8], now: u64) -> Option<BreakerRecord> {
    use crate::state::breaker::Admit;
    let (written, status, admit, end, reach) = crate::state::breaker::read_record(bytes, now)?;
    let skip_until = match admit {
        Admit::Skip { until, .. } => Some(until),
        Admit::Run | Admit::Probe(_) => None,
    };
    Some(BreakerRecord {
        written,
        status,
        skip_until,
        end,
        reach,
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

/// How far ahead of now a run with the default options sets an end (ns):
/// its longest cooldown and its lease.
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
