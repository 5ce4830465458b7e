//! Issue 16, item 3, with real processes: an `rhdfs datanode` with three data directories
//! and `dfs.datanode.failed.volumes.tolerated=1`. One directory fails (replaced by a plain
//! file, which a disk check finds even when the tests run as root): the DataNode keeps
//! running, the NameNode counts one failed volume and copies the lost replicas again. A
//! second directory fails: more failures than tolerated, so the DataNode tells the NameNode
//! (FATAL_DISK_ERROR), logs that it is shutting down due to failed volumes and the process
//! exits — with status 0, as Hadoop's DataNode does (its secureMain ends in `terminate(0)`
//! once the DataNode's join returns). The NameNode counts it dead and its replicas are
//! copied to the others; every file reads back intact.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, ensure};

use crate::common::procs::{
    Cluster, ClusterOptions, finalized_replicas, jmx_number, read_file, wait_for, with_timeout,
    write_file,
};

const STATE_BEAN: &str = "Hadoop:service=NameNode,name=FSNamesystem";
const WAIT: Duration = Duration::from_secs(120);
const VOLUMES: usize = 3;

/// A data directory fails as a disk does: it is moved away and a plain file takes its
/// place, so the disk checker can neither create nor use its block pool directories.
fn fail_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::rename(dir, dir.with_extension("gone"))
        .with_context(|| format!("moving {} away", dir.display()))?;
    std::fs::write(dir, b"not a directory any more")?;
    Ok(())
}

/// A figure of the NameNode's FSNamesystem bean.
async fn state(cluster: &Cluster, attr: &str) -> anyhow::Result<u64> {
    let doc = cluster.jmx(STATE_BEAN).await?;
    jmx_number(&doc, attr).with_context(|| format!("no {attr} in\n{doc}"))
}

/// Finalized replicas per block on the data directories `dirs`, read off the disks.
async fn replicas_on(dirs: Vec<PathBuf>) -> anyhow::Result<BTreeMap<u64, Vec<u64>>> {
    tokio::task::spawn_blocking(move || finalized_replicas(&dirs)).await?
}

