//! Real-process HA clusters for integration tests: three `rhdfs namenode` processes of the
//! nameservice `ns` (nn1..nn3, Raft on their RPC ports) and `rhdfs datanode`s reporting to
//! all of them, configured with `-D` (Hadoop's HA keys, quick-test defaults, the test's own),
//! each logging to `<dir>/nn<k>.log` / `<dir>/dn<i>.log`; all are killed on drop.
//!
//! nn1 is formatted and started; the others are formatted from it with
//! `namenode -bootstrapStandby`, as an operator does. Tests kill (SIGKILL) and restart NameNodes, ask
//! each one's HA state over HAServiceProtocol and its last written txid over `/jmx`, and,
//! once every member is stopped cleanly, load each name directory offline to compare the
//! namespaces (see [`HaCluster::offline_image`]).

#![allow(dead_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use rhdfs_conf::Configuration;
use rhdfs_ipc::RpcClient;
use rhdfs_proto::common::{
    GetServiceStatusRequestProto, GetServiceStatusResponseProto, HaServiceStateProto,
};
use rhdfs_proto::protocols::HA_SERVICE_PROTOCOL;
use rhdfs_testkit::ports::{self, ReservedPort};

use super::procs::{jmx_number, signal};

pub const NS: &str = "ns";
const NAMENODES: usize = 3;
/// Hadoop's failover proxy provider for clients of a nameservice.
const PROVIDER: &str = "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider";

/// The processes; all are killed when dropped.
pub struct HaCluster {
    dir: PathBuf,
    /// Reserved for the cluster's life: NameNodes restart on them.
    rpc: Vec<ReservedPort>,
    http: Vec<ReservedPort>,
    /// `key=value` for every daemon, after the defaults.
    extra: Vec<String>,
    namenodes: Vec<Option<Child>>,
    datanodes: Vec<Option<Child>>,
}

