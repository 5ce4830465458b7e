//! The DataNode's directory scan (Hadoop's DirectoryScanner): a replica whose block file
//! vanished from the disk is dropped from the DataNode's map and reported deleted, so the
//! NameNode restores the block's redundancy instead of counting a replica nobody can read;
//! a block file cut short is reported with its real length, so the NameNode marks that
//! replica corrupt and replaces it. The block scanner: a replica whose bytes rotted (same
//! length, one byte flipped) is found against its checksums and reported bad, and the
//! NameNode replaces it.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use hdfs_native::WriteOptions;
use rhdfs_minicluster::MiniCluster;

const MIB: usize = 1024 * 1024;

/// Finalized block files per block id on the running DataNodes: (DataNode index, length).
fn replicas_on_disk(c: &MiniCluster) -> BTreeMap<u64, Vec<(usize, u64)>> {
    let mut out: BTreeMap<u64, Vec<(usize, u64)>> = BTreeMap::new();
    for (i, _) in c.running_datanodes() {
        for f in common::all_block_files(&c.datanode_data_dirs(i)) {
            if !common::is_finalized(&f) {
                continue;
            }
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let len = std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
            if let Ok(id) = name.trim_start_matches("blk_").parse::<u64>() {
                out.entry(id).or_default().push((i, len));
            }
        }
    }
    out
}

fn block_file_on(c: &MiniCluster, dn: usize, id: u64) -> anyhow::Result<std::path::PathBuf> {
    common::all_block_files(&c.datanode_data_dirs(dn))
        .into_iter()
        .find(|f| {
            common::is_finalized(f)
                && f.file_name().and_then(|n| n.to_str()) == Some(&format!("blk_{id}"))
        })
        .ok_or_else(|| anyhow::anyhow!("no block file of blk_{id} on DataNode {dn}"))
}

/// Four DataNodes (so a replaced replica has somewhere to go) and one file of `len` bytes,
/// replication 3, written with hdfs-native.
async fn cluster_with_file(
    path: &str,
    len: usize,
    seed: u64,
) -> anyhow::Result<(MiniCluster, hdfs_native::Client, Vec<u8>)> {
    let c = MiniCluster::builder()
        .datanodes(4)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.redundancy.interval.seconds", "1")
        .conf("dfs.blocksize", MIB.to_string())
        .build()
        .await?;
    let client = common::native_client(&c.uri())?;
    let data = common::random_bytes(len, seed);
    common::native_write(&client, path, &data, WriteOptions::default(), 64 * 1024).await?;
    Ok((c, client, data))
}

