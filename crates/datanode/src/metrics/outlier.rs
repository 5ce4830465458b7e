//! Outlier detection over per-resource (peer or disk) aggregate latencies.
//!
//! The rule, as HDFS applies it: with fewer than `min_resources` resources nothing is an
//! outlier. Otherwise, with `median` and `mad` (median absolute deviation scaled by 1.4826)
//! of all latencies, the upper limit is
//! `max(low_threshold_ms, 3 × median, median + 3 × mad)` and every resource strictly above it
//! is an outlier.

use std::collections::BTreeMap;

/// Scale factor that makes the MAD a consistent estimator of the standard deviation.
pub const MAD_MULTIPLIER: f64 = 1.4826;
/// How many (scaled) MADs above the median a latency must be.
pub const DEVIATION_MULTIPLIER: f64 = 3.0;
/// A latency must also exceed this multiple of the median.
pub const MEDIAN_MULTIPLIER: f64 = 3.0;

/// The numbers behind one outlier decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutlierMetrics {
    pub median: f64,
    pub mad: f64,
    pub upper_limit: f64,
    pub actual: f64,
}

/// Flags resources whose latency is far above their peers'.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutlierDetector {
    min_resources: usize,
    low_threshold_ms: f64,
}

/// Median of a sorted slice (mean of the two middle values for an even length).
pub fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let mid = sorted[n / 2];
    Some(if n.is_multiple_of(2) {
        (mid + sorted[n / 2 - 1]) / 2.0
    } else {
        mid
    })
}

/// Median absolute deviation of a sorted slice, times [`MAD_MULTIPLIER`].
pub fn mad(sorted: &[f64]) -> Option<f64> {
    let m = median(sorted)?;
    let mut dev: Vec<f64> = sorted.iter().map(|v| (v - m).abs()).collect();
    dev.sort_by(f64::total_cmp);
    median(&dev).map(|d| d * MAD_MULTIPLIER)
}

impl OutlierDetector {
    pub fn new(min_resources: usize, low_threshold_ms: f64) -> Self {
        OutlierDetector {
            min_resources,
            low_threshold_ms,
        }
    }

    pub fn min_resources(&self) -> usize {
        self.min_resources
    }

    pub fn low_threshold_ms(&self) -> f64 {
        self.low_threshold_ms
    }

    /// The upper limit for a set of latencies, or None when there are too few of them.
    pub fn upper_limit(&self, latencies: &[f64]) -> Option<(f64, f64, f64)> {
        if latencies.len() < self.min_resources.max(1) {
            return None;
        }
        let mut sorted: Vec<f64> = latencies.to_vec();
        sorted.sort_by(f64::total_cmp);
        let med = median(&sorted)?;
        let mad = mad(&sorted)?;
        let limit = self
            .low_threshold_ms
            .max(med * MEDIAN_MULTIPLIER)
            .max(med + DEVIATION_MULTIPLIER * mad);
        Some((med, mad, limit))
    }

    /// Outliers with the numbers behind each decision.
    pub fn outlier_metrics(
        &self,
        stats: &BTreeMap<String, f64>,
    ) -> BTreeMap<String, OutlierMetrics> {
        let values: Vec<f64> = stats.values().copied().filter(|v| v.is_finite()).collect();
        if values.len() != stats.len() {
            tracing::debug!("ignoring non-finite latencies in outlier detection");
        }
        let Some((median, mad, upper_limit)) = self.upper_limit(&values) else {
            tracing::debug!(
                have = values.len(),
                need = self.min_resources,
                "skipping outlier detection: latency data for too few resources"
            );
            return BTreeMap::new();
        };
        stats
            .iter()
            .filter(|(_, v)| v.is_finite() && **v > upper_limit)
            .map(|(k, v)| {
                (
                    k.clone(),
                    OutlierMetrics {
                        median,
                        mad,
                        upper_limit,
                        actual: *v,
                    },
                )
            })
            .collect()
    }

