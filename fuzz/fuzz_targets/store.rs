//! A `--budget-store` value: never a panic, and never a password shown. A
//! mark is put just before the value's last `@`, where a password ends:
//! it is in no parser error, not in the value as a usage error quotes it,
//! nor in that usage line, and not in a valid store as shown when it is
//! the store's password (its user and a unix:// path are shown as given).
#![no_main]

use std::ffi::OsString;

use libfuzzer_sys::fuzz_target;
use retry_jitter::fuzzing::{argv, store, store_masked};

/// Nothing retry's messages hold, nor what masks them.
const MARK: &str = "\u{7f}Pw\u{7f}";

fuzz_target!(|text: &str| {
    let Some(at) = text.rfind('@').filter(|_| !text.contains(MARK)) else {
        let _ = store(text);
        return;
    };
    let value = format!("{}{MARK}{}", &text[..at], &text[at..]);
    let mut shown = vec![store_masked(&value)];
    match store(&value) {
        Err(error) => shown.push(error),
        // A password: after the `:` of what ends in the mark.
        Ok(Some(store)) if store.starts_with("redis://") && store.contains(":***@") => {
            shown.push(store)
        }
        Ok(_) => {}
    }
    let args: Vec<OsString> = ["retry", "--budget", "ci", "--budget-store", &value, "true"]
        .iter()
        .map(Into::into)
        .collect();
    if let Err(line) = argv(&args) {
        shown.push(line);
    }
    for text in shown {
        assert!(!text.contains(MARK), "{value:?}: {text:?}");
    }
});
