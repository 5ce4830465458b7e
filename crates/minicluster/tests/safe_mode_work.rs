//! Issue 11, test 3: while the NameNode is in safe mode (here manual) no deletion or copy
//! reaches a DataNode, whatever the block manager's queues hold; after leaving it the work
//! is done. Block 1 of /sm is given replication 1 behind the namespace's back while in
//! safe mode (two of its three replicas become surplus and are queued for deletion): its
//! replica files stay on disk through several heartbeats and RedundancyMonitor passes,
//! then two of them go once safe mode is left.

use std::time::Duration;

use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::safemode::SafeModeAction;

use crate::common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_mode_sends_no_work_then_leaving_it_does() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.heartbeat.interval", "300ms")
        .conf("dfs.namenode.redundancy.interval.seconds", "300ms")
        .conf("dfs.namenode.invalidate.work.pct.per.iteration", "1.0")
        .conf("dfs.namenode.safemode.extension", "0")
        .build()
        .await?;
    let client = common::native_client(&cluster.uri())?;
    common::native_write(
        &client,
        "/sm",
        &common::random_bytes(4096, 11),
        hdfs_native::WriteOptions::default().replication(3),
        4096,
    )
    .await?;
    let bm = cluster.namenode().block_manager().clone();
    let fs = cluster.namenode().namesystem().clone();
    let superuser = fs.caller(&common::current_user(), "127.0.0.1").await;
    let id = fs
        .get_block_locations(&superuser, "/sm", 0, 4096)?
        .blocks
        .first()
        .map(|b| b.block.id)
        .ok_or_else(|| anyhow::anyhow!("/sm has no block"))?;
    common::poll_until("three replicas", Duration::from_secs(30), || async {
        match bm.locations(id).len() {
            3 => Ok(()),
            n => Err(format!("{n} locations")),
        }
    })
    .await?;
    let dirs = common::all_data_dirs(&cluster);
    let on_disk = || {
        common::block_files(&dirs, id)
            .iter()
            .filter(|p| common::is_finalized(p))
            .count()
    };
    assert_eq!(on_disk(), 3);

    assert!(fs.safe_mode_action(SafeModeAction::Enter).await?);
    assert!(bm.in_safe_mode(), "the block manager follows at once");
    bm.set_replication(&[id], 1);
    // Several heartbeats (300 ms) and RedundancyMonitor passes (300 ms) go by.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(on_disk(), 3, "no replica deleted in safe mode");
    assert!(
        bm.fs_stats().pending_deletion + bm.fs_stats().pending_deletion_commands >= 2,
        "the deletions wait in the queues"
    );

    assert!(!fs.safe_mode_action(SafeModeAction::Leave).await?);
    common::poll_until(
        "two surplus replicas deleted",
        Duration::from_secs(30),
        || async {
            match on_disk() {
                1 => Ok(()),
                n => Err(format!("{n} replica files")),
            }
        },
    )
    .await?;
    assert_eq!(bm.locations(id).len(), 1);
    cluster.shutdown().await;
    Ok(())
}
