//! `--throttle NAME`: client-side adaptive throttling (the SRE book's,
//! "Handling Overload"), shared by every run on a host that names it
//! (`host.rs`: an owner-only file, as the budget's and the breaker's) or,
//! with `--store`, by a fleet (`fleet.rs`, `throttle.lua`: one script on
//! the server's clock). `window.rs` is the pure rule both stores and
//! `--simulate --model throttle` apply.
//!
//! The run asks before every attempt, first ones included
//! (`Throttle::ask`): the request is counted, and rejected locally with
//! the rule's probability, decided by a draw from the run's RNG. The
//! outcome of the attempt that ran (accepted by the service, or not)
//! travels with the next ask, one exchange per attempt, and the last
//! one's with `Throttle::tell` at the run's end.
//!
//! A throttle never stops a command for its own failure: state that
//! cannot be used safely (another user's file or directory, a symlink, a
//! FIFO), a lock held too long or a store that fails lets the attempt run,
//! with one warning, and the run goes on without the throttle. So does
//! state that cannot be trusted (a record no retry writes, counts that are
//! negative, not numbers or huge, a window ahead of the clock): it is
//! reset, so the next run starts afresh.

#[cfg(feature = "redis")]
pub mod fleet;
mod host;
mod record;
mod status;
pub mod window;

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

pub use status::print_status;
pub use window::Params;

use crate::state::store::Store;
use crate::state::store::file::{default_dir, now_ns};
use host::{HostThrottle, Read};
use window::Window;

/// `--throttle-k` when not given: chosen in docs/simulation.md
/// (`--simulate --model throttle`, the fleet throttle's "K 4, 2 min" row:
/// the smallest K that costs a cron fleet's burst no more than a fifth of
/// a point of its runs; the book's 2 cost it a fifth of them).
pub const DEFAULT_K: f64 = 4.0;
/// `--throttle-window` when not given: chosen in docs/simulation.md (the
/// same row: the book's two minutes, a host's best).
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(120);
/// The shortest window: shorter, a throttle forgets between two retries.
pub const MIN_WINDOW: Duration = Duration::from_secs(1);
/// The longest window: what the breaker trusts a record for, a day.
pub const MAX_WINDOW: Duration = Duration::from_secs(86_400);
/// The most a window's count may be: a fleet of a thousand hosts making a
/// hundred requests a second counts 24 million in two minutes. More is no
/// count retry wrote, and the state is not trusted.
pub const MAX_COUNT: u64 = 1 << 32;

/// `--throttle NAME`: a plain file name, as a budget's.
pub fn parse_name(text: &str) -> Result<String, String> {
    crate::state::parse_name(text, "throttle")
}

/// What the command line asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub name: String,
    pub params: Params,
    /// `--store`: this host's file, or a Redis server.
    pub store: Store,
    /// `--store-timeout`: the most a store's exchange (or the host file's
    /// lock) takes before the run goes on without the throttle.
    pub timeout: Duration,
    /// `--breaker-exit-code`: the exit status of a run whose every
    /// attempt was rejected.
    pub exit_code: i32,
}

/// The throttle's answer to an attempt about to start.
#[derive(Debug, Default, PartialEq)]
pub struct Asked {
    /// Rejected locally: the attempt does not run.
    pub rejected: bool,
    /// The probability it was decided on.
    pub probability: f64,
    /// What to log: why the throttle was skipped.
    pub warning: Option<String>,
}

/// The throttle as a run last saw it, for its metrics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seen {
    /// The probability a request would be rejected now.
    pub probability: f64,
    /// The sliding window's requests and accepts.
    pub requests: f64,
    pub accepts: f64,
    pub at: SystemTime,
}

/// Where the throttle is kept.
#[derive(Debug)]
enum Kind {
    /// The host store's directory; the file is opened by the first ask.
    Unopened(PathBuf),
    Host(HostThrottle),
    #[cfg(feature = "redis")]
    Fleet(Box<fleet::Fleet>),
    /// It could not be used: the run goes on without it (said once).
    Skipped,
}

