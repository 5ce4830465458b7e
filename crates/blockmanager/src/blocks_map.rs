//! The blocks map: block id -> BlockInfo, plus the reverse index storage -> blocks that
//! full block reports diff against.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use crate::block::{Block, BlockInfo, Replica, ReplicaState};
use crate::id_table::IdTable;

/// The blocks a storage holds, with the sequence number of the change that put each
/// replica there (a full report only removes replicas added before it started).
#[derive(Debug, Default)]
pub struct StorageBlocks {
    pub dn_uuid: Arc<str>,
    pub blocks: HashMap<u64, u64>,
}

#[derive(Debug, Default)]
pub struct BlocksMap {
    /// Block ids are handed out in sequence: a dense table, not a hash map (`id_table`).
    blocks: IdTable<BlockInfo>,
    storages: HashMap<Arc<str>, StorageBlocks>,
    seq: u64,
}

/// What adding a replica did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddResult {
    Added,
    Replaced,
    NoBlock,
}

impl BlocksMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Room for `additional` more blocks of sequential ids (a load).
    pub fn reserve(&mut self, additional: usize) {
        self.blocks.reserve(additional);
    }

    /// A counter that grows with every replica added.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    pub fn get(&self, id: u64) -> Option<&BlockInfo> {
        self.blocks.get(id)
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut BlockInfo> {
        self.blocks.get_mut(id)
    }

    pub fn contains(&self, id: u64) -> bool {
        self.blocks.contains_key(id)
    }

    pub fn iter(&self) -> impl Iterator<Item = &BlockInfo> {
        self.blocks.values()
    }

    /// Every block id (a snapshot, for work done in chunks outside the lock).
    pub fn ids(&self) -> Vec<u64> {
        self.blocks.keys().collect()
    }

    /// Inserts a block; an existing entry with the same id is replaced (its replicas are
    /// dropped from the storage index).
    pub fn insert(&mut self, info: BlockInfo) {
        let id = info.block.id;
        if let Some(old) = self.blocks.remove(id) {
            self.unindex(&old);
        }
        for r in &info.replicas {
            self.seq += 1;
            let seq = self.seq;
            self.storage_entry(&r.storage_id, &r.dn_uuid)
                .blocks
                .insert(id, seq);
        }
        self.blocks.insert(id, info);
    }

    /// Removes a block and returns it, replicas included.
    pub fn remove(&mut self, id: u64) -> Option<BlockInfo> {
        let info = self.blocks.remove(id)?;
        self.unindex(&info);
        Some(info)
    }

    fn unindex(&mut self, info: &BlockInfo) {
        for r in &info.replicas {
            if let Some(s) = self.storages.get_mut(&r.storage_id) {
                s.blocks.remove(&info.block.id);
            }
        }
    }

    fn storage_entry(&mut self, storage_id: &Arc<str>, dn_uuid: &Arc<str>) -> &mut StorageBlocks {
        match self.storages.entry(storage_id.clone()) {
            Entry::Occupied(e) => {
                let s = e.into_mut();
                if s.dn_uuid != *dn_uuid {
                    s.dn_uuid = dn_uuid.clone();
                }
                s
            }
            Entry::Vacant(e) => e.insert(StorageBlocks {
                dn_uuid: dn_uuid.clone(),
                blocks: HashMap::new(),
            }),
        }
    }

    /// Records (or updates) the replica of block `reported.id` on a storage.
    pub fn add_replica(
        &mut self,
        dn_uuid: &Arc<str>,
        storage_id: &Arc<str>,
        reported: Block,
        state: ReplicaState,
    ) -> AddResult {
        let Some(info) = self.blocks.get_mut(reported.id) else {
            return AddResult::NoBlock;
        };
        let result = if let Some(r) = info.replica_on_mut(storage_id) {
            r.state = state;
            r.gs = reported.gs;
            r.num_bytes = reported.num_bytes;
            r.corrupt = None;
            r.dn_uuid = dn_uuid.clone();
            AddResult::Replaced
        } else {
            // One replica per DataNode: a replica that moved between storages of the same
            // node replaces the old entry.
            if let Some(pos) = info.replicas.iter().position(|r| r.dn_uuid == *dn_uuid) {
                let old = info.replicas.remove(pos);
                if let Some(s) = self.storages.get_mut(&old.storage_id) {
                    s.blocks.remove(&reported.id);
                }
            }
            info.replicas.push(Replica {
                dn_uuid: dn_uuid.clone(),
                storage_id: storage_id.clone(),
                state,
                gs: reported.gs,
                num_bytes: reported.num_bytes,
                corrupt: None,
            });
            AddResult::Added
        };
        self.seq += 1;
        let seq = self.seq;
        self.storage_entry(storage_id, dn_uuid)
            .blocks
            .insert(reported.id, seq);
        result
    }

    /// Removes the replica of block `id` on `storage_id`; returns it if there was one.
    pub fn remove_replica(&mut self, id: u64, storage_id: &str) -> Option<Replica> {
        let info = self.blocks.get_mut(id)?;
        let pos = info
            .replicas
            .iter()
            .position(|r| &*r.storage_id == storage_id)?;
        let r = info.replicas.remove(pos);
        if let Some(s) = self.storages.get_mut(storage_id) {
            s.blocks.remove(&id);
        }
        Some(r)
    }

    /// Removes the replica of block `id` held by DataNode `dn_uuid` on any storage.
    pub fn remove_replica_of_node(&mut self, id: u64, dn_uuid: &str) -> Option<Replica> {
        let storage = self
            .blocks
            .get(id)?
            .replicas
            .iter()
            .find(|r| &*r.dn_uuid == dn_uuid)?
            .storage_id
            .clone();
        self.remove_replica(id, &storage)
    }

    /// Block ids on a storage, with the sequence number each was added at.
    pub fn storage_blocks(&self, storage_id: &str) -> Vec<(u64, u64)> {
        self.storages
            .get(storage_id)
            .map(|s| s.blocks.iter().map(|(k, v)| (*k, *v)).collect())
            .unwrap_or_default()
    }

    pub fn storage_block_count(&self, storage_id: &str) -> usize {
        self.storages.get(storage_id).map_or(0, |s| s.blocks.len())
    }

    /// Storages last seen on DataNode `dn_uuid`.
    pub fn storages_of_node(&self, dn_uuid: &str) -> Vec<Arc<str>> {
        self.storages
            .iter()
            .filter(|(_, s)| &*s.dn_uuid == dn_uuid)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Replicas held per DataNode (from the storage index).
    pub fn replicas_per_node(&self) -> HashMap<Arc<str>, usize> {
        let mut out: HashMap<Arc<str>, usize> = HashMap::new();
        for s in self.storages.values() {
            *out.entry(s.dn_uuid.clone()).or_default() += s.blocks.len();
        }
        out
    }

    /// Drops the (now empty) index entry of a storage.
    pub fn forget_storage_if_empty(&mut self, storage_id: &str) {
        if self
            .storages
            .get(storage_id)
            .is_some_and(|s| s.blocks.is_empty())
        {
            self.storages.remove(storage_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arc(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    #[test]
    fn replicas_are_indexed_by_storage() {
        let mut m = BlocksMap::new();
        let b = Block::new(1, 1001, 10);
        m.insert(BlockInfo::new_under_construction(b, 7, 3, vec![]));
        let (dn, s1, s2) = (arc("dn1"), arc("DS-1"), arc("DS-2"));
        assert_eq!(
            m.add_replica(&dn, &s1, b, ReplicaState::Finalized),
            AddResult::Added
        );
        assert_eq!(
            m.add_replica(&dn, &s1, b, ReplicaState::Finalized),
            AddResult::Replaced
        );
        assert_eq!(m.storage_block_count("DS-1"), 1);
        // the same node moving the replica to another storage keeps one replica
        assert_eq!(
            m.add_replica(&dn, &s2, b, ReplicaState::Finalized),
            AddResult::Added
        );
        assert_eq!(m.storage_block_count("DS-1"), 0);
        assert_eq!(m.get(1).map(|i| i.replicas.len()), Some(1));
        assert!(m.remove_replica_of_node(1, "dn1").is_some());
        assert_eq!(m.storage_block_count("DS-2"), 0);
        m.add_replica(&dn, &s2, b, ReplicaState::Finalized);
        assert!(m.remove(1).is_some());
        assert_eq!(m.storage_block_count("DS-2"), 0);
        assert_eq!(
            m.add_replica(&dn, &s2, b, ReplicaState::Finalized),
            AddResult::NoBlock
        );
    }
}
