//! DataNode processes killed (SIGKILL) and paused (SIGSTOP) one at a time, finalized
//! replicas of acknowledged files corrupted on a DataNode's disk (a byte of the block file
//! flipped under it) or lost from it (block and meta file removed), and the NameNode killed
//! once, while clients write and read: every file whose close was acknowledged reads back
//! byte for byte, during the faults and after; a write that fails fails with an error within
//! its time limit, never a hang; and once every process is back the namespace is HEALTHY with
//! no block under-replicated or corrupt, every corrupted replica is gone from its disk or
//! replaced by a good copy (found by a reader or by the block scanner, whose period the test
//! shortens), and the disks hold what the NameNode counts: each block of an acknowledged file
//! has exactly three finalized replicas on the DataNodes' disks, at its generation stamp (a
//! lost replica is found by a reader or by the directory scan, also shortened), and no
//! finalized replica is left of a block no file has. A read during the faults may fail (a
//! file whose pipeline lost a node has fewer copies until they are restored) but never
//! returns wrong bytes.
//!
//! Real processes (`common::procs`): `rhdfs namenode` and five `rhdfs datanode`s, replication
//! 3, 1 MiB blocks; clients in this process. `RHDFS_CHAOS_SEED` sets the seed (printed on
//! failure) so a failing schedule replays; `RHDFS_CHAOS_LOG` the daemons' RUST_LOG.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, ensure};

use rhdfs_client::FileSystem;
use rhdfs_datanode::meta;

use crate::common::ha_load::Rng;
use crate::common::procs::{
    Cluster, ClusterOptions, ReplicaFiles, finalized_replica_files, jmx_number, read_file, signal,
    wait_for, write_file,
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

/// The finalized replicas under DataNode directory `dir` of `eligible` blocks.
fn eligible_replicas(dir: &Path, eligible: &BTreeSet<u64>) -> anyhow::Result<Vec<ReplicaFiles>> {
    let mut all = finalized_replica_files(&[dir.to_path_buf()])?;
    all.retain(|r| eligible.contains(&r.id));
    Ok(all)
}

/// A disk fault: damages a finalized replica of DataNode directory `dir`, chosen by `pick`
/// among those of `eligible` blocks; its block id, or `None` when there is none (or it went
/// before the fault reached it).
type DiskFault = fn(&Path, &BTreeSet<u64>, &mut Rng) -> anyhow::Result<Option<u64>>;

/// The corrupt fault: flips one byte of a non-empty replica's block file.
fn corrupt_a_replica(
    dir: &Path,
    eligible: &BTreeSet<u64>,
    pick: &mut Rng,
) -> anyhow::Result<Option<u64>> {
    use std::os::unix::fs::FileExt;
    let files: Vec<(ReplicaFiles, u64)> = eligible_replicas(dir, eligible)?
        .into_iter()
        .filter_map(|r| {
            let len = std::fs::metadata(&r.block).ok()?.len();
            (len > 0).then_some((r, len))
        })
        .collect();
    if files.is_empty() {
        return Ok(None);
    }
    let (r, len) = &files[pick.below(files.len() as u64) as usize];
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&r.block)
    {
        Ok(f) => f,
        // Deleted since the walk.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("opening {}", r.block.display())),
    };
    let at = pick.below(*len);
    let mut b = [0u8; 1];
    file.read_exact_at(&mut b, at)?;
    file.write_all_at(&[!b[0]], at)?;
    Ok(Some(r.id))
}

/// The lose fault: removes a replica's block and meta file (a disk that lost them).
fn lose_a_replica(
    dir: &Path,
    eligible: &BTreeSet<u64>,
    pick: &mut Rng,
) -> anyhow::Result<Option<u64>> {
    let files = eligible_replicas(dir, eligible)?;
    if files.is_empty() {
        return Ok(None);
    }
    let r = &files[pick.below(files.len() as u64) as usize];
    if let Some(meta) = &r.meta {
        let _ = std::fs::remove_file(meta);
    }
    match std::fs::remove_file(&r.block) {
        Ok(()) => Ok(Some(r.id)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("removing {}", r.block.display())),
    }
}

/// Whether block `id`'s finalized replica under DataNode directory `dir`, if there is one,
/// agrees with the CRCs of its meta file.
fn replica_is_good_or_gone(dir: &Path, id: u64) -> anyhow::Result<bool> {
    let Some(r) = eligible_replicas(dir, &BTreeSet::from([id]))?.pop() else {
        return Ok(true);
    };
    let (Ok(data), Some(Ok(sums))) = (std::fs::read(&r.block), r.meta.as_ref().map(std::fs::read))
    else {
        // Gone between the walk and the read.
        return Ok(!r.block.exists());
    };
    let spec = meta::decode_header(&sums).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(spec
        .verify(&data, &sums[meta::META_HEADER_LEN as usize..])
        .is_ok())
}

