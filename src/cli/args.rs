//! Every option of a run (and the modes' switches), in groups of one
//! concern each (`args/`): its help, its `RETRY_*` variable, its parser,
//! and the group's `resolve`, where its checks live. `simulation` holds the
//! options only --plan and --simulate read, parsed with the others only
//! for those two modes (`cli::parse_from`).
//!
//! clap lists options in the order they are added, and the help, the man
//! page and the completions keep it: the groups follow one another in that
//! order, so an option goes into its group where its neighbours are.

pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod codes;
pub mod hooks;
pub mod logging;
pub mod metrics;
pub mod modes;
pub mod pipes;
pub mod process;
pub mod programs;
pub mod simulation;
pub mod store;
pub mod throttle;

use clap::Args;

use crate::cli::args::backoff::BackoffArgs;
use crate::cli::args::breaker::BreakerArgs;
use crate::cli::args::budget::BudgetArgs;
use crate::cli::args::codes::CodesArgs;
use crate::cli::args::hooks::HooksArgs;
use crate::cli::args::logging::LoggingArgs;
use crate::cli::args::metrics::MetricsArgs;
use crate::cli::args::modes::ModesArgs;
use crate::cli::args::pipes::PipesArgs;
use crate::cli::args::process::ProcessArgs;
use crate::cli::args::programs::ProgramsArgs;
use crate::cli::args::store::StoreArgs;
use crate::cli::args::throttle::ThrottleArgs;
use crate::cli::provenance::Provenance;

/// Every option but those of `SimulationArgs`: what a run reads, the budget's
/// and the modes' switches. Parsed alone when neither --plan nor --simulate
/// is asked for (see `parse_from`).
#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct RunArgs {
    #[command(flatten)]
    pub backoff: BackoffArgs,

    #[command(flatten)]
    pub codes: CodesArgs,

    #[command(flatten)]
    pub process: ProcessArgs,

    #[command(flatten)]
    pub logging: LoggingArgs,

    #[command(flatten)]
    pub hooks: HooksArgs,

    #[command(flatten)]
    pub pipes: PipesArgs,

    #[command(flatten)]
    pub budget: BudgetArgs,

    #[command(flatten)]
    pub breaker: BreakerArgs,

    /// `--throttle` and `--throttle-status`: parsed in full only (see
    /// `args/throttle.rs`), so not flattened here; `parse_from` fills it.
    #[arg(skip)]
    pub throttle: ThrottleArgs,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub metrics: MetricsArgs,

    #[command(flatten)]
    pub programs: ProgramsArgs,

    #[command(flatten)]
    pub modes: ModesArgs,

    /// Where each value came from, so errors name what the user set and a
    /// preset leaves what was given be.
    #[arg(skip)]
    pub provenance: Provenance,
}

/// The groups nearly every run sets, if any: `RunArgs` but for the
/// rarer groups (`RARE_VARIABLES`), the first tier of the lean parse
/// (`cli::parse_from`). Each option the rarer groups leave out costs clap
/// some 3,000 instructions at every start; a line or a variable of theirs
/// falls back to `RunArgs`.
#[derive(Debug, Args)]
#[group(skip)]
pub struct CommonArgs {
    #[command(flatten)]
    pub backoff: BackoffArgs,

    #[command(flatten)]
    pub codes: CodesArgs,

    #[command(flatten)]
    pub process: ProcessArgs,

    #[command(flatten)]
    pub logging: LoggingArgs,

    #[command(flatten)]
    pub pipes: PipesArgs,

    #[command(flatten)]
    pub programs: ProgramsArgs,

    #[command(flatten)]
    pub modes: ModesArgs,
}

