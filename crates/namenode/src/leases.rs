//! Leases: which client holds which open files, and when it last renewed.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

/// Lease soft limit (HDFS's LEASE_SOFTLIMIT_PERIOD).
pub const SOFT_LIMIT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
struct Lease {
    last_renewed: Duration,
    files: BTreeSet<u64>,
}

/// Leases by holder; times are the clock's monotonic readings.
#[derive(Debug, Clone, Default)]
pub struct LeaseManager {
    leases: HashMap<String, Lease>,
}

impl LeaseManager {
    /// Records that `holder` has `file` open, renewing its lease.
    pub fn add(&mut self, holder: &str, file: u64, now: Duration) {
        let l = self.leases.entry(holder.to_string()).or_insert(Lease {
            last_renewed: now,
            files: BTreeSet::new(),
        });
        l.last_renewed = now;
        l.files.insert(file);
    }

    /// Drops `file` from `holder`'s lease; an empty lease disappears.
    pub fn remove(&mut self, holder: &str, file: u64) {
        if let Some(l) = self.leases.get_mut(holder) {
            l.files.remove(&file);
            if l.files.is_empty() {
                self.leases.remove(holder);
            }
        }
    }

    /// Renews `holder`'s lease; false when it holds none.
    pub fn renew(&mut self, holder: &str, now: Duration) -> bool {
        match self.leases.get_mut(holder) {
            Some(l) => {
                l.last_renewed = now;
                true
            }
            None => false,
        }
    }

    pub fn has_lease(&self, holder: &str) -> bool {
        self.leases.contains_key(holder)
    }

    pub fn files_of(&self, holder: &str) -> Vec<u64> {
        self.leases
            .get(holder)
            .map(|l| l.files.iter().copied().collect())
            .unwrap_or_default()
    }

    /// True when `holder` has not renewed within `limit` (or holds no lease).
    pub fn expired(&self, holder: &str, now: Duration, limit: Duration) -> bool {
        match self.leases.get(holder) {
            Some(l) => now.saturating_sub(l.last_renewed) > limit,
            None => true,
        }
    }

    /// Holders whose lease is older than `limit`, with their files.
    pub fn expired_holders(&self, now: Duration, limit: Duration) -> Vec<(String, Vec<u64>)> {
        let mut v: Vec<_> = self
            .leases
            .iter()
            .filter(|(_, l)| now.saturating_sub(l.last_renewed) > limit)
            .map(|(h, l)| (h.clone(), l.files.iter().copied().collect()))
            .collect();
        v.sort();
        v
    }

    /// Every holder with its files.
    pub fn iter(&self) -> impl Iterator<Item = (&str, impl Iterator<Item = u64> + '_)> {
        self.leases
            .iter()
            .map(|(h, l)| (h.as_str(), l.files.iter().copied()))
    }

    pub fn len(&self) -> usize {
        self.leases.len()
    }

    pub fn is_empty(&self) -> bool {
        self.leases.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_renew_expire() {
        let mut m = LeaseManager::default();
        m.add("c1", 1, Duration::from_secs(0));
        m.add("c1", 2, Duration::from_secs(10));
        assert_eq!(m.files_of("c1"), vec![1, 2]);
        assert!(!m.expired("c1", Duration::from_secs(70), SOFT_LIMIT));
        assert!(m.expired("c1", Duration::from_secs(71), SOFT_LIMIT));
        assert!(m.renew("c1", Duration::from_secs(71)));
        assert!(!m.expired("c1", Duration::from_secs(100), SOFT_LIMIT));
        assert!(!m.renew("nobody", Duration::ZERO));
        m.remove("c1", 1);
        m.remove("c1", 2);
        assert!(m.is_empty());
        assert!(m.expired("c1", Duration::ZERO, SOFT_LIMIT));
    }

    #[test]
    fn expired_holders_sorted() {
        let mut m = LeaseManager::default();
        m.add("b", 1, Duration::ZERO);
        m.add("a", 2, Duration::ZERO);
        m.add("c", 3, Duration::from_secs(100));
        let e = m.expired_holders(Duration::from_secs(101), Duration::from_secs(60));
        assert_eq!(e, vec![("a".into(), vec![2]), ("b".into(), vec![1])]);
    }
}
