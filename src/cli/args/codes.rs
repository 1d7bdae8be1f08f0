//! Which exit codes are retried, stop at once, or count as success.

use clap::{Args, ValueHint};

use crate::cli::id;
use crate::cli::provenance::Provenance;
use crate::cli::refuse::usage;
use crate::cli::values::parse_retry_on;
use crate::codes::CodeSet;
use crate::policy::Policy;

#[derive(Clone, Debug, Args)]
#[group(skip)]
pub struct CodesArgs {
    /// Exit codes that are retried (`none`: only on --retry-if-output);
    /// other failing codes stop at once
    ///
    /// [default: every code that is not a success, except 126 and 127 (the
    /// command cannot run) and 141 (killed by SIGPIPE: its reader went away)]
    #[arg(long, env = "RETRY_RETRY_ON", value_name = "CODES|none",
          value_parser = parse_retry_on, value_hint = ValueHint::Other)]
    pub retry_on: Option<CodeSet>,

    /// Exit codes that stop at once, even if --retry-on covers them
    #[arg(long, env = "RETRY_FATAL_ON", value_name = "CODES", value_hint = ValueHint::Other)]
    pub fatal_on: Option<CodeSet>,

    /// Exit codes that count as success
    #[arg(
        long,
        env = "RETRY_SUCCESS_ON",
        value_name = "CODES",
        default_value = "0",
        value_hint = ValueHint::Other,
        hide_short_help = true
    )]
    pub success_on: CodeSet,
}

impl CodesArgs {
    /// The verdict of each exit code: a code cannot both end the run as a
    /// success and be retried or fatal.
    pub fn resolve(&self, provenance: &Provenance) -> Result<Policy, clap::Error> {
        for (id, list) in [
            (id::RETRY_ON, &self.retry_on),
            (id::FATAL_ON, &self.fatal_on),
        ] {
            if let Some(list) = list {
                disjoint_from_success(provenance, id, list, &self.success_on)?;
            }
        }
        Ok(Policy::new(
            self.success_on.clone(),
            self.retry_on.clone(),
            self.fatal_on.clone(),
        ))
    }
}

fn disjoint_from_success(
    provenance: &Provenance,
    id: &str,
    list: &CodeSet,
    success: &CodeSet,
) -> Result<(), clap::Error> {
    let overlap = list.intersection(success);
    if overlap.is_empty() {
        return Ok(());
    }
    let fix = if provenance.is_default(id::SUCCESS_ON) {
        format!(
            "; leave {overlap} out of {}",
            crate::cli::provenance::long(id)
        )
    } else {
        String::new()
    };
    Err(usage(format!(
        "{} and {} both list {overlap}: a code cannot be both{fix}",
        provenance.name(id, list),
        provenance.name(id::SUCCESS_ON, success),
    )))
}
