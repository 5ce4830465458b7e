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

/// Waits until `path` is closed on the NameNode.
async fn wait_closed(fs: &rhdfs_client::FileSystem, path: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !fs.is_file_closed(path).await? {
        anyhow::ensure!(Instant::now() < deadline, "{path} was never closed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

/// Starts a write of `path` whose pipeline then fails for good: 100,000 bytes hflushed,
/// then the third node of the pipeline acks ERROR and no fourth node can replace it (three
/// DataNodes, replication 3, DEFAULT replacement policy).
pub(crate) async fn write_then_fail(
    c: &rhdfs_minicluster::MiniCluster,
    fs: &rhdfs_client::FileSystem,
    path: &str,
    d: &[u8],
) -> anyhow::Result<rhdfs_client::FileWriter> {
    let mut w = fs.create(path, CreateOptions::default()).await?;
    w.write(&d[..100_000]).await?;
    w.hflush().await?;
    common::set_ack_errors(c, &[&w.pipeline()[2]]);
    Ok(w)
}

/// Writes the rest of `d` to a writer from `write_then_fail` and closes it, as an application
/// closes a stream whatever its writes returned: the close fails, naming the replacement
/// policy (the failure shows in the write or in the close, as the acks come; a close after
/// a failed write returns the write's error).
pub(crate) async fn close_fails_for_want_of_a_replacement(
    w: &mut rhdfs_client::FileWriter,
    d: &[u8],
) -> anyhow::Result<()> {
    let _ = w.write(&d[100_000..]).await;
    let e = w
        .close()
        .await
        .expect_err("no node can replace the failed one");
    anyhow::ensure!(
        e.to_string().contains("Failed to replace a bad datanode"),
        "{e}"
    );
    Ok(())
}

/// A write that fails on its DataNodes leaves no file open behind it while its client
/// lives (`dfs.client.write.recover.lease.on.close.exception`, on by default): closing the
/// failed writer, or dropping it, has the NameNode recover the lease, and the file closes
/// with every hflushed byte. With the key off the file stays open, as in Hadoop by default.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_failed_by_its_datanodes_is_closed_by_lease_recovery() -> anyhow::Result<()> {
    let c = common::cluster(3).await?;
    let fs = fs(&c, &[]).await?;
    // Another file open for write: the client's lease is renewed all along, so nothing but
    // the recovery closes the failed file.
    let mut keep = fs.create("/keep", CreateOptions::default()).await?;
    keep.write(b"open").await?;
    keep.hflush().await?;
    let d = data(300_000, 11);

    // A close that fails.
    let mut w = write_then_fail(&c, &fs, "/closed", &d).await?;
    close_fails_for_want_of_a_replacement(&mut w, &d).await?;
    common::set_ack_errors(&c, &[]);
    wait_closed(&fs, "/closed").await?;
    let got = read_file(&fs, "/closed").await?;
    assert!(got.len() >= 100_000, "closed at {}", got.len());
    assert_eq!(&got[..], &d[..got.len()]);

    // A writer dropped after its write failed.
    let mut w = write_then_fail(&c, &fs, "/dropped", &d).await?;
    let r = async {
        w.write(&d[100_000..]).await?;
        w.hflush().await
    }
    .await;
    assert!(r.is_err(), "the pipeline failure reaches hflush");
    common::set_ack_errors(&c, &[]);
    drop(w);
    wait_closed(&fs, "/dropped").await?;
    let got = read_file(&fs, "/dropped").await?;
    assert!(got.len() >= 100_000, "closed at {}", got.len());
    assert_eq!(&got[..], &d[..got.len()]);

    // The key off: the failed file stays open under the (renewed) lease.
    let off = fs_off(&c).await?;
    let mut keep_off = off.create("/keep-off", CreateOptions::default()).await?;
    keep_off.write(b"open").await?;
    keep_off.hflush().await?;
    let mut w = write_then_fail(&c, &off, "/left-open", &d).await?;
    close_fails_for_want_of_a_replacement(&mut w, &d).await?;
    common::set_ack_errors(&c, &[]);
    drop(w);
    assert!(!off.is_file_closed("/left-open").await?);

    keep.close().await?;
    keep_off.close().await?;
    c.shutdown().await;
    Ok(())
}

async fn fs_off(c: &rhdfs_minicluster::MiniCluster) -> anyhow::Result<rhdfs_client::FileSystem> {
    fs(
        c,
        &[("dfs.client.write.recover.lease.on.close.exception", "false")],
    )
    .await
}
