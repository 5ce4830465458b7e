//! Issue 16, item 1: one DataNode of twelve delays every packet it receives (fault hook,
//! +200 ms before it reads the next one off its socket). With small socket buffers
//! (dfs.datanode.transfer.socket.{send,recv}.buffer.size) the node upstream of it waits in
//! its write and flush of each packet — the latency peers measure, as in Hadoop — so its
//! peers report it, the NameNode lists it (getSlowDatanodeReport,
//! `dfsadmin -report -slownodes`, /jmx SlowPeersReport), leaves it out of new pipelines and
//! sorts it last for reads, and tells it it is slow (isSlownode); its acks then carry SLOW
//! (dfs.pipeline.slownode) and a writer whose pipeline holds it drops it after
//! dfs.client.mark.slownode.as.badnode.threshold such acks and completes the file intact.
//! When the delay ends the node is eligible again once its reports have expired.
//!
//! Item 2: the same twelve nodes, no fault hook, rhdfs's default thresholds (peer stats,
//! exclusion and read ordering on by default) and the same short intervals, under mixed load
//! (concurrent hflushed and streamed writes with replication 3, reads): once most DataNodes
//! have judged their peers several times, nobody was ever reported.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::fsck::dfsadmin::{self, ReportFilter};

const WAIT: Duration = Duration::from_secs(180);

/// Twelve DataNodes with short intervals: heartbeats and slow peer reports every second,
/// 1 s rolling windows, the slow set collected every second.
fn short_intervals(windows: &str) -> rhdfs_minicluster::MiniClusterBuilder {
    MiniCluster::builder()
        .datanodes(12)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.datanode.outliers.report.interval", "1s")
        .conf("dfs.metrics.rolling.averages.window.length", "1000")
        .conf("dfs.metrics.rolling.averages.window.numbers", windows)
        .conf("dfs.namenode.slowpeer.collect.interval", "1s")
}

/// Small windows and thresholds so a slow peer is found within seconds; small socket
/// buffers so a slow reader holds up its upstream's sends after a packet or two.
fn builder() -> rhdfs_minicluster::MiniClusterBuilder {
    short_intervals("30")
        .conf("dfs.datanode.peer.stats.enabled", "true")
        .conf("dfs.datanode.transfer.socket.send.buffer.size", "16384")
        .conf("dfs.datanode.transfer.socket.recv.buffer.size", "16384")
        .conf(
            "dfs.datanode.peer.metrics.min.outlier.detection.samples",
            "2",
        )
        .conf("dfs.datanode.min.outlier.detection.nodes", "3")
        .conf(
            "dfs.namenode.block-placement-policy.exclude-slow-nodes.enabled",
            "true",
        )
        .conf("dfs.namenode.avoid.read.slow.datanode", "true")
        .conf("dfs.pipeline.slownode", "true")
}

