//! Issue 4, item 1: a NameNode process under concurrent load (creates with small writes,
//! appends, renames, deletes, mkdirs) is killed with SIGKILL at random moments; after each
//! restart every acknowledged operation is visible with exact lengths and contents, nothing
//! unacknowledged is half-applied, a walk of the namespace reads every file back, and
//! `rhdfs fsck /` finds the namespace HEALTHY (no missing or corrupt blocks), and the blocks map
//! holds exactly the namespace's blocks with none missing and no replica from the future. After the
//! last restart, once pending deletions have drained, the finalized replicas on the
//! DataNodes' disks are exactly the blocks of the namespace's files: every block belongs
//! to a file and every file's blocks exist, with the namespace's generation stamps.
//!
//! Real processes (`common::procs`): `rhdfs namenode` and three `rhdfs datanode`s, configured
//! with `-D`.
//! `RHDFS_CRASH_ROUNDS` (default 20) sets the number of kills; `RHDFS_CRASH_SEED` the seed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use rhdfs_client::FileSystem;

use crate::common::ha_load::Rng;
use crate::common::procs::{Cluster, jmx_number, read_file, with_timeout, write_file};

const WORKERS: usize = 4;
const ROOT: &str = "/crash";

/// An operation whose answer the client has not seen yet.
#[derive(Debug, Clone)]
enum Op {
    Create { path: String, data: Vec<u8> },
    Append { path: String, new: Vec<u8> },
    Rename { src: String, dst: String },
    Delete { path: String },
    Mkdir { path: String },
}

/// What one worker knows the NameNode acknowledged, and its one in-flight operation.
#[derive(Debug, Default)]
struct Model {
    files: BTreeMap<String, Vec<u8>>,
    dirs: BTreeSet<String>,
    in_flight: Option<Op>,
    next: u64,
}

