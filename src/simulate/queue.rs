//! The simulations' event queue: a calendar of time buckets in front of a
//! binary heap. With 100,000 clients a single heap holds 100,000 events
//! and every pop sifts through 17 levels of it, most of them cache misses:
//! the cost per simulated request doubled above 20,000 clients. Here only
//! the events of the current bucket are sorted; later ones wait unsorted
//! in their bucket, and events beyond the calendar's horizon (a huge
//! `--cap`) in a heap of their own.
//!
//! A bucket is a fixed share of the horizon, so the more clients, the more
//! events it holds: some 400 at 100,000 clients of the post's model, and a
//! heap of 400 cost a third of each request's instructions. So a bucket
//! that becomes current with many events is split once more into
//! sub-buckets of a few events each (a second, finer calendar), and only
//! the current sub-bucket is a heap: the cost of a pop no longer grows
//! with the fleet.
//!
//! Events come out in exactly the order of their `Ord` (earliest first,
//! then the tie-break), as from one heap: a bucket or sub-bucket is a range
//! of times (its index never decreases as the time grows), and an event
//! never lands in a bucket already passed (nothing is scheduled before the
//! event being handled). So results are the same numbers, event for event,
//! as with a plain heap.

use std::collections::BinaryHeap;

/// Buckets in the calendar (a power of two, a multiple of 64 for the bitmap).
const SLOTS: usize = 1024;

/// Below this many clients one heap stays in the cache and beats the
/// calendar, whose buckets cost an allocation each per repetition (the
/// post's sweep of 10 to 190 clients ran 1.5 times slower with them).
const CALENDAR_FROM_CLIENTS: u32 = 4096;

/// Events per sub-bucket when the current bucket is split: a heap of a few
/// events costs a few comparisons per pop.
const PER_SUB_BUCKET: usize = 4;

/// At most this many sub-buckets (their vectors are kept for the next bucket).
const MAX_SUB_BUCKETS: usize = 1024;

/// Something that happens at a time; `Ord` puts the one to handle first last
/// (`BinaryHeap` is a max-heap).
pub trait Timed: Ord {
    fn at_ms(&self) -> f64;
}

/// `Timed` and its order for an event struct with `at_ms: f64` and
/// `client: u32` fields: earliest first, ties to the lower client, so both
/// models handle simultaneous events in one documented order.
macro_rules! timed_event {
    ($event:ty) => {
        impl Eq for $event {}

        impl Ord for $event {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                other
                    .at_ms
                    .total_cmp(&self.at_ms)
                    .then(other.client.cmp(&self.client))
            }
        }

        impl PartialOrd for $event {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        impl $crate::simulate::queue::Timed for $event {
            fn at_ms(&self) -> f64 {
                self.at_ms
            }
        }
    };
}
pub(crate) use timed_event;

pub struct Calendar<E> {
    /// Few clients: every event goes to `near`, a plain heap.
    heap_only: bool,
    /// Milliseconds per bucket.
    width: f64,
    /// The current bucket: every event in `near` and `sub` belongs to it
    /// or an earlier one.
    now: u64,
    /// The current sub-bucket's events (the current bucket's, unsplit).
    near: BinaryHeap<E>,
    /// The current bucket's later sub-buckets, `sub_now + 1 .. sub_count`.
    sub: Vec<Vec<E>>,
    /// How many sub-buckets the current bucket has (1: not split).
    sub_count: usize,
    sub_now: usize,
    in_sub: usize,
    /// Sub-bucket of time t: `(t - sub_start) * sub_scale`, clamped.
    sub_start: f64,
    sub_scale: f64,
    /// Buckets `now + 1 .. now + SLOTS`, at index `bucket % SLOTS`.
    slots: Vec<Vec<E>>,
    /// Which slots hold events, one bit each, to skip empty ones at once.
    occupied: [u64; SLOTS / 64],
    in_slots: usize,
    /// Buckets from `now + SLOTS` on.
    far: BinaryHeap<E>,
}