/// The run's throttle.
#[derive(Debug)]
pub struct Throttle {
    settings: Settings,
    kind: Kind,
    seen: Option<Seen>,
}

/// One exchange's result: the request allowed (always, for a tell), the
/// probability it was decided on, and the throttle after it.
struct Exchange {
    allowed: bool,
    decided: f64,
    seen: Seen,
}

impl Throttle {
    /// The throttle `settings` name; nothing is opened before the first ask.
    pub fn new(settings: Settings) -> Self {
        let kind = match &settings.store {
            Store::Host => Kind::Unopened(default_dir()),
            #[cfg(feature = "redis")]
            Store::Redis(remote) => Kind::Fleet(Box::new(fleet::Fleet::new(&settings, remote))),
        };
        Throttle {
            settings,
            kind,
            seen: None,
        }
    }

    /// `--throttle NAME`'s name.
    pub fn name(&self) -> &str {
        &self.settings.name
    }

    /// The throttle as this run last saw it; `None` before it was asked,
    /// or once it was skipped.
    pub fn seen(&self) -> Option<Seen> {
        self.seen
    }

    /// Before an attempt: counts it, and whether it is rejected, decided
    /// by `draw` (uniform in [0, 1)); `told`: whether the service accepted
    /// the attempt before, if one ran since the last ask.
    pub fn ask(&mut self, told: Option<bool>, draw: f64) -> Asked {
        let op = Op::Ask {
            accepted: told == Some(true),
            draw,
        };
        match self.exchange(op) {
            Ok(exchange) => Asked {
                rejected: !exchange.allowed,
                probability: exchange.decided,
                warning: None,
            },
            Err(warning) => Asked {
                rejected: false,
                probability: 0.0,
                warning,
            },
        }
    }

    /// At the run's end: whether the service accepted its last attempt,
    /// if one ran since the last ask; what to log. Only an accept is
    /// written: the request was counted when it was asked.
    pub fn tell(&mut self, told: Option<bool>) -> Option<String> {
        match told {
            Some(true) => self.exchange(Op::Accept).err().flatten(),
            _ => None,
        }
    }

    /// One exchange with the store (the host file opened by the first),
    /// on its clock: its result, or the throttle skipped for the rest of
    /// the run with its one warning (none if it was skipped already).
    fn exchange(&mut self, op: Op) -> Result<Exchange, Option<String>> {
        let name = &self.settings.name;
        if let Kind::Unopened(dir) = &self.kind {
            let opened = HostThrottle::open(dir, name, true, self.settings.timeout)
                .and_then(|host| host.ok_or_else(|| "the state file was not created".to_owned()));
            match opened {
                Ok(host) => self.kind = Kind::Host(host),
                Err(e) => return Err(self.skip(Fallback::Failed(e))),
            }
        }
        let exchanged = match &mut self.kind {
            Kind::Host(host) => on_host(host, &self.settings.params, op),
            #[cfg(feature = "redis")]
            Kind::Fleet(fleet) => on_fleet(fleet, op),
            Kind::Unopened(_) | Kind::Skipped => return Err(None),
        };
        match exchanged {
            Ok(exchange) => {
                self.seen = Some(exchange.seen);
                Ok(exchange)
            }
            Err(fallback) => Err(self.skip(fallback)),
        }
    }

    /// Skips the throttle for the rest of the run: its one warning.
    fn skip(&mut self, fallback: Fallback) -> Option<String> {
        let name = &self.settings.name;
        let warning = match fallback {
            Fallback::Untrusted(why) => {
                format!("--throttle {name}: {why}; reset, and this run goes without the throttle")
            }
            Fallback::Failed(e) => format!("--throttle {name}: {e}; running without the throttle"),
            #[cfg(feature = "redis")]
            Fallback::Store(warning) => warning,
        };
        self.kind = Kind::Skipped;
        self.seen = None;
        Some(warning)
    }
}

