//! The block manager's operations for `redundancy::racks` (whose plain types stay there, free of the
//! manager, so that imports point one way).

use crate::block::BlockInfo;
use crate::limits::RACK_RECHECK_CHUNK;
use crate::manager::BlockManager;
use crate::state::BlockState;
use std::sync::Arc;

impl BlockState {
    /// Nodes whose replica of the block counts for rack spread: not corrupt, on nodes in
    /// service (Hadoop leaves out decommissioning, decommissioned and corrupt replicas).
    pub(crate) fn placement_holders<'a>(&'a self, info: &'a BlockInfo) -> Vec<&'a str> {
        info.replicas
            .iter()
            .map(|r| (r, &**self.map.dn_of(r)))
            .filter(|(r, dn)| r.corrupt().is_none() && !self.admin.state(dn).is_out_of_service())
            .map(|(_, dn)| dn)
            .collect()
    }

    /// True when a COMPLETE block has enough live replicas but not on enough racks, and no
    /// copy is already on its way (Hadoop's hasEnoughEffectiveReplicas: pending copies
    /// count as satisfying the placement).
    pub(crate) fn is_badly_distributed(&self, id: u64, info: &BlockInfo, live: usize) -> bool {
        let expected = usize::from(info.replication).max(1);
        live >= expected
            && self.recon.racks.ever_multi_rack()
            && self.recon.pending_count(id) == 0
            && !self
                .recon
                .racks
                .satisfied(&self.placement_holders(info), expected)
    }
}

impl BlockManager {
    /// Copies each live DataNode's rack into the blocks lock's `RackMap`. When the cluster
    /// becomes multi-rack for the first time every block is checked again; otherwise the
    /// blocks of nodes that are new or changed rack are. Returns the blocks re-checked.
    pub fn refresh_rack_map(&self) -> usize {
        let now = self.now_mono();
        let views = self.datanodes.lock("rack_map").placement_view(now);
        // Resolved outside every lock (a mapping may run a script).
        let racks = self.placement.racks_of(&views);
        let nodes: Vec<(Arc<str>, String)> = views
            .iter()
            .zip(racks)
            .map(|(v, r)| (Arc::from(v.uuid.as_str()), r))
            .collect();
        let ids = {
            let mut st = self.blocks.lock("rack_map");
            let change = st.recon.racks.update(nodes);
            if change.became_multi_rack {
                tracing::info!(
                    racks = st.recon.racks.num_racks(),
                    "the cluster is now multi-rack; checking the placement of every block"
                );
                drop(st);
                return self.recheck_every_block();
            } else if st.recon.racks.ever_multi_rack() {
                let mut ids: Vec<u64> = change
                    .moved
                    .iter()
                    .flat_map(|dn| st.blocks_of_node(dn))
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                ids
            } else {
                Vec::new()
            }
        };
        for chunk in ids.chunks(RACK_RECHECK_CHUNK) {
            let mut st = self.blocks.lock("rack_map");
            for &id in chunk {
                st.check_redundancy(id);
            }
        }
        ids.len()
    }

    /// `check_redundancy` of every block, walking the map in holds of RACK_RECHECK_CHUNK
    /// blocks (no list of every id). Nothing to do while the replication queues wait for
    /// their first scan (`ops::repl_queues`), which checks every block itself.
    fn recheck_every_block(&self) -> usize {
        let mut after = None;
        let mut n = 0;
        loop {
            let mut st = self.blocks.lock("rack_map");
            if !st.populating {
                return n;
            }
            let ids = st.map.ids_after(after, RACK_RECHECK_CHUNK);
            let Some(&last) = ids.last() else {
                return n;
            };
            after = Some(last);
            n += ids.len();
            for id in ids {
                st.check_redundancy(id);
            }
        }
    }

    /// Blocks in the QUEUE_REPLICAS_BADLY_DISTRIBUTED queue (enough replicas, too few racks).
    pub fn badly_distributed_blocks(&self) -> usize {
        self.low_redundancy_queue_sizes()
            [crate::redundancy::low_redundancy::QUEUE_REPLICAS_BADLY_DISTRIBUTED]
    }
}
