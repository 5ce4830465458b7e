//! Real-process clusters for integration tests: an `rhdfs namenode` and `rhdfs datanode`
//! processes on 127.0.0.1, configured with `-D` keys (defaults for quick tests, then the
//! test's own), each logging to `<dir>/nn.log` / `<dir>/dn<i>.log`; all are killed on drop.
//! Tests send them signals by pid (SIGKILL, SIGSTOP/SIGCONT), restart the NameNode, talk to
//! it through an `rhdfs-client` FileSystem, `rhdfs` admin commands and its web port, and
//! look at the DataNodes' disks.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_conf::Configuration;
use rhdfs_datanode::meta;
use rhdfs_testkit::ports::{self, ReservedPort};

/// What to start, and the test's own keys.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    pub datanodes: usize,
    /// `key=value` for every daemon and the client configuration, after the defaults.
    pub conf: Vec<String>,
    /// `key=value` for the NameNode only (after `conf`).
    pub namenode_conf: Vec<String>,
    /// `key=value` for the DataNodes only (after `conf`).
    pub datanode_conf: Vec<String>,
    /// RUST_LOG of the daemons.
    pub log: String,
    /// Data directories per DataNode: 1 is `<dir>/data<i>`, more are
    /// `<dir>/data<i>/vol<j>` (see [`Cluster::volume_dir`]).
    pub volumes_per_datanode: usize,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            datanodes: 3,
            conf: Vec::new(),
            namenode_conf: Vec::new(),
            datanode_conf: Vec::new(),
            log: "warn".into(),
            volumes_per_datanode: 1,
        }
    }
}

/// The processes; all are killed when dropped.
pub struct Cluster {
    dir: PathBuf,
    /// Reserved below the ephemeral range for the cluster's life: the NameNode is restarted
    /// on them, and a port from bind(0) could be taken while it is down (see testkit::ports).
    port: ReservedPort,
    http_port: ReservedPort,
    opts: ClusterOptions,
    namenode: Option<Child>,
    datanodes: Vec<Option<Child>>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in self
            .namenode
            .iter_mut()
            .chain(self.datanodes.iter_mut().flatten())
        {
            // A stopped process still dies of SIGKILL.
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Sends `signal` (a name kill(1) knows: KILL, STOP, CONT, TERM) to process `pid`.
pub fn signal(pid: u32, signal: &str) -> anyhow::Result<()> {
    let st = Command::new("kill")
        .arg("-s")
        .arg(signal)
        .arg(pid.to_string())
        .status()
        .context("running kill")?;
    ensure!(st.success(), "kill -s {signal} {pid}: {st}");
    Ok(())
}

impl Cluster {
    fn common(&self) -> Vec<String> {
        let d = |kv: String| ["-D".to_string(), kv];
        let mut v = vec![
            "--config".to_string(),
            self.dir.join("conf").to_string_lossy().into_owned(),
        ];
        for kv in [
            format!("dfs.namenode.rpc-address=127.0.0.1:{}", self.port.port()),
            format!("fs.defaultFS=hdfs://127.0.0.1:{}", self.port.port()),
            format!("dfs.namenode.name.dir={}", self.dir.join("name").display()),
            format!(
                "dfs.namenode.http-address=127.0.0.1:{}",
                self.http_port.port()
            ),
            "dfs.heartbeat.interval=1".to_string(),
            "dfs.namenode.safemode.extension=0".to_string(),
            "dfs.namenode.heartbeat.recheck-interval=5000".to_string(),
            "dfs.blockreport.initialDelay=0".to_string(),
            "dfs.replication=2".to_string(),
            "ipc.client.connect.max.retries=3".to_string(),
            "ipc.client.connect.retry.interval=200".to_string(),
        ]
        .into_iter()
        .chain(self.opts.conf.iter().cloned())
        {
            v.extend(d(kv));
        }
        v
    }

    fn spawn(&self, args: &[String], log: &str) -> anyhow::Result<Child> {
        let out = File::options()
            .create(true)
            .append(true)
            .open(self.dir.join(log))?;
        Ok(Command::new(env!("CARGO_BIN_EXE_rhdfs"))
            .args(args)
            .env("RUST_LOG", &self.opts.log)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()?)
    }

    /// Formats a NameNode in `dir`, starts it and three DataNodes with the default keys.
    pub fn start(dir: &Path) -> anyhow::Result<Self> {
        Self::start_with(dir, ClusterOptions::default())
    }

    /// Formats a NameNode in `dir`, starts it and `opts.datanodes` DataNodes.
    pub fn start_with(dir: &Path, opts: ClusterOptions) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir.join("conf"))?;
        let mut c = Cluster {
            dir: dir.to_path_buf(),
            port: ports::reserve()?,
            http_port: ports::reserve()?,
            opts,
            namenode: None,
            datanodes: Vec::new(),
        };
        c.format_namenode()?;
        c.start_namenode()?;
        for i in 0..c.opts.datanodes {
            c.datanodes.push(None);
            c.start_datanode(i)?;
        }
        Ok(c)
    }

