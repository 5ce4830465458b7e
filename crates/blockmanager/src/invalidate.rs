//! InvalidateBlocks: per-DataNode sets of replicas to delete, handed out in bounded
//! portions by the RedundancyMonitor, and the per-node queue of handed-out blocks that the
//! next heartbeat response carries as DNA_INVALIDATE.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use crate::block::Block;

/// Replicas waiting to be deleted, per DataNode uuid.
#[derive(Debug, Default)]
pub struct InvalidateBlocks {
    per_node: HashMap<Arc<str>, HashMap<u64, Block>>,
    num_blocks: usize,
}

impl InvalidateBlocks {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of replicas waiting (Hadoop's pending deletion blocks).
    pub fn num_blocks(&self) -> usize {
        self.num_blocks
    }

    /// Whether this replica — the block's id and generation stamp — waits to be deleted on
    /// the node. A replica of the same block with another generation stamp is not it (the
    /// node's replica moved on, a pipeline recovery say), as in Hadoop's InvalidateBlocks.
    pub fn contains(&self, dn_uuid: &str, block: Block) -> bool {
        self.queued(dn_uuid, block.id)
            .is_some_and(|b| b.gs == block.gs)
    }

    /// The deletion queued for the node's replica of block `id`, if any.
    fn queued(&self, dn_uuid: &str, id: u64) -> Option<&Block> {
        self.per_node.get(dn_uuid).and_then(|s| s.get(&id))
    }

    /// Drops every waiting replica; returns how many there were.
    pub fn clear(&mut self) -> usize {
        let n = self.num_blocks;
        self.per_node.clear();
        self.num_blocks = 0;
        n
    }

    /// Adds a replica; false if the block was already there for the node (its entry then
    /// takes this generation stamp: the node holds this replica now, and a deletion of
    /// another generation stamp it would refuse).
    pub fn add(&mut self, dn_uuid: &Arc<str>, block: Block) -> bool {
        let set = self.per_node.entry(dn_uuid.clone()).or_default();
        if set.insert(block.id, block).is_none() {
            self.num_blocks += 1;
            true
        } else {
            false
        }
    }

    /// Drops a queued deletion of an older generation stamp of the node's replica of this
    /// block: the replica moved on (a pipeline recovery) and the DataNode would refuse it.
    /// True if one was dropped.
    pub fn remove_older(&mut self, dn_uuid: &str, block: Block) -> bool {
        let older = self
            .queued(dn_uuid, block.id)
            .is_some_and(|b| b.gs < block.gs);
        older && self.remove(dn_uuid, block.id)
    }

    /// Drops a replica (the DataNode reported it deleted or the block was re-added).
    pub fn remove(&mut self, dn_uuid: &str, id: u64) -> bool {
        let Some(set) = self.per_node.get_mut(dn_uuid) else {
            return false;
        };
        let removed = set.remove(&id).is_some();
        if removed {
            self.num_blocks -= 1;
        }
        if set.is_empty() {
            self.per_node.remove(dn_uuid);
        }
        removed
    }

    /// Forgets everything queued for a node (it died or re-registered afresh).
    pub fn remove_node(&mut self, dn_uuid: &str) -> usize {
        let n = self.per_node.remove(dn_uuid).map_or(0, |s| s.len());
        self.num_blocks -= n;
        n
    }

    /// Nodes that have replicas waiting, in no particular order.
    pub fn datanodes(&self) -> Vec<Arc<str>> {
        self.per_node.keys().cloned().collect()
    }

    pub fn blocks_of(&self, dn_uuid: &str) -> usize {
        self.per_node.get(dn_uuid).map_or(0, |s| s.len())
    }

    /// Takes up to `limit` replicas of one node (Hadoop's invalidateWork).
    pub fn poll(&mut self, dn_uuid: &str, limit: usize) -> Vec<Block> {
        let Some(set) = self.per_node.get_mut(dn_uuid) else {
            return Vec::new();
        };
        let ids: Vec<u64> = set.keys().take(limit).copied().collect();
        let blocks: Vec<Block> = ids.iter().filter_map(|id| set.remove(id)).collect();
        self.num_blocks -= blocks.len();
        if set.is_empty() {
            self.per_node.remove(dn_uuid);
        }
        blocks
    }
}

/// How long deletion is still held back after a start
/// (`dfs.namenode.startup.delay.block.deletion.sec`); zero once the delay has passed.
pub fn invalidation_delay(startup_delay: Duration, since_start: Duration) -> Duration {
    startup_delay.saturating_sub(since_start)
}

/// Number of DataNodes given deletion work per RedundancyMonitor pass:
/// `ceil(live × dfs.namenode.invalidate.work.pct.per.iteration)`.
pub fn nodes_to_process(live: usize, pct: f64) -> usize {
    (live as f64 * pct).ceil() as usize
}

/// Blocks handed out to nodes and waiting for their next heartbeat.
#[derive(Debug, Default)]
pub struct PendingCommands {
    per_node: HashMap<Arc<str>, VecDeque<Block>>,
}

impl PendingCommands {
    pub fn add(&mut self, dn_uuid: &Arc<str>, blocks: Vec<Block>) {
        self.per_node
            .entry(dn_uuid.clone())
            .or_default()
            .extend(blocks);
    }

