//! `rhdfs bench nn-ops`: NameNode metadata throughput, like Hadoop's NNThroughputBenchmark.
//!
//! For each client count (default 1, 8, 64) that many clients — each its own `FileSystem`
//! and connection — run, one phase after another, mkdirs, creates (create + close of an
//! empty file), renames and deletes, N operations per phase in all. Every mutation is
//! acknowledged only after its edit-log record is synced, so throughput that grows with the
//! client count shows group commit; with the in-process cluster the edit log's fsync count
//! per operation is printed too (it falls below 1 when handlers share syncs).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_conf::Configuration;
use rhdfs_minicluster::MiniCluster;

const ROOT: &str = "/benchmarks/NNOps";

#[derive(Debug)]
struct Opts {
    ops: usize,
    clients: Vec<usize>,
    fs: Option<String>,
    defines: Vec<String>,
}

fn parse(args: &[String]) -> anyhow::Result<Opts> {
    let mut o = Opts {
        ops: 2000,
        clients: vec![1, 8, 64],
        fs: None,
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
            "--ops" | "-ops" => o.ops = val()?.parse().context("--ops")?,
            "--clients" | "-clients" => {
                o.clients = val()?
                    .split(',')
                    .map(|c| c.trim().parse::<usize>())
                    .collect::<Result<_, _>>()
                    .context("--clients takes a comma-separated list of counts")?;
            }
            "-fs" | "--fs" => o.fs = Some(val()?),
            "-D" => o.defines.push(val()?),
            d if d.starts_with("-D") && d.len() > 2 => {
                o.defines.push(d[2..].to_string());
                i += 1;
                continue;
            }
            other => bail!("nn-ops: unknown option `{other}`"),
        }
        i += 2;
    }
    if o.ops == 0 || o.clients.is_empty() || o.clients.contains(&0) {
        bail!("--ops and every --clients count must be at least 1");
    }
    Ok(o)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Mkdirs,
    Creates,
    Renames,
    Deletes,
}

impl Phase {
    const ALL: [Phase; 4] = [
        Phase::Mkdirs,
        Phase::Creates,
        Phase::Renames,
        Phase::Deletes,
    ];

    fn name(self) -> &'static str {
        match self {
            Phase::Mkdirs => "mkdirs",
            Phase::Creates => "creates",
            Phase::Renames => "renames",
            Phase::Deletes => "deletes",
        }
    }
}

/// One client's `k`-th operation of `phase` under `dir`.
async fn one_op(fs: &FileSystem, phase: Phase, dir: &str, k: usize) -> anyhow::Result<()> {
    match phase {
        Phase::Mkdirs => {
            fs.mkdirs(&format!("{dir}/d{k}"), None).await?;
        }
        Phase::Creates => {
            let opts = CreateOptions {
                create_parent: false,
                ..CreateOptions::default()
            };
            let mut w = fs.create(&format!("{dir}/f{k}"), opts).await?;
            w.close().await?;
        }
        Phase::Renames => {
            if !fs
                .rename(&format!("{dir}/f{k}"), &format!("{dir}/r{k}"))
                .await?
            {
                bail!("rename {dir}/f{k} returned false");
            }
        }
        Phase::Deletes => {
            if !fs.delete(&format!("{dir}/r{k}"), false).await? {
                bail!("delete {dir}/r{k} returned false");
            }
        }
    }
    Ok(())
}

struct Row {
    clients: usize,
    phase: Phase,
    ops: u64,
    failures: u64,
    elapsed: Duration,
    fsyncs: Option<u64>,
}

