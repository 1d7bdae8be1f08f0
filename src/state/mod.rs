//! State that outlives a run: what every run on a host shares (an
//! owner-only file in the user's state directory) or a whole fleet shares
//! (a Redis store). Not a part of running one attempt, so it lives beside
//! `run/`: the runner asks it for a decision and goes on.

pub mod budget;
