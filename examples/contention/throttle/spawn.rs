//! What an attempt costs to start on this machine while the cells run:
//! the simulation's `--spawn-time`, measured, not guessed. A probe beside
//! each batch runs `retry` over the client against a server of its own
//! that throttles every request, once with one attempt and once with
//! `ATTEMPTS` 1 ms apart; an attempt's cost is the difference over the
//! attempts added, less the 1 ms sleep and the network the client sleeps
//! both ways (which the simulation draws itself). What is left is what
//! the model lacks: a process's start, its connection and end, and
//! retry's reaping of it, at the machine's load of the moment.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::service::{self, NET};

/// Attempts of the long run of a pair.
const ATTEMPTS: u32 = 4;
/// The pause between pairs: a probe adds little to the batch's load.
const PAUSE: Duration = Duration::from_millis(200);

/// The probe's server, which throttles every request, for the whole run.
pub struct Probe {
    port: u16,
    _server: service::Shared,
}

impl Probe {
    pub fn new() -> Result<Self, String> {
        let (port, _server) =
            service::serve(0, Duration::from_secs(1), 7).map_err(|e| e.to_string())?;
        Ok(Probe { port, _server })
    }

    /// Samples of an attempt's start-up, one a pair, until `stop` is set.
    pub fn sample(&self, retry: &Path, stop: &AtomicBool) -> Result<Vec<Duration>, String> {
        let me = std::env::current_exe().map_err(|e| e.to_string())?;
        let run = |attempts: u32| -> Result<Duration, String> {
            let started = Instant::now();
            Command::new(retry)
                .args(["-q", "-n", &attempts.to_string(), "--jitter", "none"])
                .args(["--base", "1ms", "--cap", "1ms", "--"])
                .arg(&me)
                .args(["throttle-client", &self.port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map_err(|e| format!("cannot start {}: {e}", retry.display()))?;
            Ok(started.elapsed())
        };
        let mut samples = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let (one, many) = (run(1)?, run(ATTEMPTS)?);
            samples.push(per_attempt(one, many));
            std::thread::sleep(PAUSE);
        }
        Ok(samples)
    }
}

/// An attempt's start-up from a pair's times: the attempts added, less
/// the sleep before each and the client's network both ways.
fn per_attempt(one: Duration, many: Duration) -> Duration {
    let added = many.saturating_sub(one) / (ATTEMPTS - 1);
    let known = Duration::from_millis(1) + Duration::from_secs_f64(2.0 * NET.0 / 1e3);
    added.saturating_sub(known)
}

/// The median of `samples` and their 10th and 90th percentiles (nearest
/// rank); zeros for none.
pub fn summary(samples: &mut [Duration]) -> [Duration; 3] {
    if samples.is_empty() {
        return [Duration::ZERO; 3];
    }
    samples.sort();
    let rank = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    [rank(0.5), rank(0.1), rank(0.9)]
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn an_attempt_costs_what_the_added_attempts_took_beyond_sleeps_and_network() {
        // 3 attempts added 75 ms: 25 each, of which 1 slept and 20 the network.
        assert_eq!(per_attempt(25 * MS, 100 * MS), 4 * MS);
        // Never below nothing.
        assert_eq!(per_attempt(25 * MS, 60 * MS), Duration::ZERO);
        assert_eq!(per_attempt(90 * MS, 60 * MS), Duration::ZERO);
    }

    #[test]
    fn the_summary_is_the_median_and_the_tenth_and_ninetieth() {
        let mut samples: Vec<Duration> = (1..=11).rev().map(|i| i * MS).collect();
        assert_eq!(summary(&mut samples), [6 * MS, 2 * MS, 10 * MS]);
        assert_eq!(summary(&mut []), [Duration::ZERO; 3]);
    }
}