/// Runs `rhdfs bench nn-ops ARGS`; exit code 1 when any operation failed.
pub async fn run(args: Vec<String>) -> anyhow::Result<i32> {
    let o = parse(&args)?;
    let mut conf = Configuration::from_env()?;
    for d in &o.defines {
        conf.apply_define(d)?;
    }
    let (cluster, uri) = match &o.fs {
        Some(u) => (None, u.clone()),
        None => {
            let mut b = MiniCluster::builder().datanodes(1);
            for d in &o.defines {
                if let Some((k, v)) = d.split_once('=') {
                    b = b.conf(k.trim(), v.trim().to_string());
                }
            }
            let c = b.build().await.context("starting the in-process cluster")?;
            let uri = c.uri();
            (Some(c), uri)
        }
    };
    let fsyncs = || {
        cluster.as_ref().and_then(|c| {
            c.namenode()
                .namesystem()
                .durable()
                .map(|d| d.log().fsync_count())
        })
    };
    println!(
        "nn-ops: {} operations per phase against {uri}{}",
        o.ops,
        if cluster.is_some() {
            " (in-process MiniCluster)"
        } else {
            ""
        }
    );

    let mut rows = Vec::new();
    for &n in &o.clients {
        let mut clients = Vec::with_capacity(n);
        for _ in 0..n {
            clients.push(Arc::new(
                FileSystem::connect_with(Some(&uri), conf.clone())
                    .await
                    .context("connecting a client")?,
            ));
        }
        let base = format!("{ROOT}/c{n}-{}", std::process::id());
        for i in 0..n {
            clients[0].mkdirs(&format!("{base}/{i}"), None).await?;
        }
        // Client i does operations i, i+n, i+2n, ... below N.
        let per_client = |i: usize| (i..o.ops).step_by(n).count();
        for phase in Phase::ALL {
            let failures = Arc::new(AtomicU64::new(0));
            let before = fsyncs();
            let start = Instant::now();
            let mut tasks = Vec::with_capacity(n);
            for (i, fs) in clients.iter().enumerate() {
                let fs = Arc::clone(fs);
                let failures = Arc::clone(&failures);
                let dir = format!("{base}/{i}");
                let count = per_client(i);
                tasks.push(tokio::spawn(async move {
                    for k in 0..count {
                        if let Err(e) = one_op(&fs, phase, &dir, k).await
                            && failures.fetch_add(1, Ordering::Relaxed) < 5
                        {
                            eprintln!("{} failed: {e:#}", phase.name());
                        }
                    }
                }));
            }
            for t in tasks {
                t.await.context("a client task panicked")?;
            }
            let elapsed = start.elapsed();
            let row = Row {
                clients: n,
                phase,
                ops: o.ops as u64,
                failures: failures.load(Ordering::Relaxed),
                elapsed,
                fsyncs: before.zip(fsyncs()).map(|(b, a)| a.saturating_sub(b)),
            };
            print_row(&row, rows.is_empty());
            rows.push(row);
        }
        for fs in &clients {
            fs.close().await;
        }
        if let Ok(fs) = FileSystem::connect_with(Some(&uri), conf.clone()).await {
            let _ = fs.delete(&base, true).await;
            fs.close().await;
        }
    }
    if let Some(c) = cluster {
        c.shutdown().await;
    }
    let failed: u64 = rows.iter().map(|r| r.failures).sum();
    Ok(if failed > 0 { 1 } else { 0 })
}

fn print_row(r: &Row, header: bool) {
    if header {
        println!(
            "{:>7}  {:<8} {:>7} {:>9} {:>10} {:>10} {:>8}",
            "clients", "op", "ops", "seconds", "ops/s", "fsyncs/op", "failed"
        );
    }
    let secs = r.elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        r.ops as f64 / secs
    } else {
        f64::INFINITY
    };
    let per_op = r.fsyncs.map_or_else(
        || "-".to_string(),
        |f| format!("{:.3}", f as f64 / r.ops as f64),
    );
    println!(
        "{:>7}  {:<8} {:>7} {:>9.3} {:>10.0} {:>10} {:>8}",
        r.clients,
        r.phase.name(),
        r.ops,
        secs,
        rate,
        per_op,
        r.failures
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_options() -> anyhow::Result<()> {
        let o = parse(&s(&["--ops", "10", "--clients", "1,4", "-Dfoo=bar"]))?;
        assert_eq!(o.ops, 10);
        assert_eq!(o.clients, vec![1, 4]);
        assert_eq!(o.defines, vec!["foo=bar".to_string()]);
        assert!(parse(&s(&["--clients", "0"])).is_err());
        assert!(parse(&s(&["--bogus"])).is_err());
        Ok(())
    }
}
