//! An in-process HDFS cluster for tests and for `rhdfs cluster`: one NameNode and N DataNodes
//! on 127.0.0.1 with port 0, each DataNode with its own data directories under one base
//! directory, and hooks to stop, restart and inspect DataNodes.

pub mod ha;

use rhdfs_logging::daemon_span;
use std::path::{Path, PathBuf};
use tracing::Instrument;

use rhdfs_conf::Configuration;
use rhdfs_conf::clock::{SharedClock, system_clock};
use rhdfs_datanode::{DataNode, DataNodeHandle};
use rhdfs_namenode::{NameNode, NameNodeHandle};
use std::time::Duration;

/// Why a cluster could not be built or changed.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("NameNode failed: {0}")]
    NameNode(String),
    #[error("DataNode {index} failed: {message}")]
    DataNode { index: usize, message: String },
    #[error("no DataNode with index {0}")]
    NoSuchDataNode(usize),
    #[error("timed out after {0:?} waiting for {1}")]
    Timeout(Duration, String),
}

/// Builder for a [`MiniCluster`].
pub struct MiniClusterBuilder {
    datanodes: usize,
    volumes_per_datanode: usize,
    conf: Configuration,
    base_dir: Option<PathBuf>,
    clock: Option<SharedClock>,
    bind_host: String,
    wait_ready: Duration,
    racks: Vec<String>,
}

impl Default for MiniClusterBuilder {
    fn default() -> Self {
        Self {
            datanodes: 3,
            volumes_per_datanode: 1,
            conf: Configuration::new(),
            base_dir: None,
            clock: None,
            bind_host: "127.0.0.1".to_string(),
            wait_ready: Duration::from_secs(60),
            racks: Vec::new(),
        }
    }
}

impl MiniClusterBuilder {
    /// Number of DataNodes (default 3).
    pub fn datanodes(mut self, n: usize) -> Self {
        self.datanodes = n;
        self
    }

    /// Volumes (data directories) per DataNode (default 1).
    pub fn volumes_per_datanode(mut self, n: usize) -> Self {
        self.volumes_per_datanode = n.max(1);
        self
    }

    /// Sets one configuration key for every daemon.
    pub fn conf(mut self, key: &str, value: impl Into<String>) -> Self {
        self.conf.set(key, value);
        self
    }

    /// Adds every key of `conf` that was not already set with [`Self::conf`].
    pub fn configuration(mut self, conf: &Configuration) -> Self {
        for (k, v) in conf.iter() {
            if self.conf.get(k).is_none() {
                self.conf.set(k, v.to_string());
            }
        }
        self
    }

