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
