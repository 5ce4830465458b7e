//! Badly distributed blocks on a minicluster (issue 5): a file written while every DataNode
//! was on one rack has all its replicas there; once a DataNode on a second rack joins, the
//! RedundancyMonitor copies the block to it and the excess check then deletes one replica
//! from the crowded rack, leaving the replication unchanged and the block on two racks.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use hdfs_native::WriteOptions;
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::fsdir::permission::Caller;

const TIMEOUT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn single_rack_block_moves_one_replica_to_the_new_rack() -> anyhow::Result<()> {
    let mut cluster = MiniCluster::builder()
        .racks(&["/r1", "/r1", "/r1", "/r2"])
        .datanodes(3)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.redundancy.interval.seconds", "1")
        .build()
        .await?;
    let user = common::current_user();
    let client = common::native_client(&cluster.uri())?;
    let data = common::random_bytes(3000, 5);
    common::native_write(
        &client,
        "/spread",
        &data,
        WriteOptions::default().replication(3),
        3000,
    )
    .await?;
    let id = cluster
        .namenode()
        .namesystem()
        .get_block_locations(
            &Caller::new(&user, Vec::new(), true),
            "/spread",
            0,
            i64::MAX,
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .blocks
        .first()
        .map(|b| b.block.id)
        .ok_or_else(|| anyhow::anyhow!("no block"))?;
    let bm = cluster.namenode().block_manager().clone();
    common::poll_until("three replicas on /r1", TIMEOUT, || {
        let live = bm.block_views(&[id])[0].as_ref().map_or(0, |v| v.live);
        async move { (live == 3).then_some(()).ok_or(format!("{live} live")) }
    })
    .await?;
    assert_eq!(bm.badly_distributed_blocks(), 0, "one rack: nothing to do");

    // A DataNode on /r2 joins.
    let i = cluster.add_datanode().await?;
    let newcomer = cluster.datanode(i).expect("running").uuid().to_string();
    common::poll_until("a replica on /r2 and three replicas left", TIMEOUT, || {
        let v = bm.block_views(&[id])[0].clone();
        let pending = bm.fs_stats().pending_deletion;
        let newcomer = newcomer.clone();
        async move {
            let v = v.ok_or("block gone")?;
            let racks: BTreeSet<&str> = v.replicas.iter().map(|r| r.rack.as_str()).collect();
            let on_new = v.replicas.iter().any(|r| r.dn_uuid == newcomer);
            if v.live == 3 && on_new && racks.len() == 2 && pending == 0 {
                Ok(())
            } else {
                Err(format!(
                    "live {} racks {racks:?} on newcomer {on_new} pending deletion {pending}",
                    v.live
                ))
            }
        }
    })
    .await?;
    assert_eq!(bm.badly_distributed_blocks(), 0);
    assert_eq!(bm.fs_stats().under_replicated, 0);
    // The replica files on disk follow: three copies, one of them on the new node.
    common::poll_until("three replica files", TIMEOUT, || {
        let files: Vec<_> = common::all_block_files(&common::all_data_dirs(&cluster))
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n == format!("blk_{id}"))
            })
            .collect();
        async move {
            (files.len() == 3)
                .then_some(())
                .ok_or(format!("{} files", files.len()))
        }
    })
    .await?;
    let read = common::native_read(&client, "/spread").await?;
    assert_eq!(read, data);
    cluster.shutdown().await;
    Ok(())
}
