//! Issue 16, item 1: one DataNode of twelve delays every packet it receives (fault hook,
//! +200 ms). Its peers report it, the NameNode lists it (getSlowDatanodeReport,
//! `dfsadmin -report -slownodes`, /jmx SlowPeersReport), leaves it out of new pipelines and
//! sorts it last for reads, and tells it it is slow (isSlownode); its acks then carry SLOW
//! (dfs.pipeline.slownode) and a writer whose pipeline holds it drops it after
//! dfs.client.mark.slownode.as.badnode.threshold such acks and completes the file intact.
//! When the delay ends the node is eligible again once its reports have expired.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::fsck::dfsadmin::{self, ReportFilter};

const WAIT: Duration = Duration::from_secs(180);

/// Small windows and thresholds so a slow peer is found within seconds.
fn builder() -> rhdfs_minicluster::MiniClusterBuilder {
    MiniCluster::builder()
        .datanodes(12)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.datanode.peer.stats.enabled", "true")
        .conf("dfs.datanode.outliers.report.interval", "1s")
        .conf("dfs.metrics.rolling.averages.window.length", "1000")
        .conf("dfs.metrics.rolling.averages.window.numbers", "30")
        .conf(
            "dfs.datanode.peer.metrics.min.outlier.detection.samples",
            "2",
        )
        .conf("dfs.datanode.min.outlier.detection.nodes", "3")
        .conf("dfs.namenode.slowpeer.collect.interval", "1s")
        .conf(
            "dfs.namenode.block-placement-policy.exclude-slow-nodes.enabled",
            "true",
        )
        .conf("dfs.namenode.avoid.read.slow.datanode", "true")
        .conf("dfs.pipeline.slownode", "true")
}

/// Writes small files from four tasks until `stop` is set, so every node is measured by its
/// upstream peers.
fn start_load(fs: FileSystem, stop: Arc<AtomicBool>) -> Vec<tokio::task::JoinHandle<()>> {
    (0..4)
        .map(|t| {
            let fs = fs.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let data = common::random_bytes(2048, t);
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let p = format!("/load/t{t}/f{i}");
                    i += 1;
                    if let Ok(mut w) = fs.create(&p, CreateOptions::default()).await {
                        let _ = w.write(&data).await;
                        let _ = w.close().await;
                    }
                }
            })
        })
        .collect()
}

