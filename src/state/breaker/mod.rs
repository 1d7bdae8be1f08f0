//! `--breaker NAME`: a circuit breaker shared by every `retry` that names
//! it, on this host (`host.rs`) or, with `--store`, in a fleet's Redis
//! (`fleet.rs`), so that during an outage the first attempts stop too, and
//! one probe finds out when the service is back. The rules are
//! `machine.rs`'s, with time and randomness as parameters.
//!
//! The run asks once, before its first attempt (`Breaker::ask`), and
//! tells once, at its end (`Breaker::tell`). A run that finds the circuit
//! closed with no failure counted and succeeds costs two reads and no write,
//! unless runs that overlapped it counted failures meanwhile: its success
//! ends their row, as "in a row" says.
//!
//! A breaker never stops a command for its own failure: state that cannot
//! be used safely (another user's file or directory, a symlink) or a store
//! that fails lets the run go ahead, with one warning, as without it.

#[cfg(feature = "redis")]
pub mod fleet;
mod host;
pub mod machine;
mod status;

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

pub use machine::{Admit, Circuit, Ended, MAX_COOLDOWN, Params, State};
pub use status::print_status;

use crate::state::store::Store;
use crate::state::store::file::{default_dir, now_ns};
use host::{HostCircuit, ProbeLock};
use machine::{horizon, nanos};

/// `--breaker-after` when not given, and the cooldown's: chosen by the
/// outage table of `--simulate --model outage` (docs/simulation.md,
/// "Choosing the defaults"). `--help` says them in its words, held to
/// these by a test in `cli/config.rs`.
pub const DEFAULT_AFTER: u32 = 3;
/// `--breaker-cooldown` when not given (chosen as above).
pub const DEFAULT_COOLDOWN: Duration = Duration::from_secs(30);
/// `--breaker-cooldown-max` when not given (chosen as above: the shortest
/// cap that never overloaded the recovering service in either scope; its
/// recovery lag column): the longest a failed probe grows the cooldown
/// to, so the last host resumes at most about this and one period of its
/// job after the dependency is back.
pub const DEFAULT_COOLDOWN_MAX: Duration = Duration::from_secs(240);

/// A probe's lease without `--max-time`: a probe that crashed holds the
/// circuit no longer than this.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(600);

/// The exit status of a run the open circuit did not let start, unless
/// `--breaker-exit-code` says another: EX_TEMPFAIL (sysexits.h), "try
/// again later".
pub const EXIT_OPEN: i32 = 75;

/// A probe's lease: the run's `--max-time`, which ends it, else
/// `DEFAULT_LEASE`.
pub fn lease(max_time: Option<Duration>) -> Duration {
    max_time.unwrap_or(DEFAULT_LEASE)
}

/// `--breaker NAME`: a plain file name, as a budget's.
pub fn parse_name(text: &str) -> Result<String, String> {
    crate::state::parse_name(text, "breaker")
}

/// What the command line asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub name: String,
    pub params: Params,
    /// How long a probe holds the circuit at most.
    pub lease: Duration,
    /// `--store`: this host's file, or a Redis server.
    pub store: Store,
    /// `--store-timeout`: the most a store's connection and answer take.
    pub timeout: Duration,
    /// `--breaker-exit-code`: the exit status of a run the open circuit
    /// did not let start.
    pub exit_code: i32,
}

/// The breaker's answer to a run about to start.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Asked {
    /// The circuit is open: why, and when a probe may run (the command
    /// does not start; retry exits 75).
    pub refused: Option<String>,
    /// What to log: a reset record, or why the breaker was skipped.
    pub warning: Option<String>,
}

/// Where the circuit is kept.
#[derive(Debug)]
enum Kind {
    /// The host store's directory, and the lock a probe holds.
    Host(PathBuf, Box<ProbeLock>),
    #[cfg(feature = "redis")]
    Fleet(Box<fleet::Fleet>),
    /// It could not be used: the run goes on without it (said once).
    Skipped,
}

