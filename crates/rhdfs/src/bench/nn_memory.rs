//! `rhdfs bench nn-memory`: what a NameNode costs in memory per file and block, and how
//! long it takes to restart, with as many files as asked for.
//!
//! Steps, each timed and printed:
//! 1. Baseline: a NameNode process (this binary's `namenode`) on an empty namespace; its
//!    RSS once it serves RPC.
//! 2. Load: the namespace loader writes an image of `-files` closed files of one block
//!    each (`SyntheticSpec`, `-filesPerDir` per directory) straight into a new name
//!    directory; nothing is created through RPC.
//! 3. Restart: a NameNode process on that image; time from spawn to serving RPC, and its
//!    RSS then (per file: minus the baseline).
//! 4. Reports: `-datanodes` simulated DataNodes register and send one full report each
//!    (file k's block is on nodes k, k+1, ... k+replication-1 modulo their number); time
//!    from spawn to leaving start-up safe mode (`dfs.namenode.safemode.extension` is 0
//!    unless given with -D), and the RSS then (per replica location: minus step 3); the
//!    time from the DataNodes' registration to the last report's answer and its replicas
//!    per second, how long safe mode lasted after that answer, and the NameNode's CPU time
//!    from serving to leaving safe mode (steadier than wall time on a shared machine).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use rhdfs_client::FileSystem;
use rhdfs_conf::Configuration;
use rhdfs_namenode::namespace::SyntheticSpec;
use rhdfs_namenode::safemode::{SafeModeAction, set_safe_mode};

use super::nn::simdn::{self, Heartbeats};

#[derive(Debug)]
struct Opts {
    files: u64,
    files_per_dir: u64,
    datanodes: usize,
    replication: u16,
    dir: Option<PathBuf>,
    defines: Vec<String>,
}

fn parse(args: &[String]) -> anyhow::Result<Opts> {
    let mut o = Opts {
        files: 100_000,
        files_per_dir: 1000,
        datanodes: 10,
        replication: 3,
        dir: None,
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
        let num = || -> anyhow::Result<u64> {
            val()?
                .parse()
                .with_context(|| format!("{a} takes a number"))
        };
        match a.trim_start_matches('-') {
            "files" => o.files = num()?,
            "filesPerDir" => o.files_per_dir = num()?,
            "datanodes" => o.datanodes = num()? as usize,
            "replication" => {
                o.replication = u16::try_from(num()?).context("-replication is too large")?
            }
            "dir" => o.dir = Some(PathBuf::from(val()?)),
            "D" => o.defines.push(val()?),
            d if a.starts_with("-D") && d.len() > 1 => {
                o.defines.push(a[2..].to_string());
                i += 1;
                continue;
            }
            _ => bail!("nn-memory: unknown option `{a}`"),
        }
        i += 2;
    }
    ensure!(o.files > 0, "-files must be at least 1");
    ensure!(o.files_per_dir > 0, "-filesPerDir must be at least 1");
    ensure!(o.replication > 0, "-replication must be at least 1");
    ensure!(
        o.datanodes >= usize::from(o.replication),
        "-datanodes must be at least -replication ({})",
        o.replication
    );
    Ok(o)
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Resident set size of process `pid`, bytes.
fn rss(pid: u32) -> anyhow::Result<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .context("no VmRSS")
}

/// CPU time (user + system) process `pid` has used, from `/proc/<pid>/stat`.
fn cpu_time(pid: u32) -> anyhow::Result<Duration> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces) start at its closing ')'.
    let rest = s
        .rsplit_once(')')
        .map(|(_, r)| r)
        .context("no ')' in stat")?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime: fields 14 and 15 of stat, 12 and 13 after the name.
    let ticks = |i: usize| -> anyhow::Result<u64> {
        f.get(i)
            .and_then(|v| v.parse().ok())
            .context("short /proc/<pid>/stat")
    };
    let total = ticks(11)?.saturating_add(ticks(12)?);
    // Clock ticks of USER_HZ, 100 on the Linux ABIs this runs on.
    Ok(Duration::from_millis(total.saturating_mul(10)))
}

/// A NameNode process on one name directory; killed when dropped.
struct NameNodeProc {
    child: Child,
    addr: String,
}

