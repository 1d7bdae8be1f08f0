//! OpenTelemetry's tracing protocol, as retry speaks it (issue 34): which
//! variables ask for traces, the W3C context, the sampler, OTLP's
//! encodings and the one export. It knows nothing of runs: the spans of a
//! run are made from its events by the reporter, which imports this.
//!
//! - `settings.rs`: which `OTEL_*` variables say whether and where (read once);
//! - `context.rs`: `TRACEPARENT` read and written, the run's ids;
//! - `sampler.rs`: `OTEL_TRACES_SAMPLER`, which runs are recorded;
//! - `otlp.rs`: spans as OTLP's protobuf or JSON;
//! - `export.rs`: the one HTTP request, bounded in time and cut short by
//!   the caller's signals;
//! - `answer.rs`: where the collector's answer ends.
//!
//! Nothing here runs unless an endpoint is set: a run without one reads
//! two variables and is otherwise unchanged (its command's environment too).

mod answer;
pub mod context;
mod export;
mod otlp;
mod sampler;
pub mod settings;

pub use context::Ids;
pub use export::Interrupts;
pub use settings::Settings;

/// A run's ids, when `OTEL_*` asks for a trace, and the warnings to say
/// before the first attempt. A `TRACEPARENT` in retry's environment that
/// is malformed is set aside with one warning, and a new trace starts.
pub fn start(settings: &Settings) -> (Ids, Vec<String>) {
    let mut warnings = settings.warnings.clone();
    // Empty is unset, as for retry's own variables: no warning each run.
    let inherited = std::env::var_os(context::TRACEPARENT).filter(|v| !v.is_empty());
    let parent = inherited.as_ref().and_then(|value| {
        let value = value.to_string_lossy();
        context::parse(&value)
            .inspect_err(|why| {
                let shown: String = value.chars().take(64).collect();
                warnings.push(format!(
                    "{} '{}' is ignored: {why}; a new trace is started",
                    context::TRACEPARENT,
                    shown.escape_debug()
                ));
            })
            .ok()
    });
    let ids = Ids::new(parent, settings.sampler, &mut crate::strategy::rng(None));
    (ids, warnings)
}

/// An attribute's value (OTLP's `AnyValue`, the kinds retry uses).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Bool(bool),
    /// A finite number (a probability).
    Double(f64),
    /// A list of strings (`process.command_args`).
    Strs(Vec<String>),
}

/// Whose work a span is (OTLP's `SpanKind`), as OpenTelemetry's
/// conventions for command-line programs say: the run is retry's own
/// execution, an attempt is retry calling another program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `SPAN_KIND_INTERNAL`: the run.
    Internal = 1,
    /// `SPAN_KIND_CLIENT`: an attempt.
    Client = 3,
}

/// One finished span.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub span_id: [u8; 8],
    pub parent: Option<[u8; 8]>,
    pub name: String,
    pub kind: Kind,
    /// Nanoseconds since the Unix epoch.
    pub start: u64,
    pub end: u64,
    pub attributes: Vec<(&'static str, Value)>,
    /// Status ERROR with this message; `None` is status unset (OK).
    pub error: Option<String>,
}

/// Sends `spans` of the trace `ids` to the collector `settings` name,
/// waiting no longer than the timeout, and less once the caller has asked
/// retry to stop (`interrupts`; `stopped`: a signal already ended the
/// run); the warning's words if they did not arrive.
pub fn export(
    settings: &Settings,
    ids: &Ids,
    spans: &[Span],
    interrupts: &impl Interrupts,
    stopped: bool,
) -> Result<(), String> {
    let body = otlp::encode(settings.protocol, &settings.resource, ids, spans);
    export::post(settings, body, interrupts, stopped)
}
