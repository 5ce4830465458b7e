//! Issue 5 gap: fsck -move (the remains of a corrupt file copied to /lost+found as chunk
//! files), -move -delete, -blockId, -storagepolicies and the permission checks of the
//! NameNode's `/fsck`, on a one-DataNode cluster whose file loses its middle block.

use crate::common;

use std::time::Duration;

use hdfs_native::WriteOptions;
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::fsdir::FsPath;
use rhdfs_namenode::http::client::get;

const MIB: usize = 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(60);

async fn fsck(cluster: &MiniCluster, query: &str) -> anyhow::Result<String> {
    let addr = common::nn_http(cluster)?;
    let (code, body) = get(&addr, query, TIMEOUT).await?;
    anyhow::ensure!(code == 200, "HTTP {code}: {body}");
    Ok(body)
}

fn block_ids(cluster: &MiniCluster, path: &str) -> anyhow::Result<Vec<u64>> {
    let p = FsPath::parse(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    cluster
        .namenode()
        .namesystem()
        .with_ns(|ns| {
            let dir = ns.dir();
            let id = dir.resolve(&p).last()?;
            Some(
                dir.get(id)?
                    .as_file()?
                    .blocks
                    .iter()
                    .map(|b| b.id)
                    .collect(),
            )
        })
        .ok_or_else(|| anyhow::anyhow!("{path} is not a file"))
}

fn live(cluster: &MiniCluster, ids: &[u64]) -> Vec<usize> {
    cluster
        .namenode()
        .block_manager()
        .block_views(ids)
        .into_iter()
        .map(|v| v.map_or(0, |v| v.live))
        .collect()
}

/// Compares line by line; lines of `want` that end with '*' match by prefix.
fn assert_lines(got: &str, want: &str) {
    let g: Vec<&str> = got.split('\n').collect();
    let w: Vec<&str> = want.split('\n').collect();
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        match b.strip_suffix('*') {
            Some(prefix) => assert!(a.starts_with(prefix), "line {i}: {a:?} !~ {b:?}\n{got}"),
            None => assert_eq!(a, b, "line {i}\n--- got:\n{got}"),
        }
    }
    assert_eq!(g.len(), w.len(), "line count\n--- got:\n{got}");
}

