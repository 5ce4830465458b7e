//! Mutexes that measure how long each kind of operation waits for and holds them.
//!
//! Hold and wait times are measured with `std::time::Instant`: they are metrics of real
//! elapsed time, not inputs to any decision, so they do not go through the injectable clock.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};

/// Longest and total hold/wait of one operation kind on one lock.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockStat {
    pub lock: &'static str,
    pub op: &'static str,
    pub count: u64,
    pub max_hold: Duration,
    pub total_hold: Duration,
    pub max_wait: Duration,
}

/// A parking_lot mutex whose guards record per-operation hold and wait times.
pub struct TimedMutex<T> {
    name: &'static str,
    inner: Mutex<T>,
    stats: Mutex<HashMap<&'static str, LockStat>>,
}

impl<T> TimedMutex<T> {
    pub fn new(name: &'static str, value: T) -> Self {
        TimedMutex {
            name,
            inner: Mutex::new(value),
            stats: Mutex::new(HashMap::new()),
        }
    }

    /// Locks for operation kind `op`; the hold is recorded when the guard drops.
    pub fn lock(&self, op: &'static str) -> TimedGuard<'_, T> {
        let asked = Instant::now();
        let guard = self.inner.lock();
        let acquired = Instant::now();
        TimedGuard {
            guard,
            owner: self,
            op,
            wait: acquired - asked,
            acquired,
        }
    }

    fn record(&self, op: &'static str, wait: Duration, hold: Duration) {
        let mut stats = self.stats.lock();
        let s = stats.entry(op).or_insert_with(|| LockStat {
            lock: self.name,
            op,
            ..LockStat::default()
        });
        s.count += 1;
        s.total_hold += hold;
        s.max_hold = s.max_hold.max(hold);
        s.max_wait = s.max_wait.max(wait);
    }

    /// Statistics per operation kind, sorted by operation name.
    pub fn stats(&self) -> Vec<LockStat> {
        let mut v: Vec<LockStat> = self.stats.lock().values().cloned().collect();
        v.sort_by_key(|s| s.op);
        v
    }

    pub fn reset_stats(&self) {
        self.stats.lock().clear();
    }
}

pub struct TimedGuard<'a, T> {
    guard: MutexGuard<'a, T>,
    owner: &'a TimedMutex<T>,
    op: &'static str,
    wait: Duration,
    acquired: Instant,
}

impl<T> Deref for TimedGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for TimedGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

impl<T> Drop for TimedGuard<'_, T> {
    fn drop(&mut self) {
        let hold = self.acquired.elapsed();
        self.owner.record(self.op, self.wait, hold);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_per_operation() {
        let m = TimedMutex::new("blocks", 0u32);
        {
            let mut g = m.lock("a");
            *g += 1;
        }
        drop(m.lock("b"));
        drop(m.lock("a"));
        let stats = m.stats();
        assert_eq!(stats.len(), 2);
        assert_eq!(stats[0].op, "a");
        assert_eq!(stats[0].count, 2);
        assert_eq!(stats[0].lock, "blocks");
        assert_eq!(stats[1].count, 1);
    }
}
