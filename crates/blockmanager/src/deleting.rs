//! Replicas taken off the blocks map to be deleted — surplus or corrupt replicas of blocks
//! that still exist — which their DataNodes may still hold. Such a node is no copy target
//! for the block: it would refuse the copy (it holds the replica finalized) and the block
//! would stay a replica short until the pending timeout. Hadoop keeps these replicas in its
//! blocks map as excess until the DataNode reports them deleted; here the map forgets them
//! at once (they are neither live nor counted anywhere) and this small index remembers
//! where they may still be.
//!
//! An entry ends when the node reports the replica deleted, when a full report of its
//! storage leaves the replica out or lists it again (then it is counted again), when the
//! storage is forgotten (dead node, failed volume) or the block is removed, and when a
//! NameNode becomes active (its deletions are dropped; the reports say what is held).

use std::collections::HashMap;
use std::sync::Arc;

/// Why a replica is being deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeletionCause {
    /// Beyond the block's replication (shown as EXCESS by fsck, as in Hadoop).
    Surplus,
    /// Corrupt, and enough good replicas exist.
    Corrupt,
}

/// A DataNode uuid, the storage id its replica is on, and why it goes.
type Holder = (Arc<str>, Arc<str>, DeletionCause);

/// Per block: the nodes still deleting a replica of it.
#[derive(Debug, Default)]
pub struct DeletingReplicas {
    by_block: HashMap<u64, Vec<Holder>>,
}

impl DeletingReplicas {
    /// Records that `dn`'s replica of block `id` on `storage` is being deleted.
    pub fn add(&mut self, id: u64, dn: &Arc<str>, storage: &Arc<str>, cause: DeletionCause) {
        let list = self.by_block.entry(id).or_default();
        if !list.iter().any(|(d, _, _)| d == dn) {
            list.push((dn.clone(), storage.clone(), cause));
        }
    }

    /// The node's replica is gone or counted again; true if it was recorded.
    pub fn remove(&mut self, id: u64, dn: &str) -> bool {
        let Some(list) = self.by_block.get_mut(&id) else {
            return false;
        };
        let before = list.len();
        list.retain(|(d, _, _)| &**d != dn);
        let removed = list.len() < before;
        if list.is_empty() {
            self.by_block.remove(&id);
        }
        removed
    }

    /// Nodes that may still hold a replica of block `id` they were told to delete.
    pub fn nodes_of(&self, id: u64) -> impl Iterator<Item = &Arc<str>> {
        self.by_block
            .get(&id)
            .into_iter()
            .flatten()
            .map(|(d, _, _)| d)
    }

    /// The (node, storage) of each surplus replica of block `id` still being deleted.
    pub fn surplus_of(&self, id: u64) -> impl Iterator<Item = (&Arc<str>, &Arc<str>)> {
        self.by_block
            .get(&id)
            .into_iter()
            .flatten()
            .filter(|(_, _, c)| *c == DeletionCause::Surplus)
            .map(|(d, s, _)| (d, s))
    }

    /// The block left the namespace: its replicas go with it.
    pub fn forget_block(&mut self, id: u64) {
        self.by_block.remove(&id);
    }

    /// Drops the entries on `storage` for which `keep` is false (a full report of the
    /// storage: `keep` false for a replica the report left out). The index is small (the
    /// surplus and corrupt replicas of the last few heartbeats), so it is walked whole.
    pub fn retain_on_storage(&mut self, storage: &str, mut keep: impl FnMut(u64) -> bool) {
        self.by_block.retain(|id, list| {
            list.retain(|(_, s, _)| &**s != storage || keep(*id));
            !list.is_empty()
        });
    }

    /// Whether any entry is on `storage`.
    pub fn on_storage(&self, storage: &str) -> bool {
        self.by_block
            .values()
            .any(|l| l.iter().any(|(_, s, _)| &**s == storage))
    }

    /// Forgets everything (a NameNode becoming active drops its deletions).
    pub fn clear(&mut self) {
        self.by_block.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    #[test]
    fn entries_end_by_node_block_and_storage() {
        use DeletionCause::{Corrupt, Surplus};
        let mut d = DeletingReplicas::default();
        d.add(1, &a("dn1"), &a("s1"), Surplus);
        d.add(1, &a("dn1"), &a("s1"), Surplus);
        d.add(1, &a("dn2"), &a("s2"), Corrupt);
        d.add(2, &a("dn1"), &a("s1"), Surplus);
        d.add(3, &a("dn1"), &a("s1b"), Corrupt);
        let of1: Vec<&str> = d.nodes_of(1).map(|n| &**n).collect();
        assert_eq!(of1, vec!["dn1", "dn2"], "one entry per node and block");
        let surplus: Vec<(&str, &str)> = d.surplus_of(1).map(|(n, s)| (&**n, &**s)).collect();
        assert_eq!(surplus, vec![("dn1", "s1")]);
        assert!(d.remove(1, "dn2"));
        assert!(!d.remove(1, "dn2"));
        // A report of s1 that lists block 2 but not block 1: only block 1's entry ends;
        // the node's other storage is untouched.
        d.retain_on_storage("s1", |id| id == 2);
        assert_eq!(d.nodes_of(1).count(), 0);
        assert_eq!(d.nodes_of(2).count(), 1);
        assert!(d.on_storage("s1b"));
        d.forget_block(2);
        assert!(!d.on_storage("s1"));
        assert_eq!(d.nodes_of(3).count(), 1);
        d.clear();
        assert!(!d.on_storage("s1b"));
        assert_eq!(d.nodes_of(3).count(), 0);
    }
}
