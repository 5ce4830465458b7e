//! Issue 4, "What must work" item 5: a writer dies after hflush; another client reads
//! the hflushed bytes, recoverLease starts block recovery (the primary DataNode brings the
//! replicas to a common length and commits it), and the file is closed with at least the
//! hflushed length, its replicas agreeing.

use crate::common;

use std::time::{Duration, Instant};

use common::{data, fs, read_file};
use rhdfs_client::CreateOptions;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writer_killed_after_hflush_then_recover_lease_closes_the_file() -> anyhow::Result<()> {
    let c = rhdfs_minicluster::MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.namenode.fs-limits.min-block-size", "0")
        .conf("dfs.heartbeat.interval", "1")
        .wait_ready(Duration::from_secs(60))
        .build()
        .await?;
    let writer_fs = fs(&c, &[]).await?;
    let d = data(300_000, 7);
    let mut w = writer_fs.create("/dead", CreateOptions::default()).await?;
    w.write(&d).await?;
    w.hflush().await?;
    // The writer dies: no close, no more lease renewals.
    std::mem::forget(w);
    drop(writer_fs);

    let fs2 = fs(&c, &[]).await?;
    let seen = read_file(&fs2, "/dead").await?;
    assert!(
        seen.len() >= d.len(),
        "read {} of {} hflushed bytes",
        seen.len(),
        d.len()
    );
    assert_eq!(&seen[..d.len()], &d[..]);

    let gs_before = c
        .namenode()
        .namesystem()
        .with_ns(|ns| ns.last_generation_stamp());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !fs2.recover_lease("/dead").await? {
        assert!(
            Instant::now() < deadline,
            "recoverLease never closed the file"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The file was closed by block recovery: a recovery id (new GS) was handed out.
    let gs_after = c
        .namenode()
        .namesystem()
        .with_ns(|ns| ns.last_generation_stamp());
    assert!(gs_after > gs_before, "no block recovery ran");
    let st = fs2.status("/dead").await?;
    assert!(st.length >= d.len() as u64, "closed at {}", st.length);
    let after = read_file(&fs2, "/dead").await?;
    assert_eq!(after.len() as u64, st.length);
    assert_eq!(&after[..d.len()], &d[..]);
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hard_limit_recovers_a_dead_writers_file_by_itself() -> anyhow::Result<()> {
    let c = rhdfs_minicluster::MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.namenode.fs-limits.min-block-size", "0")
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.lease-hard-limit-sec", "2")
        .conf("dfs.namenode.lease-recheck-interval-ms", "200")
        .wait_ready(Duration::from_secs(60))
        .build()
        .await?;
    let writer_fs = fs(&c, &[]).await?;
    let d = data(70_000, 9);
    let mut w = writer_fs
        .create("/orphan", CreateOptions::default())
        .await?;
    w.write(&d).await?;
    w.hflush().await?;
    std::mem::forget(w);
    drop(writer_fs);

    let fs2 = fs(&c, &[]).await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let closed = c
            .namenode()
            .namesystem()
            .with_ns(|ns| ns.leases().is_empty());
        if closed {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the hard limit never closed the file"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let st = fs2.status("/orphan").await?;
    assert!(st.length >= d.len() as u64, "closed at {}", st.length);
    assert_eq!(&read_file(&fs2, "/orphan").await?[..d.len()], &d[..]);
    c.shutdown().await;
    Ok(())
}
