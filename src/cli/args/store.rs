//! Where `--budget`, `--breaker` and `--throttle` keep their state: `--store` and
//! `--store-timeout`, each also read under its old spelling.

use std::time::Duration;

use clap::{Args, ValueHint};

use crate::cli::args::STORE;
use crate::cli::id;
use crate::cli::provenance::Provenance;
use crate::cli::refuse::usage;
use crate::duration::parse as parse_duration;
use crate::state::store::{DEFAULT_TIMEOUT, Store};

#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct StoreArgs {
    /// Where --budget, --breaker and --throttle keep their state: `host`
    /// (this host's file), or a Redis server that a whole fleet shares:
    /// redis://[user:password@]host[:port][/db] or unix:///path/to/redis.sock
    /// (set the password through the variable, not the flag: a command line
    /// is visible to every user). A store that fails lets the run go on
    /// without them, with one warning
    #[arg(long, env = crate::state::store::VARIABLES[0], value_name = "URL",
          value_parser = crate::state::store::parse, hide_env_values = true,
          value_hint = ValueHint::Url, help_heading = STORE, hide_short_help = true)]
    pub store: Option<Store>,

    /// The old spelling of --store, still read (below --store and RETRY_STORE)
    #[arg(long, env = crate::state::store::VARIABLES[1], value_name = "URL",
          value_parser = crate::state::store::parse, hide_env_values = true,
          value_hint = ValueHint::Url, help_heading = STORE, hide_short_help = true)]
    pub budget_store: Option<Store>,

    /// The most one exchange with a Redis store (connecting, the script, its
    /// whole answer) may take before the run goes on without it, and the
    /// longest --throttle waits for its host file's lock (250ms if not given)
    // No clap default: a run without a Redis store parses nothing for it.
    #[arg(long, env = "RETRY_STORE_TIMEOUT", value_name = "DURATION",
          value_parser = parse_duration, value_hint = ValueHint::Other,
          help_heading = STORE, hide_short_help = true)]
    pub store_timeout: Option<Duration>,

    /// The old spelling of --store-timeout, still read (below --store-timeout
    /// and RETRY_STORE_TIMEOUT)
    #[arg(long, env = "RETRY_BUDGET_TIMEOUT", value_name = "DURATION",
          value_parser = parse_duration, value_hint = ValueHint::Other,
          help_heading = STORE, hide_short_help = true)]
    pub budget_timeout: Option<Duration>,
}

/// The store, and how long an exchange with it may take.
#[derive(Clone, Debug)]
pub struct Kept {
    pub store: Store,
    pub timeout: Duration,
}

impl StoreArgs {
    /// No store named, as a run that names none parses (`RunArgs::from`).
    pub fn unset() -> Self {
        StoreArgs {
            store: None,
            budget_store: None,
            store_timeout: None,
            budget_timeout: None,
        }
    }
}

impl StoreArgs {
    /// The store the budget, the breaker, the throttle and their status use; a timeout of
    /// zero is refused.
    pub fn resolve(&self, provenance: &Provenance) -> Result<Kept, clap::Error> {
        let (timeout, timeout_id) = spelled(
            provenance,
            (self.store_timeout, id::STORE_TIMEOUT),
            (self.budget_timeout, id::BUDGET_TIMEOUT),
        );
        if timeout == Some(Duration::ZERO) {
            return Err(usage(format!(
                "{} would give up on the store before it could answer; leave it out for {} ms",
                provenance.name(timeout_id, &"0s"),
                crate::duration::millis(DEFAULT_TIMEOUT)
            )));
        }
        let (store, _) = spelled(
            provenance,
            (self.store.clone(), id::STORE),
            (self.budget_store.clone(), id::BUDGET_STORE),
        );
        Ok(Kept {
            store: store.unwrap_or_default(),
            timeout: timeout.unwrap_or(DEFAULT_TIMEOUT),
        })
    }
}

/// An option given under its name or its old spelling (`--store`,
/// `--budget-store`): typed wins over a variable, and the name over the old
/// spelling. The value, and the id it came from (for messages).
fn spelled<T>(
    provenance: &Provenance,
    name: (Option<T>, &'static str),
    old: (Option<T>, &'static str),
) -> (Option<T>, &'static str) {
    let typed_old = provenance.typed(old.1) && !provenance.typed(name.1);
    match (name, old) {
        ((Some(value), id), _) if !typed_old => (Some(value), id),
        (_, (Some(value), id)) => (Some(value), id),
        ((value, id), _) => (value, id),
    }
}
