//! Sequential short-circuit reads: a block's local replica is read in pieces of
//! `dfs.client.read.shortcircuit.buffer.size`. A piece the page cache holds is read and verified
//! right here (`LocalReplica::read_cached`: `RWF_NOWAIT`, never waiting for the disk), with no
//! hand-over to another thread, into memory the previous piece used once the caller has
//! dropped it; the task then yields, so that a reader whose pieces are all cached shares its
//! worker thread piece by piece (about 0.1 ms of CPU each) instead of holding it for a whole
//! block. A piece that is not cached is read on a blocking thread, with the piece after it
//! read ahead on another while the caller uses this one. A piece read ahead that is never
//! asked for (the reader moved) is dropped unverified and unreported; a corrupt or unusable
//! piece is handled when the reader reaches it, as `local.rs` does.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use rhdfs_proto::hdfs::DatanodeInfoProto;
use tokio::task::JoinHandle;

use super::FileReader;
use crate::short_circuit::{LocalReadError, LocalReplica, PieceBuf, piece, spawn_read};

type PieceTask = JoinHandle<(PieceBuf, Result<Bytes, LocalReadError>)>;

/// Buffers a stream keeps for its pieces: the one the caller holds, one being filled, one
/// read ahead.
const MAX_SPARE: usize = 3;

/// A sequential short-circuit read of one block.
pub(super) struct LocalStream {
    /// The block's index in the reader's list and its id (the list can be re-fetched).
    index: usize,
    block_id: u64,
    /// The block's length.
    block_len: u64,
    dn: DatanodeInfoProto,
    replica: Arc<LocalReplica>,
    /// Block offset of the next byte the reader asks for.
    next: u64,
    /// A piece being read on a blocking thread, and the block offset where it starts.
    ahead: Option<(u64, PieceTask)>,
    /// Buffers not lent to a task; the oldest is used first.
    spare: VecDeque<PieceBuf>,
}

impl LocalStream {
    /// A buffer for a piece of `n` bytes: one whose memory the caller has given back if there
    /// is one, else the oldest (its memory is then replaced), else a new one.
    fn buffer(&mut self, n: u64) -> PieceBuf {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        match self.spare.iter_mut().position(|b| b.reusable(n)) {
            Some(i) => self.spare.remove(i).unwrap_or_default(),
            None if self.spare.len() >= MAX_SPARE => self.spare.pop_front().unwrap_or_default(),
            None => PieceBuf::default(),
        }
    }

    fn give_back(&mut self, buf: PieceBuf) {
        if self.spare.len() < MAX_SPARE {
            self.spare.push_back(buf);
        }
    }

    /// The length of the piece at `at`.
    fn piece_len(&self, at: u64, piece_len: u64) -> u64 {
        piece_len.min(self.block_len.saturating_sub(at))
    }

    /// Starts reading the piece at `at` on a blocking thread.
    fn spawn(&mut self, at: u64, piece_len: u64, skip_checksum: bool) -> Option<PieceTask> {
        let n = self.piece_len(at, piece_len);
        if n == 0 {
            return None;
        }
        let buf = self.buffer(n);
        Some(spawn_read(self.replica.clone(), at, n, skip_checksum, buf))
    }
}

impl FileReader {
    /// The next piece of block `i` from block offset `off`, from a local replica; `None` when
    /// no local replica can give it (read through TCP).
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
                Some(s) if s.index == i && s.block_id == block_id && s.next == off => s,
                other => {
                    // Elsewhere (a new block, or the reader moved): a new stream, with the
                    // old one's buffers (a piece it read ahead is dropped).
                    let spare = other.map(|s| s.spare).unwrap_or_default();
                    let (dn, replica) = self.local_replica(i).await?;
                    replica.advise_sequential();
                    LocalStream {
                        index: i,
                        block_id,
                        block_len,
                        dn,
                        replica,
                        next: off,
                        ahead: None,
                        spare,
                    }
                }
            };
            let got = match stream.ahead.take() {
                Some((at, task)) if at == off => {
                    let (buf, got) = piece(task).await;
                    stream.give_back(buf);
                    got
                }
                _ => {
                    let n = stream.piece_len(off, piece_len);
                    let mut buf = stream.buffer(n);
                    let cached = stream.replica.read_cached(off, n, skip, &mut buf);
                    match cached {
                        Ok(Some(b)) => {
                            stream.give_back(buf);
                            // Read and verified on this async thread with no await: let
                            // the worker's other tasks run before the next piece.
                            tokio::task::yield_now().await;
                            Ok(b)
                        }
                        Ok(None) => {
                            // Not in the page cache: this piece and the next on blocking
                            // threads.
                            stream.give_back(buf);
                            match stream.spawn(off, piece_len, skip) {
                                Some(task) => {
                                    let after = off + n;
                                    stream.ahead =
                                        stream.spawn(after, piece_len, skip).map(|t| (after, t));
                                    let (buf, got) = piece(task).await;
                                    stream.give_back(buf);
                                    got
                                }
                                None => Ok(Bytes::new()),
                            }
                        }
                        Err(e) => {
                            stream.give_back(buf);
                            Err(e)
                        }
                    }
                }
            };
            match got {
                Ok(b) if !b.is_empty() => {
                    stream.next += b.len() as u64;
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
                    stream.ahead = None;
                    stream.next = u64::MAX;
                    self.local_stream = Some(stream);
                    self.local_failed(i, &dn, e).await;
                }
            }
        }
    }
}