    /// Keeps the cluster's files under `dir` (default: a temporary directory removed on drop).
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// The clock every daemon uses (default: the system clock).
    pub fn clock(mut self, clock: SharedClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The address daemons bind and advertise (default 127.0.0.1).
    pub fn bind_host(mut self, host: impl Into<String>) -> Self {
        self.bind_host = host.into();
        self
    }

    /// Puts DataNode `i` on rack `racks[i]` (e.g. "/r1"), as Hadoop's MiniDFSCluster does:
    /// each DataNode advertises the host name `dn{i}.rack` (`dfs.datanode.hostname`; it
    /// still binds and is reached on the cluster's address), and the NameNode maps those
    /// names with a table (`net.topology.node.switch.mapping.impl` =
    /// org.apache.hadoop.net.TableMapping, `net.topology.table.file.name` = a file in the
    /// base directory). Starts at least `racks.len()` DataNodes; `datanodes(n)` called
    /// afterwards may start fewer, and DataNodes added later (`add_datanode`) take the
    /// remaining racks in order.
    pub fn racks(mut self, racks: &[&str]) -> Self {
        self.racks = racks.iter().map(|r| r.to_string()).collect();
        self.datanodes = self.datanodes.max(racks.len());
        self
    }

    /// How long `build` waits for every DataNode to register (default 60 s).
    pub fn wait_ready(mut self, d: Duration) -> Self {
        self.wait_ready = d;
        self
    }

    /// Formats (if needed) and starts the NameNode, then the DataNodes, and waits until every
    /// DataNode has registered with the NameNode.
    pub async fn build(self) -> Result<MiniCluster, ClusterError> {
        let (temp, base) = base_or_temp(self.base_dir.clone(), "rhdfs-minicluster-")?;
        let clock = self.clock.clone().unwrap_or_else(system_clock);
        let host = self.bind_host.clone();

        let mut conf = self.conf.clone();
        if !self.racks.is_empty() {
            let table = base.join("topology.table");
            let text: String = self
                .racks
                .iter()
                .enumerate()
                .map(|(i, r)| format!("{} {r}\n", rack_host(i)))
                .collect();
            std::fs::write(&table, text).map_err(|source| ClusterError::Io {
                path: table.clone(),
                source,
            })?;
            conf.set(
                "net.topology.node.switch.mapping.impl",
                "org.apache.hadoop.net.TableMapping",
            );
            conf.set("net.topology.table.file.name", table.to_string_lossy());
        }
        let mut nn_conf = conf.clone();
        set_default(
            &mut nn_conf,
            "dfs.namenode.rpc-address",
            &format!("{host}:0"),
        );
        set_default(
            &mut nn_conf,
            "dfs.namenode.http-address",
            &format!("{host}:0"),
        );
        let name_dir = base.join("name");
        set_default(
            &mut nn_conf,
            "dfs.namenode.name.dir",
            &name_dir.to_string_lossy(),
        );
        create_dir(&name_dir)?;
        let namenode = NameNode::start(nn_conf.clone(), clock.clone())
            .instrument(daemon_span("namenode"))
            .await
            .map_err(|e| ClusterError::NameNode(e.to_string()))?;
        let nn_addr = namenode.rpc_addr();
        // A restarted NameNode comes back on the same port, where the DataNodes look for it.
        nn_conf.set(
            "dfs.namenode.rpc-address",
            format!("{host}:{}", nn_addr.port()),
        );
        let uri = format!("hdfs://{}:{}", host, nn_addr.port());

        let mut cluster = MiniCluster {
            _temp: temp,
            base,
            conf,
            clock,
            host,
            uri,
            volumes_per_datanode: self.volumes_per_datanode,
            racks: self.racks.len(),
            namenode: Some(namenode),
            nn_conf,
            datanodes: Vec::new(),
            dn_confs: Vec::new(),
        };
        for i in 0..self.datanodes {
            let conf = cluster.datanode_conf(i)?;
            cluster.dn_confs.push(conf.clone());
            let dn = DataNode::start(conf, cluster.clock.clone())
                .instrument(daemon_span(&format!("datanode-{i}")))
                .await
                .map_err(|e| ClusterError::DataNode {
                    index: i,
                    message: e.to_string(),
                })?;
            cluster.datanodes.push(Some(dn));
        }
        cluster
            .wait_live_datanodes(self.datanodes, self.wait_ready)
            .await?;
        Ok(cluster)
    }
}

/// `base`, or a new temporary directory (removed with the returned guard) named `prefix…`.
fn base_or_temp(
    base: Option<PathBuf>,
    prefix: &str,
) -> Result<(Option<tempfile::TempDir>, PathBuf), ClusterError> {
    match base {
        Some(dir) => Ok((None, dir)),
        None => {
            let t = tempfile::Builder::new()
                .prefix(prefix)
                .tempdir()
                .map_err(|source| ClusterError::Io {
                    path: std::env::temp_dir(),
                    source,
                })?;
            let p = t.path().to_path_buf();
            Ok((Some(t), p))
        }
    }
}

/// The host name DataNode `i` advertises when the cluster has racks.
fn rack_host(i: usize) -> String {
    format!("dn{i}.rack")
}

fn set_default(conf: &mut Configuration, key: &str, value: &str) {
    if conf.get(key).is_none() {
        conf.set(key, value.to_string());
    }
}

fn create_dir(path: &Path) -> Result<(), ClusterError> {
    std::fs::create_dir_all(path).map_err(|source| ClusterError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// A running NameNode with its DataNodes.
pub struct MiniCluster {
    _temp: Option<tempfile::TempDir>,
    base: PathBuf,
    conf: Configuration,
    clock: SharedClock,
    host: String,
    uri: String,
    volumes_per_datanode: usize,
    /// DataNodes `0..racks` advertise `rack_host(i)` (see `MiniClusterBuilder::racks`).
    racks: usize,
    namenode: Option<NameNodeHandle>,
    nn_conf: Configuration,
    datanodes: Vec<Option<DataNodeHandle>>,
    dn_confs: Vec<Configuration>,
}

impl MiniCluster {
    /// A builder with three DataNodes and default configuration.
    pub fn builder() -> MiniClusterBuilder {
        MiniClusterBuilder::default()
    }

    /// `hdfs://127.0.0.1:<port>` of the NameNode.
    pub fn uri(&self) -> String {
        self.uri.clone()
    }

    /// The directory holding every daemon's files.
    pub fn base_dir(&self) -> &Path {
        &self.base
    }

    /// The configuration every daemon was started with (before per-daemon addresses).
    pub fn conf(&self) -> &Configuration {
        &self.conf
    }

    /// The running NameNode.
    ///
    /// # Panics
    /// While the NameNode is stopped ([`MiniCluster::stop_namenode`]).
    pub fn namenode(&self) -> &NameNodeHandle {
        match &self.namenode {
            Some(nn) => nn,
            None => panic!("the NameNode is stopped (MiniCluster::stop_namenode)"),
        }
    }

    /// Number of DataNode slots (running or stopped).
    pub fn num_datanodes(&self) -> usize {
        self.datanodes.len()
    }

    /// DataNode `i`, if it is running.
    pub fn datanode(&self, i: usize) -> Option<&DataNodeHandle> {
        self.datanodes.get(i).and_then(|d| d.as_ref())
    }

    /// The running DataNodes with their indexes.
    pub fn running_datanodes(&self) -> impl Iterator<Item = (usize, &DataNodeHandle)> {
        self.datanodes
            .iter()
            .enumerate()
            .filter_map(|(i, d)| d.as_ref().map(|d| (i, d)))
    }

    /// The data directories of DataNode `i` (whether or not it is running).
    pub fn datanode_data_dirs(&self, i: usize) -> Vec<PathBuf> {
        (0..self.volumes_per_datanode)
            .map(|v| self.base.join(format!("data{i}")).join(format!("vol{v}")))
            .collect()
    }

    fn datanode_conf(&self, i: usize) -> Result<Configuration, ClusterError> {
        let mut conf = self.conf.clone();
        let dirs = self.datanode_data_dirs(i);
        for d in &dirs {
            create_dir(d)?;
        }
        let dirs: Vec<String> = dirs
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect();
        set_default(&mut conf, "dfs.datanode.data.dir", &dirs.join(","));
        let host = &self.host;
        set_default(&mut conf, "dfs.datanode.address", &format!("{host}:0"));
        set_default(&mut conf, "dfs.datanode.ipc.address", &format!("{host}:0"));
        set_default(&mut conf, "dfs.datanode.http.address", &format!("{host}:0"));
        if i < self.racks {
            set_default(&mut conf, "dfs.datanode.hostname", &rack_host(i));
        }
        conf.set("fs.defaultFS", self.uri.clone());
        conf.set(
            "dfs.namenode.rpc-address",
            format!("{}:{}", host, self.namenode().rpc_addr().port()),
        );
        Ok(conf)
    }

    /// Adds and starts one more DataNode; returns its index.
    pub async fn add_datanode(&mut self) -> Result<usize, ClusterError> {
        let i = self.datanodes.len();
        let conf = self.datanode_conf(i)?;
        self.dn_confs.push(conf.clone());
        let dn = DataNode::start(conf, self.clock.clone())
            .instrument(daemon_span(&format!("datanode-{i}")))
            .await
            .map_err(|e| ClusterError::DataNode {
                index: i,
                message: e.to_string(),
            })?;
        self.datanodes.push(Some(dn));
        Ok(i)
    }

    /// Stops DataNode `i` (its files stay on disk). Returns its datanode UUID.
    pub async fn stop_datanode(&mut self, i: usize) -> Result<String, ClusterError> {
        let slot = self
            .datanodes
            .get_mut(i)
            .ok_or(ClusterError::NoSuchDataNode(i))?;
        let dn = slot.take().ok_or(ClusterError::NoSuchDataNode(i))?;
        let uuid = dn.uuid().to_string();
        dn.shutdown().await;
        Ok(uuid)
    }

    /// Starts a stopped DataNode `i` again on the same directories (new ports).
    pub async fn restart_datanode(&mut self, i: usize) -> Result<(), ClusterError> {
        if self.datanode(i).is_some() {
            self.stop_datanode(i).await?;
        }
        let conf = self
            .dn_confs
            .get(i)
            .cloned()
            .ok_or(ClusterError::NoSuchDataNode(i))?;
        let dn = DataNode::start(conf, self.clock.clone())
            .instrument(daemon_span(&format!("datanode-{i}")))
            .await
            .map_err(|e| ClusterError::DataNode {
                index: i,
                message: e.to_string(),
            })?;
        self.datanodes[i] = Some(dn);
        Ok(())
    }

    /// Waits until the NameNode counts at least `n` live DataNodes.
    pub async fn wait_live_datanodes(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<(), ClusterError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.namenode().block_manager().live_datanodes() >= n {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ClusterError::Timeout(
                    timeout,
                    format!("{n} live DataNodes"),
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Writes a `core-site.xml` into `dir` for Hadoop clients and the rhdfs tools:
    /// `fs.defaultFS` (this cluster) and `dfs.namenode.http-address` (for `rhdfs fsck`).
    pub fn write_client_conf(&self, dir: &Path) -> Result<PathBuf, ClusterError> {
        create_dir(dir)?;
        let mut core = Configuration::new();
        core.set("fs.defaultFS", self.uri.clone());
        core.set(
            "dfs.namenode.http-address",
            self.namenode().http_addr().to_string(),
        );
        let path = dir.join("core-site.xml");
        core.write_xml(&path).map_err(|e| ClusterError::Io {
            path: path.clone(),
            source: std::io::Error::other(e.to_string()),
        })?;
        Ok(path)
    }

    /// Stops the NameNode (DataNodes keep running and retry) and starts it again on the same
    /// port and name directories, as after a crash or an operator restart. `extra` keys apply
    /// to the new NameNode only (for example a start-up deletion delay).
    pub async fn restart_namenode(&mut self, extra: &[(&str, &str)]) -> Result<(), ClusterError> {
        self.stop_namenode().await;
        self.start_namenode(extra).await
    }

    /// Stops the NameNode (DataNodes keep running and retry); [`MiniCluster::start_namenode`]
    /// brings it back. Until then [`MiniCluster::namenode`] must not be called.
    pub async fn stop_namenode(&mut self) {
        if let Some(nn) = self.namenode.take() {
            nn.shutdown().await;
        }
    }

    /// Starts the NameNode again after [`MiniCluster::stop_namenode`], on the same port and
    /// name directories; `extra` keys apply to the new NameNode only.
    pub async fn start_namenode(&mut self, extra: &[(&str, &str)]) -> Result<(), ClusterError> {
        let mut conf = self.nn_conf.clone();
        for (k, v) in extra {
            conf.set(k, v.to_string());
        }
        // The old listener may take a moment to release the port.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let nn = loop {
            match NameNode::start(conf.clone(), self.clock.clone())
                .instrument(daemon_span("namenode"))
                .await
            {
                Ok(nn) => break nn,
                Err(e) if tokio::time::Instant::now() < deadline => {
                    tracing::debug!("NameNode restart retrying: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(ClusterError::NameNode(e.to_string())),
            }
        };
        self.namenode = Some(nn);
        Ok(())
    }

    /// Stops every DataNode, then the NameNode.
    pub async fn shutdown(mut self) {
        for slot in self.datanodes.iter_mut() {
            if let Some(dn) = slot.take() {
                dn.shutdown().await;
            }
        }
        if let Some(nn) = self.namenode.take() {
            nn.shutdown().await;
        }
    }
}
