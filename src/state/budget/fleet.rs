//! `--budget-store redis://`: one budget for a whole fleet, kept in Redis.
//!
//! The bucket is a hash under `retry:budget:NAME`, changed only by one Lua
//! script (`bucket.lua`) that applies the host store's rules (bucket.rs)
//! atomically, on the server's clock: a process sends what it wants (take
//! or give tokens, or look) and its own size, and gets the answer and the
//! bucket as it is. The key expires when the bucket would be full anyway
//! (a full bucket is deleted), so an idle budget leaves nothing behind.
//!
//! Every exchange, connecting included, is bounded by `--budget-timeout`
//! as a whole: the client bounds each read of a socket, so a store (or a
//! broken proxy before it) that trickles its answer a byte at a time would
//! keep retry waiting for as long as it likes; the exchange runs on a
//! thread of its own instead, which retry waits for no longer than the
//! timeout. Whatever goes wrong (refused, hung, trickling, an error reply,
//! a wrong password, a key of another type) is the caller's to fail open.

use std::sync::mpsc;
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
    /// Away on the thread of an exchange meanwhile; gone with one that
    /// did not answer in time.
    link: Option<Link>,
    params: Params,
    timeout: Duration,
    size_given: bool,
    /// The bucket's own size differed from the one given: said once.
    size_warned: bool,
}

/// What an exchange takes to its thread: the connection and what it asks.
struct Link {
    remote: Remote,
    /// Opened by the first exchange.
    connection: Option<redis::Connection>,
    script: Script,
    key: String,
    params: Params,
    timeout: Duration,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "Fleet({}, {})", self.name, self.remote)
    }
}

impl Fleet {
    /// The budget in the store `remote` names. Nothing is sent yet: the
    /// connection is opened by the first exchange, within its timeout.
    pub fn new(settings: &Settings, remote: &Remote) -> Self {
        Fleet {
            name: settings.name.clone(),
            remote: remote.clone(),
            link: Some(Link {
                remote: remote.clone(),
                connection: None,
                script: Script::new(include_str!("bucket.lua")),
                key: format!("{PREFIX}{}", settings.name),
                params: settings.params,
                timeout: settings.timeout,
            }),
            params: settings.params,
            timeout: settings.timeout,
            size_given: settings.size_given,
            size_warned: false,
        }
    }

    /// The key of this budget.
    pub fn key(&self) -> String {
        format!("{PREFIX}{}", self.name)
    }

    /// Runs the script (`op` is `take`, `give` or `look`) within the
    /// timeout; one that has not answered by then keeps the connection.
    fn run(&mut self, op: &'static str, tokens: u32) -> Result<Reply, String> {
        let mut link = self
            .link
            .take()
            .ok_or("an earlier exchange did not answer in time")?;
        let (link, reply) = within(self.timeout, move || {
            let reply = link.run(op, tokens);
            (link, reply)
        })?;
        self.link = Some(link);
        reply
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

impl Link {
    /// The script's answer, the connection opened first if need be. One
    /// that was closed while the run slept (the server's idle timeout, a
    /// restart, a firewall) is opened again once; one that hangs is not.
    fn run(&mut self, op: &str, tokens: u32) -> Result<Reply, String> {
        let started = Instant::now();
        let refill = (self.params.refill * 1e6).round() as u64;
        let mut invocation = self.script.key(&self.key);
        invocation
            .arg(op)
            .arg(tokens)
            .arg(self.params.tokens)
            .arg(refill);
        let fail = |e: &redis::RedisError| reason(e, &self.remote, self.timeout);
        let reused = self.connection.is_some();
        let connection = match &mut self.connection {
            Some(connection) => connection,
            None => self
                .connection
                .insert(open(&self.remote, self.timeout).map_err(|e| fail(&e))?),
        };
        let reply: Vec<i64> = match invocation.invoke(connection) {
            Err(e) if reused && e.is_connection_dropped() && !e.is_timeout() => {
                let left = self.timeout.saturating_sub(started.elapsed());
                *connection =
                    open(&self.remote, left.max(Duration::from_millis(1))).map_err(|e| fail(&e))?;
                invocation.invoke(connection)
            }
            other => other,
        }
        .map_err(|e| fail(&e))?;
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
}

/// `work` on a thread of its own, waited for at most `timeout`. A thread
/// left behind holds only its socket, each of whose reads is bounded too:
/// it ends when the store answers, closes or stalls, or with retry.
fn within<T: Send + 'static>(
    timeout: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (done, answer) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("retry-budget-store".into())
        .spawn(move || {
            let _ = done.send(work());
        })
        .map_err(|e| format!("cannot start its thread: {e}"))?;
    answer.recv_timeout(timeout).map_err(|_| no_answer(timeout))
}

/// The reason for a store that took too long, whichever read saw it.
fn no_answer(timeout: Duration) -> String {
    format!("no answer within {} ms", crate::duration::millis(timeout))
}

/// A connection to the store, each read and write bounded by `timeout`.
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

/// Why a client's call failed, for the warning: a read or write that
/// timed out is the store's not answering in time, however the OS words it.
fn reason(error: &redis::RedisError, remote: &Remote, timeout: Duration) -> String {
    match error.is_timeout() {
        true => no_answer(timeout),
        false => scrub(error, remote),
    }
}

/// A client's error on one line (a reply it cannot parse is described on
/// several, which a GitHub annotation would carry as `%0A`), with the
/// password taken out, should it ever echo it.
fn scrub(error: &redis::RedisError, remote: &Remote) -> String {
    let message = error.to_string();
    let message = match &remote.password {
        Some(password) if password.len() >= 3 => message.replace(password.as_str(), "***"),
        _ => message,
    };
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::budget::store::{self, Store};

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
        let settings =
            super::super::tests::measured(Store::Redis(remote.clone()), Duration::from_secs(1));
        let mut fleet = Fleet::new(&settings, &remote);
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
