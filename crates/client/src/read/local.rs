//! The reader's short-circuit step: before asking a DataNode over TCP, a block's replica on
//! this machine is read straight from its block file (`crate::short_circuit`). A replica that
//! cannot be had or read this way (socket missing, refused, files gone or short) leaves the
//! read to TCP; a chunk whose CRC does not match is a corrupt replica, reported to the NameNode
//! and skipped exactly as on the TCP path.

use bytes::Bytes;
use tracing::{debug, warn};

use super::FileReader;
use crate::datanode::{block_name, xfer_addr};
use crate::short_circuit::{LocalReadError, NoReplica, read_blocking};

/// The most a sequential read takes from a local replica at once.
pub(super) const LOCAL_PIECE: u64 = 4 * 1024 * 1024;

impl FileReader {
    /// `[off, off + n)` of block `i` from a local replica, or `None` (read through TCP).
    pub(super) async fn read_local(&mut self, i: usize, off: u64, n: u64) -> Option<Bytes> {
        let sc = &self.fs.inner.short_circuit;
        if !sc.enabled() || n == 0 {
            return None;
        }
        let use_host = self.fs.inner.conf.use_datanode_hostname;
        let lb = self.blocks[i].clone();
        for dn in &lb.locs {
            let addr = xfer_addr(dn, use_host);
            let sc = &self.fs.inner.short_circuit;
            if self.dead.contains(&addr)
                || self.no_local.contains(&(lb.b.block_id, addr.clone()))
                || !sc.is_local(dn)
            {
                continue;
            }
            let replica = match sc.replica(dn, &lb).await {
                Ok(r) => r,
                Err(NoReplica::Block(why) | NoReplica::Node(why)) => {
                    debug!(
                        "no short-circuit read of {} from {addr}: {why}",
                        block_name(&lb.b)
                    );
                    self.no_local.insert((lb.b.block_id, addr));
                    continue;
                }
            };
            match read_blocking(replica, off, n, sc.skip_checksum()).await {
                Ok(b) => {
                    sc.count_read(b.len());
                    return Some(b);
                }
                Err(LocalReadError::Corrupt(e)) => {
                    sc.evict(dn, &lb);
                    self.replica_failed(i, dn, &e).await;
                }
                Err(LocalReadError::Unusable(why)) => {
                    warn!(
                        "short-circuit read of {} from {addr} failed, reading through the DataNode: {why}",
                        block_name(&lb.b)
                    );
                    sc.evict(dn, &lb);
                    self.no_local.insert((lb.b.block_id, addr));
                }
            }
        }
        None
    }
}
