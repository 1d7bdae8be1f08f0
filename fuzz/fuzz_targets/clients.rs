//! `--clients 1,2,10-190:10`: never a panic, and an accepted list holds
//! 1 to 100000 counts, each 1 to 100000.
#![no_main]

use libfuzzer_sys::fuzz_target;
use retry_jitter::fuzzing::clients;

fuzz_target!(|text: &str| {
    if let Ok(counts) = clients(text) {
        assert!(!counts.is_empty() && counts.len() <= 100_000, "{text:?}");
        assert!(
            counts.iter().all(|&n| (1..=100_000).contains(&n)),
            "{text:?}"
        );
    }
});
