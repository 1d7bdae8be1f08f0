//! Which processes descend from this run of retry: every command it starts
//! carries a mark in its environment, `RETRY_RUN_IDS`, which its own
//! children inherit. When retry stops an attempt, it stops only the
//! adopted processes (see `platform::reaper`) that carry the mark: a
//! process that retry's parent left behind, re-parented to retry during an
//! attempt, is a bystander and is never signalled. (Jenkins finds a build's
//! processes the same way, by a cookie in their environment.)
//!
//! The value lists the ids of every retry the process descends from,
//! outermost first and separated by `:`, so an inner retry killed before
//! it could clean up leaves descendants that the outer one still knows.
//! A descendant that clears its environment (`env -i`) or changes user is
//! not recognised, and is left running: better one process left than a
//! bystander killed.

use std::ffi::{OsStr, OsString};

/// The variable that carries the mark.
pub const VARIABLE: &str = "RETRY_RUN_IDS";

#[derive(Debug)]
pub struct Lineage {
    /// This run's id.
    id: String,
    /// The variable's value for the commands: the inherited ids, then `id`.
    value: OsString,
}

impl Lineage {
    /// This run's mark, after whatever marks it inherited (an outer retry's).
    pub fn new(inherited: Option<&OsStr>, id: String) -> Self {
        let mut value = OsString::new();
        if let Some(outer) = inherited.filter(|v| !v.is_empty()) {
            value.push(outer);
            value.push(":");
        }
        value.push(&id);
        Self { id, value }
    }

    /// A run id unique on this host: retry's pid and the time it started.
    pub fn unique_id() -> String {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{:x}-{:x}", std::process::id(), nanos & 0xffff_ffff_ffff)
    }

    /// What commands get in `VARIABLE`.
    pub fn value(&self) -> &OsStr {
        &self.value
    }

    /// Whether a process's environment (`/proc/PID/environ`: entries ended
    /// by NUL) carries this run's mark.
    pub fn marks(&self, environ: &[u8]) -> bool {
        let prefix = [VARIABLE.as_bytes(), b"="].concat();
        environ
            .split(|&b| b == 0)
            .filter_map(|entry| entry.strip_prefix(prefix.as_slice()))
            .any(|ids| ids.split(|&b| b == b':').any(|id| id == self.id.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environ(entries: &[&str]) -> Vec<u8> {
        entries
            .iter()
            .flat_map(|e| [e.as_bytes(), b"\0"].concat())
            .collect()
    }

    #[test]
    fn a_mark_is_this_runs_id_among_the_inherited_ones() {
        let inner = Lineage::new(Some(OsStr::new("1-a")), "2-b".into());
        assert_eq!(inner.value(), "1-a:2-b");
        let outer = Lineage::new(None, "1-a".into());
        assert_eq!(outer.value(), "1-a");
        let child_of_inner = environ(&["PATH=/bin", "RETRY_RUN_IDS=1-a:2-b"]);
        assert!(inner.marks(&child_of_inner) && outer.marks(&child_of_inner));
        // Another run's descendant, a prefix of the id, another variable.
        for other in [
            environ(&["RETRY_RUN_IDS=9-z"]),
            environ(&["RETRY_RUN_IDS=1-aa"]),
            environ(&["X_RETRY_RUN_IDS=1-a", "RETRY_RUN_IDS_X=1-a"]),
            environ(&[]),
        ] {
            assert!(!outer.marks(&other), "{other:?}");
        }
    }

    #[test]
    fn ids_differ_between_runs() {
        let first = Lineage::unique_id();
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert_ne!(first, Lineage::unique_id());
        assert!(first.starts_with(&format!("{:x}-", std::process::id())));
    }
}
