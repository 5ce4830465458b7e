//! Issue 6, "What must work": re-replication after a DataNode dies, excess replicas after
//! setrep down and after a node returns, corrupt replicas replaced before deletion, and
//! decommissioning through dfs.hosts.exclude + refreshNodes. hdfs-native is the client.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use hdfs_native::WriteOptions;
use prost::Message;
use rhdfs_blockmanager::ReportKind;
use rhdfs_blockmanager::redundancy::decommission::AdminState;
use rhdfs_minicluster::MiniCluster;

const MIB: usize = 1024 * 1024;

#[derive(Clone, PartialEq, Message)]
struct RefreshNodesRequestProto {}
#[derive(Clone, PartialEq, Message)]
struct RefreshNodesResponseProto {}
#[derive(Clone, PartialEq, Message)]
struct ReportBadBlocksRequestProto {
    #[prost(message, repeated, tag = "1")]
    blocks: Vec<common::rpc::LocatedBlockProto>,
}
#[derive(Clone, PartialEq, Message)]
struct ReportBadBlocksResponseProto {}

async fn fsck(c: &MiniCluster, query: &str) -> anyhow::Result<String> {
    let addr = common::nn_http(c)?;
    let (code, body) =
        rhdfs_namenode::http::client::get(&addr, query, Duration::from_secs(20)).await?;
    anyhow::ensure!(code == 200, "HTTP {code}: {body}");
    Ok(body)
}

/// Short intervals: a stopped DataNode is dead after 2 × 0.5 s + 10 × 1 s.
fn builder(n: usize) -> rhdfs_minicluster::MiniClusterBuilder {
    MiniCluster::builder()
        .datanodes(n)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.heartbeat.recheck-interval", "500")
        .conf("dfs.namenode.redundancy.interval.seconds", "1")
        .conf("dfs.namenode.decommission.interval", "1")
        .conf("dfs.blocksize", MIB.to_string())
}

/// Finalized replicas on disk per block id, over the running DataNodes (index → ids).
fn replicas_on_disk(c: &MiniCluster) -> BTreeMap<u64, Vec<usize>> {
    let mut out: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, _) in c.running_datanodes() {
        for f in common::all_block_files(&c.datanode_data_dirs(i)) {
            if !common::is_finalized(&f) {
                continue;
            }
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if let Ok(id) = name.trim_start_matches("blk_").parse::<u64>() {
                out.entry(id).or_default().push(i);
            }
        }
    }
    out
}

