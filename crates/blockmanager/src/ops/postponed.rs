//! The block manager's operations for `redundancy::postponed` (whose plain types stay there, free of the
//! manager, so that imports point one way).

use crate::block::BlockInfo;
use crate::manager::BlockManager;
use crate::state::BlockState;

impl BlockState {
    /// The first storage holding the block whose contents are stale, if any.
    pub(crate) fn stale_storage_of<'a>(&'a self, info: &'a BlockInfo) -> Option<&'a str> {
        info.replicas
            .iter()
            .map(|r| &**self.map.storage_id_of(r))
            .find(|s| self.recon.freshness.is_stale(s))
    }

    /// Hadoop's postponeBlock: the block's surplus is decided later.
    pub(crate) fn postpone_misreplicated(&mut self, id: u64) {
        if self.recon.postponed.add(id) {
            tracing::debug!(
                block = id,
                "BLOCK* processExtraRedundancyBlock: postponing; a storage of the block has not reported since the NameNode started"
            );
        }
    }
}

impl BlockManager {
    /// Blocks whose excess-replica decision is postponed (metric
    /// PostponedMisreplicatedBlocks).
    pub fn postponed_misreplicated_blocks(&self) -> usize {
        self.blocks.lock("postponed").recon.postponed.len()
    }

    /// The postponed blocks, in id order (metasave).
    pub fn postponed_misreplicated_ids(&self) -> Vec<u64> {
        self.blocks.lock("postponed").recon.postponed.ids()
    }

    /// True when the storage's contents are stale (no full report since the NameNode
    /// started, or since its node was declared dead).
    pub fn storage_contents_stale(&self, storage: &str) -> bool {
        self.blocks
            .lock("postponed")
            .recon
            .freshness
            .is_stale(storage)
    }

    /// Hadoop's rescanPostponedMisreplicatedBlocks: takes up to
    /// `dfs.namenode.blocks.per.postponedblocks.rescan` postponed blocks and processes them
    /// again — blocks gone from the map or no longer over-replicated drop out, blocks still
    /// on a stale storage are postponed again, the others lose their surplus replicas.
    /// Returns the replicas queued for deletion.
    pub fn rescan_postponed_misreplicated(&self) -> usize {
        let started = self.now_mono();
        let (ids, before) = {
            let mut st = self.blocks.lock("postponed_rescan");
            let before = st.recon.postponed.len();
            if before == 0 {
                return 0;
            }
            (
                st.recon.postponed.take(self.cfg.postponed_rescan.max(1)),
                before,
            )
        };
        for chunk in ids.chunks(crate::limits::EXCESS_CHUNK) {
            let mut st = self.blocks.lock("postponed_rescan");
            for &id in chunk {
                // Under-replication is queued as usual (processMisReplicatedBlock).
                st.check_redundancy(id);
            }
        }
        let queued = self.remove_excess(&ids);
        let left = self.postponed_misreplicated_blocks();
        tracing::info!(
            "Rescan of postponedMisreplicatedBlocks completed in {} msecs. {} blocks are left. {} blocks were removed.",
            self.now_mono().saturating_sub(started).as_millis(),
            left,
            before.saturating_sub(left)
        );
        queued
    }
}