impl<E: Timed> Calendar<E> {
    /// A calendar whose horizon covers `horizon_ms` (the longest gap between
    /// an event and the one it schedules, as far as it is known), for a
    /// simulation of `clients` clients.
    pub fn new(horizon_ms: f64, clients: u32) -> Self {
        let width = horizon_ms / (SLOTS - 1) as f64;
        Calendar {
            heap_only: clients < CALENDAR_FROM_CLIENTS,
            // A zero or unusable horizon: one bucket per millisecond.
            width: if width.is_normal() { width } else { 1.0 },
            now: 0,
            near: BinaryHeap::new(),
            sub: Vec::new(),
            sub_count: 1,
            sub_now: 0,
            in_sub: 0,
            sub_start: 0.0,
            sub_scale: 0.0,
            // Allocated on first use: a heap-only calendar never needs them.
            slots: Vec::new(),
            occupied: [0; SLOTS / 64],
            in_slots: 0,
            far: BinaryHeap::new(),
        }
    }

    fn bucket(&self, event: &E) -> u64 {
        // Saturating: times past 2^64 buckets share the last one (the heap
        // still orders them).
        (event.at_ms() / self.width) as u64
    }

    pub fn push(&mut self, event: E) {
        if self.heap_only {
            return self.near.push(event);
        }
        let bucket = self.bucket(&event);
        if bucket <= self.now {
            self.push_current(event);
        } else if bucket - self.now < SLOTS as u64 {
            self.file(bucket, event);
        } else {
            self.far.push(event);
        }
    }

    /// An event of the current bucket (or, never in a simulation, an
    /// earlier one): into its sub-bucket, or the heap if that is the
    /// current one or passed.
    fn push_current(&mut self, event: E) {
        if self.sub_count > 1 {
            // Monotone in the time (every step is), so sub-buckets are
            // ranges of time; saturating casts and the clamp keep it so.
            let index = (((event.at_ms() - self.sub_start) * self.sub_scale) as usize)
                .min(self.sub_count - 1);
            if index > self.sub_now {
                self.sub[index].push(event);
                self.in_sub += 1;
                return;
            }
        }
        self.near.push(event);
    }

    fn file(&mut self, bucket: u64, event: E) {
        if self.slots.is_empty() {
            self.slots = std::iter::repeat_with(Vec::new).take(SLOTS).collect();
        }
        let slot = (bucket % SLOTS as u64) as usize;
        self.slots[slot].push(event);
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.in_slots += 1;
    }

    /// The earliest event, or None when the queue is empty.
    pub fn pop(&mut self) -> Option<E> {
        if self.heap_only {
            return self.near.pop();
        }
        loop {
            if let Some(event) = self.near.pop() {
                return Some(event);
            }
            if self.in_sub > 0 {
                // The next sub-bucket that holds events.
                let mut index = self.sub_now + 1;
                while self.sub[index].is_empty() {
                    index += 1;
                }
                self.sub_now = index;
                self.in_sub -= self.sub[index].len();
                self.near.extend(self.sub[index].drain(..));
                continue;
            }
            self.now = match self.next_occupied() {
                Some(bucket) => bucket,
                None => self.bucket(self.far.peek()?),
            };
            let slot = (self.now % SLOTS as u64) as usize;
            let mut events = Vec::new();
            if self.occupied[slot / 64] & (1 << (slot % 64)) != 0 {
                self.occupied[slot / 64] &= !(1 << (slot % 64));
                events = std::mem::take(&mut self.slots[slot]);
                self.in_slots -= events.len();
            }
            self.split(events.len());
            for event in events.drain(..) {
                self.push_current(event);
            }
            if !self.slots.is_empty() {
                // Its allocation serves the bucket SLOTS later.
                self.slots[slot] = events;
            }
            // Events that came within the horizon by this move.
            while let Some(first) = self.far.peek() {
                let bucket = self.bucket(first);
                if bucket - self.now >= SLOTS as u64 {
                    break;
                }
                let event = self.far.pop().expect("peeked");
                if bucket <= self.now {
                    self.push_current(event);
                } else {
                    self.file(bucket, event);
                }
            }
        }
    }

