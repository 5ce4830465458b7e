//! An HA nameservice in one process: N NameNodes replicating their edits through Raft and
//! DataNodes reporting to all of them, for tests and `rhdfs cluster --namenodes N`.
//!
//! The nameservice is `ns` with NameNodes `nn1..nnN` at the RPC ports the caller chose (a
//! nameservice names its NameNodes' addresses before any starts, so the ports cannot be the
//! kernel's choice). The first NameNode's directories are formatted and copied to the others
//! before their first start, which is what `-bootstrapStandby` does over the network.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rhdfs_conf::Configuration;
use rhdfs_conf::clock::{SharedClock, system_clock};
use rhdfs_datanode::{DataNode, DataNodeHandle};
use rhdfs_logging::daemon_span;
use rhdfs_namenode::ha::Role;
use rhdfs_namenode::{NameNode, NameNodeHandle};
use tracing::Instrument;

use crate::{ClusterError, base_or_temp, create_dir, set_default};

/// The nameservice id of an [`HaMiniCluster`].
pub const NAMESERVICE: &str = "ns";

/// NameNodes of one nameservice and their DataNodes.
pub struct HaMiniCluster {
    base: PathBuf,
    _temp: Option<tempfile::TempDir>,
    /// What clients and DataNodes are given: the nameservice's keys.
    conf: Configuration,
    clock: SharedClock,
    namenodes: Vec<Option<NameNodeHandle>>,
    nn_confs: Vec<Configuration>,
    datanodes: Vec<Option<DataNodeHandle>>,
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), ClusterError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ClusterError::Io { path, source }
    };
    create_dir(to)?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        if entry.file_type().map_err(io(&src))?.is_dir() {
            copy_dir(&src, &dst)?;
        } else if entry.file_name() != rhdfs_editlog::LOCK_FILE {
            std::fs::copy(&src, &dst).map_err(io(&src))?;
        }
    }
    Ok(())
}

