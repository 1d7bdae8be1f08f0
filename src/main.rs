//! The `retry` binary: everything lives in the library (`src/lib.rs`), so
//! the fuzz targets and benchmarks can reach the same parsers.

/// The start-up arena before the system allocator (see src/arena.rs).
#[global_allocator]
static ALLOCATOR: retry_jitter::arena::Arena = retry_jitter::arena::Arena::new();

fn main() -> std::process::ExitCode {
    retry_jitter::main()
}
