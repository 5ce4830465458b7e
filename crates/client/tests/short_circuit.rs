//! Short-circuit local reads: replicas read straight from the DataNodes' block files with the
//! descriptors passed over their domain sockets; TCP when the socket is missing or the replica
//! moved or vanished; a corrupt replica found this way is skipped and reported.

use std::time::Duration;

use rhdfs_client::FileSystem;
use rhdfs_minicluster::MiniCluster;

use crate::common::{BLOCK, client_conf, data, wait_hosts, write_file};

/// A cluster whose DataNodes listen on `<dir>/dn._PORT.sock` (None: no domain socket).
async fn cluster(datanodes: usize, sockets: Option<&str>) -> anyhow::Result<MiniCluster> {
    let mut b = MiniCluster::builder()
        .datanodes(datanodes)
        .conf("dfs.namenode.fs-limits.min-block-size", "0")
        .conf("dfs.blocksize", BLOCK.to_string())
        .wait_ready(Duration::from_secs(60));
    if let Some(p) = sockets {
        b = b
            .conf("dfs.client.read.shortcircuit", "true")
            .conf("dfs.domain.socket.path", p);
    }
    Ok(b.build().await?)
}

/// A client with short-circuit reads on, reading sockets at `path`.
async fn sc_client(
    c: &MiniCluster,
    path: &str,
    extra: &[(&str, &str)],
) -> anyhow::Result<FileSystem> {
    let mut conf = client_conf(&[
        ("dfs.client.read.shortcircuit", "true"),
        ("dfs.domain.socket.path", path),
        ("dfs.client.retry.window.base", "10"),
    ]);
    for (k, v) in extra {
        conf.set(k, *v);
    }
    Ok(FileSystem::connect_with(Some(&c.uri()), conf).await?)
}

fn socket_template(dir: &tempfile::TempDir) -> String {
    dir.path().join("dn._PORT.sock").display().to_string()
}