    /// `rhdfs namenode -format` with the cluster's keys.
    pub fn format_namenode(&self) -> anyhow::Result<()> {
        let mut fmt = self.common();
        fmt.push("namenode".into());
        fmt.rotate_right(1);
        fmt.push("-format".into());
        let st = Command::new(env!("CARGO_BIN_EXE_rhdfs"))
            .args(&fmt)
            .env("RUST_LOG", "warn")
            .output()?;
        ensure!(
            st.status.success(),
            "format failed: {}",
            String::from_utf8_lossy(&st.stderr)
        );
        Ok(())
    }

    /// Starts the NameNode process (on the same ports and name directory).
    pub fn start_namenode(&mut self) -> anyhow::Result<()> {
        let mut a = vec!["namenode".to_string()];
        a.extend(self.common());
        for kv in &self.opts.namenode_conf {
            a.push("-D".into());
            a.push(kv.clone());
        }
        self.namenode = Some(self.spawn(&a, "nn.log")?);
        Ok(())
    }

    /// Kills the NameNode with SIGKILL and reaps it.
    pub fn kill_namenode(&mut self) -> anyhow::Result<()> {
        if let Some(mut c) = self.namenode.take() {
            c.kill()?; // SIGKILL on Unix
            c.wait()?;
        }
        Ok(())
    }

    /// SIGKILL, then a new NameNode process on the same ports and name directory.
    pub fn restart_namenode(&mut self) -> anyhow::Result<()> {
        self.kill_namenode()?;
        self.start_namenode()
    }

    /// Starts DataNode `i` (data directory `<dir>/data<i>`, ports chosen by the OS).
    pub fn start_datanode(&mut self, i: usize) -> anyhow::Result<()> {
        let mut a = vec!["datanode".to_string()];
        a.extend(self.common());
        let dirs: Vec<String> = (0..self.opts.volumes_per_datanode.max(1))
            .map(|j| self.volume_dir(i, j).display().to_string())
            .collect();
        for kv in [
            format!("dfs.datanode.data.dir={}", dirs.join(",")),
            "dfs.datanode.address=127.0.0.1:0".to_string(),
            "dfs.datanode.ipc.address=127.0.0.1:0".to_string(),
            "dfs.datanode.http.address=127.0.0.1:0".to_string(),
        ]
        .into_iter()
        .chain(self.opts.datanode_conf.iter().cloned())
        {
            a.push("-D".into());
            a.push(kv);
        }
        let child = self.spawn(&a, &format!("dn{i}.log"))?;
        self.datanodes[i] = Some(child);
        Ok(())
    }

    /// Kills DataNode `i` with SIGKILL and reaps it.
    pub fn kill_datanode(&mut self, i: usize) -> anyhow::Result<()> {
        if let Some(mut c) = self.datanodes.get_mut(i).and_then(Option::take) {
            c.kill()?;
            c.wait()?;
        }
        Ok(())
    }

