//! The budget's record on disk: `retry-budget 1`, the bucket's tokens in
//! thousandths, its time, and a checksum, in a line of fixed width, so an
//! update is one write of one length and a torn or edited record is
//! refused.

use super::Bucket;

/// The record: `retry-budget 1`, thousandths, time, checksum; fixed width.
const MAGIC: &str = "retry-budget 1";
pub(super) const RECORD_LEN: usize = MAGIC.len() + 1 + 20 + 1 + 20 + 1 + 16 + 1;

pub(super) fn encode(bucket: Bucket) -> String {
    let body = format!("{MAGIC} {:020} {:020}", bucket.milli, bucket.at_ms);
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
    let mut fields = body.strip_prefix(MAGIC)?.split(' ').skip(1);
    let milli = fields.next()?.parse().ok()?;
    let at_ms = fields.next()?.parse().ok()?;
    Some(Bucket { milli, at_ms })
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
            at_ms: 1_792_567_680_000,
        };
        let record = encode(bucket);
        assert_eq!(record.len(), RECORD_LEN);
        assert_eq!(decode(record.as_bytes()), Some(bucket));
        let extremes = Bucket {
            milli: u64::MAX,
            at_ms: u64::MAX,
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
    }
}
