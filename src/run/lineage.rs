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

/// The most inherited ids kept, the innermost: no one nests retry this
/// deep, and a huge inherited value (by accident or on purpose) would
/// otherwise grow every command's environment until each start fails
/// with E2BIG. A process whose outer ids were dropped is only left
/// running by those outer runs, never wrongly stopped.
const KEPT: usize = 32;
/// The longest id kept (retry's own are 21 bytes at most).
const LONGEST_ID: usize = 64;

#[derive(Debug)]
pub struct Lineage {
    /// This run's id.
    id: String,
    /// The variable's value for the commands: the inherited ids, then `id`.
    value: OsString,
}

impl Lineage {
    /// This run's mark, after whatever marks it inherited (an outer retry's).
    /// Of the inherited ones, only ids that could be retry's (letters,
    /// digits and `-`, `LONGEST_ID` bytes at most) are kept, the last
    /// `KEPT` of them.
    pub fn new(inherited: Option<&OsStr>, id: String) -> Self {
        let inherited = inherited.map(OsStr::to_string_lossy).unwrap_or_default();
        let plausible = |id: &&str| {
            !id.is_empty()
                && id.len() <= LONGEST_ID
                && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        let outer: Vec<&str> = inherited.split(':').filter(plausible).collect();
        let mut value = OsString::new();
        for outer_id in &outer[outer.len().saturating_sub(KEPT)..] {
            value.push(outer_id);
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
    fn a_huge_or_garbled_inherited_value_is_bounded() {
        let huge: String = (0..100_000).map(|n| format!("{n:x}-a:")).collect();
        let lineage = Lineage::new(Some(OsStr::new(&huge)), "me-1".into());
        let value = lineage.value().to_str().unwrap();
        assert_eq!(value.split(':').count(), KEPT + 1, "{value}");
        assert!(
            value.starts_with(&format!("{:x}-a:", 100_000 - KEPT)),
            "{value}"
        );
        assert!(value.ends_with(":1869f-a:me-1"), "{value}");
        let long = "x".repeat(1 << 20);
        let garbled = format!("1-a:{long}:bad id:=:2-b::");
        let lineage = Lineage::new(Some(OsStr::new(&garbled)), "me-1".into());
        assert_eq!(lineage.value(), "1-a:2-b:me-1");
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