/// The run's circuit.
#[derive(Debug)]
pub struct Breaker {
    settings: Settings,
    kind: Kind,
    /// The lease this run probes under, if it does.
    lease: Option<u64>,
    /// The run found the circuit closed with nothing counted: an end
    /// that is neither success nor failure has nothing to tell. A success
    /// is told all the same: runs that overlapped it may have counted
    /// failures since, and it ends their row.
    clean: bool,
    /// The circuit as the run last saw it (asked, then told), and when,
    /// for its metrics; `None` while unasked, or if the store failed.
    seen: Option<(Circuit, SystemTime)>,
}

impl Breaker {
    pub fn new(settings: Settings) -> Self {
        let kind = match &settings.store {
            Store::Host => {
                let dir = default_dir();
                let probe = Box::new(ProbeLock::new(&dir, &settings.name));
                Kind::Host(dir, probe)
            }
            #[cfg(feature = "redis")]
            Store::Redis(remote) => Kind::Fleet(Box::new(fleet::Fleet::new(&settings, remote))),
        };
        Breaker {
            settings,
            kind,
            lease: None,
            clean: false,
            seen: None,
        }
    }

    /// `--breaker NAME`'s name.
    pub fn name(&self) -> &str {
        &self.settings.name
    }

    /// The circuit as this run last saw it, and when: after its end was
    /// told, else as it was asked (a run the open circuit skipped, a clean
    /// success).
    pub fn seen(&self) -> Option<(Circuit, SystemTime)> {
        self.seen
    }

    /// Before the first attempt: whether the command may start.
    pub fn ask(&mut self) -> Asked {
        let lease = nanos(self.settings.lease);
        let asked = match &mut self.kind {
            Kind::Host(dir, probe) => {
                let now = now_ns();
                let own = horizon(self.settings.params.cap(), lease);
                let asked = host_change(dir, &self.settings.name, |c, _| {
                    let far = c.reach(own, lease);
                    let clamped = c.clamp(now, own, lease).map(Some);
                    let before = c.state;
                    // A probe whose lock is free is dead: the kernel let go.
                    if matches!(c.state, State::Probing { until, .. } if now < until)
                        && probe.hold(false)
                    {
                        c.prober_gone(now);
                    }
                    let was = c.state;
                    let mut admit = c.admit(now, lease);
                    // Only the lock's holder probes a circuit whose cooldown
                    // ended: one that holds it now took it a moment ago
                    // and is about to say so. (After a lease that ran out,
                    // a probe that hangs may hold it still: the lease ends
                    // its turn, lock or not.)
                    if let Admit::Probe(_) = admit
                        && !probe.hold(true)
                        && probe.trouble.is_none()
                        && matches!(was, State::Open { .. })
                    {
                        c.state = was;
                        admit = Admit::Skip {
                            until: now.saturating_add(lease),
                            probing: true,
                        };
                    }
                    c.mark(before, own);
                    (admit, clamped, far)
                });
                if !matches!(asked, Ok(((Admit::Probe(_), ..), ..))) {
                    probe.release();
                }
                asked.map(|((admit, clamped, far), circuit, reset)| {
                    let trouble = probe.trouble.take();
                    (admit, circuit, now, reset.or(trouble), clamped, far)
                })
            }
            #[cfg(feature = "redis")]
            Kind::Fleet(fleet) => fleet.ask().map(|r| {
                let clamped = r.clamped.then_some(None);
                (r.admit, r.circuit, r.now, None, clamped, r.reach)
            }),
            Kind::Skipped => return Asked::default(),
        };
        match asked {
            Ok((admit, circuit, now, said, clamped, far)) => {
                self.seen = Some((circuit, SystemTime::now()));
                let said = said.or_else(|| {
                    let was = clamped?;
                    Some(went_back(was, &circuit, far, now))
                });
                let warning = said.map(|said| format!("--breaker {}: {said}", self.settings.name));
                match admit {
                    Admit::Run => {
                        self.clean = circuit == Circuit::default();
                        Asked {
                            refused: None,
                            warning,
                        }
                    }
                    Admit::Probe(lease) => {
                        self.lease = Some(lease);
                        Asked {
                            refused: None,
                            warning,
                        }
                    }
                    Admit::Skip { until, probing } => Asked {
                        refused: Some(refused(&self.settings, &circuit, until, probing, now)),
                        warning,
                    },
                }
            }
            Err(e) => {
                self.kind = Kind::Skipped;
                Asked {
                    refused: None,
                    warning: Some(self.without(&e)),
                }
            }
        }
    }

