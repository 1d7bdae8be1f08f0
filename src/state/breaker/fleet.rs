//! `--breaker NAME --store redis://`: one circuit for a whole fleet, a hash
//! under `retry:breaker:NAME` changed only by one Lua script
//! (`breaker.lua`) that applies `machine.rs`'s rules atomically on the
//! server's clock. A run asks (`ask`: may it start, or probe?) and tells
//! (`tell`: how it ended), and `--breaker-status` looks; only a change is
//! written, and a circuit closed with nothing counted is no key at all.
//!
//! The key expires `TTL_FACTOR` times the longest cooldown plus the lease
//! (this run's, or the limit kept with the circuit's end if longer) after
//! its last change: long after any rule could still read it, so a circuit
//! no one names any more leaves nothing behind.
//!
//! A probe's lease is short here (`LEASE`, or the run's `--max-time` if
//! shorter), and the probing run renews it while it lives (`Renewal`, a
//! thread of its own): no lock tells a fleet that a probe died, so a probe
//! killed by SIGKILL, or whose host went down, holds the fleet's circuit
//! for one short lease at most.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::Rng;

use crate::state::store::Remote;
use crate::state::store::server::{self, Kind, Script};

use super::machine::{Admit, Circuit, Ended, MAX_COOLDOWN, State, UNKNOWN_CAP, horizon, nanos};
use super::{Params, Settings};

/// A probe's lease in Redis, renewed every third of it while the probe
/// runs: a probe that died holds the circuit this long at most.
pub const LEASE: Duration = Duration::from_secs(30);

/// For tests only (tests/integration/breaker.rs, documented in
/// CONTRIBUTING.md): a shorter `LEASE`, in milliseconds, so that a test
/// of its renewal and of a killed probe takes seconds, not minutes. It can
/// only shorten the lease.
pub const TEST_LEASE_VARIABLE: &str = "RETRY_TEST_FLEET_LEASE_MS";

/// The lease a probe takes in Redis: `LEASE` (or the tests' shorter one),
/// or the run's own (its `--max-time`) when that is shorter.
fn fleet_lease(run: Duration) -> Duration {
    let test = std::env::var(TEST_LEASE_VARIABLE)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis);
    let lease = test.map_or(LEASE, |test| test.clamp(Duration::from_millis(1), LEASE));
    lease.min(run)
}

/// The circuit's script, and the prefix of every circuit's key.
const CIRCUITS: Kind = Kind {
    script: include_str!("breaker.lua"),
    prefix: "retry:breaker:",
};

/// The key's time to live, in longest cooldowns plus leases.
pub const TTL_FACTOR: u32 = 4;

/// The script's answer: what a run may do, the circuit after it, the
/// server's now (nanoseconds), whether the stored end lay too far ahead
/// and was clamped (`Circuit::clamp`), and how far ahead it could lie
/// (`Circuit::reach`, ns).
#[derive(Debug, PartialEq, Eq)]
pub struct Reply {
    pub admit: Admit,
    pub circuit: Circuit,
    pub now: u64,
    pub clamped: bool,
    pub reach: u64,
}

/// The fleet's circuit.
#[derive(Debug)]
pub struct Fleet {
    name: String,
    script: Script,
    params: Params,
    /// A probe's lease, ns.
    lease: u64,
    /// What a renewal thread opens its own connection with.
    settings: Settings,
    remote: Remote,
    renewal: Option<Renewal>,
}

/// The thread that renews this run's lease while it probes: stopped when
/// dropped (the run tells how it ended, or ends). Its one failure is
/// kept for the end of the run: the lease then runs out by itself.
#[derive(Debug)]
struct Renewal {
    _stop: mpsc::Sender<()>,
    trouble: Arc<Mutex<Option<String>>>,
}

impl Fleet {
    /// The circuit in the store `remote` names. Nothing is sent yet: the
    /// connection is opened by the first exchange, within its timeout.
    pub fn new(settings: &Settings, remote: &Remote) -> Self {
        Fleet {
            name: settings.name.clone(),
            script: CIRCUITS.script(remote, &settings.name, settings.timeout),
            params: settings.params,
            lease: nanos(fleet_lease(settings.lease)),
            settings: settings.clone(),
            remote: remote.clone(),
            renewal: None,
        }
    }

