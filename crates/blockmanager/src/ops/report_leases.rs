//! The block manager's operations for `report_leases` (whose plain types stay there, free of the
//! manager, so that imports point one way).

use crate::manager::BlockManager;
use crate::report_leases::{LeaseRejection, LeaseStats};

impl BlockManager {
    /// Checks a full report's lease (Hadoop's checkBlockReportLease); `Err` means the report
    /// is ignored, and the DataNode asks for a lease again with a later heartbeat.
    pub fn check_report_lease(&self, dn: &str, lease_id: u64) -> Result<(), LeaseRejection> {
        let now = self.now_mono();
        let mut leases = self.leases.lock();
        let outcome = leases.check(dn, lease_id, now);
        leases.note_check(lease_id, &outcome);
        outcome
    }

    /// Leases granted, most held at once, and report RPCs admitted / bypassing / ignored.
    pub fn report_lease_stats(&self) -> LeaseStats {
        self.leases.lock().stats()
    }

    /// Whether this storage of full report `report_id` is new (see `ReportLeases::first_sight`).
    pub fn first_sight_of_storage(&self, dn: &str, report_id: i64, storage: &str) -> bool {
        self.leases.lock().first_sight(dn, report_id, storage)
    }

    /// Leases currently held.
    pub fn active_report_leases(&self) -> usize {
        self.leases.lock().active()
    }
}
