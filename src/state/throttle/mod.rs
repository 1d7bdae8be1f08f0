//! `--throttle NAME`: client-side adaptive throttling, shared by every run
//! on a host or, with `--store`, a fleet. `window.rs` is the pure rule the
//! stores and `--simulate --model throttle` both apply.

// Used by `--simulate --model throttle` and `--throttle`, which land next.
#[allow(dead_code)]
pub mod window;
