//! DataNode volume failures as the NameNode sees them (Hadoop's DatanodeDescriptor
//! updateHeartbeatState / updateFailedStorage, HeartbeatManager's totals and
//! NameNodeRpcServer.errorReport): each heartbeat's failed volume count and
//! VolumeFailureSummary are kept per node; when the count grows, the node's storages missing
//! from that heartbeat are marked failed and their replicas leave the blocks map (so the
//! blocks are re-replicated from other nodes); a FATAL_DISK_ERROR report removes the node
//! as a dead one.

use std::sync::Arc;

use rhdfs_proto::datanode::VolumeFailureSummaryProto;
use rhdfs_proto::hdfs::DatanodeInfoProto;

use crate::datanodes::{DatanodeDescriptor, DatanodeManager};
use crate::manager::BlockManager;

/// A node's failed volumes, from its heartbeat.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VolumeFailureSummary {
    pub failed_storage_locations: Vec<String>,
    /// Wall-clock ms of the last failure.
    pub last_volume_failure_date: u64,
    pub estimated_capacity_lost_total: u64,
}

impl From<&VolumeFailureSummaryProto> for VolumeFailureSummary {
    fn from(p: &VolumeFailureSummaryProto) -> Self {
        VolumeFailureSummary {
            failed_storage_locations: p.failed_storage_locations.clone(),
            last_volume_failure_date: p.last_volume_failure_date,
            estimated_capacity_lost_total: p.estimated_capacity_lost_total,
        }
    }
}

/// ErrorReportRequestProto codes (DatanodeProtocol).
pub const ERROR_NOTIFY: u32 = 0;
pub const ERROR_DISK: u32 = 1;
pub const ERROR_INVALID_BLOCK: u32 = 2;
pub const ERROR_FATAL_DISK: u32 = 3;

impl DatanodeManager {
    /// Records a heartbeat's failed volume count and summary. When the count grew, every
    /// storage of the node not in `reported` is marked failed; returns those storage IDs.
    pub fn record_volume_failures(
        &mut self,
        uuid: &str,
        reported: &[String],
        failures: u32,
        summary: Option<VolumeFailureSummary>,
    ) -> Vec<String> {
        let Some(d) = self.get_mut(uuid) else {
            return Vec::new();
        };
        let grew = failures > d.volume_failures;
        d.volume_failures = failures;
        d.volume_failure_summary = summary;
        if !grew {
            return Vec::new();
        }
        let mut out = Vec::new();
        for s in d.storages.iter_mut() {
            if !s.failed && !reported.contains(&s.storage_id) {
                s.failed = true;
                out.push(s.storage_id.clone());
            }
        }
        out
    }
}

impl BlockManager {
    /// Drops the replicas of storages a heartbeat showed failed.
    pub(crate) fn drop_failed_storages(&self, uuid: &str, failed: &[String]) {
        for storage in failed {
            if self
                .blocks
                .lock("heartbeat")
                .map
                .storage_block_count(storage)
                > 0
            {
                tracing::warn!(dn = uuid, storage = %storage, "storage failed; dropping its replicas");
                self.forget_storage(storage);
            }
        }
    }

    /// errorReport from a DataNode, as Hadoop's NameNode takes it: logged, and on
    /// FATAL_DISK_ERROR the node is removed (declared dead: its replicas leave the map).
    pub fn error_report(&self, uuid: &str, name: &str, code: u32, msg: &str) {
        match code {
            ERROR_NOTIFY => tracing::info!("Error report from {name}: {msg}"),
            ERROR_DISK => tracing::warn!("Disk error on {name}: {msg}"),
            ERROR_FATAL_DISK => {
                tracing::warn!("Fatal disk error on {name}: {msg}");
                let dead: Vec<Arc<str>> = {
                    let mut dns = self.datanodes.lock("error_report");
                    let Some(d) = dns.get(uuid) else {
                        return;
                    };
                    let id = d.uuid.clone();
                    dns.mark_dead(std::slice::from_ref(&id));
                    vec![id]
                };
                self.remove_dead_nodes(&dead);
            }
            _ => tracing::info!("Error report from {name}: {msg}"),
        }
    }
}

/// `info` with the node's failed volumes (rhdfs's DatanodeInfoProto fields 1002-1005),
/// for datanode reports.
pub fn with_volume_failures(
    mut info: DatanodeInfoProto,
    d: &DatanodeDescriptor,
) -> DatanodeInfoProto {
    if d.volume_failures > 0 {
        info.rhdfs_volume_failures = Some(d.volume_failures);
    }
    if let Some(s) = &d.volume_failure_summary {
        info.rhdfs_failed_storage_locations = s.failed_storage_locations.clone();
        info.rhdfs_last_volume_failure_date = Some(s.last_volume_failure_date);
        info.rhdfs_estimated_capacity_lost = Some(s.estimated_capacity_lost_total);
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datanodes::{DatanodeId, LivenessConfig, StorageReport};
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
