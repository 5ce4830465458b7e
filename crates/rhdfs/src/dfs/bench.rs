//! `rhdfs bench dfsio -write|-read --files N --size SIZE [--replication R] [--warm]`: a TestDFSIO-like
//! throughput test, with the same bytes written/read through plain file I/O on the disk that
//! holds the DataNodes' volumes (R copies for writes) as the machine's own limit. `--warm` reads
//! the files once, untimed, before the timed read.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_conf::Configuration;
use tokio::io::AsyncWriteExt;

use super::format::human;

const DIR: &str = "/benchmarks/TestDFSIO/io_data";
const BUF: usize = 1 << 20;

struct Opts {
    write: bool,
    files: usize,
    size: u64,
    replication: Option<u16>,
    local_dir: Option<PathBuf>,
    /// Leave the page cache alone (a warm read).
    warm: bool,
}

fn parse(
    args: &[String],
    conf: &mut Configuration,
    fs_uri: &mut Option<String>,
) -> anyhow::Result<Opts> {
    let mut o = Opts {
        write: true,
        files: 1,
        size: 128 << 20,
        replication: None,
        local_dir: None,
        warm: false,
    };
    let mut mode = None;
    let mut i = 0;
    let val = |i: usize| {
        args.get(i + 1)
            .cloned()
            .with_context(|| format!("{} needs a value", args[i]))
    };
    while i < args.len() {
        match args[i].as_str() {
            "dfsio" => {}
            "-write" => mode = Some(true),
            "-read" => mode = Some(false),
            "--warm" => o.warm = true,
            "--files" | "-nrFiles" => {
                o.files = val(i)?.parse()?;
                i += 1;
            }
            "--size" | "-size" => {
                o.size =
                    rhdfs_conf::parse_size(&val(i)?).map_err(|e| anyhow::anyhow!("--size: {e}"))?;
                i += 1;
            }
            "--replication" => {
                o.replication = Some(val(i)?.parse()?);
                i += 1;
            }
            "--local-dir" => {
                o.local_dir = Some(PathBuf::from(val(i)?));
                i += 1;
            }
            "-D" => {
                conf.apply_define(&val(i)?)?;
                i += 1;
            }
            "-fs" => {
                *fs_uri = Some(val(i)?);
                i += 1;
            }
            other => bail!("unknown option {other}"),
        }
        i += 1;
    }
    o.write = mode.context("say -write or -read")?;
    Ok(o)
}

