//! Whether and where traces go: OpenTelemetry's own `OTEL_*` variables,
//! read once before anything runs, as every OpenTelemetry SDK reads them.
//! <https://opentelemetry.io/docs/specs/otel/protocol/exporter/>
//!
//! A malformed endpoint is a usage error (exit 2, nothing runs), as any
//! bad value is. The other variables fall back with one warning, as the
//! specification asks of an SDK: a timeout that is not a number, a header
//! that is not `key=value`, a protocol retry does not speak. A header's
//! value is never printed: it carries API keys.

use std::time::Duration;

use crate::escape;

pub const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
pub const TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
const HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
const TRACES_HEADERS: &str = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
const TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
const TRACES_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT";
const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
const TRACES_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
const SERVICE_NAME: &str = "OTEL_SERVICE_NAME";
const RESOURCE_ATTRIBUTES: &str = "OTEL_RESOURCE_ATTRIBUTES";
const DISABLED: &str = "OTEL_SDK_DISABLED";
/// retry's own: the spans carry `process.command_args`, which the
/// conventions leave off by default (the words may hold secrets).
pub const COMMAND_ARGS: &str = "RETRY_TRACE_COMMAND_ARGS";

/// The longest retry waits for the collector at the end of a run: the
/// specification's default is 10 s, but retry's own exit waits on it, and
/// one request of a few kilobytes takes milliseconds. A shorter
/// `OTEL_EXPORTER_OTLP_TIMEOUT` is honoured; a longer one is cut to this.
pub const LONGEST_WAIT: Duration = Duration::from_secs(2);

/// The two encodings of OTLP/HTTP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`, the specification's default.
    Protobuf,
    /// `http/json`.
    Json,
}

/// Where spans go: `http://host[:port]/path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// As the `Host` header and the connection take it (`[::1]:4318`).
    pub authority: String,
    /// From its `/`, never empty.
    pub path: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub endpoint: Endpoint,
    pub protocol: Protocol,
    /// Sent with each request; never shown.
    pub headers: Vec<(String, String)>,
    pub timeout: Duration,
    /// The resource's attributes, `service.name` first.
    pub resource: Vec<(String, String)>,
    /// Which runs are recorded (`OTEL_TRACES_SAMPLER`).
    pub sampler: super::sampler::Sampler,
    /// Said once, before the first attempt: a variable set aside.
    pub warnings: Vec<String>,
    /// `RETRY_TRACE_COMMAND_ARGS`: the spans carry the commands' words.
    pub command_args: bool,
    /// retry's own words, for the run's span when `command_args` asks
    /// (`with_argv`); empty otherwise.
    pub argv: Vec<std::ffi::OsString>,
}

impl Settings {
    /// From retry's environment: `None` when no endpoint is set (or
    /// `OTEL_SDK_DISABLED=true`), the usage error's line when one is malformed.
    pub fn from_env() -> Result<Option<Self>, String> {
        Self::from_lookup(|name| {
            std::env::var_os(name)
                .map(|v| v.to_string_lossy().into_owned())
                .filter(|v| !v.is_empty())
        })
    }

