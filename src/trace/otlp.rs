//! The spans as an OTLP `ExportTraceServiceRequest`: protobuf (the
//! specification's default) or OTLP's JSON, written by hand. The request
//! is a few messages deep and uses four wire types, so an encoder of its
//! own costs less than a protobuf crate (bench/RESULTS.md); the tests
//! decode it with OpenTelemetry's own definitions
//! (`tests/integration/trace.rs`).
//! <https://github.com/open-telemetry/opentelemetry-proto/blob/main/opentelemetry/proto/trace/v1/trace.proto>

use std::fmt::Write as _;

use crate::escape;
use crate::trace::settings::Protocol;
use crate::trace::{Ids, Span, Value};

/// `STATUS_CODE_ERROR`.
const STATUS_ERROR: u64 = 2;

/// The request's body.
pub fn encode(
    protocol: Protocol,
    resource: &[(String, String)],
    ids: &Ids,
    spans: &[Span],
) -> Vec<u8> {
    match protocol {
        Protocol::Protobuf => protobuf(resource, ids, spans),
        Protocol::Json => json(resource, ids, spans).into_bytes(),
    }
}

/// The protobuf wire format: each field a key (number, wire type), then a
/// varint, 8 bytes, or a length and bytes.
#[derive(Default)]
struct Message(Vec<u8>);

