//! `retry`: rerun a failing command with exponential backoff and jitter.
//!
//! Reading order: `cli` (flags) → `config` (validation) → `runner` (the
//! attempt loop, using `policy`, `strategy` and `codes`) → `supervisor`
//! (the child process) with `signals` → `events` rendered by `log`.
//! The modes that run no command: `plan` and `simulate`, printed by `report`.

mod cli;
mod codes;
mod config;
mod countdown;
mod duration;
mod events;
mod generate;
mod log;
mod pipes;
mod plan;
mod policy;
mod report;
mod runner;
mod signals;
mod simulate;
mod status;
mod strategy;
mod supervisor;
mod usage;

use std::io::Write;
use std::process::ExitCode;

use crate::config::{Config, Mode};

/// The whole program: parse, validate, then run the chosen mode.
pub fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let config = match cli::parse_from(&args).and_then(Config::from_cli) {
        Ok(config) => config,
        Err(error) => return usage::exit(&error, &args),
    };
    let code = match &config.mode {
        Mode::Run => run(&config),
        Mode::Plan => plan::print(config.backoff, config.attempts, config.seed, config.format),
        Mode::Simulate(options) => simulate::run(options, config.seed, config.format),
        Mode::Completions(shell) => print(generate::completions(*shell)),
        Mode::Man => print(generate::man()),
    };
    ExitCode::from(code)
}

/// Writes a mode's output; 1 if stdout is closed or full.
fn print(bytes: &[u8]) -> u8 {
    u8::from(std::io::stdout().write_all(bytes).is_err())
}

/// The real thing: run COMMAND until it succeeds or retry gives up.
fn run(config: &Config) -> u8 {
    let signals = match signals::Signals::install() {
        Ok(signals) => signals,
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "retry: cannot install signal handlers: {error}"
            );
            return 126;
        }
    };
    let mut host = supervisor::Supervisor::new(
        &config.program,
        &config.args,
        config.foreground,
        config.kill_after,
        signals,
        config.log_format == cli::LogFormat::Text
            && config.verbosity != config::Verbosity::Quiet
            && countdown::enabled(),
        pipes::Pipes::new(&config.pipes),
    );
    let log = log::Log::new(config.log_format, config.verbosity);
    let seed = config.seed;
    let code = runner::run(config, &mut host, &mut |event| log.emit(event), || {
        strategy::rng(seed)
    });
    u8::try_from(code).unwrap_or(u8::MAX)
}
