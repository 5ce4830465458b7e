//! Issue 14, tests 1 and 2, on real processes (`common::ha_procs`, the writers in
//! `common::ha_load`): three `rhdfs namenode` processes of nameservice `ns` and three
//! `rhdfs datanode`s; clients given Hadoop's HA keys only (`fs.defaultFS=hdfs://ns`,
//! `dfs.nameservices`, `dfs.ha.namenodes.ns`, `dfs.namenode.rpc-address.ns.nnX`,
//! `dfs.client.failover.proxy.provider.ns`).
//!
//! One cluster, one loop of kills. Four writers run all the time (creates of 1 byte to
//! 1.5 MiB, renames, deletes, mkdirs, each under its own directory); before each kill every
//! writer has acknowledged an operation it began after the previous kill (writers continue
//! after failover). Each round SIGKILLs whichever NameNode is active; the new active must
//! serve a mkdir within a minute (a liveness bound, not a measurement); the killed member
//! restarts and must catch up with the active's txid. Only an operation in flight at a kill
//! may fail.
//!
//! - Round 0 (test 1): the writers are two Apache Hadoop 3.5 Java FsShells (`-put`, `-mv`,
//!   `-rm`, `-mkdir`, one JVM per operation) and two hdfs-native clients; after the failover
//!   the Java shell reads a file hdfs-native wrote and hdfs-native one the Java shell wrote.
//!   Without Java (and RHDFS_REQUIRE_JAVA unset) the Java writers are hdfs-native ones.
//! - Rounds 1.. (test 2): two hdfs-native writers and two rhdfs-client writers.
//!
//! At the end: every acknowledged file is complete (closed) with its exact bytes, every
//! acknowledged directory, rename and delete is there and nothing else is; `fsck /` on the
//! active is HEALTHY with no file open for write; once all members have applied the same
//! txid they are stopped (SIGTERM) and each name directory is loaded offline: the three
//! namespace images must be byte-identical.
//!
//! `RHDFS_HA_ROUNDS` (default 20) sets the number of kills; `RHDFS_HA_SEED` the seed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use rhdfs_client::FileSystem;
use rhdfs_testkit::java::JavaShell;

use crate::common::ha_load::{
    Client, Model, Op, ROOT, Rng, Writer, kill_begins, kill_ends, native, start_writer,
};
use crate::common::ha_procs::{HaCluster, digest};
use crate::common::procs::{read_file, with_timeout, write_file};

