//! Issue 16, item 3: a failing volume. A DataNode with two volumes loses one (a fault hook
//! makes its I/O and its disk check fail): with `dfs.datanode.failed.volumes.tolerated=1`
//! it keeps serving from the other, its replicas on the failed volume are copied again from
//! the other nodes, and the NameNode's heartbeat view, `dfsadmin -report`, `/jmx`,
//! `/metrics` and the Datanodes page show one failed volume with its location. With the
//! default of 0 tolerated, a volume whose directory is replaced by a file stops the
//! DataNode, and the NameNode declares it dead on its FATAL_DISK_ERROR report.

use crate::common;

use std::collections::HashSet;
use std::time::Duration;

use rhdfs_blockmanager::ReportKind;
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::fsck::dfsadmin::{self, ReportFilter};
use rhdfs_namenode::http::client::get;

const WAIT: Duration = Duration::from_secs(120);

fn builder(n: usize, tolerated: &str) -> rhdfs_minicluster::MiniClusterBuilder {
    MiniCluster::builder()
        .datanodes(n)
        .volumes_per_datanode(2)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.heartbeat.recheck-interval", "500")
        .conf("dfs.namenode.redundancy.interval.seconds", "1")
        .conf("dfs.namenode.reconstruction.pending.timeout-sec", "5")
        .conf("dfs.datanode.failed.volumes.tolerated", tolerated)
        .conf("dfs.datanode.disk.check.min.gap", "1s")
}