/// Waits until the file's one block has three replicas on disk, each byte-identical to
/// `data`, all three counted by the NameNode, nothing corrupt, under-replicated or pending
/// deletion.
async fn wait_intact(c: &MiniCluster, data: &[u8], what: &str) -> anyhow::Result<()> {
    let bm = c.namenode().block_manager().clone();
    common::poll_until(what, Duration::from_secs(60), || {
        let r = replicas_on_disk(c);
        let s = bm.fs_stats();
        let same: Vec<bool> = r
            .iter()
            .flat_map(|(id, v)| {
                v.iter()
                    .map(|(dn, _)| {
                        block_file_on(c, *dn, *id)
                            .ok()
                            .and_then(|f| std::fs::read(f).ok())
                            .is_some_and(|b| b == data)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let locs: Vec<usize> = r.keys().map(|id| bm.locations(*id).len()).collect();
        async move {
            (same.len() == 3
                && same.iter().all(|ok| *ok)
                && locs == [3]
                && s.corrupt_blocks == 0
                && s.under_replicated == 0
                && s.pending_deletion + s.pending_deletion_commands == 0)
                .then_some(())
                .ok_or_else(|| format!("{same:?} {locs:?} {s:?}"))
        }
    })
    .await
}

/// The block of the cluster's one file and the DataNodes holding it.
fn the_block(c: &MiniCluster) -> anyhow::Result<(u64, Vec<usize>)> {
    replicas_on_disk(c)
        .into_iter()
        .next()
        .map(|(id, v)| (id, v.into_iter().map(|(dn, _)| dn).collect()))
        .ok_or_else(|| anyhow::anyhow!("no block"))
}

fn datanode(
    c: &MiniCluster,
    i: usize,
) -> anyhow::Result<&rhdfs_datanode::datanode::DataNodeHandle> {
    c.datanode(i).ok_or_else(|| anyhow::anyhow!("DataNode {i}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lost_and_truncated_replica_files_are_reported_and_replaced() -> anyhow::Result<()> {
    let (c, client, data) = cluster_with_file("/scan/f", MIB / 2, 11).await?;
    wait_intact(&c, &data, "3 full replicas reported").await?;
    let (id, holders) = the_block(&c)?;

    // 1. A block file vanishes: the scan drops the replica and reports it deleted.
    std::fs::remove_file(block_file_on(&c, holders[0], id)?)?;
    let s = datanode(&c, holders[0])?.scan_directories().await;
    let missing: usize = s.iter().map(|s| s.missing_block_files).sum();
    anyhow::ensure!(missing == 1, "{s:?}");
    wait_intact(&c, &data, "redundancy restored after the lost file").await?;

    // 2. A block file is cut short: reported with its length, replaced as corrupt.
    let (_, holders) = the_block(&c)?;
    std::fs::OpenOptions::new()
        .write(true)
        .open(block_file_on(&c, holders[0], id)?)?
        .set_len(data.len() as u64 / 2)?;
    let s = datanode(&c, holders[0])?.scan_directories().await;
    let cut: usize = s.iter().map(|s| s.mismatched_lengths).sum();
    anyhow::ensure!(cut == 1, "{s:?}");
    wait_intact(&c, &data, "the short replica replaced").await?;

    // Nothing left to find, and the file reads back whole.
    for (i, dn) in c.running_datanodes() {
        let s = dn.scan_directories().await;
        let odd: usize = s
            .iter()
            .map(|s| s.missing_block_files + s.missing_meta_files + s.mismatched_lengths)
            .sum();
        anyhow::ensure!(odd == 0, "DataNode {i}: {s:?}");
    }
    common::assert_same_bytes(
        "/scan/f",
        &common::native_read(&client, "/scan/f").await?,
        &data,
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rotted_replica_found_by_the_block_scanner_and_replaced() -> anyhow::Result<()> {
    let (c, client, data) = cluster_with_file("/scan/g", MIB / 2 + 77, 12).await?;
    wait_intact(&c, &data, "3 intact replicas").await?;
    let (id, holders) = the_block(&c)?;
    let f = block_file_on(&c, holders[0], id)?;
    let mut bytes = std::fs::read(&f)?;
    bytes[1000] ^= 0x08;
    std::fs::write(&f, &bytes)?;
    let dn = datanode(&c, holders[0])?;
    let t = dn
        .scan_blocks()
        .await
        .ok_or_else(|| anyhow::anyhow!("the block scanner is off"))?;
    anyhow::ensure!(t.corrupt_found == 1, "{t:?}");
    // The DataNode's /jmx counts it as Hadoop's DataNodeActivity does.
    let (code, jmx) = rhdfs_namenode::http::client::get(
        &dn.http_addr().to_string(),
        "/jmx?qry=Hadoop:service=DataNode,name=DataNodeActivity-*",
        Duration::from_secs(20),
    )
    .await?;
    anyhow::ensure!(
        code == 200 && jmx.contains("\"BlockVerificationFailures\" : 1"),
        "{jmx}"
    );
    wait_intact(&c, &data, "the rotted replica replaced").await?;
    common::assert_same_bytes(
        "/scan/g",
        &common::native_read(&client, "/scan/g").await?,
        &data,
    );
    Ok(())
}
