//! Issue 11, test 2: a NameNode that dies after appending a delete's edit and before
//! syncing it (the fault hook `rhdfs.namenode.fault.crash-before-sync=delete`, which
//! waits three seconds first so that anything wrongly done before the sync reaches the
//! DataNodes, then aborts the process) loses the delete, and nothing of the file: after a
//! restart it exists, reads back byte-identical, and every replica is still on disk.

use std::time::Duration;

use anyhow::ensure;

use crate::common::procs::{Cluster, ClusterOptions, read_file, wait_for, write_file};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_lost_before_its_sync_leaves_the_file_whole() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let opts = ClusterOptions {
        conf: vec![
            "dfs.namenode.redundancy.interval.seconds=1".into(),
            "dfs.namenode.invalidate.work.pct.per.iteration=1.0".into(),
            "dfs.blocksize=1048576".into(),
        ],
        namenode_conf: vec![
            "rhdfs.namenode.fault.crash-before-sync=delete".into(),
            "rhdfs.namenode.fault.crash-before-sync.delay.ms=3000".into(),
        ],
        ..ClusterOptions::default()
    };
    let mut c = Cluster::start_with(tmp.path(), opts)?;
    let fs = c.client_out_of_safe_mode("/probe").await?;
    let data: Vec<u8> = (0..2_500_000u32).map(|i| (i % 251) as u8).collect();
    write_file(&fs, "/keep", &data).await?;
    let blocks = c.namespace_blocks().await?;
    ensure!(blocks.len() == 3, "{blocks:?}");
    // Both replicas of every block on disk before the delete.
    wait_for(
        "both replicas of every block on disk",
        Duration::from_secs(30),
        || async {
            let disk = c.disk_replicas().await?;
            Ok(blocks
                .iter()
                .all(|(id, gs)| disk.get(id).is_some_and(|r| r == &vec![*gs, *gs])))
        },
    )
    .await?;

    // The delete never answers: the NameNode aborts before its sync.
    let deleted = tokio::time::timeout(Duration::from_secs(30), fs.delete("/keep", false)).await;
    ensure!(
        !matches!(deleted, Ok(Ok(true))),
        "the delete was acknowledged: {deleted:?}"
    );
    drop(fs);
    let log = c.log("nn.log");
    ensure!(
        log.contains("aborting before the edit log sync"),
        "the fault hook did not fire:\n{}",
        c.log_tail("nn.log")
    );
    c.restart_namenode()?;

    let fs = c.client_out_of_safe_mode("/probe2").await?;
    ensure!(read_file(&fs, "/keep").await? == data, "/keep reads back");
    ensure!(c.namespace_blocks().await? == blocks, "the same blocks");
    let disk = c.disk_replicas().await?;
    for (id, gs) in &blocks {
        ensure!(
            disk.get(id) == Some(&vec![*gs, *gs]),
            "blk_{id}: replicas on disk {:?}",
            disk.get(id)
        );
    }
    c.fsck().await?;
    Ok(())
}
