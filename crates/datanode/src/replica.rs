//! Replica states and the in-memory record of one replica.

use std::fmt;

use crate::checksum::ChecksumSpec;

/// Replica states; `code()` is `ReplicaStateProto`'s number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplicaState {
    Finalized,
    Rbw,
    Rwr,
    Rur,
    Temporary,
}

impl ReplicaState {
    pub fn code(self) -> u64 {
        match self {
            ReplicaState::Finalized => 0,
            ReplicaState::Rbw => 1,
            ReplicaState::Rwr => 2,
            ReplicaState::Rur => 3,
            ReplicaState::Temporary => 4,
        }
    }
}

impl fmt::Display for ReplicaState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ReplicaState::Finalized => "FINALIZED",
            ReplicaState::Rbw => "RBW",
            ReplicaState::Rwr => "RWR",
            ReplicaState::Rur => "RUR",
            ReplicaState::Temporary => "TEMPORARY",
        };
        f.write_str(s)
    }
}

/// What an RUR (ReplicaUnderRecovery) replica remembers: the state it had before the
/// recovery took it over (its files are still where that state keeps them) and the id of the
/// recovery that owns it (the generation stamp it will take).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnderRecovery {
    pub original: ReplicaState,
    pub recovery_id: u64,
}

/// One replica as the dataset knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaInfo {
    pub id: u64,
    pub gs: u64,
    pub state: ReplicaState,
    /// Bytes written to disk (the visible length of an RBW replica).
    pub num_bytes: u64,
    /// Index of the volume holding the files.
    pub volume: usize,
    /// Checksum the replica is stored with.
    pub checksum: ChecksumSpec,
    /// Incremented each time a writer (re)opens the replica; stale writers stop updating it.
    pub writer_epoch: u64,
    /// Set while the replica is RUR (`state == Rur`).
    pub recovery: Option<UnderRecovery>,
}

impl ReplicaInfo {
    /// Whether this is still the FINALIZED replica `seen` was: same epoch (no state change
    /// since), generation stamp, volume and length. The disk checks act on a replica only
    /// when it is.
    pub fn is_same_finalized(&self, seen: &ReplicaInfo) -> bool {
        self.state == ReplicaState::Finalized
            && self.id == seen.id
            && self.writer_epoch == seen.writer_epoch
            && self.gs == seen.gs
            && self.volume == seen.volume
            && self.num_bytes == seen.num_bytes
    }

    /// The state before a block recovery took the replica over (its own state otherwise).
    /// This is what block reports and initReplicaRecovery tell about it, as Hadoop does.
    pub fn original_state(&self) -> ReplicaState {
        match (self.state, self.recovery) {
            (ReplicaState::Rur, Some(u)) => u.original,
            // An RUR without its record can only have come from the rbw directory.
            (ReplicaState::Rur, None) => ReplicaState::Rwr,
            (s, _) => s,
        }
    }

    /// The id of the recovery owning an RUR replica.
    pub fn recovery_id(&self) -> Option<u64> {
        self.recovery.map(|u| u.recovery_id)
    }
}