    /// As `from_env`, with `get` in place of the environment (an empty
    /// value counts as unset).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, String> {
        // The usual case first: nothing set costs two look-ups.
        let (variable, url) = match (get(TRACES_ENDPOINT), get(ENDPOINT)) {
            (Some(url), _) => (TRACES_ENDPOINT, url),
            (None, Some(base)) => (ENDPOINT, base),
            (None, None) => return Ok(None),
        };
        if get(DISABLED).is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let mut endpoint = parse_endpoint(&url)
            .map_err(|why| format!("retry: {variable} '{}': {why}", shown(&url)))?;
        // The general endpoint is a base: the signal's path is appended.
        if variable == ENDPOINT {
            let base = endpoint.path.trim_end_matches('/');
            endpoint.path = format!("{base}/v1/traces");
        }
        let mut warnings = Vec::new();
        let protocol = match signal_or_general(&get, TRACES_PROTOCOL, PROTOCOL) {
            None => Protocol::Protobuf,
            Some((_, p)) if p.trim() == "http/protobuf" => Protocol::Protobuf,
            Some((_, p)) if p.trim() == "http/json" => Protocol::Json,
            Some((name, p)) => {
                warnings.push(format!(
                    "{name} '{}' is not a protocol retry sends (http/protobuf or http/json); \
                     traces are sent as http/protobuf",
                    escape::control(&p)
                ));
                Protocol::Protobuf
            }
        };
        let timeout = match signal_or_general(&get, TRACES_TIMEOUT, TIMEOUT) {
            None => LONGEST_WAIT,
            Some((name, ms)) => match ms.trim().parse::<u64>() {
                Ok(ms) => Duration::from_millis(ms).min(LONGEST_WAIT),
                Err(_) => {
                    warnings.push(format!(
                        "{name} '{}' is not a number of milliseconds; {} ms is used",
                        escape::control(&ms),
                        LONGEST_WAIT.as_millis()
                    ));
                    LONGEST_WAIT
                }
            },
        };
        let headers = match signal_or_general(&get, TRACES_HEADERS, HEADERS) {
            None => Vec::new(),
            Some((name, list)) => pairs(&list).unwrap_or_else(|| {
                // Its value may hold a key: only the variable is named.
                warnings.push(format!(
                    "{name} is not a list of key=value pairs; no header is sent"
                ));
                Vec::new()
            }),
        };
        let mut resource = match get(RESOURCE_ATTRIBUTES) {
            None => Vec::new(),
            Some(list) => pairs(&list).unwrap_or_else(|| {
                warnings.push(format!(
                    "{RESOURCE_ATTRIBUTES} '{}' is not a list of key=value pairs; ignored",
                    escape::control(&list)
                ));
                Vec::new()
            }),
        };
        // OTEL_SERVICE_NAME wins over the attribute; without either, the
        // specification's fallback.
        let from_attributes = resource
            .iter()
            .position(|(k, _)| k == "service.name")
            .map(|at| resource.remove(at).1);
        let service = get(SERVICE_NAME)
            .or(from_attributes)
            .unwrap_or_else(|| "unknown_service:retry".into());
        resource.insert(0, ("service.name".into(), service));
        let sampler = super::sampler::Sampler::from_lookup(&get, &mut warnings);
        let command_args = match get(COMMAND_ARGS) {
            None => false,
            Some(value) => switch(&value).ok_or_else(|| {
                format!(
                    "retry: {COMMAND_ARGS} '{}' is neither 1 nor 0 (true or false, yes or no, on or off)",
                    shown(&value)
                )
            })?,
        };
        Ok(Some(Self {
            endpoint,
            protocol,
            headers,
            timeout,
            resource,
            sampler,
            warnings,
            command_args,
            argv: Vec::new(),
        }))
    }

    /// Keeps `argv`, the words retry was run with, if the spans are to
    /// carry them.
    pub fn with_argv(mut self, argv: &[std::ffi::OsString]) -> Self {
        if self.command_args {
            self.argv = argv.to_vec();
        }
        self
    }
}

/// An on/off variable's value; `None` for anything else, which is refused
/// rather than guessed: a typo must not send the words a user meant to keep.
fn switch(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// The signal's own variable, else the general one, with its name.
fn signal_or_general(
    get: &impl Fn(&str) -> Option<String>,
    signal: &'static str,
    general: &'static str,
) -> Option<(&'static str, String)> {
    get(signal)
        .map(|v| (signal, v))
        .or_else(|| get(general).map(|v| (general, v)))
}

/// `key=value,key=value`, each part trimmed and percent-decoded (the W3C
/// Baggage format the specification names); `None` if any part is not.
fn pairs(list: &str) -> Option<Vec<(String, String)>> {
    list.split(',')
        .filter(|part| !part.trim().is_empty())
        .map(|part| {
            let (key, value) = part.split_once('=')?;
            let key = crate::url::percent_decode(key.trim()).ok()?;
            let value = crate::url::percent_decode(value.trim()).ok()?;
            // Nothing that could break the request's header lines.
            let fine = |s: &str| !s.chars().any(char::is_control);
            (!key.is_empty() && fine(&key) && fine(&value)).then_some((key, value))
        })
        .collect()
}

/// `http://host[:port][/path]`. https is refused in one line: retry sends
/// over a plain TCP connection (the size measurement in bench/RESULTS.md
/// says why), so a collector far away is reached through a local one.
pub fn parse_endpoint(url: &str) -> Result<Endpoint, String> {
    const SHAPE: &str = "not http://host[:port][/path]";
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(SHAPE.into());
    };
    if scheme.eq_ignore_ascii_case("https") {
        return Err(
            "retry sends traces over http:// only (no build of it speaks TLS); \
             send them to a collector on this host or network, which may forward them over https"
                .into(),
        );
    }
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(SHAPE.into());
    }
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, "/"),
    };
    let bad = |c: char| c.is_whitespace() || c.is_control() || c == '#';
    if authority.contains('@') {
        return Err(
            "user info in the URL is not supported; send credentials in OTEL_EXPORTER_OTLP_HEADERS"
                .into(),
        );
    }
    if path.contains(bad) {
        return Err(SHAPE.into());
    }
    let (host, port) = crate::url::split_host_port(authority).map_err(|_| SHAPE)?;
    let host = match authority.starts_with('[') {
        true => host
            .parse::<std::net::Ipv6Addr>()
            .map_err(|_| SHAPE)?
            .to_string(),
        false => host.to_owned(),
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
    let port_ok = port.is_none_or(|p| p.parse::<u16>().is_ok_and(|p| p > 0));
    if !host_ok || !port_ok {
        return Err(SHAPE.into());
    }
    // Port 80, http's, when none is written.
    let host = match authority.starts_with('[') {
        true => format!("[{host}]"),
        false => host,
    };
    Ok(Endpoint {
        authority: format!("{host}:{}", port.unwrap_or("80")),
        path: path.to_owned(),
    })
}

