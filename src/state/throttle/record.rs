//! The throttle's record on this host: `retry-throttle 1`, the start of the
//! current fixed window (milliseconds since the epoch, on the host's
//! clock), the requests and accepts it counted, those of the window before,
//! and a checksum, in a line of fixed width (`state::store::file`'s seal):
//! an update is one write of one length, and a torn or edited record is
//! refused. Five plain numbers, as `window.rs` keeps them.

use super::window::{Tally, Window};
use crate::state::store::file::{seal, unseal};

const MAGIC: &str = "retry-throttle 1";
pub(super) const RECORD_LEN: usize = MAGIC.len() + 5 * (1 + 20) + 1 + 16 + 1;

pub(super) fn encode(window: &Window) -> String {
    let Window {
        start_ms,
        current,
        previous,
    } = window;
    seal(&format!(
        "{MAGIC} {start_ms:020} {:020} {:020} {:020} {:020}",
        current.requests, current.accepts, previous.requests, previous.accepts
    ))
}

/// The window a record holds, if `bytes` is a whole, valid one: the right
/// length, shape and sum, and five whole numbers (a sign, a fraction or a
/// `NaN` is no record).
pub(super) fn decode(bytes: &[u8]) -> Option<Window> {
    let body = unseal(bytes, RECORD_LEN)?.strip_prefix(MAGIC)?;
    let mut fields = body.split(' ').skip(1).map(|f| {
        f.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| f.parse::<u64>().ok())
            .flatten()
    });
    let mut next = || fields.next().flatten();
    let window = Window {
        start_ms: next()?,
        current: Tally {
            requests: next()?,
            accepts: next()?,
        },
        previous: Tally {
            requests: next()?,
            accepts: next()?,
        },
    };
    fields.next().is_none().then_some(window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_reject_any_damage() {
        let window = Window {
            start_ms: 1_792_567_680_000,
            current: Tally {
                requests: 101,
                accepts: 10,
            },
            previous: Tally {
                requests: u64::MAX,
                accepts: 0,
            },
        };
        let record = encode(&window);
        assert_eq!(record.len(), RECORD_LEN);
        assert_eq!(decode(record.as_bytes()), Some(window));
        assert_eq!(
            decode(encode(&Window::default()).as_bytes()),
            Some(Window::default())
        );
        // Any cut or changed byte breaks the seal (`file.rs` tests each);
        // one of each here, that decode asks the seal.
        assert_eq!(decode(&record.as_bytes()[..RECORD_LEN - 1]), None);
        let edited = record.replacen("101", "901", 1);
        assert_eq!(decode(edited.as_bytes()), None);
    }

    /// Sealed with a good sum, as a user who knows the format could write
    /// it: a negative count, a NaN or a fraction is still no record.
    #[test]
    fn a_sealed_record_of_other_numbers_is_refused() {
        let pad = |f: &str| format!("{f:0>20}");
        for bad in ["-0000000000000000001", "NaN", "+1", "1.5", "inf"] {
            let body = format!(
                "{MAGIC} {} {} {} {} {}",
                pad("1"),
                pad(bad),
                pad("1"),
                pad("0"),
                pad("0")
            );
            let line = seal(&body);
            assert_eq!(line.len(), RECORD_LEN, "{bad}");
            assert_eq!(decode(line.as_bytes()), None, "{bad}");
        }
    }
}
