//! The outside world as the attempt loop sees it: a trait, so the loop's
//! tests run on a fake clock (`fake.rs`) and the supervisor is the real one.

use std::time::{Instant, SystemTime};

use crate::run::hooks::Once;
use crate::run::outcome::{Attempt, AttemptInfo, Ended, SpawnError, Unsettled};
use crate::state::{breaker, budget, throttle};

/// The outside world as the runner sees it.
pub trait Host {
    fn now(&self) -> Instant;
    /// Runs one attempt to its end, stopping it at `deadline`.
    fn run(
        &mut self,
        attempt: AttemptInfo,
        deadline: Option<Instant>,
    ) -> Result<Attempt, SpawnError>;
    /// The process id of the attempt `run` last ran, if it started.
    fn started(&self) -> Option<u32> {
        None
    }
    /// Sleeps until `until`; returns the signal that cut it short, if any.
    fn sleep_until(&mut self, until: Instant) -> Option<i32>;
    /// With `--stdout-once`: where the attempt that just ended sends its
    /// held-back stdout (stdout if it ends the run, else stderr).
    fn settle_output(&mut self, to_stdout: bool) -> Result<(), Unsettled>;
    /// With `--stdout-once`, when a signal ends the run: forgets the held-back
    /// stdout instead of writing it; returns how many bytes that was.
    fn drop_output(&mut self) -> u64 {
        0
    }
    /// Runs the `--on-retry` shell command after failed attempt `attempt`.
    fn run_hook(
        &mut self,
        script: &str,
        attempt: u32,
        exit_code: i32,
        deadline: Option<Instant>,
    ) -> Result<Ended, SpawnError>;
    /// Runs `--on-start` or `--on-exit` to its end, stopped at its timeout
    /// and at a second signal.
    fn run_once(&mut self, hook: &Once<'_>) -> Result<Ended, SpawnError>;
    /// `--budget`: takes `tokens` for a retry from the shared budget.
    /// Without one, every retry is granted.
    fn withdraw(&mut self, _tokens: u32) -> budget::Withdrawal {
        budget::Withdrawal::GRANTED
    }
    /// `--budget`: gives `tokens` back after a success; a warning to log.
    fn deposit(&mut self, _tokens: u32) -> Option<String> {
        None
    }
    /// `--breaker`: asked once, before the first attempt, whether the
    /// command may start. Without one, it may.
    fn admit(&mut self) -> breaker::Asked {
        breaker::Asked::default()
    }
    /// `--breaker`: told once, at the run's end, how it ended; a warning to log.
    fn finish(&mut self, _ended: breaker::Ended) -> Option<String> {
        None
    }
    /// `--breaker`: its name, and its circuit as the run last saw it and
    /// when (after `finish`, else as `admit` found it), asked once the run
    /// is over. Without one, none.
    fn circuit(&self) -> Option<(&str, breaker::Circuit, SystemTime)> {
        None
    }
    /// `--throttle`: asked before every attempt whether it may run,
    /// decided by `draw` (uniform in [0, 1)); `told`: whether the service
    /// accepted the attempt before, if one ran since. Without one, it may.
    fn throttle(&mut self, _told: Option<bool>, _draw: f64) -> throttle::Asked {
        throttle::Asked::default()
    }
    /// `--throttle`: told at the run's end whether the service accepted
    /// its last attempt, if one ran since it was asked; a warning to log.
    fn throttle_end(&mut self, _told: Option<bool>) -> Option<String> {
        None
    }
    /// `--throttle`: its name, and what the run last saw of it, asked once
    /// the run is over. Without one, or once skipped, none.
    fn throttle_seen(&self) -> Option<(&str, throttle::Seen)> {
        None
    }
}
