//! Leases: which client holds which open files, and when it last renewed.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

/// Lease soft limit (HDFS's LEASE_SOFTLIMIT_PERIOD).
pub const SOFT_LIMIT: Duration = Duration::from_secs(60);

/// The holder the lease monitor gives a file whose writer passed the hard limit while
/// its block recovery runs (Hadoop's NAMENODE_LEASE_HOLDER). Its leases count as
/// expired at every check: the monitor keeps retrying their release, each retry gated
/// by the block recovery timeout, so a recovery that never answered is started again
/// without waiting another hard limit.
pub const NAMENODE_LEASE_HOLDER: &str = "HDFS_NameNode";

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

    /// Moves `file` from `old`'s lease to `new`'s (renewing `new`'s).
    pub fn reassign(&mut self, old: &str, file: u64, new: &str, now: Duration) {
        self.remove(old, file);
        self.add(new, file, now);
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

    /// True when `holder` has not renewed within `limit` (or holds no lease, or is the
    /// NameNode).
    pub fn expired(&self, holder: &str, now: Duration, limit: Duration) -> bool {
        match self.leases.get(holder) {
            Some(l) => Self::is_expired(holder, l, now, limit),
            None => true,
        }
    }

    fn is_expired(holder: &str, l: &Lease, now: Duration, limit: Duration) -> bool {
        holder == NAMENODE_LEASE_HOLDER || now.saturating_sub(l.last_renewed) > limit
    }

    /// Holders whose lease is older than `limit`, with their files.
    pub fn expired_holders(&self, now: Duration, limit: Duration) -> Vec<(String, Vec<u64>)> {
        let mut v: Vec<_> = self
            .leases
            .iter()
            .filter(|(h, l)| Self::is_expired(h, l, now, limit))
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
    fn reassigned_files_follow_their_new_holder() {
        let mut m = LeaseManager::default();
        m.add("c1", 1, Duration::ZERO);
        m.add("c1", 2, Duration::ZERO);
        m.reassign("c1", 1, NAMENODE_LEASE_HOLDER, Duration::from_secs(5));
        assert_eq!(m.files_of("c1"), vec![2]);
        assert_eq!(m.files_of(NAMENODE_LEASE_HOLDER), vec![1]);
        m.reassign("c1", 2, "c2", Duration::from_secs(5));
        assert!(!m.has_lease("c1"));
        assert!(!m.expired("c2", Duration::from_secs(6), SOFT_LIMIT));
        // The NameNode's own lease is due at every check.
        assert!(m.expired(NAMENODE_LEASE_HOLDER, Duration::from_secs(6), SOFT_LIMIT));
        let due = m.expired_holders(Duration::from_secs(6), Duration::from_secs(1200));
        assert_eq!(due, vec![(NAMENODE_LEASE_HOLDER.to_string(), vec![1])]);
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
