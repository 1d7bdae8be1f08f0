//! `--breaker-status NAME`: a circuit as it stands, read without writing.

use std::io::{self, Write};

use super::host::HostCircuit;
use super::machine::{horizon, nanos};
use super::{Circuit, Params, Settings, State, went_back, when};
use crate::state::store::Store;
use crate::state::store::file::{default_dir, now_ns};

/// What `--breaker-status` prints; `place` is where the state is (a file,
/// a store's key).
pub(super) fn describe(
    name: &str,
    params: &Params,
    circuit: &Circuit,
    now: u64,
    place: &str,
) -> String {
    let (state, next) = match circuit.state {
        State::Closed => ("closed", "runs go ahead".to_owned()),
        State::Open { until } => ("open", format!("a probe may run at {}", when(until, now))),
        State::Probing { until, .. } => (
            "probing",
            format!("a run probes; its lease ends at {}", when(until, now)),
        ),
    };
    let runs = match circuit.failures {
        1 => "run",
        _ => "runs",
    };
    // The threshold the record was counted to, where it says it.
    let threshold = match (circuit.after, circuit.state) {
        (0, _) => format!("it opens at {}", params.after),
        (after, State::Closed) => format!("it opens at {after}"),
        (after, _) => format!("it opened at {after}"),
    };
    format!(
        "breaker {name}: {state}; {} failed {runs} in a row ({threshold}); cooldown level {}; {next}\n\
         state: {place}\n",
        circuit.failures, circuit.level,
    )
}

/// `--breaker-status NAME`: the circuit on stdout; exit 1 if it cannot be
/// read safely (the reason on stderr: a run would go without it) or if
/// stdout is closed. The circuit read, for its metrics.
pub fn print_status(settings: &Settings) -> (u8, Option<Circuit>) {
    let report = match &settings.store {
        Store::Host => host_status(settings),
        #[cfg(feature = "redis")]
        Store::Redis(remote) => fleet_status(settings, remote),
    };
    let circuit = report.as_ref().ok().map(|(_, circuit)| *circuit);
    let report = report.map(|(text, _)| text);
    let code = crate::state::print_status(report, "--breaker", &settings.name);
    (code, circuit)
}

fn host_status(settings: &Settings) -> Result<(String, Circuit), String> {
    let dir = default_dir();
    let now = now_ns();
    let name = &settings.name;
    match HostCircuit::open(&dir, name, false)? {
        None => Ok((
            describe(
                name,
                &settings.params,
                &Circuit::default(),
                now,
                &format!("{} (not used yet)", dir.display()),
            ),
            Circuit::default(),
        )),
        Some(look) => {
            // As a run would take it, clamped (a look writes nothing).
            let lease = nanos(settings.lease);
            let own = horizon(settings.params.cap(), lease);
            let found = look.update(false, |c| (c.clamp(now, own, lease), c.limit))?;
            let said = found.reset.or_else(|| {
                let (was, far) = found.value.0;
                Some(went_back(Some(was?), &found.value.1, far, now))
            });
            if let Some(said) = said {
                let _ = writeln!(io::stderr(), "retry: warning: --breaker {name}: {said}");
            }
            let place = look.path.display().to_string();
            let circuit = found.value.1;
            Ok((
                describe(name, &settings.params, &circuit, now, &place),
                circuit,
            ))
        }
    }
}

/// The circuit in Redis, on the server's clock; the store is named
/// without its password.
#[cfg(feature = "redis")]
fn fleet_status(
    settings: &Settings,
    remote: &crate::state::store::Remote,
) -> Result<(String, Circuit), String> {
    let mut fleet = super::fleet::Fleet::new(settings, remote);
    let reply = fleet
        .look()
        .map_err(|e| format!("the store {remote} failed: {e}"))?;
    let absent = match reply.circuit == Circuit::default() {
        true => " (no key: closed, nothing counted)",
        false => "",
    };
    let place = format!("{} in {remote}{absent}", fleet.key());
    if reply.clamped {
        let said = went_back(None, &reply.circuit, reply.reach, reply.now);
        let name = &settings.name;
        let _ = writeln!(io::stderr(), "retry: warning: --breaker {name}: {said}");
    }
    Ok((
        describe(
            &settings.name,
            &settings.params,
            &reply.circuit,
            reply.now,
            &place,
        ),
        reply.circuit,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn status_says_the_state_the_count_and_the_next_probe() {
        let p = Params {
            after: 3,
            cooldown: Duration::from_secs(60),
            max: Duration::from_secs(480),
        };
        let s = 1_000_000_000;
        let now = 1_795_434_960 * s;
        let closed = Circuit {
            failures: 1,
            ..Circuit::default()
        };
        assert_eq!(
            describe("ci", &p, &closed, now, "/r/.breakers/ci"),
            "breaker ci: closed; 1 failed run in a row (it opens at 3); cooldown level 0; runs go ahead\n\
             state: /r/.breakers/ci\n"
        );
        let open = Circuit {
            state: State::Open {
                until: now + 93 * s,
            },
            failures: 4,
            level: 1,
            after: 0,
            limit: 0,
        };
        let text = describe("ci", &p, &open, now, "k");
        assert!(
            text.starts_with("breaker ci: open; 4 failed runs in a row (it opens at 3); cooldown level 1; a probe may run at 2026-11-23T11:57:33Z (in 93 s)\n"),
            "{text}"
        );
        // The threshold the record was counted to, not the status's own.
        let opened_at_2 = Circuit { after: 2, ..open };
        let text = describe("ci", &p, &opened_at_2, now, "k");
        assert!(
            text.starts_with("breaker ci: open; 4 failed runs in a row (it opened at 2); "),
            "{text}"
        );
        let counted_to_5 = Circuit { after: 5, ..closed };
        let text = describe("ci", &p, &counted_to_5, now, "k");
        assert!(
            text.contains("1 failed run in a row (it opens at 5)"),
            "{text}"
        );
        let probing = Circuit {
            state: State::Probing {
                lease: now,
                until: now + 600 * s,
            },
            ..open
        };
        let text = describe("ci", &p, &probing, now, "k");
        assert!(
            text.contains("probing; ") && text.contains("lease ends at"),
            "{text}"
        );
    }
}