impl Drop for HaCluster {
    fn drop(&mut self) {
        for c in self
            .namenodes
            .iter_mut()
            .chain(self.datanodes.iter_mut())
            .flatten()
        {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl HaCluster {
    /// Formats nn1 in `dir` and starts it, bootstraps nn2 and nn3 from it
    /// (`-bootstrapStandby`), starts them and `datanodes` DataNodes; `extra` (`key=value`) goes to every daemon.
    pub fn start(dir: &Path, datanodes: usize, extra: &[&str]) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir.join("conf"))?;
        let reserve = || {
            (0..NAMENODES)
                .map(|_| ports::reserve())
                .collect::<Result<Vec<_>, _>>()
        };
        let mut c = HaCluster {
            dir: dir.to_path_buf(),
            rpc: reserve()?,
            http: reserve()?,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            namenodes: (0..NAMENODES).map(|_| None).collect(),
            datanodes: (0..datanodes).map(|_| None).collect(),
        };
        let mut fmt = c.namenode_args(0);
        fmt.push("-format".into());
        let out = Command::new(env!("CARGO_BIN_EXE_rhdfs"))
            .args(&fmt)
            .env("RUST_LOG", "warn")
            .output()?;
        ensure!(
            out.status.success(),
            "format failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        c.start_namenode(0)?;
        for i in 1..NAMENODES {
            c.bootstrap_standby(i)?;
        }
        for i in 1..NAMENODES {
            c.start_namenode(i)?;
        }
        for i in 0..datanodes {
            c.start_datanode(i)?;
        }
        Ok(c)
    }

    /// Hadoop's HA client keys, all a client of the nameservice is given.
    pub fn client_keys(&self) -> Vec<(String, String)> {
        let ids: Vec<String> = (0..NAMENODES).map(|i| format!("nn{}", i + 1)).collect();
        let mut v = vec![
            ("fs.defaultFS".to_string(), format!("hdfs://{NS}")),
            ("dfs.nameservices".to_string(), NS.to_string()),
            (format!("dfs.ha.namenodes.{NS}"), ids.join(",")),
            (
                format!("dfs.client.failover.proxy.provider.{NS}"),
                PROVIDER.to_string(),
            ),
        ];
        for (i, id) in ids.iter().enumerate() {
            v.push((
                format!("dfs.namenode.rpc-address.{NS}.{id}"),
                self.rpc_addr(i),
            ));
            v.push((
                format!("dfs.namenode.http-address.{NS}.{id}"),
                self.http_addr(i),
            ));
        }
        v
    }

    /// [`HaCluster::client_keys`] as an rhdfs-client configuration.
    pub fn client_conf(&self) -> Configuration {
        let mut conf = Configuration::new();
        for (k, v) in self.client_keys() {
            conf.set(&k, v);
        }
        conf
    }

    fn daemon_args(&self, daemon: &str) -> Vec<String> {
        let mut v = vec![
            daemon.to_string(),
            "--config".to_string(),
            self.dir.join("conf").to_string_lossy().into_owned(),
        ];
        let keys = self
            .client_keys()
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .chain(
                [
                    "dfs.heartbeat.interval=1",
                    "dfs.namenode.safemode.extension=0",
                    "dfs.namenode.heartbeat.recheck-interval=5000",
                    "dfs.blockreport.initialDelay=0",
                    "dfs.replication=2",
                    "dfs.blocksize=1048576",
                    "dfs.namenode.fs-limits.min-block-size=0",
                    "rhdfs.ha.raft.heartbeat.interval.ms=100",
                    "rhdfs.ha.raft.election.timeout.ms=1000",
                ]
                .map(String::from),
            )
            .chain(self.extra.iter().cloned());
        for kv in keys {
            v.push("-D".into());
            v.push(kv);
        }
        v
    }

    fn namenode_args(&self, i: usize) -> Vec<String> {
        let mut v = self.daemon_args("namenode");
        for kv in [
            format!("dfs.ha.namenode.id=nn{}", i + 1),
            format!("dfs.namenode.name.dir={}", self.name_dir(i).display()),
            format!("dfs.namenode.http-address={}", self.http_addr(i)),
        ] {
            v.push("-D".into());
            v.push(kv);
        }
        v
    }

    /// `rhdfs namenode -bootstrapStandby` for NameNode `i`, repeated while it finds no other
    /// NameNode serving (exit code 2: nn1 is still starting).
    fn bootstrap_standby(&self, i: usize) -> anyhow::Result<()> {
        let mut args = self.namenode_args(i);
        args.push("-bootstrapStandby".into());
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = Command::new(env!("CARGO_BIN_EXE_rhdfs"))
                .args(&args)
                .env("RUST_LOG", "warn")
                .output()?;
            match out.status.code() {
                Some(0) => return Ok(()),
                Some(2) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(200))
                }
                _ => anyhow::bail!(
                    "nn{}: bootstrapStandby exited with {}: {}",
                    i + 1,
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ),
            }
        }
    }

    fn spawn(&self, args: &[String], log: &str) -> anyhow::Result<Child> {
        let out = File::options()
            .create(true)
            .append(true)
            .open(self.dir.join(log))?;
        Ok(Command::new(env!("CARGO_BIN_EXE_rhdfs"))
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()?)
    }

    /// Starts NameNode `i` (nn<i+1>) on its ports and name directory.
    pub fn start_namenode(&mut self, i: usize) -> anyhow::Result<()> {
        let child = self.spawn(&self.namenode_args(i), &format!("nn{}.log", i + 1))?;
        self.namenodes[i] = Some(child);
        Ok(())
    }

    /// SIGKILL to NameNode `i`, reaped.
    pub fn kill_namenode(&mut self, i: usize) -> anyhow::Result<()> {
        if let Some(mut c) = self.namenodes[i].take() {
            c.kill()?;
            c.wait()?;
        }
        Ok(())
    }

    /// SIGTERM to every running NameNode at once (a clean stop: edits synced, the log
    /// closed); waits up to a minute for each to exit, then SIGKILLs it and fails.
    pub fn stop_namenodes(&mut self) -> anyhow::Result<()> {
        for c in self.namenodes.iter().flatten() {
            signal(c.id(), "TERM")?;
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        for (i, slot) in self.namenodes.iter_mut().enumerate() {
            let Some(c) = slot.as_mut() else { continue };
            loop {
                if let Some(st) = c.try_wait()? {
                    *slot = None;
                    ensure!(st.success(), "nn{} exited with {st} after SIGTERM", i + 1);
                    break;
                }
                if Instant::now() > deadline {
                    let _ = c.kill();
                    let _ = c.wait();
                    *slot = None;
                    anyhow::bail!("nn{} did not stop within 60 s of SIGTERM", i + 1);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }

    /// Starts DataNode `i` (data directory `<dir>/data<i>`, ports chosen by the OS).
    pub fn start_datanode(&mut self, i: usize) -> anyhow::Result<()> {
        let mut a = self.daemon_args("datanode");
        for kv in [
            format!(
                "dfs.datanode.data.dir={}",
                self.dir.join(format!("data{i}")).display()
            ),
            "dfs.datanode.address=127.0.0.1:0".to_string(),
            "dfs.datanode.ipc.address=127.0.0.1:0".to_string(),
            "dfs.datanode.http.address=127.0.0.1:0".to_string(),
        ] {
            a.push("-D".into());
            a.push(kv);
        }
        let child = self.spawn(&a, &format!("dn{i}.log"))?;
        self.datanodes[i] = Some(child);
        Ok(())
    }

    pub fn namenode_count(&self) -> usize {
        NAMENODES
    }

    pub fn namenode_running(&self, i: usize) -> bool {
        self.namenodes[i].is_some()
    }

    pub fn name_dir(&self, i: usize) -> PathBuf {
        self.dir.join(format!("name{}", i + 1))
    }

    pub fn rpc_addr(&self, i: usize) -> String {
        format!("127.0.0.1:{}", self.rpc[i].port())
    }

    pub fn http_addr(&self, i: usize) -> String {
        format!("127.0.0.1:{}", self.http[i].port())
    }

    /// The last 40 lines of a daemon's log (`nn1.log`, `dn0.log`).
    pub fn log_tail(&self, name: &str) -> String {
        let s = std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Every NameNode's log tail, for failure messages.
    pub fn namenode_logs(&self) -> String {
        (0..NAMENODES)
            .map(|i| {
                format!(
                    "--- nn{}.log ---\n{}",
                    i + 1,
                    self.log_tail(&format!("nn{}.log", i + 1))
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// NameNode `i`'s HA state (getServiceStatus), None when it does not answer.
    pub async fn state(&self, i: usize) -> Option<HaServiceStateProto> {
        let ask = async {
            // HAServiceProtocol wants the superuser: the daemons' user, this process's.
            let user = rhdfs_conf::user::current_user();
            let c = RpcClient::connect(&self.rpc_addr(i), HA_SERVICE_PROTOCOL, &user)
                .await
                .ok()?;
            let r = c
                .call::<_, GetServiceStatusResponseProto>(
                    "getServiceStatus",
                    &GetServiceStatusRequestProto {},
                )
                .await;
            c.close().await;
            HaServiceStateProto::try_from(r.ok()?.state).ok()
        };
        tokio::time::timeout(Duration::from_secs(5), ask)
            .await
            .ok()
            .flatten()
    }

    /// The running NameNodes that say they are active.
    pub async fn actives(&self) -> Vec<usize> {
        let mut v = Vec::new();
        for i in 0..NAMENODES {
            if self.namenode_running(i) && self.state(i).await == Some(HaServiceStateProto::Active)
            {
                v.push(i);
            }
        }
        v
    }

    /// NameNode `i`'s last written txid (`/jmx` FSNamesystem LastWrittenTransactionId; a
    /// standby's is the last committed edit it applied), None when it does not answer.
    pub async fn last_txid(&self, i: usize) -> Option<u64> {
        let (code, body) = rhdfs_namenode::http::client::get(
            &self.http_addr(i),
            "/jmx?qry=Hadoop:service=NameNode,name=FSNamesystem",
            Duration::from_secs(10),
        )
        .await
        .ok()?;
        (code == 200).then_some(())?;
        jmx_number(&body, "LastWrittenTransactionId")
    }

    /// `fsck / -openforwrite` on NameNode `i`'s web port: fails unless the report ends
    /// HEALTHY and lists no file open for write.
    pub async fn fsck(&self, i: usize) -> anyhow::Result<String> {
        let (code, body) = rhdfs_namenode::http::client::get(
            &self.http_addr(i),
            "/fsck?path=%2F&openforwrite=1",
            Duration::from_secs(60),
        )
        .await
        .context("GET /fsck")?;
        ensure!(code == 200, "fsck on nn{}: {code}\n{body}", i + 1);
        ensure!(
            body.trim_end().ends_with("is HEALTHY") && !body.contains("OPENFORWRITE"),
            "fsck on nn{}:\n{body}",
            i + 1
        );
        Ok(body)
    }

    /// NameNode `i`'s namespace as its stopped name directory holds it: the newest image
    /// and the edits after it loaded offline, as a restart would (the member must have been
    /// stopped cleanly, or its edit log may lack a tail the Raft log still has); returns
    /// its last txid and image payload.
    pub async fn offline_image(&self, i: usize) -> anyhow::Result<(u64, Vec<u8>)> {
        ensure!(!self.namenode_running(i), "nn{} still runs", i + 1);
        let mut conf = Configuration::new();
        conf.set(
            "dfs.namenode.name.dir",
            self.name_dir(i).to_string_lossy().into_owned(),
        );
        tokio::task::spawn_blocking(move || {
            let user = rhdfs_conf::user::current_user();
            let ns_cfg = rhdfs_namenode::server::namespace_config(&conf, &user)?;
            let clock = rhdfs_conf::clock::system_clock();
            let (durable, ns) =
                rhdfs_namenode::persist::load(&conf, &clock, ns_cfg, Default::default())?;
            let image = ns.encode_image();
            durable.close();
            Ok(image)
        })
        .await?
    }
}

/// A 64-bit FNV-1a digest of `bytes`, to print beside a comparison.
pub fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