/// Waits until every block of the namespace has at least `want` finalized replicas on the
/// directories `dirs` and the NameNode counts no block under-replicated.
async fn wait_copied(
    cluster: &Cluster,
    dirs: &[PathBuf],
    want: usize,
    what: &str,
) -> anyhow::Result<()> {
    let blocks = cluster.namespace_blocks().await?;
    let last = std::cell::RefCell::new(String::new());
    let res = wait_for(what, WAIT, || async {
        let on_disk = replicas_on(dirs.to_vec()).await?;
        let short: Vec<String> = blocks
            .keys()
            .filter_map(|id| {
                let n = on_disk.get(id).map_or(0, Vec::len);
                (n < want).then(|| format!("blk_{id}: {n}"))
            })
            .collect();
        let under = state(cluster, "UnderReplicatedBlocks").await?;
        *last.borrow_mut() = format!("under-replicated {under}, short {short:?}");
        Ok(short.is_empty() && under == 0)
    })
    .await;
    res.with_context(|| format!("{}\n{}", last.borrow(), cluster.log_tail("nn.log")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datanode_exits_once_more_volumes_failed_than_tolerated() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let opts = ClusterOptions {
        conf: vec![
            "dfs.namenode.redundancy.interval.seconds=1".into(),
            "dfs.namenode.reconstruction.pending.timeout-sec=5".into(),
        ],
        datanode_conf: vec![
            "dfs.datanode.failed.volumes.tolerated=1".into(),
            "dfs.datanode.disk.check.min.gap=1s".into(),
        ],
        volumes_per_datanode: VOLUMES,
        ..ClusterOptions::default()
    };
    let mut cluster = Cluster::start_with(tmp.path(), opts)?;
    let fs = cluster.client_out_of_safe_mode("/probe").await?;

    // Files (replication 2 on three nodes) until dn0 holds replicas on volumes 1 and 2.
    let mut files = Vec::new();
    for i in 0..60u32 {
        let path = format!("/vf/f{i}");
        let data: Vec<u8> = (0..30_000u32).map(|b| (b * 7 + i) as u8).collect();
        write_file(&fs, &path, &data).await?;
        files.push((path, data));
        let v1 = replicas_on(vec![cluster.volume_dir(0, 1)]).await?;
        let v2 = replicas_on(vec![cluster.volume_dir(0, 2)]).await?;
        if !v1.is_empty() && !v2.is_empty() {
            break;
        }
    }
    let lost_first = replicas_on(vec![cluster.volume_dir(0, 1)]).await?;
    ensure!(
        !lost_first.is_empty()
            && !replicas_on(vec![cluster.volume_dir(0, 2)])
                .await?
                .is_empty(),
        "dn0 never held replicas on volumes 1 and 2 after {} files",
        files.len()
    );
    let all_dirs = |c: &Cluster, skip: &[(usize, usize)]| -> Vec<PathBuf> {
        (0..c.datanode_count())
            .flat_map(|i| (0..VOLUMES).map(move |j| (i, j)))
            .filter(|v| !skip.contains(v))
            .map(|(i, j)| c.volume_dir(i, j))
            .collect()
    };

    // One failure, tolerated: dn0 keeps running, the NameNode counts the failed volume
    // and copies the replicas it held elsewhere.
    fail_dir(&cluster.volume_dir(0, 1))?;
    wait_for("one failed volume at the NameNode", WAIT, || async {
        Ok(state(&cluster, "VolumeFailuresTotal").await? == 1)
    })
    .await
    .with_context(|| cluster.log_tail("dn0.log"))?;
    wait_copied(
        &cluster,
        &all_dirs(&cluster, &[(0, 1)]),
        2,
        "the failed volume's replicas copied again",
    )
    .await?;
    ensure!(
        cluster.datanode_exit(0)?.is_none(),
        "dn0 exited after a tolerated failure:\n{}",
        cluster.log_tail("dn0.log")
    );
    ensure!(state(&cluster, "NumLiveDataNodes").await? == 3);
    let report = cluster.admin(&["dfsadmin", "-report"]).await?;
    ensure!(
        report.contains(&format!(
            "Failed Storage Locations: {}\n",
            cluster.volume_dir(0, 1).display()
        )),
        "dfsadmin -report:\n{report}"
    );

    // A second failure is one more than tolerated: the process ends by itself.
    fail_dir(&cluster.volume_dir(0, 2))?;
    let status = std::cell::Cell::new(None);
    wait_for("dn0 to exit", WAIT, || {
        let s = cluster.datanode_exit(0);
        async {
            status.set(s?);
            Ok(status.get().is_some())
        }
    })
    .await
    .with_context(|| cluster.log_tail("dn0.log"))?;
    let log = cluster.log("dn0.log");
    ensure!(
        status.get().is_some_and(|s| s.code() == Some(0)),
        "dn0 exited with {:?} (Hadoop's DataNode exits with 0):\n{}",
        status.get(),
        cluster.log_tail("dn0.log")
    );
    for line in [
        "DataNode is shutting down due to failed volumes",
        "Exiting Datanode",
    ] {
        ensure!(log.contains(line), "no {line:?} in dn0's log:\n{log}");
    }
    wait_for("dn0 dead at the NameNode", WAIT, || async {
        Ok(state(&cluster, "NumDeadDataNodes").await? == 1
            && state(&cluster, "NumLiveDataNodes").await? == 2)
    })
    .await
    .with_context(|| cluster.log_tail("nn.log"))?;
    let others: Vec<PathBuf> = all_dirs(&cluster, &[])
        .into_iter()
        .filter(|d| !d.starts_with(cluster.data_dir(0)))
        .collect();
    wait_copied(&cluster, &others, 2, "dn0's replicas copied to the others").await?;
    println!(
        "{} files; dn0 lost {} replicas with its first volume; exited with {:?}",
        files.len(),
        lost_first.len(),
        status.get()
    );
    cluster.fsck().await?;
    for (path, data) in &files {
        let got = read_file(&fs, path).await?;
        ensure!(got == *data, "{path}: content differs");
    }
    with_timeout("delete", fs.delete("/vf", true)).await?;
    fs.close().await;
    Ok(())
}
