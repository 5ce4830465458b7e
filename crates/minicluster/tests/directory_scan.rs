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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lost_and_truncated_replica_files_are_reported_and_replaced() -> anyhow::Result<()> {
    let c = MiniCluster::builder()
        .datanodes(4)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.redundancy.interval.seconds", "1")
        .conf("dfs.blocksize", MIB.to_string())
        .build()
        .await?;
    let client = common::native_client(&c.uri())?;
    let data = common::random_bytes(MIB / 2, 11);
    common::native_write(
        &client,
        "/scan/f",
        &data,
        WriteOptions::default(),
        64 * 1024,
    )
    .await?;
    let bm = c.namenode().block_manager().clone();
    let len = data.len() as u64;
    let healthy = |what: &'static str| {
        let (c, bm) = (&c, bm.clone());
        async move {
            common::poll_until(what, Duration::from_secs(60), || {
                let r = replicas_on_disk(c);
                let s = bm.fs_stats();
                let locs: Vec<usize> = r.keys().map(|id| bm.locations(*id).len()).collect();
                async move {
                    (r.len() == 1
                        && r.values()
                            .all(|v| v.len() == 3 && v.iter().all(|(_, l)| *l == len))
                        && locs == [3]
                        && s.under_replicated == 0
                        && s.corrupt_blocks == 0
                        && s.pending_deletion + s.pending_deletion_commands == 0)
                        .then_some(())
                        .ok_or_else(|| format!("{r:?} {locs:?} {s:?}"))
                }
            })
            .await
        }
    };
    healthy("3 full replicas reported").await?;
    let (id, holders) = replicas_on_disk(&c)
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("no block"))?;

    // 1. A block file vanishes: the scan drops the replica and reports it deleted.
    let lost_on = holders[0].0;
    std::fs::remove_file(block_file_on(&c, lost_on, id)?)?;
    let dn = c
        .datanode(lost_on)
        .ok_or_else(|| anyhow::anyhow!("DataNode {lost_on}"))?;
    let s = dn.scan_directories().await;
    let missing: usize = s.iter().map(|s| s.missing_block_files).sum();
    anyhow::ensure!(missing == 1, "{s:?}");
    healthy("redundancy restored after the lost file").await?;

    // 2. A block file is cut short: reported with its length, replaced as corrupt.
    let (cut_on, _) = replicas_on_disk(&c)[&id][0];
    let f = block_file_on(&c, cut_on, id)?;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)?
        .set_len(len / 2)?;
    let dn = c
        .datanode(cut_on)
        .ok_or_else(|| anyhow::anyhow!("DataNode {cut_on}"))?;
    let s = dn.scan_directories().await;
    let cut: usize = s.iter().map(|s| s.mismatched_lengths).sum();
    anyhow::ensure!(cut == 1, "{s:?}");
    healthy("the short replica replaced").await?;

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
    let c = MiniCluster::builder()
        .datanodes(4)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.redundancy.interval.seconds", "1")
        .conf("dfs.blocksize", MIB.to_string())
        .build()
        .await?;
    let client = common::native_client(&c.uri())?;
    let data = common::random_bytes(MIB / 2 + 77, 12);
    common::native_write(
        &client,
        "/scan/g",
        &data,
        WriteOptions::default(),
        64 * 1024,
    )
    .await?;
    let bm = c.namenode().block_manager().clone();
    // Every replica on disk byte-identical to what was written, three of them, all counted.
    let intact = |what: &'static str| {
        let (c, bm, data) = (&c, bm.clone(), &data);
        async move {
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
                                    .is_some_and(|b| b == *data)
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
                        && s.under_replicated == 0)
                        .then_some(())
                        .ok_or_else(|| format!("{same:?} {locs:?} {s:?}"))
                }
            })
            .await
        }
    };
    intact("3 intact replicas").await?;
    let (id, holders) = replicas_on_disk(&c)
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("no block"))?;
    let rot_on = holders[0].0;
    let f = block_file_on(&c, rot_on, id)?;
    let mut bytes = std::fs::read(&f)?;
    bytes[1000] ^= 0x08;
    std::fs::write(&f, &bytes)?;
    let dn = c
        .datanode(rot_on)
        .ok_or_else(|| anyhow::anyhow!("DataNode {rot_on}"))?;
    let t = dn
        .scan_blocks()
        .await
        .ok_or_else(|| anyhow::anyhow!("the block scanner is off"))?;
    anyhow::ensure!(t.corrupt_found == 1, "{t:?}");
    // The DataNode's /jmx counts it as Hadoop's DataNodeActivity does.
    let web = dn.http_addr().to_string();
    let (code, jmx) = rhdfs_namenode::http::client::get(
        &web,
        "/jmx?qry=Hadoop:service=DataNode,name=DataNodeActivity-*",
        Duration::from_secs(20),
    )
    .await?;
    anyhow::ensure!(
        code == 200 && jmx.contains("\"BlockVerificationFailures\" : 1"),
        "{jmx}"
    );
    intact("the rotted replica replaced").await?;
    common::assert_same_bytes(
        "/scan/g",
        &common::native_read(&client, "/scan/g").await?,
        &data,
    );
    Ok(())
}
