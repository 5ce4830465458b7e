//! The blocks map: block id -> BlockInfo, and the storage table: each storage a replica
//! can be on, by a 4-byte index (`StorageIdx`) that replicas name it by, with the set of
//! blocks it holds (`BlockSet`, what full block reports diff against and removing a storage
//! walks).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use crate::block::{Block, BlockInfo, Replica, ReplicaState, StorageIdx};
use crate::block_set::BlockSet;
use crate::id_table::IdTable;

/// One storage: its id, the DataNode it was last seen on, the blocks it holds.
#[derive(Debug)]
pub struct StorageSlot {
    pub storage_id: Arc<str>,
    pub dn_uuid: Arc<str>,
    pub blocks: BlockSet,
    /// While full reports of the storage are under way: how many, and the blocks recorded
    /// on it since the first began, with the sequence number of each change (a full report
    /// only removes replicas recorded before it started).
    reports: Option<Box<ReportsUnderWay>>,
}

#[derive(Debug, Default)]
struct ReportsUnderWay {
    running: u32,
    added: Vec<(u64, u64)>,
}

#[derive(Debug, Default)]
pub struct BlocksMap {
    /// Block ids are handed out in sequence: a dense table, not a hash map (`id_table`).
    blocks: IdTable<BlockInfo>,
    /// The storage table; a slot is vacant (None) once its storage is forgotten, and is
    /// reused by the next new storage.
    slots: Vec<Option<StorageSlot>>,
    by_id: HashMap<Arc<str>, StorageIdx>,
    vacant: Vec<StorageIdx>,
    seq: u64,
}

/// What adding a replica did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddResult {
    Added,
    Replaced,
    NoBlock,
}

