//! Error types of the DataNode.

use std::io;

/// Errors of the on-disk storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    #[error("bad meta file: {0}")]
    BadMeta(String),
    #[error("bad VERSION file {path}: {msg}")]
    BadVersion { path: String, msg: String },
    #[error("replica blk_{0} not found")]
    ReplicaNotFound(u64),
    #[error("replica blk_{id} already exists in state {state}")]
    ReplicaExists { id: u64, state: String },
    #[error("replica blk_{id}: {msg}")]
    BadReplicaState { id: u64, msg: String },
    /// A newer block recovery owns the replica (Hadoop's RecoveryInProgressException).
    #[error("replica blk_{id}: {msg}")]
    RecoveryInProgress { id: u64, msg: String },
    #[error("no volume has {0} bytes available")]
    OutOfSpace(u64),
    /// Hadoop's DiskErrorException: a failed disk check, too many failed volumes.
    #[error("{0}")]
    DiskError(String),
    #[error("no data directories configured")]
    NoVolumes,
    #[error("write to blk_{id} at offset {offset} leaves a gap after {len} bytes")]
    Gap { id: u64, offset: u64, len: u64 },
}

/// Errors starting or running the DataNode.
#[derive(Debug, thiserror::Error)]
pub enum DataNodeError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    #[error("configuration: {0}")]
    Config(String),
    #[error("task failed: {0}")]
    Join(String),
}