async fn write_file(fs: &FileSystem, p: &str, seed: u64) -> anyhow::Result<Vec<u8>> {
    let data = common::random_bytes(10_000, seed);
    let mut w = fs.create(p, CreateOptions::default()).await?;
    w.write(&data).await?;
    w.close().await?;
    Ok(data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failed_volume_leaves_service_and_its_replicas_are_copied_again() -> anyhow::Result<()> {
    let c = builder(4, "1").build().await?;
    let fs = FileSystem::connect(&c.uri()).await?;
    let bm = c.namenode().block_manager().clone();
    let dn0 = c.datanode(0).expect("dn0");
    let ds = dn0.dataset().clone();
    // Enough files (replication 3 on 4 nodes) that dn0 holds replicas on both volumes.
    let mut files = Vec::new();
    for i in 0..24u64 {
        let p = format!("/v/f{i}");
        files.push((p.clone(), write_file(&fs, &p, 100 + i).await?));
        if i >= 5 {
            let on: HashSet<usize> = ds
                .pools()
                .iter()
                .flat_map(|b| ds.replicas(b))
                .map(|r| r.volume)
                .collect();
            if on.len() == 2 {
                break;
            }
        }
    }
    common::poll_until("fully replicated", WAIT, || {
        let s = bm.fs_stats();
        async move {
            (s.under_replicated == 0)
                .then_some(())
                .ok_or_else(|| format!("{s:?}"))
        }
    })
    .await?;
    let bpid = dn0.block_pool_id().expect("registered");
    let on_vol1: Vec<u64> = ds
        .replicas(&bpid)
        .into_iter()
        .filter(|r| r.volume == 1)
        .map(|r| r.id)
        .collect();
    let on_vol0 = ds.replicas(&bpid).iter().filter(|r| r.volume == 0).count();
    assert!(
        !on_vol1.is_empty() && on_vol0 > 0,
        "dn0 holds replicas on both volumes"
    );
    let failed_dir = c.datanode_data_dirs(0)[1].display().to_string();

    assert!(dn0.faults().set_volume_io_error(1, true));

    // The NameNode hears of one failed volume and copies the lost replicas elsewhere.
    common::poll_until("one volume failure at the NameNode", WAIT, || {
        let s = bm.fs_stats();
        async move {
            (s.volume_failures == 1)
                .then_some(())
                .ok_or_else(|| format!("{s:?}"))
        }
    })
    .await?;
    let uuid0 = dn0.uuid().to_string();
    let failed_storage = ds.volume(1).expect("volume 1").storage_id.clone();
    // Three copies again, none on the failed storage (a new copy may land on dn0's other
    // volume).
    common::poll_until("the failed volume's blocks copied again", WAIT, || {
        let missing: Vec<String> = on_vol1
            .iter()
            .filter_map(|id| {
                let locs = bm.locations(*id);
                let failed = locs.iter().any(|l| l.storage_id == failed_storage);
                (locs.len() != 3 || failed).then(|| format!("blk_{id}: {} locations", locs.len()))
            })
            .collect();
        async move {
            missing
                .is_empty()
                .then_some(())
                .ok_or_else(|| missing.join(", "))
        }
    })
    .await?;

    // dn0 keeps serving from its other volume, and new replicas go there only.
    assert!(bm.is_datanode_alive(&uuid0));
    assert!(ds.volume(1).is_some_and(|v| v.is_failed()));
    assert!(ds.replicas(&bpid).iter().all(|r| r.volume == 0));
    assert!(ds.replicas(&bpid).len() >= on_vol0);
    for (p, data) in &files {
        let got = fs.open(p).await?.read_to_end().await?;
        assert_eq!(&got, data, "{p}");
    }
    for i in 0..3u64 {
        write_file(&fs, &format!("/v/after{i}"), 900 + i).await?;
    }
    assert!(ds.replicas(&bpid).iter().all(|r| r.volume == 0));

    // The NameNode's views.
    let report = bm.datanode_report(ReportKind::Live);
    let me = report
        .iter()
        .find(|d| d.id.uuid == uuid0)
        .expect("dn0 live");
    assert_eq!(me.volume_failures, 1);
    let summary = me
        .volume_failure_summary
        .as_ref()
        .expect("a failure summary");
    assert_eq!(summary.failed_storage_locations, vec![failed_dir.clone()]);
    assert!(summary.estimated_capacity_lost_total > 0);
    let nn = c.namenode().rpc_addr().to_string();
    let text = dfsadmin::report(&nn, &common::current_user(), ReportFilter::default()).await?;
    assert!(text.contains("Failed Volumes: 1\n"), "{text}");
    assert!(
        text.contains(&format!("Failed Storage Locations: {failed_dir}\n")),
        "{text}"
    );
    let http = common::nn_http(&c)?;
    let t = Duration::from_secs(20);
    let (_, jmx) = get(
        &http,
        "/jmx?qry=Hadoop:service=NameNode,name=FSNamesystem",
        t,
    )
    .await?;
    let doc: serde_json::Value = serde_json::from_str(&jmx)?;
    let bean = &doc["beans"][0];
    assert_eq!(bean["VolumeFailuresTotal"], 1, "{jmx}");
    assert!(
        bean["EstimatedCapacityLostTotal"].as_u64().unwrap_or(0) > 0,
        "{jmx}"
    );
    let (_, info) = get(
        &http,
        "/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo",
        t,
    )
    .await?;
    let doc: serde_json::Value = serde_json::from_str(&info)?;
    let live: serde_json::Value =
        serde_json::from_str(doc["beans"][0]["LiveNodes"].as_str().unwrap_or("{}"))?;
    let entry = live
        .as_object()
        .and_then(|m| {
            m.values()
                .find(|v| v["xferaddr"] == dn0.xfer_addr().to_string())
        })
        .expect("dn0 in LiveNodes");
    assert_eq!(entry["volfails"], 1, "{entry}");
    assert_eq!(
        entry["failedStorageLocations"][0],
        failed_dir.as_str(),
        "{entry}"
    );
    let (_, metrics) = get(&http, "/metrics", t).await?;
    assert!(
        metrics.contains("\nrhdfs_namenode_volume_failures 1\n"),
        "{metrics}"
    );
    let (_, dn_jmx) = get(
        &dn0.http_addr().to_string(),
        "/jmx?qry=Hadoop:service=DataNode,name=FSDatasetState",
        t,
    )
    .await?;
    let doc: serde_json::Value = serde_json::from_str(&dn_jmx)?;
    let fsd = &doc["beans"][0];
    assert_eq!(fsd["NumFailedVolumes"], 1, "{dn_jmx}");
    assert_eq!(
        fsd["FailedStorageLocations"][0],
        failed_dir.as_str(),
        "{dn_jmx}"
    );
    let (_, act) = get(
        &dn0.http_addr().to_string(),
        "/jmx?qry=Hadoop:service=DataNode,name=DataNodeActivity-*",
        t,
    )
    .await?;
    let doc: serde_json::Value = serde_json::from_str(&act)?;
    assert_eq!(doc["beans"][0]["VolumeFailures"], 1, "{act}");
    let (_, page) = get(&http, "/datanodes.html", t).await?;
    assert!(page.contains("<h2>Volume Failures</h2>"), "{page}");
    assert!(page.contains(&failed_dir), "{page}");
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_failure_more_than_tolerated_stops_the_datanode() -> anyhow::Result<()> {
    let c = builder(2, "0").build().await?;
    let bm = c.namenode().block_manager().clone();
    let dn1 = c.datanode(1).expect("dn1");
    let uuid1 = dn1.uuid().to_string();
    common::poll_until("dn1 registered", WAIT, || {
        let up = dn1.block_pool_id().is_some();
        async move { up.then_some(()).ok_or_else(|| "not yet".to_string()) }
    })
    .await?;
    // A real condition, not a hook: the volume's directory becomes a file.
    let dir = c.datanode_data_dirs(1)[1].clone();
    std::fs::rename(&dir, dir.with_extension("gone"))?;
    std::fs::write(&dir, b"not a directory")?;

    let failed = tokio::time::timeout(WAIT, dn1.volumes_failed()).await?;
    assert!(failed.contains(&dir.display().to_string()), "{failed}");
    assert!(failed.starts_with("DataNode failed volumes:"), "{failed}");
    common::poll_until("dn1 dead at the NameNode", WAIT, || {
        let alive = bm.is_datanode_alive(&uuid1);
        async move {
            (!alive)
                .then_some(())
                .ok_or_else(|| "still alive".to_string())
        }
    })
    .await?;
    assert!(!dn1.is_registered());
    assert!(bm.is_datanode_alive(c.datanode(0).expect("dn0").uuid()));
    c.shutdown().await;
    Ok(())
}
