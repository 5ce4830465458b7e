//! Issue 11: a NameNode process stopped (SIGSTOP) for three dead intervals and resumed
//! (SIGCONT) declares no DataNode dead, misses no block and makes no DataNode register again.
//! Its heartbeat checker skips the passes right after the pause (Hadoop's HDFS-9107), and its
//! IPC server keeps the DataNodes' connections open with their heartbeats waiting in them, so
//! those heartbeats refresh the nodes before the checker scans again.
//!
//! Real processes (`common::procs`): `rhdfs namenode` and three `rhdfs datanode`s, with short
//! heartbeat intervals so that three dead intervals are a few seconds.

use std::time::{Duration, Instant};

use anyhow::{Context, ensure};

use crate::common::procs::{
    Cluster, ClusterOptions, jmx_number, read_file, signal, with_timeout, write_file,
};

const HEARTBEAT: Duration = Duration::from_millis(300);
const RECHECK: Duration = Duration::from_millis(600);
const LIVENESS_BEAN: &str = "rhdfs:service=NameNode,name=DatanodeLiveness";
const STATE_BEAN: &str = "Hadoop:service=NameNode,name=FSNamesystem";

/// Hadoop's dead interval: 2 × recheck + 10 × heartbeat.
fn dead_interval() -> Duration {
    2 * RECHECK + 10 * HEARTBEAT
}

/// The NameNode's liveness counters and block/node figures, from /jmx.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Figures {
    registrations: u64,
    declared_dead: u64,
    scans: u64,
    skipped: u64,
    live: u64,
    dead: u64,
    missing: u64,
}

async fn figures(cluster: &Cluster) -> anyhow::Result<Figures> {
    let liveness = cluster.jmx(LIVENESS_BEAN).await?;
    let state = cluster.jmx(STATE_BEAN).await?;
    let num = |doc: &str, attr: &str| {
        jmx_number(doc, attr).with_context(|| format!("no {attr} in\n{doc}"))
    };
    Ok(Figures {
        registrations: num(&liveness, "Registrations")?,
        declared_dead: num(&liveness, "DeclaredDead")?,
        scans: num(&liveness, "HeartbeatScans")?,
        skipped: num(&liveness, "HeartbeatScansSkipped")?,
        live: num(&state, "NumLiveDataNodes")?,
        dead: num(&state, "NumDeadDataNodes")?,
        missing: num(&state, "MissingBlocks")?,
    })
}

/// Polls the NameNode's figures until `done` holds (60 s at most).
async fn wait_figures(
    cluster: &Cluster,
    what: &str,
    done: impl Fn(&Figures) -> bool,
) -> anyhow::Result<Figures> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let f = figures(cluster).await?;
        if done(&f) {
            return Ok(f);
        }
        ensure!(
            Instant::now() < deadline,
            "waited 60 s for {what}; last {f:?}\n{}",
            cluster.log_tail("nn.log")
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namenode_stopped_for_three_dead_intervals_loses_no_datanode() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let opts = ClusterOptions {
        conf: vec![
            format!("dfs.heartbeat.interval={}ms", HEARTBEAT.as_millis()),
            format!(
                "dfs.namenode.heartbeat.recheck-interval={}",
                RECHECK.as_millis()
            ),
            // The server used to close any connection idle for twice this, heartbeats
            // waiting in it or not; the pause is far longer.
            "ipc.client.connection.maxidletime=1000".into(),
            "dfs.replication=3".into(),
        ],
        ..ClusterOptions::default()
    };
    let mut cluster = Cluster::start_with(tmp.path(), opts)?;
    let fs = cluster.client_out_of_safe_mode("/probe").await?;
    wait_figures(&cluster, "three live DataNodes", |f| f.live == 3).await?;
    let files: Vec<(String, Vec<u8>)> = (0..4u8)
        .map(|i| (format!("/pause/f{i}"), vec![i; 40_000 + usize::from(i)]))
        .collect();
    for (path, data) in &files {
        write_file(&fs, path, data).await?;
    }
    cluster.fsck().await?;
    let before = wait_figures(&cluster, "the heartbeat checker scanning", |f| f.scans > 0).await?;
    ensure!(
        before.missing == 0 && before.dead == 0,
        "before the pause: {before:?}"
    );
    let dn_logs: Vec<usize> = (0..cluster.datanode_count())
        .map(|i| cluster.log(&format!("dn{i}.log")).len())
        .collect();

    let pid = cluster.namenode_pid().context("NameNode not running")?;
    signal(pid, "STOP")?;
    // The scenario itself, not a wait for a condition: the NameNode stays stopped this long.
    tokio::time::sleep(3 * dead_interval()).await;
    signal(pid, "CONT")?;

    // The checker's first pass after the pause is skipped; then it settles one recheck
    // interval and scans again: by three scans after the skip it has scanned at least once
    // more than a recheck interval after the resume.
    let skipped = wait_figures(&cluster, "a skipped heartbeat scan", |f| {
        f.skipped > before.skipped
    })
    .await?;
    let after = wait_figures(&cluster, "heartbeat scans after the pause", |f| {
        f.scans >= skipped.scans + 3
    })
    .await?;
    ensure!(
        after.declared_dead == before.declared_dead,
        "DataNodes declared dead after the pause: before {before:?}, after {after:?}\n{}",
        cluster.log_tail("nn.log")
    );
    ensure!(
        after.registrations == before.registrations,
        "DataNodes registered again after the pause: before {before:?}, after {after:?}"
    );
    ensure!(
        after.live == 3 && after.dead == 0 && after.missing == 0,
        "after the pause: {after:?}"
    );
    let nn_log = cluster.log("nn.log");
    ensure!(
        nn_log.contains("Skipping next heartbeat scan due to excessive pause"),
        "no pause warning in the NameNode log:\n{}",
        cluster.log_tail("nn.log")
    );
    // No DataNode lost its session (a failed heartbeat ends it, and it registers again).
    for (i, start) in dn_logs.iter().enumerate() {
        let log = cluster.log(&format!("dn{i}.log"));
        let since = log.get(*start..).unwrap_or_default();
        ensure!(
            !since.contains("NameNode session ended"),
            "dn{i} lost its NameNode session:\n{since}"
        );
    }
    println!("NameNode figures before the pause {before:?}, after {after:?}");
    cluster.fsck().await?;
    for (path, data) in &files {
        let got = read_file(&fs, path).await?;
        ensure!(got == *data, "{path}: content differs after the pause");
    }
    with_timeout("delete", fs.delete("/pause", true)).await?;
    fs.close().await;
    cluster.kill_namenode()?;
    Ok(())
}
