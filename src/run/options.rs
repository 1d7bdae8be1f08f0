//! What a run of COMMAND is given, validated by `cli::config`: only what
//! the loop and the supervisor use (the outputs' settings are apart).

use std::ffi::OsString;
use std::time::Duration;

use crate::policy::Policy;
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
    /// COMMAND, `--shell`, `--foreground`.
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
}

impl Command {
    /// The program and its arguments, as given: the job `--splay-stable`
    /// places on a host.
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
