//! `rhdfs bench dfsio -write|-read --files N --size SIZE [--replication R] [--warm]
//! [--repeat K]`: a TestDFSIO-like throughput test, with the same bytes written/read through plain
//! file I/O on the disk that holds the DataNodes' volumes (R copies for writes) as the machine's
//! own limit, by as many concurrent writers/readers as there are files. Each of the K rounds
//! times the rhdfs pass and then the plain pass in the same cache state (dropped before each pass
//! when run as root; `--warm` reads every replica and the plain files once first, untimed; writes
//! start each pass with the files of the pass before deleted (`settle`), no dirty pages and,
//! as root, the page cache dropped, and end it with the bytes on the disk); the
//! summary gives medians, the median of the rounds' ratios, and the machine's busy CPU seconds
//! per GiB of each pass (steadier than wall time on a shared machine).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_conf::Configuration;

use super::format::human;
use cpu::{CpuMark, CpuUsed};

mod block_files;
mod cpu;
mod plain;
mod settle;
mod warm;

const DIR: &str = "/benchmarks/TestDFSIO/io_data";
const BUF: usize = 1 << 20;
const GIB: f64 = (1u64 << 30) as f64;

struct Opts {
    write: bool,
    files: usize,
    size: u64,
    replication: Option<u16>,
    local_dir: Option<PathBuf>,
    /// Leave the page cache alone (a warm read).
    warm: bool,
    /// Rounds of (rhdfs pass, plain pass).
    repeat: usize,
}

/// `--size`: Hadoop's size forms (`256m`, `1g`, bytes without a suffix) and TestDFSIO's
/// (`256MB`, `1GB`, `64KB`).
fn size_arg(v: &str) -> Result<u64, String> {
    let t = v.trim();
    let unit = t
        .strip_suffix(['B', 'b'])
        .filter(|u| u.chars().last().is_some_and(|c| "kmgtpeKMGTPE".contains(c)));
    rhdfs_conf::parse_size(unit.unwrap_or(t))
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
        repeat: 1,
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
                o.size = size_arg(&val(i)?).map_err(|e| anyhow::anyhow!("--size: {e}"))?;
                i += 1;
            }
            "--replication" => {
                o.replication = Some(val(i)?.parse()?);
                i += 1;
            }
            "--repeat" => {
                o.repeat = val(i)?.parse::<usize>()?.max(1);
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

/// One timed pass: bytes, wall seconds, CPU used.
#[derive(Debug, Clone, Copy, Default)]
struct Pass {
    bytes: u64,
    secs: f64,
    cpu: CpuUsed,
    /// The DataNode processes' CPU was counted (their pids were known when it began).
    dn_counted: bool,
}

impl Pass {
    fn rate(&self) -> f64 {
        self.bytes as f64 / self.secs
    }

    /// CPU seconds per GiB: (the whole machine's busy time, this process's, the DataNodes').
    fn cpu_per_gib(&self) -> (f64, f64, f64) {
        let gib = (self.bytes as f64 / GIB).max(1e-9);
        (
            self.cpu.machine / gib,
            self.cpu.process / gib,
            self.cpu.datanodes / gib,
        )
    }
}

/// Times `f`, with the CPU it and everything else on the machine used meanwhile.
async fn timed<F: std::future::Future<Output = anyhow::Result<u64>>>(
    pids: &[u32],
    f: F,
) -> anyhow::Result<Pass> {
    let mark = CpuMark::now(pids);
    let t = Instant::now();
    let bytes = f.await?;
    Ok(Pass {
        bytes,
        secs: t.elapsed().as_secs_f64().max(1e-6),
        cpu: mark.used(),
        dn_counted: !pids.is_empty(),
    })
}

/// The median of the rounds' ratios, and what to print after it: " (median of N rounds,
/// lowest-highest)" when there were several.
fn median_and_range(ratios: Vec<f64>) -> (f64, String) {
    let (lo, hi) = ratios
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), r| (a.min(*r), b.max(*r)));
    let n = ratios.len();
    let range = if n > 1 {
        format!(" (median of {n} rounds, {lo:.2}-{hi:.2})")
    } else {
        String::new()
    };
    (median(ratios), range)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Runs the benchmark; prints per-file and total throughput, the local-disk limit measured in
