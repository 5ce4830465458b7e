//! The blocks map: block id -> BlockInfo, and the storage table: each storage a replica
//! can be on, by a 4-byte index (`StorageIdx`) that replicas name it by, with the set of
//! blocks it holds (`BlockSet`, what full block reports diff against and removing a storage
//! walks).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use crate::block::{
    Block, BlockInfo, COUNTED_COMPLETE, COUNTED_SAFE, Replica, ReplicaState, StorageIdx, VACANT,
};
use crate::block_set::BlockSet;
use crate::id_hash::IdHashMap;
use crate::id_table::IdTable;

/// One storage: its id, the DataNode it was last seen on, the blocks it holds.
#[derive(Debug)]
pub struct StorageSlot {
    pub storage_id: Arc<str>,
    pub dn_uuid: Arc<str>,
    pub blocks: BlockSet,
    /// While full reports of the storage that may remove replicas are under way (it held
    /// blocks when they began): how many, and each block recorded on it since the first
    /// began, with the sequence number of its latest record (a full report only removes
    /// replicas recorded before it started).
    reports: Option<Box<ReportsUnderWay>>,
}

#[derive(Debug, Default)]
struct ReportsUnderWay {
    running: u32,
    added: IdHashMap<u64>,
}

/// The blocks start-up safe mode compares: COMPLETE ones, and those of them with at
/// least `dfs.namenode.replication.min` good finalized replicas of their generation stamp
/// (replicas on decommissioned nodes included: the caller falls back to a scan when any
/// node is decommissioned). Kept by the map as its blocks change, where counting them
/// took a scan of every block on each safe mode check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SafeCounts {
    pub complete: u64,
    pub safe: u64,
}

impl SafeCounts {
    fn add(&mut self, bits: u8) {
        self.complete += u64::from(bits & COUNTED_COMPLETE != 0);
        self.safe += u64::from(bits & COUNTED_SAFE != 0);
    }

    fn sub(&mut self, bits: u8) {
        self.complete -= u64::from(bits & COUNTED_COMPLETE != 0);
        self.safe -= u64::from(bits & COUNTED_SAFE != 0);
    }

    /// Brings the counts and `info.counted` in line with the block as it is now.
    fn reconcile(&mut self, info: &mut BlockInfo, min: usize) {
        let bits = info.safe_bits(min);
        if bits != info.counted {
            self.sub(info.counted);
            self.add(bits);
            info.counted = bits;
        }
    }
}

/// A block of the map borrowed for change (`BlocksMap::get_mut`); when it is dropped the
/// map's `SafeCounts` follow whatever changed.
pub struct BlockMut<'a> {
    info: &'a mut BlockInfo,
    safe: &'a mut SafeCounts,
    min: usize,
}

impl std::ops::Deref for BlockMut<'_> {
    type Target = BlockInfo;
    fn deref(&self) -> &BlockInfo {
        self.info
    }
}

impl std::ops::DerefMut for BlockMut<'_> {
    fn deref_mut(&mut self) -> &mut BlockInfo {
        self.info
    }
}

impl Drop for BlockMut<'_> {
    fn drop(&mut self) {
        self.safe.reconcile(self.info, self.min);
    }
}

#[derive(Debug)]
pub struct BlocksMap {
    /// Block ids are handed out in sequence: a dense table, not a hash map (`id_table`).
    blocks: IdTable<BlockInfo>,
    /// The storage table; a slot is vacant (None) once its storage is forgotten, and is
    /// reused by the next new storage.
    slots: Vec<Option<StorageSlot>>,
    by_id: HashMap<Arc<str>, StorageIdx>,
    vacant: Vec<StorageIdx>,
    seq: u64,
    /// The counts of `SafeCounts`, `min_replication` the minimum they use.
    safe: SafeCounts,
    min_replication: usize,
}

impl Default for BlocksMap {
    fn default() -> Self {
        Self::with_min_replication(1)
    }
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

