//! The budget's record on disk: `retry-budget 2`, the bucket's tokens in
//! thousandths, its time in nanoseconds, and a checksum, in a line of
//! fixed width, so an update is one write of one length and a torn or
//! edited record is refused. A `retry-budget 1` record (its time in
//! milliseconds, before the refill was exact) is still read.

use super::Bucket;

/// The record: `retry-budget 2`, thousandths, time, checksum; fixed width.
const MAGIC: &str = "retry-budget 2";
/// The first version, of the same width: its time is in milliseconds.
const MAGIC_MS: &str = "retry-budget 1";
pub(super) const RECORD_LEN: usize = MAGIC.len() + 1 + 20 + 1 + 20 + 1 + 16 + 1;

pub(super) fn encode(bucket: Bucket) -> String {
    let body = format!("{MAGIC} {:020} {:020}", bucket.milli, bucket.at_ns);
    format!("{body} {:016x}\n", fnv1a(body.as_bytes()))
}

/// The bucket a record holds, if it is one: the right length, shape and sum.
pub(super) fn decode(bytes: &[u8]) -> Option<Bucket> {
    let text = std::str::from_utf8(bytes).ok()?;
    let line = text.strip_suffix('\n')?;
    let (body, sum) = line.rsplit_once(' ')?;
    if bytes.len() != RECORD_LEN || u64::from_str_radix(sum, 16).ok()? != fnv1a(body.as_bytes()) {
        return None;
    }
    let (fields, per_unit) = match body.strip_prefix(MAGIC) {
        Some(fields) => (fields, 1),
        None => (body.strip_prefix(MAGIC_MS)?, 1_000_000),
    };
    let mut fields = fields.split(' ').skip(1);
    let milli = fields.next()?.parse().ok()?;
    let at = fields.next()?.parse::<u64>().ok()?;
    Some(Bucket {
        milli,
        at_ns: at.saturating_mul(per_unit),
    })
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

    #[test]
    fn records_round_trip_and_reject_any_damage() {
        let bucket = Bucket {
            milli: 12_345,
            at_ns: 1_792_567_680_000_000_000,
        };
        let record = encode(bucket);
        assert_eq!(record.len(), RECORD_LEN);
        assert_eq!(decode(record.as_bytes()), Some(bucket));
        let extremes = Bucket {
            milli: u64::MAX,
            at_ns: u64::MAX,
        };
        assert_eq!(decode(encode(extremes).as_bytes()), Some(extremes));
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
        // A first-version record: its milliseconds read as nanoseconds.
        let body = format!("retry-budget 1 {:020} {:020}", 12_345, 1_792_567_680_000u64);
        let old = format!("{body} {:016x}\n", fnv1a(body.as_bytes()));
        assert_eq!(decode(old.as_bytes()), Some(bucket));
    }
}