/// the same rounds, their ratio and CPU per GiB.
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
    let dir = local.join(format!("rhdfs-bench-{}", std::process::id()));
    tokio::fs::create_dir_all(&dir).await?;
    let res = rounds(&fs, &o, &local, &dir).await;
    let _ = tokio::fs::remove_dir_all(&dir).await;
    fs.close().await;
    res.map(|()| 0)
}

async fn rounds(
    fs: &FileSystem,
    o: &Opts,
    local: &std::path::Path,
    dir: &std::path::Path,
) -> anyhow::Result<()> {
    let replication = o.replication.unwrap_or(fs.client_conf().replication);
    let files = o.files as u64;
    let copies = if o.write { u64::from(replication) } else { 1 };
    // Reads start cold when the page cache can be dropped (as root), as the plain reads do.
    let cold = !o.write && !o.warm && drop_cache().await;
    if !o.write {
        plain::write(dir, files, 1, o.size).await?;
        if o.warm {
            for i in 0..o.files {
                warm::warm_every_replica(fs, &format!("{DIR}/test_io_{i}")).await?;
            }
            plain::read(dir, files).await?;
        }
    }
    // Short-circuit reads are also measured against the block files they read.
    let block_files = if o.write {
        None
    } else {
        block_files::open(fs, o.files).await?
    };
    // The block-file pass of each round, beside the round's rhdfs pass in `rounds`.
    let mut block_passes: Vec<Pass> = Vec::new();
    let mut dn_pids = datanode_pids(fs, o).await;
    let opened_before = fs.datanode_connections_opened();
    let (_, sc_before) = fs.short_circuit_stats();
    let mut rounds: Vec<(Pass, Pass)> = Vec::new();
    for round in 0..o.repeat {
        if dn_pids.is_empty() && round > 0 {
            // A first write made the files whose locations name the DataNodes.
            dn_pids = datanode_pids(fs, o).await;
        }
        if cold {
            drop_cache().await;
        }
        if o.write {
            settle::remove_previous(fs, o.files, &dn_pids).await?;
            clean_slate().await;
        }
        // A write pass ends when its replicas are on the disk, as the plain pass's copies are.
        let dfs = timed(&dn_pids, async {
            let n = dfs_pass(fs, o, replication, round == 0).await?;
            if o.write {
                flush_dirty_pages().await;
            }
            Ok(n)
        })
        .await?;
        if cold {
            drop_cache().await;
        }
        if o.write {
            plain::remove(dir, files, copies).await?;
            clean_slate().await;
        }
        let local = if o.write {
            timed(&[], async {
                plain::write(dir, files, copies, o.size).await?;
                Ok(files * copies * o.size)
            })
            .await?
        } else {
            timed(&[], plain::read(dir, files)).await?
        };
        // For writes the limit is local ÷ replication: the plain pass wrote R copies.
        let ratio = dfs.rate() / (local.rate() / copies as f64);
        let (d, l) = (dfs.cpu_per_gib(), local.cpu_per_gib());
        println!(
            "   round {}: rhdfs {}/s, CPU s/GiB client {:.2} + DataNodes {} (machine {:.2}); plain {}/s, CPU s/GiB {:.2} (machine {:.2}); ratio {ratio:.2}",
            round + 1,
            human(dfs.rate() as u64),
            d.1,
            if dfs.dn_counted {
                format!("{:.2}", d.2)
            } else {
                "- (not counted)".to_string()
            },
            d.0,
            human(local.rate() as u64),
            l.1,
            l.0,
        );
        if let Some(bf) = &block_files {
            if cold {
                drop_cache().await;
            }
            let blocks = timed(&[], block_files::read(bf)).await?;
            println!(
                "   round {}: plain read of the block files {}/s, CPU s/GiB {:.2}; rhdfs / block files ratio {:.2}",
                round + 1,
                human(blocks.rate() as u64),
                blocks.cpu_per_gib().1,
                dfs.rate() / blocks.rate(),
            );
            block_passes.push(blocks);
        }
        rounds.push((dfs, local));
    }
    let med = |f: &dyn Fn(&(Pass, Pass)) -> f64| median(rounds.iter().map(f).collect());
    let ratios: Vec<f64> = rounds
        .iter()
        .map(|(d, l)| d.rate() / (l.rate() / copies as f64))
        .collect();
    let (ratio, range) = median_and_range(ratios);
    let total = rounds.first().map(|(d, _)| d.bytes).unwrap_or(0);
    let dfs_secs = med(&|(d, _)| d.secs);
    let local_secs = med(&|(_, l)| l.secs);
    let local_rate = med(&|(_, l)| l.rate());
    let what = if o.write { "write" } else { "read" };
    println!(
        "----- TestDFSIO ----- : {what}\n           Number of files: {}\n    Total bytes processed: {} ({total})\n        Throughput (total): {}/s\n        Test exec time sec: {dfs_secs:.3}",
        o.files,
        human(total),
        human(med(&|(d, _)| d.rate()) as u64)
    );
    println!(
        "    Local disk ({}) {what}: {} in {local_secs:.3} s, {}/s ({copies} cop{}, {} at once)\n   rhdfs / local time ratio: {:.2}",
        local.display(),
        human(files * copies * o.size),
        human(local_rate as u64),
        if copies == 1 { "y" } else { "ies" },
        o.files,
        dfs_secs / local_secs
    );
    // Rounds whose DataNode CPU was not counted (a first write to a new cluster: no file
    // named the DataNodes yet) are left out of its median, not taken as 0.
    let counted: Vec<&(Pass, Pass)> = rounds.iter().filter(|(d, _)| d.dn_counted).collect();
    let dn_med = median(counted.iter().map(|(d, _)| d.cpu_per_gib().2).collect());
    let dn_cpu = if counted.is_empty() {
        "not counted (in this process, or none found)".to_string()
    } else {
        format!("{dn_med:.2}")
    };
    let rhdfs_cpu = med(&|(d, _)| d.cpu_per_gib().1) + dn_med;
    let plain_cpu = med(&|(_, l)| l.cpu_per_gib().1);
    println!(
        "   CPU s per GiB: rhdfs client {:.2} + DataNodes {dn_cpu} = {rhdfs_cpu:.2}; plain {plain_cpu:.2}; plain / rhdfs CPU ratio {:.2}\n   CPU s per GiB of the whole machine (other work included): rhdfs {:.2}, plain {:.2}",
        med(&|(d, _)| d.cpu_per_gib().1),
        plain_cpu / rhdfs_cpu.max(1e-9),
        med(&|(d, _)| d.cpu_per_gib().0),
        med(&|(_, l)| l.cpu_per_gib().0),
    );
    if o.write {
        println!(
            "   Both passes end with their bytes on the disk (rhdfs: sync after the files close; plain: fdatasync of each new file); before each, untimed: the old files deleted (rhdfs: their replicas gone from the DataNodes), dirty pages written back, the page cache dropped as root\n   rhdfs / (local ÷ {copies}) throughput ratio: {ratio:.2}{range}"
        );
        return Ok(());
    }
    println!(
        "   Page cache: {}\n   DataNode connections opened: {}\n   Plain read limit ({} readers): {}/s\n   rhdfs / plain read throughput ratio: {ratio:.2}{range}",
        if cold {
            "dropped before each pass"
        } else {
            "warm (every replica and the plain files read once first: --warm, or not root)"
        },
        fs.datanode_connections_opened() - opened_before,
        o.files,
        human(local_rate as u64),
    );
    // With dfs.client.read.shortcircuit and dfs.domain.socket.path, local replicas are read
    // straight from their block files: the ratio above is then short-circuit vs plain.
    let sc_bytes = fs.short_circuit_stats().1 - sc_before;
    let all = total * rounds.len() as u64;
    let all_short_circuit = sc_bytes == all && all > 0;
    println!(
        "   Short-circuit bytes read: {} of {}{}",
        human(sc_bytes),
        human(all),
        if all_short_circuit {
            format!("\n   short-circuit / plain read throughput ratio: {ratio:.2}{range}")
        } else {
            String::new()
        }
    );
    if all_short_circuit && !block_passes.is_empty() {
        let (ratio, range) = median_and_range(
            rounds
                .iter()
                .zip(&block_passes)
                .map(|((d, _), b)| d.rate() / b.rate())
                .collect(),
        );
        let rate = median(block_passes.iter().map(Pass::rate).collect());
        let cpu = median(block_passes.iter().map(|b| b.cpu_per_gib().1).collect());
        println!(
            "   Plain read of the block files the client read ({} readers): {}/s, CPU s per GiB {cpu:.2}\n   short-circuit / plain read of the block files: {ratio:.2}{range}",
            o.files,
            human(rate as u64),
        );
    }
    Ok(())
}

