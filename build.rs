//! Named platform conditions, so each list of platforms is written once
//! (here) and every `#[cfg]` says what it needs rather than where.

fn main() {
    // `--cfg retry_without="TRICK"` turns one start-up trick off, so that
    // `bash bench/tricks.sh` can measure what each still saves.
    println!(
        "cargo::rustc-check-cfg=cfg(retry_without, values(\"arena\", \"c_main\", \"leak\", \"lean_parse\", \"posix_spawn\"))"
    );
    cfg_aliases::cfg_aliases! {
        // nix's `posix_spawn` (its `spawn` module's platforms); the
        // `portable` feature takes std's fork and exec instead.
        posix_spawn: { all(not(feature = "portable"), not(retry_without = "posix_spawn"), any(
            target_os = "linux", target_os = "freebsd", target_os = "netbsd", target_vendor = "apple"
        )) },
        // nix's `ppoll`, which waits to the nanosecond; elsewhere `poll`.
        precise_wait: { all(not(feature = "portable"), any(
            target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "dragonfly"
        )) },
        // Linux's child subreaper; elsewhere (and `portable`) its twin.
        subreaper: { all(target_os = "linux", not(feature = "portable")) },
        // Signals read from a signalfd in the wait (no handler per
        // signal); elsewhere (and `portable`) handlers and self-pipes.
        signalfd: { all(target_os = "linux", not(feature = "portable")) },
    }
}
