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

impl BlockUcState {
    /// A block's state as an image or an edit log leaves it: the last block of a file
    /// being written is under construction (its writer or a recovery finishes it), every
    /// other block is complete.
    pub fn loaded(under_construction: bool) -> Self {
        if under_construction {
            BlockUcState::UnderConstruction
        } else {
            BlockUcState::Complete
        }
    }
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

mod construction;
mod replicas;

pub use construction::Construction;
pub use replicas::{INLINE, Replica, Replicas, VACANT};

/// Where a block under construction is expected to be written (the pipeline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedLocation {
    pub dn_uuid: Arc<str>,
    pub storage_id: Arc<str>,
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

/// Everything the block manager knows about one block. Not its file: the namespace
/// keeps each block's file once (its block → file map), fsck asks it there. Not its id
/// either: that is the blocks map's key (`BlockInfo::block(id)` puts them together).
#[derive(Clone, Debug)]
pub struct BlockInfo {
    /// The block's generation stamp and length. Changed only through `set_block` once
    /// replicas may be present (their generation stamp and length are the block's unless
    /// they hold their own).
    gs: u64,
    num_bytes: u64,
    pub state: BlockUcState,
    pub replication: u16,
    /// Its replicas, each naming its storage by index (`BlocksMap::storage`); three
    /// inline, 4 bytes each. Its spill record also holds the block's construction parts
    /// ([`BlockInfo::uc`]).
    pub replicas: Replicas,
    /// What the blocks map's `SafeCounts` hold of this block (`COUNTED_*` bits), so that
    /// a change to the block adjusts them exactly; in the struct's padding.
    pub(crate) counted: u8,
}

/// `BlockInfo::counted`: the block is counted as COMPLETE.
pub(crate) const COUNTED_COMPLETE: u8 = 1;
/// `BlockInfo::counted`: the block is counted as safe (COMPLETE with at least the minimum
/// good finalized replicas of its generation stamp).
pub(crate) const COUNTED_SAFE: u8 = 2;

impl BlockInfo {
    pub fn new_under_construction(
        block: Block,
        replication: u16,
        expected: Vec<ExpectedLocation>,
    ) -> Self {
        let mut info = BlockInfo {
            gs: block.gs,
            num_bytes: block.num_bytes,
            state: BlockUcState::UnderConstruction,
            replication,
            replicas: Replicas::default(),
            counted: 0,
        };
        info.set_expected(expected);
        info
    }

    /// The `COUNTED_*` bits this block should have with minimum replication `min`: what
    /// `fs_stats` counts as complete and safe when no replica is on a decommissioned node.
    pub(crate) fn safe_bits(&self, min: usize) -> u8 {
        if !self.is_complete() {
            0
        } else if self.good_finalized() >= min {
            COUNTED_COMPLETE | COUNTED_SAFE
        } else {
            COUNTED_COMPLETE
        }
    }

    /// The block's generation stamp.
    pub fn gs(&self) -> u64 {
        self.gs
    }

    /// The block's length.
    pub fn num_bytes(&self) -> u64 {
        self.num_bytes
    }

    /// The block, given its id (the blocks map's key).
    pub fn block(&self, id: u64) -> Block {
        Block::new(id, self.gs, self.num_bytes)
    }

    /// The pipeline while the block is not COMPLETE, and the recovery, set while the
    /// block is UNDER_RECOVERY (and kept until it is committed, so a later attempt knows
    /// which primaries were tried). Held in the replicas' spill record: almost every
    /// block has neither, and the record then has no word for them.
    pub fn uc(&self) -> &Construction {
        self.replicas.uc()
    }

    /// Replaces the pipeline (the recovery is kept).
    pub fn set_expected(&mut self, expected: Vec<ExpectedLocation>) {
        if expected.is_empty() && self.uc().expected().is_empty() {
            return;
        }
        self.replicas.change_uc(|c| c.set_expected(expected));
    }

    pub fn push_expected(&mut self, e: ExpectedLocation) {
        self.replicas.change_uc(|c| c.push_expected(e));
    }

    /// Forgets the pipeline (the recovery is kept).
    pub fn clear_expected(&mut self) {
        self.set_expected(Vec::new());
    }

    /// Replaces the recovery (the pipeline is kept).
    pub fn set_recovery(&mut self, recovery: Option<BlockRecovery>) {
        if recovery.is_none() && self.uc().recovery().is_none() {
            return;
        }
        self.replicas.change_uc(|c| c.set_recovery(recovery));
    }

    /// Removes the recovery and returns it (the pipeline is kept).
    pub fn take_recovery(&mut self) -> Option<BlockRecovery> {
        self.uc().recovery()?;
        self.replicas.change_uc(Construction::take_recovery)
    }

    pub fn is_complete(&self) -> bool {
        self.state == BlockUcState::Complete
    }

    pub fn replica_on(&self, storage: StorageIdx) -> Option<&Replica> {
        self.replicas.iter().find(|r| r.storage() == storage)
    }

    pub fn replica_on_mut(&mut self, storage: StorageIdx) -> Option<&mut Replica> {
        self.replicas.iter_mut().find(|r| r.storage() == storage)
    }

    /// Finalized, non-corrupt replicas whose generation stamp matches the block's.
    pub fn good_finalized(&self) -> usize {
        self.replicas
            .iter()
            .filter(|r| r.is_good_finalized() && self.replica_gs(r) == self.gs)
            .count()
    }

    /// The block (of id `id`) as replica `r` was last reported: its generation stamp and
    /// length are the block's unless it holds its own (`Replicas::own`).
    pub fn replica_block(&self, id: u64, r: &Replica) -> Block {
        let (gs, num_bytes) = self
            .replicas
            .own(r.storage())
            .unwrap_or((self.gs, self.num_bytes));
        Block::new(id, gs, num_bytes)
    }

    /// The generation stamp replica `r` was last reported with.
    pub fn replica_gs(&self, r: &Replica) -> u64 {
        self.replicas.own(r.storage()).map_or(self.gs, |o| o.0)
    }

    /// Records the generation stamp and length reported for the replica on `storage`
    /// (which must be present).
    pub fn set_replica_values(&mut self, storage: StorageIdx, gs: u64, num_bytes: u64) {
        let own = ((gs, num_bytes) != (self.gs, self.num_bytes)).then_some((gs, num_bytes));
        self.replicas.set_own(storage, own);
    }

    /// Changes the block's generation stamp and length to `new`'s (its id is the map's
    /// key, unchanged); each replica keeps the values it was reported with. Every change
    /// of them after the record is made goes through here, else a replica would take the
    /// block's new values as its own.
    pub fn set_block(&mut self, new: Block) {
        self.replicas
            .rebase((self.gs, self.num_bytes), (new.gs, new.num_bytes));
        (self.gs, self.num_bytes) = (new.gs, new.num_bytes);
    }

    pub fn corrupt_replicas(&self) -> usize {
        self.replicas
            .iter()
            .filter(|r| r.corrupt().is_some())
            .count()
    }
}
