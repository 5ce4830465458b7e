//! The library against a minicluster: metadata calls, write/read round trips, append,
//! hflush, checksums, a corrupt replica, slow incremental reports, pipeline recovery.

use crate::common;

use std::time::Duration;

use common::*;
use rhdfs_client::CreateOptions;
use rhdfs_transfer::{ChecksumKind, DataChecksum, FileChecksum, md5crc::block_md5_of_data};

fn expected_checksum(data: &[u8], block: usize) -> FileChecksum {
    let c = DataChecksum::new(ChecksumKind::Crc32c, 512);
    let blocks: Vec<([u8; 16], u64)> = data
        .chunks(block)
        .map(|b| block_md5_of_data(&c, b))
        .collect();
    FileChecksum::from_blocks(512, ChecksumKind::Crc32c, &blocks)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn metadata_calls() -> anyhow::Result<()> {
    let c = cluster(1).await?;
    let fs = fs(&c, &[]).await?;
    assert!(fs.mkdirs("/m/a/b", None).await?);
    let st = fs.status("/m/a").await?;
    assert!(st.is_dir);
    assert_eq!(st.permission, 0o755);
    assert!(fs.status("/nope").await.is_file_not_found_helper());
    write_file(&fs, "/m/f1", b"hello").await?;
    write_file(&fs, "/m/f2", b"").await?;
    let names: Vec<String> = fs
        .list_status("/m")
        .await?
        .iter()
        .map(|s| s.path.clone())
        .collect();
    assert_eq!(names, vec!["/m/a", "/m/f1", "/m/f2"]);
    let st = fs.status("/m/f1").await?;
    assert_eq!((st.length, st.permission, st.replication), (5, 0o644, 3));
    use futures::StreamExt;
    let streamed: Vec<_> = fs.list_stream("/m").collect().await;
    assert_eq!(streamed.len(), 3);
    assert!(fs.rename("/m/f1", "/m/a").await?);
    assert!(fs.exists("/m/a/f1").await?);
    fs.rename2("/m/a/f1", "/m/g", false).await?;
    let e = fs
        .rename2("/m/f2", "/m/g", false)
        .await
        .expect_err("dst exists");
    assert!(e.is_already_exists(), "{e:?}");
    let cs = fs.content_summary("/m").await?;
    assert_eq!((cs.length, cs.file_count, cs.directory_count), (5, 2, 3));
    assert!(fs.set_replication("/m/g", 2).await?);
    fs.set_permission("/m/g", 0o600).await?;
    fs.set_times("/m/g", Some(1_000_000), Some(2_000_000))
        .await?;
    let st = fs.status("/m/g").await?;
    assert_eq!(
        (
            st.replication,
            st.permission,
            st.modification_time,
            st.access_time
        ),
        (2, 0o600, 1_000_000, 2_000_000)
    );
    let g: Vec<String> = fs
        .glob_status("/m/{g,f*}")
        .await?
        .iter()
        .map(|s| s.path.clone())
        .collect();
    assert_eq!(g, vec!["/m/f2", "/m/g"]);
    assert!(!fs.delete("/m/none", false).await?);
    let e = fs.delete("/m/a", false).await.expect_err("non-empty");
    assert!(e.is_not_empty_directory(), "{e:?}");
    assert!(fs.delete("/m", true).await?);
    assert!(fs.server_defaults().await?.block_size > 0);
    assert!(fs.fs_stats().await?.capacity > 0);
    c.shutdown().await;
    Ok(())
}

trait NotFound {
    fn is_file_not_found_helper(&self) -> bool;
}
impl<T> NotFound for Result<T, rhdfs_client::ClientError> {
    fn is_file_not_found_helper(&self) -> bool {
        matches!(self, Err(e) if e.is_file_not_found())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn write_read_multi_block_and_checksum() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let fs = fs(&c, &[]).await?;
    let d = data(2 * BLOCK as usize + 123_457, 1);
    write_file(&fs, "/big", &d).await?;
    assert_eq!(fs.status("/big").await?.length, d.len() as u64);
    assert_eq!(read_file(&fs, "/big").await?, d);
    let mut r = fs.open("/big").await?;
    let piece = r.read_range(BLOCK - 10, 100).await?;
    assert_eq!(&piece[..], &d[BLOCK as usize - 10..BLOCK as usize + 90]);
    let mut buf = vec![0u8; 7];
    assert_eq!(r.read_at(d.len() as u64 - 3, &mut buf).await?, 3);
    r.seek(5);
    let mut b2 = [0u8; 4];
    assert_eq!(r.read(&mut b2).await?, 4);
    assert_eq!(&b2, &d[5..9]);
    let locs = wait_hosts(&fs, "/big", 3).await?;
    assert_eq!(locs.len(), 3);
    let sum = fs.file_checksum("/big").await?;
    let want = expected_checksum(&d, BLOCK as usize);
    assert_eq!(sum.algorithm_name(), want.algorithm_name());
    assert_eq!(sum.hex(), want.hex());
    let empty = fs.file_checksum({
        write_file(&fs, "/empty", b"").await?;
        "/empty"
    });
    assert_eq!(empty.await?.algorithm_name(), "MD5-of-0MD5-of-0CRC32");
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn append_and_hflush() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let fs = fs(&c, &[]).await?;
    let d = data(300_000, 2);
    let mut w = fs.create("/h", CreateOptions::default()).await?;
    w.write(&d[..1000]).await?;
    w.hflush().await?;
    // visible to a reader while open
    let seen = read_file(&fs, "/h").await?;
    assert_eq!(seen, &d[..1000]);
    w.write(&d[1000..200_000]).await?;
    w.hsync().await?;
    w.write(&d[200_000..250_000]).await?;
    w.close().await?;
    let mut a = fs.append("/h").await?;
    a.write(&d[250_000..]).await?;
    a.close().await?;
    assert_eq!(read_file(&fs, "/h").await?, d);
    // append into a new block when the last one is full
    let full = data(BLOCK as usize, 3);
    write_file(&fs, "/full", &full).await?;
    let mut a = fs.append("/full").await?;
    a.write(b"tail").await?;
    a.close().await?;
    let got = read_file(&fs, "/full").await?;
    assert_eq!(got.len(), full.len() + 4);
    assert_eq!(&got[full.len()..], b"tail");
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn corrupt_replica_is_skipped_and_reported() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let fs = fs(&c, &[]).await?;
    let d = data(200_000, 4);
    write_file(&fs, "/c", &d).await?;
    let loc = fs.block_locations("/c").await?.remove(0);
    // Flip bytes in the replica of the first node the NameNode lists.
    let first = loc.hosts[0].clone();
    let mut flipped = false;
    for (_, dn) in c.running_datanodes() {
        if dn
            .xfer_addr()
            .to_string()
            .ends_with(&format!(":{}", first.rsplit(':').next().unwrap_or("")))
        {
            let files = dn
                .faults()
                .replica_files(loc.block_id)
                .expect("replica on disk");
            let mut bytes = std::fs::read(&files.block_file)?;
            bytes[1000] ^= 0xff;
            bytes[70_000] ^= 0x55;
            std::fs::write(&files.block_file, bytes)?;
            flipped = true;
        }
    }
    assert!(flipped, "no datanode at {first}");
    // The NameNode shuffles replicas at the same distance (as Hadoop's sortByDistance does),
    // so a reader may start on a good replica; read until one starts on the corrupt one.
    // Every read returns the right bytes either way.
    let mut hit = false;
    for _ in 0..40 {
        let mut r = fs.open("/c").await?;
        let got = r.read_to_end().await?;
        assert_eq!(&got[..], &d[..]);
        let dead = r.dead_nodes();
        if !dead.is_empty() {
            assert_eq!(dead, vec![first.clone()]);
            hit = true;
            break;
        }
    }
    assert!(
        hit,
        "no reader started on the corrupt replica on {first} in 40 reads"
    );
    // The NameNode learns: the corrupt replica disappears from the locations.
    let mut ok = false;
    for _ in 0..50 {
        let l = fs.block_locations("/c").await?.remove(0);
        if !l.hosts.contains(&first) {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(ok, "NameNode still lists the corrupt replica on {first}");
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn complete_retries_absorb_slow_incremental_reports() -> anyhow::Result<()> {
    let c = cluster(1).await?;
    let fs = fs(&c, &[("dfs.replication", "1")]).await?;
    if let Some(dn) = c.datanode(0) {
        dn.faults().set_ibr_delay(Duration::from_secs(8));
    }
    let d = data(100_000, 5);
    let t = std::time::Instant::now();
    write_file(&fs, "/slow", &d).await?;
    assert!(
        t.elapsed() >= Duration::from_secs(1),
        "close returned before the report"
    );
    if let Some(dn) = c.datanode(0) {
        dn.faults().set_ibr_delay(Duration::ZERO);
    }
    assert_eq!(read_file(&fs, "/slow").await?, d);
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn datanode_killed_during_write_recovers() -> anyhow::Result<()> {
    let mut c = cluster(5).await?;
    let fs = fs(&c, &[]).await?;
    let d = data(3 * BLOCK as usize / 2, 6);
    let mut w = fs.create("/r", CreateOptions::default()).await?;
    w.write(&d[..400_000]).await?;
    let pipeline = w.pipeline();
    assert_eq!(pipeline.len(), 3);
    // Stop the middle node of the pipeline.
    let victim = pipeline[1].clone();
    let idx = c
        .running_datanodes()
        .find(|(_, dn)| dn.xfer_addr().to_string() == victim)
        .map(|(i, _)| i);
    let Some(idx) = idx else {
        anyhow::bail!("pipeline node {victim} not found among {:?}", pipeline);
    };
    c.stop_datanode(idx).await?;
    w.write(&d[400_000..]).await?;
    w.close().await?;
    assert_eq!(read_file(&fs, "/r").await?, d);
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn error_ack_with_two_of_three_failing_adds_a_node() -> anyhow::Result<()> {
    let c = cluster(5).await?;
    let fs = fs(&c, &[]).await?;
    let d = data(600_000, 7);
    let mut w = fs.create("/e", CreateOptions::default()).await?;
    w.write(&d[..100_000]).await?;
    w.hflush().await?;
    let pipeline = w.pipeline();
    common::set_ack_errors(&c, &[&pipeline[1], &pipeline[2]]);
    w.write(&d[100_000..]).await?;
    w.close().await?;
    common::set_ack_errors(&c, &[]);
    assert_eq!(read_file(&fs, "/e").await?, d);
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_replacement_on_three_nodes_names_the_policy() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let fs = fs(&c, &[]).await?;
    let d = data(300_000, 8);
    let mut w = crate::lease_recovery::write_then_fail(&c, &fs, "/n", &d).await?;
    crate::lease_recovery::close_fails_for_want_of_a_replacement(&mut w, &d).await?;
    common::set_ack_errors(&c, &[]);
    // best-effort lets the same write finish on the remaining nodes
    let fs2 = common::fs(
        &c,
        &[(
            "dfs.client.block.write.replace-datanode-on-failure.best-effort",
            "true",
        )],
    )
    .await?;
    let mut w = fs2.create("/n2", CreateOptions::default()).await?;
    w.write(&d[..100_000]).await?;
    w.hflush().await?;
    let pipeline = w.pipeline();
    assert_eq!(pipeline.len(), 3);
    common::set_ack_errors(&c, &[&pipeline[2]]);
    w.write(&d[100_000..]).await?;
    w.close().await?;
    common::set_ack_errors(&c, &[]);
    assert_eq!(read_file(&fs2, "/n2").await?, d);
    // min-replication: with two nodes left (>= 2) the write goes on without a replacement.
    let fs3 = common::fs(
        &c,
        &[(
            "dfs.client.block.write.replace-datanode-on-failure.min-replication",
            "2",
        )],
    )
    .await?;
    let mut w = fs3.create("/n3", CreateOptions::default()).await?;
    w.write(&d[..100_000]).await?;
    w.hflush().await?;
    let pipeline = w.pipeline();
    common::set_ack_errors(&c, &[&pipeline[2]]);
    w.write(&d[100_000..]).await?;
    w.close().await?;
    common::set_ack_errors(&c, &[]);
    assert_eq!(read_file(&fs3, "/n3").await?, d);
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lease_is_renewed_while_a_file_is_open() -> anyhow::Result<()> {
    let c = cluster(1).await?;
    let clock = rhdfs_conf::clock::ManualClock::shared(1_000_000);
    let fs = rhdfs_client::FileSystem::connect_with_clock(
        Some(&c.uri()),
        client_conf(&[("dfs.replication", "1")]),
        clock.clone(),
    )
    .await?;
    let mut w = fs.create("/leased", CreateOptions::default()).await?;
    w.write(b"x").await?;
    assert_eq!(fs.lease_renewals(), 0);
    clock.advance(Duration::from_secs(31));
    let mut renewed = false;
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if fs.lease_renewals() >= 1 {
            renewed = true;
            break;
        }
    }
    assert!(renewed, "no renewLease after 31 s of (manual) time");
    w.close().await?;
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dead_datanode_at_pipeline_setup_is_excluded() -> anyhow::Result<()> {
    let mut c = cluster(4).await?;
    let fs = fs(&c, &[]).await?;
    // The NameNode still believes the stopped node is alive: addBlock may name it, the
    // connect fails, the block is abandoned and the node excluded.
    c.stop_datanode(0).await?;
    for i in 0..6 {
        let d = data(50_000 + i, 30 + i as u64);
        let p = format!("/x{i}");
        write_file(&fs, &p, &d).await?;
        assert_eq!(read_file(&fs, &p).await?, d);
    }
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn datanode_killed_at_the_end_of_a_block() -> anyhow::Result<()> {
    let mut c = cluster(5).await?;
    let fs = fs(&c, &[]).await?;
    let d = data(BLOCK as usize + 1000, 40);
    let mut w = fs.create("/end", CreateOptions::default()).await?;
    // Everything but the last packet of the first block.
    w.write(&d[..BLOCK as usize - 100]).await?;
    let pipeline = w.pipeline();
    let idx = c
        .running_datanodes()
        .find(|(_, dn)| dn.xfer_addr().to_string() == pipeline[2])
        .map(|(i, _)| i);
    let Some(idx) = idx else {
        anyhow::bail!("pipeline node not found");
    };
    c.stop_datanode(idx).await?;
    w.write(&d[BLOCK as usize - 100..]).await?;
    w.close().await?;
    assert_eq!(read_file(&fs, "/end").await?, d);
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idle_pipeline_is_kept_alive_by_heartbeats() -> anyhow::Result<()> {
    let c = rhdfs_minicluster::MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.namenode.fs-limits.min-block-size", "0")
        .conf("dfs.client.socket-timeout", "2000")
        .wait_ready(Duration::from_secs(60))
        .build()
        .await?;
    let fs = fs(&c, &[("dfs.client.socket-timeout", "2000")]).await?;
    let d = data(200_000, 50);
    let mut w = fs.create("/idle", CreateOptions::default()).await?;
    w.write(&d[..100_000]).await?;
    w.hflush().await?;
    let before = w.pipeline();
    tokio::time::sleep(Duration::from_secs(5)).await;
    w.write(&d[100_000..]).await?;
    w.hflush().await?;
    assert_eq!(w.pipeline(), before, "the idle pipeline was rebuilt");
    w.close().await?;
    assert_eq!(read_file(&fs, "/idle").await?, d);
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_of_three_killed_default_policy_adds_nodes() -> anyhow::Result<()> {
    let mut c = cluster(5).await?;
    let fs = fs(&c, &[]).await?;
    let d = data(500_000, 70);
    let mut w = fs.create("/two", CreateOptions::default()).await?;
    w.write(&d[..200_000]).await?;
    w.hflush().await?;
    let pipeline = w.pipeline();
    let victims: Vec<usize> = c
        .running_datanodes()
        .filter(|(_, dn)| {
            let a = dn.xfer_addr().to_string();
            a == pipeline[1] || a == pipeline[2]
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(victims.len(), 2);
    for i in victims {
        c.stop_datanode(i).await?;
    }
    w.write(&d[200_000..]).await?;
    w.hflush().await?;
    assert_eq!(
        w.pipeline().len(),
        3,
        "replacements were added: {:?}",
        w.pipeline()
    );
    w.close().await?;
    assert_eq!(read_file(&fs, "/two").await?, d);
    wait_hosts(&fs, "/two", 3).await?;
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn evicted_writer_moves_its_pipeline_off_the_datanode() -> anyhow::Result<()> {
    use rhdfs_proto::hdfs::{EvictWritersRequestProto, EvictWritersResponseProto};
    let c = cluster(4).await?;
    let fs = fs(&c, &[]).await?;
    let d = data(300_000, 12);
    let mut w = fs.create("/evict", CreateOptions::default()).await?;
    w.write(&d[..100_000]).await?;
    w.hflush().await?;
    let before = w.pipeline();
    assert_eq!(before.len(), 3);
    let victim = before[1].clone();
    let ipc = c
        .running_datanodes()
        .find(|(_, dn)| dn.xfer_addr().to_string() == victim)
        .map(|(_, dn)| dn.ipc_addr().to_string())
        .ok_or_else(|| anyhow::anyhow!("no datanode at {victim}"))?;
    // dfsadmin -evictWriters, as the DataNode's own user.
    let rpc = rhdfs_ipc::RpcClient::connect(
        &ipc,
        rhdfs_proto::protocols::CLIENT_DATANODE_PROTOCOL,
        &rhdfs_conf::user::current_user(),
    )
    .await?;
    let _: EvictWritersResponseProto = rpc
        .call("evictWriters", &EvictWritersRequestProto {})
        .await?;
    // The next packets fail on that node; the writer rebuilds its pipeline without it.
    w.write(&d[100_000..]).await?;
    w.hflush().await?;
    let after = w.pipeline();
    assert!(!after.contains(&victim), "{before:?} -> {after:?}");
    assert_eq!(after.len(), 3, "a fourth DataNode replaced it: {after:?}");
    w.close().await?;
    assert_eq!(read_file(&fs, "/evict").await?, d);
    c.shutdown().await;
    Ok(())
}
