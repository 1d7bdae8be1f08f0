//! An attempt's process tree: the command and everything it started, so
//! that a stopped attempt leaves nothing behind. On Unix that is the
//! command's process group, plus (where the platform adopts orphans, as
//! Linux's child subreaper does) the descendants that left the group. Its
//! Windows twin (`windows/tree.rs`) is a Job Object, which holds every
//! descendant.
//!
//! Only descendants of this run are stopped: an adopted process is one of
//! them when `ours` says so of its environment (`run::lineage` marks every
//! command's). Others are reaped when they end, never signalled.

use std::time::{Duration, Instant};

use crate::platform::signals::Signals;
use crate::platform::{self, SIGCONT, SIGKILL, SIGTERM};

/// How often the clean-up of escaped descendants looks again.
const ROUND: Duration = Duration::from_millis(20);

/// The tree of one command about to start.
pub struct ProcessTree {
    /// The command leads a process group of its own.
    own_group: bool,
    /// The platform adopts orphaned descendants (Linux).
    adopts: bool,
    /// Children retry had before this one started (left on purpose by an
    /// earlier attempt, or by whatever exec'd retry): not this tree's.
    spared: Vec<i32>,
}

impl ProcessTree {
    /// Notes what is already adopted, before the command starts.
    pub fn before_start(own_group: bool, adopts: bool) -> Self {
        let spared = match adopts {
            true => platform::reaper::adopted(&[]),
            false => Vec::new(),
        };
        ProcessTree {
            own_group,
            adopts,
            spared,
        }
    }

    /// Kills what is left once the command (`leader`) was stopped and
    /// reaped: the rest of its process group, then every descendant of
    /// this run that left the group, each given SIGTERM and `grace` before
    /// SIGKILL. A second signal to retry (seen through `signals`) ends the
    /// grace.
    pub fn stop_leftovers(
        &self,
        leader: i32,
        grace: Duration,
        signals: &Signals,
        ours: &dyn Fn(&[u8]) -> bool,
    ) {
        if self.own_group {
            platform::send(leader, SIGKILL, true);
        }
        if !self.adopts {
            return;
        }
        let mut warned: Vec<i32> = Vec::new();
        // Bounded: each round stops what it finds; their orphans come next.
        for _ in 0..32 {
            platform::reap_orphans();
            let (adopted, unread) = self.descendants(ours);
            if adopted.is_empty() {
                let dying = self.own_group && platform::group_exists(leader);
                if !dying && !unread {
                    return;
                }
                // Group members still dying: their orphans arrive shortly;
                // or one is in the middle of an exec: read it again.
                signals.wait(Some(Instant::now() + ROUND), true);
                continue;
            }
            let (old, new): (Vec<i32>, Vec<i32>) =
                adopted.into_iter().partition(|p| warned.contains(p));
            for &orphan in &old {
                // Its own group too: a setsid'd daemon leads one.
                platform::send(orphan, SIGKILL, true);
                platform::send(orphan, SIGKILL, false);
            }
            for &orphan in &new {
                platform::send(orphan, SIGTERM, true);
                platform::send(orphan, SIGTERM, false);
                platform::send(orphan, SIGCONT, false);
            }
            if !new.is_empty() {
                await_exit(&new, grace, signals);
                warned.extend(new);
            }
        }
    }

    /// The living adopted processes of this run, but for the spared ones;
    /// and whether one had an empty environment. That is what a process
    /// in the middle of an exec shows (its new memory holds no environment
    /// yet): a `setsid sleep` the command left as it exited reads so for
    /// an instant, and taken for a bystander it would be left running. One
    /// that truly has none (`env -i`) costs the rounds' bound (0.64 s) and
    /// is left as a bystander.
    fn descendants(&self, ours: &dyn Fn(&[u8]) -> bool) -> (Vec<i32>, bool) {
        let mut unread = false;
        let adopted = platform::reaper::adopted(&self.spared)
            .into_iter()
            .filter(|&pid| match platform::reaper::environment(pid) {
                Some(env) if env.is_empty() => {
                    unread = true;
                    false
                }
                Some(env) => ours(&env),
                None => false,
            })
            .collect();
        (adopted, unread)
    }
}

/// Waits up to `grace` for `pids` to exit (reaping them as they do).
fn await_exit(pids: &[i32], grace: Duration, signals: &Signals) {
    let Some(until) = Instant::now().checked_add(grace) else {
        return;
    };
    while Instant::now() < until {
        platform::reap_orphans();
        let left = platform::reaper::adopted(&[]);
        if !pids.iter().any(|p| left.contains(p)) {
            return;
        }
        let round = until.min(Instant::now() + ROUND);
        if signals.wait(Some(round), true).signals > 0 {
            return; // a second signal: no more grace
        }
    }
}
