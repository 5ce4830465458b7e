//! Positioned reads: each block asked only for the bytes of the range it holds; with
//! `dfs.client.hedged.read.threadpool.size` > 0, a replica that has not answered within
//! `dfs.client.hedged.read.threshold.millis` gets company: the next replica is asked too and the
//! first complete answer wins (Hadoop's hedgedFetchBlockByteRange).

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use rhdfs_proto::hdfs::DatanodeInfoProto;
use rhdfs_transfer::{ReadBlockParams, TransferError};
use tracing::debug;

use super::{FileReader, MAX_FAILURES_WITHOUT_PROGRESS, connect_block, release};
use crate::datanode::xfer_addr;
use crate::error::{ClientError, Result};
use crate::filesystem::FileSystem;

/// One replica's answer: which node, whether it was a hedge, and the bytes or the error.
type Answer = (
    DatanodeInfoProto,
    bool,
    std::result::Result<Bytes, TransferError>,
);

/// Reads `[off, off + len)` of a block from `addr`, returning the connection to the cache.
async fn fetch(
    fs: FileSystem,
    addr: String,
    params: ReadBlockParams,
) -> Result<Bytes, TransferError> {
    let mut r = connect_block(&fs, &addr, &params).await?;
    let b = r.read_all().await?;
    release(&fs, &addr, r);
    Ok(b)
}

impl FileReader {
    /// Positioned read of `[offset, offset + len)` (clipped to the file); does not move the
    /// sequential position.
    pub async fn read_range(&mut self, offset: u64, len: u64) -> Result<Bytes> {
        let end = offset.saturating_add(len).min(self.len);
        let mut out = BytesMut::with_capacity(end.saturating_sub(offset) as usize);
        let mut p = offset;
        let mut failures = 0;
        while p < end {
            let i = self.block_index(p).ok_or_else(|| {
                ClientError::Failed(format!("no block of {} covers offset {p}", self.src))
            })?;
            let lb = &self.blocks[i];
            let block_end = lb.offset + lb.b.num_bytes.unwrap_or(0);
            let off = p - lb.offset;
            let n = end.min(block_end) - p;
            if let Some(b) = self.read_local(i, off, n).await
                && !b.is_empty()
            {
                p += b.len() as u64;
                out.extend_from_slice(&b);
                continue;
            }
            if self.fs.inner.conf.hedged_read_pool_size > 0
                && let Some(b) = self.fetch_hedged(i, off, n).await
            {
                p += b.len() as u64;
                out.extend_from_slice(&b);
                continue;
            }
            let (mut reader, node, index, addr) = self.open_block(i, off, n).await?;
            match reader.read_all().await {
                Ok(b) => {
                    release(&self.fs, &addr, reader);
                    p += b.len() as u64;
                    out.extend_from_slice(&b);
                }
                Err(e) => {
                    self.replica_failed(index, &node, &e).await;
                    failures += 1;
                    if failures > MAX_FAILURES_WITHOUT_PROGRESS {
                        return Err(e.into());
                    }
                }
            }
        }
        debug!(src = %self.src, offset, len, "positioned read done");
        Ok(out.freeze())
    }

    /// Block `i`'s `[off, off + n)` from its live replicas, hedged. `None` when every replica
    /// failed (the caller then retries through [`FileReader::open_block`], which re-fetches the
    /// locations).
    async fn fetch_hedged(&mut self, i: usize, off: u64, n: u64) -> Option<Bytes> {
        let cc = self.fs.inner.conf.clone();
        let lb = self.blocks[i].clone();
        let mut nodes = lb
            .locs
            .iter()
            .filter(|dn| !self.dead.contains(&xfer_addr(dn, cc.use_datanode_hostname)))
            .cloned()
            .collect::<Vec<_>>()
            .into_iter();
        let mut inflight = FuturesUnordered::new();
        let (fs0, use_host) = (self.fs.clone(), cc.use_datanode_hostname);
        let start = move |dn: DatanodeInfoProto,
                          hedge: Option<tokio::sync::OwnedSemaphorePermit>| {
            let addr = xfer_addr(&dn, use_host);
            let mut params =
                ReadBlockParams::new(lb.b.clone(), fs0.client_name().to_string(), off, n);
            params.token = Some(lb.block_token.clone());
            let fs = fs0.clone();
            async move {
                let is_hedge = hedge.is_some();
                let res = fetch(fs, addr, params).await;
                drop(hedge);
                (dn, is_hedge, res) as Answer
            }
        };
        loop {
            if inflight.is_empty() {
                let dn = nodes.next()?;
                inflight.push(start(dn, None));
            }
            let permit = if nodes.len() > 0 {
                self.fs.inner.hedge_permits.clone().try_acquire_owned().ok()
            } else {
                None
            };
            let wait = tokio::time::sleep(cc.hedged_read_threshold);
            tokio::select! {
                Some((dn, hedge, res)) = inflight.next() => match res {
                    Ok(b) => {
                        if hedge {
                            self.fs.inner.hedge_stats.won();
                        }
                        return Some(b);
                    }
                    Err(e) => self.replica_failed(i, &dn, &e).await,
                },
                _ = wait, if permit.is_some() => {
                    if let Some(dn) = nodes.next() {
                        debug!(src = %self.src, "hedged read: asking {} too", xfer_addr(&dn, cc.use_datanode_hostname));
                        self.fs.inner.hedge_stats.started();
                        inflight.push(start(dn, permit));
                    }
                }
            }
        }
    }
}
