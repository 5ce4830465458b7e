//! Issue 12, "What must work" item 4: truncate on a block boundary (done at once) and
//! inside a block (the client waits for the block recovery that cuts the replicas), read
//! back; concat of three files, read back; Hadoop's errors for both; quota usage right
//! after each; everything kept across NameNode restarts (edit replay, then the image).

use crate::common;

use common::rpc::authority;
use hdfs_native::WriteOptions;
use rhdfs_client::FileSystem;
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::namespace::QUOTA_DONT_SET;
use rhdfs_namenode::rpc::quota::call as set_quota;
use rhdfs_namenode::safemode::{SafeModeAction, save_namespace, set_safe_mode};

use std::time::Duration;

const MIB: usize = 1024 * 1024;

fn opts() -> WriteOptions {
    WriteOptions::default()
        .block_size(MIB as u64)
        .replication(2)
}

/// (namespace items, space consumed) of `path`.
async fn usage(fs: &FileSystem, path: &str) -> anyhow::Result<(u64, u64)> {
    let cs = fs.content_summary(path).await?;
    Ok((cs.file_count + cs.directory_count, cs.space_consumed))
}

/// Waits until `path` is closed at `len` bytes (the truncating recovery ended).
async fn wait_closed_at(fs: &FileSystem, path: &str, len: u64) -> anyhow::Result<()> {
    common::poll_until(
        "truncate recovery to close the file",
        Duration::from_secs(120),
        || async move {
            let st = fs.status(path).await.map_err(|e| e.message())?;
            let closed = fs.is_file_closed(path).await.map_err(|e| e.message())?;
            if closed && st.length == len {
                Ok(())
            } else {
                Err(format!("closed={closed} length={}", st.length))
            }
        },
    )
    .await
}

/// The error class and message of a failed call.
fn failure<T: std::fmt::Debug>(r: rhdfs_client::error::Result<T>) -> (String, String) {
    let e = r.expect_err("the call should fail");
    (e.class_name().to_string(), e.message())
}

const ILLEGAL: &str = "org.apache.hadoop.HadoopIllegalArgumentException";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn truncate_and_concat_read_back_and_survive_restart() -> anyhow::Result<()> {
    let mut cluster = MiniCluster::builder().datanodes(2).build().await?;
    let uri = cluster.uri();
    let addr = authority(&uri);
    let user = common::current_user();
    let native = common::native_client(&uri)?;
    let fs = FileSystem::connect(&uri).await?;
    native.mkdirs("/t", 0o755, true).await?;
    // A space quota makes the NameNode keep /t's usage (checked after every step).
    set_quota(&addr, &user, "/t", QUOTA_DONT_SET, 1 << 40, None).await?;

    let data = common::random_bytes(2 * MIB + MIB / 2, 12);
    common::native_write(&native, "/t/a", &data, opts(), 64 * 1024).await?;
    assert_eq!(usage(&fs, "/t").await?, (2, 2 * data.len() as u64));

    // On a block boundary: done at once, the third block gone.
    assert!(fs.truncate("/t/a", 2 * MIB as i64).await?);
    assert_eq!(fs.status("/t/a").await?.length, 2 * MIB as u64);
    assert_eq!(common::native_read(&native, "/t/a").await?, data[..2 * MIB]);
    assert_eq!(usage(&fs, "/t").await?, (2, 4 * MIB as u64));
    // Same length: nothing to do.
    assert!(fs.truncate("/t/a", 2 * MIB as i64).await?);

    // Inside a block: the client waits for the recovery, which closes the file.
    let cut = MIB + 1000;
    assert!(!fs.truncate("/t/a", cut as i64).await?);
    wait_closed_at(&fs, "/t/a", cut as u64).await?;
    assert_eq!(common::native_read(&native, "/t/a").await?, data[..cut]);
    assert_eq!(usage(&fs, "/t").await?, (2, 2 * cut as u64));

    // Hadoop's errors.
    let (class, msg) = failure(fs.truncate("/t/a", cut as i64 + 1).await);
    assert_eq!(class, ILLEGAL);
    assert_eq!(
        msg,
        format!(
            "Cannot truncate to a larger file size. Current size: {cut}, truncate size: {}.",
            cut + 1
        )
    );
    let (class, msg) = failure(fs.truncate("/t/a", -1).await);
    assert_eq!(
        (class.as_str(), msg.as_str()),
        (ILLEGAL, "Cannot truncate to a negative file size: -1.")
    );
    let (class, msg) = failure(fs.truncate("/t", 0).await);
    assert_eq!(
        (class.as_str(), msg.as_str()),
        ("java.io.FileNotFoundException", "Path is not a file: /t")
    );
    let (_, msg) = failure(fs.truncate("/t/none", 0).await);
    assert_eq!(msg, "File does not exist: /t/none");
    // A file another client has open for write.
    let mut open = native.create("/t/open", opts()).await?;
    open.write_bytes(bytes::Bytes::from(vec![7u8; 100])).await?;
    let (class, msg) = failure(fs.truncate("/t/open", 0).await);
    assert_eq!(
        class,
        "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"
    );
    assert!(
        msg.starts_with("Failed to TRUNCATE_FILE /t/open for ")
            && msg.contains("because this file lease is currently owned by"),
        "{msg}"
    );
    open.close().await?;
    assert!(native.delete("/t/open", false).await?);

    // concat of three files (the target's last block partial, as Hadoop 3 allows).
    let parts: Vec<Vec<u8>> = [MIB + 300, 700, 2 * MIB]
        .iter()
        .enumerate()
        .map(|(i, n)| common::random_bytes(*n, 100 + i as u64))
        .collect();
    for (i, p) in parts.iter().enumerate() {
        common::native_write(&native, &format!("/t/c{i}"), p, opts(), 64 * 1024).await?;
    }
    let before = usage(&fs, "/t").await?;
    fs.concat("/t/c0", &["/t/c1", "/t/c2"]).await?;
    let whole: Vec<u8> = parts.concat();
    assert_eq!(common::native_read(&native, "/t/c0").await?, whole);
    assert!(!fs.exists("/t/c1").await? && !fs.exists("/t/c2").await?);
    assert_eq!(usage(&fs, "/t").await?, (before.0 - 2, before.1));

    // concat's checks.
    common::native_write(&native, "/t/s1", b"one", opts(), 3).await?;
    native.mkdirs("/u", 0o755, true).await?;
    common::native_write(&native, "/u/s2", b"two", opts(), 3).await?;
    native.create("/t/empty", opts()).await?.close().await?;
    let cases: [(&[&str], String); 5] = [
        (
            &["/t/s1", "/t/s1"],
            "concat: at least two of the source files are the same".into(),
        ),
        (
            &["/t/c0"],
            "concat: the src file /t/c0 is the same with the target file /t/c0".into(),
        ),
        (
            &["/u/s2"],
            "Source file /u/s2 is not in the same directory with the target /t/c0".into(),
        ),
        (
            &["/t/empty"],
            "concat: source file /t/empty is invalid or empty or underConstruction".into(),
        ),
        (&["/t/nope"], "File does not exist: /t/nope".into()),
    ];
    for (srcs, want) in cases {
        let (_, msg) = failure(fs.concat("/t/c0", srcs).await);
        assert_eq!(msg, want, "{srcs:?}");
    }
    let (class, msg) = failure(fs.concat("/t/c0", &[]).await);
    assert_eq!(
        (class.as_str(), msg.as_str()),
        ("java.lang.IllegalArgumentException", "No sources given")
    );
    assert_eq!(common::native_read(&native, "/t/s1").await?, b"one");
    let kept = usage(&fs, "/t").await?;

    // NameNode restarts: edit replay, then the image.
    for save in [false, true] {
        if save {
            set_safe_mode(&addr, &user, SafeModeAction::Enter).await?;
            save_namespace(&addr, &user, 0, 0).await?;
            set_safe_mode(&addr, &user, SafeModeAction::Leave).await?;
        }
        cluster.restart_namenode(&[]).await?;
        common::poll_until("start-up safe mode off", Duration::from_secs(60), || {
            let (addr, user) = (addr.clone(), user.clone());
            async move {
                match set_safe_mode(&addr, &user, SafeModeAction::Get).await {
                    Ok(false) => Ok(()),
                    other => Err(format!("{other:?}")),
                }
            }
        })
        .await?;
        let native = common::native_client(&uri)?;
        let fs = FileSystem::connect(&uri).await?;
        assert_eq!(common::native_read(&native, "/t/a").await?, data[..cut]);
        assert_eq!(common::native_read(&native, "/t/c0").await?, whole);
        assert!(fs.is_file_closed("/t/a").await?);
        assert_eq!(usage(&fs, "/t").await?, kept);
    }
    cluster.shutdown().await;
    Ok(())
}

