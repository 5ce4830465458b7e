//! Full block report leases on a minicluster (issue 5): a DataNode asks for a lease in its
//! heartbeats and sends even its first full report after registration only under the lease
//! the NameNode granted; with `dfs.namenode.max.full.block.report.leases` = 1 the first
//! reports of several DataNodes wait while the lease is held and are then admitted one
//! after another. A storage's contents count as current once its report is processed.

use crate::common;

use std::time::Duration;

use rhdfs_blockmanager::{BlockManager, DatanodeId};
use rhdfs_minicluster::MiniCluster;

const WAIT: Duration = Duration::from_secs(30);

fn stale_storages(bm: &BlockManager, storages: &[String]) -> Vec<String> {
    storages
        .iter()
        .filter(|s| bm.storage_contents_stale(s))
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn first_reports_wait_for_a_lease_and_go_one_at_a_time() -> anyhow::Result<()> {
    let mut cluster = MiniCluster::builder()
        .datanodes(0)
        .conf("dfs.namenode.max.full.block.report.leases", "1")
        .conf("dfs.heartbeat.interval", "1")
        .build()
        .await?;
    let bm = cluster.namenode().block_manager().clone();
    // Another (pretend) DataNode holds the only lease.
    let holder = "lease-holder-uuid";
    let _ = bm.register_datanode(
        DatanodeId {
            uuid: holder.into(),
            ip_addr: "10.255.0.1".into(),
            host_name: "holder".into(),
            xfer_port: 1,
            info_port: 2,
            info_secure_port: 0,
            ipc_port: 3,
        },
        "3.5.0",
    );
    assert_ne!(
        bm.heartbeat(holder, vec![], 0, 0, true).full_report_lease,
        0
    );

    for _ in 0..3 {
        cluster.add_datanode().await?;
    }
    cluster.wait_live_datanodes(4, WAIT).await?;
    let storages: Vec<String> = cluster
        .running_datanodes()
        .flat_map(|(_, dn)| dn.storage_ids().to_vec())
        .collect();
    assert_eq!(storages.len(), 3);

    // Each new DataNode asks for a lease in its heartbeats and is refused while it is held;
    // none sends its first report without one.
    common::poll_until("every DataNode refused a lease", WAIT, || {
        let s = bm.report_lease_stats();
        async move {
            (s.refused >= 3)
                .then_some(())
                .ok_or_else(|| format!("{s:?}"))
        }
    })
    .await?;
    assert_eq!(
        stale_storages(&bm, &storages).len(),
        3,
        "nothing reported yet"
    );
    let s = bm.report_lease_stats();
    assert_eq!((s.granted, s.admitted, s.bypassed), (1, 0, 0), "{s:?}");

    // The holder's report is done: the three first reports follow, one lease at a time.
    bm.full_report_done(holder);
    common::poll_until("every storage's first full report", WAIT, || {
        let stale = stale_storages(&bm, &storages);
        async move {
            stale
                .is_empty()
                .then_some(())
                .ok_or_else(|| format!("not yet reported: {stale:?}"))
        }
    })
    .await?;
    let s = bm.report_lease_stats();
    // Every report RPC carried the sender's lease: none bypassed with id 0, none ignored.
    assert_eq!(s.bypassed, 0, "{s:?}");
    assert_eq!(s.rejected, 0, "{s:?}");
    assert_eq!(s.admitted, 3, "{s:?}");
    assert_eq!(s.granted, 4, "{s:?}");
    assert_eq!(s.max_active, 1, "{s:?}");
    assert_eq!(bm.active_report_leases(), 0, "released after each report");
    cluster.shutdown().await;
    Ok(())
}
