//! `--budget-status NAME`: what a budget holds now, read without writing.

use std::io;

use super::{Bucket, Budget, Params, Settings, Store, bucket, default_dir};

/// What `--budget-status` prints; `place` is where the state is (a file, a
/// store's key).
fn describe(name: &str, params: &Params, bucket: Option<Bucket>, place: &str) -> String {
    let milli = bucket.map_or(params.capacity(), |b| b.milli);
    let tokens = milli as f64 / bucket::MILLI as f64;
    let pays = |cost: u32| milli / (u64::from(cost).max(1) * bucket::MILLI);
    let (retries, throttled) = (pays(params.cost), pays(params.throttle_cost));
    let missing = (params.capacity() - milli.min(params.capacity())) as f64 / bucket::MILLI as f64;
    let refill = if missing == 0.0 {
        "full".to_owned()
    } else if params.refill > 0.0 {
        format!(
            "full again in {:.0} s if idle",
            (missing / params.refill).ceil()
        )
    } else {
        "refills only on success".to_owned()
    };
    let state = match bucket {
        Some(_) => place.to_owned(),
        None => format!("{place} (not used yet)"),
    };
    format!(
        "budget {name}: {tokens:.1} of {} tokens, {retries} retries at {} each \
         ({throttled} throttled ones at {}); {refill}\n\
         refill: {} tokens/s; state: {state}\n",
        params.tokens, params.cost, params.throttle_cost, params.refill,
    )
}

/// `--budget-status NAME`: the bucket's state on stdout; exit 1 if it
/// cannot be read safely (the reason on stderr; a run would go without the
/// budget) or if stdout is closed.
pub fn print_status(settings: &Settings) -> u8 {
    let report = match &settings.store {
        Store::Host => host_status(settings),
        #[cfg(feature = "redis")]
        Store::Redis(remote) => fleet_status(settings, remote),
    };
    crate::state::print_status(report, "--budget", &settings.name)
}

fn host_status(settings: &Settings) -> Result<String, String> {
    use std::io::Write;
    match Budget::peek(settings) {
        Ok(None) => Ok(describe(
            &settings.name,
            &settings.params,
            None,
            &default_dir().join(&settings.name).display().to_string(),
        )),
        Ok(Some(budget)) => budget.current().map(|updated| {
            if let Some(reset) = updated.reset {
                let _ = writeln!(io::stderr(), "retry: warning: {reset}");
            }
            let (bucket, params) = updated.value;
            describe(
                &settings.name,
                &params,
                Some(bucket),
                &budget.path.display().to_string(),
            )
        }),
        Err(e) => Err(e),
    }
}

/// The bucket in Redis, as the script sees it on the server's clock; the
/// store is named without its password.
#[cfg(feature = "redis")]
fn fleet_status(
    settings: &Settings,
    remote: &crate::state::store::Remote,
) -> Result<String, String> {
    let mut fleet = super::fleet::Fleet::new(settings, remote);
    let reply = fleet
        .look()
        .map_err(|e| format!("the store {remote} failed: {e}"))?;
    let params = settings.params.sized(reply.size);
    let bucket = Bucket {
        milli: reply.milli,
        at_ns: 0,
    };
    let absent = if reply.found {
        ""
    } else {
        " (no key: new or full)"
    };
    let place = format!("{} in {remote}{absent}", fleet.key());
    Ok(describe(&settings.name, &params, Some(bucket), &place))
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::tests::P;

    #[test]
    fn status_says_how_many_retries_are_left() {
        let p = Params { refill: 2.0, ..P };
        let bucket = Bucket {
            milli: 7_500,
            at_ns: 0,
        };
        let text = describe("ci", &p, Some(bucket), "/r/ci");
        assert_eq!(
            text,
            "budget ci: 7.5 of 20 tokens, 1 retries at 5 each (3 throttled ones at 2); full again in 7 s if idle\n\
             refill: 2 tokens/s; state: /r/ci\n"
        );
        let text = describe("ci", &P, None, "/r/ci");
        assert!(
            text.starts_with("budget ci: 20.0 of 20 tokens, 4 retries")
                && text.contains("; full\n"),
            "{text}"
        );
        assert!(text.ends_with("state: /r/ci (not used yet)\n"), "{text}");
    }
}
