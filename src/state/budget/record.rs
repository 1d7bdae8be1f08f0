//! The budget's record on disk: `retry-budget 2`, the bucket's tokens in
//! thousandths, its time in nanoseconds, its size and refill (millionths
//! of a token a second), and a checksum, in a line of fixed width, so an
//! update is one write of one length and a torn or edited record is
//! refused. A `retry-budget 1` record (its time in milliseconds, no size:
//! before the refill was exact and the bucket knew its size) is still read.

use super::{Bucket, Size};

/// The record: `retry-budget 2`, thousandths, time, size, refill,
/// checksum; fixed width.
const MAGIC: &str = "retry-budget 2";
pub(super) const RECORD_LEN: usize = MAGIC.len() + 1 + 20 + 1 + 20 + 1 + 10 + 1 + 20 + 1 + 16 + 1;
/// The first version: no size, its time in milliseconds.
const MAGIC_1: &str = "retry-budget 1";
const RECORD_1_LEN: usize = MAGIC_1.len() + 1 + 20 + 1 + 20 + 1 + 16 + 1;

/// Refill rates are kept in millionths of a token a second.
const MICRO: f64 = 1e6;

/// What a record holds: the bucket, and its size (none in a first-version
/// record: the process's own applies).
pub(super) type Record = (Bucket, Option<Size>);

pub(super) fn encode(bucket: Bucket, size: Size) -> String {
    let refill = (size.refill * MICRO).round() as u64;
    let body = format!(
        "{MAGIC} {:020} {:020} {:010} {refill:020}",
        bucket.milli, bucket.at_ns, size.tokens
    );
    format!("{body} {:016x}\n", fnv1a(body.as_bytes()))
}

/// The record a file holds, if it is one: the right length, shape and sum.
pub(super) fn decode(bytes: &[u8]) -> Option<Record> {
    let text = std::str::from_utf8(bytes).ok()?;
    let line = text.strip_suffix('\n')?;
    let (body, sum) = line.rsplit_once(' ')?;
    if u64::from_str_radix(sum, 16).ok()? != fnv1a(body.as_bytes()) {
        return None;
    }
    if let Some(fields) = body
        .strip_prefix(MAGIC)
        .filter(|_| bytes.len() == RECORD_LEN)
    {
        let mut fields = fields.split(' ').skip(1);
        let milli = fields.next()?.parse().ok()?;
        let at_ns = fields.next()?.parse().ok()?;
        let tokens = fields.next()?.parse().ok()?;
        let refill = fields.next()?.parse::<u64>().ok()? as f64 / MICRO;
        return Some((Bucket { milli, at_ns }, Some(Size { tokens, refill })));
    }
    let fields = body
        .strip_prefix(MAGIC_1)
        .filter(|_| bytes.len() == RECORD_1_LEN)?;
    let mut fields = fields.split(' ').skip(1);
    let milli = fields.next()?.parse().ok()?;
    let at_ms = fields.next()?.parse::<u64>().ok()?;
    Some((
        Bucket {
            milli,
            at_ns: at_ms.saturating_mul(1_000_000),
        },
        None,
    ))
}

/// FNV-1a, 64 bits: enough to tell a record from a torn or edited one.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: Size = Size {
        tokens: 500,
        refill: 0.3,
    };

    #[test]
    fn records_round_trip_and_reject_any_damage() {
        let bucket = Bucket {
            milli: 12_345,
            at_ns: 1_792_567_680_000_000_000,
        };
        let record = encode(bucket, SIZE);
        assert_eq!(record.len(), RECORD_LEN);
        assert_eq!(decode(record.as_bytes()), Some((bucket, Some(SIZE))));
        let extremes = Bucket {
            milli: u64::MAX,
            at_ns: u64::MAX,
        };
        let huge = Size {
            tokens: u32::MAX,
            refill: 1e12,
        };
        assert_eq!(
            decode(encode(extremes, huge).as_bytes()),
            Some((extremes, Some(huge)))
        );
        // Every truncation and every single-byte change is refused.
        for cut in 0..RECORD_LEN {
            assert_eq!(decode(&record.as_bytes()[..cut]), None, "cut at {cut}");
        }
        for at in 0..RECORD_LEN {
            let mut damaged = record.clone().into_bytes();
            damaged[at] = if damaged[at] == b'1' { b'2' } else { b'1' };
            assert_eq!(decode(&damaged), None, "byte {at}");
        }
        assert_eq!(decode(b"\xff\xfe garbage"), None);
        // A first-version record: no size, its milliseconds as nanoseconds.
        let body = format!("retry-budget 1 {:020} {:020}", 12_345, 1_792_567_680_000u64);
        let old = format!("{body} {:016x}\n", fnv1a(body.as_bytes()));
        assert_eq!(old.len(), RECORD_1_LEN);
        assert_eq!(decode(old.as_bytes()), Some((bucket, None)));
    }
}
