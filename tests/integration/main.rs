//! End-to-end tests of the real `retry` binary, one file per rule family.
//! Process tests synchronise on files the child writes, never on a fixed
//! sleep; only a few use real time, in milliseconds, with generous bounds.

mod chaos;
mod contention;
#[cfg(feature = "redis")]
mod fleet;
mod logging;
mod memory;
mod modes;
mod outcomes;
mod pipes;
mod presets;
mod processes;
mod readme;
mod storm;
mod trust;
mod usage;

pub mod harness;