impl Message {
    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.0.push(value as u8 | 0x80);
            value >>= 7;
        }
        self.0.push(value as u8);
    }

    fn key(&mut self, field: u64, wire: u64) {
        self.varint(field << 3 | wire);
    }

    fn uint(&mut self, field: u64, value: u64) {
        self.key(field, 0);
        self.varint(value);
    }

    fn fixed64(&mut self, field: u64, value: u64) {
        self.key(field, 1);
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    fn bytes(&mut self, field: u64, bytes: &[u8]) {
        self.key(field, 2);
        self.varint(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    fn message(&mut self, field: u64, message: Message) {
        self.bytes(field, &message.0);
    }

    /// A `KeyValue`.
    fn attribute(&mut self, field: u64, key: &str, value: &Value) {
        let mut any = Message::default();
        match value {
            Value::Str(text) => any.bytes(1, text.as_bytes()),
            Value::Bool(b) => any.uint(2, u64::from(*b)),
            // int64 as a varint: two's complement, ten bytes when negative.
            Value::Int(n) => any.uint(3, *n as u64),
            // double, as a fixed64 of its bits.
            Value::Double(d) => any.fixed64(4, d.to_bits()),
            // An `ArrayValue` of string `AnyValue`s.
            Value::Strs(texts) => {
                let mut array = Message::default();
                for text in texts {
                    let mut item = Message::default();
                    item.bytes(1, text.as_bytes());
                    array.message(1, item);
                }
                any.message(5, array);
            }
        }
        let mut pair = Message::default();
        pair.bytes(1, key.as_bytes());
        pair.message(2, any);
        self.message(field, pair);
    }
}

fn protobuf(resource: &[(String, String)], ids: &Ids, spans: &[Span]) -> Vec<u8> {
    let mut resource_message = Message::default();
    for (key, value) in resource {
        resource_message.attribute(1, key, &Value::Str(value.clone()));
    }
    let mut scope = Message::default();
    scope.bytes(1, b"retry");
    scope.bytes(2, env!("CARGO_PKG_VERSION").as_bytes());
    let mut scope_spans = Message::default();
    scope_spans.message(1, scope);
    for span in spans {
        let mut s = Message::default();
        s.bytes(1, &ids.trace_id);
        s.bytes(2, &span.span_id);
        if let Some(parent) = &span.parent {
            s.bytes(4, parent);
        }
        s.bytes(5, span.name.as_bytes());
        s.uint(6, span.kind as u64);
        s.fixed64(7, span.start);
        s.fixed64(8, span.end);
        for (key, value) in &span.attributes {
            s.attribute(9, key, value);
        }
        if let Some(message) = &span.error {
            let mut status = Message::default();
            status.bytes(2, message.as_bytes());
            status.uint(3, STATUS_ERROR);
            s.message(15, status);
        }
        scope_spans.message(2, s);
    }
    let mut resource_spans = Message::default();
    resource_spans.message(1, resource_message);
    resource_spans.message(2, scope_spans);
    let mut request = Message::default();
    request.message(1, resource_spans);
    request.0
}

/// OTLP's JSON: protobuf's JSON mapping, but ids as hex, enums as numbers
/// and 64-bit integers as strings.
fn json(resource: &[(String, String)], ids: &Ids, spans: &[Span]) -> String {
    let hex = |bytes: &[u8]| {
        let mut out = vec![0; bytes.len() * 2];
        crate::trace::context::write_hex(bytes, &mut out);
        String::from_utf8(out).unwrap_or_default()
    };
    let attributes = |out: &mut String, pairs: &mut dyn Iterator<Item = (&str, &Value)>| {
        out.push('[');
        for (n, (key, value)) in pairs.enumerate() {
            let comma = if n > 0 { "," } else { "" };
            let _ = write!(out, r#"{comma}{{"key":"{}","value":{{"#, escape::json(key));
            let _ = match value {
                Value::Str(text) => write!(out, r#""stringValue":"{}""#, escape::json(text)),
                Value::Bool(b) => write!(out, r#""boolValue":{b}"#),
                Value::Int(n) => write!(out, r#""intValue":"{n}""#),
                // A finite number (JSON has no NaN): what it was given.
                Value::Double(d) if d.is_finite() => write!(out, r#""doubleValue":{d}"#),
                Value::Double(_) => write!(out, r#""doubleValue":0"#),
                Value::Strs(texts) => {
                    out.push_str(r#""arrayValue":{"values":["#);
                    for (n, text) in texts.iter().enumerate() {
                        let comma = if n > 0 { "," } else { "" };
                        let _ = write!(out, r#"{comma}{{"stringValue":"{}"}}"#, escape::json(text));
                    }
                    out.push_str("]}");
                    Ok(())
                }
            };
            out.push_str("}}");
        }
        out.push(']');
    };
    let mut out = String::from(r#"{"resourceSpans":[{"resource":{"attributes":"#);
    let resource: Vec<(&str, Value)> = resource
        .iter()
        .map(|(k, v)| (k.as_str(), Value::Str(v.clone())))
        .collect();
    attributes(&mut out, &mut resource.iter().map(|(k, v)| (*k, v)));
    let _ = write!(
        out,
        r#"}},"scopeSpans":[{{"scope":{{"name":"retry","version":"{}"}},"spans":["#,
        env!("CARGO_PKG_VERSION")
    );
    for (n, span) in spans.iter().enumerate() {
        let comma = if n > 0 { "," } else { "" };
        let _ = write!(
            out,
            r#"{comma}{{"traceId":"{}","spanId":"{}","#,
            hex(&ids.trace_id),
            hex(&span.span_id)
        );
        if let Some(parent) = &span.parent {
            let _ = write!(out, r#""parentSpanId":"{}","#, hex(parent));
        }
        let _ = write!(
            out,
            r#""name":"{}","kind":{},"startTimeUnixNano":"{}","endTimeUnixNano":"{}","attributes":"#,
            escape::json(&span.name),
            span.kind as u8,
            span.start,
            span.end
        );
        attributes(&mut out, &mut span.attributes.iter().map(|(k, v)| (*k, v)));
        if let Some(message) = &span.error {
            let _ = write!(
                out,
                r#","status":{{"code":{STATUS_ERROR},"message":"{}"}}"#,
                escape::json(message)
            );
        }
        out.push('}');
    }
    out.push_str("]}]}]}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn sample() -> (Ids, Vec<Span>) {
        let ids = Ids::new(
            None,
            crate::trace::sampler::Sampler::default(),
            &mut rand_chacha::ChaCha8Rng::seed_from_u64(1),
        );
        let span = Span {
            span_id: [1, 2, 3, 4, 5, 6, 7, 8],
            parent: Some([9; 8]),
            name: "cu\"rl".into(),
            kind: crate::trace::Kind::Client,
            start: 1_700_000_000_000_000_000,
            end: 1_700_000_000_250_000_000,
            attributes: vec![
                ("retry.attempt", Value::Int(300)),
                ("retry.timed_out", Value::Bool(true)),
                ("error.type", Value::Str("timeout".into())),
                (
                    "process.command_args",
                    Value::Strs(vec!["a".into(), "b\"".into()]),
                ),
            ],
            error: Some("timed out".into()),
        };
        (ids, vec![span])
    }

    #[test]
    fn varints_and_keys_are_protobufs() {
        let mut m = Message::default();
        m.uint(1, 300);
        assert_eq!(m.0, [0x08, 0xac, 0x02]);
        let mut m = Message::default();
        m.uint(3, -1_i64 as u64);
        assert_eq!(m.0.len(), 11);
        let mut m = Message::default();
        m.fixed64(7, 1);
        assert_eq!(m.0, [0x39, 1, 0, 0, 0, 0, 0, 0, 0]);
        let mut m = Message::default();
        m.bytes(5, b"ab");
        assert_eq!(m.0, [0x2a, 2, b'a', b'b']);
    }

    #[test]
    fn a_span_in_protobuf_holds_its_fields() {
        let (ids, spans) = sample();
        let resource = [("service.name".to_string(), "ci".to_string())];
        let body = encode(Protocol::Protobuf, &resource, &ids, &spans);
        let has = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
        // trace_id (field 1, 16 bytes), span_id (2), parent (4).
        assert!(has(&[&[0x0a, 16][..], &ids.trace_id].concat()));
        assert!(has(&[0x12, 8, 1, 2, 3, 4, 5, 6, 7, 8]));
        assert!(has(&[0x22, 8, 9, 9, 9, 9, 9, 9, 9, 9]));
        // start time as fixed64 (field 7), little-endian.
        assert!(has(&[
            &[0x39][..],
            &1_700_000_000_000_000_000_u64.to_le_bytes()
        ]
        .concat()));
        // The status: message, then code ERROR.
        assert!(has(&[
            0x7a, 13, 0x12, 9, b't', b'i', b'm', b'e', b'd', b' ', b'o', b'u', b't', 0x18, 2
        ]));
        assert!(has(b"service.name") && has(b"retry.timed_out"));
        // kind (field 6) CLIENT; an array (AnyValue field 5) of two
        // AnyValues (ArrayValue field 1) holding strings (field 1).
        assert!(has(&[0x30, 3]));
        assert!(has(&[
            0x2a, 11, 0x0a, 3, 0x0a, 1, b'a', 0x0a, 4, 0x0a, 2, b'b', b'"'
        ]));
    }

    #[test]
    fn a_span_in_json_has_hex_ids_and_string_integers() {
        let (ids, spans) = sample();
        let body = String::from_utf8(encode(Protocol::Json, &[], &ids, &spans)).unwrap();
        assert!(body.starts_with(r#"{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"retry","#), "{body}");
        assert!(body.contains(r#""spanId":"0102030405060708","parentSpanId":"0909090909090909","name":"cu\"rl","kind":3,"startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000250000000""#), "{body}");
        assert!(
            body.contains(r#"{"key":"retry.attempt","value":{"intValue":"300"}}"#),
            "{body}"
        );
        assert!(
            body.contains(r#"{"key":"retry.timed_out","value":{"boolValue":true}}"#),
            "{body}"
        );
        assert!(
            body.contains(r#"{"key":"process.command_args","value":{"arrayValue":{"values":[{"stringValue":"a"},{"stringValue":"b\""}]}}}"#),
            "{body}"
        );
        assert!(
            body.ends_with(r#""status":{"code":2,"message":"timed out"}}]}]}]}"#),
            "{body}"
        );
    }
}
