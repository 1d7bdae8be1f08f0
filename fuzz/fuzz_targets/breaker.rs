//! A host breaker's record (`.breakers/NAME`), as another user or a
//! damaged disk could leave it (its checksum is no secret): never a panic;
//! what is read is written back as a record that reads the same; the
//! status is two lines; and whatever end it held, a run at any time is
//! turned away no further ahead than its own longest cooldown and lease,
//! or the longer limit the record keeps with the end (issue 40: a
//! far-future end kept every run skipped; issue 50: by default for 70
//! minutes, where the run's own limit is 14). The input is also
//! read with its checksum made right, so that the fields' parser sees
//! what the fuzzer makes of them, not only the checksum's refusal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use retry_jitter::fuzzing::{breaker_horizon, breaker_record, sealed};

/// The epoch, a time of this decade, and the end of time (ns).
const NOWS: [u64; 3] = [0, 1_795_434_960_000_000_000, u64::MAX];

fuzz_target!(|bytes: &[u8]| {
    check(bytes);
    if let Ok(text) = std::str::from_utf8(bytes) {
        let body = text
            .strip_suffix('\n')
            .and_then(|line| line.rsplit_once(' '))
            .map_or(text, |(body, _)| body);
        check(&sealed(body));
    }
});

fn check(bytes: &[u8]) {
    let far = breaker_horizon();
    for now in NOWS {
        let Some(read) = breaker_record(bytes, now) else {
            continue;
        };
        let again = breaker_record(&read.written, now).expect("a record written back reads");
        assert_eq!(again.written, read.written, "{bytes:?}");
        // The state, where it is kept, and the warning of a clamped end.
        let status = &read.status;
        assert!(matches!(status.lines().count(), 2 | 3), "{status:?}");
        assert!(read.reach >= far, "{bytes:?}: {} < {far}", read.reach);
        let most = now.saturating_add(read.reach);
        let (end, skip) = (read.end, read.skip_until);
        assert!(
            end.is_none_or(|end| end <= most),
            "{bytes:?} at {now}: {end:?}"
        );
        assert!(
            skip.is_none_or(|until| until <= most),
            "{bytes:?} at {now}: {skip:?}"
        );
    }
}
