//! The arithmetic of client-side adaptive throttling, without files or
//! clocks: the time is a parameter, so every rule is a plain test.
//!
//! The rule is the SRE book's ("Handling Overload", client-side
//! throttling): over a sliding window a client counts the `requests` it
//! attempted (those it rejected itself included) and the `accepts`, those
//! the service did not throttle or fail transiently, and rejects a new
//! request locally with probability
//! `max(0, (requests - K * accepts) / (requests + 1))`.
//!
//! The window slides as a sliding-window counter does: two fixed windows,
//! the current one and the one before, the older weighted by how much of
//! it the sliding window still covers. Five numbers, so a state file and a
//! Redis hash hold it whole and a Lua script can apply the same rule.

/// A throttle's parameters (`--throttle-k`, `--throttle-window`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// How many requests per accept are let through before any is
    /// rejected: K = 2 lets twice the accepted load through.
    pub k: f64,
    /// The sliding window's length, in milliseconds (at least 1).
    pub window_ms: u64,
}

/// What one fixed window counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub requests: u64,
    pub accepts: u64,
}

/// A throttle's state as stored: the fixed window that began at
/// `start_ms` (wall clock, milliseconds since the epoch, a multiple of the
/// window's length) and the one before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window {
    pub start_ms: u64,
    pub current: Tally,
    pub previous: Tally,
}

impl Window {
    /// The state as of `now_ms`: moved on to the fixed window `now_ms`
    /// falls in. A clock that went back keeps the counts where they are
    /// (they are recent to it); one that jumped past two windows forgets
    /// them, as time would.
    pub fn at(self, params: &Params, now_ms: u64) -> Self {
        let length = params.window_ms.max(1);
        let start = now_ms - now_ms % length;
        if start <= self.start_ms {
            return self;
        }
        let previous = if start - self.start_ms == length {
            self.current
        } else {
            Tally::default()
        };
        Window {
            start_ms: start,
            current: Tally::default(),
            previous,
        }
    }

    /// The counts over the sliding window that ends at `now_ms`: the older
    /// fixed window weighted by the part of it still inside.
    pub fn counts(&self, params: &Params, now_ms: u64) -> (f64, f64) {
        let window = self.at(params, now_ms);
        let length = params.window_ms.max(1);
        let into = now_ms.saturating_sub(window.start_ms).min(length);
        let weight = 1.0 - into as f64 / length as f64;
        (
            window.current.requests as f64 + weight * window.previous.requests as f64,
            window.current.accepts as f64 + weight * window.previous.accepts as f64,
        )
    }

    /// The probability that a request at `now_ms` is rejected locally.
    pub fn reject_probability(&self, params: &Params, now_ms: u64) -> f64 {
        let (requests, accepts) = self.counts(params, now_ms);
        ((requests - params.k * accepts) / (requests + 1.0)).clamp(0.0, 1.0)
    }

    /// Decides a request at `now_ms` with `draw`, uniform in [0, 1), and
    /// counts it: `true` if it may go to the service.
    pub fn request(&mut self, params: &Params, now_ms: u64, draw: f64) -> bool {
        let allowed = draw >= self.reject_probability(params, now_ms);
        *self = self.at(params, now_ms);
        self.current.requests = self.current.requests.saturating_add(1);
        allowed
    }

    /// Counts a request the service accepted (neither throttled nor a
    /// transient failure), at `now_ms`.
    pub fn accept(&mut self, params: &Params, now_ms: u64) {
        *self = self.at(params, now_ms);
        self.current.accepts = self.current.accepts.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Params = Params {
        k: 2.0,
        window_ms: 120_000,
    };

    fn with(requests: u64, accepts: u64) -> Window {
        Window {
            start_ms: 0,
            current: Tally { requests, accepts },
            previous: Tally::default(),
        }
    }

    #[test]
    fn nothing_is_rejected_while_requests_are_within_k_accepts() {
        assert_eq!(with(0, 0).reject_probability(&P, 10), 0.0);
        assert_eq!(with(100, 50).reject_probability(&P, 10), 0.0);
        assert_eq!(with(20, 10).reject_probability(&P, 10), 0.0);
    }

    #[test]
    fn the_books_formula_past_k_accepts() {
        let p = with(100, 10).reject_probability(&P, 10);
        assert!((p - 80.0 / 101.0).abs() < 1e-12, "{p}");
        // With no accepts at all, nearly everything is rejected, never all:
        // one request in `requests + 1` still probes the service.
        let p = with(99, 0).reject_probability(&P, 10);
        assert!((p - 0.99).abs() < 1e-12, "{p}");
    }

    #[test]
    fn a_larger_k_rejects_less() {
        let k3 = Params { k: 3.0, ..P };
        assert!(
            with(100, 20).reject_probability(&k3, 10) < with(100, 20).reject_probability(&P, 10)
        );
    }

    #[test]
    fn the_older_window_counts_for_what_the_sliding_window_still_covers() {
        let state = Window {
            start_ms: 0,
            current: Tally {
                requests: 40,
                accepts: 0,
            },
            previous: Tally::default(),
        };
        // A quarter into the next window: three quarters of the old counts.
        let (requests, accepts) = state.counts(&P, 150_000);
        assert!((requests - 30.0).abs() < 1e-9, "{requests}");
        assert_eq!(accepts, 0.0);
        // Two windows on, it is forgotten.
        assert_eq!(state.counts(&P, 240_000), (0.0, 0.0));
        assert_eq!(state.reject_probability(&P, 250_000), 0.0);
    }

    #[test]
    fn a_clock_that_went_back_keeps_the_counts() {
        let state = Window {
            start_ms: 240_000,
            current: Tally {
                requests: 10,
                accepts: 1,
            },
            previous: Tally::default(),
        };
        assert_eq!(state.at(&P, 5), state);
        assert!(state.reject_probability(&P, 5) > 0.0);
    }

    #[test]
    fn request_counts_and_decides_on_the_draw() {
        let mut state = with(100, 10);
        let p = state.reject_probability(&P, 10);
        assert!(!state.request(&P, 10, p - 0.01));
        assert!(state.request(&P, 10, p + 0.01));
        assert_eq!(state.current.requests, 102);
        state.accept(&P, 10);
        assert_eq!(state.current.accepts, 11);
    }

    #[test]
    fn a_service_that_accepts_half_is_never_throttled_with_k_2() {
        let mut state = Window::default();
        let mut sent = 0;
        for i in 0..10_000u64 {
            let draw = (i.wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0;
            if state.request(&P, 1000 + i, draw) {
                sent += 1;
                if sent % 2 == 1 {
                    state.accept(&P, 1000 + i);
                }
            }
        }
        assert_eq!(sent, 10_000);
    }

    #[test]
    fn a_service_that_accepts_nothing_gets_a_trickle() {
        let mut state = Window::default();
        let sent = (0..10_000u64)
            .filter(|&i| {
                let draw = (i.wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0;
                state.request(&P, 1000 + i, draw)
            })
            .count();
        assert!(sent < 100, "{sent} of 10000 sent");
        assert!(sent >= 1, "some requests still probe the service");
    }
}