    /// A map whose `SafeCounts` count a block as safe from `min_replication` good
    /// finalized replicas (`dfs.namenode.replication.min`, at least 1).
    pub fn with_min_replication(min_replication: usize) -> Self {
        BlocksMap {
            blocks: IdTable::new(),
            slots: Vec::new(),
            by_id: HashMap::new(),
            vacant: Vec::new(),
            seq: 0,
            safe: SafeCounts::default(),
            min_replication: min_replication.max(1),
        }
    }

    /// COMPLETE blocks and safe ones, as they are now (no scan).
    pub fn safe_counts(&self) -> SafeCounts {
        self.safe
    }

    /// The same counts by a scan of every block (for tests and debug checks).
    pub fn scan_safe_counts(&self) -> SafeCounts {
        let mut c = SafeCounts::default();
        for info in self.blocks.values() {
            c.add(info.safe_bits(self.min_replication));
        }
        c
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

    /// The block for change; the map's `SafeCounts` follow the change when the returned
    /// handle is dropped.
    pub fn get_mut(&mut self, id: u64) -> Option<BlockMut<'_>> {
        let min = self.min_replication;
        let info = self.blocks.get_mut(id)?;
        Some(BlockMut {
            info,
            safe: &mut self.safe,
            min,
        })
    }

    pub fn contains(&self, id: u64) -> bool {
        self.blocks.contains_key(id)
    }

    /// Every (block id, block).
    pub fn iter(&self) -> impl Iterator<Item = (u64, &BlockInfo)> {
        self.blocks.iter()
    }

    /// Every block id (a snapshot, for work done in chunks outside the lock).
    pub fn ids(&self) -> Vec<u64> {
        self.blocks.keys().collect()
    }

    /// Up to `n` block ids above `after` (from the first with None), in increasing order.
    pub fn ids_after(&self, after: Option<u64>, n: usize) -> Vec<u64> {
        self.blocks.keys_after(after, n)
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
        self.storage(r.storage()).map_or(&NONE, |s| &s.dn_uuid)
    }

    /// The id of the storage a replica is on.
    pub fn storage_id_of(&self, r: &Replica) -> &Arc<str> {
        self.storage(r.storage()).map_or(&NONE, |s| &s.storage_id)
    }

    /// A test of whether a storage belongs to DataNode `dn`.
    pub fn on_node<'a>(&'a self, dn: &'a str) -> impl Fn(StorageIdx) -> bool + 'a {
        // The storage's uuid is most often the very string `dn` points at (both the
        // registry's `Arc`): equal addresses spare the comparison.
        move |idx| {
            self.storage(idx)
                .is_some_and(|s| std::ptr::eq(&*s.dn_uuid, dn) || &*s.dn_uuid == dn)
        }
    }

    /// Inserts block `id`; an existing entry with the same id is replaced (its replicas
    /// are dropped from the storage index). `info`'s replicas must name storages of this
    /// map.
    pub fn insert(&mut self, id: u64, mut info: BlockInfo) {
        if let Some(old) = self.blocks.remove(id) {
            self.safe.sub(old.counted);
            self.unindex(id, &old);
        }
        info.counted = 0;
        self.safe.reconcile(&mut info, self.min_replication);
        for r in &info.replicas {
            self.seq += 1;
            let seq = self.seq;
            if let Some(s) = self.storage_mut(r.storage()) {
                s.record(id, seq);
            }
        }
        self.blocks.insert(id, info);
    }

    /// Removes a block and returns it, replicas included.
    pub fn remove(&mut self, id: u64) -> Option<BlockInfo> {
        let mut info = self.blocks.remove(id)?;
        self.safe.sub(info.counted);
        info.counted = 0;
        self.unindex(id, &info);
        Some(info)
    }

    fn unindex(&mut self, id: u64, info: &BlockInfo) {
        for r in &info.replicas {
            if let Some(s) = self.storage_mut(r.storage()) {
                s.blocks.remove(id);
            }
        }
    }