/// What an exchange asks.
#[derive(Clone, Copy)]
enum Op {
    /// Count a request and decide it, the attempt before's accept first.
    Ask { accepted: bool, draw: f64 },
    /// Count an accept (the run's last attempt's).
    Accept,
}

/// Why an exchange gave no result.
enum Fallback {
    /// The state could not be trusted, and why.
    Untrusted(String),
    /// The host file could not be used, and why.
    Failed(String),
    /// The fleet's store failed: its whole warning.
    #[cfg(feature = "redis")]
    Store(String),
}

/// An exchange with the host's file, under its lock, at the host's now.
fn on_host(host: &HostThrottle, params: &Params, op: Op) -> Result<Exchange, Fallback> {
    let now = now_ns() / 1_000_000;
    let change = |window: &mut Window| match op {
        Op::Ask { accepted, draw } => {
            if accepted {
                window.accept(params, now);
            }
            let decided = window.reject_probability(params, now);
            (window.request(params, now, draw), decided)
        }
        Op::Accept => {
            window.accept(params, now);
            (true, 0.0)
        }
    };
    match host.update(true, params, now, change) {
        Ok(Read::Trusted((allowed, decided), window)) => Ok(Exchange {
            allowed,
            decided,
            seen: seen(&window, params, now),
        }),
        Ok(Read::Untrusted(why)) => Err(Fallback::Untrusted(why)),
        Err(e) => Err(Fallback::Failed(e)),
    }
}

/// An exchange with the fleet's store: one script call, on its clock.
#[cfg(feature = "redis")]
fn on_fleet(fleet: &mut fleet::Fleet, op: Op) -> Result<Exchange, Fallback> {
    let reply = match op {
        Op::Ask { accepted, draw } => fleet.ask(accepted, draw),
        Op::Accept => fleet.tell(true),
    };
    let reply = reply.map_err(|e| Fallback::Store(fleet.failed(&e)))?;
    if reply.untrusted {
        return Err(Fallback::Untrusted(format!(
            "the hash {} in {} held what no retry writes (a count that is negative, \
             not a whole number or over {MAX_COUNT}, or a window ahead of the server's clock)",
            fleet.key(),
            fleet.remote()
        )));
    }
    Ok(Exchange {
        allowed: reply.allowed,
        decided: reply.decided,
        seen: Seen {
            probability: reply.probability,
            requests: reply.requests,
            accepts: reply.accepts,
            at: SystemTime::now(),
        },
    })
}

/// The throttle's window as seen at `now_ms`.
fn seen(window: &Window, params: &Params, now_ms: u64) -> Seen {
    let (requests, accepts) = window.counts(params, now_ms);
    Seen {
        probability: window.reject_probability(params, now_ms),
        requests,
        accepts,
        at: SystemTime::now(),
    }
}

/// Why a stored window cannot be trusted at `now_ms`, if it cannot: a
/// count no fleet makes (over `MAX_COUNT`), or a window that starts more
/// than a window ahead of the clock (a clock that went back, or a record
/// written by hand), which would keep its counts for as long as that.
pub fn distrust(window: &Window, params: &Params, now_ms: u64) -> Option<String> {
    let counts = [
        window.current.requests,
        window.current.accepts,
        window.previous.requests,
        window.previous.accepts,
    ];
    if let Some(huge) = counts.iter().find(|&&n| n > MAX_COUNT) {
        return Some(format!("holds a count of {huge}, over {MAX_COUNT}"));
    }
    let ahead = window.start_ms.saturating_sub(now_ms);
    if ahead > params.window_ms {
        return Some(format!(
            "starts its window {} s ahead of the clock, more than a window: \
             a clock that went back, or a record retry did not write",
            ahead.div_ceil(1000)
        ));
    }
    None
}

#[cfg(test)]
mod tests;
