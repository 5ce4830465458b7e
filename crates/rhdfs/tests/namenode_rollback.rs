//! Issue 11, test 1: a NameNode restarted on an older copy of its name directory deletes
//! none of the newer data. Set A is written, the namespace saved (`-safemode enter`,
//! `-saveNamespace`, `-safemode leave`) and the name directory copied; set B is written;
//! the NameNode is stopped and the copy put back. The DataNodes then report B's replicas,
//! whose generation stamps are newer than anything the restored namespace knows: the
//! NameNode stays in safe mode and says why (`-safemode get`, /jmx), `-safemode leave` does
//! not end it, `-safemode forceExit` does and the replicas are held as orphans (listed by
//! `fsck / -list-orphans`, new blocks never reuse their ids), and only
//! `dfsadmin -releaseOrphans` deletes them. Real processes (`common::procs`).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, ensure};

use crate::common::procs::{Cluster, ClusterOptions, jmx_number, read_file, wait_for, write_file};

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let dst = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &dst)?;
        } else {
            std::fs::copy(e.path(), &dst)
                .with_context(|| format!("copying {}", e.path().display()))?;
        }
    }
    Ok(())
}

fn data(tag: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31) ^ tag).collect()
}

/// The block ids of set B with their replicas on the DataNodes' disks.
async fn b_replicas_on_disk(c: &Cluster, b: &BTreeSet<u64>) -> anyhow::Result<usize> {
    let disk = c.disk_replicas().await?;
    Ok(b.iter().map(|id| disk.get(id).map_or(0, Vec::len)).sum())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restored_name_directory_deletes_no_newer_replica() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let opts = ClusterOptions {
        conf: vec![
            "dfs.namenode.redundancy.interval.seconds=1".into(),
            "dfs.namenode.invalidate.work.pct.per.iteration=1.0".into(),
            "dfs.blocksize=1048576".into(),
        ],
        ..ClusterOptions::default()
    };
    let mut c = Cluster::start_with(tmp.path(), opts)?;
    let fs = c.client_out_of_safe_mode("/probe").await?;

    // Set A, then a saved namespace and a copy of the name directory.
    let a = data(1, 1_500_000);
    write_file(&fs, "/a", &a).await?;
    c.admin(&["dfsadmin", "-safemode", "enter"]).await?;
    c.admin(&["dfsadmin", "-saveNamespace"]).await?;
    c.admin(&["dfsadmin", "-safemode", "leave"]).await?;
    let backup = tmp.path().join("name-backup");
    copy_dir(&c.dir().join("name"), &backup)?;

    // Set B: three files, two replicas of each block on disk.
    for i in 0..3u8 {
        write_file(&fs, &format!("/b{i}"), &data(10 + i, 1_200_000)).await?;
    }
    let all = c.namespace_blocks().await?;
    // Block ids grow: set A's two blocks are the first.
    let a_blocks: BTreeSet<u64> = all.keys().copied().take(2).collect();
    let b_blocks: BTreeSet<u64> = all
        .keys()
        .copied()
        .filter(|id| !a_blocks.contains(id))
        .collect();
    ensure!(b_blocks.len() == 6, "set B's blocks: {b_blocks:?}");
    let expected = 2 * b_blocks.len();
    wait_for(
        "set B's replicas on disk",
        Duration::from_secs(30),
        || async { Ok(b_replicas_on_disk(&c, &b_blocks).await? == expected) },
    )
    .await?;

    // The older name directory goes back.
    c.kill_namenode()?;
    std::fs::remove_dir_all(c.dir().join("name"))?;
    std::fs::rename(&backup, c.dir().join("name"))?;
    c.start_namenode()?;

    // Every B replica is reported from the future and keeps the NameNode in safe mode.
    wait_for(
        "the DataNodes' reports of set B",
        Duration::from_secs(60),
        || async {
            let jmx = c
                .jmx("Hadoop:service=NameNode,name=FSNamesystem")
                .await
                .unwrap_or_default();
            Ok(jmx_number(&jmx, "BlocksInFuture") == Some(expected as u64))
        },
    )
    .await?;
    let jmx = c.jmx("Hadoop:service=NameNode,name=FSNamesystem").await?;
    ensure!(
        jmx_number(&jmx, "BytesInFuture") == Some(2 * 3 * 1_200_000),
        "{jmx}"
    );
    let get = c.admin(&["dfsadmin", "-safemode", "get"]).await?;
    ensure!(get.starts_with("Safe mode is ON\n"), "{get}");
    ensure!(
        get.contains(&format!(
            "{expected} replica(s) with generation stamps in future"
        )),
        "{get}"
    );
    // Long enough for a wrong deletion to reach the DataNodes: three heartbeats and
    // RedundancyMonitor passes of the configured one second.
    tokio::time::sleep(Duration::from_secs(3)).await;
    ensure!(b_replicas_on_disk(&c, &b_blocks).await? == expected);
    let log = c.log("nn.log");
    ensure!(
        !log.contains('\u{1b}'),
        "a daemon's log file carries terminal colour codes"
    );
    ensure!(
        log.contains("generation stamps in the future"),
        "no warning in the NameNode's log:\n{}",
        c.log_tail("nn.log")
    );

    // LEAVE is refused while they are at risk; forceExit holds them as orphans.
    let leave = c.admin(&["dfsadmin", "-safemode", "leave"]).await?;
    ensure!(leave.starts_with("Safe mode is ON"), "{leave}");
    let exit = c.admin(&["dfsadmin", "-safemode", "forceExit"]).await?;
    ensure!(exit.starts_with("Safe mode is OFF"), "{exit}");
    let listed = c.admin(&["fsck", "/", "-list-orphans"]).await?;
    for id in &b_blocks {
        ensure!(
            listed.contains(&format!(":blk_{id}_")),
            "blk_{id} not listed:\n{listed}"
        );
    }
    ensure!(
        listed.contains(&format!("The NameNode holds {expected} orphan replica(s)")),
        "{listed}"
    );
    let report = c.admin(&["dfsadmin", "-report"]).await?;
    ensure!(
        report.contains(&format!("\tHeld orphan replicas: {expected} ")),
        "{report}"
    );

    // Out of safe mode: still nothing deleted; set A reads back; a new file's blocks do not
    // reuse set B's ids.
    let fs = c.client_out_of_safe_mode("/probe2").await?;
    ensure!(read_file(&fs, "/a").await? == a, "set A reads back");
    let new = data(99, 300_000);
    write_file(&fs, "/c", &new).await?;
    let now = c.namespace_blocks().await?;
    let max_b = b_blocks.iter().max().copied().unwrap_or(0);
    for id in now.keys().filter(|id| !a_blocks.contains(id)) {
        ensure!(
            *id > max_b,
            "new block {id} reuses an id held by set B (max {max_b})"
        );
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    ensure!(b_replicas_on_disk(&c, &b_blocks).await? == expected);

    // The operator's release deletes them.
    let released = c.admin(&["dfsadmin", "-releaseOrphans"]).await?;
    ensure!(
        released.contains(&format!("Released {expected} held orphan replica(s)")),
        "{released}"
    );
    wait_for(
        "set B's replicas deleted",
        Duration::from_secs(60),
        || async { Ok(b_replicas_on_disk(&c, &b_blocks).await? == 0) },
    )
    .await?;
    ensure!(read_file(&fs, "/a").await? == a);
    ensure!(read_file(&fs, "/c").await? == new);
    c.fsck().await?;
    Ok(())
}
