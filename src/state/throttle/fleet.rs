//! `--throttle NAME --store redis://`: one throttle for a whole fleet, a
//! hash under `retry:throttle:NAME` changed only by one Lua script
//! (`throttle.lua`) that applies `window.rs`'s rule atomically on the
//! server's clock. One exchange per attempt: the run sends the outcome of
//! its previous attempt with the draw that decides the next (`ask`), and
//! the outcome of its last attempt at its end (`tell`); `--throttle-status`
//! looks. The key expires two windows after its last change, when it
//! would be forgotten anyway.
//!
//! Each exchange (connecting, the script, its whole answer) is bounded by
//! the store's timeout, as `state::store::server` keeps every script.

use crate::state::store::Remote;
use crate::state::store::server::{self, Kind, Script};

use super::{MAX_COUNT, Params, Settings};

/// The throttle's script, and the prefix of every throttle's key.
const THROTTLES: Kind = Kind {
    script: include_str!("throttle.lua"),
    prefix: "retry:throttle:",
};

/// What the script answers.
#[derive(Debug, PartialEq)]
pub struct Reply {
    /// The request may go to the service (always, unless asked).
    pub allowed: bool,
    /// The probability the request was decided on (0 unless asked).
    pub decided: f64,
    /// The probability a request would be rejected now.
    pub probability: f64,
    /// The sliding window's requests and accepts.
    pub requests: f64,
    pub accepts: f64,
    /// The hash held what no retry writes (a count that is negative, not
    /// a number or huge, a window ahead of the server's clock): deleted,
    /// unless only looked at.
    pub untrusted: bool,
    /// The key existed.
    pub found: bool,
}

/// The fleet's throttle.
#[derive(Debug)]
pub struct Fleet {
    name: String,
    script: Script,
    params: Params,
}

impl Fleet {
    /// The throttle in the store `remote` names. Nothing is sent yet: the
    /// connection is opened by the first exchange, within its timeout.
    pub fn new(settings: &Settings, remote: &Remote) -> Self {
        Fleet {
            name: settings.name.clone(),
            script: THROTTLES.script(remote, &settings.name, settings.timeout),
            params: settings.params,
        }
    }

    /// The key of this throttle.
    pub fn key(&self) -> &str {
        self.script.key()
    }

    /// The store, as messages show it.
    pub fn remote(&self) -> &Remote {
        self.script.remote()
    }

    /// Counts a request and decides it with `draw`, the previous
    /// attempt's outcome (`told`: accepted) counted first. The error is the
    /// reason alone.
    pub fn ask(&mut self, told: bool, draw: f64) -> Result<Reply, String> {
        self.run("ask", told, draw)
    }

    /// Tells the outcome of the run's last attempt.
    pub fn tell(&mut self, told: bool) -> Result<Reply, String> {
        self.run("tell", told, 0.0)
    }

    /// The throttle as it is, writing nothing (`--throttle-status`).
    pub fn look(&mut self) -> Result<Reply, String> {
        self.run("look", false, 0.0)
    }

    fn run(&mut self, op: &str, told: bool, draw: f64) -> Result<Reply, String> {
        let reply = self.script.call(vec![
            op.to_owned(),
            u8::from(told).to_string(),
            draw.to_string(),
            self.params.k.to_string(),
            self.params.window_ms.max(1).to_string(),
            MAX_COUNT.to_string(),
        ])?;
        let [
            allowed,
            decided,
            probability,
            requests,
            accepts,
            trusted,
            found,
        ] = reply[..]
        else {
            return Err(format!("the script answered {reply:?}"));
        };
        // What the script answers is held to what it can mean: a server
        // that lies cannot make a probability over 1 or a count below 0.
        let fraction = |n: i64| n.clamp(0, 1_000_000) as f64 / 1e6;
        let count = |n: i64| n.max(0) as f64 / 1e3;
        Ok(Reply {
            allowed: allowed != 0,
            decided: fraction(decided),
            probability: fraction(probability),
            requests: count(requests),
            accepts: count(accepts),
            untrusted: trusted == 0,
            found: found == 1,
        })
    }
}

impl Fleet {
    /// The one warning of a store that failed: why, `e`.
    pub fn failed(&self, e: &str) -> String {
        let what = format!("--throttle {}", self.name);
        server::failed(&what, self.script.remote(), e, "the throttle")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::store::Store;
    use crate::state::store::server::bench;
    use std::time::{Duration, Instant};

    /// `bash bench/throttle.sh` runs this in release against the
    /// redis-server it started (`RETRY_BENCH_STORE`): what one decision
    /// costs over loopback (the outcome before it, the script, its round
    /// trip), each of `RETRY_BENCH_DECISIONS` (1,000) timed alone, and
    /// beside each, as the baseline, a script that does nothing through the
    /// same seam (its thread, EVALSHA, the round trip): median and p99 of
    /// each, alternating, so the machine's load falls on both alike.
    #[test]
    #[ignore = "a measurement, for bench/throttle.sh"]
    fn cost_of_one_decision_over_loopback() {
        let remote = bench::remote();
        let timeout = Duration::from_secs(1);
        let settings = Settings {
            name: "bench".into(),
            params: Params {
                k: 2.0,
                window_ms: 120_000,
            },
            store: Store::Redis(Box::new(remote.clone())),
            timeout,
            exit_code: 75,
        };
        let mut fleet = Fleet::new(&settings, &remote);
        let mut empty = Script::new(&remote, "return {1}", "retry:bench:empty".into(), timeout);
        // Connected, and the scripts cached, before the count.
        fleet.ask(false, 0.5).unwrap();
        empty.call(vec![]).unwrap();
        let n: usize = std::env::var("RETRY_BENCH_DECISIONS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1000);
        let timed = |call: &mut dyn FnMut()| {
            let started = Instant::now();
            call();
            started.elapsed()
        };
        let (took, baseline): (Vec<Duration>, Vec<Duration>) = (0..n)
            .map(|i| {
                let decision = timed(&mut || {
                    fleet.ask(i % 2 == 0, 0.5).unwrap();
                });
                let nothing = timed(&mut || {
                    empty.call(vec![]).unwrap();
                });
                (decision, nothing)
            })
            .unzip();
        let (median, p99) = bench::median_and_p99(took);
        let (empty_median, empty_p99) = bench::median_and_p99(baseline);
        println!(
            "fleet throttle: {median:.1} us median, {p99:.1} us p99 per decision over loopback; \
             an empty script: {empty_median:.1} us median, {empty_p99:.1} us p99 ({n} of each, alternating)",
        );
    }
}
