//! `FileReader`: reads a file block by block from DataNodes, trying replicas in the
//! NameNode's order (a local replica first read short-circuit, `local`), remembering failed
//! nodes, and reporting corrupt replicas.

use std::collections::HashSet;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use rhdfs_ipc::RpcClient;
use rhdfs_proto::hdfs::{
    DatanodeInfoProto, GetReplicaVisibleLengthRequestProto, GetReplicaVisibleLengthResponseProto,
    LocatedBlockProto, ReportBadBlocksRequestProto, ReportBadBlocksResponseProto,
};
use rhdfs_proto::protocols::CLIENT_DATANODE_PROTOCOL;
use rhdfs_transfer::{BlockReader, ReadBlockParams, TransferError};
use tokio::net::TcpStream;
use tracing::{debug, warn};

use crate::datanode::{block_local_name, block_name, ipc_addr, xfer_addr};
use crate::error::{ClientError, Result};
use crate::filesystem::{FileSystem, WHOLE_FILE};

/// Consecutive failures without progress after which a read gives up.
const MAX_FAILURES_WITHOUT_PROGRESS: u32 = 16;

mod ahead;
mod local;
mod pread;

struct Current {
    index: usize,
    reader: BlockReader<TcpStream>,
    node: DatanodeInfoProto,
    addr: String,
}

/// An open file for reading.
pub struct FileReader {
    fs: FileSystem,
    src: String,
    blocks: Vec<LocatedBlockProto>,
    len: u64,
    pos: u64,
    pending: Bytes,
    cur: Option<Current>,
    dead: HashSet<String>,
    reported: HashSet<(u64, String)>,
    /// (block id, DataNode) pairs whose replica is not read short-circuit by this reader.
    no_local: HashSet<(u64, String)>,
    /// The sequential short-circuit read in progress, with its piece read ahead.
    local_stream: Option<ahead::LocalStream>,
    /// Where positioned short-circuit reads are read into, piece by piece.
    pread_buf: crate::short_circuit::PieceBuf,
    failures: u32,
}

impl std::fmt::Debug for FileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileReader")
            .field("src", &self.src)
            .field("len", &self.len)
            .field("pos", &self.pos)
            .finish()
    }
}

impl FileSystem {
    /// Opens a file for reading.
    pub async fn open(&self, p: &str) -> Result<FileReader> {
        let src = self.resolve(p)?;
        let mut r = FileReader {
            fs: self.clone(),
            src,
            blocks: Vec::new(),
            len: 0,
            pos: 0,
            pending: Bytes::new(),
            cur: None,
            dead: HashSet::new(),
            reported: HashSet::new(),
            no_local: HashSet::new(),
            local_stream: None,
            pread_buf: Default::default(),
            failures: 0,
        };
        r.fetch_locations().await?;
        Ok(r)
    }
}

impl FileReader {
    /// File length (including the visible part of a block still being written).
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Position of the next sequential read.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// The absolute path being read.
    pub fn path(&self) -> &str {
        &self.src
    }

    /// DataNodes ("ip:port") this reader stopped using after a failure.
    pub fn dead_nodes(&self) -> Vec<String> {
        let mut v: Vec<String> = self.dead.iter().cloned().collect();
        v.sort();
        v
    }