/// Runs the benchmark; prints per-file and total throughput and the local-disk baseline.
pub async fn bench(args: Vec<String>) -> anyhow::Result<i32> {
    let mut conf = Configuration::from_env()?;
    let mut uri = None;
    let o = parse(&args, &mut conf, &mut uri)?;
    if let Some(u) = uri {
        conf.set(rhdfs_conf::keys::FS_DEFAULT_FS_KEY, u);
    }
    let local = match &o.local_dir {
        Some(d) => d.clone(),
        None => conf
            .get_list("dfs.datanode.data.dir")
            .first()
            .map(|d| PathBuf::from(d.trim_start_matches("file://")))
            .unwrap_or_else(std::env::temp_dir),
    };
    let fs = FileSystem::from_conf(conf).await?;
    let replication = o.replication.unwrap_or(fs.client_conf().replication);
    // Reads start cold when the page cache can be dropped (as root), as the plain reads do.
    let cold = !o.write && !o.warm && drop_page_cache();
    if !o.write && o.warm {
        // A warm read finds the data in the page cache, as the plain reads do theirs: one
        // untimed pass first (an earlier cold run may have dropped it).
        for i in 0..o.files {
            let mut r = fs.open(&format!("{DIR}/test_io_{i}")).await?;
            while r.read_chunk().await?.is_some() {}
        }
    }
    let opened_before = fs.datanode_connections_opened();
    let (_, sc_before) = fs.short_circuit_stats();
    let start = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..o.files {
        let fs = fs.clone();
        let path = format!("{DIR}/test_io_{i}");
        let (write, size) = (o.write, o.size);
        tasks.push(tokio::spawn(async move {
            let t = Instant::now();
            let n = if write {
                let mut w = fs
                    .create(
                        &path,
                        CreateOptions {
                            overwrite: true,
                            replication: Some(replication),
                            ..Default::default()
                        },
                    )
                    .await?;
                let buf = vec![0x5au8; BUF];
                let mut left = size;
                while left > 0 {
                    let k = left.min(BUF as u64) as usize;
                    w.write(&buf[..k]).await?;
                    left -= k as u64;
                }
                w.close().await?;
                size
            } else {
                let mut r = fs.open(&path).await?;
                let mut n = 0u64;
                while let Some(b) = r.read_chunk().await? {
                    n += b.len() as u64;
                }
                n
            };
            Ok::<_, rhdfs_client::ClientError>((path, n, t.elapsed()))
        }));
    }
    let mut total = 0u64;
    for t in tasks {
        let (path, n, d) = t.await??;
        total += n;
        println!(
            "{path}: {} in {:.2} s, {}/s",
            human(n),
            d.as_secs_f64(),
            human((n as f64 / d.as_secs_f64().max(1e-6)) as u64)
        );
    }
    let dfs_secs = start.elapsed().as_secs_f64().max(1e-6);
    let what = if o.write { "write" } else { "read" };
    println!(
        "----- TestDFSIO ----- : {what}\n           Number of files: {}\n    Total bytes processed: {} ({total})\n        Throughput (total): {}/s\n        Test exec time sec: {dfs_secs:.3}",
        o.files,
        human(total),
        human((total as f64 / dfs_secs) as u64)
    );
    // The same bytes with plain file I/O on the DataNodes' disk.
    let dir = local.join(format!("rhdfs-bench-{}", std::process::id()));
    tokio::fs::create_dir_all(&dir).await?;
    let copies = if o.write { u64::from(replication) } else { 1 };
    let t = Instant::now();
    let buf = vec![0x5au8; BUF];
    for i in 0..(o.files as u64 * copies) {
        let p = dir.join(format!("f{i}"));
        let mut f = tokio::fs::File::create(&p).await?;
        let mut left = o.size;
        while left > 0 {
            let k = left.min(BUF as u64) as usize;
            f.write_all(&buf[..k]).await?;
            left -= k as u64;
        }
        // No fsync: DataNodes do not sync on close either (dfs.datanode.synconclose=false).
        f.flush().await?;
    }
    let write_secs = t.elapsed().as_secs_f64().max(1e-6);
    if cold {
        drop_page_cache();
    }
    // As many concurrent plain readers as the benchmark has files.
    let t = Instant::now();
    let mut readers = Vec::new();
    for i in 0..o.files as u64 {
        let p = dir.join(format!("f{i}"));
        readers.push(tokio::task::spawn_blocking(
            move || -> std::io::Result<()> {
                let mut f = std::fs::File::open(p)?;
                let mut rb = vec![0u8; BUF];
                while std::io::Read::read(&mut f, &mut rb)? > 0 {}
                Ok(())
            },
        ));
    }
    for r in readers {
        r.await??;
    }
    let read_secs = t.elapsed().as_secs_f64().max(1e-6);
    let _ = tokio::fs::remove_dir_all(&dir).await;
    let (local_secs, local_bytes) = if o.write {
        (write_secs, o.files as u64 * o.size * copies)
    } else {
        (read_secs, o.files as u64 * o.size)
    };
    println!(
        "    Local disk ({}) {what}: {} in {local_secs:.3} s, {}/s ({copies} cop{})\n   rhdfs / local time ratio: {:.2}",
        local.display(),
        human(local_bytes),
        human((local_bytes as f64 / local_secs) as u64),
        if copies == 1 { "y" } else { "ies" },
        dfs_secs / local_secs
    );
    if !o.write {
        let dfs_rate = total as f64 / dfs_secs;
        let plain_rate = local_bytes as f64 / local_secs;
        println!(
            "   Page cache: {}\n   DataNode connections opened: {}\n   Plain read limit ({} readers): {}/s\n   rhdfs / plain read throughput ratio: {:.2}",
            if cold {
                "dropped before each read"
            } else {
                "warm (not dropped: --warm, or not root)"
            },
            fs.datanode_connections_opened() - opened_before,
            o.files,
            human(plain_rate as u64),
            dfs_rate / plain_rate
        );
        // With dfs.client.read.shortcircuit and dfs.domain.socket.path, local replicas are read
        // straight from their block files: the ratio above is then short-circuit vs plain.
        let sc_bytes = fs.short_circuit_stats().1 - sc_before;
        println!(
            "   Short-circuit bytes read: {} of {}{}",
            human(sc_bytes),
            human(total),
            if sc_bytes == total && total > 0 {
                format!(
                    "\n   short-circuit / plain read throughput ratio: {:.2}",
                    dfs_rate / plain_rate
                )
            } else {
                String::new()
            }
        );
    }
    fs.close().await;
    Ok(0)
}

/// Writes dirty pages back and drops the page cache (`/proc/sys/vm/drop_caches`); false when
/// that is not allowed (not root).
fn drop_page_cache() -> bool {
    let _ = std::process::Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "1").is_ok()
}
