//! The crate's error type and its mapping into openraft's `StorageError`.

use std::io;
use std::path::PathBuf;

use openraft::{AnyError, ErrorSubject, ErrorVerb, StorageError, StorageIOError};

/// Everything that can go wrong in the Raft log store or the state machine adapter.
#[derive(Debug, thiserror::Error)]
pub enum RaftLogError {
    /// An I/O operation on a named file or directory failed.
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Bytes read from disk do not decode (bad checksum, impossible length, unknown kind).
    #[error("corrupt raft log {path} at byte offset {offset}: {reason}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    /// A record's payload or the meta file does not decode.
    #[error("cannot decode {what}: {reason}")]
    Decode { what: &'static str, reason: String },
    /// An entry is larger than the edit-log framing allows.
    #[error("raft entry {index} of {len} bytes exceeds the record limit of {max}")]
    TooLarge { index: u64, len: usize, max: usize },
    /// An earlier write or sync failed: nothing may be claimed durable any more.
    #[error("raft log writer failed earlier: {0}")]
    Failed(String),
    /// The writer thread is gone (the store was closed).
    #[error("raft log writer is closed")]
    Closed,
    /// Another store (in this process or another) still holds the directory's lock file.
    #[error("raft log directory {0} is in use by another store")]
    Locked(PathBuf),
    /// The state machine application refused a snapshot or failed to build one.
    #[error("state machine: {0}")]
    App(String),
}

impl RaftLogError {
    /// Wraps an I/O error with the operation and the path it concerned.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        RaftLogError::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// As openraft's error about `subject`, for the `verb` that failed.
    pub fn into_storage(self, subject: ErrorSubject<u64>, verb: ErrorVerb) -> StorageError<u64> {
        StorageIOError::new(subject, verb, AnyError::new(&self)).into()
    }

    /// As an `io::Error`, for openraft's log-flushed callback.
    pub fn into_io(self) -> io::Error {
        match self {
            RaftLogError::Io { source, .. } => source,
            other => io::Error::other(other.to_string()),
        }
    }
}

/// Result alias for this crate.
pub type Result<T, E = RaftLogError> = std::result::Result<T, E>;
