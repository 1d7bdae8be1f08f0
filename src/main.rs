//! The `retry` binary: everything lives in the library (`src/lib.rs`), so
//! the fuzz targets and benchmarks can reach the same parsers.
//!
//! Three start-up tricks live here, each measured by `bash bench/tricks.sh`
//! (which builds the artifact with one turned off: `--cfg
//! retry_without="…"`) and its saving stated beside it:
//!
//! - retry supplies the C `main` itself (`no_main`) instead of std's entry
//!   point, whose probe of the main thread's stack (it reads
//!   /proc/self/maps to report stack overflows) and signal stack cost
//!   43,000 instructions (18 %), 15 system calls and 9 % of start-up
//!   time. What of that entry point retry relies on, `platform::start`
//!   does.
//! - the start-up arena is the global allocator (`src/arena.rs`): 60 %
//!   more instructions and 4 % more start-up time without it.
//! - clap's parser is never freed (`AfterParsing::Leak`): 3 % of the
//!   instructions, 1.4 % of start-up time.
//!
//! (Session 15's figures, bench/README.md.)
//!
//! On Windows std's entry point stays: it reads the wide command line
//! (`platform::start`), where the C runtime's `argv` is in the ANSI code page.
#![cfg_attr(all(unix, not(retry_without = "c_main")), no_main)]

/// The start-up arena before the system allocator (see src/arena.rs).
#[cfg(not(retry_without = "arena"))]
#[global_allocator]
static ALLOCATOR: retry_jitter::arena::Arena = retry_jitter::arena::Arena::new();

/// Freeing clap's parser is the only cost of `Free` (bench/tricks.sh).
const AFTER_PARSING: retry_jitter::AfterParsing = match cfg!(retry_without = "leak") {
    true => retry_jitter::AfterParsing::Free,
    false => retry_jitter::AfterParsing::Leak,
};

/// std's entry point, for measuring what the C `main` below saves.
#[cfg(retry_without = "c_main")]
fn main() {
    #[allow(clippy::disallowed_methods)] // std's entry point fills it
    let args = std::env::args_os().collect();
    let status = retry_jitter::main(args, AFTER_PARSING);
    std::process::exit(i32::from(status))
}

/// Windows: std's entry point, the arguments from the wide API.
#[cfg(all(windows, not(retry_without = "c_main")))]
fn main() {
    let args = retry_jitter::start();
    std::process::exit(i32::from(retry_jitter::main(args, AFTER_PARSING)))
}

#[cfg(all(unix, not(retry_without = "c_main")))]
#[allow(unsafe_code)] // `no_mangle`: the C runtime calls this `main`.
#[unsafe(no_mangle)]
extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: `argc` and `argv` are the C runtime's, as `start` needs them.
    let args = unsafe { retry_jitter::start(argc, argv) };
    // The process exits right after: freeing clap's parser would only cost
    // start-up time (src/cli/mod.rs, `AfterParsing`).
    let status = retry_jitter::main(args, AFTER_PARSING);
    // `exit` flushes stdout, as returning from std's `main` would.
    std::process::exit(i32::from(status))
}