    /// At the run's end: how it ended; what to log.
    pub fn tell(&mut self, ended: Ended) -> Option<String> {
        if self.clean && ended == Ended::Neither {
            return None;
        }
        let (params, lease) = (self.settings.params, self.lease.take());
        let own = horizon(params.cap(), nanos(self.settings.lease));
        let mut rng = crate::strategy::rng(None);
        let told = match &mut self.kind {
            Kind::Host(dir, probe) => {
                let now = now_ns();
                let told = host_change(dir, &self.settings.name, |c, writing| {
                    // Given up under the circuit's lock, before the record
                    // says the probe ended: no run sees the record say this
                    // run probes and the lock free, unless it died here.
                    if writing {
                        probe.release();
                    }
                    let before = c.state;
                    c.finish(&params, now, ended, lease, &mut rng);
                    c.mark(before, own);
                })
                .map(|(_, circuit, reset)| (reset, Some(circuit)));
                probe.release();
                told
            }
            #[cfg(feature = "redis")]
            Kind::Fleet(fleet) => fleet.tell(ended, lease, &mut rng),
            Kind::Skipped => return None,
        };
        match told {
            Ok((said, circuit)) => {
                self.seen = circuit.map(|c| (c, SystemTime::now())).or(self.seen);
                said.map(|said| format!("--breaker {}: {said}", self.settings.name))
            }
            Err(e) => {
                self.kind = Kind::Skipped;
                self.seen = None;
                Some(self.without(&e))
            }
        }
    }

    /// The one warning of a breaker that could not be used.
    fn without(&self, e: &str) -> String {
        // A store's failure is worded by the store (`fleet::failed`).
        if e.starts_with("--breaker ") {
            return e.to_owned();
        }
        format!(
            "--breaker {}: {e}; running without the breaker",
            self.settings.name
        )
    }
}

/// The circuit `name` in the host store `dir`, changed by `change` (run on
/// a look first, then again under the lock of a file opened for writing
/// if it changed anything, told so by its second argument): what `change`
/// returned, the circuit after it, and a record that was not valid. A
/// circuit never used and left closed with nothing counted creates no file.
fn host_change<T>(
    dir: &std::path::Path,
    name: &str,
    mut change: impl FnMut(&mut Circuit, bool) -> T,
) -> Result<(T, Circuit, Option<String>), String> {
    match HostCircuit::open(dir, name, false)? {
        Some(look) => {
            let found = look.update(false, |c| change(c, false))?;
            let (value, circuit, changed) = found.value;
            if !changed {
                return Ok((value, circuit, found.reset));
            }
        }
        None => {
            let mut circuit = Circuit::default();
            let value = change(&mut circuit, false);
            if circuit == Circuit::default() {
                return Ok((value, circuit, None));
            }
        }
    }
    let circuit = HostCircuit::open(dir, name, true)?
        .ok_or_else(|| "the state file was not created".to_owned())?;
    let found = circuit.update(true, |c| change(c, true))?;
    let (value, circuit, _) = found.value;
    Ok((value, circuit, found.reset))
}

/// A time on the circuit's clock as messages give it: `2026-11-27T05:31:02Z
/// (in 93 s)`, from `now`.
pub fn when(at_ns: u64, now_ns: u64) -> String {
    let secs = at_ns.saturating_sub(now_ns).div_ceil(1_000_000_000);
    format!("{} (in {secs} s)", rfc3339(at_ns))
}

