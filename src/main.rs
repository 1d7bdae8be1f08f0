//! The `retry` binary: everything lives in the library (`src/lib.rs`), so
//! the fuzz targets and benchmarks can reach the same parsers.
//!
//! retry supplies the C `main` itself (`no_main`) instead of std's entry
//! point, whose probe of the main thread's stack (it reads /proc/self/maps
//! to report stack overflows) and signal stack cost about 5 % of retry's
//! start-up (bench/README.md). What of that entry point retry relies on,
//! `platform::start` does.
#![no_main]

/// The start-up arena before the system allocator (see src/arena.rs).
#[global_allocator]
static ALLOCATOR: retry_jitter::arena::Arena = retry_jitter::arena::Arena::new();

#[allow(unsafe_code)] // `no_mangle`: the C runtime calls this `main`.
#[unsafe(no_mangle)]
extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: `argc` and `argv` are the C runtime's, as `start` needs them.
    let args = unsafe { retry_jitter::start(argc, argv) };
    // The process exits right after: freeing clap's parser would only cost
    // start-up time (src/cli/mod.rs, `AfterParsing`).
    let status = retry_jitter::main(args, retry_jitter::AfterParsing::Leak);
    // `exit` flushes stdout, as returning from std's `main` would.
    std::process::exit(i32::from(status))
}
