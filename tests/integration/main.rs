//! End-to-end tests of the real `retry` binary, one file per rule family.
//! Process tests synchronise on files the child writes, never on a fixed
//! sleep; only a few use real time, in milliseconds, with generous bounds.

// Its faults and checks are Linux's: /dev/full, /proc, F_GETPIPE_SZ, a
// `setsid` binary, GNU date's %N.
#[cfg(target_os = "linux")]
mod chaos;
// The GitHub Action's script, run with bash, curl and tar.
#[cfg(unix)]
mod action;
// The musl artifact's size budget and the start-up benchmark: bash
// scripts, the benchmark Linux's (hyperfine, Debian's retry, /proc).
#[cfg(target_os = "linux")]
mod artifact;
// Unix only until they run the test helper (issue 24): these start `sh`,
// `sleep` and the like, and send signals.
// The example that charts with plotters is in a default build only (the
// cargo feature `preview`).
#[cfg(all(unix, feature = "preview"))]
mod contention;
// The real programs a preset is chosen for by name (BusyBox's wget, npm,
// git, pip), on loopback: Unix tools.
#[cfg(unix)]
mod claimed_programs;
// The adaptive throttle on the host and (with the feature) in Redis.
#[cfg(unix)]
mod adaptive;
// The circuit breaker on the host and (with the feature) in Redis.
#[cfg(unix)]
mod breaker;
#[cfg(all(unix, feature = "redis"))]
mod fleet;
// --on-start and --on-exit: `sh` hooks, signals, and the monitors' recipes
// against a loopback stub.
#[cfg(unix)]
mod hooks;
// The same hooks through cmd.exe (run under wine by .ci/windows).
#[cfg(windows)]
mod hooks_windows;
// scripts/install.sh, a POSIX sh script (Windows has the release's .zip).
#[cfg(unix)]
mod install;
// On every platform, with the project's own helper (run under wine by
// .ci/windows); what is about Unix inside them is gated test by test.
mod logging;
mod memory;
// --metrics-dir and --statsd; node_exporter and promtool on Unix only.
mod metrics;
// Only printing, so a default build only (the cargo feature `preview`).
#[cfg(feature = "preview")]
mod modes;
#[cfg(feature = "preview")]
mod outage;
mod outcomes;
mod pipes;
mod portable;
#[cfg(unix)]
mod preset_programs;
mod presets;
#[cfg(unix)]
mod processes;
// The real curl and wget, and `sh`.
#[cfg(unix)]
mod quiet_flags;
#[cfg(unix)]
mod readme;
// --splay cut short by a real SIGTERM, --reset-after with `sh`.
#[cfg(unix)]
mod splay;
// FIFOs and device nodes in place of state files.
#[cfg(unix)]
mod state_files;
// docs/guide.md's systemd, Kubernetes and cron recipes: systemd-analyze,
// kubernetes-validate, the crontab run as cron runs it, retry as PID 1.
#[cfg(unix)]
mod services;
mod storm;
#[cfg(feature = "preview")]
mod throttle;
// Throttled failures end to end; the commands are `sh`.
#[cfg(unix)]
mod throttled;
// OpenTelemetry traces, against a receiver in Python; the commands are `sh`.
#[cfg(unix)]
mod trace;
mod trust;
mod usage;

pub mod harness;
