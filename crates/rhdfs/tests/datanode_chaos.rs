//! DataNode processes killed (SIGKILL) and paused (SIGSTOP) one at a time, and the NameNode
//! killed once, while clients write and read: every file whose close was acknowledged reads
//! back byte for byte, during the faults and after; a write that fails fails with an error
//! within its time limit, never a hang; and once every process is back the namespace is
//! HEALTHY with no block under-replicated. A read during the faults may fail (a file whose
//! pipeline lost a node has fewer copies until they are restored) but never returns wrong
//! bytes.
//!
//! Real processes (`common::procs`): `rhdfs namenode` and five `rhdfs datanode`s, replication
//! 3, 1 MiB blocks; clients in this process. `RHDFS_CHAOS_SEED` sets the seed (printed on
//! failure) so a failing schedule replays; `RHDFS_CHAOS_LOG` the daemons' RUST_LOG.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, ensure};

use crate::common::ha_load::Rng;
use crate::common::procs::{
    Cluster, ClusterOptions, jmx_number, read_file, signal, wait_for, write_file,
};

const DATANODES: usize = 5;
const WRITERS: u64 = 2;
/// Faults injected, one after another.
const FAULTS: usize = 10;
const STATE_BEAN: &str = "Hadoop:service=NameNode,name=FSNamesystem";

/// The bytes of file `(writer, n)`: regenerated to check a read instead of kept.
fn contents(writer: u64, n: u64, len: usize) -> Vec<u8> {
    let mut r = Rng::new((writer << 32) ^ n ^ 0x9E37_79B9);
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        v.extend_from_slice(&r.next().to_le_bytes());
    }
    v.truncate(len);
    v
}

