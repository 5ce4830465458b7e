//! A standby's block map following a namespace replaced by an installed image (HA: a member
//! whose Raft log fell behind the others' snapshots takes the active's image instead of the
//! edits it missed).
//!
//! Blocks the image does not have leave through the delete path (their replicas queued for
//! deletion as any removed block's; a standby sends none, and becoming active drops them);
//! blocks it adds come in as a restart loads them, with the replicas already reported for
//! them (held while they were unknown); blocks in both take the image's length, stamp,
//! state and replication and keep their replicas. Bounded holds: `RELOAD_BATCH` blocks each.

use crate::block::{Block, BlockUcState};
use crate::manager::BlockManager;

/// Blocks updated or added under one hold of the blocks lock.
const RELOAD_BATCH: usize = 10_000;

/// A block as the installed image has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReloadedBlock {
    pub block: Block,
    pub replication: u16,
    pub state: BlockUcState,
}

/// What a reload changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReloadSummary {
    pub removed: usize,
    pub added: usize,
    pub updated: usize,
}

/// The ids of `old` (sorted) that are not in `new` (sorted).
fn missing_from(old: &[u64], new: &[u64]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut j = 0;
    for &id in old {
        while j < new.len() && new[j] < id {
            j += 1;
        }
        if new.get(j) != Some(&id) {
            out.push(id);
        }
    }
    out
}

impl BlockManager {
    /// Makes the blocks map hold exactly `blocks`: see the module docs.
    pub fn reload_blocks(&self, mut blocks: Vec<ReloadedBlock>) -> ReloadSummary {
        blocks.sort_unstable_by_key(|b| b.block.id);
        let mut old = self.blocks.lock("reload_ids").map.ids();
        old.sort_unstable();
        let new: Vec<u64> = blocks.iter().map(|b| b.block.id).collect();
        let removed = missing_from(&old, &new);
        drop((old, new));
        self.remove_blocks_now(&removed);
        let mut summary = ReloadSummary {
            removed: removed.len(),
            ..ReloadSummary::default()
        };
        for chunk in blocks.chunks(RELOAD_BATCH) {
            let mut st = self.blocks.lock("reload_blocks");
            for b in chunk {
                let id = b.block.id;
                let known = match st.map.get_mut(id) {
                    Some(mut info) => {
                        if info.block(id) != b.block {
                            info.set_block(b.block);
                        }
                        if info.state != b.state && b.state == BlockUcState::Complete {
                            info.clear_expected();
                        }
                        info.state = b.state;
                        info.replication = b.replication;
                        true
                    }
                    None => false,
                };
                if known {
                    st.check_redundancy(id);
                    summary.updated += 1;
                } else {
                    st.load_block(b.block, b.replication, b.state);
                    st.adopt_held(id);
                    summary.added += 1;
                }
            }
        }
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::missing_from;

    #[test]
    fn ids_missing_from_the_new_set() {
        assert_eq!(missing_from(&[1, 2, 3, 7, 9], &[2, 3, 4, 9]), vec![1, 7]);
        assert_eq!(missing_from(&[], &[1]), Vec::<u64>::new());
        assert_eq!(missing_from(&[5, 6], &[]), vec![5, 6]);
    }
}