/// An endpoint as a message quotes it: control characters escaped, and
/// a password masked as a store's is (`url::mask`: what is
/// before the last `@`, or after a `:` that no port's digits follow).
fn shown(url: &str) -> String {
    escape::control(&crate::url::mask(url))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn settings(vars: &[(&str, &str)]) -> Result<Option<Settings>, String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::from_lookup(|name| vars.get(name).filter(|v| !v.is_empty()).cloned())
    }

    #[test]
    fn nothing_set_or_disabled_is_no_trace() {
        assert_eq!(settings(&[]), Ok(None));
        assert_eq!(settings(&[(ENDPOINT, "")]), Ok(None));
        assert_eq!(
            settings(&[(ENDPOINT, "http://c:4318"), (DISABLED, "TRUE")]),
            Ok(None)
        );
        assert!(
            settings(&[(ENDPOINT, "http://c:4318"), (DISABLED, "false")])
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn command_args_are_off_unless_switched_on_and_a_typo_is_refused() {
        let on = |value: &str| {
            settings(&[(ENDPOINT, "http://c:4318"), (COMMAND_ARGS, value)])
                .map(|s| s.unwrap().command_args)
        };
        assert!(
            !settings(&[(ENDPOINT, "http://c:4318")])
                .unwrap()
                .unwrap()
                .command_args
        );
        for value in ["1", "true", " YES ", "on"] {
            assert_eq!(on(value), Ok(true), "{value}");
        }
        for value in ["", "0", "False", "no", "off"] {
            assert_eq!(on(value), Ok(false), "{value}");
        }
        let refused = on("flase").unwrap_err();
        assert!(
            refused.starts_with("retry: RETRY_TRACE_COMMAND_ARGS 'flase' is neither 1 nor 0"),
            "{refused}"
        );
    }

    #[test]
    fn endpoints_general_and_for_traces() {
        let path = |vars: &[(&str, &str)]| settings(vars).unwrap().unwrap().endpoint;
        assert_eq!(
            path(&[(ENDPOINT, "http://collector:4318")]),
            Endpoint {
                authority: "collector:4318".into(),
                path: "/v1/traces".into()
            }
        );
        assert_eq!(
            path(&[(ENDPOINT, "http://c/otlp/")]).path,
            "/otlp/v1/traces"
        );
        assert_eq!(path(&[(ENDPOINT, "http://c/otlp/")]).authority, "c:80");
        let exact = path(&[
            (ENDPOINT, "http://a:1"),
            (TRACES_ENDPOINT, "http://[::1]:9/t"),
        ]);
        assert_eq!(
            (exact.authority.as_str(), exact.path.as_str()),
            ("[::1]:9", "/t")
        );
        assert_eq!(
            path(&[(TRACES_ENDPOINT, "http://[::1]")]).authority,
            "[::1]:80"
        );
    }

    #[test]
    fn malformed_endpoints_are_one_line() {
        for bad in [
            "collector:4318",
            "ftp://c",
            "http://",
            "http://c:0",
            "http://c:99999",
            "http://c:x/",
            "http://a b/",
            "http://c/a b",
            "http://[::1",
            "http://c/#x",
        ] {
            let line = settings(&[(ENDPOINT, bad)]).unwrap_err();
            assert!(
                line.starts_with("retry: OTEL_EXPORTER_OTLP_ENDPOINT '"),
                "{line}"
            );
            assert!(!line.contains('\n'));
        }
        let https = settings(&[(TRACES_ENDPOINT, "https://c")]).unwrap_err();
        assert!(https.contains("over http:// only"), "{https}");
        let secret = settings(&[(ENDPOINT, "http://me:s3cret@c")]).unwrap_err();
        assert!(
            !secret.contains("s3cret") && secret.contains("user info"),
            "{secret}"
        );
        // A password holding `@` (found by the trace fuzz target's rule):
        // the part of it after its first `@` was shown.
        for url in ["http://me:s3@cret@c", "http://me:s3cret", "http://:s3cret"] {
            let line = settings(&[(ENDPOINT, url)]).unwrap_err();
            assert!(!line.contains("cret"), "{line}");
        }
    }

    /// Issue 40's fuzz target: a value quoted in a warning put its newline
    /// in the log, a line retry never wrote.
    #[test]
    fn a_value_quoted_in_a_warning_stays_on_its_line() {
        let s = settings(&[
            (ENDPOINT, "http://c"),
            (PROTOCOL, "grpc\nretry: forged"),
            (TIMEOUT, "1\r2"),
            (RESOURCE_ATTRIBUTES, "a\nb"),
            ("OTEL_TRACES_SAMPLER", "x\u{1b}[2J"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.warnings.len(), 4, "{:?}", s.warnings);
        for warning in &s.warnings {
            assert!(!warning.chars().any(char::is_control), "{warning:?}");
        }
        assert!(s.warnings[0].starts_with(r"OTEL_EXPORTER_OTLP_PROTOCOL 'grpc\nretry: forged'"));
        let s = settings(&[
            (ENDPOINT, "http://c"),
            ("OTEL_TRACES_SAMPLER", "traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.5\nx"),
        ]);
        let warnings = s.unwrap().unwrap().warnings;
        assert_eq!(
            warnings,
            [r"OTEL_TRACES_SAMPLER_ARG '0.5\nx' is not a ratio from 0 to 1; 1 is used"]
        );
    }

    #[test]
    fn headers_timeout_protocol_and_resource() {
        let s = settings(&[
            (ENDPOINT, "http://c"),
            (HEADERS, "general=1"),
            (TRACES_HEADERS, " api-key = s%3Dcr%2Cet , x=%20y"),
            (TIMEOUT, "500"),
            (PROTOCOL, "http/json"),
            (
                RESOURCE_ATTRIBUTES,
                "service.name=from-attr,deployment.environment=ci",
            ),
            (SERVICE_NAME, "nightly"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            s.headers,
            [
                ("api-key".into(), "s=cr,et".into()),
                ("x".into(), " y".into())
            ]
        );
        assert_eq!(s.timeout, Duration::from_millis(500));
        assert_eq!(s.protocol, Protocol::Json);
        assert_eq!(
            s.resource,
            [
                ("service.name".into(), "nightly".into()),
                ("deployment.environment".into(), "ci".into())
            ]
        );
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        let defaults = settings(&[(ENDPOINT, "http://c")]).unwrap().unwrap();
        assert_eq!(defaults.protocol, Protocol::Protobuf);
        assert_eq!(defaults.timeout, LONGEST_WAIT);
        assert_eq!(defaults.resource[0].1, "unknown_service:retry");
    }

    #[test]
    fn set_aside_with_a_warning_that_never_shows_a_header() {
        let s = settings(&[
            (ENDPOINT, "http://c"),
            (HEADERS, "api-key%=secret-value"),
            (TIMEOUT, "60000"),
            (TRACES_TIMEOUT, "soon"),
            (PROTOCOL, "grpc"),
        ])
        .unwrap()
        .unwrap();
        assert!(s.headers.is_empty());
        assert_eq!(s.timeout, LONGEST_WAIT);
        assert_eq!(s.protocol, Protocol::Protobuf);
        assert_eq!(s.warnings.len(), 3, "{:?}", s.warnings);
        assert!(s.warnings.iter().all(|w| !w.contains("secret")));
        assert!(s.warnings[0].starts_with("OTEL_EXPORTER_OTLP_PROTOCOL 'grpc'"));
        // A longer timeout is cut to the bound.
        let long = settings(&[(ENDPOINT, "http://c"), (TIMEOUT, "60000")]);
        assert_eq!(long.unwrap().unwrap().timeout, LONGEST_WAIT);
    }

    proptest::proptest! {
        /// Any endpoint and header list: a result, never a panic, and no
        /// message with a header's value in it.
        #[test]
        fn any_value_is_read_without_panic(url in "\\PC{0,60}", headers in "\\PC{0,60}") {
            let read = settings(&[(ENDPOINT, &url), (HEADERS, &headers)]);
            if let Ok(Some(s)) = read {
                proptest::prop_assert!(s.warnings.iter().all(|w| headers.len() < 8 || !w.contains(&headers)));
            }
        }
    }
}
