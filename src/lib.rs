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

use std::io::Write;
use std::process::ExitCode;

use clap::error::ErrorKind;

use crate::config::{Config, Mode};

/// Bad usage, as documented: nothing has run.
const USAGE: u8 = 2;

/// The whole program: parse, validate, then run the chosen mode.
pub fn main() -> ExitCode {
    let config = match cli::parse().and_then(Config::from_cli) {
        Ok(config) => config,
        Err(error) => return usage_error(&error),
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
