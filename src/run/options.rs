//! What a run of COMMAND is given, validated by `cli::config`: only what
//! the loop and the supervisor use (the outputs' settings are apart).

use std::ffi::{OsStr, OsString};
use std::time::Duration;

use crate::policy::Policy;
use crate::run::alternates::{self, Alternate, Judge, Repeat};
use crate::run::{decide, hooks, pipes};
use crate::state::{breaker, budget, throttle};
use crate::strategy::Retries;

/// Everything a run of COMMAND needs, validated (`cli::config`): each
/// group of options whole, as its group's `resolve` made it.
#[derive(Debug)]
pub struct Options {
    /// `--jitter`, `--base`, `--throttle-base`, `--cap`, `--factor`,
    /// `--max-attempts`.
    pub retries: Retries,
    pub policy: Policy,
    /// `--timeout`, `--kill-after`, `--max-time`, `--seed`, `--splay`,
    /// `--splay-stable`, `--reset-after`.
    pub limits: Limits,
    /// Whether a live countdown may be drawn on stderr during long sleeps
    /// (the log's lines, if any there, are text): a terminal's is.
    pub countdown: bool,
    /// Variables of retry's outputs that no attempt or hook inherits
    /// (the outputs name them): the loop does not know what they mean.
    pub withheld: &'static [&'static str],
    /// `--on-retry`, `--on-start`, `--on-exit` and their bounds.
    pub hooks: hooks::Settings,
    /// `--stdin`, `--stdout-once` and the output conditions.
    pub pipes: pipes::Settings,
    /// `--budget`: the shared retry budget's name and parameters.
    pub budget: Option<budget::Settings>,
    /// `--breaker`: the shared circuit's name and parameters.
    pub breaker: Option<breaker::Settings>,
    /// `--throttle`: the shared adaptive throttle's name and parameters.
    pub throttle: Option<throttle::Settings>,
    /// The preset's words for the rules that stop a run (give-up lines).
    pub labels: decide::Labels,
    /// What a line `--throttle-if-output` (or the preset's) matched stands
    /// for in a throttled retry's line: the preset's label, or the user's
    /// regex; `None` without a throttle rule.
    pub throttled_by: Option<crate::events::Evidence>,
    /// What to do when the server asked to slow down and no wait of its
    /// could be seen (the preset's `throttle-if-output.advice`, as a
    /// warning's words): said once a run.
    pub throttle_advice: Option<String>,
    /// What the command's own flags hide from the preset, and how to show
    /// it (`preset::quiet`), as a warning's words: said at the first failure.
    pub hidden_advice: Option<String>,
    /// A preset chosen by the program's name, with the verdicts its codes
    /// would give were it named: a code it would stop on is retried (a
    /// code is no evidence), and said once.
    pub named_codes: Option<(crate::policy::Policy, String)>,
    /// COMMAND, `--shell`, `--foreground`, `--alternate`.
    pub command: Command,
}

/// An attempt's and the run's limits, the random seed, the delay before
/// the first attempt and when a failure starts the attempts anew.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub timeout: Option<Duration>,
    pub kill_after: Duration,
    pub max_time: Option<Duration>,
    pub seed: Option<u64>,
    /// `--splay`, `--splay-stable`: below `max_time`.
    pub splay: Option<crate::run::splay::Splay>,
    /// `--reset-after`: an attempt that ran this long before failing
    /// resets the backoff and the count of attempts; below `max_time`.
    pub reset_after: Option<Duration>,
}

/// What to execute and how.
#[derive(Debug, Default)]
pub struct Command {
    /// The program and its arguments (`/bin/sh -c …` with `--shell`).
    pub program: OsString,
    pub args: Vec<OsString>,
    pub foreground: Foreground,
    /// `--alternate`: what later attempts run in COMMAND's place.
    pub alternates: Vec<Alternate>,
    /// `--alternate-repeat`: what follows the last alternate.
    pub repeat: Repeat,
}

impl Command {
    /// Which entry attempt `number` runs: 0 is COMMAND, `i` its `i`-th
    /// alternate.
    pub fn entry(&self, number: u32) -> usize {
        alternates::entry(number, self.alternates.len(), self.repeat)
    }

    /// The program and arguments of entry `index` (`entry`).
    pub fn entry_words(&self, index: usize) -> (&OsStr, &[OsString]) {
        alternates::words((&self.program, &self.args), &self.alternates, index)
    }

    /// The rules entry `index` is judged by, if not COMMAND's.
    pub fn judge(&self, index: usize) -> Option<&Judge> {
        let alternate = self.alternates.get(index.checked_sub(1)?)?;
        alternate.judge.as_deref()
    }

    /// The program and its arguments, as given: the job `--splay-stable`
    /// places on a host (COMMAND's, whatever its alternates).
    pub fn words(&self) -> impl Iterator<Item = &std::ffi::OsStr> {
        std::iter::once(self.program.as_os_str()).chain(self.args.iter().map(OsString::as_os_str))
    }
}

/// `--foreground`: whether the command shares retry's process group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Foreground {
    /// Shared when stdin is a terminal.
    #[default]
    Auto,
    Always,
    Never,
}