    /// Outliers and their latencies.
    pub fn outliers(&self, stats: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
        self.outlier_metrics(stats)
            .into_iter()
            .map(|(k, m)| (k, m.actual))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn stats(v: &[f64]) -> BTreeMap<String, f64> {
        v.iter()
            .enumerate()
            .map(|(i, l)| (format!("n{i:02}"), *l))
            .collect()
    }

    #[test]
    fn median_and_mad() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[1.0, 2.0, 3.0, 4.0]), Some(2.5));
        assert_eq!(median(&[1.0, 2.0, 10.0]), Some(2.0));
        // deviations from 2: 1, 0, 8 -> median 1
        assert!((mad(&[1.0, 2.0, 10.0]).unwrap() - MAD_MULTIPLIER).abs() < 1e-12);
        assert_eq!(mad(&[5.0, 5.0, 5.0]), Some(0.0));
    }

    #[test]
    fn too_few_resources_means_no_outliers() {
        let d = OutlierDetector::new(10, 5.0);
        let mut v = vec![1.0; 9];
        v.push(1000.0);
        assert!(d.outliers(&stats(&v[1..])).is_empty());
        assert_eq!(d.outliers(&stats(&v)).len(), 1);
    }

    #[test]
    fn one_slow_node_among_ten() {
        let d = OutlierDetector::new(10, 5.0);
        let mut v = vec![10.0, 11.0, 9.0, 10.5, 9.5, 10.0, 11.5, 8.5, 10.0];
        v.push(100.0);
        let out = d.outlier_metrics(&stats(&v));
        assert_eq!(out.keys().collect::<Vec<_>>(), vec!["n09"]);
        let m = out["n09"];
        assert_eq!(m.median, 10.0);
        assert_eq!(m.actual, 100.0);
        // 3 × median dominates: MAD is small.
        assert_eq!(m.upper_limit, 30.0);
    }

    #[test]
    fn low_threshold_floor() {
        // Relative outlier, but below the 5 ms floor: not slow.
        let d = OutlierDetector::new(10, 5.0);
        let mut v = vec![0.5; 9];
        v.push(4.9);
        assert!(d.outliers(&stats(&v)).is_empty());
        v[9] = 5.1;
        assert_eq!(d.outliers(&stats(&v)).len(), 1);
    }

    #[test]
    fn median_multiplier_bound() {
        // Identical latencies (MAD 0): a node at 2.9 × median is not flagged, 3.1 × is.
        let d = OutlierDetector::new(5, 0.0);
        let mut v = vec![10.0; 5];
        v.push(29.0);
        assert!(d.outliers(&stats(&v)).is_empty());
        v[5] = 31.0;
        assert_eq!(d.outliers(&stats(&v)).len(), 1);
    }

    #[test]
    fn mad_bound_dominates_with_spread() {
        let d = OutlierDetector::new(5, 0.0);
        // median 10, deviations 9,5,0,5,9,... -> MAD dominates 3 × median for wide spreads.
        let v = [1.0, 5.0, 10.0, 15.0, 19.0, 30.0, 1.0];
        let (med, mad_v, limit) = d.upper_limit(&v).unwrap();
        assert_eq!(med, 10.0);
        assert!((limit - (med * 3.0).max(med + 3.0 * mad_v)).abs() < 1e-9);
    }

    #[test]
    fn property_limit_and_membership() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5107);
        for _ in 0..500 {
            let n = rng.random_range(0..30usize);
            let min = rng.random_range(1..12usize);
            let low = rng.random_range(0.0..50.0f64);
            let v: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..500.0f64)).collect();
            let d = OutlierDetector::new(min, low);
            let s = stats(&v);
            let out = d.outlier_metrics(&s);
            if n < min {
                assert!(out.is_empty());
                continue;
            }
            let (med, _, limit) = d.upper_limit(&v).unwrap();
            assert!(limit >= low && limit >= med * MEDIAN_MULTIPLIER);
            // Everything strictly above the limit and nothing else is an outlier.
            for (k, l) in &s {
                assert_eq!(out.contains_key(k), *l > limit, "{k}={l} limit={limit}");
            }
            // Never more than half the resources are above 3 × median (unless median is 0).
            if med > 0.0 {
                assert!(out.len() * 2 <= n);
            }
        }
    }
}
