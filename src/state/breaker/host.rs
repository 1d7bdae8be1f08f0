//! A circuit on this host: one owner-only file per circuit in the host's
//! store (`state::store::file`), under `.breakers/` in the per-user
//! directory (a budget's name cannot start with `.`, so no budget's file
//! can take its place). Its record is one line of fixed width with a
//! checksum: `retry-breaker 3`, the failures counted, the cooldown's level,
//! the threshold it counts to, the state (0 closed, 1 open, 2 probing),
//! when it ends, the lease's id and the limit of the run that set the end
//! (nanoseconds on the host's clock). Records of version 2 (no limit) and
//! 1 (no threshold either) are still read.
//!
//! A look opens nothing for writing: a circuit never used has no file, and
//! a run on a closed circuit whose count does not change writes nothing.
//!
//! The probing run also holds the kernel's lock on `.breakers/.probes/NAME`
//! (`ProbeLock`) for as long as it lives: the kernel releases it when the
//! run dies, however it dies (SIGKILL, a reboot empties the runtime
//! directory), so the next run sees that no probe runs any more and probes
//! at once instead of waiting out the lease.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use super::machine::{Circuit, State};
use crate::state::store::file::{self, LOCK_WAIT, Lock, seal, unseal};

const MAGIC: &str = "retry-breaker 3";
const RECORD_LEN: usize = MAGIC.len() + 3 * (1 + 10) + 1 + 1 + 3 * (1 + 20) + 1 + 16 + 1;
/// The record before it kept the writer's limit: still read.
const MAGIC_2: &str = "retry-breaker 2";
const RECORD_LEN_2: usize = RECORD_LEN - 21;
/// The record before it kept the threshold (`after`) too: still read.
const MAGIC_1: &str = "retry-breaker 1";
const RECORD_LEN_1: usize = RECORD_LEN_2 - 11;

/// The folder of circuits in the host's store directory.
const KIND: &str = ".breakers";

pub fn encode(c: &Circuit) -> String {
    let (state, until, lease) = match c.state {
        State::Closed => (0, 0, 0),
        State::Open { until } => (1, until, 0),
        State::Probing { lease, until } => (2, until, lease),
    };
    seal(&format!(
        "{MAGIC} {:010} {:010} {:010} {state} {until:020} {lease:020} {:020}",
        c.failures,
        c.level,
        c.after,
        if state == 0 { 0 } else { c.limit }
    ))
}

/// A record's circuit, if `bytes` is a whole, valid one (of any version);
/// `None` for anything else, whatever its bytes.
pub fn decode(bytes: &[u8]) -> Option<Circuit> {
    let (body, version) = if let Some(body) = unseal(bytes, RECORD_LEN) {
        (body.strip_prefix(MAGIC)?, 3)
    } else if let Some(body) = unseal(bytes, RECORD_LEN_2) {
        (body.strip_prefix(MAGIC_2)?, 2)
    } else {
        (unseal(bytes, RECORD_LEN_1)?.strip_prefix(MAGIC_1)?, 1)
    };
    let mut fields = body.split(' ').skip(1);
    let failures = fields.next()?.parse().ok()?;
    let level = fields.next()?.parse().ok()?;
    let after = match version {
        1 => 0,
        _ => fields.next()?.parse().ok()?,
    };
    let state = fields.next()?;
    let until = fields.next()?.parse().ok()?;
    let lease = fields.next()?.parse().ok()?;
    let limit = match version {
        3 => fields.next()?.parse().ok()?,
        _ => 0,
    };
    if fields.next().is_some() {
        return None;
    }
    let (state, limit) = match state {
        "0" => (State::Closed, 0),
        "1" => (State::Open { until }, limit),
        "2" => (State::Probing { lease, until }, limit),
        _ => return None,
    };
    Some(Circuit {
        state,
        failures,
        level,
        after,
        limit,
    })
}

/// The probing run's lock (module doc): taken under the circuit's own lock,
/// so no run sees the record say "probing" while the lock is free, but
/// for a probe that died.
#[derive(Debug)]
pub struct ProbeLock {
    dir: PathBuf,
    name: String,
    file: Option<File>,
    held: bool,
    /// Why the lock could not be used, the first time: the lease alone
    /// then bounds a probe that died.
    pub trouble: Option<String>,
}

impl ProbeLock {
    /// The lock of the circuit `name` under `store`; nothing opened yet.
    pub fn new(store: &Path, name: &str) -> Self {
        ProbeLock {
            dir: store.join(KIND).join(".probes"),
            name: name.to_owned(),
            file: None,
            held: false,
            trouble: None,
        }
    }

    /// Whether this run holds the lock now, taking it if no living process
    /// holds it (its file created first if `create`). Without its file, or
    /// when it cannot be used (said once in `trouble`), `false`: no one is
    /// known to be gone.
    pub fn hold(&mut self, create: bool) -> bool {
        if self.held {
            return true;
        }
        if self.file.is_none() {
            match file::open(&self.dir, &self.name, create) {
                Ok(opened) => self.file = opened.map(|(_, file)| file),
                Err(e) => self.trouble(e),
            }
        }
        let Some(file) = &self.file else {
            return false;
        };
        match file.try_lock() {
            Ok(()) => self.held = true,
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => {
                let path = self.dir.join(&self.name);
                self.trouble(format!("cannot lock {}: {e}", path.display()));
            }
        }
        self.held
    }

    /// Gives the lock up (it is given up at the run's death anyway).
    pub fn release(&mut self) {
        if let Some(file) = &self.file
            && self.held
        {
            let _ = file.unlock();
        }
        self.held = false;
    }

