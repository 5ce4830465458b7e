//! The reader's short-circuit step: before asking a DataNode over TCP, a block's replica on
//! this machine is read straight from its block file (`crate::short_circuit`). A replica that
//! cannot be had or read this way (socket missing, refused, files gone or short) leaves the
//! read to TCP; a chunk whose CRC does not match is a corrupt replica, reported to the NameNode
//! and skipped exactly as on the TCP path. Positioned reads come here and read only their range;
//! sequential reads go through `ahead`.

use std::sync::Arc;

use bytes::Bytes;
use rhdfs_proto::hdfs::{DatanodeInfoProto, LocatedBlockProto};
use tracing::{debug, warn};

use super::FileReader;
use crate::datanode::{block_name, xfer_addr};
use crate::short_circuit::{
    LocalReadError, LocalReplica, NoReplica, ShortCircuit, piece, spawn_read,
};
use crate::{ClientError, FileSystem, Result};

impl FileReader {
    /// The start of `[off, off + n)` of block `i` from a local replica, at most
    /// `dfs.client.read.shortcircuit.buffer.size` bytes (read into the reader's positioned-read
    /// buffer, reused once the caller copied the bytes out; cached bytes read here, others on a
    /// blocking thread), or `None` (read through TCP).
    pub(super) async fn read_local(&mut self, i: usize, off: u64, n: u64) -> Option<Bytes> {
        if n == 0 {
            return None;
        }
        loop {
            let (dn, replica) = self.local_replica(i).await?;
            let sc = &self.fs.inner.short_circuit;
            let n = n.min(sc.buffer_size());
            let skip = sc.skip_checksum();
            // From the page cache right here when it holds the range, else on a blocking thread.
            let got = match replica.read_cached(off, n, skip, &mut self.pread_buf) {
                Ok(Some(b)) => {
                    // Read on this async thread with no await: the worker's other tasks
                    // run before the caller's next read.
                    tokio::task::yield_now().await;
                    Ok(b)
                }
                Ok(None) => {
                    let buf = std::mem::take(&mut self.pread_buf);
                    let (buf, got) = piece(spawn_read(replica, off, n, skip, buf)).await;
                    self.pread_buf = buf;
                    got
                }
                Err(e) => Err(e),
            };
            let sc = &self.fs.inner.short_circuit;
            match got {
                Ok(b) => {
                    sc.count_read(b.len());
                    return Some(b);
                }
                Err(e) => self.local_failed(i, &dn, e).await,
            }
        }
    }

    /// A local replica of block `i` this reader may read short-circuit (of several on this
    /// host, the block's preferred one first: [`affinity`]), opened (or taken from the cache);
    /// `None` when there is none (read through TCP).
    pub(super) async fn local_replica(
        &mut self,
        i: usize,
    ) -> Option<(DatanodeInfoProto, Arc<LocalReplica>)> {
        if !self.fs.inner.short_circuit.enabled() {
            return None;
        }
        let use_host = self.fs.inner.conf.use_datanode_hostname;
        let lb = self.blocks[i].clone();
        let sc = &self.fs.inner.short_circuit;
        let local: Vec<(&DatanodeInfoProto, String)> = local_candidates(&lb, sc, use_host)
            .into_iter()
            .filter(|(_, addr)| {
                !self.dead.contains(addr) && !self.no_local.contains(&(lb.b.block_id, addr.clone()))
            })
            .collect();
        for (dn, addr) in local {
            let sc = &self.fs.inner.short_circuit;
            match sc.replica(dn, &lb).await {
                Ok(r) => return Some((dn.clone(), r)),
                Err(NoReplica::Block(why) | NoReplica::Node(why)) => {
                    debug!(
                        "no short-circuit read of {} from {addr}: {why}",
                        block_name(&lb.b)
                    );
                    self.no_local.insert((lb.b.block_id, addr));
                }
            }
        }
        None
    }

