//! Hadoop's LowRedundancyBlocks: blocks with fewer usable replicas than expected, in five
//! priority queues. The RedundancyMonitor takes work from the highest priority first and,
//! within a priority, continues where the previous pass stopped.

use crate::block_set::BlockSet;
use crate::id_hash::IdHashMap;

/// One replica left, or every replica on a node being decommissioned.
pub const QUEUE_HIGHEST_PRIORITY: usize = 0;
/// Fewer than a third of the expected replicas.
pub const QUEUE_VERY_LOW_REDUNDANCY: usize = 1;
/// Low redundancy, but not as bad as the two above.
pub const QUEUE_LOW_REDUNDANCY: usize = 2;
/// Enough replicas, but not spread over enough racks.
pub const QUEUE_REPLICAS_BADLY_DISTRIBUTED: usize = 3;
/// No usable replica at all (only corrupt ones, or none: missing).
pub const QUEUE_WITH_CORRUPT_BLOCKS: usize = 4;
/// Number of queues.
pub const LEVEL: usize = 5;

/// Replica counts of one block, as the redundancy rules see them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NumberReplicas {
    /// Good finalized replicas of the current generation stamp on in-service nodes.
    pub live: usize,
    /// Good replicas on nodes being decommissioned (usable as sources, not counted as live).
    pub decommissioning: usize,
    /// Good replicas on decommissioned nodes.
    pub decommissioned: usize,
    pub corrupt: usize,
}

impl NumberReplicas {
    /// Replicas that can still be read (and copied).
    pub fn usable(&self) -> usize {
        self.live + self.decommissioning + self.decommissioned
    }

    pub fn out_of_service(&self) -> usize {
        self.decommissioning + self.decommissioned
    }
}

/// The queue of a block with `n` replicas and `expected` wanted, or None when it has
/// enough. `badly_distributed`: its replicas need more racks.
pub fn priority(n: NumberReplicas, expected: usize, badly_distributed: bool) -> Option<usize> {
    let expected = expected.max(1);
    if n.live >= expected {
        return badly_distributed.then_some(QUEUE_REPLICAS_BADLY_DISTRIBUTED);
    }
    Some(if n.live == 0 {
        if n.out_of_service() > 0 {
            QUEUE_HIGHEST_PRIORITY
        } else {
            QUEUE_WITH_CORRUPT_BLOCKS
        }
    } else if n.live == 1 {
        QUEUE_HIGHEST_PRIORITY
    } else if n.live * 3 < expected {
        QUEUE_VERY_LOW_REDUNDANCY
    } else {
        QUEUE_LOW_REDUNDANCY
    })
}

#[derive(Debug, Default)]
pub struct LowRedundancyBlocks {
    /// Each queue's blocks in id order (`BlockSet`: about 2 bytes a block in a dense
    /// range, and an insert or removal without the node allocations of a `BTreeSet`).
    queues: [BlockSet; LEVEL],
    /// Each queued block's queue (hashed by `IdHasher`: one update per reported replica).
    priority_of: IdHashMap<usize>,
    /// Per queue: the next block id to hand out (round robin within the queue).
    bookmarks: [u64; LEVEL],
}

impl LowRedundancyBlocks {
    /// Puts `id` in queue `prio`, moving it from any other queue.
    pub fn update(&mut self, id: u64, prio: usize) {
        let prio = prio.min(LEVEL - 1);
        match self.priority_of.insert(id, prio) {
            // Already in that queue.
            Some(old) if old == prio => {}
            Some(old) => {
                self.queues[old].remove(id);
                self.queues[prio].insert(id);
            }
            None => {
                self.queues[prio].insert(id);
            }
        }
    }

    pub fn remove(&mut self, id: u64) -> bool {
        match self.priority_of.remove(&id) {
            Some(p) => self.queues[p].remove(id),
            None => false,
        }
    }

    pub fn contains(&self, id: u64) -> bool {
        self.priority_of.contains_key(&id)
    }

    pub fn priority_of(&self, id: u64) -> Option<usize> {
        self.priority_of.get(&id).copied()
    }

    /// Blocks in every queue.
    pub fn len(&self) -> usize {
        self.priority_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.priority_of.is_empty()
    }

    /// Blocks in one queue.
    pub fn size_of(&self, prio: usize) -> usize {
        self.queues.get(prio).map_or(0, BlockSet::len)
    }

    /// Blocks that still have a usable replica (every queue but the corrupt one).
    pub fn low_redundancy_len(&self) -> usize {
        self.len() - self.size_of(QUEUE_WITH_CORRUPT_BLOCKS)
    }

