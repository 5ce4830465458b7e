//! Read paths: DataNode connections reused across blocks, files and positioned reads (the peer
//! cache), and hedged positioned reads around a DataNode made slow by a fault hook.

use std::time::Duration;

use rhdfs_minicluster::MiniCluster;

use crate::common::{BLOCK, client_conf, data, write_file};

async fn cluster(datanodes: usize) -> anyhow::Result<MiniCluster> {
    Ok(MiniCluster::builder()
        .datanodes(datanodes)
        .conf("dfs.namenode.fs-limits.min-block-size", "0")
        .conf("dfs.blocksize", BLOCK.to_string())
        // Idle connections outlive any pause of a loaded machine.
        .conf("dfs.datanode.socket.reuse.keepalive", "120000")
        .wait_ready(Duration::from_secs(60))
        .build()
        .await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_connection_serves_many_blocks_and_files() -> anyhow::Result<()> {
    let c = cluster(1).await?;
    let conf = client_conf(&[
        ("dfs.replication", "1"),
        ("dfs.client.socketcache.expiryMsec", "120000"),
    ]);
    let fs = rhdfs_client::FileSystem::connect_with(Some(&c.uri()), conf).await?;
    let a = data(3 * BLOCK as usize + 1000, 1);
    let b = data(BLOCK as usize / 2, 2);
    write_file(&fs, "/a", &a).await?;
    write_file(&fs, "/b", &b).await?;
    let before = fs.datanode_connections_opened();
    let mut r = fs.open("/a").await?;
    assert_eq!(&r.read_to_end().await?[..], &a[..]);
    let mut r2 = fs.open("/b").await?;
    assert_eq!(&r2.read_to_end().await?[..], &b[..]);
    // Positioned reads inside a chunk, across a block boundary, and a whole block.
    for (off, len) in [
        (1u64, 1u64),
        (BLOCK - 100, 300),
        (BLOCK, BLOCK),
        (3 * BLOCK + 999, 5),
    ] {
        let got = r.read_range(off, len).await?;
        let end = (off + len).min(a.len() as u64) as usize;
        assert_eq!(&got[..], &a[off as usize..end], "[{off}, +{len})");
    }
    let opened = fs.datanode_connections_opened() - before;
    assert_eq!(opened, 1, "every read should reuse the first connection");
    assert!(fs.datanode_connections_reused() >= 8);
    // With no cache, each block read opens its own connection.
    let conf = client_conf(&[("dfs.client.socketcache.capacity", "0")]);
    let fs0 = rhdfs_client::FileSystem::connect_with(Some(&c.uri()), conf).await?;
    let mut r = fs0.open("/a").await?;
    assert_eq!(&r.read_to_end().await?[..], &a[..]);
    assert_eq!(fs0.datanode_connections_opened(), 4);
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hedged_read_answers_around_a_slow_datanode() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let conf = client_conf(&[
        ("dfs.client.hedged.read.threadpool.size", "4"),
        ("dfs.client.hedged.read.threshold.millis", "50"),
    ]);
    let fs = rhdfs_client::FileSystem::connect_with(Some(&c.uri()), conf).await?;
    let d = data(BLOCK as usize + BLOCK as usize / 2, 3);
    write_file(&fs, "/h", &d).await?;
    // Wait until the NameNode knows all three replicas of the first block.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let mut r = loop {
        let r = fs.open("/h").await?;
        if r.replica_order(0).len() == 3 {
            break r;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "replicas never reported"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let first = r.replica_order(0)[0].clone();
    let slow = c
        .running_datanodes()
        .find(|(_, dn)| dn.xfer_addr().to_string() == first)
        .map(|(i, _)| i)
        .expect("the first replica's DataNode");
    let slow = c.datanode(slow).expect("running").faults();
    // Far longer than the test may run: only a hedged request can answer.
    slow.set_read_delay(Duration::from_secs(600));
    let got = r.read_range(10, BLOCK + 1000).await?;
    assert_eq!(&got[..], &d[10..10 + BLOCK as usize + 1000]);
    let (ops, wins) = fs.hedged_read_stats();
    assert!(ops >= 1 && wins >= 1, "hedged ops {ops}, wins {wins}");
    slow.set_read_delay(Duration::ZERO);
    c.shutdown().await;
    Ok(())
}