/// The local processes serving the benchmark files' DataNode ports (none when the DataNodes
/// run in this process or elsewhere).
async fn datanode_pids(fs: &FileSystem, o: &Opts) -> Vec<u32> {
    let mut ports = std::collections::HashSet::new();
    for i in 0..o.files {
        if let Ok(lbs) = fs
            .located_blocks(&format!("{DIR}/test_io_{i}"), 0, u64::MAX >> 1)
            .await
        {
            for lb in &lbs.blocks {
                for dn in &lb.locs {
                    if let Ok(p) = u16::try_from(dn.id.xfer_port) {
                        ports.insert(p);
                    }
                }
            }
        }
    }
    tokio::task::spawn_blocking(move || cpu::listeners(&ports))
        .await
        .unwrap_or_default()
}

/// The rhdfs pass: every file written or read by its own task, all at once; the bytes moved.
async fn dfs_pass(
    fs: &FileSystem,
    o: &Opts,
    replication: u16,
    print_files: bool,
) -> anyhow::Result<u64> {
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
        if print_files {
            println!(
                "{path}: {} in {:.2} s, {}/s",
                human(n),
                d.as_secs_f64(),
                human((n as f64 / d.as_secs_f64().max(1e-6)) as u64)
            );
        }
    }
    Ok(total)
}