    fn trouble(&mut self, e: String) {
        self.trouble.get_or_insert(format!(
            "{e}; a probe that dies holds the circuit until its lease ends"
        ));
    }
}

/// A circuit's file, open.
pub struct HostCircuit {
    pub path: PathBuf,
    file: File,
}

/// What a look or an update found besides its result: a record that was
/// not valid (a message for the log).
pub struct Found<T> {
    pub value: T,
    pub reset: Option<String>,
}

impl HostCircuit {
    /// The circuit `name` under `store` (the host store's directory, which
    /// must be this user's own too), created if `create`; else opened for
    /// reading, `None` if it was never used.
    pub fn open(store: &Path, name: &str, create: bool) -> Result<Option<Self>, String> {
        let opened = file::open_kind(store, KIND, name, create)?;
        Ok(opened.map(|(path, file)| HostCircuit { path, file }))
    }

    /// Under the lock: the circuit (a closed one if the file is new or
    /// not valid), given to `change`; written back only if it changed and
    /// the file was opened for writing (`write`).
    pub fn update<T>(
        &self,
        write: bool,
        change: impl FnOnce(&mut Circuit) -> T,
    ) -> Result<Found<(T, Circuit, bool)>, String> {
        let fail =
            |what: &str, e: std::io::Error| format!("cannot {what} {}: {e}", self.path.display());
        let _lock = Lock::take(&self.file, LOCK_WAIT).map_err(|e| fail("lock", e))?;
        let mut buf = [0u8; RECORD_LEN + 1];
        let len = file::read(&self.file, &mut buf).map_err(|e| fail("read", e))?;
        let found = decode(&buf[..len]);
        let reset = (found.is_none() && len > 0).then(|| {
            format!(
                "{} was not a valid breaker record; taken as a closed circuit",
                self.path.display()
            )
        });
        let before = found.unwrap_or_default();
        let mut circuit = before;
        let value = change(&mut circuit);
        let changed = circuit != before || reset.is_some();
        if write && changed {
            // One write of a fixed length: a kill leaves the old or the new.
            file::write(&self.file, encode(&circuit).as_bytes(), len)
                .map_err(|e| fail("write", e))?;
        }
        Ok(Found {
            value: (value, circuit, changed),
            reset,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_reject_damage() {
        for c in [
            Circuit::default(),
            Circuit {
                state: State::Open { until: u64::MAX },
                failures: u32::MAX,
                level: 7,
                after: 1,
                limit: u64::MAX,
            },
            Circuit {
                state: State::Probing {
                    lease: 1_792_567_680_000_000_000,
                    until: 1_792_567_680_600_000_000,
                },
                failures: 4,
                level: 2,
                after: u32::MAX,
                limit: 840_000_000_000,
            },
        ] {
            let record = encode(&c);
            assert_eq!(record.len(), RECORD_LEN);
            assert_eq!(decode(record.as_bytes()), Some(c));
        }
        let record = encode(&Circuit::default());
        assert_eq!(decode(&record.as_bytes()[..RECORD_LEN - 1]), None);
        assert_eq!(decode(record.replace(" 0 ", " 3 ").as_bytes()), None);
        // A closed circuit has no end, nor a limit for it.
        let closed = seal(&format!(
            "{MAGIC} 0000000001 0000000000 0000000003 0 {:020} {:020} {:020}",
            0, 0, 99
        ));
        assert_eq!(decode(closed.as_bytes()).unwrap().limit, 0);
        // Records of the versions before, as a retry before this one wrote
        // them: read, the writer's limit not known, nor in the first the
        // threshold.
        let until = 1_792_567_680_000_000_000u64;
        let second = seal(&format!(
            "{MAGIC_2} 0000000004 0000000002 0000000003 1 {until:020} {:020}",
            0
        ));
        let first = seal(&format!(
            "{MAGIC_1} 0000000004 0000000002 1 {until:020} {:020}",
            0
        ));
        assert_eq!((second.len(), first.len()), (RECORD_LEN_2, RECORD_LEN_1));
        for (old, after) in [(second, 3), (first, 0)] {
            assert_eq!(
                decode(old.as_bytes()),
                Some(Circuit {
                    state: State::Open { until },
                    failures: 4,
                    level: 2,
                    after,
                    limit: 0,
                })
            );
        }
    }

    #[test]
    fn only_a_change_is_written_and_a_look_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("retry");
        assert!(HostCircuit::open(&dir, "ci", false).unwrap().is_none());
        let circuit = HostCircuit::open(&dir, "ci", true).unwrap().unwrap();
        // Nothing changed: the new file stays empty.
        circuit.update(true, |_| ()).unwrap();
        assert_eq!(std::fs::read(&circuit.path).unwrap().len(), 0);
        circuit.update(true, |c| c.failures = 2).unwrap();
        let look = HostCircuit::open(&dir, "ci", false).unwrap().unwrap();
        let found = look.update(false, |c| c.failures = 9).unwrap();
        assert_eq!(found.value.1.failures, 9);
        let again = look.update(false, |_| ()).unwrap();
        assert_eq!(again.value.1.failures, 2, "a look wrote");
        // A damaged record is a closed circuit, reset by the next write.
        std::fs::write(&circuit.path, "retry-breaker 1 garbage\n").unwrap();
        let found = circuit.update(true, |_| ()).unwrap();
        assert!(found.reset.unwrap().ends_with("taken as a closed circuit"));
        assert_eq!(found.value.1, Circuit::default());
        assert!(circuit.update(true, |_| ()).unwrap().reset.is_none());
    }
}