    /// A short-circuit read of block `i` from `dn` failed: the open replica is forgotten; a
    /// corrupt one is reported and its node skipped, an unusable one read through TCP.
    pub(super) async fn local_failed(
        &mut self,
        i: usize,
        dn: &DatanodeInfoProto,
        e: LocalReadError,
    ) {
        let lb = self.blocks[i].clone();
        self.fs.inner.short_circuit.evict(dn, &lb);
        match e {
            LocalReadError::Corrupt(e) => self.replica_failed(i, dn, &e).await,
            LocalReadError::Unusable(why) => {
                let addr = xfer_addr(dn, self.fs.inner.conf.use_datanode_hostname);
                warn!(
                    "short-circuit read of {} from {addr} failed, reading through the DataNode: {why}",
                    block_name(&lb.b)
                );
                self.no_local.insert((lb.b.block_id, addr));
            }
        }
    }
}

/// The DataNodes on this host holding a replica of `lb`, with their transfer addresses, the
/// block's preferred one first: with several DataNodes on one host (the NameNode orders them
/// at random), a block is read from the same replica every time, so that reads find the one
/// already in the page cache, blocks spread over the DataNodes.
fn local_candidates<'a>(
    lb: &'a LocatedBlockProto,
    sc: &ShortCircuit,
    use_host: bool,
) -> Vec<(&'a DatanodeInfoProto, String)> {
    let mut local: Vec<(&DatanodeInfoProto, String)> = lb
        .locs
        .iter()
        .filter(|dn| sc.is_local(dn))
        .map(|dn| (dn, xfer_addr(dn, use_host)))
        .collect();
    local.sort_by_key(|(dn, _)| std::cmp::Reverse(affinity(lb.b.block_id, &dn.id.datanode_uuid)));
    local
}

impl FileSystem {
    /// The block files a short-circuit read of `path` reads, one per block in order (each
    /// from the replica the reader would pick), opened as the DataNodes passed them; `None`
    /// when short-circuit reads are off or a block has no local replica that can be had. For
    /// measuring a short-circuit read against a plain read of the same files (`bench dfsio`).
    pub async fn local_block_files(&self, path: &str) -> Result<Option<Vec<std::fs::File>>> {
        let sc = &self.inner.short_circuit;
        if !sc.enabled() {
            return Ok(None);
        }
        let located = self.located_blocks(path, 0, u64::MAX >> 1).await?;
        let use_host = self.inner.conf.use_datanode_hostname;
        let mut files = Vec::with_capacity(located.blocks.len());
        for lb in &located.blocks {
            let mut file = None;
            for (dn, _) in local_candidates(lb, sc, use_host) {
                if let Ok(r) = sc.replica(dn, lb).await {
                    file = Some(r.block_file().map_err(|e| {
                        ClientError::Failed(format!("cannot open {}: {e}", block_name(&lb.b)))
                    })?);
                    break;
                }
            }
            match file {
                Some(f) => files.push(f),
                None => return Ok(None),
            }
        }
        Ok(Some(files))
    }
}

/// How much block `block_id` prefers the DataNode `uuid` among those on this host (rendezvous
/// hashing: stable for a block, different blocks preferring different nodes).
fn affinity(block_id: u64, uuid: &str) -> u64 {
    // FNV-1a over the id, then SplitMix64's finalizer with the block id mixed in.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in uuid.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = h ^ block_id.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::affinity;

    #[test]
    fn affinity_is_stable_and_spreads_blocks() {
        let nodes = ["dn-a", "dn-b", "dn-c"];
        let mut chosen = [0usize; 3];
        for block in 1_073_741_825u64..1_073_741_825 + 300 {
            let pick = |order: &[&str]| {
                order
                    .iter()
                    .max_by_key(|n| affinity(block, n))
                    .map(|n| n.to_string())
            };
            let first = pick(&nodes);
            assert_eq!(
                first,
                pick(&["dn-c", "dn-a", "dn-b"]),
                "any order, same node"
            );
            let i = nodes.iter().position(|n| Some(n.to_string()) == first);
            chosen[i.expect("one of them")] += 1;
        }
        assert!(chosen.iter().all(|&c| c > 50), "{chosen:?}");
    }
}
