//! `--base 250ms` and every other duration: never a panic, and an accepted
//! duration is never negative or past `Duration::MAX` (a `Duration` can't
//! be), while a refusal offers only hints that parse themselves.
#![no_main]

use libfuzzer_sys::fuzz_target;
use retry_jitter::fuzzing::duration;

fuzz_target!(|text: &str| {
    if let Err(message) = duration(text) {
        assert!(!message.contains('\n'), "{message:?}");
        if message.contains("did you mean") {
            for hint in message.split('`').skip(1).step_by(2) {
                assert!(
                    duration(hint).is_ok(),
                    "{text:?}: hint {hint:?} does not parse"
                );
            }
        }
    }
});