    /// The slot of `storage_id` (made if new), last seen on `dn_uuid`.
    pub fn storage_entry(&mut self, storage_id: &Arc<str>, dn_uuid: &Arc<str>) -> StorageIdx {
        if let Some(idx) = self.storage_idx(storage_id) {
            if let Some(s) = self.storage_mut(idx)
                && !Arc::ptr_eq(&s.dn_uuid, dn_uuid)
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
                // More than 16 M storages at once (a replica names its storage in 24
                // bits) would be 4,000 DataNodes of 4,000 disks each; the last index is
                // `block::VACANT`, never handed out.
                let idx = StorageIdx(
                    u32::try_from(self.slots.len())
                        .unwrap_or(u32::MAX)
                        .min(VACANT.0 - 1),
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
        let min = self.min_replication;
        let Some(info) = self.blocks.get_mut(reported.id) else {
            return AddResult::NoBlock;
        };
        let result = if let Some(r) = info.replica_on_mut(idx) {
            r.set_state(state);
            r.set_corrupt(None);
            info.set_replica_values(idx, reported.gs, reported.num_bytes);
            AddResult::Replaced
        } else {
            // One replica per DataNode: a replica that moved between storages of the same
            // node replaces the old entry.
            let slots = &self.slots;
            let same_node = info.replicas.iter().position(|r| {
                slots
                    .get(r.storage().0 as usize)
                    .and_then(Option::as_ref)
                    .is_some_and(|s| s.dn_uuid == *dn_uuid)
            });
            if let Some(pos) = same_node {
                let old = info.replicas.remove(pos);
                if let Some(Some(s)) = self.slots.get_mut(old.storage().0 as usize) {
                    s.blocks.remove(reported.id);
                }
            }
            let expected = usize::from(info.replication);
            info.replicas
                .push_expecting(Replica::new(idx, state), expected);
            info.set_replica_values(idx, reported.gs, reported.num_bytes);
            AddResult::Added
        };
        self.safe.reconcile(info, min);
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
        let min = self.min_replication;
        let info = self.blocks.get_mut(id)?;
        let pos = info.replicas.position(idx)?;
        let r = info.replicas.remove(pos);
        self.safe.reconcile(info, min);
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
                .find(|r| on(r.storage()))?;
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

    /// A full report of `storage_id` (on `dn_uuid`) begins. When the storage holds blocks,
    /// the report may remove those it does not list: the blocks recorded on the storage
    /// from now on are kept track of until `end_full_report`, and the sequence number to
    /// compare them with (`recorded_since`) is returned. None for an empty storage (a
    /// NameNode's first report of each): nothing to remove, nothing to keep track of.
    pub fn begin_full_report(&mut self, storage_id: &Arc<str>, dn_uuid: &Arc<str>) -> Option<u64> {
        let idx = self.storage_entry(storage_id, dn_uuid);
        let s = self.storage_mut(idx)?;
        if s.blocks.is_empty() {
            return None;
        }
        s.reports.get_or_insert_with(Default::default).running += 1;
        Some(self.seq)
    }

    /// Whether block `id` was recorded on `storage_id` after sequence number `start` (a
    /// full report that began then does not remove it).
    pub fn recorded_since(&self, storage_id: &str, id: u64, start: u64) -> bool {
        self.storage_idx(storage_id)
            .and_then(|i| self.storage(i))
            .and_then(|s| s.reports.as_ref())
            .and_then(|r| r.added.get(&id))
            .is_some_and(|&seq| seq > start)
    }

    /// A full report that `begin_full_report` gave a sequence number for has ended.
    pub fn end_full_report(&mut self, storage_id: &str) {
        let Some(s) = self
            .storage_idx(storage_id)
            .and_then(|i| self.storage_mut(i))
        else {
            return;
        };
        if let Some(r) = s.reports.as_mut() {
            r.running = r.running.saturating_sub(1);
            if r.running == 0 {
                s.reports = None;
            }
        }
    }

    /// Up to `n` block ids on `storage_id` from `from` on, in increasing order (a walk of
    /// the storage's blocks in bounded steps).
    pub fn storage_blocks_from(&self, storage_id: &str, from: u64, n: usize) -> Vec<u64> {
        self.storage_idx(storage_id)
            .and_then(|i| self.storage(i))
            .map(|s| s.blocks.iter_from(from).take(n).collect())
            .unwrap_or_default()
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
            r.added.insert(id, seq);
        }
    }
}

#[cfg(test)]
#[path = "blocks_map_tests.rs"]
mod tests;
