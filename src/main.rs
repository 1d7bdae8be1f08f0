//! The `retry` binary: everything lives in the library (`src/lib.rs`), so
//! the fuzz targets and benchmarks can reach the same parsers.

fn main() -> std::process::ExitCode {
    retry_jitter::main()
}
