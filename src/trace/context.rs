//! W3C Trace Context: the `traceparent` header as OpenTelemetry's
//! environment-variable carrier passes it (`TRACEPARENT`, with
//! `TRACESTATE` beside it), and the run's ids.
//!
//! `version-traceid-parentid-flags`, lowercase hex. Version `ff` and
//! all-zero ids are invalid; a higher version than `00` is read by its
//! first four fields, as the W3C recommendation says a parser must (a
//! version `00` value has exactly 55 bytes).
//! <https://www.w3.org/TR/trace-context/#traceparent-header>

use super::sampler::Sampler;

/// The variables of OpenTelemetry's environment carrier.
pub const TRACEPARENT: &str = "TRACEPARENT";
pub const TRACESTATE: &str = "TRACESTATE";

/// The length of a version `00` traceparent.
pub const LEN: usize = 55;

/// A parent context: the trace and the span a new span is a child of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parent {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    /// The sampled flag: a parent not sampled is not exported
    /// (OpenTelemetry's default sampler, parent-based, always on).
    pub sampled: bool,
}

/// Why a `TRACEPARENT` was not used, for the one warning.
pub fn parse(value: &str) -> Result<Parent, &'static str> {
    let bytes = value.as_bytes();
    let version = hex::<1>(bytes.get(..2)).ok_or("its version is not two hex digits")?;
    if version == [0xff] {
        return Err("version ff is invalid");
    }
    // Version 00 is exactly 55 bytes; a later one may add fields after a dash.
    let fits = match version {
        [0] => bytes.len() == LEN,
        _ => bytes.len() == LEN || (bytes.len() > LEN && bytes[LEN] == b'-'),
    };
    let dashes = [2, 35, 52].iter().all(|&at| bytes.get(at) == Some(&b'-'));
    if !fits || !dashes {
        return Err("it is not version-traceid-parentid-flags");
    }
    let trace_id =
        hex::<16>(bytes.get(3..35)).ok_or("its trace id is not 32 lowercase hex digits")?;
    let span_id =
        hex::<8>(bytes.get(36..52)).ok_or("its parent id is not 16 lowercase hex digits")?;
    let flags = hex::<1>(bytes.get(53..55)).ok_or("its flags are not two hex digits")?;
    if trace_id == [0; 16] || span_id == [0; 8] {
        return Err("an all-zero id is invalid");
    }
    Ok(Parent {
        trace_id,
        span_id,
        sampled: flags[0] & 1 == 1,
    })
}

/// `N` bytes from `2N` lowercase hex digits (uppercase is invalid).
fn hex<const N: usize>(digits: Option<&[u8]>) -> Option<[u8; N]> {
    let digits = digits.filter(|d| d.len() == 2 * N)?;
    let value = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    let mut out = [0; N];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = value(pair[0])? << 4 | value(pair[1])?;
    }
    Some(out)
}

/// Writes `bytes` as lowercase hex into `out` (twice as long).
pub fn write_hex(bytes: &[u8], out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (pair, byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 15)];
    }
}

/// A version `00` traceparent, built on the stack: each attempt's is
/// written into the same bytes, so the attempt allocates nothing for it.
pub fn format(trace_id: &[u8; 16], span_id: &[u8; 8], sampled: bool) -> [u8; LEN] {
    let mut out = *b"00-00000000000000000000000000000000-0000000000000000-00";
    write_hex(trace_id, &mut out[3..35]);
    write_hex(span_id, &mut out[36..52]);
    out[54] = if sampled { b'1' } else { b'0' };
    out
}

/// The ids of one run: its trace, its own span, and a key from which each
/// attempt's span id follows, so the attempt's environment (built by the
/// supervisor) and its span (built from the events) agree without being
/// passed between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ids {
    pub trace_id: [u8; 16],
    pub run_span: [u8; 8],
    /// The span the run's span is a child of, if `TRACEPARENT` named one.
    pub parent_span: Option<[u8; 8]>,
    pub sampled: bool,
    key: u64,
}

impl Ids {
    /// A child of `parent`, or the root of a new trace, with random ids
    /// from retry's generator (ChaCha8 seeded by the system, never by
    /// `--seed`, which would give every run the same ids); recorded or not
    /// as `sampler` decides.
    pub fn new(parent: Option<Parent>, sampler: Sampler, rng: &mut impl rand::Rng) -> Self {
        let mut trace_id = [0; 16];
        while trace_id == [0; 16] {
            rng.fill_bytes(&mut trace_id);
        }
        let trace_id = parent.map_or(trace_id, |p| p.trace_id);
        Self {
            trace_id,
            run_span: nonzero(rng.next_u64()),
            parent_span: parent.map(|p| p.span_id),
            sampled: sampler.samples(&trace_id, parent.map(|p| p.sampled)),
            key: rng.next_u64(),
        }
    }

