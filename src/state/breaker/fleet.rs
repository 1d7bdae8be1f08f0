//! `--breaker NAME --store redis://`: one circuit for a whole fleet, a hash
//! under `retry:breaker:NAME` changed only by one Lua script
//! (`breaker.lua`) that applies `machine.rs`'s rules atomically on the
//! server's clock. A run asks (`ask`: may it start, or probe?) and tells
//! (`tell`: how it ended), and `--breaker-status` looks; only a change is
//! written, and a circuit closed with nothing counted is no key at all.
//!
//! The key expires `TTL_FACTOR` times the longest cooldown plus the lease
//! after its last change: long after any rule could still read it, so a
//! circuit no one names any more leaves nothing behind.

use rand::Rng;

use crate::state::store::Remote;
use crate::state::store::server::{self, Script};

use super::machine::{Admit, Circuit, Ended, State, cap, nanos};
use super::{Params, Settings};

/// The prefix of every circuit's key.
pub const PREFIX: &str = "retry:breaker:";

/// The key's time to live, in longest cooldowns plus leases.
pub const TTL_FACTOR: u32 = 4;

/// The script's answer: what a run may do, the circuit after it, and the
/// server's now (nanoseconds).
#[derive(Debug, PartialEq, Eq)]
pub struct Reply {
    pub admit: Admit,
    pub circuit: Circuit,
    pub now: u64,
}

/// The fleet's circuit.
#[derive(Debug)]
pub struct Fleet {
    name: String,
    script: Script,
    params: Params,
    /// A probe's lease, ns.
    lease: u64,
}

impl Fleet {
    /// The circuit in the store `remote` names. Nothing is sent yet: the
    /// connection is opened by the first exchange, within its timeout.
    pub fn new(settings: &Settings, remote: &Remote) -> Self {
        Fleet {
            name: settings.name.clone(),
            script: Script::new(
                remote,
                include_str!("breaker.lua"),
                format!("{PREFIX}{}", settings.name),
                settings.timeout,
            ),
            params: settings.params,
            lease: nanos(settings.lease),
        }
    }

    /// The key of this circuit.
    pub fn key(&self) -> &str {
        self.script.key()
    }

    /// A run starts. The error is the warning to log.
    pub fn ask(&mut self) -> Result<Reply, String> {
        self.run("ask", Ended::Neither, None, 0.0)
            .map_err(|e| failed(&self.name, self.script.remote(), &e))
    }

    /// A run ended (`lease`: its probe's). The error is the warning to log.
    pub fn tell(
        &mut self,
        ended: Ended,
        lease: Option<u64>,
        rng: &mut impl Rng,
    ) -> Result<Reply, String> {
        let unit = crate::strategy::unit(rng);
        self.run("tell", ended, lease, unit)
            .map_err(|e| failed(&self.name, self.script.remote(), &e))
    }

    /// The circuit as it is, writing nothing (`--breaker-status`). The
    /// error is the reason alone.
    pub fn look(&mut self) -> Result<Reply, String> {
        self.run("look", Ended::Neither, None, 0.0)
    }

    fn run(
        &mut self,
        op: &str,
        ended: Ended,
        mine: Option<u64>,
        unit: f64,
    ) -> Result<Reply, String> {
        let us = |ns: u64| ns / 1000;
        let cooldown = nanos(self.params.cooldown);
        let longest = nanos(cap(self.params.cooldown));
        let ttl_ms = (longest.saturating_add(self.lease) / 1_000_000)
            .saturating_mul(u64::from(TTL_FACTOR))
            .max(1);
        let ended = match ended {
            Ended::Succeeded => "s",
            Ended::Failed => "f",
            Ended::Neither => "n",
        };
        let reply = self.script.call(vec![
            op.to_owned(),
            us(self.lease).max(1).to_string(),
            ended.to_owned(),
            mine.map_or(0, us).to_string(),
            self.params.after.to_string(),
            us(cooldown).max(1).to_string(),
            us(longest).max(1).to_string(),
            unit.to_string(),
            ttl_ms.to_string(),
        ])?;
        let [admit, state, failures, level, until, lease, now] = reply[..] else {
            return Err(format!("the script answered {reply:?}"));
        };
        let ns = |us: i64| u64::try_from(us).unwrap_or(0).saturating_mul(1000);
        let count = |n: i64| u32::try_from(n).unwrap_or(u32::MAX);
        let (until, lease) = (ns(until), ns(lease));
        let state = match state {
            1 => State::Open { until },
            2 => State::Probing { lease, until },
            _ => State::Closed,
        };
        Ok(Reply {
            admit: match admit {
                1 => Admit::Probe(lease),
                2 => Admit::Skip {
                    until,
                    probing: matches!(state, State::Probing { .. }),
                },
                _ => Admit::Run,
            },
            circuit: Circuit {
                state,
                failures: count(failures),
                level: count(level),
            },
            now: ns(now),
        })
    }
}

/// The one warning of a store that failed.
pub fn failed(name: &str, remote: &Remote, e: &str) -> String {
    server::failed(&format!("--breaker {name}"), remote, e, "the breaker")
}