/// The report's last line (the status DFSck reads).
fn last_line(report: &str) -> &str {
    report.rsplit('\n').next().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn move_copies_remains_to_lost_found() -> anyhow::Result<()> {
    let mut cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.heartbeat.recheck-interval", "500")
        .conf("dfs.replication", "1")
        .conf("dfs.blocksize", MIB.to_string())
        .build()
        .await?;
    let user = common::current_user();
    let client = common::native_client(&cluster.uri())?;
    client.mkdirs("/data", 0o755, true).await?;
    // Four blocks: 1 MiB, 1 MiB, 1 MiB, 1000 bytes; and a healthy one-block file.
    let data = common::random_bytes(3 * MIB + 1000, 7);
    let opts = || WriteOptions::default().replication(1);
    common::native_write(&client, "/data/f", &data, opts(), 64 * 1024).await?;
    common::native_write(&client, "/data/ok", &data[..5000], opts(), 5000).await?;
    client.set_permission("/data/f", 0o640).await?;
    let ids = block_ids(&cluster, "/data/f")?;
    assert_eq!(ids.len(), 4);
    let ok_id = block_ids(&cluster, "/data/ok")?[0];
    let all: Vec<u64> = ids.iter().copied().chain([ok_id]).collect();
    common::poll_until("all replicas reported", TIMEOUT, || {
        let l = live(&cluster, &all);
        async move {
            l.iter()
                .all(|n| *n == 1)
                .then_some(())
                .ok_or_else(|| format!("{l:?}"))
        }
    })
    .await?;

    // -storagepolicies while healthy: every block on one DISK, as HOT wants.
    let sp = fsck(
        &cluster,
        &format!("/fsck?ugi={user}&storagepolicies=1&path=%2Fdata"),
    )
    .await?;
    assert!(
        sp.contains(
            " Blocks queued for replication:\t0\n\nBlocks satisfying the specified storage policy:\nStorage Policy                  # of blocks       % of blocks\nDISK:1(HOT)                        5             100.0000%\n\nAll blocks satisfy specified storage policy.\nFSCK ended at "
        ),
        "{sp}"
    );
    assert!(last_line(&sp).ends_with("is HEALTHY"), "{sp}");

    // Lose the middle block: its files go from the DataNode's disk, the restarted node
    // reports without it.
    let dirs = cluster.datanode_data_dirs(0);
    let victim = ids[1];
    let files: Vec<_> = common::block_files(&dirs, victim)
        .into_iter()
        .chain(common::meta_files(&dirs, victim))
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    cluster.stop_datanode(0).await?;
    for f in &files {
        std::fs::remove_file(f)?;
    }
    cluster.restart_datanode(0).await?;
    common::poll_until("the middle block missing", TIMEOUT, || {
        let l = live(&cluster, &all);
        async move {
            (l == [1, 0, 1, 1, 1])
                .then_some(())
                .ok_or_else(|| format!("{l:?}"))
        }
    })
    .await?;

    // -blockId, line by line: a good block, the missing one, an unknown id, a bad word.
    let view = cluster
        .namenode()
        .block_manager()
        .block_views(&[ids[0]])
        .pop()
        .flatten()
        .ok_or_else(|| anyhow::anyhow!("no view"))?;
    let host_rack = format!("{}{}", view.replicas[0].host_name, view.replicas[0].rack);
    let report = fsck(
        &cluster,
        &format!(
            "/fsck?ugi={user}&blockId=blk_{}+blk_{victim}+blk_999999+xyz+&path=%2F",
            ids[0]
        ),
    )
    .await?;
    let want = format!(
        "FSCK started by {user} (auth:SIMPLE) from /127.0.0.1 at *

Block Id: blk_{b0}
Block belongs to: /data/f
No. of Expected Replica: 1
No. of live Replica: 1
No. of excess Replica: 0
No. of stale Replica: 0
No. of decommissioned Replica: 0
No. of decommissioning Replica: 0
No. of corrupted Replica: 0
Block replica on datanode/rack: {host_rack} is HEALTHY

Block Id: blk_{victim}
Block belongs to: /data/f
No. of Expected Replica: 1
No. of live Replica: 0
No. of excess Replica: 0
No. of stale Replica: 0
No. of decommissioned Replica: 0
No. of decommissioning Replica: 0
No. of corrupted Replica: 0

Block blk_999999 does not exist
Incorrect blockId format: xyz
",
        b0 = ids[0]
    );
    assert_lines(&report, &want);

    // -storagepolicies now: the missing block has no storage, so matches no policy.
    let sp = fsck(
        &cluster,
        &format!("/fsck?ugi={user}&storagepolicies=1&path=%2Fdata"),
    )
    .await?;
    assert!(
        sp.contains("DISK:1(HOT)                        4              80.0000%\n\nBlocks NOT satisfying the specified storage policy:\nStorage Policy                  Specified Storage Policy      # of blocks       % of blocks\n                                    HOT                           1              20.0000%\nFSCK ended at "),
        "{sp}"
    );

    // -move: /lost+found/data/f/0 holds block 0, /1 blocks 2 and 3; the file stays.
    let moved = fsck(&cluster, &format!("/fsck?ugi={user}&move=1&path=%2F")).await?;
    assert!(
        moved.contains("\n/data/f: MISSING 1 blocks of total size 1048576 B."),
        "{moved}"
    );
    assert!(
        moved.ends_with("\n\nThe filesystem under path '/' is CORRUPT"),
        "{moved}"
    );
    let chunk0 = common::native_read(&client, "/lost+found/data/f/0").await?;
    common::assert_same_bytes("chunk 0", &chunk0, &data[..MIB]);
    let chunk1 = common::native_read(&client, "/lost+found/data/f/1").await?;
    common::assert_same_bytes("chunk 1", &chunk1, &data[2 * MIB..]);
    let listing = client.list_status("/lost+found/data/f", false).await?;
    let names: Vec<&str> = listing.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let dir = client.get_file_info("/lost+found/data/f").await?;
    assert!(dir.isdir);
    assert_eq!(
        dir.permission, 0o640,
        "the directory takes the file's permission"
    );
    assert_eq!(client.get_file_info("/data/f").await?.length, data.len());
    // The healthy file was not copied.
    assert!(client.get_file_info("/lost+found/data/ok").await.is_err());

    // Again: the remains are already there; Hadoop skips the copy, no error.
    let again = fsck(&cluster, &format!("/fsck?ugi={user}&move=1&path=%2Fdata")).await?;
    assert!(
        again.ends_with("The filesystem under path '/data' is CORRUPT"),
        "{again}"
    );
    assert_eq!(
        client.list_status("/lost+found/data/f", false).await?.len(),
        2
    );

    // /lost+found a regular file: nothing can be copied, fsck FAILS with Hadoop's
    // internal-error ending, and -delete leaves the file it could not save.
    client.delete("/lost+found", true).await?;
    common::native_write(&client, "/lost+found", b"x", opts(), 1).await?;
    let failed = fsck(
        &cluster,
        &format!("/fsck?ugi={user}&move=1&delete=1&path=%2Fdata"),
    )
    .await?;
    let tail: Vec<&str> = failed.rsplit('\n').take(6).collect();
    assert_eq!(tail[0], "Fsck on path '/data' FAILED", "{failed}");
    assert_eq!(&tail[1..4], &["", "", "fsck encountered internal errors!"]);
    assert!(tail[4].starts_with("FSCK ended at ") && tail[5].starts_with("FSCK ended at "));
    assert_eq!(client.get_file_info("/data/f").await?.length, data.len());

    // -move -delete: copied afresh, then the corrupt file is removed.
    client.delete("/lost+found", false).await?;
    let both = fsck(
        &cluster,
        &format!("/fsck?ugi={user}&move=1&delete=1&path=%2Fdata"),
    )
    .await?;
    assert!(
        both.ends_with("The filesystem under path '/data' is CORRUPT"),
        "{both}"
    );
    assert!(client.get_file_info("/data/f").await.is_err());
    let chunk1 = common::native_read(&client, "/lost+found/data/f/1").await?;
    common::assert_same_bytes("chunk 1 again", &chunk1, &data[2 * MIB..]);
    let after = fsck(&cluster, &format!("/fsck?ugi={user}&path=%2F")).await?;
    assert!(
        after.ends_with("The filesystem under path '/' is HEALTHY"),
        "{after}"
    );

    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fsck_checks_permissions() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(1).build().await?;
    let user = common::current_user();
    let client = common::native_client(&cluster.uri())?;
    client.mkdirs("/secret", 0o700, true).await?;
    client.set_permission("/secret", 0o700).await?;
    common::native_write(
        &client,
        "/open.txt",
        b"hello",
        WriteOptions::default().replication(1),
        5,
    )
    .await?;
    client.set_permission("/open.txt", 0o600).await?;
    let group = cluster
        .namenode()
        .namesystem()
        .with_ns(|ns| {
            let p = FsPath::parse("/secret").ok()?;
            let dir = ns.dir();
            let id = dir.resolve(&p).last()?;
            Some(dir.get(id)?.perm.group.clone())
        })
        .ok_or_else(|| anyhow::anyhow!("no /secret"))?;

    // A directory the user may not list: the walk stops with Hadoop's exception text.
    let denied = fsck(&cluster, "/fsck?ugi=mallory&path=%2Fsecret").await?;
    let want = format!(
        "FSCK started by mallory (auth:SIMPLE) from /127.0.0.1 for path /secret at *

FSCK ended at *
Permission denied: user=mallory, access=READ_EXECUTE, inode=\"/secret\":{user}:{group}:drwx------


Fsck on path '/secret' FAILED"
    );
    assert_lines(&denied, &want);
    // A file the user may not read.
    let denied = fsck(&cluster, "/fsck?user.name=mallory&path=%2Fopen.txt").await?;
    assert!(
        denied.contains(&format!(
            "\nPermission denied: user=mallory, access=READ, inode=\"/open.txt\":{user}:{group}:-rw-------\n\n\nFsck on path '/open.txt' FAILED"
        )),
        "{denied}"
    );
    // A walk of / meets /secret too.
    let root = fsck(&cluster, "/fsck?ugi=mallory&path=%2F").await?;
    assert!(root.ends_with("Fsck on path '/' FAILED"), "{root}");
    // The owner (the superuser here) is fine.
    let ok = fsck(&cluster, &format!("/fsck?ugi={user}&path=%2F")).await?;
    assert!(ok.ends_with("is HEALTHY"), "{ok}");

    // -blockId and -list-corruptfileblocks are for the superuser only.
    let blk = fsck(&cluster, "/fsck?ugi=mallory&blockId=blk_1+&path=%2F").await?;
    assert_lines(
        &blk,
        "FSCK ended at *
Access denied for user mallory. Superuser privilege is required


Fsck on path '/' FAILED",
    );
    let list = fsck(
        &cluster,
        "/fsck?ugi=mallory&listcorruptfileblocks=1&path=%2F",
    )
    .await?;
    assert!(
        list.contains("\nAccess denied for user mallory. Superuser privilege is required\n"),
        "{list}"
    );
    let list = fsck(
        &cluster,
        &format!("/fsck?ugi={user}&listcorruptfileblocks=1&path=%2F"),
    )
    .await?;
    assert!(
        list.contains("\nCookie:\t0\n\n\nThe filesystem under path '/' has no CORRUPT files\n"),
        "{list}"
    );
    cluster.shutdown().await;
    Ok(())
}
