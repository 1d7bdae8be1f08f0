//! The expected total wait of decorrelated jitter. Each sleep is
//! `min(cap, U(base, 3 * previous))`: while the cap is out of reach its mean
//! follows from the previous mean alone (`(base + 3 * mean) / 2`), but the
//! cap makes the step nonlinear, so the whole distribution of the previous
//! sleep has to be carried forward.
//!
//! The distribution lives on geometric bins over `[base, cap)` (each bin a
//! fixed ratio wider than the one before) plus a point mass at the cap.
//! Geometric bins resolve the mass near `base` as finely as the mass near
//! the cap, whatever cap/base is (a linear grid over `[1 ms, 20 s]` put
//! every early sleep into its first 5 ms bin). Each bin keeps its mass and
//! its first moment; the next distribution is computed exactly from two
//! point masses per bin that keep the bin's mass and mean and have the
//! spread of a uniform fill. The mean of the next sleep is therefore exact
//! while no sleep can reach the cap, and within about 1e-7 of it after
//! that (third order in the bin width: see the tests).
//!
//! The chain forgets where it started: once the mean sleep stops changing,
//! every later sleep has that mean, so a plan over four billion retries
//! costs a few hundred steps.

/// Width ratio of neighbouring bins: at most ~3,300 bins (cap/base ≤ 2e28)
/// and a relative error of the capped mean near 1e-7 (1.05 gives 2e-6,
/// 1.005 with one point per bin 1e-5).
const RATIO: f64 = 1.02;
/// Bins for a cap just above the base, where RATIO would give one or two.
const MIN_BINS: usize = 64;
/// Steps after which the mean is taken as settled even if it still moves by
/// rounding (it settles within a few hundred for any cap/base).
const MAX_STEPS: u32 = 100_000;

/// E[sum of the first `retries` sleeps], in seconds, for `0 < base < cap`.
pub fn expected_total(base: f64, cap: f64, retries: u32) -> f64 {
    debug_assert!(0.0 < base && base < cap && cap.is_finite());
    let grid = Grid::new(base, cap);
    let mut now = Dist::new(grid.bins());
    let mut next = Dist::new(grid.bins());
    let mut sources = Vec::with_capacity(2 * grid.bins() + 1);
    let mut ends = vec![0.0; grid.bins()];
    // The first sleep follows a "previous" of exactly `base`.
    grid.step(&[(base, 1.0)], &mut now, &mut ends);
    let mut total = 0.0;
    let mut mean = now.mean(cap);
    for done in 1..=retries {
        total += mean;
        if done == retries {
            break;
        }
        now.sources(&grid, &mut sources);
        grid.step(&sources, &mut next, &mut ends);
        std::mem::swap(&mut now, &mut next);
        let previous = mean;
        mean = now.mean(cap);
        // Settled: only rounding moves it now. Every remaining sleep has this mean.
        if now.at_cap > 0.0 && ((mean - previous).abs() <= mean * 1e-13 || done >= MAX_STEPS) {
            return total + mean * f64::from(retries - done);
        }
    }
    total
}

/// Bin edges `base * RATIO^i`, the last one exactly `cap`.
struct Grid {
    edges: Vec<f64>,
    base: f64,
    cap: f64,
}

impl Grid {
    fn new(base: f64, cap: f64) -> Self {
        let span = (cap / base).ln();
        let bins = ((span / RATIO.ln()).ceil() as usize).max(MIN_BINS);
        let log_step = span / bins as f64;
        let mut edges: Vec<f64> = (0..bins)
            .map(|i| base * (log_step * i as f64).exp())
            .collect();
        edges.push(cap);
        Grid { edges, base, cap }
    }

    fn bins(&self) -> usize {
        self.edges.len() - 1
    }

    /// The distribution of the next sleep, given point masses `(previous,
    /// probability)` in ascending order: each spreads `p / (3x - base)` per
    /// second over `[base, 3x)`, and what lies past the cap lands on the cap.
    fn step(&self, sources: &[(f64, f64)], out: &mut Dist, ends: &mut [f64]) {
        let bins = self.bins();
        out.clear();
        ends.fill(0.0);
        // Density of sources reaching past the cap: they cover every bin.
        let mut past_cap = 0.0;
        // Sources ascend, so the bin holding their top only moves up.
        let mut i = 0;
        for &(x, p) in sources {
            let top = 3.0 * x;
            let spread = top - self.base;
            if p <= 0.0 || spread <= 0.0 {
                continue;
            }
            let density = p / spread;
            if top >= self.cap {
                past_cap += density;
                out.at_cap += p * (top - self.cap) / spread;
                continue;
            }
            while self.edges[i + 1] <= top {
                i += 1;
            }
            // Full coverage below this bin (added in the sweep), part of this one.
            let low = self.edges[i];
            ends[i] += density;
            out.mass[i] += density * (top - low);
            out.moment[i] += density * (top - low) * (top + low) / 2.0;
        }
        // From the top down the covering density only grows: sums of
        // positive terms, no cancellation between large and small densities.
        let mut covering = past_cap;
        let mut total = out.at_cap;
        for i in (0..bins).rev() {
            let (low, high) = (self.edges[i], self.edges[i + 1]);
            out.mass[i] += covering * (high - low);
            out.moment[i] += covering * (high - low) * (high + low) / 2.0;
            covering += ends[i];
            total += out.mass[i];
        }
        // Rounding must not leak or create probability over many steps.
        let scale = 1.0 / total;
        for i in 0..bins {
            out.mass[i] *= scale;
            out.moment[i] *= scale;
        }
        out.at_cap *= scale;
    }
}

/// Mass and first moment per bin, and the point mass at the cap.
struct Dist {
    mass: Vec<f64>,
    moment: Vec<f64>,
    at_cap: f64,
}

impl Dist {
    fn new(bins: usize) -> Self {
        Dist {
            mass: vec![0.0; bins],
            moment: vec![0.0; bins],
            at_cap: 0.0,
        }
    }

    fn clear(&mut self) {
        self.mass.fill(0.0);
        self.moment.fill(0.0);
        self.at_cap = 0.0;
    }

    fn mean(&self, cap: f64) -> f64 {
        self.moment.iter().sum::<f64>() + self.at_cap * cap
    }

    /// Each bin as two point masses keeping its mass and mean, half a
    /// uniform fill's standard deviation (width / √12) either side, pulled
    /// in when the mean is nearer an edge; then the cap's point mass. One
    /// point at the mean would be off by a second-order term in the bin
    /// width wherever the step is nonlinear.
    fn sources(&self, grid: &Grid, out: &mut Vec<(f64, f64)>) {
        out.clear();
        for i in 0..self.mass.len() {
            let mass = self.mass[i];
            if mass <= 0.0 {
                continue;
            }
            let (low, high) = (grid.edges[i], grid.edges[i + 1]);
            let x = (self.moment[i] / mass).clamp(low, high);
            let d = ((high - low) / 12f64.sqrt()).min(x - low).min(high - x);
            out.push((x - d, mass / 2.0));
            out.push((x + d, mass / 2.0));
        }
        out.push((grid.cap, self.at_cap));
    }
}