    /// Attempt `number`'s span id: a bijection of the number under the run's
    /// key (splitmix64's finaliser), so no two attempts of a run share one.
    pub fn attempt_span(&self, number: u32) -> [u8; 8] {
        let mut z = self
            .key
            .wrapping_add(u64::from(number).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        nonzero(z ^ (z >> 31))
    }

    /// What attempt `number`'s environment carries in `TRACEPARENT`.
    pub fn attempt_traceparent(&self, number: u32) -> [u8; LEN] {
        format(&self.trace_id, &self.attempt_span(number), self.sampled)
    }

    /// What the `--on-retry` hook's environment carries: the run's span,
    /// since the hook runs between attempts, in none of theirs.
    pub fn run_traceparent(&self) -> [u8; LEN] {
        format(&self.trace_id, &self.run_span, self.sampled)
    }
}

/// A span id is never all zeros.
fn nonzero(id: u64) -> [u8; 8] {
    id.max(1).to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_is_read() {
        let parent = parse(VALID).unwrap();
        assert_eq!(parent.trace_id[..3], [0x4b, 0xf9, 0x2f]);
        assert_eq!(parent.span_id, 0x00f0_67aa_0ba9_02b7_u64.to_be_bytes());
        assert!(parent.sampled);
        let unsampled = parse(&VALID.replace("-01", "-00")).unwrap();
        assert!(!unsampled.sampled);
        assert_eq!(
            &format(&parent.trace_id, &parent.span_id, true),
            VALID.as_bytes()
        );
    }

    #[test]
    fn a_later_version_is_read_leniently() {
        let later = VALID.replacen("00", "cc", 1);
        assert!(parse(&later).is_ok());
        assert!(parse(&format!("{later}-what-comes-next")).is_ok());
        // Version 00 has nothing after its flags; a later one only after a dash.
        assert!(parse(&format!("{VALID}-x")).is_err());
        assert!(parse(&format!("{later}x")).is_err());
    }

    #[test]
    fn invalid_traceparents_are_refused() {
        let zero_trace = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
        let zero_span = "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01";
        for bad in [
            "",
            "garbage",
            &VALID.replacen("00", "ff", 1),
            &VALID.to_uppercase(),
            zero_trace,
            zero_span,
            &VALID[..54],
            &VALID.replace('-', "_"),
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse(zero_span), Err("an all-zero id is invalid"));
        assert_eq!(
            parse(&VALID.replacen("00", "ff", 1)),
            Err("version ff is invalid")
        );
    }

    #[test]
    fn attempts_get_distinct_spans_of_the_run_trace() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let root = Ids::new(None, Sampler::default(), &mut rng);
        assert_ne!(root.trace_id, [0; 16]);
        assert!(root.sampled && root.parent_span.is_none());
        let spans: std::collections::HashSet<[u8; 8]> =
            (1..=10_000).map(|n| root.attempt_span(n)).collect();
        assert_eq!(spans.len(), 10_000);
        assert!(!spans.contains(&root.run_span));
        let parent = parse(VALID).unwrap();
        let child = Ids::new(Some(parent), Sampler::default(), &mut rng);
        assert_eq!(child.trace_id, parent.trace_id);
        assert_eq!(child.parent_span, Some(parent.span_id));
        let carried = child.attempt_traceparent(3);
        let seen = parse(std::str::from_utf8(&carried).unwrap()).unwrap();
        assert_eq!(seen.trace_id, parent.trace_id);
        assert_eq!(seen.span_id, child.attempt_span(3));
        assert!(seen.sampled);
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_without_panic(text in "\\PC{0,80}") {
            let _ = parse(&text);
        }

        #[test]
        fn what_is_written_reads_back(trace in proptest::array::uniform16(1u8..), span in proptest::array::uniform8(1u8..), sampled: bool) {
            let written = format(&trace, &span, sampled);
            let read = parse(std::str::from_utf8(&written).unwrap()).unwrap();
            proptest::prop_assert_eq!(read, Parent { trace_id: trace, span_id: span, sampled });
        }
    }
}
