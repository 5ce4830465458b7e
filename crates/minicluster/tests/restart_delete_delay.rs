//! Issue 5, "What must work" item 2: a NameNode restarted right after a large delete, with
//! `dfs.namenode.startup.delay.block.deletion.sec=5`. The restarted NameNode replays the
//! delete from its edit log; the DataNodes' reports bring back replicas it no longer knows
//! (held by the storages' first reports, then queued for deletion).
//! Pending deletion equals the replicas involved and stays there until the delay has passed
//! (no deletion is sent before), then drains to zero and the replica files leave the disks.
//!
//! The first NameNode runs with a start-up delay of an hour, so it sends no deletion before
//! the restart and the number of replicas involved is exact.

use crate::common;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use bytes::Bytes;
use hdfs_native::{ClientBuilder, WriteOptions};
use rhdfs_minicluster::MiniCluster;

const FILES: usize = 600;
const REPLICATION: u32 = 2;
const DELAY: Duration = Duration::from_secs(5);

fn replica_files(dirs: &[PathBuf]) -> HashSet<PathBuf> {
    common::all_block_files(dirs).into_iter().collect()
}

/// Replicas waiting to be deleted, including those a storage's first report brought in,
/// which are held (`rhdfs_blockmanager::orphans`) until the start-up delay has passed.
fn pending(cluster: &MiniCluster) -> u64 {
    let bm = cluster.namenode().block_manager();
    let s = bm.fs_stats();
    s.pending_removal
        + s.pending_deletion
        + s.pending_deletion_commands
        + bm.orphan_counts().replicas
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn restart_after_large_delete_holds_deletion_for_the_startup_delay() -> anyhow::Result<()> {
    let mut cluster = MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.heartbeat.interval", "300ms")
        .conf("dfs.namenode.redundancy.interval.seconds", "300ms")
        .conf("dfs.namenode.invalidate.work.pct.per.iteration", "1.0")
        .conf("dfs.namenode.safemode.extension", "0")
        .conf("dfs.blockreport.intervalMsec", "3600000")
        .conf("dfs.blockreport.initialDelay", "0")
        .conf("dfs.namenode.startup.delay.block.deletion.sec", "3600")
        .build()
        .await?;
    let client = Arc::new(ClientBuilder::new().with_url(cluster.uri()).build()?);
    let mut tasks = Vec::new();
    for c in 0..16 {
        let client = Arc::clone(&client);
        tasks.push(tokio::spawn(async move {
            for i in (c..FILES).step_by(16) {
                let path = format!("/doomed/f{i}");
                let mut w = client
                    .create(&path, WriteOptions::default().replication(REPLICATION))
                    .await
                    .with_context(|| format!("create {path}"))?;
                w.write_bytes(Bytes::from_static(b"z")).await?;
                w.close().await.with_context(|| format!("close {path}"))?;
            }
            Ok::<_, anyhow::Error>(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    let involved = (FILES as u64) * u64::from(REPLICATION);
    let doomed = replica_files(&common::all_data_dirs(&cluster));
    assert_eq!(doomed.len() as u64, involved);
    assert!(client.delete("/doomed", true).await?);
    drop(client);

    // Restart at once, with the 5 s delay.
    let t0 = Instant::now();
    cluster
        .restart_namenode(&[("dfs.namenode.startup.delay.block.deletion.sec", "5")])
        .await?;
    let restarted_in = t0.elapsed();

    // The DataNodes re-register and report; every replica of the deleted files is pending.
    let full_at = loop {
        let p = pending(&cluster);
        if p == involved {
            break t0.elapsed();
        }
        assert!(p <= involved, "{p} pending > {involved}");
        if t0.elapsed() > DELAY {
            bail!("only {p} of {involved} replicas pending before the delay ran out");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Held: while the restarted NameNode has certainly been up less than the delay
    // (it started after t0), nothing is handed out and nothing leaves the disks.
    let mut held_samples = 0;
    loop {
        let p = pending(&cluster);
        let on_disk = replica_files(&common::all_data_dirs(&cluster));
        let after = t0.elapsed();
        if after >= DELAY {
            break;
        }
        assert_eq!(p, involved, "deletion started {after:?} after the restart");
        assert!(
            doomed.iter().all(|f| on_disk.contains(f)),
            "a replica was deleted at {after:?}"
        );
        held_samples += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Then it drains and the files go.
    let drained_at = loop {
        let on_disk = replica_files(&common::all_data_dirs(&cluster));
        if pending(&cluster) == 0 && doomed.iter().all(|f| !on_disk.contains(f)) {
            break t0.elapsed();
        }
        if t0.elapsed() > Duration::from_secs(120) {
            bail!("did not drain: {} pending", pending(&cluster));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    eprintln!(
        "restart took {restarted_in:?}; all {involved} pending at {full_at:?}; held for {held_samples} samples; drained at {drained_at:?}"
    );
    assert!(held_samples > 0, "the hold was observed");
    assert_eq!(
        cluster.namenode().block_manager().fs_stats().blocks_total,
        0
    );
    cluster.shutdown().await;
    Ok(())
}
