//! A small minicluster and file contents written and read through the rhdfs client.

use std::time::Duration;

use rhdfs_client::FileSystem;
use rhdfs_conf::Configuration;
use rhdfs_minicluster::MiniCluster;

pub const BLOCK: u64 = 1024 * 1024;

pub async fn cluster(datanodes: usize) -> anyhow::Result<MiniCluster> {
    Ok(MiniCluster::builder()
        .datanodes(datanodes)
        .conf("dfs.namenode.fs-limits.min-block-size", "0")
        .conf("dfs.blocksize", BLOCK.to_string())
        .wait_ready(Duration::from_secs(60))
        .build()
        .await?)
}

pub fn client_conf(extra: &[(&str, &str)]) -> Configuration {
    let mut c = Configuration::new();
    c.set("dfs.blocksize", BLOCK.to_string());
    for (k, v) in extra {
        c.set(k, *v);
    }
    c
}

pub async fn fs(c: &MiniCluster, extra: &[(&str, &str)]) -> anyhow::Result<FileSystem> {
    Ok(FileSystem::connect_with(Some(&c.uri()), client_conf(extra)).await?)
}

pub fn data(len: usize, seed: u64) -> Vec<u8> {
    use rand::{Rng, SeedableRng};
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let mut v = vec![0u8; len];
    r.fill(&mut v[..]);
    v
}

/// Writes `data` in uneven pieces.
pub async fn write_file(fs: &FileSystem, path: &str, data: &[u8]) -> anyhow::Result<()> {
    let mut w = fs
        .create(
            path,
            rhdfs_client::CreateOptions {
                overwrite: true,
                ..Default::default()
            },
        )
        .await?;
    let mut off = 0;
    let mut step = 1;
    while off < data.len() {
        let n = step.min(data.len() - off);
        w.write(&data[off..off + n]).await?;
        off += n;
        step = (step * 7 + 13) % 200_000 + 1;
    }
    w.close().await?;
    Ok(())
}

pub async fn read_file(fs: &FileSystem, path: &str) -> anyhow::Result<Vec<u8>> {
    let mut r = fs.open(path).await?;
    Ok(r.read_to_end().await?.to_vec())
}

/// The block locations of `path` once every block has `hosts` locations: complete() needs only
/// the minimum replication reported, the other replicas' RECEIVED_BLOCK reports may still be on
/// their way.
pub async fn wait_hosts(
    fs: &FileSystem,
    path: &str,
    hosts: usize,
) -> anyhow::Result<Vec<rhdfs_client::BlockLocation>> {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let locs = fs.block_locations(path).await?;
        if locs.iter().all(|l| l.hosts.len() == hosts) {
            return Ok(locs);
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "{path}: not every block has {hosts} locations: {locs:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Makes the DataNodes whose transfer address ("ip:port", as a writer's pipeline names them)
/// is in `addrs` report ERROR for themselves in every pipeline ack, and the others not; an
/// empty list clears the fault everywhere.
pub fn set_ack_errors(c: &MiniCluster, addrs: &[&str]) {
    for (_, dn) in c.running_datanodes() {
        let a = dn.xfer_addr().to_string();
        dn.faults().set_ack_error(addrs.contains(&a.as_str()));
    }
}
