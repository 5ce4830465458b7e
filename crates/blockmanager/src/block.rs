//! Blocks, their states, and the replicas the block manager knows of.

use std::fmt;
use std::sync::Arc;

/// A block as the namespace and the DataNodes name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Block {
    pub id: u64,
    pub gs: u64,
    pub num_bytes: u64,
}

impl Block {
    pub fn new(id: u64, gs: u64, num_bytes: u64) -> Self {
        Block { id, gs, num_bytes }
    }
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "blk_{}_{}", self.id, self.gs)
    }
}

/// Block state on the NameNode (Hadoop's BlockUCState).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockUcState {
    UnderConstruction,
    UnderRecovery,
    Committed,
    Complete,
}

impl fmt::Display for BlockUcState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BlockUcState::UnderConstruction => "UNDER_CONSTRUCTION",
            BlockUcState::UnderRecovery => "UNDER_RECOVERY",
            BlockUcState::Committed => "COMMITTED",
            BlockUcState::Complete => "COMPLETE",
        })
    }
}

/// Replica state on a DataNode (Hadoop's ReplicaState / ReplicaStateProto values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReplicaState {
    Finalized = 0,
    Rbw = 1,
    Rwr = 2,
    Rur = 3,
    Temporary = 4,
}

impl ReplicaState {
    pub fn from_value(v: u64) -> Option<Self> {
        Some(match v {
            0 => ReplicaState::Finalized,
            1 => ReplicaState::Rbw,
            2 => ReplicaState::Rwr,
            3 => ReplicaState::Rur,
            4 => ReplicaState::Temporary,
            _ => return None,
        })
    }
}

impl fmt::Display for ReplicaState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReplicaState::Finalized => "FINALIZED",
            ReplicaState::Rbw => "RBW",
            ReplicaState::Rwr => "RWR",
            ReplicaState::Rur => "RUR",
            ReplicaState::Temporary => "TEMPORARY",
        })
    }
}

/// Why a replica is considered corrupt (Hadoop's CorruptReplicasMap.Reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CorruptReason {
    GenstampMismatch,
    SizeMismatch,
    InvalidState,
    /// Reported by a client or DataNode through reportBadBlocks.
    CorruptionReported,
}

impl CorruptReason {
    /// Hadoop's name of the reason (fsck's ReasonCode, metasave's Reason).
    pub fn label(self) -> &'static str {
        match self {
            CorruptReason::GenstampMismatch => "GENSTAMP_MISMATCH",
            CorruptReason::SizeMismatch => "SIZE_MISMATCH",
            CorruptReason::InvalidState => "INVALID_STATE",
            CorruptReason::CorruptionReported => "CORRUPTION_REPORTED",
        }
    }
}

/// A storage in the block manager's storage table (`blocks_map`): the index of its slot.
/// A replica names its storage by this, 4 bytes, instead of two shared strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StorageIdx(pub u32);

/// One replica of a block on one storage (whose DataNode the storage table knows).
/// 24 bytes, `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replica {
    /// Generation stamp and length as last reported.
    pub gs: u64,
    pub num_bytes: u64,
    pub storage: StorageIdx,
    pub state: ReplicaState,
    pub corrupt: Option<CorruptReason>,
}

impl Replica {
    /// A finalized, non-corrupt replica: what counts towards minimum replication.
    pub fn is_good_finalized(&self) -> bool {
        self.state == ReplicaState::Finalized && self.corrupt.is_none()
    }
}

/// A block's replicas: one boxed slice (16 bytes inline), sized on the first replica for
/// the block's expected replication and grown one slot at a time beyond it, so a block of
/// three replicas allocates once, 72 bytes, and never holds slots it does not expect (a
/// `Vec` grown by pushes held four; a slice reallocated per replica left a trail of freed
/// small chunks in the allocator). Slots past the replicas hold `VACANT`. Reads as a slice
/// of the replicas; order is the order they were added.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replicas(Box<[Replica]>);

/// Marks an unused slot of `Replicas` (no storage table hands out this index).
pub const VACANT: StorageIdx = StorageIdx(u32::MAX);

/// The most slots reserved ahead of replicas (a block of replication 512 grows as it goes).
const MAX_RESERVED: usize = 8;

const EMPTY_SLOT: Replica = Replica {
    gs: 0,
    num_bytes: 0,
    storage: VACANT,
    state: ReplicaState::Finalized,
    corrupt: None,
};

impl Replicas {
    /// How many replicas (slots before the first vacant one).
    fn count(&self) -> usize {
        self.0
            .iter()
            .position(|r| r.storage == VACANT)
            .unwrap_or(self.0.len())
    }

    /// Adds a replica; with no free slot, the slice is remade with room for `expected`
    /// replicas in all (at most `MAX_RESERVED`), or for just this one more.
    pub fn push_expecting(&mut self, r: Replica, expected: usize) {
        let n = self.count();
        if n < self.0.len() {
            self.0[n] = r;
            return;
        }
        let room = (n + 1).max(expected.min(MAX_RESERVED));
        let mut v = Vec::with_capacity(room);
        v.extend_from_slice(&self.0);
        v.push(r);
        v.resize(room, EMPTY_SLOT);
        self.0 = v.into_boxed_slice();
    }

    pub fn push(&mut self, r: Replica) {
        self.push_expecting(r, 0);
    }

