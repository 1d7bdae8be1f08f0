//! `--budget-store redis://`: one budget for a whole fleet, kept in Redis.
//!
//! The bucket is a hash under `retry:budget:NAME`, changed only by one Lua
//! script (`bucket.lua`) that applies the host store's rules (bucket.rs)
//! atomically, on the server's clock: a process sends what it wants (take
//! or give tokens, or look) and its own size, and gets the answer and the
//! bucket as it is. The key expires when the bucket would be full anyway
//! (a full bucket is deleted), so an idle budget leaves nothing behind.
//!
//! Every exchange (connecting included) is bounded by `--budget-timeout`;
//! whatever goes wrong (refused, hung, an error reply, a wrong password, a
//! key of another type) is the caller's to fail open.

use std::time::{Duration, Instant};

use redis::{ConnectionAddr, IntoConnectionInfo, RedisConnectionInfo, Script};

use super::store::{Addr, Remote};
use super::{Params, Settings, Size, Withdrawal};

/// The prefix of every budget's key.
pub const PREFIX: &str = "retry:budget:";

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
pub struct Fleet {
    name: String,
    remote: Remote,
    connection: redis::Connection,
    script: Script,
    params: Params,
    timeout: Duration,
    size_given: bool,
    /// The bucket's own size differed from the one given: said once.
    size_warned: bool,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "Fleet({}, {})", self.name, self.remote)
    }
}

impl Fleet {
    /// Connects, bounded by the timeout. The error is the reason alone,
    /// without the password.
    pub fn connect(settings: &Settings, remote: &Remote) -> Result<Self, String> {
        let started = Instant::now();
        let connection = open(remote, settings.timeout).map_err(|e| scrub(&e, remote))?;
        let mut fleet = Fleet {
            name: settings.name.clone(),
            remote: remote.clone(),
            connection,
            script: Script::new(include_str!("bucket.lua")),
            params: settings.params,
            timeout: settings.timeout,
            size_given: settings.size_given,
            size_warned: false,
        };
        // The connection and the first answer share the timeout.
        let left = settings.timeout.saturating_sub(started.elapsed());
        fleet.bound(left.max(Duration::from_millis(1)))?;
        Ok(fleet)
    }

    /// Bounds the next exchange's reads and writes.
    fn bound(&mut self, timeout: Duration) -> Result<(), String> {
        self.connection
            .set_read_timeout(Some(timeout))
            .and_then(|()| self.connection.set_write_timeout(Some(timeout)))
            .map_err(|e| scrub(&e, &self.remote))
    }

    /// The key of this budget.
    pub fn key(&self) -> String {
        format!("{PREFIX}{}", self.name)
    }

    /// Runs the script: `op` is `take`, `give` or `look`. A connection
    /// that was closed while the run slept (the server's idle timeout, a
    /// restart, a firewall) is opened again once; one that hangs is not.
    fn run(&mut self, op: &str, tokens: u32) -> Result<Reply, String> {
        let started = Instant::now();
        let refill = (self.params.refill * 1e6).round() as u64;
        let mut invocation = self.script.key(self.key());
        invocation
            .arg(op)
            .arg(tokens)
            .arg(self.params.tokens)
            .arg(refill);
        let reply: Vec<i64> = match invocation.invoke(&mut self.connection) {
            Err(e) if e.is_connection_dropped() && !e.is_timeout() => {
                let left = self.timeout.saturating_sub(started.elapsed());
                self.connection = open(&self.remote, left.max(Duration::from_millis(1)))
                    .map_err(|e| scrub(&e, &self.remote))?;
                invocation.invoke(&mut self.connection)
            }
            other => other,
        }
        .map_err(|e| scrub(&e, &self.remote))?;
        let [granted, milli, size, refill, found] = reply[..] else {
            return Err(format!("the script answered {reply:?}"));
        };
        let whole = |n: i64| u64::try_from(n).unwrap_or(0);
        let reply = Reply {
            granted: granted == 1,
            milli: whole(milli),
            size: Size {
                tokens: u32::try_from(size).unwrap_or(u32::MAX),
                refill: whole(refill) as f64 / 1e6,
            },
            found: found == 1,
        };
        self.bound(self.timeout)?;
        Ok(reply)
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
        failed(&self.name, &self.remote, e)
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

/// A connection to the store, the connection and each later exchange
/// bounded by `timeout`.
fn open(remote: &Remote, timeout: Duration) -> redis::RedisResult<redis::Connection> {
    let addr = match &remote.addr {
        Addr::Tcp { host, port } => ConnectionAddr::Tcp(host.clone(), *port),
        Addr::Unix(path) => ConnectionAddr::Unix(path.clone()),
    };
    let mut login = RedisConnectionInfo::default()
        .set_db(remote.db)
        .set_skip_set_lib_name();
    if let Some(user) = &remote.user {
        login = login.set_username(user);
    }
    if let Some(password) = &remote.password {
        login = login.set_password(password);
    }
    let info = addr.into_connection_info()?.set_redis_settings(login);
    let connection = redis::Client::open(info)?.get_connection_with_timeout(timeout)?;
    connection.set_read_timeout(Some(timeout))?;
    connection.set_write_timeout(Some(timeout))?;
    Ok(connection)
}

/// The one warning of a store that failed: the budget, the store (no
/// password), why, and what happens now.
pub fn failed(name: &str, remote: &Remote, e: &str) -> String {
    format!("--budget {name}: the store {remote} failed: {e}; running without the budget")
}

/// A client's error with the password taken out, should it ever echo it.
fn scrub(error: &redis::RedisError, remote: &Remote) -> String {
    let message = error.to_string();
    match &remote.password {
        Some(password) if password.len() >= 3 => message.replace(password.as_str(), "***"),
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::budget::store::{self, Store};

    /// `bash bench/fleet-budget.sh` runs this in release against the
    /// redis-server it started (`RETRY_BENCH_STORE`): what one retry
    /// decision costs over loopback (the script, its round trip), each
    /// timed alone; median and p99.
    #[test]
    #[ignore = "a measurement, for bench/fleet-budget.sh"]
    fn cost_of_one_decision_over_loopback() {
        let url = std::env::var("RETRY_BENCH_STORE").expect("RETRY_BENCH_STORE names a store");
        let Ok(Store::Redis(remote)) = store::parse(&url) else {
            panic!("{url} is not a Redis store");
        };
        let settings = Settings {
            name: "bench".into(),
            params: Params {
                tokens: u32::MAX,
                cost: 1,
                refill: 0.0,
            },
            size_given: false,
            store: Store::Redis(remote.clone()),
            timeout: Duration::from_secs(1),
        };
        let mut fleet = Fleet::connect(&settings, &remote).unwrap();
        let n = 20_000;
        let mut took: Vec<Duration> = (0..n)
            .map(|_| {
                let started = Instant::now();
                assert!(fleet.withdraw(1).unwrap().granted);
                started.elapsed()
            })
            .collect();
        took.sort();
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "fleet budget: {:.0} us median, {:.0} us p99 per retry decision over loopback ({n} in a row)",
            us(took[n / 2]),
            us(took[n * 99 / 100])
        );
    }
}
