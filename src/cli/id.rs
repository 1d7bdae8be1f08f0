//! clap's ids of the options the code asks about by name (where a value
//! came from, which mode an option belongs to), written once: a test holds
//! each to the command's definition, so renaming a field cannot silently
//! turn a check off. Ids inside `#[arg(...)]` attributes are checked by
//! clap's own `debug_assert` (`definition_is_consistent`).

pub const BASE: &str = "base";
pub const THROTTLE_BASE: &str = "throttle_base";
pub const CAP: &str = "cap";
pub const JITTER: &str = "jitter";
// Named only by `--simulate --model throttle`'s checks.
#[cfg_attr(not(feature = "preview"), allow(dead_code))]
pub const MAX_ATTEMPTS: &str = "max_attempts";
pub const TIMEOUT: &str = "timeout";
pub const MAX_TIME: &str = "max_time";
pub const SPLAY: &str = "splay";
pub const SPLAY_STABLE: &str = "splay_stable";
pub const RESET_AFTER: &str = "reset_after";
pub const RETRY_ON: &str = "retry_on";
pub const FATAL_ON: &str = "fatal_on";
pub const SUCCESS_ON: &str = "success_on";
pub const RETRY_IF_OUTPUT: &str = "retry_if_output";
pub const STOP_IF_OUTPUT: &str = "stop_if_output";
pub const THROTTLE_IF_OUTPUT: &str = "throttle_if_output";
pub const DELAY_FROM_OUTPUT: &str = "delay_from_output";
pub const LOG_FILE: &str = "log_file";
pub const ON_START: &str = "on_start";
pub const ON_EXIT: &str = "on_exit";
pub const ON_EXIT_STDIN: &str = "on_exit_stdin";
pub const HOOK_TIMEOUT: &str = "hook_timeout";
pub const PRESET: &str = "preset";
pub const ALTERNATE: &str = "alternate";
pub const ALTERNATE_REPEAT: &str = "alternate_repeat";
pub const BUDGET: &str = "budget";
pub const BUDGET_TOKENS: &str = "budget_tokens";
pub const BUDGET_COST: &str = "budget_cost";
pub const BUDGET_THROTTLE_COST: &str = "budget_throttle_cost";
pub const BUDGET_REFILL: &str = "budget_refill";
pub const BUDGET_STORE: &str = "budget_store";
pub const BUDGET_TIMEOUT: &str = "budget_timeout";
pub const BUDGET_STATUS: &str = "budget_status";
pub const BREAKER: &str = "breaker";
pub const BREAKER_AFTER: &str = "breaker_after";
pub const BREAKER_COOLDOWN: &str = "breaker_cooldown";
pub const BREAKER_COOLDOWN_MAX: &str = "breaker_cooldown_max";
pub const BREAKER_EXIT_CODE: &str = "breaker_exit_code";
pub const BREAKER_STATUS: &str = "breaker_status";
pub const THROTTLE: &str = "throttle";
pub const THROTTLE_K: &str = "throttle_k";
pub const THROTTLE_WINDOW: &str = "throttle_window";
pub const THROTTLE_STATUS: &str = "throttle_status";
pub const STORE: &str = "store";
pub const STORE_TIMEOUT: &str = "store_timeout";
pub const METRICS_DIR: &str = "metrics_dir";
pub const STATSD: &str = "statsd";
pub const STATSD_TAGS: &str = "statsd_tags";
pub const JOB: &str = "job";
pub const PLAN: &str = "plan";
pub const SIMULATE: &str = "simulate";
pub const FORMAT: &str = "format";
pub const CLIENTS: &str = "clients";
pub const REPS: &str = "reps";
pub const NET_DELAY: &str = "net_delay";
pub const NET_SD: &str = "net_sd";
pub const SVG: &str = "svg";
pub const MODEL: &str = "model";
pub const SERVICE_TIME: &str = "service_time";
pub const SERVICE_SD: &str = "service_sd";
pub const MAX_WORK: &str = "max_work";
pub const HOSTS: &str = "hosts";
pub const EVERY: &str = "every";
pub const OUTAGE: &str = "outage";
pub const CAPACITY: &str = "capacity";
pub const CAPACITY_WINDOW: &str = "capacity_window";
pub const SPAWN_TIME: &str = "spawn_time";
pub const SPAN: &str = "span";
pub const BREAKER_AFTERS: &str = "breaker_afters";
pub const BREAKER_COOLDOWNS: &str = "breaker_cooldowns";
pub const BREAKER_COOLDOWN_MAXES: &str = "breaker_cooldown_maxes";
pub const LOADS: &str = "loads";
pub const ARRIVALS: &str = "arrivals";
pub const HINTS: &str = "hints";
pub const ERROR_RATE: &str = "error_rate";
pub const THROTTLE_BASES: &str = "throttle_bases";
pub const THROTTLE_KS: &str = "throttle_ks";
pub const THROTTLE_WINDOWS: &str = "throttle_windows";