/// Issue 11, test 5: after a restart the blocks map holds exactly the namespace's blocks
/// (no block without a file), none is missing once every DataNode has reported (no file
/// block without its replicas, open files included), and no DataNode holds a replica
/// from the future (which only a lost acknowledged operation would leave).
async fn check_blocks_map_matches_namespace(cluster: &Cluster) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let consistency = cluster
            .jmx("rhdfs:service=NameNode,name=BlockConsistency")
            .await?;
        let fsn = cluster
            .jmx("Hadoop:service=NameNode,name=FSNamesystem")
            .await?;
        let num = |doc: &str, attr: &str| {
            jmx_number(doc, attr).with_context(|| format!("no {attr} in\n{doc}"))
        };
        let namespace = num(&consistency, "NamespaceBlocks")?;
        let map = num(&consistency, "BlocksMapBlocks")?;
        let pending = num(&consistency, "PendingRemovalBlocks")?;
        let future = num(&consistency, "ReplicasInFuture")?;
        let missing = num(&fsn, "MissingBlocks")?;
        ensure!(
            future == 0,
            "{future} replicas from the future\n{consistency}"
        );
        if map == namespace && pending == 0 && missing == 0 {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "blocks map {map} (pending removal {pending}) vs namespace {namespace} blocks, \
             {missing} missing, after 60 s\n{}",
            cluster.log_tail("nn.log")
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Issue 4: once deletions have drained, the blocks on the DataNodes' disks are
/// exactly those of the namespace's files, with their generation stamps. Polls a
/// while, as DataNodes delete replicas asynchronously after their heartbeat.
async fn check_disks_match_namespace(cluster: &Cluster) -> anyhow::Result<usize> {
    cluster.wait_pending_deletions_drained().await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let want = cluster.namespace_blocks().await?;
        let have = cluster.disk_replicas().await?;
        let orphans: Vec<u64> = have
            .keys()
            .filter(|id| !want.contains_key(id))
            .copied()
            .collect();
        let lost: Vec<u64> = want
            .keys()
            .filter(|id| !have.contains_key(id))
            .copied()
            .collect();
        let stale: Vec<(u64, u64, Vec<u64>)> = want
            .iter()
            .filter_map(|(id, gs)| {
                let on_disk = have.get(id)?;
                on_disk
                    .iter()
                    .any(|g| g != gs)
                    .then(|| (*id, *gs, on_disk.clone()))
            })
            .collect();
        if orphans.is_empty() && lost.is_empty() && stale.is_empty() {
            return Ok(want.len());
        }
        ensure!(
            Instant::now() < deadline,
            "DataNode disks and namespace disagree after 60 s: blocks of no file {orphans:?}, \
             blocks missing from every disk {lost:?}, (id, namespace gs, replica gs) \
             with stale replicas {stale:?}\n{}",
            cluster.log_tail("nn.log")
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn append_file(fs: &FileSystem, path: &str, data: &[u8]) -> anyhow::Result<()> {
    let mut w = with_timeout("append", fs.append(path)).await?;
    with_timeout("write", w.write(data)).await?;
    with_timeout("close", w.close()).await
}

/// One worker's load: random operations under its own directory until aborted.
async fn worker(
    fs: FileSystem,
    base: String,
    model: Arc<Mutex<Model>>,
    mut rng: Rng,
    killed: Arc<AtomicBool>,
    errors: Arc<Mutex<Vec<String>>>,
) {
    for _ in 0..100_000 {
        let op = {
            let mut m = model.lock().expect("model lock");
            m.next += 1;
            let n = m.next;
            let files: Vec<(String, usize)> =
                m.files.iter().map(|(k, v)| (k.clone(), v.len())).collect();
            let pick = |rng: &mut Rng| files[rng.below(files.len() as u64) as usize].clone();
            let op = match rng.below(10) {
                0..=3 => {
                    let mut parents: Vec<&String> = m.dirs.iter().collect();
                    parents.push(&base);
                    let parent = parents[rng.below(parents.len() as u64) as usize];
                    let len = 1 + rng.below(3000) as usize;
                    Op::Create {
                        path: format!("{parent}/f{n}"),
                        data: rng.bytes(len),
                    }
                }
                4 | 5 if !files.is_empty() => {
                    let (path, len) = pick(&mut rng);
                    if len > 20_000 {
                        Op::Delete { path }
                    } else {
                        let mut new = m.files[&path].clone();
                        let add = 1 + rng.below(1500) as usize;
                        new.extend(rng.bytes(add));
                        Op::Append { path, new }
                    }
                }
                6 | 7 if !files.is_empty() => {
                    let (src, _) = pick(&mut rng);
                    let parent = src.rsplit_once('/').map_or(base.as_str(), |p| p.0);
                    Op::Rename {
                        dst: format!("{parent}/r{n}"),
                        src,
                    }
                }
                8 if !files.is_empty() => Op::Delete {
                    path: pick(&mut rng).0,
                },
                _ => Op::Mkdir {
                    path: format!("{base}/d{n}"),
                },
            };
            m.in_flight = Some(op.clone());
            op
        };
        let res: anyhow::Result<()> =
            match &op {
                Op::Create { path, data } => write_file(&fs, path, data).await,
                Op::Append { path, new } => {
                    let old = model.lock().expect("model lock").files[path].len();
                    append_file(&fs, path, &new[old..]).await
                }
                Op::Rename { src, dst } => with_timeout("rename", fs.rename(src, dst))
                    .await
                    .and_then(|ok| {
                        if ok {
                            Ok(())
                        } else {
                            bail!("rename returned false")
                        }
                    }),
                Op::Delete { path } => with_timeout("delete", fs.delete(path, false))
                    .await
                    .and_then(|ok| {
                        if ok {
                            Ok(())
                        } else {
                            bail!("delete returned false")
                        }
                    }),
                Op::Mkdir { path } => with_timeout("mkdirs", fs.mkdirs(path, None))
                    .await
                    .map(|_| ()),
            };
        if let Err(e) = res {
            // The kill makes every in-flight call fail; an error before it is a bug.
            if !killed.load(Ordering::SeqCst) {
                errors
                    .lock()
                    .expect("errors lock")
                    .push(format!("{op:?}: {e:#}"));
            }
            return; // the operation stays in flight (unknown)
        }
        let mut m = model.lock().expect("model lock");
        m.in_flight = None;
        match op {
            Op::Create { path, data } => {
                m.files.insert(path, data);
            }
            Op::Append { path, new } => {
                m.files.insert(path, new);
            }
            Op::Rename { src, dst } => {
                if let Some(d) = m.files.remove(&src) {
                    m.files.insert(dst, d);
                }
            }
            Op::Delete { path } => {
                m.files.remove(&path);
            }
            Op::Mkdir { path } => {
                m.dirs.insert(path);
            }
        }
    }
}

/// Decides each in-flight operation from what the restarted NameNode shows, checking that
/// it is either wholly applied or not at all; files an interrupted write left open are
/// deleted (their content is not acknowledged).
async fn resolve_in_flight(fs: &FileSystem, m: &mut Model) -> anyhow::Result<()> {
    let Some(op) = m.in_flight.take() else {
        return Ok(());
    };
    let info = |p: String| async move { with_timeout("getFileInfo", fs.get_file_info(&p)).await };
    match op {
        Op::Create { path, data } => {
            if let Some(st) = info(path.clone()).await? {
                ensure!(!st.is_dir, "{path}: an interrupted create left a directory");
                ensure!(
                    st.length <= data.len() as u64,
                    "{path}: {} bytes after an interrupted create of {}",
                    st.length,
                    data.len()
                );
                with_timeout("delete", fs.delete(&path, false)).await?;
            }
        }
        Op::Append { path, new } => {
            let st = info(path.clone())
                .await?
                .with_context(|| format!("{path}: an interrupted append removed the file"))?;
            ensure!(
                st.length <= new.len() as u64,
                "{path}: {} bytes after an interrupted append to {}",
                st.length,
                new.len()
            );
            with_timeout("delete", fs.delete(&path, false)).await?;
            m.files.remove(&path);
        }
        Op::Rename { src, dst } => {
            let s = info(src.clone()).await?.is_some();
            let d = info(dst.clone()).await?.is_some();
            ensure!(
                s != d,
                "interrupted rename {src} -> {dst}: src exists {s}, dst exists {d}"
            );
            if d && let Some(data) = m.files.remove(&src) {
                m.files.insert(dst, data);
            }
        }
        Op::Delete { path } => {
            if info(path.clone()).await?.is_none() {
                m.files.remove(&path);
            }
        }
        Op::Mkdir { path } => {
            if let Some(st) = info(path.clone()).await? {
                ensure!(st.is_dir, "{path}: mkdirs left a file");
                m.dirs.insert(path);
            }
        }
    }
    Ok(())
}

/// Walks `dir`, collecting every file and directory below it.
async fn walk(
    fs: &FileSystem,
    dir: &str,
    files: &mut BTreeMap<String, u64>,
    dirs: &mut BTreeSet<String>,
) -> anyhow::Result<()> {
    let mut stack = vec![dir.to_string()];
    let mut budget = 1_000_000usize;
    while let Some(d) = stack.pop() {
        for st in with_timeout("listStatus", fs.list_status(&d)).await? {
            budget = budget
                .checked_sub(1)
                .context("namespace walk did not end")?;
            if st.is_dir {
                dirs.insert(st.path.clone());
                stack.push(st.path);
            } else {
                files.insert(st.path, st.length);
            }
        }
    }
    Ok(())
}

/// Checks the restarted namespace against the models; returns how many operations were in
/// flight at the kill.
async fn verify(fs: &FileSystem, models: &[Arc<Mutex<Model>>]) -> anyhow::Result<usize> {
    let mut unknown = 0;
    let mut want_files = BTreeMap::new();
    let mut want_dirs = BTreeSet::new();
    for (w, model) in models.iter().enumerate() {
        let mut m = std::mem::take(&mut *model.lock().expect("model lock"));
        unknown += usize::from(m.in_flight.is_some());
        let res = resolve_in_flight(fs, &mut m).await;
        want_dirs.insert(format!("{ROOT}/w{w}"));
        want_dirs.extend(m.dirs.iter().cloned());
        want_files.extend(m.files.iter().map(|(k, v)| (k.clone(), v.clone())));
        *model.lock().expect("model lock") = m;
        res?;
    }
    let mut files = BTreeMap::new();
    let mut dirs = BTreeSet::new();
    walk(fs, ROOT, &mut files, &mut dirs).await?;
    ensure!(
        dirs == want_dirs,
        "directories: have {dirs:?}, want {want_dirs:?}"
    );
    let have: BTreeSet<&String> = files.keys().collect();
    let want: BTreeSet<&String> = want_files.keys().collect();
    ensure!(
        have == want,
        "files: unexpected {:?}, missing {:?}",
        have.difference(&want).collect::<Vec<_>>(),
        want.difference(&have).collect::<Vec<_>>()
    );
    for (path, data) in &want_files {
        ensure!(
            files[path] == data.len() as u64,
            "{path}: length {} after restart, acknowledged {}",
            files[path],
            data.len()
        );
        let got = read_file(fs, path).await?;
        ensure!(
            got == *data,
            "{path}: content differs after restart ({} bytes read)",
            got.len()
        );
    }
    Ok(unknown)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namenode_survives_sigkill_loop() -> anyhow::Result<()> {
    let rounds: usize = std::env::var("RHDFS_CRASH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let seed: u64 = std::env::var("RHDFS_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(rand_seed);
    println!("crash loop: seed {seed} (RHDFS_CRASH_SEED), {rounds} rounds");
    let mut rng = Rng::new(seed);
    let tmp = tempfile::tempdir()?;
    let mut cluster = Cluster::start(tmp.path())?;
    let started = Instant::now();

    let fs = cluster.client_out_of_safe_mode("/probe/start").await?;
    let models: Vec<Arc<Mutex<Model>>> = (0..WORKERS)
        .map(|_| Arc::new(Mutex::new(Model::default())))
        .collect();
    for w in 0..WORKERS {
        with_timeout("mkdirs", fs.mkdirs(&format!("{ROOT}/w{w}"), None)).await?;
    }
    // DataNodes must be registered before writes can get a pipeline.
    let deadline = Instant::now() + Duration::from_secs(60);
    for attempt in 0.. {
        let probe = format!("/probe/first{attempt}");
        match write_file(&fs, &probe, b"x").await {
            Ok(()) => break,
            Err(e) if Instant::now() > deadline => {
                return Err(e.context(format!(
                    "no DataNode took a write\nnn.log:\n{}\ndn0.log:\n{}",
                    cluster.log_tail("nn.log"),
                    cluster.log_tail("dn0.log")
                )));
            }
            Err(_) => {
                // The failed attempt left its file open (created, no block); the final check
                // wants no open file, so it goes (best effort) rather than waiting out its lease.
                let _ = with_timeout("delete", fs.delete(&probe, false)).await;
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }
    }
    fs.close().await;

    for round in 0..rounds {
        let t = Instant::now();
        let killed = Arc::new(AtomicBool::new(false));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for (w, model) in models.iter().enumerate() {
            let fs = cluster.connect().await?;
            tasks.push(tokio::spawn(worker(
                fs,
                format!("{ROOT}/w{w}"),
                Arc::clone(model),
                Rng::new(rng.next()),
                Arc::clone(&killed),
                Arc::clone(&errors),
            )));
        }
        let load = Duration::from_millis(300 + rng.below(1200));
        tokio::time::sleep(load).await;
        killed.store(true, Ordering::SeqCst);
        cluster.kill_namenode()?;
        for t in &tasks {
            t.abort();
        }
        for t in tasks {
            let _ = t.await;
        }
        let errs = std::mem::take(&mut *errors.lock().expect("errors lock"));
        ensure!(
            errs.is_empty(),
            "round {round} (seed {seed}): operations failed before the kill: {errs:#?}\n{}",
            cluster.log_tail("nn.log")
        );
        let acked: usize = models
            .iter()
            .map(|m| m.lock().expect("model lock").files.len())
            .sum();

        cluster.start_namenode()?;
        let fs = cluster
            .client_out_of_safe_mode(&format!("/probe/r{round}"))
            .await
            .with_context(|| format!("round {round} (seed {seed})"))?;
        let unknown = verify(&fs, &models)
            .await
            .with_context(|| format!("round {round} (seed {seed}) after the restart"))?;
        fs.close().await;
        cluster
            .fsck()
            .await
            .with_context(|| format!("round {round} (seed {seed})"))?;
        check_blocks_map_matches_namespace(&cluster)
            .await
            .with_context(|| format!("round {round} (seed {seed}) after the restart"))?;
        println!(
            "round {round}: killed after {load:?}, {unknown} operations in flight, \
             {acked} acknowledged files verified, {:?}",
            t.elapsed()
        );
    }
    let t = Instant::now();
    let blocks = check_disks_match_namespace(&cluster)
        .await
        .with_context(|| format!("after the last restart (seed {seed})"))?;
    println!(
        "disks match the namespace: {blocks} blocks, each on disk, no other replica ({:?})",
        t.elapsed()
    );
    println!("crash loop: {rounds} rounds in {:?}", started.elapsed());
    Ok(())
}

fn rand_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}
