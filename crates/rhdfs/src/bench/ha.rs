//! `rhdfs bench ha`: NameNode failover on the Raft-replicated edit log (issue 14).
//!
//! An in-process nameservice of three NameNodes and three DataNodes, clients given only
//! Hadoop's HA keys:
//! 1. Throughput: `-writers` clients do mkdirs for `-seconds` against the HA nameservice,
//!    then against a single NameNode (no HA) in the same run; both rates and their ratio.
//! 2. Failover loop: while the writers create small files, the active NameNode is crashed
//!    `-kills` times; each time the failover figure is the time from the crash to the first
//!    acknowledged mkdir through the nameservice, then the crashed NameNode is restarted as a
//!    standby. p50/p99/max printed.
//! 3. Checks: every file whose close was acknowledged is read back byte for byte, and every
//!    NameNode's namespace image is identical at the end; a failure of either makes the exit
//!    status non-zero.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_conf::Configuration;
use rhdfs_minicluster::MiniCluster;
use rhdfs_minicluster::ha::HaMiniCluster;

use crate::args::take_value;
use crate::bench::nn::latency::p50_p99;

struct Options {
    kills: usize,
    writers: usize,
    seconds: f64,
    /// The NameNodes' RPC ports (`-ports a,b,c`); free ones when absent.
    ports: Option<Vec<u16>>,
    defines: Vec<String>,
}

fn parse(args: Vec<String>) -> anyhow::Result<Options> {
    let mut rest = args;
    let mut defines = Vec::new();
    while let Some(v) = take_value(&mut rest, &["-D"])? {
        defines.push(v);
    }
    let num = |rest: &mut Vec<String>, names: &[&str], default: f64| -> anyhow::Result<f64> {
        match take_value(rest, names)? {
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|n| *n > 0.0)
                .with_context(|| format!("{} takes a positive number, not `{v}`", names[0])),
            None => Ok(default),
        }
    };
    let ports = match take_value(&mut rest, &["-ports", "--ports"])? {
        Some(v) => {
            let p: Vec<u16> = v
                .split(',')
                .map(|p| p.trim().parse::<u16>())
                .collect::<Result<_, _>>()
                .with_context(|| format!("-ports takes three port numbers, not `{v}`"))?;
            if p.len() != 3 {
                bail!("-ports takes three port numbers, not `{v}`");
            }
            Some(p)
        }
        None => None,
    };
    let o = Options {
        ports,
        kills: num(&mut rest, &["-kills", "--kills"], 5.0)? as usize,
        writers: num(&mut rest, &["-writers", "--writers"], 4.0)? as usize,
        seconds: num(&mut rest, &["-seconds", "--seconds"], 3.0)?,
        defines,
    };
    if !rest.is_empty() {
        bail!("unexpected arguments: {}", rest.join(" "));
    }
    Ok(o)
}

/// Three free loopback ports (bound together, then released for the NameNodes).
fn free_ports(n: usize) -> anyhow::Result<Vec<u16>> {
    let listeners = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect::<Result<Vec<_>, _>>()?)
}

/// mkdirs by `writers` clients for `secs`; operations per second.
async fn mkdirs_rate(
    fs: &FileSystem,
    root: &str,
    writers: usize,
    secs: f64,
) -> anyhow::Result<f64> {
    let done = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..writers {
        let (fs, done, root) = (fs.clone(), done.clone(), root.to_string());
        tasks.push(tokio::spawn(async move {
            let mut i = 0u64;
            while Instant::now() < until {
                fs.mkdirs(&format!("{root}/w{w}/d{i}"), None).await?;
                done.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
            Ok::<_, rhdfs_client::ClientError>(())
        }));
    }
    for t in tasks {
        t.await.context("mkdirs task")??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64())
}

fn payload(w: usize, i: u64) -> Vec<u8> {
    let len = 1000 + (i as usize * 37 + w * 101) % 3000;
    (0..len).map(|k| (k as u64 ^ i ^ w as u64) as u8).collect()
}

fn lock(m: &Mutex<Writes>) -> std::sync::MutexGuard<'_, Writes> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the writers saw.
#[derive(Default)]
struct Writes {
    acked: Vec<(String, usize, u64)>,
    failed: u64,
}

fn writer(
    fs: FileSystem,
    w: usize,
    stop: Arc<AtomicBool>,
    out: Arc<Mutex<Writes>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut i = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let path = format!("/bench-ha/load/w{w}/f{i}");
            let data = payload(w, i);
            let r = async {
                let mut f = fs.create(&path, CreateOptions::default()).await?;
                f.write(&data).await?;
                f.close().await
            }
            .await;
            match r {
                Ok(()) => lock(&out).acked.push((path, w, i)),
                Err(e) => {
                    tracing::debug!(path, "write not acknowledged: {e}");
                    lock(&out).failed += 1;
                }
            }
            i += 1;
        }
    })
}

/// Every running NameNode's (txid, image) is the same.
fn identical(c: &HaMiniCluster) -> Option<u64> {
    let all: Vec<(u64, Vec<u8>)> = (0..c.num_namenodes())
        .filter_map(|i| {
            c.namenode(i).map(|nn| {
                nn.namesystem()
                    .with_ns(|ns| (ns.last_txid(), ns.encode_image().1))
            })
        })
        .collect();
    let same = all.windows(2).all(|w| w[0] == w[1]);
    same.then(|| all.first().map_or(0, |(t, _)| *t))
}

