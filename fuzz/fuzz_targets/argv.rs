//! A whole command line, NUL-separated words (any bytes, not only UTF-8),
//! through clap and `Config` as `retry` takes it; a valid `--plan` also
//! computes its totals and first rows. Nothing is run. Never a panic, and a
//! refusal is one line.
#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use libfuzzer_sys::fuzz_target;
use retry_jitter::fuzzing::argv;

fuzz_target!(|data: &[u8]| {
    let mut args: Vec<OsString> = vec!["retry".into()];
    if !data.is_empty() {
        args.extend(
            data.split(|&b| b == 0)
                .map(|w| std::ffi::OsStr::from_bytes(w).to_owned()),
        );
    }
    if let Err(line) = argv(&args) {
        assert!(
            line.starts_with("retry: ") && !line.contains('\n'),
            "{args:?}: {line:?}"
        );
    }
});
