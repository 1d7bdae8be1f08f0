//! `--retry-on 1,2,75-78`: never a panic, and an accepted list written back
//! parses to the same list.
#![no_main]

use libfuzzer_sys::fuzz_target;
use retry_jitter::fuzzing::codes;

fuzz_target!(|text: &str| {
    if let Ok(written) = codes(text) {
        assert_eq!(codes(&written).as_ref(), Ok(&written), "{text:?}");
    }
});
