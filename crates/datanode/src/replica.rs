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
}
