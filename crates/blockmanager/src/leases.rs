//! Full block report leases: at most `dfs.namenode.max.full.block.report.leases` DataNodes
//! may send a full report at once; a lease expires after
//! `dfs.namenode.full.block.report.lease.length.ms`.

use std::collections::HashMap;
use std::time::Duration;

#[derive(Debug)]
pub struct ReportLeases {
    max: usize,
    length: Duration,
    next_id: u64,
    /// DataNode uuid -> (lease id, expiry on the monotonic clock).
    active: HashMap<String, (u64, Duration)>,
}

impl ReportLeases {
    pub fn new(max: usize, length: Duration) -> Self {
        ReportLeases {
            max: max.max(1),
            length,
            next_id: 0,
            active: HashMap::new(),
        }
    }

    /// A lease for `dn`, or 0 when all leases are taken. A node holding one gets it again.
    pub fn request(&mut self, dn: &str, now: Duration, seed: u64) -> u64 {
        self.active.retain(|_, (_, exp)| *exp > now);
        if let Some((id, _)) = self.active.get(dn) {
            return *id;
        }
        if self.active.len() >= self.max {
            return 0;
        }
        if self.next_id == 0 {
            // Start from a random point so ids from an earlier NameNode run are not reused.
            self.next_id = seed | 1;
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        self.active.insert(dn.to_string(), (id, now + self.length));
        id
    }

    /// Releases the lease after the last RPC of a full report.
    pub fn release(&mut self, dn: &str) {
        self.active.remove(dn);
    }

    pub fn active(&self) -> usize {
        self.active.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_expiring() {
        let mut l = ReportLeases::new(2, Duration::from_secs(10));
        let t = Duration::from_secs(1);
        let a = l.request("a", t, 40);
        assert_ne!(a, 0);
        assert_eq!(l.request("a", t, 40), a);
        assert_ne!(l.request("b", t, 40), 0);
        assert_eq!(l.request("c", t, 40), 0);
        l.release("a");
        assert_ne!(l.request("c", t, 40), 0);
        // everything expires
        assert_ne!(l.request("d", t + Duration::from_secs(20), 40), 0);
        assert_eq!(l.active(), 1);
    }
}
