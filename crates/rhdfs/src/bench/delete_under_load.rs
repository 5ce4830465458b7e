//! `rhdfs bench delete-under-load`: N one-block files are created, then deleted with one
//! recursive delete while W writers create, write and close small files without pause.
//!
//! Printed: the writers' close latency (p50, p99, max) and failures during the delete, the
//! longest hold of each lock per operation kind (in-process cluster: block manager and
//! namesystem locks read directly; remote: the NameNode's `/jmx` BlockManagerLocks bean when
//! `--nn-http` is given), and the time from the delete until the NameNode's pending
//! deletions (InvalidateBlocks + handed-out commands + blocks still leaving the map) are zero.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_conf::Configuration;
use rhdfs_minicluster::MiniCluster;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Mutex;

const ROOT: &str = "/benchmarks/DeleteUnderLoad";
const WRITER_FILE_BYTES: usize = 4096;

#[derive(Debug)]
struct Opts {
    blocks: usize,
    writers: usize,
    datanodes: usize,
    creators: usize,
    replication: Option<u16>,
    fs: Option<String>,
    nn_http: Option<String>,
    defines: Vec<String>,
}

fn parse(args: &[String]) -> anyhow::Result<Opts> {
    let mut o = Opts {
        blocks: 20_000,
        writers: 4,
        datanodes: 3,
        creators: 32,
        replication: None,
        fs: None,
        nn_http: None,
        defines: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let val = || {
            args.get(i + 1)
                .cloned()
                .with_context(|| format!("{a} needs a value"))
        };
        match a {
            "--blocks" | "-blocks" => o.blocks = val()?.parse().context("--blocks")?,
            "--writers" | "-writers" => o.writers = val()?.parse().context("--writers")?,
            "--datanodes" | "-datanodes" => o.datanodes = val()?.parse().context("--datanodes")?,
            "--creators" => o.creators = val()?.parse().context("--creators")?,
            "--replication" => o.replication = Some(val()?.parse().context("--replication")?),
            "-fs" | "--fs" => o.fs = Some(val()?),
            "--nn-http" => o.nn_http = Some(val()?),
            "-D" => o.defines.push(val()?),
            d if d.starts_with("-D") && d.len() > 2 => {
                o.defines.push(d[2..].to_string());
                i += 1;
                continue;
            }
            other => bail!("delete-under-load: unknown option `{other}`"),
        }
        i += 2;
    }
    if o.writers == 0 || o.creators == 0 || o.datanodes == 0 {
        bail!("--writers, --creators and --datanodes must be at least 1");
    }
    Ok(o)
}

/// One lock's longest hold for one operation kind.
pub(super) struct Hold {
    pub(super) lock: String,
    pub(super) op: String,
    pub(super) count: u64,
    pub(super) max_hold: Duration,
    pub(super) max_wait: Duration,
}

/// Where the NameNode's numbers come from.
enum Probe {
    InProcess(Box<MiniCluster>),
    Remote { http: Option<String> },
}

impl Probe {
    fn reset(&self) {
        if let Probe::InProcess(c) = self {
            c.namenode().block_manager().reset_lock_stats();
            c.namenode().namesystem().reset_ns_lock_stats();
        }
    }

    /// Replicas still to be deleted, as the NameNode counts them (None: unknown).
    async fn pending(&self) -> Option<u64> {
        match self {
            Probe::InProcess(c) => {
                let s = c.namenode().block_manager().fs_stats();
                Some(s.pending_deletion_blocks())
            }
            Probe::Remote { http: Some(h) } => {
                let body = http_get(h, "/jmx?qry=Hadoop:service=NameNode,name=FSNamesystem")
                    .await
                    .ok()?;
                json_number(&body, "PendingDeletionBlocks")
            }
            Probe::Remote { http: None } => None,
        }
    }

    async fn holds(&self) -> Vec<Hold> {
        match self {
            Probe::InProcess(c) => {
                let nn = c.namenode();
                let bm = nn.block_manager();
                let mut v: Vec<Hold> = bm
                    .lock_stats()
                    .into_iter()
                    .chain(nn.namesystem().ns_lock_stats())
                    .map(|s| Hold {
                        lock: s.lock.to_string(),
                        op: s.op.to_string(),
                        count: s.count,
                        max_hold: s.max_hold,
                        max_wait: s.max_wait,
                    })
                    .collect();
                v.sort_by_key(|h| std::cmp::Reverse(h.max_hold));
                v
            }
            Probe::Remote { http: Some(h) } => {
                let Ok(body) =
                    http_get(h, "/jmx?qry=Hadoop:service=NameNode,name=BlockManagerLocks").await
                else {
                    return Vec::new();
                };
                jmx_holds(&body)
            }
            Probe::Remote { http: None } => Vec::new(),
        }
    }
}

