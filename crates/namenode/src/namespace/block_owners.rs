//! The file of each block (block id → inode id), dense by block id: one 8-byte slot per
//! block id, where an `IdTable<u64>` slot (`Option<u64>`) takes 16. A slot holds the
//! complement of the inode id, never zero for any id but `u64::MAX` (never handed out:
//! inode ids count up from `ROOT_INODE_ID`), whose blocks, if an edit ever names it, are
//! kept aside.

use std::collections::BTreeSet;
use std::num::NonZeroU64;

use rhdfs_blockmanager::IdTable;

#[derive(Debug, Default)]
pub(crate) struct BlockOwners {
    slots: IdTable<NonZeroU64>,
    /// Blocks of the inode whose id is `u64::MAX`.
    of_max_id: BTreeSet<u64>,
}

impl BlockOwners {
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
    }

    pub(crate) fn get(&self, block_id: u64) -> Option<u64> {
        match self.slots.get(block_id) {
            Some(v) => Some(!v.get()),
            None => self.of_max_id.contains(&block_id).then_some(u64::MAX),
        }
    }

    pub(crate) fn insert(&mut self, block_id: u64, inode_id: u64) {
        match NonZeroU64::new(!inode_id) {
            Some(v) => {
                self.of_max_id.remove(&block_id);
                self.slots.insert(block_id, v);
            }
            None => {
                self.slots.remove(block_id);
                self.of_max_id.insert(block_id);
            }
        }
    }

    pub(crate) fn remove(&mut self, block_id: u64) {
        self.slots.remove(block_id);
        self.of_max_id.remove(&block_id);
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len() + self.of_max_id.len()
    }
}

#[cfg(test)]
mod tests {
    use super::BlockOwners;

    #[test]
    fn owners_read_back_including_the_extreme_ids() {
        let mut m = BlockOwners::default();
        assert_eq!(std::mem::size_of::<Option<std::num::NonZeroU64>>(), 8);
        for (b, f) in [
            (1u64 << 30, 16386u64),
            ((1 << 30) + 1, 0),
            ((1 << 30) + 2, u64::MAX),
        ] {
            m.insert(b, f);
            assert_eq!(m.get(b), Some(f));
        }
        assert_eq!(m.len(), 3);
        m.insert((1 << 30) + 2, 7);
        assert_eq!(m.get((1 << 30) + 2), Some(7));
        m.insert(1 << 30, u64::MAX);
        assert_eq!((m.get(1 << 30), m.len()), (Some(u64::MAX), 3));
        m.remove(1 << 30);
        assert_eq!((m.get(1 << 30), m.len()), (None, 2));
    }
}
