//! `rhdfs bench nn`: NameNode throughput and latency, operation by operation, like Hadoop's
//! NNThroughputBenchmark (`-op create|mkdirs|open|fileStatus|webFileStatus|rename|delete|
//! addBlock|blockReport|all -threads T -files N -filesPerDir P`).
//!
//! Each of T threads is its own client (`FileSystem`, its own connection) and runs its share
//! of N operations back to back; each call's latency is recorded. Printed per operation:
//! operations per second, p50 and p99 latency, and both as multiples of the loopback TCP
//! round trip measured in the same run (the floor any RPC pays); against the in-process
//! NameNode (no `-fs`) also the edit log's fsyncs per operation (below 1 when group commit
//! shares syncs). `addBlock` and `blockReport` run against simulated DataNodes (`simdn`):
//! `-datanodes D` of them register, blocks are added to files and reported received, and
//! each then sends a full report of `-blocksPerReport B` replicas; the table gives reports
//! per second and the replicas per second the NameNode processed. At the end everything is
//! deleted and the simulated DataNodes must see their replicas invalidated by the NameNode
//! (commands obeyed), unless `-keepResults`. `webFileStatus` asks `fileStatus`'s question
//! through WebHDFS over one keep-alive connection per thread (the web port: the in-process
//! NameNode's, else `--nn-http host:port`, else `dfs.namenode.http-address` on the `-fs` host),
//! and the run ends with the ratio of its p50 to `fileStatus`'s.
//!
//! The run also times one small write plus fdatasync in the NameNode's directory (in-process)
//! or the system temporary directory (`-fs`), as the edit log pays it per group commit, and
//! prints the floor of a single client's mutation: one round trip plus one fdatasync. Each
//! row gives this process's CPU time per operation (user + system; in-process that is the
//! NameNode's and the clients' together), steadier than wall time on a shared machine, and
//! beside it the NameNode's own (`nn µs/op`): in-process the CPU clocks of the threads of the
//! runtime the NameNode runs on alone (`nn_cpu`), against `-fs` that of the process `-nn-pid`
//! names (`-` without it).

pub(crate) mod latency;
mod nn_cpu;
mod ops;
pub(super) mod simdn;
mod web;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rhdfs_client::FileSystem;
use rhdfs_conf::Configuration;
use rhdfs_minicluster::MiniCluster;

use nn_cpu::{NameNodeCpu, NameNodeRuntime};
use ops::{Layout, Op};
use simdn::{Heartbeats, SimDatanode};
use web::WebClients;

const ROOT: &str = "/benchmarks/NNThroughput";

#[derive(Debug)]
struct Opts {
    ops: Vec<Op>,
    threads: usize,
    files: usize,
    files_per_dir: usize,
    datanodes: usize,
    blocks_per_report: usize,
    keep: bool,
    fs: Option<String>,
    /// `--nn-http host:port`: the NameNode web port for `webFileStatus` with `-fs`.
    http: Option<String>,
    /// `-nn-pid PID`: the NameNode process whose CPU time is read with `-fs`.
    nn_pid: Option<u32>,
    defines: Vec<String>,
}