    /// DataNode `i`'s exit status once its process ended by itself (reaped then), None
    /// while it runs or when it was never started or already killed.
    pub fn datanode_exit(&mut self, i: usize) -> anyhow::Result<Option<std::process::ExitStatus>> {
        let Some(slot) = self.datanodes.get_mut(i) else {
            return Ok(None);
        };
        let Some(child) = slot.as_mut() else {
            return Ok(None);
        };
        let status = child.try_wait()?;
        if status.is_some() {
            *slot = None;
        }
        Ok(status)
    }

    /// The NameNode's pid, while it runs.
    pub fn namenode_pid(&self) -> Option<u32> {
        self.namenode.as_ref().map(Child::id)
    }

    /// DataNode `i`'s pid, while it runs.
    pub fn datanode_pid(&self, i: usize) -> Option<u32> {
        self.datanodes.get(i)?.as_ref().map(Child::id)
    }

    pub fn datanode_count(&self) -> usize {
        self.datanodes.len()
    }

    /// The cluster directory (name dir, data dirs, logs).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn data_dir(&self, i: usize) -> PathBuf {
        self.dir.join(format!("data{i}"))
    }

    /// Data directory `j` of DataNode `i` (its only one, `data<i>`, with one volume).
    pub fn volume_dir(&self, i: usize, j: usize) -> PathBuf {
        if self.opts.volumes_per_datanode <= 1 {
            self.data_dir(i)
        } else {
            self.data_dir(i).join(format!("vol{j}"))
        }
    }

    /// `hdfs://127.0.0.1:<rpc port>`.
    pub fn uri(&self) -> String {
        format!("hdfs://127.0.0.1:{}", self.port.port())
    }

    /// The NameNode's web address, `127.0.0.1:<port>`.
    pub fn http_addr(&self) -> String {
        format!("127.0.0.1:{}", self.http_port.port())
    }

    /// A daemon's whole log (`nn.log`, `dn<i>.log`).
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }

    /// The last 40 lines of a daemon's log.
    pub fn log_tail(&self, name: &str) -> String {
        let s = self.log(name);
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// The client side of the cluster's keys.
    pub fn client_conf(&self) -> Configuration {
        let mut conf = Configuration::new();
        conf.set("dfs.replication", "2");
        conf.set("ipc.client.connect.max.retries", "3");
        conf.set("ipc.client.connect.retry.interval", "200");
        for kv in &self.opts.conf {
            conf.apply_define(kv)
                .expect("ClusterOptions::conf entries are key=value");
        }
        conf
    }

    /// A client FileSystem of the NameNode (it may still be in safe mode).
    pub async fn connect(&self) -> anyhow::Result<FileSystem> {
        Ok(FileSystem::connect_with(Some(&self.uri()), self.client_conf()).await?)
    }

    /// GET `path_and_query` on the NameNode's web port: the body of a 200 answer.
    pub async fn http_get(&self, path_and_query: &str) -> anyhow::Result<String> {
        let (code, body) = rhdfs_namenode::http::client::get(
            &self.http_addr(),
            path_and_query,
            Duration::from_secs(30),
        )
        .await
        .with_context(|| format!("GET {path_and_query}"))?;
        ensure!(code == 200, "GET {path_and_query}: {code}\n{body}");
        Ok(body)
    }

    /// The NameNode's `/jmx?qry=<bean>` document.
    pub async fn jmx(&self, bean: &str) -> anyhow::Result<String> {
        self.http_get(&format!("/jmx?qry={bean}")).await
    }

    /// Runs `rhdfs <args>` against the NameNode; its stdout (a failing exit is an error).
    pub async fn admin(&self, args: &[&str]) -> anyhow::Result<String> {
        let out = tokio::time::timeout(
            Duration::from_secs(60),
            tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"))
                .args(args)
                .arg("-D")
                .arg(format!("dfs.namenode.http-address={}", self.http_addr()))
                .arg("-D")
                .arg(format!("fs.defaultFS={}", self.uri()))
                .env("HADOOP_CONF_DIR", self.dir.join("conf"))
                .env("RUST_LOG", "error")
                .output(),
        )
        .await
        .with_context(|| format!("rhdfs {args:?} timed out"))??;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        ensure!(
            out.status.success(),
            "rhdfs {args:?}: {}\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(stdout)
    }

    /// `rhdfs fsck /` against the NameNode: every block of every file must be there.
    pub async fn fsck(&self) -> anyhow::Result<()> {
        let stdout = self.admin(&["fsck", "/"]).await?;
        ensure!(stdout.trim_end().ends_with("is HEALTHY"), "fsck:\n{stdout}");
        Ok(())
    }

    /// Waits until `rhdfs dfsadmin -report` shows no replicated block pending deletion and
    /// no held orphan replica.
    pub async fn wait_pending_deletions_drained(&self) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let report = self.admin(&["dfsadmin", "-report"]).await?;
            // The first such line is the replicated blocks' (the second, erasure coding's).
            let pending = report
                .lines()
                .find_map(|l| l.trim().strip_prefix("Pending deletion blocks: "))
                .with_context(|| format!("no pending deletion count in\n{report}"))?
                .trim()
                .parse::<u64>()?;
            // Replicas held by the storages' first reports after a restart (issue 11) are
            // queued for deletion once the NameNode is out of safe mode: wait for those too.
            let held = report.contains("\tHeld orphan replicas: ");
            if pending == 0 && !held {
                return Ok(());
            }
            ensure!(
                Instant::now() < deadline,
                "{pending} blocks still pending deletion after 60 s\n{report}"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Every block of every file, as `rhdfs fsck / -files -blocks` lists them: id ->
    /// generation stamp. Fails if a file is still open (its last block is not final).
    pub async fn namespace_blocks(&self) -> anyhow::Result<BTreeMap<u64, u64>> {
        let out = self
            .admin(&["fsck", "/", "-files", "-blocks", "-openforwrite"])
            .await?;
        ensure!(
            !out.contains("OPENFORWRITE"),
            "files still open after the last restart:\n{out}"
        );
        let mut blocks = BTreeMap::new();
        for line in out.lines() {
            // "<n>. <pool>:blk_<id>_<gs> len=<len> Live_repl=<n> ..."
            let Some((num, rest)) = line.split_once(". ") else {
                continue;
            };
            if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Some(ext) = rest.split_whitespace().next() else {
                continue;
            };
            let blk = ext.rsplit_once(':').map_or(ext, |(_, b)| b);
            let (id, gs) = blk
                .strip_prefix("blk_")
                .and_then(|r| r.split_once('_'))
                .and_then(|(id, gs)| Some((id.parse::<u64>().ok()?, gs.parse::<u64>().ok()?)))
                .with_context(|| format!("fsck block line {line:?}"))?;
            ensure!(
                blocks.insert(id, gs).is_none(),
                "blk_{id} listed twice by fsck"
            );
        }
        Ok(blocks)
    }

    /// The finalized replicas on the DataNodes' disks: block id -> generation stamps of
    /// its replicas (one entry per replica, from `blk_<id>_<gs>.meta`).
    pub async fn disk_replicas(&self) -> anyhow::Result<BTreeMap<u64, Vec<u64>>> {
        let dirs: Vec<PathBuf> = (0..self.datanodes.len())
            .map(|i| self.data_dir(i))
            .collect();
        tokio::task::spawn_blocking(move || finalized_replicas(&dirs)).await?
    }

    /// Waits until the NameNode counts every running DataNode live: leaving safe mode
    /// needs only the reported blocks, so a write right after it may find no DataNode
    /// registered yet ("could only be written to 0 of the 1 minReplication nodes").
    pub async fn wait_datanodes_live(&self) -> anyhow::Result<()> {
        let running = self.datanodes.iter().flatten().count() as u64;
        let live = std::cell::Cell::new(0);
        let res = wait_for("every DataNode live", Duration::from_secs(90), || async {
            let fsn = self
                .jmx("Hadoop:service=NameNode,name=FSNamesystem")
                .await?;
            live.set(jmx_number(&fsn, "NumLiveDataNodes").context("no NumLiveDataNodes")?);
            Ok(live.get() >= running)
        })
        .await;
        res.with_context(|| {
            format!(
                "{} of {running} DataNodes live\n{}",
                live.get(),
                self.log_tail("nn.log")
            )
        })
    }

    /// Connects once the NameNode accepts connections, has left safe mode and counts
    /// every running DataNode live.
    pub async fn client_out_of_safe_mode(&self, probe: &str) -> anyhow::Result<FileSystem> {
        let deadline = Instant::now() + Duration::from_secs(90);
        let uri = self.uri();
        let mut last = String::new();
        while Instant::now() < deadline {
            if let Ok(Ok(fs)) = tokio::time::timeout(
                Duration::from_secs(10),
                FileSystem::connect_with(Some(&uri), self.client_conf()),
            )
            .await
            {
                match tokio::time::timeout(Duration::from_secs(10), fs.mkdirs(probe, None)).await {
                    Ok(Ok(_)) => {
                        self.wait_datanodes_live().await?;
                        return Ok(fs);
                    }
                    Ok(Err(e)) => last = e.to_string(),
                    Err(_) => last = "mkdirs timed out".into(),
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        bail!(
            "the NameNode did not leave safe mode: {last}\n{}",
            self.log_tail("nn.log")
        )
    }
}

/// A numeric attribute of a `/jmx` document (`"Name" : 12`).
pub fn jmx_number(jmx: &str, attr: &str) -> Option<u64> {
    let key = format!("\"{attr}\" : ");
    let rest = &jmx[jmx.find(&key)? + key.len()..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// A finalized replica found on a DataNode's disk.
#[derive(Clone, Debug)]
pub struct ReplicaFiles {
    pub id: u64,
    /// The generation stamp its meta file names (0 when it has none).
    pub gs: u64,
    /// `blk_<id>`.
    pub block: PathBuf,
    /// `blk_<id>_<gs>.meta`, when there is one.
    pub meta: Option<PathBuf>,
}

/// The finalized replicas under the DataNode data directories `dirs`
/// (`.../current/<bpid>/current/finalized/subdir*/subdir*/blk_<id>` with its
/// `blk_<id>_<gs>.meta`), sorted by block id. A meta file without its block file is no
/// replica; a directory or file removed while walking (the DataNode deleting a replica) is
/// passed over.
pub fn finalized_replica_files(dirs: &[PathBuf]) -> anyhow::Result<Vec<ReplicaFiles>> {
    let mut out = Vec::new();
    let mut stack: Vec<(PathBuf, bool)> = dirs.iter().map(|d| (d.clone(), false)).collect();
    while let Some((dir, finalized)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
        };
        let mut blocks = Vec::new();
        let mut metas = BTreeMap::new();
        for e in entries.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push((e.path(), finalized || name == "finalized"));
                continue;
            }
            if let Some(id) = meta::parse_block_file_name(&name) {
                blocks.push((id, e.path()));
            } else if let Some((id, gs)) = meta::parse_meta_file_name(&name) {
                metas.insert(id, (gs, e.path()));
            }
        }
        if finalized {
            for (id, block) in blocks {
                let (gs, meta) = match metas.remove(&id) {
                    Some((gs, meta)) => (gs, Some(meta)),
                    None => (0, None),
                };
                out.push(ReplicaFiles {
                    id,
                    gs,
                    block,
                    meta,
                });
            }
        }
    }
    out.sort_by(|a, b| (a.id, &a.block).cmp(&(b.id, &b.block)));
    Ok(out)
}

/// Finalized replicas under the DataNode data directories `dirs`: block id -> the
/// generation stamp of each replica (0 for a block file without its meta file).
pub fn finalized_replicas(dirs: &[PathBuf]) -> anyhow::Result<BTreeMap<u64, Vec<u64>>> {
    let mut out: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for r in finalized_replica_files(dirs)? {
        out.entry(r.id).or_default().push(r.gs);
    }
    Ok(out)
}

/// Waits for `f` to say yes, up to `limit`, looking every 200 ms.
pub async fn wait_for<F, Fut>(what: &str, limit: Duration, mut f: F) -> anyhow::Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<bool>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if f().await? {
            return Ok(());
        }
        ensure!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub async fn with_timeout<T>(
    what: &str,
    f: impl Future<Output = Result<T, rhdfs_client::ClientError>>,
) -> anyhow::Result<T> {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .with_context(|| format!("{what}: timed out"))?
        .with_context(|| what.to_string())
}

pub async fn write_file(fs: &FileSystem, path: &str, data: &[u8]) -> anyhow::Result<()> {
    let mut w = with_timeout("create", fs.create(path, CreateOptions::default())).await?;
    with_timeout("write", w.write(data)).await?;
    with_timeout("close", w.close()).await
}

pub async fn read_file(fs: &FileSystem, path: &str) -> anyhow::Result<Vec<u8>> {
    let mut r = with_timeout("open", fs.open(path)).await?;
    Ok(with_timeout("read", r.read_to_end()).await?.to_vec())
}

#[test]
fn finalized_replicas_reads_the_datanode_layout() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let put = |rel: &str| -> anyhow::Result<()> {
        let p = tmp.path().join(rel);
        std::fs::create_dir_all(p.parent().context("parent")?)?;
        std::fs::write(p, b"x")?;
        Ok(())
    };
    let bp = "current/BP-1-127.0.0.1-1/current";
    for rel in [
        format!("data0/{bp}/finalized/subdir0/subdir0/blk_1073741825"),
        format!("data0/{bp}/finalized/subdir0/subdir0/blk_1073741825_1001.meta"),
        format!("data1/{bp}/finalized/subdir0/subdir1/blk_1073741825"),
        format!("data1/{bp}/finalized/subdir0/subdir1/blk_1073741825_1002.meta"),
        // Not finalized, or a meta file without its data: not a finalized replica.
        // A data file without its meta file has no generation stamp (0).
        format!("data1/{bp}/rbw/blk_1073741826"),
        format!("data1/{bp}/rbw/blk_1073741826_1003.meta"),
        format!("data0/{bp}/finalized/subdir0/subdir0/blk_1073741827_1004.meta"),
        format!("data0/{bp}/finalized/subdir0/subdir0/blk_1073741828"),
    ] {
        put(&rel)?;
    }
    let dirs = [tmp.path().join("data0"), tmp.path().join("data1")];
    let mut got = finalized_replicas(&dirs)?;
    for gss in got.values_mut() {
        gss.sort_unstable();
    }
    assert_eq!(
        got,
        BTreeMap::from([(1_073_741_825, vec![1001, 1002]), (1_073_741_828, vec![0])])
    );
    let files = finalized_replica_files(&dirs[..1])?;
    assert_eq!(files.len(), 2);
    let dir = tmp
        .path()
        .join(format!("data0/{bp}/finalized/subdir0/subdir0"));
    assert_eq!(files[0].block, dir.join("blk_1073741825"));
    assert_eq!(files[0].meta, Some(dir.join("blk_1073741825_1001.meta")));
    assert_eq!(
        (files[1].id, files[1].gs, &files[1].meta),
        (1_073_741_828, 0, &None)
    );
    Ok(())
}

#[test]
fn jmx_numbers() {
    let doc = "{\n  \"beans\" : [ {\n    \"name\" : \"x\",\n    \"DeclaredDead\" : 0,\n    \"Registrations\" : 13\n  } ]\n}";
    assert_eq!(jmx_number(doc, "Registrations"), Some(13));
    assert_eq!(jmx_number(doc, "DeclaredDead"), Some(0));
    assert_eq!(jmx_number(doc, "name"), None);
    assert_eq!(jmx_number(doc, "Missing"), None);
}