/// Writes 256 KiB files (four 64 KiB packets each, more than the socket buffers hold) from
/// four tasks until `stop` is set, so every node is measured by its upstream peers.
fn start_load(fs: FileSystem, stop: Arc<AtomicBool>) -> Vec<tokio::task::JoinHandle<()>> {
    (0..4)
        .map(|t| {
            let fs = fs.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let data = common::random_bytes(256 * 1024, t);
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
    // rhdfs's account: which peers reported it, their latencies and limits.
    assert!(report.contains("Reported slow by: "), "{report}");
    assert!(report.contains(" ms (median "), "{report}");
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
    assert!(jmx.contains("EligibleAgainInSeconds"), "{jmx}");

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
    // Sorted for reads after every node not itself reported slow: under a loaded machine the
    // peers may also report another node, which then sorts among the slow ones (the reports
    // read before and after the call cover a collection between them).
    let slow_before = slow_report(&fs).await?;
    let hosts = fs.block_locations(&read_file).await?[0].hosts.clone();
    let slow_after = slow_report(&fs).await?;
    let at = hosts
        .iter()
        .position(|h| h == &slow_addr)
        .ok_or_else(|| anyhow::anyhow!("{slow_addr} not among {hosts:?}"))?;
    for h in &hosts[at + 1..] {
        assert!(
            slow_before.contains(h) || slow_after.contains(h),
            "{h} (not reported slow) sorted after {slow_addr}: {hosts:?}; slow {slow_before:?} / {slow_after:?}"
        );
    }

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

/// Mixed load on a healthy cluster until `stop`: four writers hflushing 4 KiB packets into
/// files of 64 packets, two streaming 1 MiB files, two readers reading back what is done.
fn start_mixed_load(
    fs: FileSystem,
    stop: Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<anyhow::Result<u64>>> {
    let mut tasks = Vec::new();
    for t in 0..6u64 {
        let (fs, stop) = (fs.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let hflushed = t < 4;
            let data = common::random_bytes(if hflushed { 4096 } else { 1 << 20 }, t);
            let mut files = 0;
            while !stop.load(Ordering::Relaxed) {
                let p = format!("/mixed/w{t}/f{files}");
                let mut w = fs.create(&p, CreateOptions::default()).await?;
                if hflushed {
                    for _ in 0..64 {
                        w.write(&data).await?;
                        w.hflush().await?;
                    }
                } else {
                    w.write(&data).await?;
                }
                w.close().await?;
                files += 1;
            }
            Ok(files)
        }));
    }
    for t in 0..2u64 {
        let (fs, stop) = (fs.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut reads = 0;
            while !stop.load(Ordering::Relaxed) {
                // The streaming writers' finished files (w4, w5).
                let dir = format!("/mixed/w{}", 4 + t);
                let done = fs.list_status(&dir).await.map(|l| l.len()).unwrap_or(0);
                if done < 2 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                let p = format!("{dir}/f{}", reads % (done as u64 - 1));
                let got = fs.open(&p).await?.read_to_end().await?;
                anyhow::ensure!(got.len() == 1 << 20, "{p}: {} bytes", got.len());
                reads += 1;
            }
            Ok(reads)
        }));
    }
    tasks
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn healthy_cluster_under_mixed_load_flags_nobody() -> anyhow::Result<()> {
    // rhdfs's default thresholds; 60 one-second windows so that the load of a test machine
    // gives most DataNodes enough samples of enough peers.
    let c = short_intervals("60").build().await?;
    let fs = FileSystem::connect(&c.uri()).await?;
    let stop = Arc::new(AtomicBool::new(false));
    let load = start_mixed_load(fs.clone(), stop.clone());
    let judged = |c: &MiniCluster| -> Vec<u64> {
        (0..12)
            .map(|i| {
                c.datanode(i)
                    .and_then(|d| d.metrics())
                    .and_then(|m| m.peers.as_ref())
                    .map_or(0, |p| p.judged_reports())
            })
            .collect()
    };
    // Reports HAVE been exchanged: at least half the DataNodes have judged enough peers
    // (dfs.datanode.min.outlier.detection.nodes with enough samples each) in three reports.
    let bm = c.namenode().block_manager();
    let result = common::poll_until("DataNodes judging their peers", WAIT, || async {
        let j = judged(&c);
        let entries = bm.slow_nodes().peer_entries_received();
        if entries > 0 {
            // Fails the wait at once with the reports in the message.
            return Ok(Err(format!(
                "{entries} slow peer entries: {:?}",
                bm.slow_nodes().slow_peers_report()
            )));
        }
        (j.iter().filter(|n| **n >= 3).count() >= 6)
            .then_some(Ok(j.clone()))
            .ok_or_else(|| format!("judged reports per DataNode: {j:?}"))
    })
    .await?;
    stop.store(true, Ordering::Relaxed);
    let mut done = Vec::new();
    for h in load {
        done.push(h.await??);
    }
    let judged_then = result.map_err(anyhow::Error::msg)?;
    assert_eq!(bm.slow_nodes().peer_entries_received(), 0);
    assert!(slow_report(&fs).await?.is_empty());
    for i in 0..12 {
        let d = c
            .datanode(i)
            .ok_or_else(|| anyhow::anyhow!("no DataNode {i}"))?;
        assert!(
            !d.metrics().is_some_and(|m| m.is_slow_node()),
            "DataNode {i} told slow"
        );
    }
    eprintln!("judged reports {judged_then:?}; files written / read per task {done:?}");
    c.shutdown().await;
    Ok(())
}