    /// How far ahead of its now this run may set a time in the hash
    /// (`machine::horizon`), ns.
    fn horizon(&self) -> u64 {
        horizon(self.params.cap(), self.lease)
    }

    /// This run probes under the lease `id`: renew it every third of its
    /// length, on a connection of its own, until the run tells how it
    /// ended. Each renewal is bounded by `--store-timeout`; the first that
    /// fails ends the renewals (the lease then runs out by itself).
    pub fn renew(&mut self, id: u64) {
        let (stop, stopped) = mpsc::channel::<()>();
        let trouble = Arc::new(Mutex::new(None));
        let every = Duration::from_nanos(self.lease / 3).max(Duration::from_millis(1));
        let mut renewer = Fleet::new(&self.settings, &self.remote);
        let kept = Arc::clone(&trouble);
        let spawned = std::thread::Builder::new()
            .name("retry-lease".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    match renewer.run("renew", Ended::Neither, Some(id), 0.0) {
                        // Still this run's: renewed.
                        Ok(Reply {
                            circuit:
                                Circuit {
                                    state: State::Probing { lease, .. },
                                    ..
                                },
                            ..
                        }) if lease == id => {}
                        // Another run's now, or closed: nothing to renew.
                        Ok(_) => return,
                        Err(e) => {
                            let e = failed(&renewer.name, &renewer.remote, &e);
                            let e = e.replace(
                                "running without the breaker",
                                "the probe's lease was not renewed",
                            );
                            if let Ok(mut kept) = kept.lock() {
                                kept.get_or_insert(e);
                            }
                            return;
                        }
                    }
                }
            });
        if spawned.is_ok() {
            self.renewal = Some(Renewal {
                _stop: stop,
                trouble,
            });
        }
    }

    /// Stops the renewals: why one failed, if one did.
    fn stop_renewing(&mut self) -> Option<String> {
        let renewal = self.renewal.take()?;
        renewal.trouble.lock().ok()?.take()
    }

    /// The key of this circuit.
    pub fn key(&self) -> &str {
        self.script.key()
    }

    /// A run starts. The error is the warning to log.
    pub fn ask(&mut self) -> Result<Reply, String> {
        let reply = self
            .run("ask", Ended::Neither, None, 0.0)
            .map_err(|e| failed(&self.name, self.script.remote(), &e))?;
        if let Admit::Probe(id) = reply.admit {
            self.renew(id);
        }
        Ok(reply)
    }

    /// A run ended (`lease`: its probe's): a renewal's failure, if one
    /// failed, to log, and the circuit after it. The error is the warning
    /// to log.
    pub fn tell(
        &mut self,
        ended: Ended,
        lease: Option<u64>,
        rng: &mut impl Rng,
    ) -> Result<(Option<String>, Option<Circuit>), String> {
        let renewal = self.stop_renewing();
        let unit = crate::strategy::unit(rng);
        self.run("tell", ended, lease, unit)
            .map_err(|e| failed(&self.name, self.script.remote(), &e))
            .map(|reply| (renewal, Some(reply.circuit)))
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
        let longest = nanos(self.params.cap());
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
            us(self.horizon()).max(1).to_string(),
            us(nanos(UNKNOWN_CAP).saturating_add(self.lease)).to_string(),
            TTL_FACTOR.to_string(),
            us(nanos(MAX_COOLDOWN).saturating_add(self.lease)).to_string(),
        ])?;
        let [
            admit,
            state,
            failures,
            level,
            until,
            lease,
            now,
            clamped,
            after,
            limit,
            reach,
        ] = reply[..]
        else {
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
                after: count(after),
                limit: ns(limit),
            },
            now: ns(now),
            clamped: clamped == 1,
            reach: ns(reach),
        })
    }
}

/// The one warning of a store that failed.
pub fn failed(name: &str, remote: &Remote, e: &str) -> String {
    server::failed(&format!("--breaker {name}"), remote, e, "the breaker")
}
