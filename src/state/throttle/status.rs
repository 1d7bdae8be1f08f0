//! `--throttle-status NAME`: what a throttle counts now, and the
//! probability a request would be rejected, read without writing.

use std::io::{self, Write};
use std::time::{Duration, SystemTime};

use super::host::{HostThrottle, Read};
use super::{Params, Seen, Settings, seen};
use crate::state::store::Store;
use crate::state::store::file::{default_dir, now_ns};

/// What `--throttle-status` prints; `place` is where the state is (a file,
/// a store's key).
pub(super) fn describe(name: &str, params: &Params, seen: &Seen, place: &str) -> String {
    let window = humantime::format_duration(Duration::from_millis(params.window_ms));
    format!(
        "throttle {name}: rejects {:.1}% of requests now (K {}); over the last {window}: \
         {:.1} requests, {:.1} accepted\nstate: {place}\n",
        seen.probability * 100.0,
        params.k,
        seen.requests,
        seen.accepts,
    )
}

/// `--throttle-status NAME`: the throttle on stdout; exit 1 if it cannot
/// be read safely (the reason on stderr: a run would go without it) or if
/// stdout is closed. What was read, for its metrics.
pub fn print_status(settings: &Settings) -> (u8, Option<Seen>) {
    let report = match &settings.store {
        Store::Host => host_status(settings),
        #[cfg(feature = "redis")]
        Store::Redis(remote) => fleet_status(settings, remote),
    };
    let seen = report.as_ref().ok().map(|(_, seen)| *seen);
    let report = report.map(|(text, _)| text);
    let code = crate::state::print_status(report, "--throttle", &settings.name);
    (code, seen)
}

/// Nothing counted: a throttle never used, or one that is not trusted
/// (which the next run resets).
fn empty() -> Seen {
    Seen {
        probability: 0.0,
        requests: 0.0,
        accepts: 0.0,
        at: SystemTime::now(),
    }
}

fn host_status(settings: &Settings) -> Result<(String, Seen), String> {
    let dir = default_dir();
    let (name, params) = (&settings.name, &settings.params);
    let now = now_ns() / 1_000_000;
    let Some(look) = HostThrottle::open(&dir, name, false, settings.timeout)? else {
        let place = HostThrottle::path_of(&dir, name);
        let seen = empty();
        let place = format!("{} (not used yet)", place.display());
        return Ok((describe(name, params, &seen, &place), seen));
    };
    let seen = match look.update(false, params, now, |_| ())? {
        Read::Trusted((), window) => seen(&window, params, now),
        Read::Untrusted(why) => {
            let _ = writeln!(
                io::stderr(),
                "retry: warning: --throttle {name}: {why}; the next run resets it and goes without the throttle"
            );
            empty()
        }
    };
    let place = look.path.display().to_string();
    Ok((describe(name, params, &seen, &place), seen))
}

/// The throttle in Redis, on the server's clock; the store is named
/// without its password.
#[cfg(feature = "redis")]
fn fleet_status(
    settings: &Settings,
    remote: &crate::state::store::Remote,
) -> Result<(String, Seen), String> {
    let mut fleet = super::fleet::Fleet::new(settings, remote);
    let reply = fleet
        .look()
        .map_err(|e| format!("the store {remote} failed: {e}"))?;
    let name = &settings.name;
    if reply.untrusted {
        let _ = writeln!(
            io::stderr(),
            "retry: warning: --throttle {name}: the hash {} held what no retry writes; \
             the next run deletes it and goes without the throttle",
            fleet.key()
        );
    }
    let seen = Seen {
        probability: reply.probability,
        requests: reply.requests,
        accepts: reply.accepts,
        at: SystemTime::now(),
    };
    let absent = match reply.found {
        true => "",
        false => " (no key: nothing counted)",
    };
    let place = format!("{} in {remote}{absent}", fleet.key());
    Ok((describe(name, &settings.params, &seen, &place), seen))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_says_the_probability_and_the_counts() {
        let params = Params {
            k: 2.0,
            window_ms: 120_000,
        };
        let seen = Seen {
            probability: 80.0 / 101.0,
            requests: 100.0,
            accepts: 10.0,
            at: SystemTime::UNIX_EPOCH,
        };
        assert_eq!(
            describe("api", &params, &seen, "/r/.throttles/api"),
            "throttle api: rejects 79.2% of requests now (K 2); over the last 2m: \
             100.0 requests, 10.0 accepted\nstate: /r/.throttles/api\n"
        );
        let odd = Params {
            k: 1.5,
            window_ms: 90_000,
        };
        let text = describe("api", &odd, &empty(), "k");
        assert!(
            text.starts_with("throttle api: rejects 0.0% of requests now (K 1.5); over the last 1m 30s: 0.0 requests"),
            "{text}"
        );
    }
}
