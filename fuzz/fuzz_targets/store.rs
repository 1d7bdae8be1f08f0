//! A `--budget-store` value: never a panic, and never a password shown. A
//! mark is put where a password may sit: just before the value's last `@`,
//! where a password ends; without an `@`, just after the first `:` of the
//! authority (Redis's `redis://:password`, with no host), or after a `?`
//! or `#` (`?password=`). It is in no parser error, not in the value as a
//! usage error quotes it, nor in that usage line, and not in a valid store
//! as shown when it is the store's password (its user and a unix:// path
//! are shown as given).
#![no_main]

use std::ffi::OsString;

use libfuzzer_sys::fuzz_target;
use retry_jitter::fuzzing::{argv, store, store_masked};

/// Nothing retry's messages hold, nor what masks them.
const MARK: &str = "\u{7f}Pw\u{7f}";

fuzz_target!(|text: &str| {
    let Some(at) = password_at(text).filter(|_| !text.contains(MARK)) else {
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

/// Where a password may sit in `text`, if anywhere.
fn password_at(text: &str) -> Option<usize> {
    if let Some(at) = text.rfind('@') {
        return Some(at);
    }
    // After a scheme's `://` (RFC 3986's characters), or from the start.
    let start = match text.split_once("://") {
        Some((scheme, _))
            if scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            scheme.len() + 3
        }
        _ => 0,
    };
    let rest = &text[start..];
    let query = rest.find(['?', '#']).map(|at| at + 1);
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    // After an IPv6 address's `]`; a `:` that a host comes before and a
    // port after is no password's.
    let host_end = match authority
        .strip_prefix('[')
        .and_then(|v6| v6.split_once(']'))
    {
        Some((v6, _))
            if v6
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b".:".contains(&b)) =>
        {
            v6.len() + 2
        }
        _ => 0,
    };
    let password = authority[host_end..]
        .find(':')
        .map(|colon| host_end + colon);
    let password = password.filter(|&colon| {
        let port = &authority[colon + 1..];
        colon == 0 || port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit())
    });
    password
        .map(|colon| colon + 1)
        .or(query)
        .map(|at| start + at)
}
