//! Full block report leases: at most `dfs.namenode.max.full.block.report.leases` DataNodes
//! may send a full report at once; a lease expires after
//! `dfs.namenode.full.block.report.lease.length.ms`. A report carrying a lease id that is not
//! the node's current, unexpired lease is ignored (Hadoop's checkBlockReportLease); id 0 is
//! Hadoop's bypass (DataNodes not using leases, forced reports). A report split over several
//! RPCs applies each storage once: a retried RPC of the same report id is not applied again.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// Why a full report was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseRejection {
    /// The node holds no lease (never granted, released, or expired and purged).
    NoLease,
    /// The node holds a different lease.
    WrongLease { current: u64 },
    /// The lease has expired.
    Expired,
}

/// What the leases did since the NameNode started (counts of report RPCs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeaseStats {
    /// Leases handed out in heartbeat responses.
    pub granted: u64,
    /// Lease requests answered with 0 because every lease was taken.
    pub refused: u64,
    /// Most leases held at the same time.
    pub max_active: usize,
    /// Report RPCs admitted under the sender's lease.
    pub admitted: u64,
    /// Report RPCs admitted without a lease (id 0).
    pub bypassed: u64,
    /// Report RPCs ignored for a lease that was not the sender's current one.
    pub rejected: u64,
}

#[derive(Debug)]
pub struct ReportLeases {
    max: usize,
    length: Duration,
    next_id: u64,
    stats: LeaseStats,
    /// DataNode uuid -> (lease id, expiry on the monotonic clock).
    active: HashMap<String, (u64, Duration)>,
    /// DataNode uuid -> (id of its latest full report, storages of it already applied).
    storages_seen: HashMap<String, (i64, HashSet<String>)>,
}

impl ReportLeases {
    pub fn new(max: usize, length: Duration) -> Self {
        ReportLeases {
            max: max.max(1),
            length,
            next_id: 0,
            stats: LeaseStats::default(),
            active: HashMap::new(),
            storages_seen: HashMap::new(),
        }
    }

    /// Hadoop's checkLease: may a full report with `id` from `dn` be processed now?
    pub fn check(&self, dn: &str, id: u64, now: Duration) -> Result<(), LeaseRejection> {
        if id == 0 {
            return Ok(());
        }
        match self.active.get(dn) {
            None => Err(LeaseRejection::NoLease),
            Some((cur, _)) if *cur != id => Err(LeaseRejection::WrongLease { current: *cur }),
            Some((_, exp)) if *exp <= now => Err(LeaseRejection::Expired),
            Some(_) => Ok(()),
        }
    }

    /// A lease for `dn`, or 0 when all leases are taken. A node holding one gets it again.
    pub fn request(&mut self, dn: &str, now: Duration, seed: u64) -> u64 {
        self.active.retain(|_, (_, exp)| *exp > now);
        if let Some((id, _)) = self.active.get(dn) {
            return *id;
        }
        if self.active.len() >= self.max {
            self.stats.refused += 1;
            return 0;
        }
        if self.next_id == 0 {
            // Start from a random point so ids from an earlier NameNode run are not reused.
            self.next_id = seed | 1;
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        self.active.insert(dn.to_string(), (id, now + self.length));
        self.stats.granted += 1;
        self.stats.max_active = self.stats.max_active.max(self.active.len());
        id
    }

    /// Counts the outcome of one report RPC's lease check.
    pub fn note_check(&mut self, id: u64, outcome: &Result<(), LeaseRejection>) {
        match outcome {
            Ok(()) if id == 0 => self.stats.bypassed += 1,
            Ok(()) => self.stats.admitted += 1,
            Err(_) => self.stats.rejected += 1,
        }
    }

    pub fn stats(&self) -> LeaseStats {
        self.stats
    }

    /// Releases the lease after the last RPC of a full report.
    pub fn release(&mut self, dn: &str) {
        self.active.remove(dn);
    }

    /// True the first time storage `storage` of report `report_id` from `dn` is seen; false
    /// for a repeat (a retried RPC), which must not be applied or counted again.
    pub fn first_sight(&mut self, dn: &str, report_id: i64, storage: &str) -> bool {
        let entry = self
            .storages_seen
            .entry(dn.to_string())
            .or_insert_with(|| (report_id, HashSet::new()));
        if entry.0 != report_id {
            *entry = (report_id, HashSet::new());
        }
        entry.1.insert(storage.to_string())
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
        let s = l.stats();
        assert_eq!((s.granted, s.refused, s.max_active), (4, 1, 2));
        l.note_check(0, &Ok(()));
        l.note_check(a, &Ok(()));
        l.note_check(a, &Err(LeaseRejection::NoLease));
        let s = l.stats();
        assert_eq!((s.bypassed, s.admitted, s.rejected), (1, 1, 1));
    }

    #[test]
    fn check_follows_hadoop() {
        let mut l = ReportLeases::new(1, Duration::from_secs(10));
        let t = Duration::from_secs(1);
        assert_eq!(l.check("a", 0, t), Ok(()), "id 0 bypasses");
        assert_eq!(l.check("a", 5, t), Err(LeaseRejection::NoLease));
        let a = l.request("a", t, 40);
        assert_eq!(l.check("a", a, t), Ok(()));
        assert_eq!(
            l.check("a", a + 1, t),
            Err(LeaseRejection::WrongLease { current: a })
        );
        assert_eq!(
            l.check("a", a, t + Duration::from_secs(10)),
            Err(LeaseRejection::Expired)
        );
        l.release("a");
        assert_eq!(l.check("a", a, t), Err(LeaseRejection::NoLease));
    }

    #[test]
    fn each_storage_once_per_report() {
        let mut l = ReportLeases::new(1, Duration::from_secs(10));
        assert!(l.first_sight("a", 7, "s1"));
        assert!(l.first_sight("a", 7, "s2"));
        assert!(!l.first_sight("a", 7, "s1"), "retried RPC");
        assert!(l.first_sight("b", 7, "s1"), "other node");
        assert!(l.first_sight("a", 8, "s1"), "next report");
    }
}
