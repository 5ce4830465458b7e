//! Postponed mis-replicated blocks (Hadoop's postponedMisreplicatedBlocks): the surplus
//! replica of an over-replicated block is not chosen while any storage holding the block
//! has "stale" contents — a storage that has not sent a full block report since the
//! NameNode started (or since its DataNode was declared dead) may already have deleted
//! replicas the blocks map still lists, so deleting another one could lose data. Such
//! blocks wait in this set; the RedundancyMonitor rescans up to
//! `dfs.namenode.blocks.per.postponedblocks.rescan` of them per pass and processes those
//! whose storages have all reported since. Deleting a block drops it from the set.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use crate::block::BlockInfo;
use crate::manager::BlockManager;
use crate::state::BlockState;

/// The postponed blocks, handed out round robin for rescans.
#[derive(Debug, Default)]
pub struct PostponedBlocks {
    ids: BTreeSet<u64>,
    /// The next block id a rescan starts from.
    cursor: u64,
}

impl PostponedBlocks {
    /// Adds a block; false if it was already postponed.
    pub fn add(&mut self, id: u64) -> bool {
        self.ids.insert(id)
    }

    pub fn remove(&mut self, id: u64) -> bool {
        self.ids.remove(&id)
    }

    pub fn contains(&self, id: u64) -> bool {
        self.ids.contains(&id)
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Every postponed block, in id order.
    pub fn ids(&self) -> Vec<u64> {
        self.ids.iter().copied().collect()
    }

    /// Takes up to `n` blocks out of the set, continuing after the last block the previous
    /// call took (so blocks that stay postponed do not starve the others).
    pub fn take(&mut self, n: usize) -> Vec<u64> {
        let mut out: Vec<u64> = self.ids.range(self.cursor..).take(n).copied().collect();
        if out.len() < n {
            let more: Vec<u64> = self
                .ids
                .range(..self.cursor)
                .take(n - out.len())
                .copied()
                .collect();
            out.extend(more);
        }
        if let Some(last) = out.last() {
            self.cursor = last.wrapping_add(1);
        }
        for id in &out {
            self.ids.remove(id);
        }
        out
    }
}

/// Which storages' contents are known to be current: those that sent a full block report
/// since the NameNode started (Hadoop's DatanodeStorageInfo.blockContentsStale, which
/// starts true and is cleared by the storage's block report). A storage never reported
/// — every storage after a NameNode restart, until its DataNode's first report — is stale.
#[derive(Debug, Default)]
pub struct StorageFreshness {
    reported: HashSet<Arc<str>>,
}

impl StorageFreshness {
    pub fn is_stale(&self, storage: &str) -> bool {
        !self.reported.contains(storage)
    }

    /// A full block report of `storage` was processed.
    pub fn report_processed(&mut self, storage: &str) {
        if !self.reported.contains(storage) {
            self.reported.insert(Arc::from(storage));
        }
    }

    /// The storage's contents are unknown again (its node died, or the storage failed).
    pub fn forget(&mut self, storage: &str) {
        self.reported.remove(storage);
    }

    /// Storages that are current.
    pub fn reported(&self) -> usize {
        self.reported.len()
    }
}

impl BlockState {
    /// The first storage holding the block whose contents are stale, if any.
    pub(crate) fn stale_storage_of<'a>(&self, info: &'a BlockInfo) -> Option<&'a str> {
        info.replicas
            .iter()
            .map(|r| &*r.storage_id)
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
        for chunk in ids.chunks(super::excess::EXCESS_CHUNK) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_round_robins_and_removes() {
        let mut p = PostponedBlocks::default();
        for id in [5, 1, 9, 3] {
            assert!(p.add(id));
        }
        assert!(!p.add(3));
        assert_eq!(p.take(2), vec![1, 3]);
        assert_eq!(p.len(), 2);
        // Still postponed: put back; the next rescan starts after 3.
        p.add(1);
        p.add(3);
        assert_eq!(p.take(3), vec![5, 9, 1]);
        assert_eq!(p.ids(), vec![3]);
        assert!(p.remove(3));
        assert!(p.is_empty());
        assert!(p.take(10).is_empty());
    }

    #[test]
    fn storages_are_stale_until_reported() {
        let mut f = StorageFreshness::default();
        assert!(f.is_stale("DS-1"));
        f.report_processed("DS-1");
        f.report_processed("DS-1");
        assert!(!f.is_stale("DS-1"));
        assert_eq!(f.reported(), 1);
        f.forget("DS-1");
        assert!(f.is_stale("DS-1"));
    }
}