    /// Up to `limit` blocks for one heartbeat response.
    pub fn take(&mut self, dn_uuid: &str, limit: usize) -> Vec<Block> {
        let Some(q) = self.per_node.get_mut(dn_uuid) else {
            return Vec::new();
        };
        let n = limit.min(q.len());
        let out: Vec<Block> = q.drain(..n).collect();
        if q.is_empty() {
            self.per_node.remove(dn_uuid);
        }
        out
    }

    pub fn remove_node(&mut self, dn_uuid: &str) -> usize {
        self.per_node.remove(dn_uuid).map_or(0, |q| q.len())
    }

    /// Drops every handed-out block; returns how many there were.
    pub fn clear(&mut self) -> usize {
        let n = self.len();
        self.per_node.clear();
        n
    }

    pub fn len(&self) -> usize {
        self.per_node.values().map(|q| q.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.per_node.is_empty()
    }

    pub fn of_node(&self, dn_uuid: &str) -> usize {
        self.per_node.get(dn_uuid).map_or(0, |q| q.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_respects_limit_and_counts() {
        let mut inv = InvalidateBlocks::new();
        let dn: Arc<str> = Arc::from("dn1");
        for i in 0..25 {
            assert!(inv.add(&dn, Block::new(i, 1001, 1)));
        }
        assert!(!inv.add(&dn, Block::new(3, 1001, 1)));
        assert_eq!(inv.num_blocks(), 25);
        assert_eq!(inv.poll("dn1", 10).len(), 10);
        assert_eq!(inv.num_blocks(), 15);
        assert_eq!(inv.poll("dn1", 100).len(), 15);
        assert_eq!(inv.num_blocks(), 0);
        assert!(inv.datanodes().is_empty());
    }

    #[test]
    fn percentages_round_up() {
        assert_eq!(nodes_to_process(3, 0.32), 1);
        assert_eq!(nodes_to_process(4, 0.32), 2);
        assert_eq!(nodes_to_process(10, 0.32), 4);
        assert_eq!(nodes_to_process(10, 1.0), 10);
        assert_eq!(nodes_to_process(0, 0.32), 0);
    }

    #[test]
    fn a_replica_is_its_generation_stamp() {
        let mut inv = InvalidateBlocks::new();
        let dn: Arc<str> = Arc::from("dn1");
        assert!(inv.add(&dn, Block::new(7, 1001, 5)));
        assert!(inv.contains("dn1", Block::new(7, 1001, 5)));
        assert!(
            !inv.contains("dn1", Block::new(7, 1004, 5)),
            "a newer replica"
        );
        assert!(!inv.contains("dn2", Block::new(7, 1001, 5)));
        // The same block again with another generation stamp: one entry, the latest.
        assert!(!inv.add(&dn, Block::new(7, 1004, 5)));
        assert_eq!(inv.num_blocks(), 1);
        assert!(inv.contains("dn1", Block::new(7, 1004, 5)));
        assert_eq!(inv.poll("dn1", 10), vec![Block::new(7, 1004, 5)]);
        // A deletion of an older stamp goes once a newer replica is known; not otherwise.
        assert!(inv.add(&dn, Block::new(8, 1001, 5)));
        assert!(!inv.remove_older("dn1", Block::new(8, 1001, 5)));
        assert!(!inv.remove_older("dn1", Block::new(8, 1000, 5)));
        assert!(inv.remove_older("dn1", Block::new(8, 1002, 5)));
        assert_eq!(inv.num_blocks(), 0);
    }

    #[test]
    fn startup_delay() {
        let d = Duration::from_secs(5);
        assert_eq!(
            invalidation_delay(d, Duration::from_secs(2)),
            Duration::from_secs(3)
        );
        assert_eq!(
            invalidation_delay(d, Duration::from_secs(9)),
            Duration::ZERO
        );
    }

    #[test]
    fn pending_commands_drain_in_order() {
        let mut p = PendingCommands::default();
        let dn: Arc<str> = Arc::from("dn1");
        p.add(&dn, (0..5).map(|i| Block::new(i, 1, 0)).collect());
        let first = p.take("dn1", 3);
        assert_eq!(
            first.iter().map(|b| b.id).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert_eq!(p.len(), 2);
        assert_eq!(p.take("dn1", 3).len(), 2);
        assert!(p.is_empty());
    }
}