/// How long the cluster may take to do what a step waits for: a liveness bound on a small,
/// busy machine, not a timing measurement.
const LIVENESS: Duration = Duration::from_secs(60);
/// Waits until every writer has acknowledged an operation it began in `epoch` or later.
async fn wait_writers_continue(
    cluster: &HaCluster,
    writers: &[Writer],
    epoch: u64,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + LIVENESS;
    loop {
        let mut behind = Vec::new();
        for (i, w) in writers.iter().enumerate() {
            let errs = w.errors();
            ensure!(
                errs.is_empty(),
                "writer {i}: {errs:#?}\n{}",
                cluster.namenode_logs()
            );
            let m = w.model.lock().expect("model lock");
            if m.last_acked_epoch.is_none_or(|e| e < epoch) {
                behind.push(format!("{i} ({})", w.client.kind()));
            }
        }
        if behind.is_empty() {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "writers {behind:?} acknowledged nothing begun after kill {} within \
             {LIVENESS:?}\n{}",
            epoch / 2,
            cluster.namenode_logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until exactly one running NameNode says it is active; returns it.
async fn wait_one_active(cluster: &HaCluster) -> anyhow::Result<usize> {
    let deadline = Instant::now() + LIVENESS;
    loop {
        let a = cluster.actives().await;
        if let [one] = a[..] {
            return Ok(one);
        }
        ensure!(
            Instant::now() < deadline,
            "actives {a:?} after {LIVENESS:?}\n{}",
            cluster.namenode_logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until NameNode `i` has applied at least the active's txid (read once `i` answers).
async fn wait_caught_up(cluster: &HaCluster, i: usize) -> anyhow::Result<u64> {
    let deadline = Instant::now() + LIVENESS;
    let mut target = None;
    loop {
        let mine = cluster.last_txid(i).await;
        if target.is_none() && mine.is_some() {
            let active = wait_one_active(cluster).await?;
            target = cluster.last_txid(active).await;
        }
        if let (Some(m), Some(t)) = (mine, target)
            && m >= t
        {
            return Ok(m);
        }
        ensure!(
            Instant::now() < deadline,
            "nn{} at txid {mine:?}, the active at {target:?}, after {LIVENESS:?}\n{}",
            i + 1,
            cluster.namenode_logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A mkdir through `hdfs://ns`, tried until it is acknowledged.
async fn probe(cluster: &HaCluster, fs: &FileSystem, path: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + LIVENESS;
    let mut last;
    loop {
        match with_timeout("mkdirs", fs.mkdirs(path, None)).await {
            Ok(_) => return Ok(()),
            Err(e) => last = format!("{e:#}"),
        }
        ensure!(
            Instant::now() < deadline,
            "no NameNode acknowledged mkdirs {path} within {LIVENESS:?}: {last}\n{}",
            cluster.namenode_logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Decides each unknown operation from what the nameservice shows: a create is undone
/// (its file, and the `._COPYING_` file of a Java put, deleted); a rename happened iff its
/// destination exists (exactly one of source and destination must); a delete iff its
/// file is gone (else it keeps its acknowledged bytes); a mkdir iff its directory exists.
async fn resolve_unknown(fs: &FileSystem, m: &mut Model) -> anyhow::Result<()> {
    let exists = |p: String| async move {
        with_timeout("getFileInfo", fs.get_file_info(&p))
            .await
            .map(|s| s.is_some())
    };
    for (op, data) in std::mem::take(&mut m.unknown) {
        match op {
            Op::Create { path, .. } => {
                for p in [path.clone(), format!("{path}._COPYING_")] {
                    if exists(p.clone()).await? {
                        with_timeout("delete", fs.delete(&p, false)).await?;
                    }
                }
            }
            Op::Rename { src, dst } => {
                let (s, d) = (exists(src.clone()).await?, exists(dst.clone()).await?);
                ensure!(
                    s != d,
                    "interrupted rename {src} -> {dst}: src exists {s}, dst exists {d}"
                );
                let data = data.with_context(|| format!("rename of unknown {src}"))?;
                m.files.insert(if d { dst } else { src }, data);
            }
            Op::Delete { path } => {
                if exists(path.clone()).await? {
                    let data = data.with_context(|| format!("delete of unknown {path}"))?;
                    m.files.insert(path, data);
                }
            }
            Op::Mkdir { path } => {
                if exists(path.clone()).await? {
                    m.dirs.insert(path);
                }
            }
        }
    }
    Ok(())
}

/// Every file and directory below `dir`: path -> (length, open for write) and the dirs.
async fn walk(
    fs: &FileSystem,
    dir: &str,
) -> anyhow::Result<(BTreeMap<String, u64>, BTreeSet<String>)> {
    let (mut files, mut dirs) = (BTreeMap::new(), BTreeSet::new());
    let mut stack = vec![dir.to_string()];
    while let Some(d) = stack.pop() {
        for st in with_timeout("listStatus", fs.list_status(&d)).await? {
            if st.is_dir {
                dirs.insert(st.path.clone());
                stack.push(st.path);
            } else {
                files.insert(st.path, st.length);
            }
        }
    }
    Ok((files, dirs))
}

/// The nameservice holds exactly the writers' acknowledged files (exact bytes) and
/// directories under ROOT; returns the number of files.
async fn verify(fs: &FileSystem, models: &[(String, Arc<Mutex<Model>>)]) -> anyhow::Result<usize> {
    let mut want_files = BTreeMap::new();
    let mut want_dirs = BTreeSet::new();
    for (base, model) in models {
        let mut m = std::mem::take(&mut *model.lock().expect("model lock"));
        let res = resolve_unknown(fs, &mut m).await;
        want_dirs.insert(base.clone());
        want_dirs.extend(m.dirs.iter().cloned());
        want_files.extend(m.files.iter().map(|(k, v)| (k.clone(), v.clone())));
        *model.lock().expect("model lock") = m;
        res?;
    }
    let (files, dirs) = walk(fs, ROOT).await?;
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
            "{path}: length {}, acknowledged {}",
            files[path],
            data.len()
        );
        let got = read_file(fs, path).await?;
        ensure!(
            got == *data,
            "{path}: content differs ({} bytes read)",
            got.len()
        );
    }
    Ok(want_files.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ha_nameservice_of_processes_fails_over_under_load() -> anyhow::Result<()> {
    let test = "ha_process::ha_nameservice_of_processes_fails_over_under_load";
    let rounds: u64 = std::env::var("RHDFS_HA_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
        .max(1);
    let seed: u64 = std::env::var("RHDFS_HA_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    println!("ha loop: seed {seed} (RHDFS_HA_SEED), {rounds} kills (RHDFS_HA_ROUNDS)");
    let started = Instant::now();
    let mut rng = Rng::new(seed);
    let tmp = tempfile::tempdir()?;
    let mut cluster = HaCluster::start(tmp.path(), 3, &[])?;

    // The nameservice serves once a member is active and the DataNodes registered with it.
    // The probe's client (rhdfs-client) retries a failover every 100-500 ms, so the time
    // to its acknowledged mkdir follows the election, not the client's back-off.
    let mut probe_conf = cluster.client_conf();
    probe_conf.set("dfs.client.failover.sleep.base.millis", "100");
    probe_conf.set("dfs.client.failover.sleep.max.millis", "500");
    let fs = FileSystem::connect_with(Some("hdfs://ns"), probe_conf).await?;
    let deadline = Instant::now() + Duration::from_secs(90);
    for attempt in 0.. {
        let path = format!("/probe/first{attempt}");
        match write_file(&fs, &path, b"x").await {
            Ok(()) => break,
            Err(e) if Instant::now() > deadline => {
                return Err(e.context(format!("no write taken\n{}", cluster.namenode_logs())));
            }
            Err(_) => {
                let _ = with_timeout("delete", fs.delete(&path, false)).await;
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }
    }
    println!("nameservice serving after {:?}", started.elapsed());

    let java = JavaShell::with_conf(
        "hdfs://ns",
        test,
        &cluster
            .client_keys()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect::<Vec<_>>(),
    )?;
    let epoch = Arc::new(AtomicU64::new(0));
    let mut models: Vec<(String, Arc<Mutex<Model>>)> = Vec::new();
    let mut writers: Vec<Writer> = Vec::new();
    for w in 0..6 {
        with_timeout("mkdirs", fs.mkdirs(&format!("{ROOT}/w{w}"), None)).await?;
    }
    // Round 0's writers: two Java FsShells (or hdfs-native without Java), two hdfs-native.
    for _ in 0..2 {
        let client = match &java {
            Some(_) => {
                let sh = JavaShell::with_conf(
                    "hdfs://ns",
                    test,
                    &cluster
                        .client_keys()
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect::<Vec<_>>(),
                )?
                .context("the Java client went away")?;
                Client::Java(sh, tempfile::tempdir()?)
            }
            None => native(&cluster)?,
        };
        start_writer(&mut models, &mut writers, client, &mut rng, &epoch);
    }
    for _ in 0..2 {
        start_writer(
            &mut models,
            &mut writers,
            native(&cluster)?,
            &mut rng,
            &epoch,
        );
    }

    let mut failovers = Vec::new();
    for round in 0..rounds {
        let t = Instant::now();
        let now = epoch.load(Ordering::SeqCst);
        wait_writers_continue(&cluster, &writers, now)
            .await
            .with_context(|| format!("round {round} (seed {seed})"))?;
        if round == 1 {
            // Test 1's reads after the failover: each client reads a file the other wrote
            // through the new active. Not one of the writers' files: its writer may rename or
            // delete it while it is being read. Outside ROOT, which the final check walks.
            let native_writer = native(&cluster)?;
            let (from_native, from_java) =
                (b"written by hdfs-native".to_vec(), b"by Java".to_vec());
            native_writer.mkdir("/cross").await?;
            native_writer.create("/cross/native", &from_native).await?;
            let got = writers[0].client.read("/cross/native").await?;
            ensure!(
                got == from_native,
                "{} read /cross/native wrongly",
                writers[0].client.kind()
            );
            writers[0].client.create("/cross/java", &from_java).await?;
            let got = native_writer.read("/cross/java").await?;
            ensure!(got == from_java, "hdfs-native read /cross/java wrongly");
            // The rest of the loop is cheaper without a JVM per operation.
            let java: Vec<Writer> = writers.drain(..2).collect();
            for w in &java {
                w.stop.store(true, Ordering::SeqCst);
            }
            for w in java {
                let errs = w.errors();
                w.stop().await?;
                ensure!(errs.is_empty(), "{errs:#?}");
            }
            for _ in 0..2 {
                let fs = FileSystem::connect_with(Some("hdfs://ns"), cluster.client_conf()).await?;
                start_writer(
                    &mut models,
                    &mut writers,
                    Client::Rhdfs(fs),
                    &mut rng,
                    &epoch,
                );
            }
            wait_writers_continue(&cluster, &writers, now).await?;
        }
        // Load for a random moment, then kill whichever member is active.
        tokio::time::sleep(Duration::from_millis(rng.below(1000))).await;
        let active = wait_one_active(&cluster).await?;
        let acked: u64 = models
            .iter()
            .map(|(_, m)| m.lock().expect("model lock").acked)
            .sum();
        kill_begins(&epoch);
        let killed_at = Instant::now();
        cluster.kill_namenode(active)?;
        kill_ends(&epoch);
        probe(&cluster, &fs, &format!("/probe/r{round}"))
            .await
            .with_context(|| {
                format!(
                    "round {round} (seed {seed}): after killing nn{}",
                    active + 1
                )
            })?;
        let failover = killed_at.elapsed();
        failovers.push(failover);
        cluster.start_namenode(active)?;
        let txid = wait_caught_up(&cluster, active)
            .await
            .with_context(|| format!("round {round} (seed {seed}): nn{} rejoining", active + 1))?;
        println!(
            "round {round}: killed nn{} ({acked} operations acknowledged so far), a mkdir \
             acknowledged {failover:?} after, nn{} rejoined at txid {txid}, round {:?}",
            active + 1,
            active + 1,
            t.elapsed()
        );
    }
    wait_writers_continue(&cluster, &writers, epoch.load(Ordering::SeqCst)).await?;
    for w in writers.drain(..) {
        let errs = w.errors();
        w.stop().await?;
        ensure!(errs.is_empty(), "{errs:#?}");
    }
    let (acked, stale, unknown) = models.iter().fold((0, 0, 0), |(a, s, u), (_, m)| {
        let m = m.lock().expect("model lock");
        (
            a + m.acked,
            s + m.stale_connection_failures,
            u + m.unknown.len(),
        )
    });
    println!(
        "{acked} operations acknowledged, {unknown} failed at a kill (resolved now), {stale} of \
         them hdfs-native writes on the connection to the killed active"
    );
    let files = verify(&fs, &models)
        .await
        .with_context(|| format!("after {rounds} kills (seed {seed})"))?;
    let active = wait_one_active(&cluster).await?;
    cluster.fsck(active).await?;
    failovers.sort();
    println!(
        "{files} acknowledged files read back, fsck HEALTHY; kill to acknowledged mkdir: \
         median {:?}, max {:?}",
        failovers[failovers.len() / 2],
        failovers[failovers.len() - 1]
    );
    fs.close().await;

    // Namespaces: every member at the same applied txid, stopped cleanly, loaded offline.
    let deadline = Instant::now() + LIVENESS;
    loop {
        let mut txids = Vec::new();
        for i in 0..cluster.namenode_count() {
            txids.push(cluster.last_txid(i).await);
        }
        if txids.iter().all(|t| t.is_some() && *t == txids[0]) {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "members' txids {txids:?} after {LIVENESS:?}\n{}",
            cluster.namenode_logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    cluster.stop_namenodes()?;
    let mut images = Vec::new();
    for i in 0..cluster.namenode_count() {
        let (txid, image) = cluster
            .offline_image(i)
            .await
            .with_context(|| format!("loading nn{}'s name directory", i + 1))?;
        println!(
            "nn{}: txid {txid}, image {} bytes, digest {:016x}",
            i + 1,
            image.len(),
            digest(&image)
        );
        images.push((txid, image));
    }
    for (i, img) in images.iter().enumerate().skip(1) {
        ensure!(
            img.0 == images[0].0 && img.1 == images[0].1,
            "nn{}'s namespace (txid {}, digest {:016x}) differs from nn1's (txid {}, digest {:016x})",
            i + 1,
            img.0,
            digest(&img.1),
            images[0].0,
            digest(&images[0].1)
        );
    }
    println!("ha loop: {rounds} kills in {:?}", started.elapsed());
    Ok(())
}