/// The block file of replica `block_id` on the DataNode whose transfer address is `host`.
fn block_file(c: &MiniCluster, host: &str, block_id: u64) -> Option<std::path::PathBuf> {
    c.running_datanodes()
        .map(|(_, dn)| dn)
        .find(|dn| dn.xfer_addr().to_string() == host)?
        .faults()
        .replica_files(block_id)
        .map(|f| f.block_file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_replicas_are_read_short_circuit() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = socket_template(&dir);
    let c = cluster(1, Some(&path)).await?;
    let fs = sc_client(&c, &path, &[("dfs.replication", "1")]).await?;
    let d = data(3 * BLOCK as usize + 4321, 7);
    write_file(&fs, "/f", &d).await?;
    let tcp_before = fs.datanode_connections_opened();
    let mut r = fs.open("/f").await?;
    assert_eq!(&r.read_to_end().await?[..], &d[..]);
    let (fds, bytes) = fs.short_circuit_stats();
    assert_eq!(
        bytes,
        d.len() as u64,
        "every byte came from the block files"
    );
    assert_eq!(fds, 4, "one descriptor pair per block");
    // Positioned reads inside a chunk, across a block boundary, to the end: cached descriptors.
    for (off, len) in [(1u64, 1u64), (BLOCK - 100, 300), (3 * BLOCK + 4000, 1000)] {
        let got = r.read_range(off, len).await?;
        let end = (off + len).min(d.len() as u64) as usize;
        assert_eq!(&got[..], &d[off as usize..end], "[{off}, +{len})");
    }
    assert_eq!(fs.short_circuit_stats().0, 4, "descriptors were reused");
    assert_eq!(fs.datanode_connections_opened(), tcp_before, "no TCP read");
    // skip.checksum reads the same bytes.
    let fs2 = sc_client(
        &c,
        &path,
        &[("dfs.client.read.shortcircuit.skip.checksum", "true")],
    )
    .await?;
    assert_eq!(&fs2.open("/f").await?.read_to_end().await?[..], &d[..]);
    assert_eq!(fs2.short_circuit_stats().1, d.len() as u64);
    // The block files the reader reads, read plainly, are the file's bytes in order; without
    // short-circuit reads there are none.
    let files = fs.local_block_files("/f").await?.expect("local replicas");
    assert_eq!(files.len(), 4);
    let mut plain = Vec::new();
    for mut f in files {
        std::io::Read::read_to_end(&mut f, &mut plain)?;
    }
    assert_eq!(plain, d, "the block files hold the file");
    let tcp = FileSystem::connect_with(Some(&c.uri()), client_conf(&[])).await?;
    assert!(tcp.local_block_files("/f").await?.is_none());
    c.shutdown().await;
    assert!(
        std::fs::read_dir(dir.path())?.next().is_none(),
        "the DataNode removed its socket file"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_domain_socket_falls_back_to_tcp() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = socket_template(&dir);
    // The DataNode has no domain socket; the client looks for one.
    let c = cluster(1, None).await?;
    let fs = sc_client(&c, &path, &[("dfs.replication", "1")]).await?;
    let d = data(2 * BLOCK as usize + 10, 8);
    write_file(&fs, "/f", &d).await?;
    let mut r = fs.open("/f").await?;
    assert_eq!(&r.read_to_end().await?[..], &d[..]);
    assert_eq!(
        r.read_range(BLOCK - 5, 10).await?[..],
        d[BLOCK as usize - 5..BLOCK as usize + 5]
    );
    assert_eq!(fs.short_circuit_stats(), (0, 0));
    assert!(fs.datanode_connections_opened() >= 1);
    assert!(
        r.dead_nodes().is_empty(),
        "a missing socket is not a dead DataNode"
    );
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moved_or_deleted_replica_falls_back() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = socket_template(&dir);
    let c = cluster(2, Some(&path)).await?;
    let fs = sc_client(&c, &path, &[("dfs.replication", "1")]).await?;
    let d = data(BLOCK as usize / 2, 9);
    write_file(&fs, "/one", &d).await?;
    let loc = wait_hosts(&fs, "/one", 1).await?.remove(0);
    let block = block_file(&c, &loc.hosts[0], loc.block_id).expect("replica on disk");

    // Descriptors handed out, then the replica is replaced by a copy and the old file cut
    // short: the cached descriptors see a short file, the read goes to TCP, which serves
    // the new file.
    let mut r = fs.open("/one").await?;
    assert_eq!(&r.read_to_end().await?[..], &d[..]);
    let old = std::fs::OpenOptions::new().write(true).open(&block)?;
    let copy = block.with_extension("copy");
    std::fs::write(&copy, &d)?;
    std::fs::rename(&copy, &block)?;
    old.set_len(1000)?;
    let tcp_before = fs.datanode_connections_opened();
    r.seek(0);
    assert_eq!(&r.read_to_end().await?[..], &d[..]);
    assert_eq!(
        fs.datanode_connections_opened(),
        tcp_before + 1,
        "read through TCP"
    );
    assert!(r.dead_nodes().is_empty());

    // A deleted replica with no other copy: short-circuit refused, TCP fails, a clear error.
    std::fs::remove_file(&block)?;
    let fs2 = sc_client(&c, &path, &[]).await?;
    let err = fs2.open("/one").await?.read_to_end().await;
    assert!(err.is_err(), "a read of a deleted only replica fails");
    assert_eq!(fs2.short_circuit_stats(), (0, 0));

    // Two replicas, one deleted: the other is read, short-circuit.
    let fs3 = sc_client(&c, &path, &[("dfs.replication", "2")]).await?;
    let d2 = data(BLOCK as usize / 3, 10);
    write_file(&fs3, "/two", &d2).await?;
    let loc = wait_hosts(&fs3, "/two", 2).await?.remove(0);
    let gone = block_file(&c, &loc.hosts[0], loc.block_id).expect("replica");
    std::fs::remove_file(&gone)?;
    let fs4 = sc_client(&c, &path, &[]).await?;
    assert_eq!(&fs4.open("/two").await?.read_to_end().await?[..], &d2[..]);
    assert_eq!(fs4.short_circuit_stats().1, d2.len() as u64);
    c.shutdown().await;
    Ok(())
}

/// Flips bits (`(offset, mask)`) in the replica of `loc`'s block that a reader reads first and
/// checks that a reader gives the right bytes, all short-circuit, and finds it corrupt; returns
/// its host. With several replicas on this host a reader prefers one for each block, always
/// the same, so each is tried in turn (put back when the reader did not start on it).
async fn corrupt_the_replica_read(
    c: &MiniCluster,
    path: &str,
    extra: &[(&str, &str)],
    loc: &rhdfs_client::BlockLocation,
    d: &[u8],
    flips: &[(usize, u8)],
) -> anyhow::Result<String> {
    for bad in &loc.hosts {
        let block = block_file(c, bad, loc.block_id).expect("replica on disk");
        let good = std::fs::read(&block)?;
        let mut bytes = good.clone();
        for (at, mask) in flips {
            bytes[*at] ^= mask;
        }
        std::fs::write(&block, bytes)?;
        let fs = sc_client(c, path, extra).await?;
        let mut r = fs.open("/c").await?;
        assert_eq!(&r.read_to_end().await?[..], d);
        assert_eq!(fs.short_circuit_stats().1, d.len() as u64);
        assert_eq!(fs.datanode_connections_opened(), 0, "no TCP read");
        if !r.dead_nodes().is_empty() {
            assert_eq!(r.dead_nodes(), vec![bad.clone()]);
            return Ok(bad.clone());
        }
        std::fs::write(&block, good)?;
    }
    panic!("no reader started on a corrupt replica of {:?}", loc.hosts);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn corrupt_replica_found_short_circuit_is_reported() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = socket_template(&dir);
    let c = cluster(2, Some(&path)).await?;
    let fs = sc_client(&c, &path, &[("dfs.replication", "2")]).await?;
    let d = data(200_000, 11);
    write_file(&fs, "/c", &d).await?;
    let loc = wait_hosts(&fs, "/c", 2).await?.remove(0);
    let bad =
        corrupt_the_replica_read(&c, &path, &[], &loc, &d, &[(1000, 0xff), (70_000, 0x55)]).await?;
    // reportBadBlocks reached the NameNode: the replica leaves the locations.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let l = fs.block_locations("/c").await?.remove(0);
        if !l.hosts.contains(&bad) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{bad} is still listed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    c.shutdown().await;
    Ok(())
}

/// Pieces read ahead of this size: neither a divisor of the block size nor a multiple of the
/// 512-byte chunk, so pieces start and end inside chunks.
const PIECE: &str = "100000";

/// One DataNode with a domain socket, and a client writing one replica and reading in
/// pieces of [`PIECE`] (the directory holds the socket: keep it).
async fn one_node_in_pieces() -> anyhow::Result<(tempfile::TempDir, MiniCluster, FileSystem)> {
    let dir = tempfile::tempdir()?;
    let path = socket_template(&dir);
    let c = cluster(1, Some(&path)).await?;
    let fs = sc_client(
        &c,
        &path,
        &[
            ("dfs.replication", "1"),
            ("dfs.client.read.shortcircuit.buffer.size", PIECE),
        ],
    )
    .await?;
    Ok((dir, c, fs))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_ahead_across_pieces_and_blocks() -> anyhow::Result<()> {
    let (_dir, c, fs) = one_node_in_pieces().await?;
    let d = data(2 * BLOCK as usize + 250_001, 12);
    write_file(&fs, "/f", &d).await?;
    let tcp_before = fs.datanode_connections_opened();

    // Whole pieces, then a caller buffer that splits them (the rest of a piece waits).
    let mut r = fs.open("/f").await?;
    let mut pieces = 0;
    let mut got = Vec::new();
    while let Some(b) = r.read_chunk().await? {
        assert!(b.len() <= 100_000, "a piece of {}", b.len());
        got.extend_from_slice(&b);
        pieces += 1;
    }
    assert_eq!(got, d, "read_chunk");
    assert!(pieces >= d.len() / 100_000, "{pieces} pieces");
    let mut r = fs.open("/f").await?;
    let (mut got, mut buf) = (Vec::new(), vec![0u8; 7777]);
    loop {
        let n = r.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got, d, "read with a small buffer");

    // Pieces the page cache holds are read on the reader's thread, the others on blocking
    // threads: with every other stretch of the block files dropped from the cache (where the
    // kernel lets go of them), the bytes are the same.
    let blocks: Vec<u64> = fs
        .block_locations("/f")
        .await?
        .iter()
        .map(|l| l.block_id)
        .collect();
    let host = c
        .running_datanodes()
        .next()
        .expect("a DataNode")
        .1
        .xfer_addr()
        .to_string();
    for (round, b) in blocks.iter().enumerate() {
        let f = std::fs::File::open(block_file(&c, &host, *b).expect("replica on disk"))?;
        f.sync_all()?;
        let len = f.metadata()?.len();
        let stretch = 37_000 + 20_000 * round as u64;
        let mut at = stretch / 3;
        while at < len {
            let n = std::num::NonZeroU64::new(stretch);
            let _ = rustix::fs::fadvise(&f, at, n, rustix::fs::Advice::DontNeed);
            at += 2 * stretch;
        }
    }
    let mut r = fs.open("/f").await?;
    let mut got = Vec::new();
    while let Some(b) = r.read_chunk().await? {
        got.extend_from_slice(&b);
    }
    assert_eq!(got, d, "read_chunk, partly cached");

    // Moving the position drops what was read ahead; positioned reads leave it alone.
    for start in [BLOCK - 1, 50_000, BLOCK + 199_999, 2 * BLOCK + 250_000, 3] {
        r.seek(start);
        let first = r.read_chunk().await?.expect("bytes");
        let s = start as usize;
        assert_eq!(&first[..], &d[s..s + first.len()], "after seek({start})");
        let mid = r.read_range(BLOCK - 10, 20).await?;
        assert_eq!(&mid[..], &d[BLOCK as usize - 10..BLOCK as usize + 10]);
        let rest = r.read_to_end().await?;
        assert_eq!(&rest[..], &d[s + first.len()..], "rest after seek({start})");
    }
    // A positioned read longer than a piece, across a block boundary: piece by piece.
    let (off, len) = (50_001u64, BLOCK + 300_000);
    let got = r.read_range(off, len).await?;
    assert_eq!(&got[..], &d[off as usize..(off + len) as usize]);
    assert_eq!(fs.datanode_connections_opened(), tcp_before, "no TCP read");
    assert_eq!(
        fs.short_circuit_stats().0,
        3,
        "one descriptor pair per block"
    );
    c.shutdown().await;
    Ok(())
}

/// A reader whose pieces all come from the page cache reads them on its own task with no I/O
/// to wait for; it yields after each, so that a runtime's other tasks run between its pieces
/// instead of after the whole block (one thread here, so that the order is certain).
#[tokio::test(flavor = "current_thread")]
async fn cached_pieces_let_other_tasks_run() -> anyhow::Result<()> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    let (_dir, c, fs) = one_node_in_pieces().await?;
    let d = data(BLOCK as usize, 13);
    write_file(&fs, "/f", &d).await?;
    // Read once, so that every piece is in the page cache for the read below.
    assert_eq!(&fs.open("/f").await?.read_to_end().await?[..], &d[..]);

    let (turns, stop) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let other = tokio::spawn({
        let (turns, stop) = (turns.clone(), stop.clone());
        async move {
            while !stop.load(Ordering::Relaxed) {
                turns.fetch_add(1, Ordering::Relaxed);
                tokio::task::yield_now().await;
            }
        }
    });
    let mut r = fs.open("/f").await?;
    let (mut got, mut seen) = (Vec::new(), Vec::new());
    while let Some(b) = r.read_chunk().await? {
        got.extend_from_slice(&b);
        seen.push(turns.load(Ordering::Relaxed));
    }
    stop.store(true, Ordering::Relaxed);
    other.await?;
    assert_eq!(got, d);
    assert!(seen.len() >= d.len() / 100_000, "{} pieces", seen.len());
    let still: Vec<_> = seen.windows(2).filter(|w| w[1] == w[0]).collect();
    assert!(
        still.is_empty(),
        "the other task did not run between pieces {still:?} of {seen:?}"
    );
    assert_eq!(
        fs.short_circuit_stats().1,
        2 * d.len() as u64,
        "short-circuit"
    );
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn corrupt_chunk_in_a_later_piece_is_found() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = socket_template(&dir);
    let c = cluster(2, Some(&path)).await?;
    let extra = [("dfs.client.read.shortcircuit.buffer.size", PIECE)];
    let fs = sc_client(&c, &path, &[("dfs.replication", "2")]).await?;
    let d = data(BLOCK as usize, 13);
    write_file(&fs, "/c", &d).await?;
    let loc = wait_hosts(&fs, "/c", 2).await?.remove(0);
    // In the second piece, and in the fourth.
    let flips = [(150_000, 0x01), (300_123, 0x80)];
    let bad = corrupt_the_replica_read(&c, &path, &extra, &loc, &d, &flips).await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while fs
        .block_locations("/c")
        .await?
        .remove(0)
        .hosts
        .contains(&bad)
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{bad} is still listed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socket_in_a_directory_others_can_write_stops_the_datanode() -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))?;
    let path = socket_template(&dir);
    let Err(err) = cluster(1, Some(&path)).await else {
        panic!("the DataNode listened on {path}");
    };
    let msg = format!("{err:#}");
    assert!(
        msg.contains("is writable by every user")
            && msg.contains(&dir.path().display().to_string()),
        "{msg}"
    );
    assert!(
        std::fs::read_dir(dir.path())?.next().is_none(),
        "no socket file was made"
    );
    Ok(())
}
