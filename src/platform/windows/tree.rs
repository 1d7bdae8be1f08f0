//! An attempt's process tree on Windows: its Job Object, which holds every
//! process the command started (`spawn.rs` puts the command in it before
//! it runs). Stopping what is left is ending the job.

use std::time::Duration;

use super::signals::Signals;

/// The tree of one command about to start (its job is made by `spawn.rs`).
pub struct ProcessTree;

impl ProcessTree {
    pub fn before_start(_own_group: bool, _adopts: bool) -> Self {
        ProcessTree
    }

    /// Ends every process left in the job of `leader` (stopped and
    /// reaped): the grace was the leader's, and a job has no orphans to
    /// find one by one.
    pub fn stop_leftovers(
        &self,
        leader: i32,
        _grace: Duration,
        _signals: &Signals,
        _ours: &dyn Fn(&[u8]) -> bool,
    ) {
        super::stop_job(leader);
    }
}