fn parse(args: &[String]) -> anyhow::Result<Opts> {
    let mut o = Opts {
        ops: Op::ALL.to_vec(),
        threads: 8,
        files: 1000,
        files_per_dir: 4,
        datanodes: 3,
        blocks_per_report: 100,
        keep: false,
        fs: None,
        http: None,
        nn_pid: None,
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
        let num = |what: &str| -> anyhow::Result<usize> {
            val()?
                .parse()
                .with_context(|| format!("{what} takes a number"))
        };
        match a.trim_start_matches('-') {
            "op" => {
                let v = val()?;
                o.ops = if v.eq_ignore_ascii_case("all") {
                    Op::ALL.to_vec()
                } else {
                    v.split(',')
                        .map(|s| Op::parse(s.trim()).with_context(|| format!("unknown -op `{s}`")))
                        .collect::<anyhow::Result<_>>()?
                };
            }
            "threads" => o.threads = num(a)?,
            "files" => o.files = num(a)?,
            "filesPerDir" => o.files_per_dir = num(a)?,
            "datanodes" => o.datanodes = num(a)?,
            "blocksPerReport" => o.blocks_per_report = num(a)?,
            "keepResults" => {
                o.keep = true;
                i += 1;
                continue;
            }
            "fs" => o.fs = Some(val()?),
            "nn-http" => o.http = Some(val()?),
            "nn-pid" => {
                o.nn_pid = Some(
                    val()?
                        .parse()
                        .with_context(|| format!("{a} takes a process id"))?,
                )
            }
            "D" => o.defines.push(val()?),
            d if a.starts_with("-D") && d.len() > 1 => {
                o.defines.push(a[2..].to_string());
                i += 1;
                continue;
            }
            _ => bail!("nn: unknown option `{a}`"),
        }
        i += 2;
    }
    if o.threads == 0 || o.files == 0 || o.files_per_dir == 0 {
        bail!("-threads, -files and -filesPerDir must be at least 1");
    }
    if o.ops.iter().any(|op| op.needs_datanodes()) && o.datanodes == 0 {
        o.ops.retain(|op| !op.needs_datanodes());
    }
    if o.ops.contains(&Op::BlockReport) && o.blocks_per_report == 0 {
        bail!("-blocksPerReport must be at least 1");
    }
    Ok(o)
}

struct Row {
    op: Op,
    ops: usize,
    elapsed: Duration,
    samples: Vec<Duration>,
    failures: usize,
    fsyncs: Option<u64>,
    /// This process's CPU time (user + system) over the phase, seconds.
    cpu: f64,
    /// The NameNode's CPU time over the phase, when known.
    nn_cpu: Option<Duration>,
    /// blockReport: replicas processed.
    replicas: Option<u64>,
}

/// What a run has done to the namespace so far.
struct State {
    layout: Layout,
    files_exist: bool,
    renamed: bool,
    /// Block files created so far (numbered per thread, `k` below this).
    block_files: usize,
}

struct Bench {
    o: Opts,
    clients: Vec<Arc<FileSystem>>,
    dns: Vec<Arc<SimDatanode>>,
    /// Keep-alive WebHDFS connections, when `webFileStatus` runs.
    web: Option<Arc<WebClients>>,
    cluster: Option<MiniCluster>,
    nn_cpu: NameNodeCpu,
    state: State,
}

impl Bench {
    fn fsyncs(&self) -> Option<u64> {
        self.cluster.as_ref().and_then(|c| {
            c.namenode()
                .namesystem()
                .durable()
                .map(|d| d.log().fsync_count())
        })
    }

    /// Runs `f(thread, fs, k)` for every k below `n`, thread t taking t, t+T, ...; returns
    /// the latencies and the number of failures.
    async fn spread<F, Fut>(&self, n: usize, f: F) -> anyhow::Result<(Vec<Duration>, usize)>
    where
        F: Fn(usize, Arc<FileSystem>, usize) -> Fut + Send + Sync + 'static + Clone,
        Fut: Future<Output = anyhow::Result<Duration>> + Send,
    {
        let threads = self.clients.len();
        let mut tasks = Vec::with_capacity(threads);
        for (t, fs) in self.clients.iter().enumerate() {
            let (fs, f) = (Arc::clone(fs), f.clone());
            tasks.push(tokio::spawn(async move {
                let mut samples = Vec::new();
                let mut failures = 0usize;
                for k in (t..n).step_by(threads) {
                    match f(t, Arc::clone(&fs), k).await {
                        Ok(d) => samples.push(d),
                        Err(e) => {
                            if failures < 3 {
                                eprintln!("operation {k} of thread {t} failed: {e:#}");
                            }
                            failures += 1;
                        }
                    }
                }
                (samples, failures)
            }));
        }
        let mut all = Vec::with_capacity(n);
        let mut failures = 0;
        for t in tasks {
            let (s, f) = t.await.context("a benchmark thread panicked")?;
            all.extend(s);
            failures += f;
        }
        Ok((all, failures))
    }