pub async fn run(args: Vec<String>) -> anyhow::Result<i32> {
    let o = parse(args)?;
    let mut conf = Configuration::new();
    for (k, v) in [
        ("dfs.blocksize", "1048576"),
        ("dfs.namenode.fs-limits.min-block-size", "0"),
        ("dfs.namenode.accesstime.precision", "0"),
        ("dfs.namenode.safemode.extension", "0"),
        ("dfs.heartbeat.interval", "1"),
        ("dfs.client.failover.sleep.base.millis", "20"),
        ("dfs.client.failover.sleep.max.millis", "200"),
        ("dfs.client.failover.max.attempts", "60"),
        ("rhdfs.ha.raft.heartbeat.interval.ms", "100"),
        ("rhdfs.ha.raft.election.timeout.ms", "500"),
    ] {
        conf.set(k, v);
    }
    for d in &o.defines {
        conf.apply_define(d)?;
    }
    let ports = match &o.ports {
        Some(p) => p.clone(),
        None => free_ports(3)?,
    };
    let mut c = HaMiniCluster::start(None, &ports, 3, &conf)
        .await
        .context("starting the HA nameservice")?;
    let fs = FileSystem::connect_with(Some("hdfs://ns"), c.client_conf().clone()).await?;

    // 1. Throughput, HA then one NameNode.
    let ha_rate = mkdirs_rate(&fs, "/bench-ha/rate", o.writers, o.seconds).await?;
    let single_rate = {
        let mut b = MiniCluster::builder().datanodes(0);
        for d in &o.defines {
            if let Some((k, v)) = d.split_once('=') {
                b = b.conf(k.trim(), v.trim().to_string());
            }
        }
        let single = b.build().await.context("starting the single NameNode")?;
        let sfs = FileSystem::connect_with(Some(&single.uri()), Configuration::new()).await?;
        let r = mkdirs_rate(&sfs, "/bench-ha/rate", o.writers, o.seconds).await?;
        sfs.close().await;
        single.shutdown().await;
        r
    };
    println!(
        "mkdirs, {} clients, {:.1} s: HA nameservice of 3 {:.0}/s, one NameNode {:.0}/s, ratio {:.2}",
        o.writers,
        o.seconds,
        ha_rate,
        single_rate,
        ha_rate / single_rate
    );

    // 2. The failover loop under load.
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(Mutex::new(Writes::default()));
    let tasks: Vec<_> = (0..o.writers)
        .map(|w| writer(fs.clone(), w, stop.clone(), writes.clone()))
        .collect();
    let mut failovers = Vec::new();
    for k in 0..o.kills {
        let active = c.wait_active(Duration::from_secs(60)).await?;
        // Some load on this active before it dies.
        let before = lock(&writes).acked.len();
        let deadline = Instant::now() + Duration::from_secs(30);
        while lock(&writes).acked.len() < before + o.writers && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let killed = Instant::now();
        c.crash_namenode(active).await;
        // The client's own failover rounds may run out during an election: ask again.
        let probe = format!("/bench-ha/probe/{k}");
        loop {
            match fs.mkdirs(&probe, None).await {
                Ok(_) => break,
                Err(e) if killed.elapsed() < Duration::from_secs(120) => {
                    tracing::debug!("probe after kill {k}: {e}");
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("no mkdir acknowledged after kill {k}"));
                }
            }
        }
        failovers.push(killed.elapsed());
        c.restart_namenode(active)
            .await
            .context("restarting the killed NameNode")?;
    }
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.context("writer task")?;
    }
    let (p50, p99) = p50_p99(&mut failovers);
    let max = failovers.iter().max().copied().unwrap_or_default();
    println!(
        "failover (kill of the active to the first acknowledged mkdir), {} kills: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        o.kills,
        p50.as_secs_f64() * 1000.0,
        p99.as_secs_f64() * 1000.0,
        max.as_secs_f64() * 1000.0
    );

    // 3. Nothing acknowledged is lost; the members agree.
    let (acked, failed) = {
        let w = lock(&writes);
        (w.acked.clone(), w.failed)
    };
    let mut lost = 0usize;
    for (path, w, i) in &acked {
        let ok = match fs.open(path).await {
            Ok(mut r) => r
                .read_to_end()
                .await
                .is_ok_and(|b| b.as_ref() == payload(*w, *i).as_slice()),
            Err(_) => false,
        };
        if !ok {
            eprintln!("acknowledged file lost or changed: {path}");
            lost += 1;
        }
    }
    println!(
        "writes under failover: {} files acknowledged, {} not (failed calls during failover), {} acknowledged lost",
        acked.len(),
        failed,
        lost
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let txid = loop {
        if let Some(t) = identical(&c) {
            break Some(t);
        }
        if Instant::now() > deadline {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    match txid {
        Some(t) => println!("namespaces of all 3 NameNodes identical at txid {t}"),
        None => eprintln!("namespaces of the NameNodes differ"),
    }
    fs.close().await;
    c.shutdown().await;
    Ok(if lost == 0 && txid.is_some() { 0 } else { 1 })
}
