//! The floor of the benchmark: the least a Rust program can do to run a
//! command N times (std's posix_spawn and a blocking wait, nothing else).
//! retry's rows are read against it to see what retry itself adds.
//! Usage: floor N COMMAND [ARGS...]
fn main() {
    let mut args = std::env::args().skip(1);
    let n: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let program = args.next().unwrap_or_else(|| "true".into());
    let rest: Vec<String> = args.collect();
    let mut code = 0;
    for _ in 0..n {
        let status = std::process::Command::new(&program).args(&rest).status();
        code = status.ok().and_then(|s| s.code()).unwrap_or(1);
    }
    std::process::exit(code);
}
