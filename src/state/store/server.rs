//! A Redis (or Valkey) server as a store: one connection per run, and one
//! Lua script per piece of state that applies its rules atomically, on the
//! server's clock (`TIME`), so hosts' clocks do not matter.
//!
//! Every exchange, connecting included, is bounded by the store's timeout
//! as a whole: the client bounds each read of a socket, so a store (or a
//! broken proxy before it) that trickles its answer a byte at a time would
//! keep retry waiting for as long as it likes; the exchange runs on a
//! thread of its own instead, which retry waits for no longer than the
//! timeout. Whatever goes wrong (refused, hung, trickling, an error reply,
//! a wrong password, a key of another type) is the caller's to fail open.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use redis::{ConnectionAddr, IntoConnectionInfo, RedisConnectionInfo};

use super::{Addr, Remote};

/// One script on one key of a store, and the connection it goes over.
pub struct Script {
    remote: Remote,
    key: String,
    /// Away on the thread of an exchange meanwhile; gone with one that
    /// did not answer in time.
    link: Option<Link>,
    timeout: Duration,
}

/// What an exchange takes to its thread: the connection and what it asks.
struct Link {
    remote: Remote,
    /// Opened by the first exchange.
    connection: Option<redis::Connection>,
    script: redis::Script,
    key: String,
    timeout: Duration,
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "Script({}, {})", self.key, self.remote)
    }
}

/// A kind of state a fleet keeps in Redis (a budget, a circuit): the one
/// script that changes it, and the prefix of its keys, each the prefix
/// and a name.
#[derive(Debug)]
pub struct Kind {
    pub script: &'static str,
    pub prefix: &'static str,
}

impl Kind {
    /// The script on the key of `name` in the store `remote` names, each
    /// exchange bounded by `timeout`.
    pub fn script(&self, remote: &Remote, name: &str, timeout: Duration) -> Script {
        Script::new(
            remote,
            self.script,
            format!("{}{name}", self.prefix),
            timeout,
        )
    }
}

impl Script {
    /// `source` on `key` in the store `remote` names. Nothing is sent yet:
    /// the connection is opened by the first exchange, within `timeout`.
    pub fn new(remote: &Remote, source: &'static str, key: String, timeout: Duration) -> Self {
        Script {
            remote: remote.clone(),
            key: key.clone(),
            link: Some(Link {
                remote: remote.clone(),
                connection: None,
                script: redis::Script::new(source),
                key,
                timeout,
            }),
            timeout,
        }
    }

    /// The key the script keeps its state under.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The store, as messages show it (no password).
    pub fn remote(&self) -> &Remote {
        &self.remote
    }

    /// Runs the script with `args` within the timeout: its reply, a list of
    /// integers. One that has not answered by then keeps the connection.
    pub fn call(&mut self, args: Vec<String>) -> Result<Vec<i64>, String> {
        let mut link = self
            .link
            .take()
            .ok_or("an earlier exchange did not answer in time")?;
        let (link, reply) = within(self.timeout, move || {
            let reply = link.run(&args);
            (link, reply)
        })?;
        self.link = Some(link);
        reply
    }
}

impl Link {
    /// The script's answer, the connection opened first if need be. One
    /// that was closed while the run slept (the server's idle timeout, a
    /// restart, a firewall) is opened again once; one that hangs is not.
    fn run(&mut self, args: &[String]) -> Result<Vec<i64>, String> {
        let started = Instant::now();
        let mut invocation = self.script.key(&self.key);
        for arg in args {
            invocation.arg(arg);
        }
        let fail = |e: &redis::RedisError| reason(e, &self.remote, self.timeout);
        let reused = self.connection.is_some();
        let connection = match &mut self.connection {
            Some(connection) => connection,
            None => self
                .connection
                .insert(open(&self.remote, self.timeout).map_err(|e| fail(&e))?),
        };
        match invocation.invoke(connection) {
            Err(e) if reused && e.is_connection_dropped() && !e.is_timeout() => {
                let left = self.timeout.saturating_sub(started.elapsed());
                *connection =
                    open(&self.remote, left.max(Duration::from_millis(1))).map_err(|e| fail(&e))?;
                invocation.invoke(connection)
            }
            other => other,
        }
        .map_err(|e| fail(&e))
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
        .name("retry-store".into())
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

/// The one warning of a store that failed: the option and its value
/// (`--budget ci`), the store (no password), why, and what happens now
/// (`without`: "the budget").
pub fn failed(what: &str, remote: &Remote, e: &str, without: &str) -> String {
    format!("{what}: the store {remote} failed: {e}; running without {without}")
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

/// What the benches' measurements share (`bench/fleet-budget.sh`,
/// `bench/throttle.sh` run them as ignored tests in release).
#[cfg(test)]
pub mod bench {
    use super::Remote;
    use crate::state::store::{self, Store};

    /// The redis-server the bench started, `RETRY_BENCH_STORE`.
    pub fn remote() -> Remote {
        let url = std::env::var("RETRY_BENCH_STORE").expect("RETRY_BENCH_STORE names a store");
        match store::parse(&url) {
            Ok(Store::Redis(remote)) => *remote,
            _ => panic!("{url} is not a Redis store"),
        }
    }

    pub use crate::state::store::median_and_p99;
}