/// The variables of the groups `CommonArgs` leaves out (the hooks, the
/// budget, the breaker, their store, the metrics): one of them set sends
/// the parse to `RunArgs`. A test holds the list to the groups.
pub const RARE_VARIABLES: [&str; 23] = [
    "RETRY_ON_RETRY",
    "RETRY_ON_START",
    "RETRY_ON_EXIT",
    "RETRY_ON_EXIT_STDIN",
    "RETRY_HOOK_TIMEOUT",
    "RETRY_BUDGET",
    "RETRY_BUDGET_TOKENS",
    "RETRY_BUDGET_COST",
    "RETRY_BUDGET_THROTTLE_COST",
    "RETRY_BUDGET_REFILL",
    "RETRY_BREAKER",
    "RETRY_BREAKER_AFTER",
    "RETRY_BREAKER_COOLDOWN",
    "RETRY_BREAKER_COOLDOWN_MAX",
    "RETRY_BREAKER_EXIT_CODE",
    "RETRY_STORE",
    "RETRY_BUDGET_STORE",
    "RETRY_STORE_TIMEOUT",
    "RETRY_BUDGET_TIMEOUT",
    "RETRY_METRICS_DIR",
    "RETRY_STATSD",
    "RETRY_STATSD_TAGS",
    "RETRY_JOB",
];

/// The rarer groups' options with a clap default (a switch's is `false`): a parse of `CommonArgs`
/// records them as defaulted, as `RunArgs`' parse does (a test holds the
/// list to the groups).
pub const RARE_DEFAULTS: [&str; 6] = [
    crate::cli::id::ON_EXIT_STDIN,
    crate::cli::id::HOOK_TIMEOUT,
    crate::cli::id::BUDGET_TOKENS,
    crate::cli::id::BUDGET_COST,
    crate::cli::id::BUDGET_REFILL,
    crate::cli::id::STATSD_TAGS,
];

impl From<CommonArgs> for RunArgs {
    /// A run that sets none of the rarer groups: each at its defaults.
    fn from(common: CommonArgs) -> Self {
        let CommonArgs {
            backoff,
            codes,
            process,
            logging,
            pipes,
            programs,
            modes,
        } = common;
        RunArgs {
            backoff,
            codes,
            process,
            logging,
            hooks: HooksArgs::unset(),
            pipes,
            budget: BudgetArgs::unset(),
            breaker: BreakerArgs::unset(),
            throttle: ThrottleArgs::default(),
            store: StoreArgs::unset(),
            metrics: MetricsArgs::unset(),
            programs,
            modes,
            provenance: Provenance::default(),
        }
    }
}

pub(crate) const HOOKS: &str = "Hooks (run once a run: a monitor's pings)";
pub(crate) const MODES: &str = "Modes (run no command)";
pub(crate) const SIMULATION: &str = "Simulation (--simulate only)";
pub(crate) const BUDGET: &str = "Shared retry budget (--budget)";
pub(crate) const BREAKER: &str = "Circuit breaker (--breaker)";
pub(crate) const THROTTLE: &str = "Adaptive throttle (--throttle)";
pub(crate) const STORE: &str = "Where --budget, --breaker and --throttle keep their state";
pub(crate) const METRICS: &str = "Metrics (Prometheus textfile, StatsD)";
/// Failures as a program reports them: a preset, a server's requested wait.
pub(crate) const PROGRAMS: &str = "Programs and servers (curl, apt, git…)";

/// What the groups resolved, each checked by its own `resolve`.
#[derive(Debug)]
pub struct Settings {
    pub retries: crate::strategy::Retries,
    pub policy: crate::policy::Policy,
    pub limits: crate::run::Limits,
    pub circuit: breaker::Circuit,
    pub throttle: throttle::Throttle,
    pub store: store::Kept,
    pub budget: budget::Budget,
}

impl RunArgs {
    /// The settings of the groups a run, a plan or a simulation
    /// (`simulate`) reads, checked one group after another: the first
    /// refusal is the one said. `--jitter all` is judged with the mode,
    /// after the store, where it always was.
    pub fn resolve(&self, simulate: bool) -> Result<Settings, clap::Error> {
        let provenance = &self.provenance;
        let schedule = self.backoff.resolve(provenance)?;
        let policy = self.codes.resolve(provenance)?;
        let limits = self.process.resolve(provenance)?;
        let circuit = self.breaker.resolve(provenance)?;
        let throttle = self.throttle.resolve(provenance)?;
        let store = self.store.resolve(provenance)?;
        Ok(Settings {
            throttle,
            retries: schedule.for_mode(provenance, simulate)?,
            budget: self.budget.resolve(provenance)?,
            policy,
            limits,
            circuit,
            store,
        })
    }
}
