//! `--budget-store redis://`: one budget for a whole fleet, kept in Redis.
//!
//! The bucket is a hash under `retry:budget:NAME`, changed only by one Lua
//! script (`bucket.lua`) that applies the host store's rules (bucket.rs)
//! atomically, on the server's clock: a process sends what it wants (take
//! or give tokens, or look) and its own size, and gets the answer and the
//! bucket as it is. The key expires when the bucket would be full anyway
//! (a full bucket is deleted), so an idle budget leaves nothing behind.
//!
//! Each exchange (connecting, the script, its whole answer) is bounded by
//! the store's timeout, as `state::store::server` keeps every script.

use crate::state::store::Remote;
use crate::state::store::server::{self, Kind, Script};

use super::{Params, Settings, Size, Withdrawal};

/// The bucket's script, and the prefix of every budget's key.
const BUDGETS: Kind = Kind {
    script: include_str!("bucket.lua"),
    prefix: "retry:budget:",
};

/// What the script answers: a retry's tokens granted or not, and the
/// bucket as of the server's now.
#[derive(Debug, PartialEq)]
pub struct Reply {
    pub granted: bool,
    pub milli: u64,
    pub size: Size,
    /// The key existed (not new, not full since).
    pub found: bool,
}

/// An open connection to the fleet's budget.
#[derive(Debug)]
pub struct Fleet {
    name: String,
    script: Script,
    params: Params,
    size_given: bool,
    /// The bucket's own size differed from the one given: said once.
    size_warned: bool,
}

impl Fleet {
    /// The budget in the store `remote` names. Nothing is sent yet: the
    /// connection is opened by the first exchange, within its timeout.
    pub fn new(settings: &Settings, remote: &Remote) -> Self {
        Fleet {
            name: settings.name.clone(),
            script: BUDGETS.script(remote, &settings.name, settings.timeout),
            params: settings.params,
            size_given: settings.size_given,
            size_warned: false,
        }
    }

    /// The key of this budget.
    pub fn key(&self) -> String {
        self.script.key().to_owned()
    }

    /// Runs the script (`op` is `take`, `give` or `look`) within the
    /// timeout: the caller's size goes with what it asks.
    fn run(&mut self, op: &'static str, tokens: u32) -> Result<Reply, String> {
        let refill = (self.params.refill * 1e6).round() as u64;
        let reply = self.script.call(vec![
            op.to_owned(),
            tokens.to_string(),
            self.params.tokens.to_string(),
            refill.to_string(),
        ])?;
        let [granted, milli, size, refill, found] = reply[..] else {
            return Err(format!("the script answered {reply:?}"));
        };
        let whole = |n: i64| u64::try_from(n).unwrap_or(0);
        Ok(Reply {
            granted: granted == 1,
            milli: whole(milli),
            size: Size {
                tokens: u32::try_from(size).unwrap_or(u32::MAX),
                refill: whole(refill) as f64 / 1e6,
            },
            found: found == 1,
        })
    }

    /// For the loop: whether the bucket paid for a retry, and what to say
    /// (a size other than the one given, once). The error is the warning
    /// to log before the run goes on without the budget.
    pub fn withdraw(&mut self, tokens: u32) -> Result<Withdrawal, String> {
        let reply = self.run("take", tokens).map_err(|e| self.failed(&e))?;
        Ok(Withdrawal {
            granted: reply.granted,
            warning: self.size_warning(reply.size),
        })
    }

    /// For the loop: gives tokens back after a success.
    pub fn deposit(&mut self, tokens: u32) -> Result<Option<String>, String> {
        let reply = self.run("give", tokens).map_err(|e| self.failed(&e))?;
        Ok(self.size_warning(reply.size))
    }

    fn failed(&self, e: &str) -> String {
        failed(&self.name, self.script.remote(), e)
    }

    fn size_warning(&mut self, size: Size) -> Option<String> {
        if !self.size_given || self.size_warned || size == self.params.size() {
            return None;
        }
        self.size_warned = true;
        Some(super::size_differs(&self.name, size, &self.params))
    }

    /// The bucket as it is, writing nothing (`--budget-status`).
    pub fn look(&mut self) -> Result<Reply, String> {
        self.run("look", 0)
    }
}

/// The one warning of a store that failed: the budget, the store (no
/// password), why, and what happens now.
pub fn failed(name: &str, remote: &Remote, e: &str) -> String {
    server::failed(&format!("--budget {name}"), remote, e, "the budget")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::store::Store;
    use crate::state::store::server::bench;
    use std::time::{Duration, Instant};

    /// `bash bench/fleet-budget.sh` runs this in release against the
    /// redis-server it started (`RETRY_BENCH_STORE`): what one retry
    /// decision costs over loopback (the script, its round trip), each
    /// timed alone; median and p99.
    #[test]
    #[ignore = "a measurement, for bench/fleet-budget.sh"]
    fn cost_of_one_decision_over_loopback() {
        let remote = bench::remote();
        let settings = super::super::tests::measured(
            Store::Redis(Box::new(remote.clone())),
            Duration::from_secs(1),
        );
        let mut fleet = Fleet::new(&settings, &remote);
        let n = 20_000;
        let took: Vec<Duration> = (0..n)
            .map(|_| {
                let started = Instant::now();
                assert!(fleet.withdraw(1).unwrap().granted);
                started.elapsed()
            })
            .collect();
        let (median, p99) = bench::median_and_p99(took);
        println!(
            "fleet budget: {median:.0} us median, {p99:.0} us p99 per retry decision over loopback ({n} in a row)",
        );
    }
}
