//! The C library of the binary under test, which gives retry some of its
//! words and numbers: strerror's texts and, on Linux, where the real-time
//! signals start (glibc keeps 32 and 33 for itself, musl 32 to 34). A test
//! that expects those asks here, never `cfg(target_env)` nor the `libc`
//! crate: they are this test binary's C library, and `.ci/run` runs the
//! glibc tests against the musl artifact.
//!
//! Whoever sets `RETRY_BIN_UNDER_TEST` says which library it has in
//! `RETRY_BIN_UNDER_TEST_LIBC` (`gnu` or `musl`, as `target_env` names
//! them); unset, it is this binary's own. Said rather than read from the
//! binary: a static binary names its C library nowhere reliably, and
//! .ci/cross's binary under test is a script that starts qemu. A wrong
//! word fails `the_declared_c_library_is_the_binarys` below, by name.

use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CLibrary {
    Glibc,
    Musl,
    /// Elsewhere (macOS, the BSDs, Windows): the platform's one, this
    /// test binary's too.
    Platform,
}

const OWN: CLibrary = if cfg!(all(target_os = "linux", target_env = "musl")) {
    CLibrary::Musl
} else if cfg!(all(target_os = "linux", target_env = "gnu")) {
    CLibrary::Glibc
} else {
    CLibrary::Platform
};

const VARIABLE: &str = "RETRY_BIN_UNDER_TEST_LIBC";

/// The C library of the binary under test (`harness::bin`).
pub fn under_test() -> CLibrary {
    static CHOSEN: OnceLock<CLibrary> = OnceLock::new();
    *CHOSEN.get_or_init(|| match std::env::var(VARIABLE) {
        Err(_) => OWN,
        Ok(word) => match word.as_str() {
            "gnu" => CLibrary::Glibc,
            "musl" => CLibrary::Musl,
            _ => panic!("{VARIABLE}={word:?}: not `gnu` nor `musl`"),
        },
    })
}

/// Whether the binary under test has this test binary's C library.
fn same() -> bool {
    under_test() == OWN
}

/// The text the binary under test gives for `errno`, as retry's messages
/// hold it (without std's " (os error N)").
#[cfg(unix)]
pub fn strerror(errno: i32) -> String {
    if same() {
        let text = std::io::Error::from_raw_os_error(errno).to_string();
        return text.split(" (os error").next().unwrap().to_owned();
    }
    // The other Linux library's words, for the numbers tests need.
    let text = match (under_test(), errno) {
        (CLibrary::Glibc, libc::EMFILE) => "Too many open files",
        (CLibrary::Musl, libc::EMFILE) => "No file descriptors available",
        _ => panic!("no {:?} text for errno {errno}: add it here", under_test()),
    };
    text.to_owned()
}

/// SIGRTMIN of the binary under test: the first signal retry names
/// `SIGRTMIN+0` and takes for a real-time one. (SIGRTMAX is 64 in both.)
#[cfg(target_os = "linux")]
pub fn sigrtmin() -> i32 {
    match under_test() {
        _ if same() => libc::SIGRTMIN(),
        CLibrary::Musl => 35,
        _ => 34,
    }
}

/// The signals the C library of the binary under test keeps for itself
/// (32 up to its SIGRTMIN), one bit each, bit N-1 for signal N, as
/// /proc/PID/status's masks have them.
#[cfg(target_os = "linux")]
pub fn reserved_signals_mask() -> u64 {
    (32..sigrtmin()).map(|s| 1u64 << (s - 1)).sum()
}

/// The library declared is the binary's: a command that dies of signal
/// 35 is `SIGRTMIN+1` to glibc's retry and `SIGRTMIN+0` to musl's. (Not
/// under qemu-user, which renumbers real-time signals: .ci/cross.)
#[test]
#[cfg(target_os = "linux")]
fn the_declared_c_library_is_the_binarys() {
    if std::env::var_os("RETRY_TESTS_UNDER_QEMU").is_some() {
        eprintln!("skipped: qemu-user renumbers the real-time signals");
        return;
    }
    let out = super::retry(&["-n", "1", "--", "sh", "-c", "kill -35 $$"]).run();
    let offset = 35 - sigrtmin();
    assert!(
        out.stderr
            .contains(&format!("signal 35 (SIGRTMIN+{offset})")),
        "the binary under test does not have {:?}'s SIGRTMIN ({}); \
         is {VARIABLE} right?\n{}",
        under_test(),
        sigrtmin(),
        out.stderr
    );
}
