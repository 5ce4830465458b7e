//! DataNode volume failures as the NameNode sees them (Hadoop's DatanodeDescriptor
//! updateHeartbeatState / updateFailedStorage, HeartbeatManager's totals and
//! NameNodeRpcServer.errorReport): each heartbeat's failed volume count and
//! VolumeFailureSummary are kept per node; when the count grows, the node's storages missing
//! from that heartbeat are marked failed and their replicas leave the blocks map (so the
//! blocks are re-replicated from other nodes); a FATAL_DISK_ERROR report removes the node
//! as a dead one.

/// A node's failed volumes, from its heartbeat.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VolumeFailureSummary {
    pub failed_storage_locations: Vec<String>,
    /// Wall-clock ms of the last failure.
    pub last_volume_failure_date: u64,
    pub estimated_capacity_lost_total: u64,
}

/// ErrorReportRequestProto codes (DatanodeProtocol).
pub const ERROR_NOTIFY: u32 = 0;
pub const ERROR_DISK: u32 = 1;
pub const ERROR_INVALID_BLOCK: u32 = 2;
pub const ERROR_FATAL_DISK: u32 = 3;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datanodes::{DatanodeId, DatanodeManager, LivenessConfig, StorageReport};
    use std::time::Duration;

    fn node() -> DatanodeManager {
        let mut m = DatanodeManager::new(LivenessConfig::from_intervals(
            Duration::from_secs(3),
            Duration::from_secs(300),
            Duration::from_secs(30),
            3,
        ));
        let id = DatanodeId {
            uuid: "u1".into(),
            ip_addr: "127.0.0.1".into(),
            xfer_port: 1,
            ..Default::default()
        };
        m.register(id, "3", "/default-rack", 0, Duration::ZERO)
            .unwrap_or_else(|e| panic!("register: {e}"));
        m
    }

    fn report(id: &str) -> StorageReport {
        StorageReport {
            storage_id: id.into(),
            storage_type: 1,
            capacity: 100,
            ..Default::default()
        }
    }

    #[test]
    fn a_grown_failure_count_fails_the_storages_left_out() {
        let mut m = node();
        let both = vec![report("DS-a"), report("DS-b")];
        assert!(m.heartbeat("u1", both, 0, 0, 1, Duration::from_secs(1)));
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(
            m.record_volume_failures("u1", &ids(&["DS-a", "DS-b"]), 0, None)
                .is_empty()
        );
        assert!(m.heartbeat("u1", vec![report("DS-a")], 0, 0, 2, Duration::from_secs(2)));
        let summary = VolumeFailureSummary {
            failed_storage_locations: vec!["/d/2".into()],
            last_volume_failure_date: 2,
            estimated_capacity_lost_total: 100,
        };
        let failed = m.record_volume_failures("u1", &ids(&["DS-a"]), 1, Some(summary.clone()));
        assert_eq!(failed, vec!["DS-b".to_string()]);
        // The same count again changes nothing.
        assert!(
            m.record_volume_failures("u1", &ids(&["DS-a"]), 1, Some(summary))
                .is_empty()
        );
        let d = m.get("u1").unwrap_or_else(|| panic!("registered"));
        assert_eq!(d.volume_failures, 1);
        assert_eq!(
            d.volume_failure_summary
                .as_ref()
                .map(|s| s.estimated_capacity_lost_total),
            Some(100)
        );
        // The failed storage no longer counts.
        assert_eq!(d.capacity(), 100);
    }
}