async fn write(
    client: &hdfs_native::Client,
    path: &str,
    len: usize,
    seed: u64,
) -> anyhow::Result<Vec<u8>> {
    let data = common::random_bytes(len, seed);
    common::native_write(client, path, &data, WriteOptions::default(), 64 * 1024).await?;
    Ok(data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dead_node_rereplicated_then_its_return_is_excess() -> anyhow::Result<()> {
    let mut c = builder(4).build().await?;
    let client = common::native_client(&c.uri())?;
    let mut files = Vec::new();
    for i in 0..3 {
        let p = format!("/dead/f{i}");
        files.push((p.clone(), write(&client, &p, 2 * MIB + 1000, i).await?));
    }
    let bm = c.namenode().block_manager().clone();
    common::poll_until("3 replicas of every block", Duration::from_secs(20), || {
        let r = replicas_on_disk(&c);
        async move {
            (r.len() == 9 && r.values().all(|v| v.len() == 3))
                .then_some(())
                .ok_or_else(|| format!("{r:?}"))
        }
    })
    .await?;
    let lost: Vec<u64> = replicas_on_disk(&c)
        .into_iter()
        .filter(|(_, v)| v.contains(&0))
        .map(|(id, _)| id)
        .collect();
    assert!(!lost.is_empty());
    let dead_uuid = c.stop_datanode(0).await?;
    // Dead after ~11 s; then every block is back to 3 replicas on the other three.
    common::poll_until("re-replication", Duration::from_secs(60), || {
        let r = replicas_on_disk(&c);
        let s = bm.fs_stats();
        async move {
            (s.dead_datanodes == 1
                && s.under_replicated == 0
                && r.len() == 9
                && r.values().all(|v| v.len() == 3))
            .then_some(())
            .ok_or_else(|| format!("{s:?} {r:?}"))
        }
    })
    .await?;
    for id in &lost {
        let locs = bm.locations(*id);
        assert_eq!(locs.len(), 3, "blk_{id}");
        assert!(locs.iter().all(|l| l.info.id.uuid != dead_uuid));
    }
    for (p, d) in &files {
        common::assert_same_bytes(p, &common::native_read(&client, p).await?, d);
    }
    // The node returns with its old replicas: the surplus ones are deleted again.
    c.restart_datanode(0).await?;
    common::poll_until("excess replicas removed", Duration::from_secs(60), || {
        let r = replicas_on_disk(&c);
        let s = bm.fs_stats();
        let counts: Vec<usize> = lost.iter().map(|id| bm.locations(*id).len()).collect();
        async move {
            (s.live_datanodes == 4
                && s.pending_deletion + s.pending_deletion_commands == 0
                && counts.iter().all(|n| *n == 3)
                && r.values().all(|v| v.len() == 3))
            .then_some(())
            .ok_or_else(|| format!("{s:?} {counts:?} {r:?}"))
        }
    })
    .await?;
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn setrep_down_removes_replicas() -> anyhow::Result<()> {
    let c = builder(3).build().await?;
    let client = common::native_client(&c.uri())?;
    let data = write(&client, "/setrep", 3 * MIB, 7).await?;
    common::poll_until("3 replicas", Duration::from_secs(20), || {
        let r = replicas_on_disk(&c);
        async move {
            (r.len() == 3 && r.values().all(|v| v.len() == 3))
                .then_some(())
                .ok_or_else(|| format!("{r:?}"))
        }
    })
    .await?;
    assert!(client.set_replication("/setrep", 1).await?);
    common::poll_until("1 replica left", Duration::from_secs(30), || {
        let r = replicas_on_disk(&c);
        async move {
            (r.len() == 3 && r.values().all(|v| v.len() == 1))
                .then_some(())
                .ok_or_else(|| format!("{r:?}"))
        }
    })
    .await?;
    common::assert_same_bytes(
        "/setrep",
        &common::native_read(&client, "/setrep").await?,
        &data,
    );
    c.shutdown().await;
    Ok(())
}

/// The first block of `path` once all three replicas are known: close() returns once the
/// minimum replication is reported; the other replicas' RECEIVED_BLOCK reports may still be
/// on their way.
async fn first_block_with_three_locations(
    rpc: &mut common::rpc::RawRpc,
    path: &str,
) -> anyhow::Result<common::rpc::LocatedBlockProto> {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let lb = rpc.get_block_locations(path).await?.blocks.remove(0);
        if lb.locs.len() == 3 {
            return Ok(lb);
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "{path}: block still has {} locations",
            lb.locs.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn corrupt_replica_replaced_then_deleted_all_corrupt_kept() -> anyhow::Result<()> {
    let c = builder(4).build().await?;
    let client = common::native_client(&c.uri())?;
    let data = write(&client, "/c/one", 200_000, 3).await?;
    let bm = c.namenode().block_manager().clone();
    let mut rpc = common::rpc::RawRpc::connect(
        &common::rpc::authority(&c.uri()),
        common::rpc::CLIENT_PROTOCOL,
        &common::current_user(),
    )
    .await?;
    let lb = first_block_with_three_locations(&mut rpc, "/c/one").await?;
    let id = lb.b.as_ref().and_then(|b| b.block_id).expect("block id");
    // Corrupt the replica of the first listed node on disk, and report it as a reader would.
    let bad_uuid = lb.locs[0]
        .id
        .as_ref()
        .and_then(|d| d.datanode_uuid.clone())
        .unwrap_or_default();
    let (bad_idx, bad_dn) = c
        .running_datanodes()
        .find(|(_, d)| d.uuid() == bad_uuid)
        .expect("datanode");
    let files = bad_dn.faults().replica_files(id).expect("replica on disk");
    let mut bytes = std::fs::read(&files.block_file)?;
    bytes[100] ^= 0xff;
    std::fs::write(&files.block_file, bytes)?;
    let mut bad = lb.clone();
    bad.locs.truncate(1);
    bad.storage_ids.truncate(1);
    let _: ReportBadBlocksResponseProto = rpc
        .call(
            "reportBadBlocks",
            &ReportBadBlocksRequestProto { blocks: vec![bad] },
        )
        .await?;
    // fsck names the corrupt replica while it is kept.
    let user = common::current_user();
    let report = fsck(
        &c,
        &format!("/fsck?ugi={user}&files=1&blocks=1&replicadetails=1&path=/c/one"),
    )
    .await?;
    assert!(report.contains("CORRUPT"), "{report}");
    // Reads still succeed (the corrupt replica is not served).
    common::assert_same_bytes(
        "/c/one",
        &common::native_read(&client, "/c/one").await?,
        &data,
    );
    // A new replica is made, then the corrupt one is deleted.
    common::poll_until(
        "corrupt replica replaced and deleted",
        Duration::from_secs(30),
        || {
            let r = replicas_on_disk(&c);
            let s = bm.fs_stats();
            let locs = bm.locations(id);
            let bad_uuid = bad_uuid.clone();
            async move {
                let on = r.get(&id).cloned().unwrap_or_default();
                (s.corrupt_blocks == 0
                    && locs.len() == 3
                    && locs.iter().all(|l| l.info.id.uuid != bad_uuid)
                    && on.len() == 3
                    && !on.contains(&bad_idx))
                .then_some(())
                .ok_or_else(|| {
                    format!(
                        "{s:?} {:?} {r:?}",
                        locs.iter().map(|l| l.info.id.xfer_port).collect::<Vec<_>>()
                    )
                })
            }
        },
    )
    .await?;

    // Every replica of a block corrupt: kept, shown, never deleted.
    let _ = write(&client, "/c/all", 100_000, 4).await?;
    let lb = first_block_with_three_locations(&mut rpc, "/c/all").await?;
    let id = lb.b.as_ref().and_then(|b| b.block_id).expect("block id");
    let _: ReportBadBlocksResponseProto = rpc
        .call(
            "reportBadBlocks",
            &ReportBadBlocksRequestProto { blocks: vec![lb] },
        )
        .await?;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let s = bm.fs_stats();
    assert_eq!(s.corrupt_blocks, 1);
    assert_eq!(s.missing_blocks, 1);
    let loc = bm.block_locations(id).expect("block kept");
    assert!(loc.corrupt);
    assert_eq!(loc.locations.len(), 3);
    assert_eq!(
        replicas_on_disk(&c).get(&id).map(Vec::len),
        Some(3),
        "nothing deleted"
    );
    let report = fsck(&c, &format!("/fsck?ugi={user}&path=/")).await?;
    assert!(report.contains("/c/all"), "{report}");
    assert!(report.contains("is CORRUPT"), "{report}");
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn decommission_with_open_and_closed_files() -> anyhow::Result<()> {
    let exclude_dir = tempfile::tempdir()?;
    let exclude: PathBuf = exclude_dir.path().join("dfs.exclude");
    std::fs::write(&exclude, "")?;
    let mut c = builder(4)
        .conf("dfs.hosts.exclude", exclude.to_string_lossy().to_string())
        .build()
        .await?;
    let client = common::native_client(&c.uri())?;
    let mut files = Vec::new();
    for i in 0..3 {
        let p = format!("/dec/f{i}");
        files.push((p.clone(), write(&client, &p, 2 * MIB + 500, 10 + i).await?));
    }
    // A file still open: one full block and part of another written.
    let open_data = common::random_bytes(MIB + 4096, 20);
    let mut w = client.create("/dec/open", WriteOptions::default()).await?;
    w.write_bytes(bytes::Bytes::copy_from_slice(&open_data))
        .await?;
    let bm = c.namenode().block_manager().clone();
    common::poll_until(
        "closed files fully replicated",
        Duration::from_secs(20),
        || {
            let s = bm.fs_stats();
            async move {
                (s.under_replicated == 0)
                    .then_some(())
                    .ok_or_else(|| format!("{s:?}"))
            }
        },
    )
    .await?;
    let dn0 = c.datanode(0).expect("dn0");
    let uuid0 = dn0.uuid().to_string();
    std::fs::write(&exclude, format!("{}\n", dn0.xfer_addr()))?;
    let mut rpc = common::rpc::RawRpc::connect(
        &common::rpc::authority(&c.uri()),
        common::rpc::CLIENT_PROTOCOL,
        &common::current_user(),
    )
    .await?;
    let _: RefreshNodesResponseProto = rpc
        .call("refreshNodes", &RefreshNodesRequestProto {})
        .await?;
    assert_ne!(bm.admin_state(&uuid0), AdminState::Normal);
    common::poll_until("Decommissioned", Duration::from_secs(60), || {
        let st = bm.admin_state(&uuid0);
        async move {
            (st == AdminState::Decommissioned)
                .then_some(())
                .ok_or_else(|| format!("{st:?}"))
        }
    })
    .await?;
    // Every finalized block on node 0 has its replicas elsewhere now.
    for (id, on) in replicas_on_disk(&c) {
        if on.contains(&0) {
            let elsewhere = on.iter().filter(|i| **i != 0).count();
            let want = bm.get_block(id).map(|_| 3).unwrap_or(0);
            if bm
                .get_block(id)
                .is_some_and(|(_, s)| s == rhdfs_blockmanager::BlockUcState::Complete)
            {
                assert!(
                    elsewhere >= want,
                    "blk_{id} has {elsewhere} replicas elsewhere"
                );
            }
        }
    }
    let report = bm.datanode_report(ReportKind::All);
    let info = report
        .iter()
        .find(|d| d.id.uuid == uuid0)
        .expect("dn0 in report");
    assert_eq!(info.admin_state, AdminState::Decommissioned);
    // Finish the open file, stop the decommissioned node: nothing is lost.
    w.write_bytes(bytes::Bytes::from_static(b"tail")).await?;
    w.close().await?;
    c.stop_datanode(0).await?;
    for (p, d) in &files {
        common::assert_same_bytes(p, &common::native_read(&client, p).await?, d);
    }
    let got = common::native_read(&client, "/dec/open").await?;
    assert_eq!(got.len(), open_data.len() + 4);
    common::assert_same_bytes("/dec/open", &got[..open_data.len()], &open_data);
    c.shutdown().await;
    Ok(())
}