/// Writes every dirty page back (`sync`) off the async threads: at the end of the rhdfs write
/// pass, whose DataNodes do not sync on close.
async fn flush_dirty_pages() {
    let _ = tokio::task::spawn_blocking(sync_all).await;
}

/// Before each timed write pass, off the async threads: every dirty page written back (else
/// the kernel's write-back of the pages the pass before left — or its throttling once they
/// pass `vm.dirty_ratio` — lands on whichever pass runs second) and, as root, the page cache
/// dropped, so both passes find the same free memory: with the cache full of the passes
/// before, whichever pass has to reclaim pages pays for it (the plain pass's CPU per GiB went
/// from 0.25 to 0.6–1.7 s in the rounds that did, 3 × 512 MiB on a 23 GiB machine).
async fn clean_slate() {
    // drop_page_cache syncs first whether or not it may drop the cache.
    drop_cache().await;
}

/// [`drop_page_cache`] off the async threads (the sync in it can take seconds).
async fn drop_cache() -> bool {
    tokio::task::spawn_blocking(drop_page_cache)
        .await
        .unwrap_or(false)
}

/// Writes dirty pages back and drops the page cache (`/proc/sys/vm/drop_caches`); false when
/// that is not allowed (not root).
fn drop_page_cache() -> bool {
    sync_all();
    std::fs::write("/proc/sys/vm/drop_caches", "1").is_ok()
}

/// Every dirty page of the machine written back (the `sync` command). Blocking.
fn sync_all() {
    let _ = std::process::Command::new("sync").status();
}

#[cfg(test)]
mod tests {
    use super::size_arg;

    #[test]
    fn sizes_in_hadoop_and_test_dfsio_forms() {
        assert_eq!(size_arg("256m"), Ok(256 << 20));
        assert_eq!(size_arg("256MB"), Ok(256 << 20));
        assert_eq!(size_arg("1gb"), Ok(1 << 30));
        assert_eq!(size_arg("64KB"), Ok(64 << 10));
        assert_eq!(size_arg("4096"), Ok(4096));
        assert!(size_arg("12B").is_err(), "a byte count takes no unit");
        assert!(size_arg("MB").is_err());
        assert!(size_arg("x").is_err());
    }
}
