//! The service of the outage scenario: down from 0 until the outage ends
//! (every request fails at once, as a refused connection does), then
//! serving at most `capacity` requests in each second counted from the
//! recovery (the rest fail at once, as a 503 does). It also keeps the two
//! loads the table reports: requests during the outage, and requests per
//! second in the first minute after it.

/// Seconds after the recovery whose load the table reports.
pub const FIRST_MINUTE: usize = 60;

pub struct Service {
    outage_ms: f64,
    capacity: u32,
    /// The one-second window counted from the recovery, and its requests
    /// so far (served or not).
    window: u64,
    in_window: u32,
    /// Requests that arrived while the service was down.
    pub during_outage: u64,
    /// Requests in each second of the first minute after the recovery.
    first_minute: [u32; FIRST_MINUTE],
}

impl Service {
    pub fn new(outage_ms: f64, capacity: u32) -> Self {
        Service {
            outage_ms,
            capacity,
            window: 0,
            in_window: 0,
            during_outage: 0,
            first_minute: [0; FIRST_MINUTE],
        }
    }

    /// A request arriving at `at_ms` (never earlier than the one before):
    /// whether it is served.
    pub fn serves(&mut self, at_ms: f64) -> bool {
        if at_ms < self.outage_ms {
            self.during_outage += 1;
            return false;
        }
        // Whole seconds since the recovery (saturating cast: never negative).
        let window = ((at_ms - self.outage_ms) / 1e3) as u64;
        if window != self.window {
            self.window = window;
            self.in_window = 0;
        }
        self.in_window = self.in_window.saturating_add(1);
        if let Some(count) = self.first_minute.get_mut(window as usize) {
            *count += 1;
        }
        self.in_window <= self.capacity
    }

    /// The most requests that arrived in one second of the first minute
    /// after the recovery.
    pub fn peak_first_minute(&self) -> u32 {
        self.first_minute.iter().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn down_until_the_outage_ends_then_capacity_per_second() {
        let mut service = Service::new(10_000.0, 3);
        for at in [0.0, 5_000.0, 9_999.9] {
            assert!(!service.serves(at));
        }
        assert_eq!(service.during_outage, 3);
        // The first second after the recovery serves three of five.
        let first: Vec<bool> = [10_000.0, 10_100.0, 10_200.0, 10_300.0, 10_999.0]
            .into_iter()
            .map(|at| service.serves(at))
            .collect();
        assert_eq!(first, [true, true, true, false, false]);
        // A new second, a new count.
        assert!(service.serves(11_000.0));
        // A quiet second in between changes nothing.
        for at in [13_500.0, 13_600.0, 13_700.0] {
            assert!(service.serves(at));
        }
        assert!(!service.serves(13_800.0));
        assert_eq!(service.during_outage, 3);
        assert_eq!(service.peak_first_minute(), 5);
    }

    #[test]
    fn the_peak_counts_only_the_first_minute() {
        let mut service = Service::new(0.0, 1);
        for i in 0..4 {
            service.serves(60_000.0 + f64::from(i));
        }
        assert_eq!(service.peak_first_minute(), 0);
        service.serves(61_000.0);
        let mut late = Service::new(0.0, 1);
        late.serves(59_999.0);
        late.serves(59_999.5);
        assert_eq!(late.peak_first_minute(), 2);
        // No outage: nothing counted as during one.
        assert_eq!(late.during_outage, 0);
    }
}