/// Options that only `--simulate` reads.
pub const SIMULATE_ONLY: [&str; 26] = [
    CLIENTS,
    REPS,
    NET_DELAY,
    NET_SD,
    SVG,
    MODEL,
    SERVICE_TIME,
    SERVICE_SD,
    MAX_WORK,
    HOSTS,
    EVERY,
    OUTAGE,
    CAPACITY,
    CAPACITY_WINDOW,
    SPAWN_TIME,
    SPAN,
    BREAKER_AFTERS,
    BREAKER_COOLDOWNS,
    BREAKER_COOLDOWN_MAXES,
    LOADS,
    ARRIVALS,
    HINTS,
    ERROR_RATE,
    THROTTLE_BASES,
    THROTTLE_KS,
    THROTTLE_WINDOWS,
];
/// Options that only `--simulate --model busy` reads.
pub const BUSY_ONLY: [&str; 2] = [SERVICE_TIME, SERVICE_SD];
/// Options that only `--simulate --model outage` reads.
pub const OUTAGE_ONLY: [&str; 5] = [
    HOSTS,
    OUTAGE,
    BREAKER_AFTERS,
    BREAKER_COOLDOWNS,
    BREAKER_COOLDOWN_MAXES,
];
/// Options that only `--simulate --model throttle` reads.
pub const THROTTLE_ONLY: [&str; 9] = [
    CAPACITY_WINDOW,
    SPAWN_TIME,
    LOADS,
    ARRIVALS,
    HINTS,
    ERROR_RATE,
    THROTTLE_BASES,
    THROTTLE_KS,
    THROTTLE_WINDOWS,
];
/// Options of both fleet models (`outage`, `throttle`).
pub const FLEET_ONLY: [&str; 3] = [EVERY, CAPACITY, SPAN];
/// Options of the client sweeps (`occ`, `busy`) that the fleet models
/// have no use for.
pub const SWEEP_ONLY: [&str; 3] = [CLIENTS, SVG, MAX_WORK];
/// The budget's parameters: meaningless without one.
pub const BUDGET_ONLY: [&str; 4] = [
    BUDGET_TOKENS,
    BUDGET_COST,
    BUDGET_THROTTLE_COST,
    BUDGET_REFILL,
];
/// The breaker's parameters: meaningless without one.
pub const BREAKER_ONLY: [&str; 3] = [BREAKER_AFTER, BREAKER_COOLDOWN, BREAKER_COOLDOWN_MAX];
/// The throttle's rule (`--throttle-k`, `--throttle-window`): meaningless
/// without one.
pub const THROTTLE_RULE: [&str; 2] = [THROTTLE_K, THROTTLE_WINDOW];
/// The options a line is parsed in full for (`args/throttle.rs`): not in
/// a run's lean command.
#[cfg(test)]
pub const FULL_ONLY: [&str; 4] = [THROTTLE, THROTTLE_K, THROTTLE_WINDOW, THROTTLE_STATUS];
/// The exit status of a skipped run (`--breaker-exit-code`): for a breaker
/// or a throttle.
pub const SKIPPED_USERS: [&str; 3] = [BREAKER, BREAKER_STATUS, THROTTLE];
/// What follows the last `--alternate`: meaningless without one.
pub const ALTERNATE_ONLY: [&str; 1] = [ALTERNATE_REPEAT];
/// What `--on-exit` reads: meaningless without it.
pub const ON_EXIT_ONLY: [&str; 1] = [ON_EXIT_STDIN];
/// The once-hooks' bound: meaningless without one.
pub const ONCE_HOOKS_ONLY: [&str; 1] = [HOOK_TIMEOUT];
/// The store's, with their old spellings: for a budget or a breaker.
pub const STORE_ONLY: [&str; 4] = [STORE, BUDGET_STORE, STORE_TIMEOUT, BUDGET_TIMEOUT];
/// What the store's options are for.
pub const STORE_USERS: [&str; 6] = [
    BUDGET,
    BUDGET_STATUS,
    BREAKER,
    BREAKER_STATUS,
    THROTTLE,
    THROTTLE_STATUS,
];

