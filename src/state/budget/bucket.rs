//! The arithmetic of a shared retry budget, without files or clocks: the
//! time is a parameter, so every rule is a plain test.
//!
//! The anchor is the AWS SDKs' retry quota ("standard" mode) as their 2026
//! defaults have it: a bucket of 500 tokens, a transient failure's retry
//! costs 14 and a throttled one's 5 (a timeout is no longer special: it
//! is a transient failure), and a success after retries refunds what the
//! last retry cost. (Before 2026-11-10 every retry cost 5, 10 after a
//! timeout.)
//! The SDKs also add 1 for a first-try success; retry does not, so that
//! such a run never touches the budget's store (the refill with time below
//! gives back more than that +1 would). The SDKs refill only on success; a budget
//! shared by short-lived processes also needs to recover when idle (after
//! an outage every process may have given up, and none would ever succeed
//! to refill it), so tokens also come back with time, as in Finagle's
//! RetryBudget floor: 5 a second, one retry a second for the whole host.

/// A budget's parameters (`--budget-tokens`, `--budget-cost`,
/// `--budget-throttle-cost`, `--budget-refill`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The most tokens the bucket holds (and holds when new).
    pub tokens: u32,
    /// What the retry of a transient failure costs (a timeout's too).
    pub cost: u32,
    /// What the retry of a throttled failure costs: the server asked to
    /// slow down, and the longer sleep on `--throttle-base` already does.
    pub throttle_cost: u32,
    /// Tokens added per second, up to `tokens`.
    pub refill: f64,
}

/// What a bucket records of its parameters, so that every process (and
/// `--budget-status`) sees the bucket as it is: its size and its refill.
/// The cost of a retry stays each process's own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size {
    pub tokens: u32,
    pub refill: f64,
}

pub const DEFAULT_TOKENS: u32 = 500;
/// AWS's 2026 retry quota costs: 14 a transient retry, 5 a throttled one
/// ("Updated default retry behavior for AWS SDKs and tools", 2026-11-10).
pub const DEFAULT_COST: u32 = 14;
pub const DEFAULT_THROTTLE_COST: u32 = 5;
pub const DEFAULT_REFILL: f64 = 5.0;
/// The refills (but 0) both stores keep as given: they record millionths
/// of a token a second, a whole number (exact in Redis's Lua numbers up
/// to 2^53), so less than a millionth would be kept as 0; and no more
/// tokens a second than a bucket can hold (the file's field and the
/// script's reply hold that and more).
pub const MIN_REFILL: f64 = 1e-6;
pub const MAX_REFILL: f64 = u32::MAX as f64;

/// Thousandths of a token per token: refills of a fraction add up exactly.
pub const MILLI: u64 = 1000;

impl Params {
    /// The most thousandths the bucket holds.
    pub fn capacity(&self) -> u64 {
        u64::from(self.tokens) * MILLI
    }

    pub fn size(&self) -> Size {
        Size {
            tokens: self.tokens,
            refill: self.refill,
        }
    }

    /// These parameters with a bucket's recorded size.
    pub fn sized(self, size: Size) -> Params {
        Params {
            tokens: size.tokens,
            refill: size.refill,
            ..self
        }
    }

    /// What the next retry costs, in tokens: a throttled failure's or a
    /// transient one's (a timeout is one of those).
    pub fn retry_cost(&self, throttled: bool) -> u32 {
        match throttled {
            true => self.throttle_cost,
            false => self.cost,
        }
    }
}

/// A bucket's state as stored: thousandths of a token, and when (wall
/// clock, nanoseconds since the epoch: the state outlives processes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    pub milli: u64,
    pub at_ns: u64,
}

/// Nanoseconds per millisecond: a refill of R tokens a second is R
/// thousandths of a token a millisecond.
const NS_PER_MS: f64 = 1e6;

impl Bucket {
    pub fn full(params: &Params, now_ns: u64) -> Self {
        Bucket {
            milli: params.capacity(),
            at_ns: now_ns,
        }
    }

    /// The bucket as of `now_ns`, refilled for the time since its update,
    /// exactly: the whole thousandths that time gives are added, and the
    /// time they took is all the clock moves on, so the fraction left over
    /// counts towards the next update (to the nanosecond). A clock that
    /// went back refills nothing and counts from the new time (no wait of
    /// a clock's error); one that jumped ahead refills at most to full.
    pub fn refilled(self, params: &Params, now_ns: u64) -> Self {
        let capacity = params.capacity();
        let milli = self.milli.min(capacity);
        if now_ns < self.at_ns || milli == capacity {
            return Bucket {
                milli,
                at_ns: now_ns,
            };
        }
        if params.refill <= 0.0 {
            return Bucket { milli, ..self };
        }
        let elapsed = now_ns - self.at_ns;
        let added = (elapsed as f64 * params.refill / NS_PER_MS).floor();
        if added >= (capacity - milli) as f64 {
            return Bucket::full(params, now_ns);
        }
        // Below the capacity, so it fits; the time those thousandths took
        // is at most `elapsed` (the product was floored).
        let added = added as u64;
        let took = ((added as f64 * NS_PER_MS / params.refill).round() as u64).min(elapsed);
        Bucket {
            milli: milli + added,
            at_ns: self.at_ns + took,
        }
    }

    /// Takes `tokens` for a retry, or `None` if the bucket cannot pay.
    pub fn withdraw(self, params: &Params, now_ns: u64, tokens: u32) -> Option<Self> {
        let bucket = self.refilled(params, now_ns);
        let price = u64::from(tokens) * MILLI;
        (bucket.milli >= price).then(|| Bucket {
            milli: bucket.milli - price,
            ..bucket
        })
    }

