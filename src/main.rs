//! `retry`: rerun a failing command with exponential backoff and jitter.
//!
//! Reading order: `cli` (flags) → `config` (validation) → `runner` (the
//! attempt loop, using `policy`, `strategy` and `codes`) → `supervisor`
//! (the child process) with `signals` → `events` rendered by `log`.

mod cli;
mod codes;
mod config;
mod duration;
mod events;
mod log;
mod policy;
mod runner;
mod signals;
mod status;
mod strategy;
mod supervisor;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::cli::Cli;
use crate::config::Config;

/// Bad usage, as documented: nothing has run.
const USAGE: u8 = 2;

fn main() -> ExitCode {
    let config = match Cli::try_parse().and_then(Config::from_cli) {
        Ok(config) => config,
        Err(error) => return usage_error(&error),
    };
    let signals = match signals::Signals::install() {
        Ok(signals) => signals,
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "retry: cannot install signal handlers: {error}"
            );
            return ExitCode::from(126);
        }
    };
    let mut host = supervisor::Supervisor::new(
        &config.program,
        &config.args,
        config.foreground,
        config.kill_after,
        signals,
    );
    let log = log::Log::new(config.log_format, config.verbosity);
    let seed = config.seed;
    let code = runner::run(
        &config,
        &mut host,
        &mut |event| log.emit(event),
        || match seed {
            Some(seed) => ChaCha8Rng::seed_from_u64(seed),
            None => rand::make_rng(),
        },
    );
    ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX))
}

/// Help and version go to stdout as usual; a real error becomes one line on
/// stderr (clap's first line plus its tip, if any) and exit status 2.
fn usage_error(error: &clap::Error) -> ExitCode {
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = error.print();
        return ExitCode::SUCCESS;
    }
    let rendered = error.render().to_string();
    // clap's message runs until its usage block; its tips become one aside.
    let mut parts: Vec<&str> = Vec::new();
    let mut tip = None;
    for line in rendered.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        match line.strip_prefix("tip: ") {
            Some(text) => {
                tip.get_or_insert(text);
            }
            None => parts.push(line.strip_prefix("error: ").unwrap_or(line)),
        }
    }
    let mut line = format!("retry: {}", parts.join(" "));
    if let Some(tip) = tip {
        line.push_str(&format!(" ({tip})"));
    }
    let _ = writeln!(std::io::stderr(), "{line}");
    ExitCode::from(USAGE)
}