impl HaMiniCluster {
    /// Starts `rpc_ports.len()` NameNodes (at least two) and `datanodes` DataNodes under
    /// `base` (a temporary directory when None) with `base_conf` under every daemon's
    /// configuration; formats the first NameNode's directory and copies it to the others
    /// unless `base` already holds them (a restart); returns once a NameNode is active and
    /// every DataNode has registered with it.
    pub async fn start(
        base: Option<PathBuf>,
        rpc_ports: &[u16],
        datanodes: usize,
        base_conf: &Configuration,
    ) -> Result<HaMiniCluster, ClusterError> {
        let (temp, base) = base_or_temp(base, "rhdfs-ha-minicluster-")?;
        let ids: Vec<String> = (1..=rpc_ports.len()).map(|i| format!("nn{i}")).collect();
        let mut conf = base_conf.clone();
        conf.set("fs.defaultFS", format!("hdfs://{NAMESERVICE}"));
        conf.set("dfs.nameservices", NAMESERVICE);
        conf.set(&format!("dfs.ha.namenodes.{NAMESERVICE}"), ids.join(","));
        for (id, port) in ids.iter().zip(rpc_ports) {
            conf.set(
                &format!("dfs.namenode.rpc-address.{NAMESERVICE}.{id}"),
                format!("127.0.0.1:{port}"),
            );
        }
        conf.set(
            &format!("dfs.client.failover.proxy.provider.{NAMESERVICE}"),
            "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
        );
        let mut nn_confs = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let mut c = conf.clone();
            c.set("dfs.ha.namenode.id", id.clone());
            set_default(&mut c, "dfs.namenode.http-address", "127.0.0.1:0");
            let dir = base.join(format!("name{}", i + 1));
            c.set("dfs.namenode.name.dir", dir.to_string_lossy().into_owned());
            nn_confs.push(c);
        }
        // Format the first; the others start from a copy (bootstrapStandby).
        let first = base.join("name1");
        if !first.join("current").exists() {
            create_dir(&first)?;
            let c = nn_confs[0].clone();
            tokio::task::spawn_blocking(move || rhdfs_namenode::format(&c, false))
                .await
                .map_err(|e| ClusterError::NameNode(e.to_string()))?
                .map_err(|e| ClusterError::NameNode(e.to_string()))?;
        }
        for i in 1..ids.len() {
            let dir = base.join(format!("name{}", i + 1));
            if !dir.join("current").exists() {
                copy_dir(&first, &dir)?;
            }
        }
        let clock = system_clock();
        let mut cluster = HaMiniCluster {
            base,
            _temp: temp,
            conf,
            clock,
            namenodes: Vec::new(),
            nn_confs,
            datanodes: Vec::new(),
        };
        for i in 0..ids.len() {
            let nn = cluster.start_namenode(i).await?;
            cluster.namenodes.push(Some(nn));
        }
        for i in 0..datanodes {
            let dn = cluster.start_datanode(i).await?;
            cluster.datanodes.push(Some(dn));
        }
        let active = cluster.wait_active(Duration::from_secs(60)).await?;
        cluster
            .wait_live_datanodes(active, datanodes, Duration::from_secs(60))
            .await?;
        Ok(cluster)
    }

    async fn start_namenode(&self, i: usize) -> Result<NameNodeHandle, ClusterError> {
        let conf = self.nn_confs[i].clone();
        // A restarted NameNode takes its old port again; the old listener may still be
        // closing.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            match NameNode::start(conf.clone(), self.clock.clone())
                .instrument(daemon_span(&format!("nn{}", i + 1)))
                .await
            {
                Ok(nn) => return Ok(nn),
                Err(e) if tokio::time::Instant::now() < deadline => {
                    tracing::debug!("NameNode nn{} start retrying: {e}", i + 1);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(ClusterError::NameNode(e.to_string())),
            }
        }
    }

    async fn start_datanode(&self, i: usize) -> Result<DataNodeHandle, ClusterError> {
        let mut conf = self.conf.clone();
        let dir = self.base.join(format!("data{i}"));
        create_dir(&dir)?;
        conf.set("dfs.datanode.data.dir", dir.to_string_lossy().into_owned());
        set_default(&mut conf, "dfs.datanode.address", "127.0.0.1:0");
        set_default(&mut conf, "dfs.datanode.ipc.address", "127.0.0.1:0");
        set_default(&mut conf, "dfs.datanode.http.address", "127.0.0.1:0");
        DataNode::start(conf, self.clock.clone())
            .instrument(daemon_span(&format!("datanode-{i}")))
            .await
            .map_err(|e| ClusterError::DataNode {
                index: i,
                message: e.to_string(),
            })
    }

    /// The configuration a client of the nameservice needs (`fs.defaultFS = hdfs://ns` and
    /// Hadoop's HA keys only).
    pub fn client_conf(&self) -> &Configuration {
        &self.conf
    }

    /// Writes `core-site.xml` and `hdfs-site.xml` into `dir` for Hadoop clients and the rhdfs
    /// tools: the nameservice with each NameNode's RPC and web address. Returns the
    /// `hdfs-site.xml` path.
    pub fn write_client_conf(&self, dir: &Path) -> Result<PathBuf, ClusterError> {
        create_dir(dir)?;
        let write = |conf: &Configuration, name: &str| {
            let path = dir.join(name);
            conf.write_xml(&path).map_err(|e| ClusterError::Io {
                path: path.clone(),
                source: std::io::Error::other(e.to_string()),
            })?;
            Ok::<_, ClusterError>(path)
        };
        let mut core = Configuration::new();
        core.set("fs.defaultFS", format!("hdfs://{NAMESERVICE}"));
        write(&core, "core-site.xml")?;
        let mut hdfs = Configuration::new();
        let ids: Vec<String> = (1..=self.namenodes.len())
            .map(|i| format!("nn{i}"))
            .collect();
        hdfs.set("dfs.nameservices", NAMESERVICE);
        hdfs.set(&format!("dfs.ha.namenodes.{NAMESERVICE}"), ids.join(","));
        hdfs.set(
            &format!("dfs.client.failover.proxy.provider.{NAMESERVICE}"),
            "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
        );
        for (i, id) in ids.iter().enumerate() {
            let rpc = format!("dfs.namenode.rpc-address.{NAMESERVICE}.{id}");
            if let Some(v) = self.conf.get(&rpc) {
                hdfs.set(&rpc, v.to_string());
            }
            if let Some(nn) = self.namenode(i) {
                hdfs.set(
                    &format!("dfs.namenode.http-address.{NAMESERVICE}.{id}"),
                    nn.http_addr().to_string(),
                );
            }
        }
        write(&hdfs, "hdfs-site.xml")
    }

    /// The directory holding every daemon's files.
    pub fn base_dir(&self) -> &Path {
        &self.base
    }

    /// Number of NameNode slots.
    pub fn num_namenodes(&self) -> usize {
        self.namenodes.len()
    }

    /// NameNode `i` (0-based: `nn{i+1}`), if running.
    pub fn namenode(&self, i: usize) -> Option<&NameNodeHandle> {
        self.namenodes.get(i).and_then(|n| n.as_ref())
    }

    /// The running NameNode that is active, if one is.
    pub fn active(&self) -> Option<usize> {
        (0..self.namenodes.len()).find(|&i| {
            self.namenode(i)
                .is_some_and(|n| n.namesystem().ha_role().get() == Role::Active)
        })
    }

    /// Waits until a NameNode is active; returns its index.
    pub async fn wait_active(&self, timeout: Duration) -> Result<usize, ClusterError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(i) = self.active() {
                return Ok(i);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ClusterError::Timeout(timeout, "an active NameNode".into()));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until NameNode `nn` counts at least `n` live DataNodes.
    pub async fn wait_live_datanodes(
        &self,
        nn: usize,
        n: usize,
        timeout: Duration,
    ) -> Result<(), ClusterError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self
                .namenode(nn)
                .is_some_and(|h| h.block_manager().live_datanodes() >= n)
            {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ClusterError::Timeout(
                    timeout,
                    format!("{n} live DataNodes at nn{}", nn + 1),
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The configuration NameNode `i` starts with (its own id and name directory).
    pub fn namenode_conf(&self, i: usize) -> Option<&Configuration> {
        self.nn_confs.get(i)
    }

    /// The configuration NameNode `i` starts with next (a restart takes changes).
    pub fn namenode_conf_mut(&mut self, i: usize) -> Option<&mut Configuration> {
        self.nn_confs.get_mut(i)
    }

    /// Stops NameNode `i` as a killed process would (nothing more synced).
    pub async fn crash_namenode(&mut self, i: usize) {
        if let Some(nn) = self.namenodes.get_mut(i).and_then(Option::take) {
            nn.crash().await;
        }
    }

    /// Starts a stopped NameNode `i` again on its port and directories.
    pub async fn restart_namenode(&mut self, i: usize) -> Result<(), ClusterError> {
        self.crash_namenode(i).await;
        let nn = self.start_namenode(i).await?;
        self.namenodes[i] = Some(nn);
        Ok(())
    }

    /// DataNode `i`, if running.
    pub fn datanode(&self, i: usize) -> Option<&DataNodeHandle> {
        self.datanodes.get(i).and_then(|d| d.as_ref())
    }

    /// Stops every DataNode, then every NameNode.
    pub async fn shutdown(mut self) {
        for slot in self.datanodes.iter_mut() {
            if let Some(dn) = slot.take() {
                dn.shutdown().await;
            }
        }
        for slot in self.namenodes.iter_mut() {
            if let Some(nn) = slot.take() {
                nn.shutdown().await;
            }
        }
    }
}