    /// Gives `tokens` back, up to the capacity.
    pub fn deposit(self, params: &Params, now_ns: u64, tokens: u32) -> Self {
        let bucket = self.refilled(params, now_ns);
        Bucket {
            milli: (bucket.milli + u64::from(tokens) * MILLI).min(params.capacity()),
            ..bucket
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Params = Params {
        tokens: 20,
        cost: 5,
        throttle_cost: 2,
        refill: 2.0,
    };

    /// Milliseconds as the bucket's nanoseconds.
    fn ms(ms: u64) -> u64 {
        ms.saturating_mul(1_000_000)
    }

    fn at(milli: u64, at_ms: u64) -> Bucket {
        Bucket {
            milli,
            at_ns: ms(at_ms),
        }
    }

    #[test]
    fn a_full_bucket_pays_for_tokens_over_cost_retries_then_refuses() {
        let mut bucket = Bucket::full(&P, ms(1000));
        let mut paid = 0;
        while let Some(next) = bucket.withdraw(&P, ms(1000), P.retry_cost(false)) {
            bucket = next;
            paid += 1;
        }
        assert_eq!((paid, bucket.milli), (4, 0));
        // A throttled retry costs its own price, here 2 of the 20.
        let full = Bucket::full(&P, ms(0));
        assert_eq!(
            full.withdraw(&P, ms(0), P.retry_cost(true)),
            Some(at(18_000, 0))
        );
        assert_eq!(at(1_999, 0).withdraw(&P, ms(0), P.retry_cost(true)), None);
    }

    #[test]
    fn the_defaults_are_aws_2026_costs() {
        let p = Params {
            tokens: DEFAULT_TOKENS,
            cost: DEFAULT_COST,
            throttle_cost: DEFAULT_THROTTLE_COST,
            refill: DEFAULT_REFILL,
        };
        assert_eq!((p.retry_cost(false), p.retry_cost(true)), (14, 5));
        // 500 tokens pay for 35 transient retries at once, or 100 throttled.
        let count = |throttled| {
            let mut bucket = Bucket::full(&p, 0);
            let mut paid = 0;
            while let Some(next) = bucket.withdraw(&p, 0, p.retry_cost(throttled)) {
                (bucket, paid) = (next, paid + 1);
            }
            paid
        };
        assert_eq!((count(false), count(true)), (35, 100));
    }

    #[test]
    fn time_refills_at_the_rate_up_to_the_capacity() {
        // 2 tokens/s: 2500 ms adds 5 tokens.
        assert_eq!(at(0, 1000).refilled(&P, ms(3500)), at(5000, 3500));
        assert_eq!(at(0, 1000).withdraw(&P, ms(3500), 5), Some(at(0, 3500)));
        assert_eq!(at(0, 1000).withdraw(&P, ms(3499), 5), None);
        // Never past full, however long idle.
        assert_eq!(at(0, 0).refilled(&P, ms(u64::MAX)), at(20_000, u64::MAX));
        // No refill at all: only successes give back.
        let dry = Params { refill: 0.0, ..P };
        assert_eq!(at(7, 0).refilled(&dry, ms(10_000_000)), at(7, 0));
    }

    #[test]
    fn short_intervals_are_not_lost_to_rounding() {
        // 0.5 tokens/s is half a thousandth per ms: 1 ms adds nothing yet.
        let slow = Params { refill: 0.5, ..P };
        let mut bucket = at(0, 0);
        for now in 1..=4000 {
            bucket = bucket.refilled(&slow, ms(now));
        }
        assert_eq!(bucket.milli, 2000);
        // 0.3 tokens/s, updated every 4 ms (1.2 thousandths each): 10 s
        // give 3 tokens, not the 2.5 that dropping each 0.2 would leave.
        let slower = Params { refill: 0.3, ..P };
        let mut bucket = at(0, 0);
        for now in (4..=10_000).step_by(4) {
            bucket = bucket.refilled(&slower, ms(now));
        }
        assert_eq!(bucket.milli, 3000);
        // Uneven steps of nanoseconds add up the same.
        let mut bucket = at(0, 0);
        let mut now = 0;
        for step in (0..100_000u64).map(|i| 1 + (i * 7919) % 199_999) {
            now += step;
            bucket = bucket.refilled(&slower, now);
        }
        let exact = (now as f64 * 0.3 / 1e6).floor() as u64;
        assert!(
            bucket.milli.abs_diff(exact) <= 1,
            "{} vs {exact}",
            bucket.milli
        );
    }

    #[test]
    fn clock_jumps_are_clamped() {
        // Back: no refill, and the new time is the reference from now on.
        assert_eq!(at(1000, 50_000).refilled(&P, ms(10_000)), at(1000, 10_000));
        assert_eq!(
            at(1000, 50_000)
                .refilled(&P, ms(10_000))
                .refilled(&P, ms(11_000)),
            at(3000, 11_000)
        );
        // A stored count above the capacity (smaller parameters) is cut.
        assert_eq!(at(99_000, 0).refilled(&P, ms(0)), at(20_000, 0));
    }

    #[test]
    fn successes_give_back_up_to_full() {
        assert_eq!(at(0, 0).deposit(&P, ms(0), 5), at(5000, 0));
        assert_eq!(at(19_500, 0).deposit(&P, ms(0), 1), at(20_000, 0));
    }
}
