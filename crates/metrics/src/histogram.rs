//! A latency histogram with fixed bucket bounds (seconds), updated with atomics only, so
//! recording from many tasks never takes a lock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds (seconds) of the buckets every histogram uses: 50 µs to 10 s.
pub const BOUNDS: [f64; 16] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 10.0,
];

/// Observations bucketed by [`BOUNDS`] (a last bucket for anything longer), their count and
/// their sum.
#[derive(Debug, Default)]
pub struct Histogram {
    buckets: [AtomicU64; BOUNDS.len() + 1],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

/// A copy of a histogram's figures at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistogramSnapshot {
    /// Cumulative counts per bound of [`BOUNDS`] (Prometheus `le` buckets), `+Inf` excluded.
    pub cumulative: Vec<u64>,
    pub count: u64,
    pub sum: Duration,
}

impl HistogramSnapshot {
    /// Mean observation in milliseconds (Hadoop's `AvgTime`), 0 when empty.
    pub fn mean_millis(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum.as_secs_f64() * 1000.0 / self.count as f64
        }
    }
}

impl Histogram {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one observation.
    pub fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let i = BOUNDS
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(BOUNDS.len());
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut acc = 0;
        let cumulative = BOUNDS
            .iter()
            .enumerate()
            .map(|(i, _)| {
                acc += self.buckets[i].load(Ordering::Relaxed);
                acc
            })
            .collect();
        let over = self.buckets[BOUNDS.len()].load(Ordering::Relaxed);
        HistogramSnapshot {
            cumulative,
            // The count is the buckets' total, so `+Inf` always equals `_count`.
            count: acc + over,
            sum: Duration::from_nanos(self.sum_nanos.load(Ordering::Relaxed)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative() {
        let h = Histogram::new();
        h.observe(Duration::from_micros(10));
        h.observe(Duration::from_millis(3));
        h.observe(Duration::from_secs(60));
        let s = h.snapshot();
        assert_eq!(s.count, 3);
        assert_eq!(s.cumulative[0], 1);
        assert_eq!(s.cumulative[BOUNDS.len() - 1], 2);
        assert_eq!(s.cumulative[6], 2); // 5 ms
        assert_eq!(s.cumulative[5], 1); // 2.5 ms
        assert!(s.mean_millis() > 20_000.0);
        assert_eq!(Histogram::new().snapshot().mean_millis(), 0.0);
    }
}