/// A truncate inside a block whose recovery cannot run (both DataNodes down) survives a
/// NameNode restart: the file comes back open with its truncate pending (edit replay), the
/// lease monitor recovers the lease once the hard limit passes, and the recovery cuts the
/// replicas to the truncated length; then once more from the image.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn truncate_pending_across_namenode_restart_completes() -> anyhow::Result<()> {
    let mut cluster = MiniCluster::builder().datanodes(2).build().await?;
    let uri = cluster.uri();
    let addr = authority(&uri);
    let user = common::current_user();
    let native = common::native_client(&uri)?;
    let data = common::random_bytes(2 * MIB + 500, 13);
    common::native_write(&native, "/p", &data, opts(), 64 * 1024).await?;
    // Both replicas of every block known before the DataNodes go.
    let fs = FileSystem::connect(&uri).await?;
    common::poll_until("two locations per block", Duration::from_secs(60), || {
        let fs = fs.clone();
        async move {
            let locs = fs.block_locations("/p").await.map_err(|e| e.message())?;
            if locs.iter().all(|l| l.hosts.len() == 2) {
                Ok(())
            } else {
                Err(format!("{locs:?}"))
            }
        }
    })
    .await?;
    for i in 0..2 {
        cluster.stop_datanode(i).await?;
    }
    let cut = MIB + 1234;
    assert!(
        !fs.truncate("/p", cut as i64).await?,
        "a cut inside a block"
    );
    assert!(!fs.is_file_closed("/p").await?);
    fs.close().await;
    drop(native);

    for image in [false, true] {
        cluster
            .restart_namenode(&[("dfs.namenode.lease-hard-limit-sec", "1")])
            .await?;
        for i in 0..2 {
            cluster.restart_datanode(i).await?;
        }
        let fs = FileSystem::connect(&uri).await?;
        wait_closed_at(&fs, "/p", cut as u64).await?;
        let native = common::native_client(&uri)?;
        assert_eq!(common::native_read(&native, "/p").await?, data[..cut]);
        if !image {
            // Again with the truncated file in an image: the recovery is over, nothing pending.
            set_safe_mode(&addr, &user, SafeModeAction::Enter).await?;
            save_namespace(&addr, &user, 0, 0).await?;
            set_safe_mode(&addr, &user, SafeModeAction::Leave).await?;
        }
        fs.close().await;
    }
    cluster.shutdown().await;
    Ok(())
}