    /// Up to `n` blocks with their priorities: the highest priority first, each queue
    /// continuing after the block it last handed out.
    pub fn choose(&mut self, n: usize) -> Vec<(u64, usize)> {
        let mut out = Vec::new();
        for prio in 0..LEVEL {
            let want = n - out.len();
            if want == 0 {
                break;
            }
            let q = &self.queues[prio];
            let cursor = self.bookmarks[prio];
            let mut picked: Vec<u64> = q.iter_from(cursor).take(want).collect();
            if picked.len() < want {
                let more: Vec<u64> = q
                    .iter()
                    .take_while(|&id| id < cursor)
                    .take(want - picked.len())
                    .collect();
                picked.extend(more);
            }
            if let Some(last) = picked.last() {
                self.bookmarks[prio] = last.wrapping_add(1);
            }
            out.extend(picked.into_iter().map(|id| (id, prio)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(live: usize, decommissioning: usize, corrupt: usize) -> NumberReplicas {
        NumberReplicas {
            live,
            decommissioning,
            corrupt,
            ..NumberReplicas::default()
        }
    }

    #[test]
    fn priorities_follow_hadoop() {
        assert_eq!(priority(n(3, 0, 0), 3, false), None);
        assert_eq!(
            priority(n(3, 0, 0), 3, true),
            Some(QUEUE_REPLICAS_BADLY_DISTRIBUTED)
        );
        assert_eq!(priority(n(1, 0, 0), 3, false), Some(QUEUE_HIGHEST_PRIORITY));
        assert_eq!(priority(n(0, 2, 0), 3, false), Some(QUEUE_HIGHEST_PRIORITY));
        assert_eq!(
            priority(n(0, 0, 2), 3, false),
            Some(QUEUE_WITH_CORRUPT_BLOCKS)
        );
        assert_eq!(
            priority(n(0, 0, 0), 1, false),
            Some(QUEUE_WITH_CORRUPT_BLOCKS)
        );
        assert_eq!(
            priority(n(2, 0, 0), 10, false),
            Some(QUEUE_VERY_LOW_REDUNDANCY)
        );
        assert_eq!(priority(n(2, 0, 0), 3, false), Some(QUEUE_LOW_REDUNDANCY));
        assert_eq!(priority(n(4, 0, 0), 10, false), Some(QUEUE_LOW_REDUNDANCY));
        // A decommissioning replica is not live: one live plus one leaving is still highest.
        assert_eq!(priority(n(1, 1, 0), 3, false), Some(QUEUE_HIGHEST_PRIORITY));
    }

    #[test]
    fn counts_treat_out_of_service_replicas_as_not_live() {
        use crate::block::{Block, BlockInfo, BlockUcState};
        use crate::state::BlockCounts;
        let block = |replication: u16| {
            let mut b = BlockInfo::new_under_construction(Block::new(1, 1, 1), replication, vec![]);
            b.state = BlockUcState::Complete;
            b
        };
        let count = |n: NumberReplicas, replication: u16, badly: bool| {
            let mut c = BlockCounts::default();
            c.add(&block(replication), n, badly, 1);
            (
                c.under_replicated,
                c.missing_blocks,
                c.missing_repl_one,
                c.safe_blocks,
            )
        };
        // 3 live + 1 decommissioning of 3: fine.
        assert_eq!(count(n(3, 1, 0), 3, false), (0, 0, 0, 1));
        // 2 live + 1 decommissioning of 3: under-replicated.
        assert_eq!(count(n(2, 1, 0), 3, false), (1, 0, 0, 1));
        // Only decommissioning / decommissioned replicas: under-replicated, not missing.
        assert_eq!(count(n(0, 1, 0), 3, false), (1, 0, 0, 1));
        let decommissioned = NumberReplicas {
            decommissioned: 2,
            ..NumberReplicas::default()
        };
        assert_eq!(count(decommissioned, 3, false), (1, 0, 0, 0));
        // Only corrupt replicas, or none: missing.
        assert_eq!(count(n(0, 0, 2), 3, false), (0, 1, 0, 0));
        assert_eq!(count(n(0, 0, 0), 1, false), (0, 1, 1, 0));
        // Enough replicas on too few racks: low redundancy too.
        assert_eq!(count(n(3, 0, 0), 3, true), (1, 0, 0, 1));
    }

    #[test]
    fn choose_takes_highest_first_and_round_robins() {
        let mut q = LowRedundancyBlocks::default();
        for id in [10, 11, 12] {
            q.update(id, QUEUE_LOW_REDUNDANCY);
        }
        q.update(20, QUEUE_HIGHEST_PRIORITY);
        q.update(30, QUEUE_VERY_LOW_REDUNDANCY);
        q.update(40, QUEUE_WITH_CORRUPT_BLOCKS);
        assert_eq!(q.len(), 6);
        assert_eq!(q.low_redundancy_len(), 5);
        assert_eq!(
            q.choose(3),
            vec![
                (20, QUEUE_HIGHEST_PRIORITY),
                (30, QUEUE_VERY_LOW_REDUNDANCY),
                (10, QUEUE_LOW_REDUNDANCY)
            ]
        );
        // The low queue continues after 10.
        assert_eq!(
            q.choose(4),
            vec![
                (20, QUEUE_HIGHEST_PRIORITY),
                (30, QUEUE_VERY_LOW_REDUNDANCY),
                (11, QUEUE_LOW_REDUNDANCY),
                (12, QUEUE_LOW_REDUNDANCY)
            ]
        );
        // Moving a block between queues keeps one entry.
        q.update(12, QUEUE_HIGHEST_PRIORITY);
        assert_eq!(q.size_of(QUEUE_HIGHEST_PRIORITY), 2);
        assert_eq!(q.size_of(QUEUE_LOW_REDUNDANCY), 2);
        assert!(q.remove(12));
        assert!(!q.contains(12));
        assert_eq!(q.len(), 5);
    }
}
