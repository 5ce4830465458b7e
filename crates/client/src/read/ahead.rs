//! Sequential short-circuit reads with read-ahead: a block's local replica is read in pieces of
//! `dfs.client.read.shortcircuit.buffer.size` on blocking threads, the next piece read while
//! the caller uses the current one, into two buffers that take turns (a piece's memory is
//! reused once the caller has dropped it, so a long read allocates nothing per piece). A
//! piece read ahead that is never asked for (the reader moved) is dropped unverified and
//! unreported; a corrupt or unusable piece is handled when the reader reaches it, as
//! `local.rs` does.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use rhdfs_proto::hdfs::DatanodeInfoProto;
use tokio::task::JoinHandle;

use super::FileReader;
use crate::short_circuit::{LocalReadError, LocalReplica, PieceBuf, piece, spawn_read};

type PieceTask = JoinHandle<(PieceBuf, Result<Bytes, LocalReadError>)>;

/// A sequential short-circuit read of one block.
pub(super) struct LocalStream {
    /// The block's index in the reader's list and its id (the list can be re-fetched).
    index: usize,
    block_id: u64,
    /// The block's length.
    block_len: u64,
    dn: DatanodeInfoProto,
    replica: Arc<LocalReplica>,
    /// Block offset where the piece being read ahead starts.
    next: u64,
    ahead: Option<PieceTask>,
    /// Buffers not lent to a task; the oldest is used first.
    spare: VecDeque<PieceBuf>,
}

impl LocalStream {
    /// Starts reading the piece at `next` into the oldest spare buffer.
    fn read_ahead(&mut self, piece_len: u64, skip_checksum: bool, first: bool) {
        let n = piece_len.min(self.block_len.saturating_sub(self.next));
        if n == 0 {
            self.ahead = None;
            return;
        }
        let buf = self.spare.pop_front().unwrap_or_default();
        self.ahead = Some(spawn_read(
            self.replica.clone(),
            self.next,
            n,
            skip_checksum,
            buf,
            first,
        ));
    }
}

impl FileReader {
    /// The next piece of block `i` from block offset `off`, from a local replica, reading the
    /// piece after it ahead; `None` when no local replica can give it (read through TCP).
    pub(super) async fn read_local_sequential(&mut self, i: usize, off: u64) -> Option<Bytes> {
        let sc = &self.fs.inner.short_circuit;
        if !sc.enabled() {
            return None;
        }
        let (piece_len, skip) = (sc.buffer_size(), sc.skip_checksum());
        let block_id = self.blocks[i].b.block_id;
        let block_len = self.blocks[i].b.num_bytes.unwrap_or(0);
        loop {
            let mut stream = match self.local_stream.take() {
                Some(s)
                    if s.index == i
                        && s.block_id == block_id
                        && s.next == off
                        && s.ahead.is_some() =>
                {
                    s
                }
                other => {
                    // Elsewhere (a new block, or the reader moved): a new stream, with the
                    // old one's buffers.
                    let spare = other.map(|s| s.spare).unwrap_or_default();
                    let (dn, replica) = self.local_replica(i).await?;
                    let mut s = LocalStream {
                        index: i,
                        block_id,
                        block_len,
                        dn,
                        replica,
                        next: off,
                        ahead: None,
                        spare,
                    };
                    s.read_ahead(piece_len, skip, true);
                    s
                }
            };
            let Some(task) = stream.ahead.take() else {
                self.local_stream = Some(stream);
                return None;
            };
            let (buf, got) = piece(task).await;
            stream.spare.push_back(buf);
            match got {
                Ok(b) if !b.is_empty() => {
                    stream.next += b.len() as u64;
                    stream.read_ahead(piece_len, skip, false);
                    self.fs.inner.short_circuit.count_read(b.len());
                    self.local_stream = Some(stream);
                    return Some(b);
                }
                Ok(_) => {
                    self.local_stream = Some(stream);
                    return None;
                }
                Err(e) => {
                    let dn = stream.dn.clone();
                    // Keep the buffers; the next turn opens another replica, if any.
                    self.local_stream = Some(stream);
                    self.local_failed(i, &dn, e).await;
                }
            }
        }
    }
}
