//! Issue 2, "What must work" item 2: `hdfs-native` 0.14.8 against the MiniCluster.

use crate::common;

use bytes::Bytes;
use hdfs_native::{HdfsError, WriteOptions};
use rhdfs_minicluster::MiniCluster;
use std::collections::HashSet;

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sizes_round_trip() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(3).build().await?;
    let client = common::native_client(&cluster.uri())?;
    client.mkdirs("/sizes", 0o755, true).await?;

    let block = MIB;
    let cases: &[(&str, usize)] = &[
        ("zero", 0),
        ("one", 1),
        ("511", 511),
        ("512", 512),
        ("513", 513),
        ("64k-1", 64 * KIB - 1),
        ("64k", 64 * KIB),
        ("64k+1", 64 * KIB + 1),
        ("one-block", block),
        ("block+1", block + 1),
        ("several-blocks", 3 * block + 777),
    ];
    for (i, (name, len)) in cases.iter().enumerate() {
        let data = common::random_bytes(*len, 100 + i as u64);
        let path = format!("/sizes/{name}");
        // Odd write sizes so writes straddle chunk and packet boundaries.
        common::native_write(
            &client,
            &path,
            &data,
            WriteOptions::default().block_size(block as u64),
            7777,
        )
        .await?;
        let st = client.get_file_info(&path).await?;
        assert_eq!(st.length, *len, "{path} length");
        assert!(!st.isdir);
        assert_eq!(st.blocksize, Some(block as u64), "{path} block size");
        let got = common::native_read(&client, &path).await?;
        common::assert_same_bytes(&path, &got, &data);
    }

    // One writer's write_bytes of a whole multi-block buffer at once.
    let data = common::random_bytes(5 * block / 2, 99);
    common::native_write(
        &client,
        "/sizes/one-shot",
        &data,
        WriteOptions::default().block_size(block as u64),
        data.len(),
    )
    .await?;
    let got = common::native_read(&client, "/sizes/one-shot").await?;
    common::assert_same_bytes("/sizes/one-shot", &got, &data);

    // Overwrite replaces the contents.
    let data2 = common::random_bytes(1000, 98);
    common::native_write(
        &client,
        "/sizes/one-shot",
        &data2,
        WriteOptions::default().overwrite(true),
        1000,
    )
    .await?;
    let got = common::native_read(&client, "/sizes/one-shot").await?;
    common::assert_same_bytes("overwritten file", &got, &data2);

    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn append_hsync_and_reads() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(3).build().await?;
    let client = common::native_client(&cluster.uri())?;
    let block = MIB;
    let opts = || WriteOptions::default().block_size(block as u64);

    // Append to a partial chunk (700 = one full chunk + 188 bytes), several times.
    let mut want = common::random_bytes(700, 1);
    common::native_write(&client, "/append/f", &want, opts().create_parent(true), 700).await?;
    for (i, n) in [1usize, 300, 5000, 70_000].into_iter().enumerate() {
        let more = common::random_bytes(n, 10 + i as u64);
        let mut w = client.append("/append/f").await?;
        w.write_bytes(Bytes::from(more.clone())).await?;
        w.close().await?;
        want.extend_from_slice(&more);
        let st = client.get_file_info("/append/f").await?;
        assert_eq!(st.length, want.len(), "length after append #{i}");
        let got = common::native_read(&client, "/append/f").await?;
        common::assert_same_bytes(&format!("after append #{i}"), &got, &want);
    }
    // Append that crosses into a new block.
    let more = common::random_bytes(block, 20);
    let mut w = client.append("/append/f").await?;
    w.write_bytes(Bytes::from(more.clone())).await?;
    w.close().await?;
    want.extend_from_slice(&more);
    let got = common::native_read(&client, "/append/f").await?;
    common::assert_same_bytes("append across a block boundary", &got, &want);
    // Append to an empty file (no last block).
    common::native_write(&client, "/append/empty", &[], opts(), 1).await?;
    let mut w = client.append("/append/empty").await?;
    w.write_bytes(Bytes::from_static(b"hello")).await?;
    w.close().await?;
    assert_eq!(
        common::native_read(&client, "/append/empty").await?,
        b"hello"
    );

    // hsync, then getFileInfo shows the synced length while the file is still open.
    let mut w = client.create("/append/synced", opts()).await?;
    let a = common::random_bytes(1234, 30);
    w.write_bytes(Bytes::from(a.clone())).await?;
    w.hsync().await?;
    let st = client.get_file_info("/append/synced").await?;
    assert_eq!(st.length, a.len(), "visible length after the first hsync");
    let b = common::random_bytes(block + 4321, 31);
    w.write_bytes(Bytes::from(b.clone())).await?;
    w.hsync().await?;
    let st = client.get_file_info("/append/synced").await?;
    assert_eq!(
        st.length,
        a.len() + b.len(),
        "visible length after the second hsync (second block)"
    );
    let c = common::random_bytes(100, 32);
    w.write_bytes(Bytes::from(c.clone())).await?;
    w.close().await?;
    let mut all = a;
    all.extend_from_slice(&b);
    all.extend_from_slice(&c);
    let got = common::native_read(&client, "/append/synced").await?;
    common::assert_same_bytes("hsync'd file", &got, &all);

    // Positioned and range reads, including across block boundaries and at the very end.
    let data = common::random_bytes(3 * block + 1000, 40);
    common::native_write(&client, "/append/ranges", &data, opts(), 64 * KIB).await?;
    let r = client.read("/append/ranges").await?;
    assert_eq!(r.file_length(), data.len());
    for (off, len) in [
        (0usize, 1usize),
        (1, 511),
        (511, 2),
        (512, 512),
        (1000, 100_000),
        (block - 10, 20),
        (block, block),
        (2 * block - 1, block + 2),
        (data.len() - 1, 1),
        (data.len() - 5000, 5000),
        (0, data.len()),
    ] {
        let got = r.read_range(off, len).await?;
        common::assert_same_bytes(
            &format!("read_range({off}, {len})"),
            &got,
            &data[off..off + len],
        );
    }
    let mut r = client.read("/append/ranges").await?;
    r.set_position(block + 3);
    let got = r.read_bytes(600).await?;
    common::assert_same_bytes("read at a position", &got, &data[block + 3..block + 603]);
    assert_eq!(r.tell(), block + 603);
    let mut buf = vec![0u8; 10_000];
    let n = r.read_into(&mut buf).await?;
    assert_eq!(n, 10_000);
    common::assert_same_bytes("read_into", &buf, &data[block + 603..block + 10_603]);

    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn namespace_operations() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(3).build().await?;
    let client = common::native_client(&cluster.uri())?;

    client.mkdirs("/ns/a/b", 0o755, true).await?;
    let data = common::random_bytes(3000, 1);
    common::native_write(
        &client,
        "/ns/a/f",
        &data,
        WriteOptions::default().replication(3),
        3000,
    )
    .await?;

    // rename
    client.rename("/ns/a/f", "/ns/a/b/g", false).await?;
    assert!(matches!(
        client.get_file_info("/ns/a/f").await,
        Err(HdfsError::FileNotFound(_))
    ));
    let st = client.get_file_info("/ns/a/b/g").await?;
    assert_eq!(st.length, 3000);
    assert_eq!(st.path, "/ns/a/b/g");
    common::assert_same_bytes(
        "renamed file",
        &common::native_read(&client, "/ns/a/b/g").await?,
        &data,
    );
    // rename onto an existing file: refused without overwrite, done with it
    common::native_write(
        &client,
        "/ns/a/other",
        b"other",
        WriteOptions::default().replication(3),
        5,
    )
    .await?;
    assert!(
        client
            .rename("/ns/a/other", "/ns/a/b/g", false)
            .await
            .is_err(),
        "rename over an existing file without overwrite"
    );
    client.rename("/ns/a/other", "/ns/a/b/g", true).await?;
    assert_eq!(common::native_read(&client, "/ns/a/b/g").await?, b"other");
    // rename a directory
    client.rename("/ns/a/b", "/ns/c", false).await?;
    assert_eq!(common::native_read(&client, "/ns/c/g").await?, b"other");

    // set_permission
    client.set_permission("/ns/c/g", 0o600).await?;
    assert_eq!(client.get_file_info("/ns/c/g").await?.permission, 0o600);
    client.set_permission("/ns/c", 0o711).await?;
    assert_eq!(client.get_file_info("/ns/c").await?.permission, 0o711);

    // set_owner (we are the superuser: the user that started the NameNode)
    client
        .set_owner("/ns/c/g", Some("alice"), Some("staff"))
        .await?;
    let st = client.get_file_info("/ns/c/g").await?;
    assert_eq!((st.owner.as_str(), st.group.as_str()), ("alice", "staff"));
    client.set_owner("/ns/c/g", None, Some("wheel")).await?;
    let st = client.get_file_info("/ns/c/g").await?;
    assert_eq!((st.owner.as_str(), st.group.as_str()), ("alice", "wheel"));

    // set_times
    let mtime = 1_600_000_000_123u64;
    let atime = 1_650_000_000_456u64;
    client.set_times("/ns/c/g", mtime, atime).await?;
    let st = client.get_file_info("/ns/c/g").await?;
    assert_eq!((st.modification_time, st.access_time), (mtime, atime));

    // set_replication
    assert_eq!(client.get_file_info("/ns/c/g").await?.replication, Some(3));
    assert!(client.set_replication("/ns/c/g", 2).await?);
    assert_eq!(client.get_file_info("/ns/c/g").await?.replication, Some(2));
    assert_eq!(
        common::native_read(&client, "/ns/c/g").await?,
        b"other",
        "readable after set_replication"
    );

    // content summary: /ns has dirs ns, a, c and files c/g (5 bytes, repl 2) and a/big (repl 3)
    let big = common::random_bytes(2 * MIB + 5, 2);
    common::native_write(
        &client,
        "/ns/a/big",
        &big,
        WriteOptions::default()
            .block_size(MIB as u64)
            .replication(3),
        100_000,
    )
    .await?;
    let cs = client.get_content_summary("/ns").await?;
    assert_eq!(cs.directory_count, 3, "{cs:?}");
    assert_eq!(cs.file_count, 2, "{cs:?}");
    assert_eq!(cs.length, 5 + big.len() as u64, "{cs:?}");
    assert_eq!(cs.space_consumed, 5 * 2 + 3 * big.len() as u64, "{cs:?}");
    let cs = client.get_content_summary("/ns/a/big").await?;
    assert_eq!(
        (cs.file_count, cs.directory_count, cs.length),
        (1, 0, big.len() as u64)
    );

    // listing of a small directory
    let names: Vec<String> = client
        .list_status("/ns", false)
        .await?
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(names, vec!["/ns/a".to_string(), "/ns/c".into()]);
    let all: HashSet<String> = client
        .list_status("/ns", true)
        .await?
        .into_iter()
        .map(|s| s.path)
        .collect();
    let want: HashSet<String> = ["/ns/a", "/ns/c", "/ns/a/big", "/ns/c/g"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(all, want);

    // delete
    assert!(client.delete("/ns/c/g", false).await?);
    assert!(matches!(
        client.get_file_info("/ns/c/g").await,
        Err(HdfsError::FileNotFound(_))
    ));
    assert!(client.delete("/ns", true).await?);
    assert!(matches!(
        client.get_file_info("/ns").await,
        Err(HdfsError::FileNotFound(_))
    ));
    assert!(
        !client.delete("/ns", true).await?,
        "deleting a missing path returns false"
    );

    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn listing_of_2500_entries_across_pages() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.ls.limit", "1000")
        .build()
        .await?;
    let client = common::native_client(&cluster.uri())?;
    client.mkdirs("/many", 0o755, true).await?;

    let mut want = Vec::new();
    for i in 0..2500 {
        let name = format!("/many/e{i:05}");
        if i % 2 == 0 {
            client.mkdirs(&name, 0o755, false).await?;
        } else {
            let mut w = client.create(&name, WriteOptions::default()).await?;
            if i % 101 == 1 {
                w.write_bytes(Bytes::from(vec![i as u8; i])).await?;
            }
            w.close().await?;
        }
        want.push(name);
    }

    let listed = client.list_status("/many", false).await?;
    let got: Vec<String> = listed.iter().map(|s| s.path.clone()).collect();
    assert_eq!(got.len(), 2500, "entries listed");
    assert_eq!(
        got, want,
        "listing is complete, without duplicates, in name order"
    );
    for (i, st) in listed.iter().enumerate() {
        assert_eq!(st.isdir, i % 2 == 0, "{}", st.path);
        let len = if i % 2 == 1 && i % 101 == 1 { i } else { 0 };
        assert_eq!(st.length, len, "{}", st.path);
    }
    let cs = client.get_content_summary("/many").await?;
    assert_eq!((cs.directory_count, cs.file_count), (1 + 1250, 1250));

    // The Java client pages through the same listing.
    if let Some(sh) = common::java::JavaShell::new(
        &cluster.uri(),
        "listing_of_2500_entries_across_pages (Java part)",
    )? {
        let out = sh.run(&["-ls", "/many"]).await?.ok();
        let lines = out.lines();
        assert_eq!(lines[0], "Found 2500 items");
        let paths: Vec<String> = lines[1..]
            .iter()
            .filter_map(|l| l.split_whitespace().last().map(str::to_owned))
            .collect();
        assert_eq!(paths, want);
        let out = sh.run(&["-count", "/many"]).await?.ok();
        let cols: Vec<String> = out.lines()[0]
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        assert_eq!(cols[..2], ["1251".to_string(), "1250".into()]);
    }

    // A recursive delete of the whole directory removes every entry.
    assert!(client.delete("/many", true).await?);
    assert!(matches!(
        client.get_file_info("/many").await,
        Err(HdfsError::FileNotFound(_))
    ));
    assert!(matches!(
        client.get_file_info("/many/e00001").await,
        Err(HdfsError::FileNotFound(_))
    ));

    cluster.shutdown().await;
    Ok(())
}
