//! The block manager's operations for `volume_failures` (whose plain types stay there, free of the
//! manager, so that imports point one way).

use crate::datanodes::DatanodeManager;
use crate::manager::BlockManager;
use crate::volume_failures::{ERROR_DISK, ERROR_FATAL_DISK, ERROR_NOTIFY, VolumeFailureSummary};
use std::sync::Arc;

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
