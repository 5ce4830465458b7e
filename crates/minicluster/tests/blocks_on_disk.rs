//! Issue 2, "What must work" items 3 and 5: replicas on the DataNodes' disks.
//!
//! 3. After a close with replication 3 on 3 DataNodes, every block has three finalized replicas
//!    on three different DataNodes, on disk and in getBlockLocations.
//! 5. Deleting a 10-block file removes every replica file from every DataNode's disk within a few
//!    (short) heartbeats, and the NameNode holds none of its blocks.

use crate::common;

use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use common::rpc::{CLIENT_PROTOCOL, CallError, LocatedBlocksProto, RawRpc};
use hdfs_native::WriteOptions;
use rhdfs_minicluster::MiniCluster;

const MIB: usize = 1024 * 1024;

fn uuids(cluster: &MiniCluster, n: usize) -> anyhow::Result<Vec<String>> {
    (0..n)
        .map(|i| {
            Ok(cluster
                .datanode(i)
                .with_context(|| format!("DataNode {i} not running"))?
                .uuid()
                .to_string())
        })
        .collect()
}

/// (block id, generation stamp, length) of every block of a file.
fn blocks_of(lb: &LocatedBlocksProto) -> Vec<(u64, u64, u64)> {
    lb.blocks
        .iter()
        .map(|b| {
            let e = b.b.clone().unwrap_or_default();
            (
                e.block_id.unwrap_or(0),
                e.generation_stamp.unwrap_or(0),
                e.num_bytes.unwrap_or(0),
            )
        })
        .collect()
}

fn loc_uuids(lb: &LocatedBlocksProto, i: usize) -> Vec<String> {
    lb.blocks[i]
        .locs
        .iter()
        .filter_map(|l| l.id.as_ref()?.datanode_uuid.clone())
        .collect()
}

