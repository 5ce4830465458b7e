//! A DataNode that `dfsadmin -refreshNodes` drops from the include list (`dfs.hosts`) is
//! refused at its next heartbeat with DisallowedDatanodeException and stops serving the
//! NameNode (the `rhdfs datanode` process then exits), as Hadoop's DataNode does; the
//! DataNodes still listed go on.

use std::time::Duration;

use rhdfs_minicluster::MiniCluster;

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn datanode_dropped_from_the_include_list_stops() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let hosts = dir.path().join("dfs.hosts");
    std::fs::write(&hosts, "127.0.0.1\n")?;
    let cluster = MiniCluster::builder()
        .datanodes(2)
        .conf("dfs.hosts", hosts.display().to_string())
        .conf("dfs.heartbeat.interval", "1")
        .build()
        .await?;
    let (Some(kept), Some(dropped)) = (cluster.datanode(0), cluster.datanode(1)) else {
        anyhow::bail!("two DataNodes expected");
    };
    std::fs::write(&hosts, format!("127.0.0.1:{}\n", kept.xfer_addr().port()))?;
    let out = cluster.namenode().block_manager().refresh_nodes()?;
    assert_eq!(out.not_included, vec![dropped.xfer_addr().to_string()]);

    let reason = tokio::time::timeout(WAIT, dropped.refused()).await?;
    assert!(reason.contains("DisallowedDatanodeException"), "{reason}");
    assert!(
        reason.contains("Datanode denied communication with namenode because the host is not in the include-list"),
        "{reason}"
    );
    assert!(!dropped.is_registered());
    // It does not come back: no re-registration is attempted.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!dropped.is_registered());
    // The listed DataNode keeps heartbeating.
    let bm = cluster.namenode().block_manager();
    assert!(kept.is_registered());
    assert!(bm.is_datanode_alive(kept.uuid()));
    cluster.shutdown().await;
    Ok(())
}