/// A host record as `fuzzing::breaker_record` reads it: the record
/// written back from its circuit, what `--breaker-status` prints (and the
/// warning of a clamped end), what a run would be told, the circuit's end
/// once clamped, and how far ahead of now that end could lie (ns).
pub type ReadRecord = (Vec<u8>, String, Admit, Option<u64>, u64);

/// For `fuzzing::breaker_record`: a host record's bytes read as a run
/// with the default options reads them at `now` (ns); `None` if they are
/// not a record.
pub fn read_record(bytes: &[u8], now: u64) -> Option<ReadRecord> {
    let mut circuit = host::decode(bytes)?;
    let written = host::encode(&circuit).into_bytes();
    let lease = nanos(DEFAULT_LEASE);
    let params = Params {
        after: DEFAULT_AFTER,
        cooldown: DEFAULT_COOLDOWN,
        max: DEFAULT_COOLDOWN_MAX,
    };
    let own = horizon(params.cap(), lease);
    let far = circuit.reach(own, lease);
    let was = circuit.clamp(now, own, lease);
    let mut said = status::describe("ci", &params, &circuit, now, "-");
    if let Some(was) = was {
        said.push_str(&went_back(Some(was), &circuit, far, now));
        said.push('\n');
    }
    let end = match circuit.state {
        State::Open { until } | State::Probing { until, .. } => Some(until),
        State::Closed => None,
    };
    let admit = circuit.admit(now, lease);
    Some((written, said, admit, end, far))
}

/// `bytes`, a host breaker's record, with the end of its cooldown or lease
/// moved to `until` (ns), written as the breaker writes a record: what a
/// clock that was ahead leaves behind. `None` if they are not a record or
/// the circuit is closed (it has no end).
pub fn record_ending_at(bytes: &[u8], until: u64) -> Option<Vec<u8>> {
    let mut circuit = host::decode(bytes)?;
    match &mut circuit.state {
        State::Open { until: end } | State::Probing { until: end, .. } => *end = until,
        State::Closed => return None,
    }
    Some(host::encode(&circuit).into_bytes())
}

/// The warning of a circuit whose end lay further ahead than any run on
/// this clock could have set (`was`, when the store says it): taken for a
/// clock that went back, and clamped (`Circuit::clamp`).
fn went_back(was: Option<u64>, circuit: &Circuit, far: u64, now: u64) -> String {
    let was = match was {
        Some(at) => format!(" ({})", rfc3339(at)),
        None => String::new(),
    };
    let ends = match circuit.state {
        State::Open { until } | State::Probing { until, .. } => until,
        State::Closed => now,
    };
    format!(
        "the circuit's end{was} lay further ahead than its longest cooldown and lease \
         ({} s); taken for a clock that went back: it ends at {}",
        far.div_ceil(1_000_000_000),
        when(ends, now)
    )
}

/// A time on the circuit's clock, to the second.
fn rfc3339(at_ns: u64) -> String {
    let time = std::time::SystemTime::UNIX_EPOCH + Duration::from_nanos(at_ns);
    humantime::format_rfc3339_seconds(time).to_string()
}