    /// Creates the files the read and rename ops need, untimed, if no phase has.
    async fn ensure_files(&mut self) -> anyhow::Result<()> {
        if self.state.files_exist {
            return Ok(());
        }
        let layout = self.state.layout.clone();
        let (_, failed) = self
            .spread(self.o.files, move |t, fs, k| {
                let layout = layout.clone();
                async move { ops::metadata_op(&fs, Op::Create, &layout, t, k, false).await }
            })
            .await?;
        if failed > 0 {
            bail!("setup: {failed} creates failed");
        }
        println!("(setup: {} files created)", self.o.files);
        self.state.files_exist = true;
        self.state.renamed = false;
        Ok(())
    }

    async fn run_op(&mut self, op: Op) -> anyhow::Result<Row> {
        match op {
            Op::Open | Op::FileStatus | Op::WebFileStatus | Op::Rename | Op::Delete => {
                self.ensure_files().await?
            }
            Op::Create if self.state.files_exist => {
                bail!("create: the files exist already (run create before rename/delete)")
            }
            _ => {}
        }
        if op == Op::Rename && self.state.renamed {
            bail!("rename: the files are renamed already");
        }
        let before = self.fsyncs();
        // The NameNode's interval lies inside the process's: read after, and before, it.
        let cpu_before = nn_cpu::own_process_cpu();
        let nn_before = self.nn_cpu.read();
        let start = Instant::now();
        let (samples, failures, ops, replicas) = match op {
            Op::AddBlock => {
                let (s, f) = self.add_blocks(self.o.files).await?;
                (s, f, self.o.files, None)
            }
            Op::BlockReport => {
                let (s, f, replicas) = self.block_reports().await?;
                (s, f, self.dns.len(), Some(replicas))
            }
            Op::WebFileStatus => {
                let web = self
                    .web
                    .clone()
                    .context("webFileStatus without web connections")?;
                let (layout, renamed) = (self.state.layout.clone(), self.state.renamed);
                let (s, f) = self
                    .spread(self.o.files, move |t, _fs, k| {
                        let (layout, web) = (layout.clone(), Arc::clone(&web));
                        async move { web.file_status(t, &layout.file(t, k, renamed)).await }
                    })
                    .await?;
                (s, f, self.o.files, None)
            }
            _ => {
                let (layout, renamed) = (self.state.layout.clone(), self.state.renamed);
                let (s, f) = self
                    .spread(self.o.files, move |t, fs, k| {
                        let layout = layout.clone();
                        async move { ops::metadata_op(&fs, op, &layout, t, k, renamed).await }
                    })
                    .await?;
                (s, f, self.o.files, None)
            }
        };
        let elapsed = start.elapsed();
        let nn_cpu = nn_before
            .zip(self.nn_cpu.read())
            .map(|(b, a)| a.saturating_sub(b));
        let cpu = nn_cpu::own_process_cpu()
            .saturating_sub(cpu_before)
            .as_secs_f64();
        match op {
            Op::Create => self.state.files_exist = true,
            Op::Rename => self.state.renamed = true,
            Op::Delete => {
                self.state.files_exist = false;
                self.state.renamed = false;
            }
            _ => {}
        }
        Ok(Row {
            op,
            ops,
            elapsed,
            samples,
            failures,
            fsyncs: before.zip(self.fsyncs()).map(|(b, a)| a.saturating_sub(b)),
            cpu,
            nn_cpu,
            replicas,
        })
    }

    /// `n` more one-block files on the simulated DataNodes; addBlock latencies.
    async fn add_blocks(&mut self, n: usize) -> anyhow::Result<(Vec<Duration>, usize)> {
        let first = self.state.block_files;
        self.state.block_files += n;
        let (layout, dns) = (self.state.layout.clone(), self.dns.clone());
        self.spread(n, move |t, fs, k| {
            let (layout, dns) = (layout.clone(), dns.clone());
            async move { ops::file_with_block(&fs, &layout.block_file(t, first + k), &dns).await }
        })
        .await
    }