    /// Removes and returns the replica at `pos` (panics if out of range, as `Vec::remove`).
    /// The slot is kept for the replica that comes to replace it; the last one going frees
    /// the slice.
    pub fn remove(&mut self, pos: usize) -> Replica {
        let n = self.count();
        let r = self[pos];
        if n == 1 {
            self.0 = Box::default();
            return r;
        }
        self.0.copy_within(pos + 1..n, pos);
        self.0[n - 1] = EMPTY_SLOT;
        r
    }

    pub fn position(&self, storage: StorageIdx) -> Option<usize> {
        self.iter().position(|r| r.storage == storage)
    }

    /// Slots allocated (replicas plus vacant ones).
    pub fn slots(&self) -> usize {
        self.0.len()
    }
}

impl std::ops::Deref for Replicas {
    type Target = [Replica];
    fn deref(&self) -> &[Replica] {
        &self.0[..self.count()]
    }
}

impl std::ops::DerefMut for Replicas {
    fn deref_mut(&mut self) -> &mut [Replica] {
        let n = self.count();
        &mut self.0[..n]
    }
}

impl<'a> IntoIterator for &'a Replicas {
    type Item = &'a Replica;
    type IntoIter = std::slice::Iter<'a, Replica>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Replicas {
    type Item = &'a mut Replica;
    type IntoIter = std::slice::IterMut<'a, Replica>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// Where a block under construction is expected to be written (the pipeline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedLocation {
    pub dn_uuid: Arc<str>,
    pub storage_id: Arc<str>,
}

/// A block's pipeline locations: empty (one word, no allocation) for every block that is
/// not being written — almost all of them — so a COMPLETE block in the map pays 8 bytes
/// for it, not a 24-byte `Vec`. Reads as a slice.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[allow(clippy::box_collection)] // the box is the point: one word when empty
pub struct Pipeline(Option<Box<Vec<ExpectedLocation>>>);

impl Pipeline {
    pub fn push(&mut self, e: ExpectedLocation) {
        self.0.get_or_insert_with(Default::default).push(e);
    }

    pub fn clear(&mut self) {
        self.0 = None;
    }
}

impl std::ops::Deref for Pipeline {
    type Target = [ExpectedLocation];
    fn deref(&self) -> &[ExpectedLocation] {
        self.0.as_deref().map_or(&[], |v| v.as_slice())
    }
}

impl From<Vec<ExpectedLocation>> for Pipeline {
    fn from(v: Vec<ExpectedLocation>) -> Self {
        Pipeline((!v.is_empty()).then(|| Box::new(v)))
    }
}

impl FromIterator<ExpectedLocation> for Pipeline {
    fn from_iter<I: IntoIterator<Item = ExpectedLocation>>(it: I) -> Self {
        it.into_iter().collect::<Vec<_>>().into()
    }
}

impl<'a> IntoIterator for &'a Pipeline {
    type Item = &'a ExpectedLocation;
    type IntoIter = std::slice::Iter<'a, ExpectedLocation>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// The recovery of a block whose writer is gone (the recovery part of Hadoop's
/// BlockUnderConstructionFeature): the recovery id (a new generation stamp), the primary
/// DataNode told to run it, and the nodes already chosen as primary by this or an
/// earlier attempt.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockRecovery {
    pub recovery_id: u64,
    pub primary: Option<Arc<str>>,
    pub tried: Vec<Arc<str>>,
}

/// Everything the block manager knows about one block.
#[derive(Clone, Debug)]
pub struct BlockInfo {
    pub block: Block,
    pub state: BlockUcState,
    pub replication: u16,
    pub inode_id: u64,
    /// Its replicas, each naming its storage by index (`BlocksMap::storage`).
    pub replicas: Replicas,
    /// The pipeline while the block is not COMPLETE.
    pub expected: Pipeline,
    /// Set while the block is UNDER_RECOVERY (and kept until it is committed, so a later
    /// attempt knows which primaries were tried).
    /// Boxed: almost every block is never recovered, and inline it would add 40 bytes to
    /// every block in the map.
    pub recovery: Option<Box<BlockRecovery>>,
}

impl BlockInfo {
    pub fn new_under_construction(
        block: Block,
        inode_id: u64,
        replication: u16,
        expected: Vec<ExpectedLocation>,
    ) -> Self {
        BlockInfo {
            block,
            state: BlockUcState::UnderConstruction,
            replication,
            inode_id,
            replicas: Replicas::default(),
            expected: expected.into(),
            recovery: None,
        }
    }

    pub fn is_complete(&self) -> bool {
        self.state == BlockUcState::Complete
    }

    pub fn replica_on(&self, storage: StorageIdx) -> Option<&Replica> {
        self.replicas.iter().find(|r| r.storage == storage)
    }

    pub fn replica_on_mut(&mut self, storage: StorageIdx) -> Option<&mut Replica> {
        self.replicas.iter_mut().find(|r| r.storage == storage)
    }

    /// Finalized, non-corrupt replicas whose generation stamp matches the block's.
    pub fn good_finalized(&self) -> usize {
        self.replicas
            .iter()
            .filter(|r| r.is_good_finalized() && r.gs == self.block.gs)
            .count()
    }

    pub fn corrupt_replicas(&self) -> usize {
        self.replicas.iter().filter(|r| r.corrupt.is_some()).count()
    }
}
