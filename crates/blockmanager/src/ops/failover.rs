//! The block manager of an HA NameNode (issue 14).
//!
//! A standby learns blocks from the active's edits, a moment after the DataNodes that write
//! them report their replicas to every NameNode: such a report finds no block and its replica
//! is held as one from the future (its stamp is above the namespace's); when the edit adding
//! the block is applied the held replicas join it ([`BlockState::adopt_held`]), as Hadoop's
//! standby replays its queued DataNode messages.
//!
//! A standby computes no work (its block manager stays in safe mode), but its reports and
//! edits may still have queued deletions. On becoming active ([`BlockManager::become_active`])
//! those are dropped — they were decided on a view the old active may have changed since —
//! and every storage is stale again, so no surplus replica is deleted before its DataNode's
//! next full report (Hadoop's failover does the same: `clearQueues` and stale storages).

use crate::manager::BlockManager;
use crate::report::ReportedReplica;
use crate::state::BlockState;

/// What becoming active dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FailoverSummary {
    /// Replicas queued for deletion, and handed out to heartbeats, that were dropped.
    pub dropped_deletions: usize,
}

impl BlockState {
    /// Held replicas of block `id` (now known) become its replicas.
    pub(crate) fn adopt_held(&mut self, id: u64) {
        for held in self.orphans.take_block(id) {
            let r = ReportedReplica {
                block: held.block,
                state: held.state,
            };
            self.process_replica(&held.dn_uuid, &held.storage_id, &r);
        }
    }
}

impl BlockManager {
    /// This NameNode became the active one: see the module docs.
    pub fn become_active(&self) -> FailoverSummary {
        let mut st = self.blocks.lock("become_active");
        let dropped = st.invalidate.clear() + st.pending.clear();
        st.deleting.clear();
        st.recon.freshness = Default::default();
        FailoverSummary {
            dropped_deletions: dropped,
        }
    }
}
