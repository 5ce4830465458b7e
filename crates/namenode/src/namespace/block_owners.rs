//! The file of each block (block id → inode id), dense by block id: one 4-byte slot per
//! block id, where an `IdTable<u64>` slot (`Option<u64>`) takes 16. A slot holds the inode
//! id's distance above [`BASE`], plus one (never zero): inode ids count up from
//! `ROOT_INODE_ID`, so four billion of them fit. The blocks of an inode outside that range,
//! if an edit ever names one, are kept aside with their full id.

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use rhdfs_blockmanager::IdTable;

use crate::fsdir::ROOT_INODE_ID;

/// The lowest inode id a slot holds.
const BASE: u64 = ROOT_INODE_ID;

#[derive(Debug, Default)]
pub(crate) struct BlockOwners {
    slots: IdTable<NonZeroU32>,
    /// Blocks of inodes whose id no slot holds.
    wide: BTreeMap<u64, u64>,
}

/// The slot value of `inode_id`, if it has one.
fn narrow(inode_id: u64) -> Option<NonZeroU32> {
    let d = inode_id.checked_sub(BASE)?.checked_add(1)?;
    NonZeroU32::new(u32::try_from(d).ok()?)
}

impl BlockOwners {
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
    }

    pub(crate) fn get(&self, block_id: u64) -> Option<u64> {
        match self.slots.get(block_id) {
            Some(v) => Some(BASE + u64::from(v.get()) - 1),
            None => self.wide.get(&block_id).copied(),
        }
    }

    pub(crate) fn insert(&mut self, block_id: u64, inode_id: u64) {
        match narrow(inode_id) {
            Some(v) => {
                self.wide.remove(&block_id);
                self.slots.insert(block_id, v);
            }
            None => {
                self.slots.remove(block_id);
                self.wide.insert(block_id, inode_id);
            }
        }
    }

    pub(crate) fn remove(&mut self, block_id: u64) {
        self.slots.remove(block_id);
        self.wide.remove(&block_id);
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len() + self.wide.len()
    }
}

#[cfg(test)]
mod tests {
    use super::BlockOwners;

    #[test]
    fn owners_read_back_including_the_extreme_ids() {
        let mut m = BlockOwners::default();
        assert_eq!(std::mem::size_of::<Option<std::num::NonZeroU32>>(), 4);
        let top = super::BASE + u64::from(u32::MAX) - 1;
        for (b, f) in [
            (1u64 << 30, 16386u64),
            ((1 << 30) + 1, 0),
            ((1 << 30) + 2, u64::MAX),
            ((1 << 30) + 3, super::BASE),
            ((1 << 30) + 4, top),
            ((1 << 30) + 5, top + 1),
            ((1 << 30) + 6, super::BASE - 1),
        ] {
            m.insert(b, f);
            assert_eq!(m.get(b), Some(f));
        }
        assert_eq!(m.len(), 7);
        assert_eq!(
            m.wide.len(),
            4,
            "0, u64::MAX, above and below the slots' range"
        );
        m.insert((1 << 30) + 2, 7);
        assert_eq!(m.get((1 << 30) + 2), Some(7));
        m.insert(1 << 30, u64::MAX);
        assert_eq!((m.get(1 << 30), m.len()), (Some(u64::MAX), 7));
        m.insert(1 << 30, 16390);
        assert_eq!((m.get(1 << 30), m.len()), (Some(16390), 7));
        m.remove(1 << 30);
        assert_eq!((m.get(1 << 30), m.len()), (None, 6));
    }
}