/// The list, whether or not a task panicked holding it (the test fails then anyway).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A file whose close was acknowledged.
#[derive(Clone, Debug)]
struct Acked {
    path: String,
    writer: u64,
    n: u64,
    len: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_and_paused_datanodes_lose_no_acknowledged_file() -> anyhow::Result<()> {
    let seed = std::env::var("RHDFS_CHAOS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    let tmp = tempfile::tempdir()?;
    match run(seed, tmp.path()).await {
        Ok(()) => Ok(()),
        Err(e) => {
            // The daemons' logs stay for whoever looks into the failure.
            let kept = tmp.keep();
            Err(e.context(format!(
                "RHDFS_CHAOS_SEED={seed}; logs kept in {}",
                kept.display()
            )))
        }
    }
}

async fn run(seed: u64, dir: &std::path::Path) -> anyhow::Result<()> {
    let mut cluster = Cluster::start_with(
        dir,
        ClusterOptions {
            datanodes: DATANODES,
            conf: [
                "dfs.replication=3",
                "dfs.blocksize=1048576",
                // A paused DataNode is given up on by its writers and readers after 5 s.
                "dfs.client.socket-timeout=5000",
                "dfs.namenode.redundancy.interval.seconds=1",
                // A copy whose target is paused longer than the transfer's timeout is lost
                // without the NameNode being told (Hadoop's DataNodes do not report failed
                // transfers either); it is scheduled again after this instead of Hadoop's
                // 5 minutes. The other lost copies this test found are fixed (README); with
                // those fixes 15 runs in a row passed without this setting.
                "dfs.namenode.reconstruction.pending.timeout-sec=30",
                // Clients wait out the NameNode's restart.
                "ipc.client.connect.max.retries=100",
                "ipc.client.connect.retry.interval=100",
            ]
            .map(String::from)
            .to_vec(),
            // The daemons' logs are kept when the test fails: RHDFS_CHAOS_LOG=info makes
            // them tell the whole story.
            log: std::env::var("RHDFS_CHAOS_LOG").unwrap_or_else(|_| "warn".into()),
            ..ClusterOptions::default()
        },
    )?;
    // Out of safe mode with /chaos made and every DataNode live.
    let fs = Arc::new(cluster.client_out_of_safe_mode("/chaos").await?);

    let stop = Arc::new(AtomicBool::new(false));
    let acked: Arc<Mutex<Vec<Acked>>> = Arc::default();
    // Why writes failed, by the start of the message (reported, not asserted: each kind has
    // a cause in the faults, e.g. SafeModeException while the restarted NameNode waits for
    // reports).
    let failed_writes: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let good_reads = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let (fs, stop, acked, failed) = (
            Arc::clone(&fs),
            Arc::clone(&stop),
            Arc::clone(&acked),
            Arc::clone(&failed_writes),
        );
        tasks.push(tokio::spawn(async move {
            let mut r = Rng::new(seed ^ (w + 1));
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let len = r.below(3 << 20) as usize;
                let path = format!("/chaos/w{w}-{n}");
                // write_file bounds each step (30 s): a failure is an error, not a hang.
                match write_file(&fs, &path, &contents(w, n, len)).await {
                    Ok(()) => lock(&acked).push(Acked {
                        path,
                        writer: w,
                        n,
                        len,
                    }),
                    Err(e) => {
                        let msg = format!("{e:#}");
                        let step = msg.split(':').next().unwrap_or_default();
                        let why = match msg.contains("safe mode") {
                            true => format!("{step}: the NameNode is in safe mode"),
                            false => msg.chars().take(100).collect(),
                        };
                        *lock(&failed).entry(why).or_default() += 1;
                        // As an application would, not hammering a NameNode that said no.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
            anyhow::Ok(())
        }));
    }
    {
        let (fs, stop, acked, good) = (
            Arc::clone(&fs),
            Arc::clone(&stop),
            Arc::clone(&acked),
            Arc::clone(&good_reads),
        );
        tasks.push(tokio::spawn(async move {
            let mut r = Rng::new(seed ^ 0xABCD);
            while !stop.load(Ordering::Relaxed) {
                let pick = {
                    let a = lock(&acked);
                    (!a.is_empty()).then(|| a[r.below(a.len() as u64) as usize].clone())
                };
                let Some(f) = pick else {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                };
                if let Ok(bytes) = read_file(&fs, &f.path).await {
                    ensure!(
                        bytes == contents(f.writer, f.n, f.len),
                        "{} read back {} bytes that differ from the {} written",
                        f.path,
                        bytes.len(),
                        f.len
                    );
                    good.fetch_add(1, Ordering::Relaxed);
                }
            }
            anyhow::Ok(())
        }));
    }

    // The faults, one at a time; the NameNode's kill comes at a random turn.
    let mut r = Rng::new(seed);
    let nn_turn = r.below(FAULTS as u64) as usize;
    let ms = |r: &mut Rng, lo: u64, hi: u64| Duration::from_millis(lo + r.below(hi - lo));
    for turn in 0..FAULTS {
        let before = lock(&acked).len();
        if turn == nn_turn {
            cluster.kill_namenode()?;
            tokio::time::sleep(ms(&mut r, 200, 1500)).await;
            cluster.start_namenode()?;
        } else {
            let dn = r.below(DATANODES as u64) as usize;
            let pid = cluster
                .datanode_pid(dn)
                .with_context(|| format!("DataNode {dn} is not running"))?;
            if r.below(2) == 0 {
                cluster.kill_datanode(dn)?;
                tokio::time::sleep(ms(&mut r, 200, 2000)).await;
                cluster.start_datanode(dn)?;
            } else {
                signal(pid, "STOP")?;
                tokio::time::sleep(ms(&mut r, 1000, 7000)).await;
                signal(pid, "CONT")?;
            }
        }
        // Writes go on between faults: at least one more file is acknowledged.
        wait_for(
            "a write acknowledged after the fault",
            Duration::from_secs(90),
            || {
                let now = lock(&acked).len();
                async move { Ok(now > before) }
            },
        )
        .await
        .with_context(|| cluster.log_tail("nn.log"))?;
    }
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await??;
    }
    let acked = lock(&acked).clone();
    ensure!(good_reads.load(Ordering::Relaxed) > 0, "no read succeeded");

    // Every process back: the NameNode restores full replication and fsck finds it healthy.
    cluster.wait_datanodes_live().await?;
    let state = std::cell::RefCell::new(String::new());
    let restored = wait_for(
        "no block under-replicated",
        Duration::from_secs(120),
        || async {
            let fsn = cluster.jmx(STATE_BEAN).await?;
            let under = jmx_number(&fsn, "UnderReplicatedBlocks").context("no count")?;
            let missing = jmx_number(&fsn, "MissingBlocks").context("no count")?;
            ensure!(missing == 0, "{missing} blocks missing\n{fsn}");
            *state.borrow_mut() = fsn;
            Ok(under == 0)
        },
    )
    .await;
    if let Err(e) = restored {
        let blocks = cluster
            .admin(&[
                "fsck",
                "/",
                "-files",
                "-blocks",
                "-locations",
                "-openforwrite",
            ])
            .await
            .unwrap_or_else(|e| format!("{e:#}"));
        let odd: Vec<&str> = blocks
            .lines()
            .filter(|l| l.contains("nder replicated") || l.contains("OPENFORWRITE"))
            .collect();
        return Err(e.context(format!(
            "{}\n{}\nfailed writes: {:?}",
            odd.join("\n"),
            state.borrow(),
            lock(&failed_writes)
        )));
    }
    cluster.fsck().await?;
    for f in &acked {
        let bytes = read_file(&fs, &f.path).await?;
        ensure!(
            bytes == contents(f.writer, f.n, f.len),
            "{} differs after the faults",
            f.path
        );
    }
    eprintln!(
        "datanode_chaos: seed {seed}, {} files acknowledged and read back, {} reads during the faults; failed writes: {:?}",
        acked.len(),
        good_reads.load(Ordering::Relaxed),
        lock(&failed_writes)
    );
    Ok(())
}
