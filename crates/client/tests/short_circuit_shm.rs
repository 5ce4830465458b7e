//! The shared-memory slot protocol of short-circuit reads: a replica the DataNode invalidates
//! stops being read through the descriptors a client already holds; slots go back to the
//! DataNode when the client closes a replica's descriptors and with the segment's connection;
//! a DataNode without shared memory is still read short-circuit, without slots.

use std::time::{Duration, Instant};

use rhdfs_client::FileSystem;
use rhdfs_minicluster::MiniCluster;

use crate::common::{BLOCK, client_conf, data, wait_hosts, write_file};

async fn cluster(dir: &tempfile::TempDir, shm_paths: &str) -> anyhow::Result<MiniCluster> {
    Ok(MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.namenode.fs-limits.min-block-size", "0")
        .conf("dfs.blocksize", BLOCK.to_string())
        .conf("dfs.client.read.shortcircuit", "true")
        .conf("dfs.domain.socket.path", socket_template(dir))
        .conf("dfs.datanode.shared.file.descriptor.paths", shm_paths)
        .wait_ready(Duration::from_secs(60))
        .build()
        .await?)
}

fn socket_template(dir: &tempfile::TempDir) -> String {
    dir.path().join("dn._PORT.sock").display().to_string()
}

async fn sc_client(
    c: &MiniCluster,
    dir: &tempfile::TempDir,
    extra: &[(&str, &str)],
) -> anyhow::Result<FileSystem> {
    let path = socket_template(dir);
    let mut conf = client_conf(&[
        ("dfs.client.read.shortcircuit", "true"),
        ("dfs.domain.socket.path", &path),
        ("dfs.replication", "1"),
        ("dfs.client.retry.window.base", "10"),
    ]);
    for (k, v) in extra {
        conf.set(k, *v);
    }
    Ok(FileSystem::connect_with(Some(&c.uri()), conf).await?)
}

/// (segments, registered slots) on the cluster's DataNode.
fn dn_slots(c: &MiniCluster) -> (usize, usize) {
    c.running_datanodes()
        .map(|(_, dn)| dn.dataset().short_circuit_registry().counts())
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// Waits until `cond` holds (at most 60 s).
async fn wait_for(what: &str, mut cond: impl FnMut() -> bool) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond() {
        anyhow::ensure!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_replica_is_not_read_through_cached_descriptors() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let shm = tempfile::tempdir()?;
    let c = cluster(&dir, &shm.path().display().to_string()).await?;
    let fs = sc_client(&c, &dir, &[]).await?;
    let d = data(BLOCK as usize / 2, 21);
    write_file(&fs, "/f", &d).await?;
    let loc = wait_hosts(&fs, "/f", 1).await?.remove(0);

    let mut r = fs.open("/f").await?;
    assert_eq!(&r.read_to_end().await?[..], &d[..]);
    assert_eq!(fs.short_circuit_stats(), (1, d.len() as u64));
    assert_eq!(
        dn_slots(&c),
        (1, 1),
        "one segment, one slot for the replica"
    );
    // The cached descriptors are reused while the replica is valid.
    r.seek(0);
    assert_eq!(&r.read_to_end().await?[..], &d[..]);
    assert_eq!(fs.short_circuit_stats(), (1, 2 * d.len() as u64));

    // Deleted through the NameNode; once the DataNode processed the invalidation the open
    // descriptors (whose file data is still readable) are not used again.
    assert!(fs.delete("/f", false).await?);
    let dn_has = || {
        c.running_datanodes().any(|(_, dn)| {
            let ds = dn.dataset();
            ds.pools().iter().any(|p| ds.get(p, loc.block_id).is_some())
        })
    };
    wait_for("the DataNode to delete the replica", || !dn_has()).await?;
    r.seek(0);
    let again = r.read_to_end().await;
    assert!(
        again.is_err(),
        "the deleted only replica is not read: got {:?} bytes",
        again.as_ref().map(|b| b.len())
    );
    assert_eq!(
        fs.short_circuit_stats(),
        (1, 2 * d.len() as u64),
        "no byte came from the old descriptors"
    );

    // Dropping the reader closes the replica's descriptors: its slot goes back.
    drop(r);
    wait_for("the slot to be released", || dn_slots(&c).1 == 0).await?;
    assert_eq!(
        dn_slots(&c).0,
        1,
        "the segment stays while the client lives"
    );
    drop(fs);
    wait_for("the segment to close with its connection", || {
        dn_slots(&c) == (0, 0)
    })
    .await?;
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evicted_replicas_release_their_slots() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let shm = tempfile::tempdir()?;
    let c = cluster(&dir, &shm.path().display().to_string()).await?;
    let fs = sc_client(
        &c,
        &dir,
        &[("dfs.client.read.shortcircuit.streams.cache.size", "2")],
    )
    .await?;
    let files: Vec<(String, Vec<u8>)> = (0..4)
        .map(|i| {
            (
                format!("/f{i}"),
                data(BLOCK as usize / 4 + i, 30 + i as u64),
            )
        })
        .collect();
    for (p, d) in &files {
        write_file(&fs, p, d).await?;
    }
    for (p, d) in &files {
        assert_eq!(&fs.open(p).await?.read_to_end().await?[..], &d[..]);
    }
    assert_eq!(fs.short_circuit_stats().0, 4);
    // The cache keeps two replicas: the two it evicted gave their slots back.
    wait_for("evicted slots to be released", || dn_slots(&c) == (1, 2)).await?;
    // Read again: the cached ones are reused, the others asked for with new slots.
    for (p, d) in &files {
        assert_eq!(&fs.open(p).await?.read_to_end().await?[..], &d[..]);
    }
    wait_for("slots of the cache's replicas only", || {
        dn_slots(&c) == (1, 2)
    })
    .await?;
    drop(fs);
    wait_for("the segment to close", || dn_slots(&c) == (0, 0)).await?;
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datanode_without_shared_memory_is_read_without_slots() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    // No directory for segments: REQUEST_SHORT_CIRCUIT_SHM is answered ERROR_UNSUPPORTED.
    let c = cluster(&dir, "").await?;
    let fs = sc_client(&c, &dir, &[]).await?;
    let d = data(BLOCK as usize + 100, 40);
    write_file(&fs, "/f", &d).await?;
    let mut r = fs.open("/f").await?;
    assert_eq!(&r.read_to_end().await?[..], &d[..]);
    r.seek(0);
    assert_eq!(&r.read_to_end().await?[..], &d[..]);
    assert_eq!(fs.short_circuit_stats(), (2, 2 * d.len() as u64));
    assert_eq!(dn_slots(&c), (0, 0));
    c.shutdown().await;
    Ok(())
}