/// The line of a run the circuit did not let start.
fn refused(settings: &Settings, circuit: &Circuit, until: u64, probing: bool, now: u64) -> String {
    let name = &settings.name;
    let at = when(until, now);
    match probing {
        false => format!(
            "--breaker {name}: the circuit is open after {} failed {} in a row; \
             a probe may run at {at}; the command was not run",
            circuit.failures,
            match circuit.failures {
                1 => "run",
                _ => "runs",
            }
        ),
        true => format!(
            "--breaker {name}: the circuit is open and another run probes it; \
             if it does not end sooner, a probe may run at {at}; the command was not run"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn settings() -> Settings {
        Settings {
            name: "ci".into(),
            params: Params {
                after: 2,
                cooldown: Duration::from_secs(60),
                max: Duration::from_secs(480),
            },
            lease: DEFAULT_LEASE,
            store: Store::Host,
            timeout: crate::state::store::DEFAULT_TIMEOUT,
            exit_code: EXIT_OPEN,
        }
    }

    fn breaker(dir: &std::path::Path) -> Breaker {
        Breaker {
            settings: settings(),
            kind: Kind::Host(dir.to_owned(), Box::new(ProbeLock::new(dir, "ci"))),
            lease: None,
            clean: false,
            seen: None,
        }
    }

    /// `--breaker-after 1` opened it after one run: "1 failed runs" was said.
    #[test]
    fn a_refusal_counts_its_runs_in_words_that_agree() {
        let open = |failures| Circuit {
            state: State::Open { until: 90 * S },
            failures,
            level: 0,
            after: 1,
            limit: 0,
        };
        let one = refused(&settings(), &open(1), 90 * S, false, 0);
        assert!(one.contains("open after 1 failed run in a row;"), "{one}");
        let two = refused(&settings(), &open(2), 90 * S, false, 0);
        assert!(two.contains("open after 2 failed runs in a row;"), "{two}");
    }

    #[test]
    fn a_record_moved_far_ahead_is_read_and_clamped() {
        let open = Circuit {
            state: State::Open { until: 5 * S },
            failures: 3,
            level: 1,
            after: 3,
            limit: 0,
        };
        let bytes = host::encode(&open).into_bytes();
        let far = record_ending_at(&bytes, u64::MAX).unwrap();
        let moved = host::decode(&far).unwrap();
        assert_eq!(moved.state, State::Open { until: u64::MAX });
        assert_eq!((moved.failures, moved.level, moved.after), (3, 1, 3));
        let (_, status, _, end, _) = read_record(&far, 10 * S).unwrap();
        assert!(status.contains("lay further ahead"), "{status}");
        assert!(end.unwrap() < u64::MAX);
        // A closed circuit has no end to move.
        let closed = Circuit {
            state: State::Closed,
            ..open
        };
        assert_eq!(record_ending_at(host::encode(&closed).as_bytes(), 1), None);
    }

    #[test]
    fn names_are_plain_file_names() {
        assert_eq!(parse_name("nightly-db").as_deref(), Ok("nightly-db"));
        for bad in ["", "a/b", "..", ".x", "a\\b"] {
            let error = parse_name(bad).unwrap_err();
            assert!(error.starts_with("a breaker name is"), "{error}");
        }
    }

    #[test]
    fn a_closed_circuit_never_used_creates_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("retry");
        let mut b = breaker(&dir);
        assert_eq!(b.ask(), Asked::default());
        assert_eq!(b.tell(Ended::Succeeded), None);
        assert_eq!(b.tell(Ended::Neither), None);
        assert!(!dir.exists(), "a run that changed nothing wrote");
        // Found closed and clean, an end neither way tells nothing; a
        // success is read again (here, through a symlink: skipped with a
        // warning), as overlapping runs may have counted failures since.
        let mut b = breaker(&dir);
        assert_eq!(b.ask(), Asked::default());
        std::fs::create_dir(tmp.path().join("elsewhere")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), &dir).unwrap();
        assert_eq!(
            b.tell(Ended::Neither),
            None,
            "an end neither way read again"
        );
        #[cfg(unix)]
        assert!(b.tell(Ended::Succeeded).unwrap().contains("is a symlink"));
    }

    #[test]
    fn the_host_circuit_opens_refuses_and_closes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("retry");
        for _ in 0..2 {
            let mut b = breaker(&dir);
            assert_eq!(b.ask(), Asked::default());
            assert_eq!(b.tell(Ended::Failed), None);
        }
        let mut b = breaker(&dir);
        let asked = b.ask();
        let refused = asked.refused.unwrap();
        assert!(
            refused.starts_with("--breaker ci: the circuit is open after 2 failed runs in a row; a probe may run at "),
            "{refused}"
        );
        assert!(
            refused.ends_with(" s); the command was not run"),
            "{refused}"
        );
        // Moved past the cooldown, the next run probes and closes it.
        let file = HostCircuit::open(&dir, "ci", true).unwrap().unwrap();
        file.update(true, |c| c.state = State::Open { until: 0 })
            .unwrap();
        let mut probe = breaker(&dir);
        assert_eq!(probe.ask(), Asked::default());
        assert!(probe.lease.is_some());
        let refused = breaker(&dir).ask().refused.unwrap();
        assert!(refused.contains("another run probes it"), "{refused}");
        assert_eq!(probe.tell(Ended::Succeeded), None);
        let found = file.update(false, |_| ()).unwrap();
        assert_eq!(found.value.1, Circuit::default());
    }

    #[test]
    fn the_probe_lock_decides_who_probes_and_whether_a_probe_lives() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("retry");
        for _ in 0..2 {
            let mut b = breaker(&dir);
            b.ask();
            b.tell(Ended::Failed);
        }
        let file = HostCircuit::open(&dir, "ci", true).unwrap().unwrap();
        file.update(true, |c| c.state = State::Open { until: 0 })
            .unwrap();
        // Another process's lock (flock: another open file is another
        // holder): a run that took it a moment ago probes, not this one,
        // and the record is left as it was.
        let mut other = ProbeLock::new(&dir, "ci");
        assert!(other.hold(true));
        let refused = breaker(&dir).ask().refused.unwrap();
        assert!(refused.contains("another run probes it"), "{refused}");
        let found = file.update(false, |_| ()).unwrap();
        assert_eq!(found.value.1.state, State::Open { until: 0 });
        other.release();
        // Free, it probes, and holds the lock while it lives.
        let mut probe = breaker(&dir);
        assert_eq!(probe.ask(), Asked::default());
        let lease = probe.lease.unwrap();
        assert!(
            !ProbeLock::new(&dir, "ci").hold(false),
            "the lock is not held"
        );
        let refused = breaker(&dir).ask().refused.unwrap();
        assert!(refused.contains("another run probes it"), "{refused}");
        // Its death frees the lock: the next run takes its turn at once.
        drop(probe);
        let mut next = breaker(&dir);
        assert_eq!(next.ask(), Asked::default());
        assert!(next.lease.is_some_and(|l| l != lease));
        // Its end gives the lock back with the record.
        assert_eq!(next.tell(Ended::Succeeded), None);
        assert!(ProbeLock::new(&dir, "ci").hold(false));
    }

    #[test]
    fn a_record_read_for_the_fuzzer_is_clamped_as_a_run_reads_it() {
        let now = 1_795_434_960 * S;
        let lease = nanos(DEFAULT_LEASE);
        let own = horizon(DEFAULT_COOLDOWN_MAX, lease);
        // Written by a run with the defaults, by one with a cooldown of
        // an hour, and by a retry that kept no limit.
        let long = horizon(Duration::from_secs(3600), lease);
        for (limit, far) in [(own, own), (long, long), (0, 4200 * S)] {
            let record = host::encode(&Circuit {
                state: State::Open { until: u64::MAX },
                failures: 3,
                level: 0,
                after: 3,
                limit,
            });
            let (written, said, admit, end, reach) = read_record(record.as_bytes(), now).unwrap();
            assert_eq!(written, record.as_bytes(), "written back as read");
            assert_eq!((end, reach), (Some(now + far), far));
            assert!(matches!(admit, Admit::Skip { until, .. } if until == now + far));
            assert_eq!(said.lines().count(), 3, "{said}");
            assert!(said.contains("taken for a clock that went back"), "{said}");
            let secs = far / S;
            assert!(
                said.contains(&format!("longest cooldown and lease ({secs} s)")),
                "{said}"
            );
        }
        assert_eq!(own, 840 * S);
        assert_eq!(read_record(b"retry-breaker 3 garbage", now), None);
    }

    #[test]
    fn when_says_the_time_and_how_far_off() {
        let at = 1_795_434_960 * S;
        assert_eq!(when(at, at - 92 * S - 1), "2026-11-23T11:56:00Z (in 93 s)");
        assert_eq!(when(at, at + S), "2026-11-23T11:56:00Z (in 0 s)");
    }
}