async fn slow_report(fs: &FileSystem) -> anyhow::Result<Vec<String>> {
    let r: rhdfs_proto::hdfs::GetSlowDatanodeReportResponseProto = fs
        .call(
            "getSlowDatanodeReport",
            &rhdfs_proto::hdfs::GetSlowDatanodeReportRequestProto {},
        )
        .await?;
    Ok(r.datanode_info_proto
        .iter()
        .map(|d| format!("{}:{}", d.id.ip_addr, d.id.xfer_port))
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn slow_node_is_reported_avoided_and_replaced() -> anyhow::Result<()> {
    let c = builder().build().await?;
    let fs = FileSystem::connect(&c.uri()).await?;
    const SLOW: usize = 5;
    let dn = c
        .datanode(SLOW)
        .ok_or_else(|| anyhow::anyhow!("no DataNode {SLOW}"))?;
    let slow_addr = dn.xfer_addr().to_string();

    // A writer whose pipeline holds the node that is going to be slow, kept open.
    let held_data = common::random_bytes(40 * 4096, 7);
    let mut held = None;
    for i in 0..200 {
        let mut w = fs
            .create(&format!("/held/f{i}"), CreateOptions::default())
            .await?;
        w.write(&held_data[..4096]).await?;
        w.hflush().await?;
        if w.pipeline().contains(&slow_addr) {
            held = Some(w);
            break;
        }
        w.close().await?;
    }
    let mut held = held.ok_or_else(|| anyhow::anyhow!("no pipeline ever held {slow_addr}"))?;
    // A closed file with a replica on the slow node, for the read order.
    let mut read_file = None;
    for i in 0..200 {
        let p = format!("/read/f{i}");
        let mut w = fs.create(&p, CreateOptions::default()).await?;
        w.write(b"read order").await?;
        w.close().await?;
        if fs.block_locations(&p).await?[0].hosts.contains(&slow_addr) {
            read_file = Some(p);
            break;
        }
    }
    let read_file = read_file.ok_or_else(|| anyhow::anyhow!("no replica on {slow_addr}"))?;

    dn.faults().set_packet_delay(Duration::from_millis(200));
    let stop = Arc::new(AtomicBool::new(false));
    let load = start_load(fs.clone(), stop.clone());

    // Reported by several peers and listed.
    let nn = c.namenode().rpc_addr().to_string();
    let user = common::current_user();
    let report = common::poll_until("the slow node in -report -slownodes", WAIT, || {
        let (fs, nn, user, slow_addr) = (&fs, &nn, &user, &slow_addr);
        async move {
            let listed = slow_report(fs).await.map_err(|e| e.to_string())?;
            if !listed.contains(slow_addr) {
                return Err(format!("slow nodes: {listed:?}"));
            }
            let slow_only = ReportFilter {
                slow: true,
                ..ReportFilter::default()
            };
            dfsadmin::report(nn, user, slow_only)
                .await
                .map_err(|e| e.to_string())
        }
    })
    .await?;
    assert!(report.contains("Slow datanodes ("), "{report}");
    assert!(report.contains(&format!("Name: {slow_addr}")), "{report}");
    assert!(!report.contains("Live datanodes"), "{report}");
    let jmx = common::poll_until("SlowPeersReport with two reporters", WAIT, || {
        let c = &c;
        let slow_addr = &slow_addr;
        async move {
            let addr = common::nn_http(c).map_err(|e| e.to_string())?;
            let (_, body) = rhdfs_namenode::http::client::get(
                &addr,
                "/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus",
                Duration::from_secs(20),
            )
            .await
            .map_err(|e| e.to_string())?;
            let reporters = body.matches("ReportingNode").count();
            let ip = slow_addr.split(':').next().unwrap_or_default();
            (body.contains("SlowPeersReport") && body.contains(ip) && reporters >= 2)
                .then_some(body.clone())
                .ok_or_else(|| format!("{reporters} reporters in {body}"))
        }
    })
    .await?;
    assert!(jmx.contains("UpperLimitLatency"), "{jmx}");

    // Told it is slow.
    common::poll_until("isSlownode on the slow DataNode", WAIT, || async {
        let told = dn.metrics().is_some_and(|m| m.is_slow_node());
        told.then_some(()).ok_or_else(|| "not yet".to_string())
    })
    .await?;
    stop.store(true, Ordering::Relaxed);
    for h in load {
        h.await?;
    }

    // Excluded from new pipelines while listed.
    for i in 0..6 {
        let mut w = fs
            .create(&format!("/after/f{i}"), CreateOptions::default())
            .await?;
        w.write(b"x").await?;
        w.hflush().await?;
        assert!(
            !w.pipeline().contains(&slow_addr),
            "new pipeline {:?} holds {slow_addr}",
            w.pipeline()
        );
        w.close().await?;
    }
    // Sorted last for reads.
    let hosts = fs.block_locations(&read_file).await?[0].hosts.clone();
    assert_eq!(hosts.last(), Some(&slow_addr), "{hosts:?}");

    // The held writer sees SLOW in its acks and replaces the node.
    for chunk in held_data[4096..].chunks(4096) {
        held.write(chunk).await?;
        held.hflush().await?;
        if !held.pipeline().contains(&slow_addr) {
            break;
        }
    }
    assert!(
        !held.pipeline().contains(&slow_addr),
        "the slow node is still in {:?}",
        held.pipeline()
    );
    let path = held.path().to_string();
    let rest_from = held.pos() as usize;
    held.write(&held_data[rest_from..]).await?;
    held.close().await?;
    let got = fs.open(&path).await?.read_to_end().await?;
    common::assert_same_bytes("held file", &got, &held_data);

    // The delay ends: once the reports expire the node is eligible again.
    dn.faults().set_packet_delay(Duration::ZERO);
    common::poll_until("the node no longer listed nor told slow", WAIT, || async {
        let listed = slow_report(&fs).await.map_err(|e| e.to_string())?;
        let told = dn.metrics().is_some_and(|m| m.is_slow_node());
        (!listed.contains(&slow_addr) && !told)
            .then_some(())
            .ok_or_else(|| format!("listed {listed:?}, told {told}"))
    })
    .await?;
    c.shutdown().await;
    Ok(())
}