/// The blocks a disk fault may hit: those of files whose close was acknowledged (a block of
/// a file left open by a failed write is not COMPLETE, so the NameNode replaces none of its
/// replicas until the file is recovered, as Hadoop's does), none hit already (so every block
/// keeps good replicas).
async fn eligible_blocks(
    fs: &FileSystem,
    acked: &Mutex<Vec<Acked>>,
    corrupted: &[(usize, u64)],
    lost: &[(usize, u64)],
) -> anyhow::Result<BTreeSet<u64>> {
    let files = lock(acked).clone();
    let mut ids = BTreeSet::new();
    for f in &files {
        // A NameNode still starting after its kill answers with an error: no fault then.
        match fs.block_locations(&f.path).await {
            Ok(bs) => ids.extend(bs.iter().map(|b| b.block_id)),
            Err(_) => return Ok(BTreeSet::new()),
        }
    }
    for (_, id) in corrupted.iter().chain(lost) {
        ids.remove(id);
    }
    Ok(ids)
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
                // Every finalized replica is checked against its CRCs every 20 s, so a
                // corrupted one no reader happens on is found before the end.
                "dfs.datanode.scan.period.hours=20s",
                "dfs.block.scanner.volume.bytes.per.second=64m",
                // A replica lost from a disk nobody reads is found within 10 s.
                "dfs.datanode.directoryscan.interval=10s",
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
    // Replicas corrupted: (DataNode, block id).
    let mut corrupted: Vec<(usize, u64)> = Vec::new();
    // Replicas removed from a disk: (DataNode, block id).
    let mut lost: Vec<(usize, u64)> = Vec::new();
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
            match r.below(4) {
                0 => {
                    cluster.kill_datanode(dn)?;
                    tokio::time::sleep(ms(&mut r, 200, 2000)).await;
                    cluster.start_datanode(dn)?;
                }
                1 => {
                    signal(pid, "STOP")?;
                    tokio::time::sleep(ms(&mut r, 1000, 7000)).await;
                    signal(pid, "CONT")?;
                }
                k => {
                    let fault: DiskFault = if k == 2 {
                        lose_a_replica
                    } else {
                        corrupt_a_replica
                    };
                    let dir = cluster.data_dir(dn);
                    let eligible = eligible_blocks(&fs, &acked, &corrupted, &lost).await?;
                    let mut pick = Rng::new(r.next());
                    let hit =
                        tokio::task::spawn_blocking(move || fault(&dir, &eligible, &mut pick))
                            .await??;
                    if let Some(id) = hit {
                        if k == 2 { &mut lost } else { &mut corrupted }.push((dn, id));
                    }
                    tokio::time::sleep(ms(&mut r, 200, 2000)).await;
                }
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

    // Every process back: the NameNode restores full replication, every corrupted replica
    // is found and replaced, and fsck finds the namespace healthy.
    cluster.wait_datanodes_live().await?;
    let state = std::cell::RefCell::new(String::new());
    let restored = wait_for(
        "no block under-replicated or corrupt, no corrupted replica left on a disk",
        Duration::from_secs(120),
        || async {
            let fsn = cluster.jmx(STATE_BEAN).await?;
            let under = jmx_number(&fsn, "UnderReplicatedBlocks").context("no count")?;
            let missing = jmx_number(&fsn, "MissingBlocks").context("no count")?;
            let corrupt = jmx_number(&fsn, "CorruptBlocks").context("no count")?;
            ensure!(missing == 0, "{missing} blocks missing\n{fsn}");
            let mut left = Vec::new();
            for &(dn, id) in &corrupted {
                let dir = cluster.data_dir(dn);
                if !tokio::task::spawn_blocking(move || replica_is_good_or_gone(&dir, id)).await?? {
                    left.push(format!("blk_{id} on DataNode {dn}"));
                }
            }
            *state.borrow_mut() = format!(
                "{fsn}\ncorrupted replicas still on their disks: {left:?} (of {corrupted:?})"
            );
            Ok(under == 0 && corrupt == 0 && left.is_empty())
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
    // The disks hold what the NameNode counts: three finalized replicas of each block of an
    // acknowledged file, at its generation stamp (a surplus one may still be going).
    let mut want: BTreeMap<u64, u64> = BTreeMap::new();
    for f in &acked {
        for b in fs.block_locations(&f.path).await? {
            want.insert(b.block_id, b.generation_stamp);
        }
    }
    // And no finalized replica is left of a block no file has (an abandoned block, a
    // deleted one): the blocks of every file, those still open after a failed write too.
    let mut known: BTreeSet<u64> = want.keys().copied().collect();
    for st in fs.list_status("/chaos").await? {
        // An open file's last block is the located blocks' `last_block`.
        let lbs = fs.located_blocks(&st.path, 0, i64::MAX as u64).await?;
        known.extend(
            lbs.blocks
                .iter()
                .chain(&lbs.last_block)
                .map(|b| b.b.block_id),
        );
    }
    let odd = std::cell::RefCell::new(Vec::new());
    let on_disk = wait_for(
        "three finalized replicas of every block on the disks, none of a block no file has",
        Duration::from_secs(60),
        || async {
            let disk = cluster.disk_replicas().await?;
            let mut o = Vec::new();
            for (id, gs) in &want {
                let reps = disk.get(id).map_or(&[][..], Vec::as_slice);
                if reps.len() != 3 || reps.iter().any(|g| g != gs) {
                    o.push(format!("blk_{id}_{gs}: {reps:?}"));
                }
            }
            for (id, reps) in &disk {
                if !known.contains(id) {
                    o.push(format!("blk_{id} of no file: {reps:?}"));
                }
            }
            let done = o.is_empty();
            *odd.borrow_mut() = o;
            Ok(done)
        },
    )
    .await;
    on_disk.with_context(|| {
        format!(
            "finalized replicas on disk that are not three at the NameNode's stamp, or of no \
             file: {:?}; replicas lost {lost:?}, corrupted {corrupted:?}",
            odd.borrow()
        )
    })?;
    for f in &acked {
        let bytes = read_file(&fs, &f.path).await?;
        ensure!(
            bytes == contents(f.writer, f.n, f.len),
            "{} differs after the faults",
            f.path
        );
    }
    eprintln!(
        "datanode_chaos: seed {seed}, {} files acknowledged and read back, {} reads during the faults, replicas corrupted and replaced: {corrupted:?}, lost and restored: {lost:?}; failed writes: {:?}",
        acked.len(),
        good_reads.load(Ordering::Relaxed),
        lock(&failed_writes)
    );
    Ok(())
}

/// The helpers the faults and the end check rest on: a flipped byte is seen as corrupt, a
/// good or absent replica is not, only finalized replicas of eligible blocks are picked, and
/// a lost replica loses its meta file too.
#[test]
fn a_corrupted_replica_is_told_from_a_good_one() -> anyhow::Result<()> {
    use rhdfs_datanode::ChecksumSpec;
    let dn = tempfile::tempdir()?;
    let dir = dn
        .path()
        .join("current/BP-1/current/finalized/subdir0/subdir0");
    let rbw = dn.path().join("current/BP-1/current/rbw");
    std::fs::create_dir_all(&dir)?;
    std::fs::create_dir_all(&rbw)?;
    let data: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    let spec = ChecksumSpec::default();
    let mut sums = meta::encode_header(&spec).to_vec();
    sums.extend(spec.compute(&data));
    std::fs::write(dir.join(meta::block_file_name(7)), &data)?;
    std::fs::write(dir.join(meta::meta_file_name(7, 1001)), &sums)?;
    std::fs::write(rbw.join(meta::block_file_name(8)), &data)?;
    assert!(replica_is_good_or_gone(dn.path(), 7)?);
    assert!(
        replica_is_good_or_gone(dn.path(), 9)?,
        "no replica: nothing left"
    );
    // Block 8 is not finalized: only 7 can be picked, and only while it is eligible.
    let mut rng = Rng::new(5);
    assert_eq!(
        corrupt_a_replica(dn.path(), &BTreeSet::from([7, 8]), &mut rng)?,
        Some(7)
    );
    assert!(!replica_is_good_or_gone(dn.path(), 7)?);
    assert_eq!(
        corrupt_a_replica(dn.path(), &BTreeSet::from([8]), &mut rng)?,
        None
    );
    // A lost replica takes its meta file with it; one not eligible is not picked.
    assert_eq!(lose_a_replica(dn.path(), &BTreeSet::new(), &mut rng)?, None);
    assert_eq!(
        lose_a_replica(dn.path(), &BTreeSet::from([7]), &mut rng)?,
        Some(7)
    );
    assert_eq!(std::fs::read_dir(&dir)?.count(), 0);
    assert!(replica_is_good_or_gone(dn.path(), 7)?);
    Ok(())
}
