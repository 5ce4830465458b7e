//! The crate's error type.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong in the edit log, the image store or the storage directories.
#[derive(Debug, thiserror::Error)]
pub enum EditLogError {
    /// An I/O operation on a named file or directory failed.
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A record in the middle of the log is damaged (bad CRC, impossible length, a txid out of
    /// sequence) or a finalized segment is incomplete. Never skipped silently.
    #[error("corrupt edit log {path} at byte offset {offset}: {reason}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    /// Transactions are missing between two segments (or after the image).
    #[error("edit log gap in {dir}: expected txid {expected}, next available is {found}")]
    Gap {
        dir: PathBuf,
        expected: u64,
        found: u64,
    },
    /// A txid that should be in a finalized segment is in none (read before a roll
    /// finalized it, or its segment was purged).
    #[error("edit log in {dir}: txid {txid} is in no finalized segment")]
    NotFinalized { dir: PathBuf, txid: u64 },
    /// `seen_txid` says transactions up to at least `seen` existed, but the log ends earlier.
    #[error("edit log in {dir} ends at txid {last} but seen_txid is {seen}: edits are missing")]
    MissingEdits { dir: PathBuf, last: u64, seen: u64 },
    /// Every storage directory has failed; nothing can be made durable any more.
    #[error("no storage directory left in service: {detail}")]
    NoDirectoriesLeft { detail: String },
    /// The log was closed (or failed) and accepts no more records.
    #[error("edit log is closed")]
    Closed,
    #[error(
        "the edit log holds txids up to {last}, past the image at txid {txid} it was to start after"
    )]
    AheadOfImage { txid: u64, last: u64 },
    /// `sync(txid)` was asked for a txid that was never handed out.
    #[error("txid {txid} has not been appended (last appended is {last})")]
    NotAppended { txid: u64, last: u64 },
    /// `format` found an existing, non-empty `current/` and `force` was not given.
    #[error("storage directory {0} is already formatted (use force to overwrite)")]
    AlreadyFormatted(PathBuf),
    /// The directory has no `current/VERSION`.
    #[error("storage directory {0} is not formatted")]
    NotFormatted(PathBuf),
    /// A VERSION file is malformed.
    #[error("bad VERSION file {path}: {reason}")]
    BadVersion { path: PathBuf, reason: String },
    /// Another process holds the directory's `in_use.lock`.
    #[error("storage directory {0} is in use by another process")]
    Locked(PathBuf),
    /// Image files exist but none of them passes its checksum.
    #[error("no usable image: {detail}")]
    NoValidImage { detail: String },
    /// The configuration names no storage directory, or an invalid one.
    #[error("bad storage configuration: {0}")]
    Config(String),
    /// A payload is larger than the record format allows.
    #[error("record payload of {len} bytes exceeds the limit of {max}")]
    RecordTooLarge { len: usize, max: usize },
    /// The async wrapper's blocking task failed (panicked or was cancelled).
    #[error("edit log sync task failed: {0}")]
    TaskFailed(String),
}

/// Result alias for this crate.
pub type Result<T, E = EditLogError> = std::result::Result<T, E>;

impl EditLogError {
    /// Wraps an I/O error with the operation and the path it concerned.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        EditLogError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}
