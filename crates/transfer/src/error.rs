//! The one error type of this crate.

use std::io;

/// Errors of the data-transfer codec and the block-level client helpers.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    /// Socket or file I/O failed (includes unexpected EOF).
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),

    /// The peer sent something that does not follow DataTransferProtocol.
    #[error("protocol error: {0}")]
    Protocol(String),

    /// A chunk's CRC did not match. `chunk` is the index of the chunk within the verified
    /// buffer (a packet), `offset` the block offset of that chunk's first byte.
    #[error("checksum mismatch in chunk {chunk} at block offset {offset}")]
    Checksum { chunk: u64, offset: u64 },

    /// The remote side answered with a non-SUCCESS `Status` (value of the proto enum).
    /// `first_bad_link` is the "ip:port" a pipeline head reported, empty if none.
    #[error(
        "remote error: status {status}{}{}",
        fmt_msg(message),
        fmt_link(first_bad_link)
    )]
    Remote {
        status: i32,
        message: String,
        first_bad_link: String,
    },

    /// A pipeline ack reported a failure. `index` is the pipeline position (0 = the node we
    /// talk to) of the highest-indexed node whose status is not SUCCESS, as the Java client
    /// reads it.
    #[error("pipeline ack for seqno {seqno} reports status {status} at pipeline index {index}")]
    Pipeline {
        seqno: i64,
        index: usize,
        status: i32,
    },

    /// An operation did not finish in time.
    #[error("timed out: {0}")]
    Timeout(String),
}

fn fmt_msg(m: &str) -> String {
    if m.is_empty() {
        String::new()
    } else {
        format!(": {m}")
    }
}

fn fmt_link(l: &str) -> String {
    if l.is_empty() {
        String::new()
    } else {
        format!(" (first bad link {l})")
    }
}

impl TransferError {
    /// Shorthand for [`TransferError::Protocol`].
    pub fn protocol(msg: impl Into<String>) -> Self {
        TransferError::Protocol(msg.into())
    }

    /// True for an I/O error that means the peer closed the connection.
    pub fn is_eof(&self) -> bool {
        matches!(self, TransferError::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof)
    }
}

/// Result alias of this crate.
pub type Result<T, E = TransferError> = std::result::Result<T, E>;