/// A plain HTTP/1.0 GET (the NameNode's HTTP server closes after the answer).
pub(super) async fn http_get(hostport: &str, path: &str) -> anyhow::Result<String> {
    let mut s = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::net::TcpStream::connect(hostport),
    )
    .await
    .context("connect timed out")??;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: {hostport}\r\n\r\n").as_bytes())
        .await?;
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .context("read timed out")??;
    let text = String::from_utf8_lossy(&out).into_owned();
    Ok(text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or(text))
}

/// The number after `"key" :` in a JSON text.
fn json_number(body: &str, key: &str) -> Option<u64> {
    let at = body.find(&format!("\"{key}\""))? + key.len() + 2;
    let rest = body[at..].trim_start().strip_prefix(':')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// `lock.op.MaxHoldMicros` / `.Count` / `.MaxWaitMicros` attributes of the locks bean.
pub(super) fn jmx_holds(body: &str) -> Vec<Hold> {
    let mut v = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find(".MaxHoldMicros\"") {
        let start = rest[..i].rfind('"').map_or(0, |q| q + 1);
        let name = &rest[start..i];
        if let Some((lock, op)) = name.split_once('.') {
            let micros = |suffix: &str| json_number(body, &format!("{name}.{suffix}")).unwrap_or(0);
            v.push(Hold {
                lock: lock.to_string(),
                op: op.to_string(),
                count: micros("Count"),
                max_hold: Duration::from_micros(micros("MaxHoldMicros")),
                max_wait: Duration::from_micros(micros("MaxWaitMicros")),
            });
        }
        rest = &rest[i + 1..];
    }
    v.sort_by_key(|h| std::cmp::Reverse(h.max_hold));
    v
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

async fn write_one(
    fs: &FileSystem,
    path: &str,
    data: &[u8],
    opts: CreateOptions,
) -> anyhow::Result<Duration> {
    let mut w = fs
        .create(path, opts)
        .await
        .with_context(|| format!("create {path}"))?;
    w.write(data)
        .await
        .with_context(|| format!("write {path}"))?;
    let t = Instant::now();
    w.close().await.with_context(|| format!("close {path}"))?;
    Ok(t.elapsed())
}

pub async fn run(args: Vec<String>) -> anyhow::Result<i32> {
    let o = parse(&args)?;
    let mut conf = Configuration::from_env()?;
    for d in &o.defines {
        conf.apply_define(d)?;
    }
    let (probe, uri) = match &o.fs {
        Some(uri) => (
            Probe::Remote {
                http: o.nn_http.clone(),
            },
            uri.clone(),
        ),
        None => {
            // The in-process cluster gets Hadoop's defaults plus the -D settings.
            let mut b = MiniCluster::builder().datanodes(o.datanodes);
            for d in &o.defines {
                if let Some((k, v)) = d.split_once('=') {
                    b = b.conf(k.trim(), v.trim().to_string());
                }
            }
            let cluster = b.build().await.context("starting the in-process cluster")?;
            let uri = cluster.uri();
            (Probe::InProcess(Box::new(cluster)), uri)
        }
    };
    conf.set(rhdfs_conf::keys::FS_DEFAULT_FS_KEY, uri.clone());
    let fs = FileSystem::from_conf(conf).await?;
    let where_ = if matches!(probe, Probe::InProcess(_)) {
        format!("in-process cluster of {} DataNodes at {uri}", o.datanodes)
    } else {
        uri.clone()
    };
    println!(
        "delete-under-load: {} one-block files, {} writers, {where_}",
        o.blocks, o.writers
    );
    let big = format!("{ROOT}/big");
    fs.delete(ROOT, true).await.ok();

    // 1. The files to delete, from many concurrent creators.
    let t = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..o.creators {
        let (fs, big, n, step, repl) =
            (fs.clone(), big.clone(), o.blocks, o.creators, o.replication);
        tasks.push(tokio::spawn(async move {
            let mut i = c;
            while i < n {
                let opts = CreateOptions {
                    overwrite: true,
                    replication: repl,
                    ..Default::default()
                };
                write_one(&fs, &format!("{big}/d{}/f{i}", i % 100), b"x", opts).await?;
                i += step;
            }
            Ok::<_, anyhow::Error>(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    let created = t.elapsed();
    println!(
        "created {} files in {:.1} s ({:.0} files/s)",
        o.blocks,
        created.as_secs_f64(),
        o.blocks as f64 / created.as_secs_f64().max(1e-6)
    );

    // 2. Writers that never pause; only closes during the delete window are counted.
    let stop = Arc::new(AtomicBool::new(false));
    let measuring = Arc::new(AtomicBool::new(false));
    let closes = Arc::new(Mutex::new(Vec::<Duration>::new()));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut writers = Vec::new();
    for w in 0..o.writers {
        let (fs, stop, measuring) = (fs.clone(), stop.clone(), measuring.clone());
        let (closes, failures) = (closes.clone(), failures.clone());
        writers.push(tokio::spawn(async move {
            let data = vec![w as u8; WRITER_FILE_BYTES];
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let path = format!("{ROOT}/writer{w}/f{n}");
                n += 1;
                let r = write_one(
                    &fs,
                    &path,
                    &data,
                    CreateOptions {
                        overwrite: true,
                        ..Default::default()
                    },
                )
                .await;
                if !measuring.load(Ordering::Relaxed) {
                    continue;
                }
                match r {
                    Ok(d) => closes.lock().await.push(d),
                    Err(e) => failures.lock().await.push(format!("{e:#}")),
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;

    // 3. The delete.
    probe.reset();
    measuring.store(true, Ordering::Relaxed);
    let t = Instant::now();
    fs.delete(&big, true)
        .await
        .with_context(|| format!("delete {big}"))?;
    let delete_rpc = t.elapsed();
    let mut drained = None;
    let mut last = None;
    let limit = Duration::from_secs(600);
    while t.elapsed() < limit {
        match probe.pending().await {
            Some(0) => {
                drained = Some(t.elapsed());
                break;
            }
            Some(n) => last = Some(n),
            None => break,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A little more writing after the drain: the last DELETED_BLOCK reports go through.
    tokio::time::sleep(Duration::from_secs(1)).await;
    measuring.store(false, Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await?;
    }

    let mut lat = closes.lock().await.clone();
    lat.sort();
    let failures = failures.lock().await.clone();
    println!("delete rpc: {}", ms(delete_rpc));
    match (drained, last) {
        (Some(d), _) => println!(
            "pending deletions reached zero after {:.3} s",
            d.as_secs_f64()
        ),
        (None, Some(n)) => println!("pending deletions did not reach zero in {limit:?} ({n} left)"),
        (None, None) => println!("pending deletions: not observable (give --nn-http HOST:PORT)"),
    }
    println!(
        "writer closes: {} ok, {} failed; close latency p50 {} p99 {} max {}",
        lat.len(),
        failures.len(),
        ms(percentile(&lat, 0.50)),
        ms(percentile(&lat, 0.99)),
        ms(lat.last().copied().unwrap_or_default())
    );
    for f in failures.iter().take(5) {
        println!("  failure: {f}");
    }
    let holds = probe.holds().await;
    if holds.is_empty() {
        println!("lock holds: not observable");
    } else {
        println!("longest lock holds during the delete (per lock and operation):");
        println!(
            "  {:<11} {:<22} {:>8} {:>14} {:>14}",
            "lock", "operation", "holds", "max hold", "max wait"
        );
        for h in &holds {
            println!(
                "  {:<11} {:<22} {:>8} {:>14} {:>14}",
                h.lock,
                h.op,
                h.count,
                ms(h.max_hold),
                ms(h.max_wait)
            );
        }
        let mut per_lock: Vec<(&str, &Hold)> = Vec::new();
        for h in &holds {
            if !per_lock.iter().any(|(l, _)| *l == h.lock) {
                per_lock.push((&h.lock, h));
            }
        }
        for (lock, h) in per_lock {
            println!("longest {lock} lock hold: {} ({})", ms(h.max_hold), h.op);
        }
    }
    fs.delete(ROOT, true).await.ok();
    if let Probe::InProcess(c) = probe {
        c.shutdown().await;
    }
    Ok(if failures.is_empty() { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let a = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let o = parse(&a(
            "--blocks 500 --writers 2 --datanodes 1 -D dfs.replication=1 -Dx=y",
        ))
        .unwrap();
        assert_eq!((o.blocks, o.writers, o.datanodes), (500, 2, 1));
        assert_eq!(o.defines, vec!["dfs.replication=1", "x=y"]);
        assert!(parse(&a("--bogus")).is_err());
        assert!(parse(&a("--blocks")).is_err());
    }

    #[test]
    fn jmx_parsing() {
        let body = r#"{"beans" : [{"name" : "Hadoop:service=NameNode,name=BlockManagerLocks",
            "blocks.ibr.Count" : 12, "blocks.ibr.MaxHoldMicros" : 40, "blocks.ibr.MaxWaitMicros" : 7,
            "blocks.remove_blocks.Count" : 20, "blocks.remove_blocks.MaxHoldMicros" : 3500,
            "PendingDeletionBlocks" : 123}]}"#;
        assert_eq!(json_number(body, "PendingDeletionBlocks"), Some(123));
        let h = jmx_holds(body);
        assert_eq!(h.len(), 2);
        assert_eq!(
            (h[0].lock.as_str(), h[0].op.as_str()),
            ("blocks", "remove_blocks")
        );
        assert_eq!(h[0].max_hold, Duration::from_micros(3500));
        assert_eq!(h[1].count, 12);
        assert_eq!(h[1].max_wait, Duration::from_micros(7));
    }
}