    /// Splits the new current bucket into sub-buckets for about `events` events.
    fn split(&mut self, events: usize) {
        self.sub_count = (events / PER_SUB_BUCKET).clamp(1, MAX_SUB_BUCKETS);
        self.sub_now = 0;
        if self.sub_count > 1 {
            if self.sub.len() < self.sub_count {
                self.sub.resize_with(self.sub_count, Vec::new);
            }
            self.sub_start = self.now as f64 * self.width;
            self.sub_scale = self.sub_count as f64 / self.width;
        }
    }

    /// The first bucket after `now` that holds events, if any slot does.
    fn next_occupied(&self) -> Option<u64> {
        if self.in_slots == 0 {
            return None;
        }
        let start = (self.now + 1) % SLOTS as u64;
        let (word, bit) = ((start / 64) as usize, start % 64);
        let words = SLOTS / 64;
        // The start word from `bit` on, every other word, then the start
        // word's bits before `bit` (the wrap-around).
        for step in 0..=words {
            let index = (word + step) % words;
            let mut bits = self.occupied[index];
            if step == 0 {
                bits &= u64::MAX << bit;
            } else if step == words {
                bits &= !(u64::MAX << bit);
            }
            if bits != 0 {
                let slot = (index * 64) as u64 + u64::from(bits.trailing_zeros());
                let ahead = (slot + SLOTS as u64 - start) % SLOTS as u64;
                return Some(self.now + 1 + ahead);
            }
        }
        None
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.near.len() + self.in_sub + self.in_slots + self.far.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use std::cmp::Ordering;

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Ev(f64, u32);

    impl Eq for Ev {}
    impl Ord for Ev {
        fn cmp(&self, other: &Self) -> Ordering {
            other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
        }
    }
    impl PartialOrd for Ev {
        fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Timed for Ev {
        fn at_ms(&self) -> f64 {
            self.0
        }
    }

    /// Random pushes and pops, each push no earlier than the last pop (as
    /// in a simulation): the calendar pops exactly what one heap pops.
    fn agrees_with_a_heap(horizon_ms: f64, gap_ms: f64, seed: u64) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        // As many clients as it takes to use the buckets.
        let mut calendar = Calendar::new(horizon_ms, CALENDAR_FROM_CLIENTS);
        let mut heap = BinaryHeap::new();
        let mut now = 0.0;
        for id in 0..20_000u32 {
            let burst = rng.random_range(0..3);
            for k in 0..burst {
                // Ties on purpose: some events share a time.
                let at = if k == 1 {
                    now
                } else {
                    now + rng.random::<f64>() * gap_ms
                };
                calendar.push(Ev(at, id * 3 + k));
                heap.push(Ev(at, id * 3 + k));
            }
            assert_eq!(calendar.len(), heap.len());
            if rng.random_range(0..2) == 0 {
                let got = calendar.pop();
                assert_eq!(got, heap.pop());
                if let Some(Ev(at, _)) = got {
                    now = at;
                }
            }
        }
        while let Some(want) = heap.pop() {
            assert_eq!(calendar.pop(), Some(want));
        }
        assert_eq!(calendar.pop(), None);
    }

    #[test]
    fn pops_in_the_order_of_one_heap() {
        // Within the horizon, beyond it (the far heap), a zero horizon, and
        // crowded buckets split into sub-buckets, with events scheduled
        // into the current bucket's later sub-buckets (gaps under a bucket).
        for (horizon, gap) in [
            (2000.0, 1500.0),
            (10.0, 5000.0),
            (0.0, 30.0),
            (1e30, 1e25),
            (2000.0, 40.0),
            (2000.0, 1.0),
            (20.0, 0.05),
        ] {
            for seed in 0..3 {
                agrees_with_a_heap(horizon, gap, seed);
            }
        }
    }
}
