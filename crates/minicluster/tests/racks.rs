//! Racks on a minicluster (2 racks × 2 DataNodes, by a topology table): the NameNode
//! stores each DataNode's rack at registration and shows it in getDatanodeReport, in
//! located blocks, in `dfsadmin -report` ("Rack:") and in fsck (-racks, "Number of
//! racks"); new blocks span both racks and read back through the distance-sorted
//! locations.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use hdfs_native::WriteOptions;
use rhdfs_blockmanager::ReportKind;
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::fsck::dfsadmin::{self, ReportFilter};
use rhdfs_namenode::fsdir::permission::Caller;
use rhdfs_namenode::http::client::get;
use rhdfs_namenode::namesystem::LocatedBlocks;

const TIMEOUT: Duration = Duration::from_secs(60);

/// getBlockLocations as the NameNode answers it (before the per-reader sort).
fn located(cluster: &MiniCluster, user: &str, path: &str) -> anyhow::Result<LocatedBlocks> {
    cluster
        .namenode()
        .namesystem()
        .get_block_locations(&Caller::new(user, Vec::new(), true), path, 0, i64::MAX)
        .map_err(|e| anyhow::anyhow!("{path}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_racks_shown_everywhere() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder()
        .racks(&["/r1", "/r1", "/r2", "/r2"])
        .conf("dfs.heartbeat.interval", "1")
        .build()
        .await?;
    let user = common::current_user();
    // The rack each DataNode was given, by transfer address.
    let want: BTreeMap<String, &str> = (0..4)
        .map(|i| {
            let dn = cluster.datanode(i).expect("running");
            let rack = if i < 2 { "/r1" } else { "/r2" };
            (dn.xfer_addr().to_string(), rack)
        })
        .collect();

    // getDatanodeReport (ALL): every node with its rack.
    let bm = cluster.namenode().block_manager().clone();
    let got: BTreeMap<String, String> = bm
        .datanode_report(ReportKind::All)
        .iter()
        .map(|d| {
            (
                format!("{}:{}", d.id.ip_addr, d.id.xfer_port),
                d.location.clone(),
            )
        })
        .collect();
    let want_owned: BTreeMap<String, String> = want
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    assert_eq!(got, want_owned);

    // A file of two blocks, three replicas each: located blocks carry the racks, and
    // every block spans both racks.
    let client = common::native_client(&cluster.uri())?;
    let data = common::random_bytes(3 * 1024 * 1024, 9);
    common::native_write(
        &client,
        "/racks/f",
        &data,
        WriteOptions::default()
            .replication(3)
            .block_size(2 * 1024 * 1024),
        64 * 1024,
    )
    .await?;
    common::poll_until("three replicas of each block", TIMEOUT, || {
        let lbs = located(&cluster, &user, "/racks/f");
        async move {
            let lbs = lbs.map_err(|e| e.to_string())?;
            let counts: Vec<usize> = lbs.blocks.iter().map(|b| b.locations.len()).collect();
            if counts == [3, 3] {
                Ok(())
            } else {
                Err(format!("replicas {counts:?}"))
            }
        }
    })
    .await?;
    let lbs = located(&cluster, &user, "/racks/f")?;
    let block_ids: Vec<u64> = lbs.blocks.iter().map(|b| b.block.id).collect();
    for lb in &lbs.blocks {
        let mut racks = BTreeSet::new();
        for loc in &lb.locations {
            let addr = format!("{}:{}", loc.info.id.ip_addr, loc.info.id.xfer_port);
            let rack = loc.info.location.as_str();
            assert_eq!(Some(&rack), want.get(&addr), "{addr}");
            racks.insert(rack.to_string());
        }
        assert_eq!(racks.len(), 2, "block spans both racks: {racks:?}");
    }
    assert_eq!(bm.num_racks(), 2);
    // Reads go through the sorted locations.
    let back = common::native_read(&client, "/racks/f").await?;
    common::assert_same_bytes("/racks/f", &back, &data);

    // fsck -files -blocks -racks: "/rack/ip:port" per replica, two racks, no
    // mis-replicated block.
    let http = common::nn_http(&cluster)?;
    let (code, fsck) = get(
        &http,
        &format!("/fsck?ugi={user}&path=/&files=1&blocks=1&racks=1"),
        TIMEOUT,
    )
    .await?;
    anyhow::ensure!(code == 200, "HTTP {code}: {fsck}");
    for (addr, rack) in &want {
        if bm
            .block_views(&block_ids)
            .iter()
            .flatten()
            .any(|v| v.replicas.iter().any(|r| &r.xfer_addr == addr))
        {
            assert!(fsck.contains(&format!("{rack}/{addr}")), "{addr}\n{fsck}");
        }
    }
    assert!(fsck.contains("\n Number of racks:\t\t2\n"), "{fsck}");
    assert!(fsck.contains("\n Mis-replicated blocks:\t\t0 "), "{fsck}");
    assert!(fsck.contains("/racks/f 3145728 bytes"), "{fsck}");
    assert!(fsck.ends_with("is HEALTHY"), "{fsck}");

    // dfsadmin -report: a "Rack:" line for every node (none is on /default-rack).
    let nn = cluster.namenode().rpc_addr().to_string();
    let text = dfsadmin::report(&nn, &user, ReportFilter::default()).await?;
    assert_eq!(text.matches("\nRack: /r1\n").count(), 2, "{text}");
    assert_eq!(text.matches("\nRack: /r2\n").count(), 2, "{text}");

    // dfsadmin -printTopology: the two racks, each with its two nodes in order.
    let topo = dfsadmin::print_topology(&nn, &user).await?;
    let mut expected = String::new();
    for rack in ["/r1", "/r2"] {
        expected.push_str(&format!("Rack: {rack}\n"));
        for (addr, _) in want.iter().filter(|(_, r)| **r == rack) {
            let host = bm
                .datanode_report(ReportKind::All)
                .iter()
                .find(|d| format!("{}:{}", d.id.ip_addr, d.id.xfer_port) == *addr)
                .map(|d| d.id.host_name.clone())
                .unwrap_or_default();
            assert!(!host.is_empty(), "{addr} registered without a host name");
            expected.push_str(&format!("   {addr} ({host})\n"));
        }
        expected.push('\n');
    }
    assert_eq!(topo, expected);
    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_rack_is_mis_replicated_once_a_second_rack_joins() -> anyhow::Result<()> {
    // Two DataNodes on /r2; a third, on /r1, joins after the file is written.
    let mut cluster = MiniCluster::builder()
        .racks(&["/r2", "/r2", "/r1"])
        .datanodes(2)
        .conf("dfs.heartbeat.interval", "1")
        .build()
        .await?;
    let user = common::current_user();
    let client = common::native_client(&cluster.uri())?;
    let data = common::random_bytes(1000, 3);
    common::native_write(
        &client,
        "/one-rack",
        &data,
        WriteOptions::default().replication(2),
        1000,
    )
    .await?;
    let bm = cluster.namenode().block_manager().clone();
    let ids: Vec<u64> = located(&cluster, &user, "/one-rack")?
        .blocks
        .iter()
        .map(|b| b.block.id)
        .collect();
    common::poll_until("two replicas", TIMEOUT, || {
        let live = bm.block_views(&ids)[0].as_ref().map_or(0, |v| v.live);
        async move {
            if live == 2 {
                Ok(())
            } else {
                Err(format!("{live} live"))
            }
        }
    })
    .await?;
    let http = common::nn_http(&cluster)?;
    let (_, before) = get(&http, &format!("/fsck?ugi={user}&path=/"), TIMEOUT).await?;
    assert!(before.contains("\n Number of racks:\t\t1\n"), "{before}");
    assert!(
        before.contains("\n Mis-replicated blocks:\t\t0 "),
        "{before}"
    );

    // Keep the RedundancyMonitor from moving replicas while fsck looks (manual safe mode).
    cluster
        .namenode()
        .namesystem()
        .safe_mode_action(rhdfs_namenode::safemode::SafeModeAction::Enter)
        .await?;
    cluster.add_datanode().await?;
    cluster.wait_live_datanodes(3, TIMEOUT).await?;
    assert_eq!(bm.num_racks(), 2);
    let (_, after) = get(&http, &format!("/fsck?ugi={user}&path=/&files=1"), TIMEOUT).await?;
    let pool = bm.block_pool_id().to_string();
    let line = format!(
        "/one-rack 1000 bytes, replicated: replication=2, 1 block(s):  Replica placement policy \
         is violated for {pool}:blk_{}_",
        ids[0]
    );
    assert!(after.contains(&line), "{after}");
    assert!(
        after.contains(
            ". Block should be additionally replicated on 1 more rack(s). Total number of racks in the cluster: 2\n"
        ),
        "{after}"
    );
    assert!(
        after.contains("\n Mis-replicated blocks:\t\t1 (100.0 %)\n"),
        "{after}"
    );
    assert!(after.contains("\n Number of racks:\t\t2\n"), "{after}");
    cluster.shutdown().await;
    Ok(())
}
