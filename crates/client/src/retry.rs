//! The client's own retry schedules: `complete()` returning false and addBlock's
//! NotReplicatedYetException, both with `dfs.client.block.write.locateFollowingBlock.*`.

use std::time::Duration;

/// Delays between attempts: `initial`, doubling, capped at `max`; `retries` sleeps, so
/// `retries + 1` attempts in all (Hadoop: 5 retries, 400 ms → 400, 800, 1600, 3200, 6400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    pub retries: u32,
    pub initial: Duration,
    pub max: Duration,
}

impl Backoff {
    /// The sleeps between attempts, in order.
    pub fn delays(&self) -> Vec<Duration> {
        let mut out = Vec::with_capacity(self.retries as usize);
        let mut d = self.initial;
        for _ in 0..self.retries {
            out.push(d.min(self.max));
            d = d.saturating_mul(2).min(self.max);
        }
        out
    }

    /// Total time slept before giving up.
    pub fn total(&self) -> Duration {
        self.delays().iter().sum()
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            retries: 5,
            initial: Duration::from_millis(400),
            max: Duration::from_millis(60_000),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hadoop_schedule() {
        let b = Backoff::default();
        let ms: Vec<u128> = b.delays().iter().map(|d| d.as_millis()).collect();
        assert_eq!(ms, vec![400, 800, 1600, 3200, 6400]);
        // 12.4 s in all: enough to absorb an incremental report delayed by 8 s.
        assert_eq!(b.total(), Duration::from_millis(12_400));
        let capped = Backoff {
            retries: 4,
            initial: Duration::from_millis(400),
            max: Duration::from_millis(1000),
        };
        let ms: Vec<u128> = capped.delays().iter().map(|d| d.as_millis()).collect();
        assert_eq!(ms, vec![400, 800, 1000, 1000]);
        let none = Backoff {
            retries: 0,
            ..Backoff::default()
        };
        assert!(none.delays().is_empty());
    }
}