impl Drop for NameNodeProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `-D` keys of one NameNode on `name_dir` at `port` (RPC) and `http` (its web port),
/// before the caller's.
fn keys(name_dir: &Path, port: u16, http: u16, defines: &[String]) -> Vec<String> {
    let mut v = vec![
        format!("dfs.namenode.name.dir={}", name_dir.display()),
        format!("dfs.namenode.rpc-address=127.0.0.1:{port}"),
        format!("fs.defaultFS=hdfs://127.0.0.1:{port}"),
        format!("dfs.namenode.http-address=127.0.0.1:{http}"),
        "dfs.namenode.safemode.extension=0".to_string(),
    ];
    v.extend(defines.iter().cloned());
    v
}

fn conf_of(keys: &[String]) -> anyhow::Result<Configuration> {
    let mut conf = Configuration::new();
    for kv in keys {
        let (k, v) = kv
            .split_once('=')
            .with_context(|| format!("-D {kv}: expected key=value"))?;
        conf.set(k, v);
    }
    Ok(conf)
}

impl NameNodeProc {
    fn spawn(work: &Path, keys: &[String], log: &str) -> anyhow::Result<Self> {
        let conf_dir = work.join("conf");
        std::fs::create_dir_all(&conf_dir)?;
        let mut args = vec![
            "namenode".to_string(),
            "--config".to_string(),
            conf_dir.to_string_lossy().into_owned(),
        ];
        for kv in keys {
            args.push("-D".into());
            args.push(kv.clone());
        }
        let out = std::fs::File::create(work.join(log))?;
        let child = Command::new(std::env::current_exe().context("locating rhdfs")?)
            .args(&args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .context("starting the NameNode process")?;
        let port = conf_of(keys)?
            .get("dfs.namenode.rpc-address")
            .and_then(|a| a.rsplit_once(':').map(|(_, p)| p.to_string()))
            .context("no rpc address")?;
        Ok(NameNodeProc {
            child,
            addr: format!("127.0.0.1:{port}"),
        })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until getFileInfo("/") answers (start-up safe mode allows reads).
    async fn wait_serving(&mut self, conf: &Configuration) -> anyhow::Result<()> {
        let uri = format!("hdfs://{}", self.addr);
        let deadline = Instant::now() + Duration::from_secs(3600);
        loop {
            if let Some(st) = self.child.try_wait()? {
                bail!("the NameNode exited during start-up: {st} (see its log)");
            }
            if let Ok(fs) = FileSystem::connect_with(Some(&uri), conf.clone()).await
                && fs.get_file_info("/").await.is_ok()
            {
                return Ok(());
            }
            ensure!(
                Instant::now() < deadline,
                "the NameNode did not serve in an hour"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn wait_safe_mode_off(&mut self) -> anyhow::Result<()> {
        let user = rhdfs_conf::user::current_user();
        let deadline = Instant::now() + Duration::from_secs(3600);
        loop {
            if let Some(st) = self.child.try_wait()? {
                bail!("the NameNode exited: {st} (see its log)");
            }
            if !set_safe_mode(&self.addr, &user, SafeModeAction::Get).await? {
                return Ok(());
            }
            ensure!(
                Instant::now() < deadline,
                "the NameNode stayed in safe mode for an hour"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The replicas simulated DataNode `i` of `n` holds, in increasing block id order, as
/// (id, gs, len): file k's block is on nodes k, k+1, ... k+r-1 modulo `n`, so node `i`
/// holds the files k with (i - k) mod n < r. Built in order, with no map to sort them.
fn node_blocks(spec: &SyntheticSpec, i: u64, n: u64, r: u64) -> Vec<(u64, u64, u64)> {
    let mut residues: Vec<u64> = (0..r.min(n)).map(|j| (i + n - j % n) % n).collect();
    residues.sort_unstable();
    let mut out = Vec::with_capacity(usize::try_from(spec.files / n.max(1) * r + r).unwrap_or(0));
    let mut base = 0;
    while base < spec.files {
        for &res in &residues {
            let k = base + res;
            if k < spec.files {
                let b = spec.block(k);
                out.push((b.id, b.gs, b.num_bytes));
            }
        }
        base += n;
    }
    out
}

/// A working directory of our own, removed at the end.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// Runs `rhdfs bench nn-memory ARGS`.
pub async fn run(args: Vec<String>) -> anyhow::Result<i32> {
    let o = parse(&args)?;
    let (work, scratch) = match &o.dir {
        Some(d) => (d.clone(), None),
        None => {
            let d = std::env::temp_dir().join(format!("rhdfs-nn-memory-{}", std::process::id()));
            (d.clone(), Some(Scratch(d)))
        }
    };
    std::fs::create_dir_all(&work)?;
    println!(
        "nn-memory: {} files of one block, {} per directory, replication {}, {} simulated DataNodes",
        o.files, o.files_per_dir, o.replication, o.datanodes
    );

    // 1. Baseline.
    let base_keys = keys(&work.join("name-empty"), free_port()?, 0, &o.defines);
    let base_conf = conf_of(&base_keys)?;
    rhdfs_namenode::format(&base_conf, true).context("formatting the baseline")?;
    let base_rss = {
        let mut nn = NameNodeProc::spawn(&work, &base_keys, "nn-empty.log")?;
        nn.wait_serving(&base_conf).await?;
        rss(nn.pid())?
    };

    // 2. Load.
    let http_port = free_port()?;
    let nn_keys = keys(&work.join("name"), free_port()?, http_port, &o.defines);
    let conf = conf_of(&nn_keys)?;
    let spec = SyntheticSpec {
        files: o.files,
        files_per_dir: o.files_per_dir,
        replication: o.replication,
        block_len: 1024,
        block_size: conf.get_size("dfs.blocksize", 128 << 20)?,
        owner: rhdfs_conf::user::current_user(),
        group: "supergroup".to_string(),
        time_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
    };
    let t = Instant::now();
    {
        let (conf, spec) = (conf.clone(), spec.clone());
        tokio::task::spawn_blocking(move || {
            rhdfs_namenode::server::format_synthetic(&conf, &spec, true)
        })
        .await??;
    }
    let load = t.elapsed();

    // 3. Restart on the image.
    let t0 = Instant::now();
    let mut nn = NameNodeProc::spawn(&work, &nn_keys, "nn.log")?;
    nn.wait_serving(&conf).await?;
    let serving = t0.elapsed();
    let loaded_rss = rss(nn.pid())?;
    let cpu_serving = cpu_time(nn.pid())?;

    // 4. Reports from the simulated DataNodes.
    let dns = simdn::start(&nn.addr, o.datanodes, 16).await?;
    let reports_start = t0.elapsed();
    let _beats = Heartbeats::start(dns.clone(), Duration::from_secs(3));
    let reported = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut tasks = Vec::new();
    // A few reports at a time: each is built just before it is sent, so the bench holds
    // at most that many in memory.
    let parallel = Arc::new(tokio::sync::Semaphore::new(4));
    for (i, dn) in dns.iter().enumerate() {
        let (dn, spec, parallel, reported) =
            (dn.clone(), spec.clone(), parallel.clone(), reported.clone());
        let n = o.datanodes as u64;
        let r = u64::from(o.replication);
        tasks.push(tokio::spawn(async move {
            let _slot = parallel.acquire_owned().await?;
            let lease = dn.report_lease().await?;
            let report = dn.full_report_of(lease, node_blocks(&spec, i as u64, n, r).into_iter());
            reported.fetch_add(report.replicas, std::sync::atomic::Ordering::Relaxed);
            dn.send_report(report).await
        }));
    }
    for t in tasks {
        t.await.context("report task")??;
    }
    let reports_done = t0.elapsed();
    nn.wait_safe_mode_off().await?;
    let safe_off = t0.elapsed();
    let cpu_reports = cpu_time(nn.pid())?.saturating_sub(cpu_serving);
    let reported_rss = rss(nn.pid())?;
    // The longest holds of the NameNode's locks since it started (block reports, the
    // load, the replication queue scan if it ran yet), from its /jmx.
    let http = format!("127.0.0.1:{http_port}");
    let mut holds = match super::delete_under_load::http_get(
        &http,
        "/jmx?qry=Hadoop:service=NameNode,name=BlockManagerLocks",
    )
    .await
    {
        Ok(body) => super::delete_under_load::jmx_holds(&body),
        Err(e) => {
            println!("lock holds: not read from {http}/jmx: {e}");
            Vec::new()
        }
    };
    holds.sort_by_key(|h| std::cmp::Reverse(h.max_hold));
    let replicas = reported.load(std::sync::atomic::Ordering::Relaxed);
    ensure!(
        replicas == o.files * u64::from(o.replication),
        "reported {replicas} replicas, expected {}",
        o.files * u64::from(o.replication)
    );

    let per_file = loaded_rss.saturating_sub(base_rss) as f64 / o.files as f64;
    let per_replica = reported_rss.saturating_sub(loaded_rss) as f64 / replicas as f64;
    let per_file_all = reported_rss.saturating_sub(base_rss) as f64 / o.files as f64;
    println!(
        "namespace loader: {} files in {:.2} s ({:.0} files/s)",
        o.files,
        load.as_secs_f64(),
        o.files as f64 / load.as_secs_f64().max(1e-9)
    );
    println!(
        "restart: serving after {:.2} s, out of safe mode after {:.2} s ({} replicas from {} DataNodes)",
        serving.as_secs_f64(),
        safe_off.as_secs_f64(),
        replicas,
        o.datanodes
    );
    let reporting = reports_done.saturating_sub(reports_start).as_secs_f64();
    println!(
        "reports: {} replicas answered in {:.2} s after the DataNodes registered ({:.2} M replicas/s), safe mode left {:.2} s after the last answer; NameNode CPU from serving to out of safe mode {:.2} s ({:.2} us per replica)",
        replicas,
        reporting,
        replicas as f64 / reporting.max(1e-9) / 1e6,
        safe_off.saturating_sub(reports_done).as_secs_f64(),
        cpu_reports.as_secs_f64(),
        cpu_reports.as_secs_f64() * 1e6 / (replicas as f64).max(1.0)
    );
    println!(
        "RSS: empty NameNode {:.1} MiB, loaded {:.1} MiB, all reported {:.1} MiB",
        mib(base_rss),
        mib(loaded_rss),
        mib(reported_rss)
    );
    println!(
        "RSS per file (inode + its block, no locations): {per_file:.0} B; per replica location: {per_replica:.0} B; per file with its {} locations: {per_file_all:.0} B",
        o.replication
    );
    if !holds.is_empty() {
        let of_op = |op: &str| {
            holds
                .iter()
                .filter(|h| h.op == op)
                .map(|h| h.max_hold)
                .max()
                .unwrap_or_default()
        };
        let top: Vec<String> = holds
            .iter()
            .take(3)
            .map(|h| {
                format!(
                    "{}.{} {:.2} ms ({} holds)",
                    h.lock,
                    h.op,
                    h.max_hold.as_secs_f64() * 1e3,
                    h.count
                )
            })
            .collect();
        println!(
            "lock holds: longest of a full report {:.2} ms; longest of all: {}",
            of_op("full_report").as_secs_f64() * 1e3,
            top.join(", ")
        );
    }
    drop(nn);
    drop(scratch);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_node_holds_its_files_in_increasing_id_order() {
        for (files, n, r) in [(1, 3, 3), (10, 3, 3), (100, 7, 3), (101, 10, 2), (5, 10, 1)] {
            let spec = SyntheticSpec {
                files,
                files_per_dir: 10,
                replication: r as u16,
                block_len: 1024,
                block_size: 128 << 20,
                owner: "u".into(),
                group: "g".into(),
                time_ms: 0,
            };
            let mut copies = vec![0u64; files as usize];
            for i in 0..n {
                let got = node_blocks(&spec, i, n, r);
                let want: Vec<(u64, u64, u64)> = (0..files)
                    .filter(|k| (i + n - k % n) % n < r)
                    .map(|k| {
                        let b = spec.block(k);
                        (b.id, b.gs, b.num_bytes)
                    })
                    .collect();
                assert_eq!(got, want, "node {i} of {n}, {files} files, replication {r}");
                for k in 0..files {
                    copies[k as usize] += u64::from(want.iter().any(|b| b.0 == spec.block(k).id));
                }
            }
            assert!(copies.iter().all(|&c| c == r), "{copies:?}");
        }
    }
}
