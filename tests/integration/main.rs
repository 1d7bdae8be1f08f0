//! End-to-end tests of the real `retry` binary, one file per rule family.
//! Process tests synchronise on files the child writes, never on a fixed
//! sleep; only a few use real time, in milliseconds, with generous bounds.

// Its faults and checks are Linux's: /dev/full, /proc, F_GETPIPE_SZ, a
// `setsid` binary, GNU date's %N.
#[cfg(target_os = "linux")]
mod chaos;
// The modes that only print, and the example that charts with plotters,
// are in a default build only (the cargo feature `preview`).
#[cfg(feature = "preview")]
mod contention;
#[cfg(feature = "redis")]
mod fleet;
mod logging;
mod memory;
#[cfg(feature = "preview")]
mod modes;
mod outcomes;
mod pipes;
mod preset_programs;
mod presets;
mod processes;
mod readme;
mod storm;
mod trust;
mod usage;

pub mod harness;