/// Polls getBlockLocations until the file has `nblocks` blocks with `repl` distinct locations each.
async fn wait_locations(
    uri: &str,
    path: &str,
    nblocks: usize,
    repl: usize,
) -> anyhow::Result<LocatedBlocksProto> {
    common::poll_until(
        &format!("{nblocks} blocks x {repl} locations for {path}"),
        Duration::from_secs(60),
        || {
            let uri = uri.to_owned();
            let path = path.to_owned();
            async move {
                let mut rpc = RawRpc::connect(&uri, CLIENT_PROTOCOL, &common::current_user())
                    .await
                    .map_err(|e| e.to_string())?;
                let lb = rpc
                    .get_block_locations(&path)
                    .await
                    .map_err(|e| e.to_string())?;
                let counts: Vec<usize> = (0..lb.blocks.len())
                    .map(|i| loc_uuids(&lb, i).into_iter().collect::<HashSet<_>>().len())
                    .collect();
                if lb.blocks.len() == nblocks && counts.iter().all(|&c| c == repl) {
                    Ok(lb)
                } else {
                    Err(format!(
                        "{} blocks, distinct locations {counts:?}",
                        lb.blocks.len()
                    ))
                }
            }
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_finalized_replicas_after_close() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(3).build().await?;
    let uri = cluster.uri();
    let client = common::native_client(&uri)?;
    let ids = uuids(&cluster, 3)?;
    assert_eq!(
        ids.iter().collect::<HashSet<_>>().len(),
        3,
        "DataNode UUIDs must be distinct: {ids:?}"
    );
    let dirs: Vec<Vec<PathBuf>> = (0..3).map(|i| cluster.datanode_data_dirs(i)).collect();

    let data = common::random_bytes(3 * MIB + MIB / 2 + 3, 1);
    let opts = WriteOptions::default()
        .block_size(MIB as u64)
        .replication(3)
        .create_parent(true);
    common::native_write(&client, "/repl/f", &data, opts, 100_000).await?;

    // On disk, right after close: each DataNode has exactly one finalized replica of every block,
    // with the right length and a meta file for the same generation stamp. We learn the block
    // ids from the NameNode first (the locations themselves are checked below).
    let mut rpc = RawRpc::connect(&uri, CLIENT_PROTOCOL, &common::current_user()).await?;
    let lb = rpc.get_block_locations("/repl/f").await?;
    let blocks = blocks_of(&lb);
    assert_eq!(blocks.len(), 4, "{blocks:?}");
    assert_eq!(blocks.iter().map(|b| b.2).sum::<u64>(), data.len() as u64);
    for &(id, gs, len) in &blocks {
        for (i, d) in dirs.iter().enumerate() {
            let files = common::block_files(d, id);
            assert_eq!(
                files.len(),
                1,
                "DataNode {i}: replica files of blk_{id}: {files:?}"
            );
            assert!(
                common::is_finalized(&files[0]),
                "DataNode {i}: blk_{id} is not finalized: {}",
                files[0].display()
            );
            assert_eq!(
                std::fs::metadata(&files[0])?.len(),
                len,
                "DataNode {i}: blk_{id} length"
            );
            let metas = common::meta_files(d, id);
            assert_eq!(
                metas.len(),
                1,
                "DataNode {i}: meta files of blk_{id}: {metas:?}"
            );
            let name = metas[0].file_name().unwrap().to_string_lossy().into_owned();
            assert_eq!(
                name,
                format!("blk_{id}_{gs}.meta"),
                "DataNode {i}: meta file name"
            );
            assert!(
                common::is_finalized(&metas[0]),
                "DataNode {i}: {name} is not finalized"
            );
            // 7-byte header + one 4-byte CRC per 512-byte chunk.
            assert_eq!(
                std::fs::metadata(&metas[0])?.len(),
                7 + 4 * len.div_ceil(512),
                "DataNode {i}: {name} length"
            );
            // The replica's bytes are the file's bytes for that block.
            let blk = std::fs::read(&files[0])?;
            let off = blocks
                .iter()
                .take_while(|b| b.0 != id)
                .map(|b| b.2)
                .sum::<u64>() as usize;
            common::assert_same_bytes(
                &format!("DataNode {i} blk_{id}"),
                &blk,
                &data[off..off + len as usize],
            );
        }
    }

    // In getBlockLocations: three locations per block, on the three distinct DataNodes.
    let lb = wait_locations(&uri, "/repl/f", 4, 3).await?;
    let all: BTreeSet<&String> = ids.iter().collect();
    for i in 0..lb.blocks.len() {
        let locs = loc_uuids(&lb, i);
        assert_eq!(locs.len(), 3, "block {i}: {locs:?}");
        assert_eq!(
            locs.iter().collect::<BTreeSet<_>>(),
            all,
            "block {i} locations are the three DataNodes"
        );
        assert_eq!(
            lb.blocks[i].storage_ids.len(),
            3,
            "one storage id per location (block {i})"
        );
        assert_ne!(lb.blocks[i].corrupt, Some(true));
    }
    assert_ne!(lb.under_construction, Some(true));

    let got = common::native_read(&client, "/repl/f").await?;
    common::assert_same_bytes("/repl/f", &got, &data);
    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn delete_removes_every_replica() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.redundancy.interval.seconds", "1")
        .build()
        .await?;
    let uri = cluster.uri();
    let client = common::native_client(&uri)?;
    let dirs: Vec<PathBuf> = (0..3).flat_map(|i| cluster.datanode_data_dirs(i)).collect();

    let opts = || {
        WriteOptions::default()
            .block_size(MIB as u64)
            .replication(3)
            .create_parent(true)
    };
    let data = common::random_bytes(10 * MIB, 2);
    common::native_write(&client, "/del/ten", &data, opts(), 256 * 1024).await?;
    let keep = common::random_bytes(2 * MIB + 1, 3);
    common::native_write(&client, "/del/keep", &keep, opts(), 256 * 1024).await?;

    let lb = wait_locations(&uri, "/del/ten", 10, 3).await?;
    let doomed: Vec<u64> = blocks_of(&lb).iter().map(|b| b.0).collect();
    let kept: Vec<u64> = blocks_of(&wait_locations(&uri, "/del/keep", 3, 3).await?)
        .iter()
        .map(|b| b.0)
        .collect();
    for &id in doomed.iter().chain(&kept) {
        assert_eq!(
            common::block_files(&dirs, id).len(),
            3,
            "three replica files of blk_{id} before the delete"
        );
        assert!(
            cluster.namenode().block_manager().get_block(id).is_some(),
            "NameNode knows blk_{id}"
        );
    }

    assert!(client.delete("/del/ten", false).await?);

    // The namespace forgets the file at once.
    let mut rpc = RawRpc::connect(&uri, CLIENT_PROTOCOL, &common::current_user()).await?;
    match rpc
        .call::<_, common::rpc::GetBlockLocationsResponseProto>(
            "getBlockLocations",
            &common::rpc::GetBlockLocationsRequestProto {
                src: Some("/del/ten".into()),
                offset: Some(0),
                length: Some(1),
            },
        )
        .await
    {
        Err(CallError::Remote { class, .. }) => assert_eq!(class, "java.io.FileNotFoundException"),
        other => panic!("getBlockLocations of a deleted file: {other:?}"),
    }

    // The block manager drops the blocks, and the DataNodes delete every replica file.
    common::poll_until(
        "the NameNode to drop the deleted blocks",
        Duration::from_secs(60),
        || {
            let left: Vec<u64> = doomed
                .iter()
                .copied()
                .filter(|&id| cluster.namenode().block_manager().get_block(id).is_some())
                .collect();
            async move {
                if left.is_empty() {
                    Ok(())
                } else {
                    Err(format!("still known: {left:?}"))
                }
            }
        },
    )
    .await?;
    common::poll_until(
        "every replica of the deleted file to leave the disks",
        Duration::from_secs(120),
        || {
            let left: Vec<PathBuf> = doomed
                .iter()
                .flat_map(|&id| {
                    common::block_files(&dirs, id)
                        .into_iter()
                        .chain(common::meta_files(&dirs, id))
                })
                .collect();
            async move {
                if left.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "{} files left, e.g. {:?}",
                        left.len(),
                        &left[..left.len().min(3)]
                    ))
                }
            }
        },
    )
    .await?;
    for &id in &doomed {
        assert!(
            cluster.namenode().block_manager().locations(id).is_empty(),
            "NameNode still has locations of blk_{id}"
        );
    }

    // The other file is untouched.
    for &id in &kept {
        assert_eq!(
            common::block_files(&dirs, id).len(),
            3,
            "replicas of the kept file blk_{id}"
        );
    }
    common::assert_same_bytes(
        "kept file",
        &common::native_read(&client, "/del/keep").await?,
        &keep,
    );

    cluster.shutdown().await;
    Ok(())
}
