//! `--budget` and its size: a retry budget shared by every retry naming it.

use clap::{Args, ValueHint};

use crate::cli::args::BUDGET;
use crate::cli::args::store::Kept;
use crate::cli::id;
use crate::cli::provenance::{Provenance, long};
use crate::cli::refuse::usage;
use crate::cli::values::parse_refill;
use crate::state::budget::{Params, Settings, bucket};

#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct BudgetArgs {
    /// Draw retries from a budget shared by every retry on this host that names it
    ///
    /// Share one retry budget with every retry on this host that names it:
    /// a retry costs tokens, and when the budget cannot pay retry gives up
    /// at once with the command's last status (first attempts always run).
    /// A budget that cannot be used safely (a directory another user owns
    /// or may write, a symlink) is skipped with a warning
    #[arg(long, env = "RETRY_BUDGET", value_name = "NAME", value_parser = crate::state::budget::parse_name,
          value_hint = ValueHint::Other, help_heading = BUDGET)]
    pub budget: Option<String>,

    /// The budget's size, and what a full one holds (AWS SDK retry quota: 500);
    /// a bucket in use keeps the size it was given until it is full again
    #[arg(long, env = "RETRY_BUDGET_TOKENS", value_name = "N",
          default_value_t = bucket::DEFAULT_TOKENS,
          value_parser = clap::value_parser!(u32).range(1..), value_hint = ValueHint::Other,
          help_heading = BUDGET, hide_short_help = true)]
    pub budget_tokens: u32,

    /// Tokens the retry of a transient failure costs (a timeout's too; AWS
    /// SDKs since 2026: 14); a success after retries gives the last one's
    /// cost back (a first-try success never touches the budget)
    #[arg(long, env = "RETRY_BUDGET_COST", value_name = "N",
          default_value_t = bucket::DEFAULT_COST,
          value_parser = clap::value_parser!(u32).range(1..), value_hint = ValueHint::Other,
          help_heading = BUDGET, hide_short_help = true)]
    pub budget_cost: u32,

    /// Tokens the retry of a throttled failure costs (the server asked to
    /// slow down; AWS SDKs: 5) [default: 5]
    // No clap default, as --throttle-base: start-up parses nothing for it.
    #[arg(long, env = "RETRY_BUDGET_THROTTLE_COST", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..), value_hint = ValueHint::Other,
          help_heading = BUDGET, hide_short_help = true)]
    pub budget_throttle_cost: Option<u32>,

    /// Tokens the budget regains per second (0: only successes refill it)
    #[arg(long, env = "RETRY_BUDGET_REFILL", value_name = "PER_SECOND",
          default_value_t = bucket::DEFAULT_REFILL,
          value_parser = parse_refill, value_hint = ValueHint::Other,
          help_heading = BUDGET, hide_short_help = true)]
    pub budget_refill: f64,
}

/// A budget's size and cost, checked, before it has a name and a store.
#[derive(Clone, Debug)]
pub struct Budget {
    pub params: Params,
    /// `--budget-tokens` or `--budget-refill` was given, not left at its
    /// default (see `Settings::size_given`).
    size_given: bool,
}

impl BudgetArgs {
    /// No budget, at the defaults a run that sets none parses
    /// (`RunArgs::from`).
    pub fn unset() -> Self {
        BudgetArgs {
            budget: None,
            budget_tokens: bucket::DEFAULT_TOKENS,
            budget_cost: bucket::DEFAULT_COST,
            budget_throttle_cost: None,
            budget_refill: bucket::DEFAULT_REFILL,
        }
    }
}

impl BudgetArgs {
    /// `--budget-throttle-cost`, or its default.
    fn throttle_cost(&self) -> u32 {
        self.budget_throttle_cost
            .unwrap_or(bucket::DEFAULT_THROTTLE_COST)
    }

    /// `--budget-tokens`, the two costs, `--budget-refill`: a budget that
    /// could never pay for one retry of either kind is a mistake, not a
    /// way to turn retries off.
    pub fn resolve(&self, provenance: &Provenance) -> Result<Budget, clap::Error> {
        for (id, cost) in [
            (id::BUDGET_COST, self.budget_cost),
            (id::BUDGET_THROTTLE_COST, self.throttle_cost()),
        ] {
            if self.budget_tokens < cost {
                let kind = match id == id::BUDGET_COST {
                    true => "a transient failure's",
                    false => "a throttled failure's",
                };
                // The throttle cost has no clap default: unset is its default.
                let cost = match provenance.present(id) {
                    true => provenance.name(id, &cost),
                    false => format!("`{} {cost}` (the default)", long(id)),
                };
                return Err(usage(format!(
                    "{} is below {cost}: the budget could never pay for {kind} retry",
                    provenance.name(id::BUDGET_TOKENS, &self.budget_tokens),
                )));
            }
        }
        Ok(Budget {
            params: Params {
                tokens: self.budget_tokens,
                cost: self.budget_cost,
                throttle_cost: self.throttle_cost(),
                refill: self.budget_refill,
            },
            size_given: provenance.given(id::BUDGET_TOKENS) || provenance.given(id::BUDGET_REFILL),
        })
    }
}

impl Budget {
    /// The budget called `name` (`--budget` or `--budget-status`), kept in
    /// `kept`.
    pub fn named(self, name: String, kept: Kept) -> Settings {
        Settings {
            name,
            params: self.params,
            size_given: self.size_given,
            store: kept.store,
            timeout: kept.timeout,
        }
    }
}
