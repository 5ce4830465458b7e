//! Warming for `dfsio -read --warm`: every replica of every block read once over TCP, untimed,
//! so the timed read finds its data in the page cache whichever replica it is sent to. A
//! single pass through the reader would warm one replica per block, and the NameNode orders
//! same-host replicas at random on each call: after a cold run had dropped the cache, the
//! timed read would go to replicas still on disk.

use rhdfs_client::FileSystem;
use rhdfs_transfer::{BlockReader, ReadBlockParams};

/// Reads every replica of `path` once, without verifying checksums.
pub(super) async fn warm_every_replica(fs: &FileSystem, path: &str) -> anyhow::Result<()> {
    let located = fs.located_blocks(path, 0, u64::MAX >> 1).await?;
    let cfg = &fs.client_conf().transfer;
    for lb in &located.blocks {
        let len = lb.b.num_bytes.unwrap_or(0);
        for dn in &lb.locs {
            let addr = format!("{}:{}", dn.id.ip_addr, dn.id.xfer_port);
            let mut params = ReadBlockParams::new(lb.b.clone(), fs.client_name(), 0, len);
            params.token = Some(lb.block_token.clone());
            params.verify_checksum = false;
            let mut r = BlockReader::connect(&addr, &params, cfg).await?;
            while r.next_chunk().await?.is_some() {}
        }
    }
    Ok(())
}