/// What a replica on a vacant slot reads as (never the case while the map is consistent).
static NONE: LazyLock<Arc<str>> = LazyLock::new(|| Arc::from(""));

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

    /// The storage in slot `idx`, if the slot is in use.
    pub fn storage(&self, idx: StorageIdx) -> Option<&StorageSlot> {
        self.slots.get(idx.0 as usize)?.as_ref()
    }

    fn storage_mut(&mut self, idx: StorageIdx) -> Option<&mut StorageSlot> {
        self.slots.get_mut(idx.0 as usize)?.as_mut()
    }

    /// The index of storage `storage_id`, if the table has it.
    pub fn storage_idx(&self, storage_id: &str) -> Option<StorageIdx> {
        self.by_id.get(storage_id).copied()
    }

    /// The DataNode a replica is on.
    pub fn dn_of(&self, r: &Replica) -> &Arc<str> {
        self.storage(r.storage).map_or(&NONE, |s| &s.dn_uuid)
    }

    /// The id of the storage a replica is on.
    pub fn storage_id_of(&self, r: &Replica) -> &Arc<str> {
        self.storage(r.storage).map_or(&NONE, |s| &s.storage_id)
    }

    /// A test of whether a storage belongs to DataNode `dn`.
    pub fn on_node<'a>(&'a self, dn: &'a str) -> impl Fn(StorageIdx) -> bool + 'a {
        move |idx| self.storage(idx).is_some_and(|s| &*s.dn_uuid == dn)
    }

    /// Inserts a block; an existing entry with the same id is replaced (its replicas are
    /// dropped from the storage index). `info`'s replicas must name storages of this map.
    pub fn insert(&mut self, info: BlockInfo) {
        let id = info.block.id;
        if let Some(old) = self.blocks.remove(id) {
            self.unindex(&old);
        }
        for r in &info.replicas {
            self.seq += 1;
            let seq = self.seq;
            if let Some(s) = self.storage_mut(r.storage) {
                s.record(id, seq);
            }
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
            if let Some(s) = self.storage_mut(r.storage) {
                s.blocks.remove(info.block.id);
            }
        }
    }

    /// The slot of `storage_id` (made if new), last seen on `dn_uuid`.
    pub fn storage_entry(&mut self, storage_id: &Arc<str>, dn_uuid: &Arc<str>) -> StorageIdx {
        if let Some(idx) = self.storage_idx(storage_id) {
            if let Some(s) = self.storage_mut(idx)
                && s.dn_uuid != *dn_uuid
            {
                s.dn_uuid = dn_uuid.clone();
            }
            return idx;
        }
        let slot = StorageSlot {
            storage_id: storage_id.clone(),
            dn_uuid: dn_uuid.clone(),
            blocks: BlockSet::new(),
            reports: None,
        };
        let idx = match self.vacant.pop() {
            Some(idx) => {
                self.slots[idx.0 as usize] = Some(slot);
                idx
            }
            None => {
                // More than 4 G storages would be a million DataNodes of 4,000 disks each;
                // the last index is `block::VACANT`, never handed out.
                let idx = StorageIdx(
                    u32::try_from(self.slots.len())
                        .unwrap_or(u32::MAX)
                        .min(u32::MAX - 1),
                );
                self.slots.push(Some(slot));
                idx
            }
        };
        self.by_id.insert(storage_id.clone(), idx);
        idx
    }

    /// Records (or updates) the replica of block `reported.id` on a storage.
    pub fn add_replica(
        &mut self,
        dn_uuid: &Arc<str>,
        storage_id: &Arc<str>,
        reported: Block,
        state: ReplicaState,
    ) -> AddResult {
        if !self.blocks.contains_key(reported.id) {
            return AddResult::NoBlock;
        }
        let idx = self.storage_entry(storage_id, dn_uuid);
        let Some(info) = self.blocks.get_mut(reported.id) else {
            return AddResult::NoBlock;
        };
        let result = if let Some(r) = info.replica_on_mut(idx) {
            r.state = state;
            r.gs = reported.gs;
            r.num_bytes = reported.num_bytes;
            r.corrupt = None;
            AddResult::Replaced
        } else {
            // One replica per DataNode: a replica that moved between storages of the same
            // node replaces the old entry.
            let slots = &self.slots;
            let same_node = info.replicas.iter().position(|r| {
                slots
                    .get(r.storage.0 as usize)
                    .and_then(Option::as_ref)
                    .is_some_and(|s| s.dn_uuid == *dn_uuid)
            });
            if let Some(pos) = same_node {
                let old = info.replicas.remove(pos);
                if let Some(Some(s)) = self.slots.get_mut(old.storage.0 as usize) {
                    s.blocks.remove(reported.id);
                }
            }
            let replica = Replica {
                gs: reported.gs,
                num_bytes: reported.num_bytes,
                storage: idx,
                state,
                corrupt: None,
            };
            let expected = usize::from(info.replication);
            info.replicas.push_expecting(replica, expected);
            AddResult::Added
        };
        self.seq += 1;
        let seq = self.seq;
        if let Some(s) = self.storage_mut(idx) {
            s.record(reported.id, seq);
        }
        result
    }

    /// Removes the replica of block `id` on `storage_id`; returns it if there was one.
    pub fn remove_replica(&mut self, id: u64, storage_id: &str) -> Option<Replica> {
        let idx = self.storage_idx(storage_id)?;
        let info = self.blocks.get_mut(id)?;
        let pos = info.replicas.position(idx)?;
        let r = info.replicas.remove(pos);
        if let Some(s) = self.storage_mut(idx) {
            s.blocks.remove(id);
        }
        Some(r)
    }

    /// Removes the replica of block `id` held by DataNode `dn_uuid` on any storage.
    pub fn remove_replica_of_node(&mut self, id: u64, dn_uuid: &str) -> Option<Replica> {
        let storage = {
            let on = self.on_node(dn_uuid);
            let r = self
                .blocks
                .get(id)?
                .replicas
                .iter()
                .find(|r| on(r.storage))?;
            self.storage_id_of(r).clone()
        };
        self.remove_replica(id, &storage)
    }

    /// Block ids on a storage, in increasing order.
    pub fn storage_blocks(&self, storage_id: &str) -> Vec<u64> {
        self.storage_idx(storage_id)
            .and_then(|i| self.storage(i))
            .map(|s| s.blocks.iter().collect())
            .unwrap_or_default()
    }

    pub fn storage_block_count(&self, storage_id: &str) -> usize {
        self.storage_idx(storage_id)
            .and_then(|i| self.storage(i))
            .map_or(0, |s| s.blocks.len())
    }

    /// A full report of `storage_id` (on `dn_uuid`) begins: returns the sequence number
    /// to pass to `finish_full_report`.
    pub fn begin_full_report(&mut self, storage_id: &Arc<str>, dn_uuid: &Arc<str>) -> u64 {
        let idx = self.storage_entry(storage_id, dn_uuid);
        if let Some(s) = self.storage_mut(idx) {
            s.reports.get_or_insert_with(Default::default).running += 1;
        }
        self.seq
    }

    /// The full report that began at `start_seq` ends: the blocks on the storage that
    /// were recorded there before it began (the ones it may remove when unreported).
    pub fn finish_full_report(&mut self, storage_id: &str, start_seq: u64) -> Vec<u64> {
        let Some(s) = self
            .storage_idx(storage_id)
            .and_then(|i| self.storage_mut(i))
        else {
            return Vec::new();
        };
        let since: std::collections::HashSet<u64> = s
            .reports
            .as_ref()
            .map(|r| {
                r.added
                    .iter()
                    .filter(|(_, seq)| *seq > start_seq)
                    .map(|(id, _)| *id)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(r) = s.reports.as_mut() {
            r.running = r.running.saturating_sub(1);
            if r.running == 0 {
                s.reports = None;
            }
        }
        s.blocks.iter().filter(|id| !since.contains(id)).collect()
    }

    /// Storages last seen on DataNode `dn_uuid`.
    pub fn storages_of_node(&self, dn_uuid: &str) -> Vec<Arc<str>> {
        self.slots
            .iter()
            .flatten()
            .filter(|s| &*s.dn_uuid == dn_uuid)
            .map(|s| s.storage_id.clone())
            .collect()
    }

    /// Replicas held per DataNode (from the storage table).
    pub fn replicas_per_node(&self) -> HashMap<Arc<str>, usize> {
        let mut out: HashMap<Arc<str>, usize> = HashMap::new();
        for s in self.slots.iter().flatten() {
            *out.entry(s.dn_uuid.clone()).or_default() += s.blocks.len();
        }
        out
    }

    /// Drops the (now empty) entry of a storage; its slot is reused by a later storage.
    pub fn forget_storage_if_empty(&mut self, storage_id: &str) {
        let Some(idx) = self.storage_idx(storage_id) else {
            return;
        };
        if self
            .storage(idx)
            .is_some_and(|s| s.blocks.is_empty() && s.reports.is_none())
        {
            self.slots[idx.0 as usize] = None;
            self.by_id.remove(storage_id);
            self.vacant.push(idx);
        }
    }
}

impl StorageSlot {
    /// Block `id` is (again) on this storage, by the change numbered `seq`.
    fn record(&mut self, id: u64, seq: u64) {
        self.blocks.insert(id);
        if let Some(r) = self.reports.as_mut() {
            r.added.push((id, seq));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Add(u64, usize),
        Remove(u64, usize),
        RemoveOfNode(u64, usize),
        RemoveBlock(u64),
        InsertBlock(u64),
        ForgetStorage(usize),
    }

    /// Storage k is on DataNode k / 2.
    const STORAGES: usize = 6;

    fn op() -> impl Strategy<Value = Op> {
        let b = 1u64..6;
        let s = 0..STORAGES;
        prop_oneof![
            6 => (b.clone(), s.clone()).prop_map(|(b, s)| Op::Add(b, s)),
            2 => (b.clone(), s.clone()).prop_map(|(b, s)| Op::Remove(b, s)),
            1 => (b.clone(), 0..STORAGES / 2).prop_map(|(b, d)| Op::RemoveOfNode(b, d)),
            1 => b.clone().prop_map(Op::RemoveBlock),
            1 => b.prop_map(Op::InsertBlock),
            1 => s.prop_map(Op::ForgetStorage),
        ]
    }

    proptest! {
        /// A block's replicas behave as a set of storages, at most one per DataNode, and
        /// each storage's block set is exactly the blocks with a replica on it, under any
        /// sequence of adds, replacements, removals and storages forgotten and reused.
        #[test]
        fn replicas_are_a_set_of_storages(ops in proptest::collection::vec(op(), 0..200)) {
            let sid: Vec<Arc<str>> = (0..STORAGES).map(|k| arc(&format!("DS-{k}"))).collect();
            let dn: Vec<Arc<str>> = (0..STORAGES / 2).map(|d| arc(&format!("dn{d}"))).collect();
            let mut m = BlocksMap::new();
            let mut model: BTreeMap<u64, BTreeSet<usize>> = BTreeMap::new();
            for o in &ops {
                match *o {
                    Op::Add(b, s) => {
                        let got = m.add_replica(&dn[s / 2], &sid[s], Block::new(b, 1, 1), ReplicaState::Finalized);
                        let want = match model.get_mut(&b) {
                            None => AddResult::NoBlock,
                            Some(set) if set.contains(&s) => AddResult::Replaced,
                            Some(set) => {
                                set.retain(|x| x / 2 != s / 2);
                                set.insert(s);
                                AddResult::Added
                            }
                        };
                        prop_assert_eq!(got, want);
                    }
                    Op::Remove(b, s) => {
                        let got = m.remove_replica(b, &sid[s]).is_some();
                        let want = model.get_mut(&b).is_some_and(|set| set.remove(&s));
                        prop_assert_eq!(got, want);
                    }
                    Op::RemoveOfNode(b, d) => {
                        let got = m.remove_replica_of_node(b, &dn[d]).is_some();
                        let want = model.get_mut(&b).is_some_and(|set| {
                            let before = set.len();
                            set.retain(|x| x / 2 != d);
                            set.len() < before
                        });
                        prop_assert_eq!(got, want);
                    }
                    Op::RemoveBlock(b) => {
                        prop_assert_eq!(m.remove(b).is_some(), model.remove(&b).is_some());
                    }
                    Op::InsertBlock(b) => {
                        m.insert(BlockInfo::new_under_construction(Block::new(b, 1, 1), 7, 3, vec![]));
                        model.insert(b, BTreeSet::new());
                    }
                    Op::ForgetStorage(s) => {
                        if model.values().all(|set| !set.contains(&s)) {
                            m.forget_storage_if_empty(&sid[s]);
                            prop_assert_eq!(m.storage_idx(&sid[s]), None);
                        }
                    }
                }
                for (b, set) in &model {
                    let info = m.get(*b);
                    prop_assert!(info.is_some());
                    let Some(info) = info else { continue };
                    let got: BTreeSet<String> =
                        info.replicas.iter().map(|r| m.storage_id_of(r).to_string()).collect();
                    let want: BTreeSet<String> = set.iter().map(|s| sid[*s].to_string()).collect();
                    prop_assert_eq!(got, want);
                    prop_assert_eq!(info.replicas.len(), set.len());
                    for r in &info.replicas {
                        prop_assert_eq!(&**m.dn_of(r), &*dn[m.storage_id_of(r)[3..].parse::<usize>().unwrap_or(0) / 2]);
                    }
                }
                for (s, id) in sid.iter().enumerate() {
                    let want: Vec<u64> = model
                        .iter()
                        .filter(|(_, set)| set.contains(&s))
                        .map(|(b, _)| *b)
                        .collect();
                    prop_assert_eq!(m.storage_blocks(id), want.clone());
                    prop_assert_eq!(m.storage_block_count(id), want.len());
                }
            }
        }
    }

    fn arc(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    #[test]
    fn a_full_report_keeps_what_was_added_while_it_ran() {
        let mut m = BlocksMap::new();
        let (dn, s1) = (arc("dn1"), arc("DS-1"));
        for id in 1..=3 {
            m.insert(BlockInfo::new_under_construction(
                Block::new(id, 1, 1),
                7,
                3,
                vec![],
            ));
        }
        m.add_replica(&dn, &s1, Block::new(1, 1, 1), ReplicaState::Finalized);
        m.add_replica(&dn, &s1, Block::new(2, 1, 1), ReplicaState::Finalized);
        let start = m.begin_full_report(&s1, &dn);
        // recorded (2 again, 3 new) after the report began: not the report's to remove
        m.add_replica(&dn, &s1, Block::new(2, 1, 1), ReplicaState::Finalized);
        m.add_replica(&dn, &s1, Block::new(3, 1, 1), ReplicaState::Finalized);
        assert_eq!(m.finish_full_report("DS-1", start), vec![1]);
        // the log is gone with the report
        let start = m.begin_full_report(&s1, &dn);
        assert_eq!(m.finish_full_report("DS-1", start), vec![1, 2, 3]);
        assert!(
            m.storage(StorageIdx(0))
                .is_some_and(|s| s.reports.is_none())
        );
    }

    #[test]
    fn three_replicas_take_one_allocation_of_three_slots() {
        let mut m = BlocksMap::new();
        m.insert(BlockInfo::new_under_construction(
            Block::new(1, 1, 1),
            7,
            3,
            vec![],
        ));
        for k in 0..3 {
            let (dn, s) = (arc(&format!("dn{k}")), arc(&format!("DS-{k}")));
            m.add_replica(&dn, &s, Block::new(1, 1, 1), ReplicaState::Finalized);
            assert_eq!(m.get(1).map(|i| i.replicas.slots()), Some(3));
        }
        assert_eq!(std::mem::size_of::<Replica>(), 24);
        assert!(m.remove_replica(1, "DS-1").is_some());
        let info = m.get(1).cloned().unwrap_or_else(|| panic!("block 1"));
        assert_eq!((info.replicas.len(), info.replicas.slots()), (2, 3));
        let ids: Vec<&str> = info
            .replicas
            .iter()
            .map(|r| &**m.storage_id_of(r))
            .collect();
        assert_eq!(ids, ["DS-0", "DS-2"]);
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
