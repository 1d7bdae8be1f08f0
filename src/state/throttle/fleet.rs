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
        believe(&reply, draw)
    }
}

/// The script's answer to a request decided with `draw`, if it is one the
/// script could give: flags of 0 or 1, probabilities of 0 to 1 million
/// millionths, counts of 0 or more, and a rejection only when `draw` fell
/// below the probability it names. Anything else is a store that lies (a
/// proxy, another program on the port, a hand-written script): a store
/// failure, so the run goes on without the throttle rather than have
/// every attempt rejected on its word.
fn believe(reply: &[i64], draw: f64) -> Result<Reply, String> {
    let lie = || format!("the script answered {reply:?}, which it cannot");
    let &[
        allowed,
        decided,
        probability,
        requests,
        accepts,
        trusted,
        found,
    ] = reply
    else {
        return Err(format!("the script answered {reply:?}"));
    };
    let flag = |n: i64| (0..=1).contains(&n);
    let fraction = |n: i64| (0..=1_000_000).contains(&n).then(|| n as f64 / 1e6);
    let count = |n: i64| (n >= 0).then(|| n as f64 / 1e3);
    if ![allowed, trusted, found].into_iter().all(flag) {
        return Err(lie());
    }
    let (Some(decided), Some(probability), Some(requests), Some(accepts)) = (
        fraction(decided),
        fraction(probability),
        count(requests),
        count(accepts),
    ) else {
        return Err(lie());
    };
    // The script rounds the probability to the millionth it answers.
    if allowed == 0 && draw >= decided + 1e-6 {
        return Err(lie());
    }
    Ok(Reply {
        allowed: allowed != 0,
        decided,
        probability,
        requests,
        accepts,
        untrusted: trusted == 0,
        found: found == 1,
    })
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

    const ANSWER: [i64; 7] = [1, 250_000, 250_000, 4_000, 1_000, 1, 1];

    #[test]
    fn an_answer_the_script_could_give_is_believed() {
        let reply = believe(&ANSWER, 0.5).unwrap();
        assert!(reply.allowed && !reply.untrusted && reply.found);
        assert_eq!(
            (reply.decided, reply.requests, reply.accepts),
            (0.25, 4.0, 1.0)
        );
        // Rejected: the draw fell below the probability, rounded or not.
        let rejected = [0, 250_000, 250_000, 4_000, 1_000, 1, 1];
        assert!(!believe(&rejected, 0.2).unwrap().allowed);
        assert!(!believe(&rejected, 0.250_000_4).unwrap().allowed);
        let certain = [0, 1_000_000, 1_000_000, 9_000, 0, 1, 1];
        assert!(!believe(&certain, 0.999_999).unwrap().allowed);
    }

    /// A server that lies (numbers out of range, a rejection its own
    /// probability does not allow) is a failed store: the run goes on.
    #[test]
    fn an_answer_the_script_cannot_give_is_a_failure() {
        let lies: [(&[i64], f64); 9] = [
            (&[0, 0, 0, 0, 0, 1, 1], 0.5),
            (&[0, 250_000, 250_000, 4_000, 1_000, 1, 1], 0.3),
            (&[0, -5, -5, -9, -9, 1, 1], 0.0),
            (&[0, 1 << 62, 1 << 62, 1 << 62, 1 << 62, 1, 1], 0.5),
            (&[2, 0, 0, 0, 0, 1, 1], 0.5),
            (&[1, 0, 0, -1, 0, 1, 1], 0.5),
            (&[1, 0, 0, 0, 0, 7, 1], 0.5),
            (&[1, 0, 0, 0, 0, 1, -1], 0.5),
            (&[0], 0.5),
        ];
        for (reply, draw) in lies {
            let error = believe(reply, draw).unwrap_err();
            assert!(
                error.starts_with("the script answered ["),
                "{reply:?}: {error}"
            );
        }
    }
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
