//! Rolling averages per key: samples go into the current window; every `window` it is
//! closed and kept, with at most `num_windows` closed windows per key (30 s × 6 = the last
//! 3 minutes by default in rhdfs; Hadoop's 5 minutes × 36 = 3 hours). Averages are taken over closed windows only. Time comes from
//! the caller (a monotonic reading), so tests drive it with a manual clock.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use parking_lot::Mutex;

/// `dfs.metrics.rolling.averages.window.length`'s default (rhdfs's; see `rhdfs_conf::keys`).
pub const DEFAULT_WINDOW: Duration =
    rhdfs_conf::keys::DFS_METRICS_ROLLING_AVERAGES_WINDOW_LENGTH_DEFAULT;
/// `dfs.metrics.rolling.averages.window.numbers`'s default.
pub const DEFAULT_NUM_WINDOWS: usize =
    rhdfs_conf::keys::DFS_METRICS_ROLLING_AVERAGES_WINDOW_NUMBERS_DEFAULT as usize;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct SumAndCount {
    sum: f64,
    count: u64,
}

#[derive(Debug, Default)]
struct Inner {
    current_start: Option<Duration>,
    current: BTreeMap<String, SumAndCount>,
    /// Closed windows per key, oldest first, with the time each closed.
    closed: BTreeMap<String, VecDeque<(Duration, SumAndCount)>>,
}

/// Per-key rolling averages.
#[derive(Debug)]
pub struct RollingAverages {
    window: Duration,
    num_windows: usize,
    inner: Mutex<Inner>,
}

impl RollingAverages {
    pub fn new(window: Duration, num_windows: usize) -> Self {
        RollingAverages {
            window: window.max(Duration::from_millis(1)),
            num_windows: num_windows.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Adds one sample (e.g. milliseconds) for `key` at time `now`.
    pub fn add(&self, key: &str, value: f64, now: Duration) {
        let mut g = self.inner.lock();
        self.roll(&mut g, now);
        let e = g.current.entry(key.to_string()).or_default();
        e.sum += value;
        e.count += 1;
    }

    /// Average per key over the closed windows, for keys with at least `min_samples` samples.
    pub fn averages(&self, min_samples: u64, now: Duration) -> BTreeMap<String, f64> {
        let mut g = self.inner.lock();
        self.roll(&mut g, now);
        g.closed
            .iter()
            .filter_map(|(k, q)| {
                let (sum, count) = q
                    .iter()
                    .fold((0.0, 0u64), |(s, c), (_, w)| (s + w.sum, c + w.count));
                (count > 0 && count >= min_samples).then(|| (k.clone(), sum / count as f64))
            })
            .collect()
    }

    /// Total samples per key in closed windows (for views and tests).
    pub fn sample_counts(&self, now: Duration) -> BTreeMap<String, u64> {
        let mut g = self.inner.lock();
        self.roll(&mut g, now);
        g.closed
            .iter()
            .map(|(k, q)| (k.clone(), q.iter().map(|(_, w)| w.count).sum()))
            .collect()
    }

    fn roll(&self, g: &mut Inner, now: Duration) {
        let start = *g.current_start.get_or_insert(now);
        if now < start + self.window {
            return;
        }
        let current = std::mem::take(&mut g.current);
        for (k, w) in current {
            let q = g.closed.entry(k).or_default();
            q.push_back((now, w));
            while q.len() > self.num_windows {
                q.pop_front();
            }
        }
        // Whole windows elapsed since `start`, so windows stay aligned.
        let n = ((now - start).as_nanos() / self.window.as_nanos()) as u32;
        g.current_start = Some(start + self.window * n);
        // Drop windows older than the whole horizon (a peer we stopped talking to).
        let horizon = self.window * self.num_windows as u32;
        g.closed.retain(|_, q| {
            while q
                .front()
                .is_some_and(|(t, _)| now.saturating_sub(*t) > horizon)
            {
                q.pop_front();
            }
            !q.is_empty()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Duration = Duration::from_secs(10);

    #[test]
    fn averages_use_closed_windows_only() {
        let r = RollingAverages::new(W, 3);
        r.add("a", 10.0, Duration::ZERO);
        r.add("a", 20.0, Duration::from_secs(1));
        assert!(r.averages(1, Duration::from_secs(5)).is_empty());
        let avg = r.averages(1, Duration::from_secs(10));
        assert_eq!(avg["a"], 15.0);
    }

    #[test]
    fn min_samples_and_window_limit() {
        let r = RollingAverages::new(W, 2);
        for i in 0..4u64 {
            let t = W * i as u32;
            r.add("a", (i + 1) as f64, t);
            r.add("b", 100.0, t);
        }
        // Windows a=1..4 have closed; only the last two (3, 4) are kept.
        let now = W * 4;
        let avg = r.averages(2, now);
        assert_eq!(avg["a"], (3.0 + 4.0) / 2.0);
        assert!(r.averages(3, now).is_empty());
        assert_eq!(r.sample_counts(now)["b"], 2);
    }

    #[test]
    fn stale_keys_expire() {
        let r = RollingAverages::new(W, 2);
        r.add("a", 1.0, Duration::ZERO);
        assert_eq!(r.averages(1, W).len(), 1);
        assert!(r.averages(1, W * 10).is_empty());
    }
}
