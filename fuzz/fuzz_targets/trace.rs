//! The trace parsers: a `TRACEPARENT` value, and the `OTEL_*` variables
//! read together (`TRACESTATE` is passed on as given, or dropped: retry
//! never parses it). Never a panic; a parent that is taken reads back the
//! same once written; the export's timeout never passes its 2 s bound;
//! every warning and error is one line; and no message holds a header's
//! value or an endpoint's password. The input is the variables' values,
//! separated by NUL (which no environment value holds), in `VARIABLES`'
//! order; the whole input is also read as a `TRACEPARENT`.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use retry_jitter::fuzzing::{otel_settings, traceparent, traceparent_written};

/// Nothing retry's messages hold, nor what masks them.
const MARK: &str = "\u{7f}Pw\u{7f}";

/// OpenTelemetry's names, which retry reads.
const VARIABLES: [&str; 13] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_SDK_DISABLED",
    "OTEL_TRACES_SAMPLER",
    "OTEL_TRACES_SAMPLER_ARG",
];

/// The longest wait for a collector (`trace::settings::LONGEST_WAIT`).
const LONGEST_WAIT: Duration = Duration::from_secs(2);

fuzz_target!(|text: &str| {
    if let Ok((trace_id, span_id, sampled)) = traceparent(text) {
        let written = traceparent_written(&trace_id, &span_id, sampled);
        assert_eq!(
            traceparent(&written),
            Ok((trace_id, span_id, sampled)),
            "{text:?}"
        );
    }
    if text.contains(MARK) {
        return;
    }
    let mut values: Vec<String> = text.split('\0').map(str::to_owned).collect();
    values.resize(VARIABLES.len(), String::new());
    for (name, value) in VARIABLES.iter().zip(&mut values) {
        // A secret where one goes: each header's value, and an endpoint's
        // password (before its last `@`).
        if name.ends_with("_HEADERS") {
            *value = value.replace('=', &format!("={MARK}"));
        } else if name.ends_with("_ENDPOINT")
            && let Some(at) = value.rfind('@')
        {
            value.insert_str(at, MARK);
        }
    }
    // As from the environment: an empty value is unset.
    let get = |name: &str| {
        let at = VARIABLES.iter().position(|v| *v == name)?;
        Some(values[at].clone()).filter(|v| !v.is_empty())
    };
    let shown = match otel_settings(get) {
        Err(line) => vec![line],
        Ok(None) => Vec::new(),
        Ok(Some((warnings, timeout))) => {
            assert!(timeout <= LONGEST_WAIT, "{values:?}: {timeout:?}");
            warnings
        }
    };
    for line in shown {
        assert!(!line.contains(MARK), "{values:?}: {line:?}");
        assert!(!line.contains(['\n', '\r']), "{values:?}: {line:?}");
    }
});
