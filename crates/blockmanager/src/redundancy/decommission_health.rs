//! Why a decommission is not finishing, said where an operator looks:
//!
//! - a dead node in Decommission In Progress stays there while any block of the cluster is
//!   low on replicas or has copies pending (Hadoop's isNodeHealthyForDecommissionOrMaintenance,
//!   with its WARN line);
//! - a node whose blocks need more in-service replicas than there are live in-service
//!   DataNodes can never finish (rhdfs's own check): a WARN line per check interval and a
//!   note shown by `dfsadmin -report` (DatanodeInfoProto.rhdfs_admin_note) and fsck.

use std::sync::Arc;

use crate::datanodes::Liveness;
use crate::manager::BlockManager;

impl BlockManager {
    /// Hadoop's check before a decommissioning node with no insufficient blocks becomes
    /// Decommissioned: a dead node may go only when no block anywhere is low on replicas or
    /// waiting for copies. Returns the warning when it may not.
    pub(crate) fn dead_node_blocks_decommission(&self, uuid: &str) -> Option<String> {
        let now = self.now_mono();
        let (addr, dead) = {
            let dns = self.datanodes.lock("decommission_health");
            let d = dns.get(uuid)?;
            (
                d.id.xfer_addr(),
                d.dead || dns.liveness_of(d, now) == Liveness::Dead,
            )
        };
        if !dead {
            return None;
        }
        let (low, pending) = {
            let st = self.blocks.lock("decommission_health");
            (st.recon.needed_len(), st.recon.pending_blocks())
        };
        if low == 0 && pending == 0 {
            tracing::info!(
                "Node {addr} is dead and there are no low redundancy blocks or blocks pending \
                 reconstruction. Safe to decommission or put in maintenance."
            );
            return None;
        }
        Some(format!(
            "Node {addr} is dead while in Decommission In Progress. Cannot be safely \
             decommissioned or be in maintenance since there is risk of reduced data \
             durability or data loss. Either restart the failed node or force decommissioning \
             or maintenance by removing, calling refreshNodes, then re-adding to the excludes \
             or host config files."
        ))
    }

    /// The note for a decommissioning node whose insufficient blocks (`short`) cannot all get
    /// their replicas: some need more than the live in-service DataNodes can hold.
    pub(crate) fn unreachable_decommission(&self, uuid: &str, short: &[u64]) -> Option<String> {
        if short.is_empty() {
            return None;
        }
        let now = self.now_mono();
        let (addr, in_service) = {
            let dns = self.datanodes.lock("decommission_health");
            let addr = dns.get(uuid)?.id.xfer_addr();
            let n = dns
                .live(now)
                .into_iter()
                .filter(|d| !d.admin.is_out_of_service())
                .count();
            (addr, n)
        };
        let (stuck, need) = {
            let st = self.blocks.lock("decommission_health");
            short
                .iter()
                .filter_map(|id| st.map.get(*id))
                .map(|i| usize::from(i.replication).max(1))
                .filter(|r| *r > in_service)
                .fold((0usize, 0usize), |(n, m), r| (n + 1, m.max(r)))
        };
        if stuck == 0 {
            return None;
        }
        let exclude = self.cfg.admin.hosts_exclude.as_ref().map_or_else(
            || "dfs.hosts.exclude".to_string(),
            |p| p.display().to_string(),
        );
        Some(format!(
            "Decommission of {addr} cannot complete: {stuck} block(s) need up to {need} \
             replicas on in-service DataNodes but only {in_service} in-service DataNode(s) are \
             live. Add DataNodes, lower the replication of the affected files \
             (dfs -setrep), or return the node to service (remove it from {exclude} and run \
             dfsadmin -refreshNodes)."
        ))
    }

    /// Records (or clears) the note `dfsadmin -report` and fsck show for a node.
    pub(crate) fn set_decommission_note(&self, uuid: &Arc<str>, note: Option<String>) {
        let mut st = self.blocks.lock("decommission_health");
        match note {
            Some(n) => {
                st.admin.notes.insert(uuid.clone(), n);
            }
            None => {
                st.admin.notes.remove(uuid);
            }
        }
    }

    /// The note on a decommissioning node, if its decommission is stuck.
    pub fn decommission_note(&self, uuid: &str) -> Option<String> {
        self.blocks
            .lock("decommission_note")
            .admin
            .notes
            .get(uuid)
            .cloned()
    }

    /// Every note on a stuck decommission (for fsck), sorted.
    pub fn decommission_notes(&self) -> Vec<String> {
        let st = self.blocks.lock("decommission_notes");
        let mut v: Vec<String> = st.admin.notes.values().cloned().collect();
        v.sort();
        v
    }
}