/// Every id above but `SIMULATE_ONLY`'s, for the test.
#[cfg(test)]
const OTHERS: [&str; 52] = [
    BASE,
    THROTTLE_BASE,
    CAP,
    JITTER,
    MAX_ATTEMPTS,
    TIMEOUT,
    MAX_TIME,
    SPLAY,
    SPLAY_STABLE,
    RESET_AFTER,
    RETRY_ON,
    FATAL_ON,
    SUCCESS_ON,
    RETRY_IF_OUTPUT,
    STOP_IF_OUTPUT,
    THROTTLE_IF_OUTPUT,
    DELAY_FROM_OUTPUT,
    LOG_FILE,
    ON_START,
    ON_EXIT,
    ON_EXIT_STDIN,
    HOOK_TIMEOUT,
    PRESET,
    ALTERNATE,
    ALTERNATE_REPEAT,
    BUDGET,
    BUDGET_TOKENS,
    BUDGET_COST,
    BUDGET_THROTTLE_COST,
    BUDGET_REFILL,
    BUDGET_STORE,
    BUDGET_TIMEOUT,
    BUDGET_STATUS,
    BREAKER,
    BREAKER_AFTER,
    BREAKER_COOLDOWN,
    BREAKER_COOLDOWN_MAX,
    BREAKER_EXIT_CODE,
    BREAKER_STATUS,
    THROTTLE,
    THROTTLE_K,
    THROTTLE_WINDOW,
    THROTTLE_STATUS,
    STORE,
    STORE_TIMEOUT,
    METRICS_DIR,
    STATSD,
    STATSD_TAGS,
    JOB,
    PLAN,
    SIMULATE,
    FORMAT,
];

#[cfg(test)]
mod tests {
    use clap::{Args, CommandFactory};

    use crate::cli::Cli;

    #[test]
    fn every_named_id_is_an_option_of_the_command() {
        let all = || super::OTHERS.into_iter().chain(super::SIMULATE_ONLY);
        let command = Cli::command();
        for id in all() {
            assert!(
                command.get_arguments().any(|arg| arg.get_id() == id),
                "`{id}` is no option of retry: was its field renamed?"
            );
        }
        // The lean command (a run's) has every id but the simulation's
        // and the throttle's.
        let lean = crate::cli::RunArgs::augment_args(clap::Command::new("retry"));
        for id in all() {
            let simulation = super::SIMULATE_ONLY.contains(&id) || id == super::FORMAT;
            let full_only = simulation || super::FULL_ONLY.contains(&id);
            assert_eq!(
                lean.get_arguments().any(|arg| arg.get_id() == id),
                !full_only,
                "{id}"
            );
        }
    }
}