    /// Gives every simulated DataNode at least `-blocksPerReport` replicas (untimed), then
    /// times one full report from each, `-threads` at a time.
    async fn block_reports(&mut self) -> anyhow::Result<(Vec<Duration>, usize, u64)> {
        let want = self.o.blocks_per_report;
        let replication =
            usize::from(self.clients[0].client_conf().replication).clamp(1, self.dns.len().max(1));
        for _ in 0..8 {
            let mut least = usize::MAX;
            for dn in &self.dns {
                least = least.min(dn.block_count().await);
            }
            if least >= want {
                break;
            }
            let more = ((want - least) * self.dns.len()).div_ceil(replication);
            let (_, failed) = self.add_blocks(more).await?;
            if failed > 0 {
                bail!("blockReport setup: {failed} files could not get a block");
            }
        }
        let mut reports = Vec::with_capacity(self.dns.len());
        for dn in &self.dns {
            let lease = dn.report_lease().await?;
            let blocks = dn.snapshot().await;
            reports.push((Arc::clone(dn), dn.full_report(lease, &blocks)));
        }
        let replicas: u64 = reports.iter().map(|(_, r)| r.replicas).sum();
        let threads = self.o.threads.min(reports.len()).max(1);
        let mut queues: Vec<Vec<_>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, r) in reports.into_iter().enumerate() {
            queues[i % threads].push(r);
        }
        let tasks: Vec<_> = queues
            .into_iter()
            .map(|q| {
                tokio::spawn(async move {
                    let mut out = Vec::new();
                    for (dn, report) in q {
                        let t = Instant::now();
                        out.push(dn.send_report(report).await.map(|()| t.elapsed()));
                    }
                    out
                })
            })
            .collect();
        let (mut samples, mut failures) = (Vec::new(), 0);
        for t in tasks {
            for r in t.await.context("a report task panicked")? {
                match r {
                    Ok(d) => samples.push(d),
                    Err(e) => {
                        eprintln!("blockReport failed: {e:#}");
                        failures += 1;
                    }
                }
            }
        }
        Ok((samples, failures, replicas))
    }

    /// Deletes the run's directory; with simulated DataNodes, waits until the NameNode has
    /// had every replica invalidated and the DataNodes have dropped them.
    async fn clean(&self) -> anyhow::Result<bool> {
        let fs = &self.clients[0];
        fs.delete(&self.state.layout.base, true).await?;
        if self.dns.is_empty() {
            return Ok(true);
        }
        let start = Instant::now();
        let deadline = start + Duration::from_secs(120);
        loop {
            let mut left = 0;
            for dn in &self.dns {
                left += dn.block_count().await;
            }
            if left == 0 {
                println!(
                    "clean: every replica on the {} simulated DataNodes invalidated by the \
                     NameNode and dropped in {:.1} s",
                    self.dns.len(),
                    start.elapsed().as_secs_f64()
                );
                return Ok(true);
            }
            if Instant::now() > deadline {
                println!(
                    "clean: {left} replicas still on simulated DataNodes after {:.0} s",
                    start.elapsed().as_secs_f64()
                );
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Runs `rhdfs bench nn ARGS`; exit code 1 when any operation failed.
pub async fn run(args: Vec<String>) -> anyhow::Result<i32> {
    let o = parse(&args)?;
    let mut conf = Configuration::from_env()?;
    for d in &o.defines {
        conf.apply_define(d)?;
    }
    let (cluster, uri, nn_cpu) = match &o.fs {
        Some(u) => (
            None,
            u.clone(),
            o.nn_pid.map_or(NameNodeCpu::Unknown, NameNodeCpu::Process),
        ),
        None => {
            // No real DataNodes: the block operations use simulated ones. Invalidation
            // runs every second so the final clean-up does not wait on the defaults.
            let mut b = MiniCluster::builder()
                .datanodes(0)
                .conf("dfs.namenode.redundancy.interval.seconds", "1")
                .conf("dfs.namenode.invalidate.work.pct.per.iteration", "1.0");
            for d in &o.defines {
                if let Some((k, v)) = d.split_once('=') {
                    b = b.conf(k.trim(), v.trim().to_string());
                }
            }
            // On a runtime of its own, so that its CPU time is told from the clients'.
            let rt = Arc::new(NameNodeRuntime::new().context("the NameNode's runtime")?);
            let handle = rt.handle().cloned().context("the NameNode's runtime")?;
            let c = handle
                .spawn(b.build())
                .await
                .context("the NameNode's start panicked")?
                .context("starting the in-process NameNode")?;
            let uri = c.uri();
            (Some(c), uri, NameNodeCpu::InProcess(rt))
        }
    };
    let rtt = latency::loopback_round_trip(2000).await?;
    println!(
        "nn: {} files, {} threads, {} files per directory against {uri}{}",
        o.files,
        o.threads,
        o.files_per_dir,
        if cluster.is_some() {
            " (in-process NameNode)"
        } else {
            ""
        }
    );
    println!(
        "loopback TCP round trip (p50 of 2000 one-byte pings, this run): {:.1} µs",
        rtt.as_secs_f64() * 1e6
    );
    let sync_dir = match &cluster {
        Some(c) => c.base_dir().to_path_buf(),
        None => std::env::temp_dir(),
    };
    let probe_dir = sync_dir.clone();
    let fsync = tokio::task::spawn_blocking(move || latency::fdatasync_cost(&probe_dir, 200, 128))
        .await
        .context("the fdatasync probe panicked")??;
    println!(
        "fdatasync of a 128-byte append into preallocated space (p50 of 200, this run, in {}): \
         {:.1} µs",
        sync_dir.display(),
        fsync.as_secs_f64() * 1e6
    );
    println!(
        "single-client mutation floor (round trip + fdatasync): {:.1} µs; issue 17's goal: \
         at most {:.1} µs (+ 25 µs)",
        (rtt + fsync).as_secs_f64() * 1e6,
        (rtt + fsync).as_secs_f64() * 1e6 + 25.0
    );

    let mut clients = Vec::with_capacity(o.threads);
    for _ in 0..o.threads {
        clients.push(Arc::new(
            FileSystem::connect_with(Some(&uri), conf.clone())
                .await
                .context("connecting a client")?,
        ));
    }
    let needs_dns = o.ops.iter().any(|op| op.needs_datanodes());
    let (dns, heartbeats) = if needs_dns {
        let addr = uri
            .trim_start_matches("hdfs://")
            .trim_end_matches('/')
            .to_string();
        let dns = simdn::start(&addr, o.datanodes, 64)
            .await
            .context("registering simulated DataNodes")?;
        println!("{} simulated DataNodes registered", dns.len());
        let hb = Heartbeats::start(dns.clone(), Duration::from_secs(1));
        (dns, Some(hb))
    } else {
        (Vec::new(), None)
    };
    let web = if o.ops.contains(&Op::WebFileStatus) {
        let addr = match &cluster {
            Some(c) => c.namenode().http_addr().to_string(),
            None => web::http_address(o.http.as_deref(), &conf, &uri)?,
        };
        let user = clients[0].user().to_string();
        Some(Arc::new(
            WebClients::connect(&addr, o.threads, &user).await?,
        ))
    } else {
        None
    };
    let base = format!("{ROOT}/{}-{}", std::process::id(), rand_suffix());
    let mut bench = Bench {
        state: State {
            layout: Layout {
                base,
                files_per_dir: o.files_per_dir,
            },
            files_exist: false,
            renamed: false,
            block_files: 0,
        },
        o,
        clients,
        dns,
        web,
        cluster,
        nn_cpu,
    };

    let mut failed = 0;
    let mut p50s = Vec::new();
    for (i, op) in bench.o.ops.clone().into_iter().enumerate() {
        let row = bench.run_op(op).await?;
        failed += row.failures;
        p50s.push((op, print_row(&row, bench.o.threads, rtt, i == 0)));
    }
    let p50 = |op: Op| p50s.iter().find(|(o, _)| *o == op).map(|(_, d)| *d);
    if let (Some(web), Some(rpc)) = (p50(Op::WebFileStatus), p50(Op::FileStatus)) {
        println!(
            "webFileStatus / fileStatus at p50: {:.2} (WebHDFS GETFILESTATUS over keep-alive \
             HTTP against RPC getFileInfo)",
            web.as_secs_f64() / rpc.as_secs_f64().max(1e-9)
        );
    }
    if !bench.o.keep && !bench.clean().await? {
        failed += 1;
    }
    drop(heartbeats);
    for fs in &bench.clients {
        fs.close().await;
    }
    if let Some(c) = bench.cluster.take() {
        match &bench.nn_cpu {
            NameNodeCpu::InProcess(rt) => {
                if let Some(h) = rt.handle() {
                    h.spawn(c.shutdown())
                        .await
                        .context("the NameNode's shutdown panicked")?;
                }
            }
            _ => c.shutdown().await,
        }
    }
    Ok(i32::from(failed > 0))
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()))
}

/// Prints one operation's row; returns its p50 latency.
fn print_row(r: &Row, threads: usize, rtt: Duration, header: bool) -> Duration {
    if header {
        println!(
            "{:<13} {:>7} {:>7} {:>8} {:>10} {:>9} {:>9} {:>8} {:>8} {:>9} {:>10} {:>9} {:>6}",
            "op",
            "ops",
            "threads",
            "seconds",
            "ops/s",
            "p50 µs",
            "p99 µs",
            "p50/rtt",
            "p99/rtt",
            "fsyncs/op",
            "cpu µs/op",
            "nn µs/op",
            "failed"
        );
    }
    let mut samples = r.samples.clone();
    let (p50, p99) = latency::p50_p99(&mut samples);
    let secs = r.elapsed.as_secs_f64();
    let done = r.ops - r.failures.min(r.ops);
    let rate = if secs > 0.0 {
        done as f64 / secs
    } else {
        f64::INFINITY
    };
    let per_op = r.fsyncs.map_or_else(
        || "-".to_string(),
        |f| format!("{:.3}", f as f64 / r.ops.max(1) as f64),
    );
    let nn_per_op = r.nn_cpu.map_or_else(
        || "-".to_string(),
        |c| format!("{:.1}", c.as_secs_f64() * 1e6 / r.ops.max(1) as f64),
    );
    println!(
        "{:<13} {:>7} {:>7} {:>8.3} {:>10.0} {:>9.0} {:>9.0} {:>8.1} {:>8.1} {:>9} {:>10.1} {:>9} {:>6}",
        r.op.name(),
        r.ops,
        threads,
        secs,
        rate,
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6,
        latency::times(p50, rtt),
        latency::times(p99, rtt),
        per_op,
        r.cpu * 1e6 / r.ops.max(1) as f64,
        nn_per_op,
        r.failures
    );
    if let Some(n) = r.replicas {
        println!(
            "{:<13} {n} replicas in {} full reports: {:.0} replicas/s",
            "",
            r.ops,
            if secs > 0.0 {
                n as f64 / secs
            } else {
                f64::INFINITY
            }
        );
    }
    p50
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_hadoops_options() -> anyhow::Result<()> {
        let o = parse(&s(&[
            "-op",
            "create,open",
            "-threads",
            "4",
            "-files",
            "10",
            "-filesPerDir",
            "2",
            "-keepResults",
            "-Dfoo=bar",
        ]))?;
        assert_eq!(o.ops, vec![Op::Create, Op::Open]);
        assert_eq!((o.threads, o.files, o.files_per_dir), (4, 10, 2));
        assert!(o.keep);
        assert_eq!(o.defines, vec!["foo=bar".to_string()]);
        assert_eq!(parse(&s(&["-op", "all"]))?.ops, Op::ALL.to_vec());
        let no_dns = parse(&s(&["-datanodes", "0"]))?;
        assert!(!no_dns.ops.iter().any(|op| op.needs_datanodes()));
        assert!(parse(&s(&["-threads", "0"])).is_err());
        assert!(parse(&s(&["-op", "replication"])).is_err());
        assert!(parse(&s(&["--bogus"])).is_err());
        Ok(())
    }
}