    /// The DataNodes ("ip:port") a read of the block holding `offset` tries, in order (those
    /// that failed for this reader left out).
    pub fn replica_order(&self, offset: u64) -> Vec<String> {
        let use_host = self.fs.inner.conf.use_datanode_hostname;
        self.block_index(offset)
            .map(|i| {
                self.blocks[i]
                    .locs
                    .iter()
                    .map(|dn| xfer_addr(dn, use_host))
                    .filter(|a| !self.dead.contains(a))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Moves the sequential position.
    pub fn seek(&mut self, pos: u64) {
        if pos != self.pos {
            self.cur = None;
            self.pending = Bytes::new();
            self.pos = pos.min(self.len);
        }
    }

    async fn fetch_locations(&mut self) -> Result<()> {
        let lbs = self.fs.located_blocks(&self.src, 0, WHOLE_FILE).await?;
        let mut blocks = lbs.blocks;
        let mut len = lbs.file_length;
        if !lbs.is_last_block_complete
            && let Some(last) = lbs.last_block
        {
            let visible = if last.locs.is_empty() {
                0
            } else {
                self.visible_length(&last).await?
            };
            let mut last = last;
            last.b.num_bytes = Some(visible);
            len = last.offset + visible;
            match blocks.iter_mut().find(|b| b.b.block_id == last.b.block_id) {
                Some(b) => *b = last,
                None => blocks.push(last),
            }
        }
        self.blocks = blocks;
        self.len = len;
        Ok(())
    }

    /// getReplicaVisibleLength on the DataNodes' IPC ports, for a block being written.
    async fn visible_length(&self, lb: &LocatedBlockProto) -> Result<u64> {
        let use_host = self.fs.inner.conf.use_datanode_hostname;
        for dn in &lb.locs {
            let addr = ipc_addr(dn, use_host);
            let user = block_local_name(&lb.b);
            let res = async {
                let c = RpcClient::connect(&addr, CLIENT_DATANODE_PROTOCOL, &user).await?;
                let r: GetReplicaVisibleLengthResponseProto = c
                    .call(
                        "getReplicaVisibleLength",
                        &GetReplicaVisibleLengthRequestProto {
                            block: lb.b.clone(),
                        },
                    )
                    .await?;
                c.close().await;
                Ok::<_, rhdfs_ipc::IpcError>(r.length)
            }
            .await;
            match res {
                Ok(n) => return Ok(n),
                Err(e) => warn!("getReplicaVisibleLength from {addr} failed: {e}"),
            }
        }
        Err(ClientError::Failed(format!(
            "Cannot obtain block length for LocatedBlock{{{}; getBlockSize()={}; corrupt={}; offset={}; locs={}}}",
            block_name(&lb.b),
            lb.b.num_bytes.unwrap_or(0),
            lb.corrupt,
            lb.offset,
            crate::datanode::display_list(&lb.locs)
        )))
    }

    fn block_index(&self, pos: u64) -> Option<usize> {
        self.blocks.iter().position(|b| {
            let n = b.b.num_bytes.unwrap_or(0);
            b.offset <= pos && pos < b.offset + n
        })
    }

    /// Connects to the first usable replica of block `i` for `[off, off + len)` (offsets in
    /// the block). After every replica failed, re-fetches the locations and tries again, up to
    /// dfs.client.max.block.acquire.failures times.
    async fn open_block(
        &mut self,
        i: usize,
        off: u64,
        len: u64,
    ) -> Result<(BlockReader<TcpStream>, DatanodeInfoProto, usize, String)> {
        let cc = self.fs.inner.conf.clone();
        let mut index = i;
        for attempt in 0..=cc.max_block_acquire_failures {
            let lb = self.blocks[index].clone();
            for dn in &lb.locs {
                let addr = xfer_addr(dn, cc.use_datanode_hostname);
                if self.dead.contains(&addr) {
                    continue;
                }
                let params =
                    ReadBlockParams::new(lb.b.clone(), self.fs.client_name().to_string(), off, len);
                let mut params = params;
                params.token = Some(lb.block_token.clone());
                match connect_block(&self.fs, &addr, &params).await {
                    Ok(r) => return Ok((r, dn.clone(), index, addr)),
                    Err(e) => {
                        warn!(
                            "Failed to connect to {addr} for block {}, add to deadNodes and continue: {e}",
                            block_name(&lb.b)
                        );
                        self.dead.insert(addr);
                    }
                }
            }
            if attempt == cc.max_block_acquire_failures {
                break;
            }
            let base = cc.retry_window_base.as_millis() as f64;
            let wait =
                base * f64::from(attempt) + base * f64::from(attempt + 1) * rand::random::<f64>();
            warn!(
                "No live replica of {} for {}; retrying in {:.0} ms (attempt {})",
                block_name(&lb.b),
                self.src,
                wait,
                attempt + 1
            );
            tokio::time::sleep(Duration::from_millis(wait as u64)).await;
            let block_offset = lb.offset;
            self.fetch_locations().await?;
            self.dead.clear();
            index = self
                .blocks
                .iter()
                .position(|b| b.offset == block_offset)
                .ok_or_else(|| ClientError::BlockMissing {
                    block: block_name(&lb.b),
                    path: self.src.clone(),
                })?;
        }
        Err(ClientError::BlockMissing {
            block: block_name(&self.blocks[index].b),
            path: self.src.clone(),
        })
    }

    /// Records a replica failure: the node is skipped from now on, and a checksum error is
    /// reported to the NameNode (reportBadBlocks).
    async fn replica_failed(&mut self, i: usize, dn: &DatanodeInfoProto, e: &TransferError) {
        let addr = xfer_addr(dn, self.fs.inner.conf.use_datanode_hostname);
        warn!("read of {} from {addr} failed: {e}", self.src);
        self.dead.insert(addr.clone());
        if matches!(e, TransferError::Checksum { .. }) {
            let lb = &self.blocks[i];
            if self.reported.insert((lb.b.block_id, addr.clone())) {
                let pos = lb.locs.iter().position(|d| d.id == dn.id);
                let bad = LocatedBlockProto {
                    b: lb.b.clone(),
                    offset: lb.offset,
                    locs: vec![dn.clone()],
                    corrupt: false,
                    block_token: lb.block_token.clone(),
                    is_cached: Vec::new(),
                    storage_types: pos
                        .and_then(|p| lb.storage_types.get(p).copied())
                        .into_iter()
                        .collect(),
                    storage_i_ds: pos
                        .and_then(|p| lb.storage_i_ds.get(p).cloned())
                        .into_iter()
                        .collect(),
                    block_indices: None,
                    block_tokens: Vec::new(),
                };
                warn!(
                    "Found Checksum error for {} from {addr} at {}; reporting it to the NameNode",
                    block_name(&lb.b),
                    lb.offset
                );
                let req = ReportBadBlocksRequestProto { blocks: vec![bad] };
                if let Err(e) = self
                    .fs
                    .call::<_, ReportBadBlocksResponseProto>("reportBadBlocks", &req)
                    .await
                {
                    warn!("reportBadBlocks failed: {e}");
                }
            }
        }
    }

    /// The next piece of the file from the current position; `None` at the end.
    pub async fn read_chunk(&mut self) -> Result<Option<Bytes>> {
        if !self.pending.is_empty() {
            let b = std::mem::take(&mut self.pending);
            self.pos += b.len() as u64;
            return Ok(Some(b));
        }
        loop {
            if self.pos >= self.len {
                // The short-circuit buffers go back; a seek makes new ones if needed.
                self.local_stream = None;
                return Ok(None);
            }
            if self.cur.is_none() {
                let i = self.block_index(self.pos).ok_or_else(|| {
                    ClientError::Failed(format!(
                        "no block of {} covers offset {}",
                        self.src, self.pos
                    ))
                })?;
                let lb = &self.blocks[i];
                let off = self.pos - lb.offset;
                let len = lb.b.num_bytes.unwrap_or(0) - off;
                if let Some(b) = self.read_local_sequential(i, off).await
                    && !b.is_empty()
                {
                    self.failures = 0;
                    self.pos += b.len() as u64;
                    return Ok(Some(b));
                }
                let (reader, node, index, addr) = self.open_block(i, off, len).await?;
                self.cur = Some(Current {
                    index,
                    reader,
                    node,
                    addr,
                });
            }
            let Some(cur) = self.cur.as_mut() else {
                continue;
            };
            match cur.reader.next_chunk().await {
                Ok(Some(b)) => {
                    self.failures = 0;
                    // The range is all here: read the empty last packet (sending the read
                    // status) so the connection can serve the next block.
                    if cur.reader.remaining() == 0
                        && matches!(cur.reader.next_chunk().await, Ok(None))
                        && let Some(cur) = self.cur.take()
                    {
                        release(&self.fs, &cur.addr, cur.reader);
                    }
                    let room = (self.len - self.pos) as usize;
                    let b = if b.len() > room { b.slice(..room) } else { b };
                    self.pos += b.len() as u64;
                    return Ok(Some(b));
                }
                Ok(None) => {
                    if let Some(cur) = self.cur.take() {
                        release(&self.fs, &cur.addr, cur.reader);
                    }
                }
                Err(e) => {
                    let Some(cur) = self.cur.take() else { continue };
                    self.replica_failed(cur.index, &cur.node, &e).await;
                    self.failures += 1;
                    if self.failures > MAX_FAILURES_WITHOUT_PROGRESS {
                        return Err(e.into());
                    }
                }
            }
        }
    }

    /// Reads into `buf` from the current position; 0 at the end of the file.
    pub async fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let chunk = match self.read_chunk().await? {
            Some(c) => c,
            None => return Ok(0),
        };
        let n = chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        if n < chunk.len() {
            self.pos -= (chunk.len() - n) as u64;
            self.pending = chunk.slice(n..);
        }
        Ok(n)
    }

    /// Reads everything from the current position to the end.
    pub async fn read_to_end(&mut self) -> Result<Bytes> {
        let mut out = BytesMut::with_capacity((self.len - self.pos.min(self.len)) as usize);
        while let Some(b) = self.read_chunk().await? {
            out.extend_from_slice(&b);
        }
        Ok(out.freeze())
    }

    /// Positioned read into `buf`; returns the number of bytes read (0 at or past the end).
    pub async fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let b = self.read_range(offset, buf.len() as u64).await?;
        buf[..b.len()].copy_from_slice(&b);
        Ok(b.len())
    }
}

/// Starts READ_BLOCK on `addr`, on an idle cached connection when there is one (a cached
/// connection the DataNode has meanwhile closed is replaced by a new one).
pub(crate) async fn connect_block(
    fs: &FileSystem,
    addr: &str,
    params: &ReadBlockParams,
) -> std::result::Result<BlockReader<TcpStream>, TransferError> {
    let cfg = &fs.inner.conf.transfer;
    if let Some(s) = fs.inner.peers.take(addr) {
        match BlockReader::start_tcp(s, params, cfg).await {
            Ok(r) => return Ok(r),
            Err(e) => debug!("cached connection to {addr} failed ({e}); opening a new one"),
        }
    }
    fs.inner.peers.note_opened();
    BlockReader::connect(addr, params, cfg).await
}

/// Returns a finished reader's connection to the cache.
pub(crate) fn release(fs: &FileSystem, addr: &str, reader: BlockReader<TcpStream>) {
    if let Some(s) = reader.into_reusable() {
        fs.inner.peers.put(addr, s);
    }
}
