//! `DataNode::start`: opens the volumes, binds the transfer and IPC servers, starts the actor
//! for the NameNode, and returns a handle.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::{Configuration, TimeUnit, addr, keys};
use rhdfs_ipc::{RpcServer, ServerConfig};
use tokio::sync::{mpsc, watch};

use crate::actor::{
    self, ActorConfig, ActorDeps, ActorHandle, AsyncDeleter, Identity, IpcConnector,
    NamenodeConnector, Triggers,
};
use crate::dataset::Dataset;
use crate::error::DataNodeError;
use crate::faults::FaultHooks;
use crate::ipc_service::{Admins, ClientDatanodeService};
use crate::notify::BlockNotifier;
use crate::volume::parse_data_dir;
use crate::xceiver::{DomainServer, XceiverConfig, XceiverContext, XceiverServer};

/// Entry point.
#[derive(Debug)]
pub struct DataNode;

/// A running DataNode.
#[derive(Debug)]
pub struct DataNodeHandle {
    identity: Identity,
    xfer_addr: SocketAddr,
    ipc_addr: SocketAddr,
    data_dirs: Vec<PathBuf>,
    storage_ids: Vec<String>,
    faults: Arc<FaultHooks>,
    dataset: Arc<Dataset>,
    xceiver: XceiverServer,
    /// The short-circuit read socket (dfs.domain.socket.path), when configured.
    domain: Option<DomainServer>,
    ipc: RpcServer,
    http: crate::http::HttpServer,
    actor: ActorHandle,
    triggers: Arc<Triggers>,
    metrics: Option<Arc<crate::metrics::DataNodeMetrics>>,
    /// Set by the shutdownDatanode RPC (`Some(for_upgrade)`).
    shutdown: Arc<watch::Sender<Option<bool>>>,
    /// The periodic directory scan (`dfs.datanode.directoryscan.interval`), stopped with
    /// the handle.
    _directory_scanner: Option<crate::scanners::AbortOnDrop>,
    /// The block scanner (`dfs.block.scanner.volume.bytes.per.second`), stopped with the
    /// handle.
    block_scanner: Option<crate::block_scanner::ScannerTasks>,
}

fn conf_err(e: impl std::fmt::Display) -> DataNodeError {
    DataNodeError::Config(e.to_string())
}

/// A socket buffer size key in bytes (Hadoop's size suffixes allowed); 0 = the OS's choice.
fn socket_buffer(conf: &Configuration, key: &str, default: u64) -> Result<u32, DataNodeError> {
    let v = conf.get_size(key, default).map_err(conf_err)?;
    u32::try_from(v).map_err(|_| DataNodeError::Config(format!("{key}: {v} is too large")))
}

impl DataNode {
    /// Starts a DataNode for the NameNodes of the HA nameservice in `dfs.nameservices`
    /// (an actor for each), or for the one NameNode at dfs.namenode.rpc-address /
    /// fs.defaultFS.
    pub async fn start(
        conf: Configuration,
        clock: SharedClock,
    ) -> Result<DataNodeHandle, DataNodeError> {
        let user = rhdfs_conf::user::current_user();
        let addrs = namenode_rpc_addresses(&conf)?;
        let connectors: Vec<Arc<dyn NamenodeConnector>> = addrs
            .iter()
            .map(|a| {
                Arc::new(IpcConnector {
                    addr: a.clone(),
                    user: user.clone(),
                }) as Arc<dyn NamenodeConnector>
            })
            .collect();
        let handle = Self::start_with_all(conf, clock, connectors).await?;
        // Block recovery's commitBlockSynchronization goes to the NameNode that sent the
        // command (with HA the active one: only its commands run).
        crate::recovery::set_namenodes(handle.uuid(), &addrs, &user);
        Ok(handle)
    }

    /// Starts a DataNode talking to the NameNode through `connector`.
    pub async fn start_with(
        conf: Configuration,
        clock: SharedClock,
        connector: Arc<dyn NamenodeConnector>,
    ) -> Result<DataNodeHandle, DataNodeError> {
        Self::start_with_all(conf, clock, vec![connector]).await
    }

    /// Starts a DataNode serving one block pool through an actor per NameNode, one
    /// connector each (the NameNodes of an HA nameservice).
    pub async fn start_with_all(
        conf: Configuration,
        clock: SharedClock,
        connectors: Vec<Arc<dyn NamenodeConnector>>,
    ) -> Result<DataNodeHandle, DataNodeError> {
        if connectors.is_empty() {
            return Err(DataNodeError::Config("no NameNode to serve".into()));
        }
        let nn_names: Vec<String> = connectors.iter().map(|c| c.describe()).collect();
        let started_ms = clock.now_millis();
        let data_dirs = data_dirs(&conf);
        let reserved = conf
            .get_size(
                keys::DFS_DATANODE_DU_RESERVED_KEY,
                keys::DFS_DATANODE_DU_RESERVED_DEFAULT,
            )
            .map_err(conf_err)?;
        let perm_text = conf.get_str(
            keys::DFS_DATANODE_DATA_DIR_PERMISSION_KEY,
            keys::DFS_DATANODE_DATA_DIR_PERMISSION_DEFAULT,
        );
        let dir_mode = crate::volume_check::parse_dir_permission(&perm_text).ok_or_else(|| {
            conf_err(rhdfs_conf::ConfError::InvalidValue {
                key: keys::DFS_DATANODE_DATA_DIR_PERMISSION_KEY.to_string(),
                value: perm_text.to_string(),
                reason: "not a permission (octal such as 700, or rwx------)".to_string(),
            })
        })?;
        let dirs = data_dirs.clone();
        let tolerated = conf
            .get_i32(
                keys::DFS_DATANODE_FAILED_VOLUMES_TOLERATED_KEY,
                keys::DFS_DATANODE_FAILED_VOLUMES_TOLERATED_DEFAULT as i32,
            )
            .map_err(conf_err)?;
        let volume_checker = Arc::new(volume_checker(&conf, clock.clone())?);
        let dataset = tokio::task::spawn_blocking(move || {
            for d in &dirs {
                if let Err(e) = crate::volume_check::prepare_dir(d, dir_mode) {
                    tracing::warn!(dir = %d.display(), error = %e,
                        "cannot give the data directory permission {dir_mode:o}");
                }
            }
            Dataset::open_tolerating(&dirs, reserved, tolerated, started_ms)
        })
        .await
        .map_err(|e| DataNodeError::Join(e.to_string()))??;
        let faults = Arc::new(FaultHooks::default());
        faults.attach(dataset.clone());

        let (tx, events) = mpsc::unbounded_channel();
        let notifier: Arc<dyn BlockNotifier> = Arc::new(tx);
        dataset.set_notifier(notifier.clone());
        let xcfg = XceiverConfig {
            keepalive: conf
                .get_duration(
                    keys::DFS_DATANODE_SOCKET_REUSE_KEEPALIVE_KEY,
                    keys::DFS_DATANODE_SOCKET_REUSE_KEEPALIVE_DEFAULT,
                    TimeUnit::Milliseconds,
                )
                .map_err(conf_err)?,
            socket_timeout: conf
                .get_duration(
                    keys::DFS_CLIENT_SOCKET_TIMEOUT_KEY,
                    keys::DFS_CLIENT_SOCKET_TIMEOUT_DEFAULT,
                    TimeUnit::Milliseconds,
                )
                .map_err(conf_err)?,
            sync_on_close: conf
                .get_bool(
                    keys::DFS_DATANODE_SYNCONCLOSE_KEY,
                    keys::DFS_DATANODE_SYNCONCLOSE_DEFAULT,
                )
                .map_err(conf_err)?,
            sync_behind_writes: conf
                .get_bool(
                    keys::DFS_DATANODE_SYNC_BEHIND_WRITES_KEY,
                    keys::DFS_DATANODE_SYNC_BEHIND_WRITES_DEFAULT,
                )
                .map_err(conf_err)?,
            metrics: crate::metrics::DataNodeMetrics::from_conf(&conf, clock.clone())
                .map_err(conf_err)?
                .into_enabled(),
            transfer_to: conf
                .get_bool(
                    keys::DFS_DATANODE_TRANSFERTO_ALLOWED_KEY,
                    keys::DFS_DATANODE_TRANSFERTO_ALLOWED_DEFAULT,
                )
                .map_err(conf_err)?,
            read_packet_size: crate::xceiver::read_packet_size(
                conf.get_size(
                    keys::IO_FILE_BUFFER_SIZE_KEY,
                    keys::IO_FILE_BUFFER_SIZE_DEFAULT,
                )
                .map_err(conf_err)?
                .max(
                    conf.get_size(
                        keys::RHDFS_DATANODE_READ_PACKET_SIZE_KEY,
                        keys::RHDFS_DATANODE_READ_PACKET_SIZE_DEFAULT,
                    )
                    .map_err(conf_err)?,
                ),
            ),
            send_buffer_size: socket_buffer(
                &conf,
                keys::DFS_DATANODE_TRANSFER_SOCKET_SEND_BUFFER_SIZE_KEY,
                keys::DFS_DATANODE_TRANSFER_SOCKET_SEND_BUFFER_SIZE_DEFAULT,
            )?,
            recv_buffer_size: socket_buffer(
                &conf,
                keys::DFS_DATANODE_TRANSFER_SOCKET_RECV_BUFFER_SIZE_KEY,
                keys::DFS_DATANODE_TRANSFER_SOCKET_RECV_BUFFER_SIZE_DEFAULT,
            )?,
            shm_paths: crate::short_circuit_registry::shared_paths(
                conf.get(crate::short_circuit_registry::SHARED_FILE_DESCRIPTOR_PATHS_KEY)
                    .unwrap_or(crate::short_circuit_registry::SHARED_FILE_DESCRIPTOR_PATHS_DEFAULT),
            ),
            max_xceivers: usize::try_from(
                conf.get_u64(
                    keys::DFS_DATANODE_MAX_TRANSFER_THREADS_KEY,
                    keys::DFS_DATANODE_MAX_TRANSFER_THREADS_DEFAULT,
                )
                .map_err(conf_err)?,
            )
            .unwrap_or(usize::MAX),
            ..XceiverConfig::default()
        };
        let ctx = XceiverContext {
            dataset: dataset.clone(),
            notifier: notifier.clone(),
            faults: faults.clone(),
            config: xcfg,
            active: Default::default(),
            activity: Default::default(),
        };
        let xfer_bind = bind_addr(
            &conf,
            keys::DFS_DATANODE_ADDRESS_KEY,
            keys::DFS_DATANODE_ADDRESS_DEFAULT,
        )
        .await?;
        let xceiver = XceiverServer::bind(xfer_bind, ctx.clone()).await?;
        let domain = match crate::xceiver::domain_socket_path(&conf, xceiver.local_addr().port())
            .map_err(DataNodeError::Config)?
        {
            Some(path) => Some(DomainServer::bind(path, ctx.clone()).await?),
            None => None,
        };
        let metrics = ctx.config.metrics.clone();
        if let Some(m) = metrics.as_ref().filter(|m| m.disks.is_some()) {
            // Sampled metadata operations feed the slow-disk detector.
            dataset.set_file_io_events(m.clone());
        }
        let ipc_bind = bind_addr(
            &conf,
            keys::DFS_DATANODE_IPC_ADDRESS_KEY,
            keys::DFS_DATANODE_IPC_ADDRESS_DEFAULT,
        )
        .await?;
        let triggers = Arc::new(Triggers::default());
        let admins = Admins {
            permissions_enabled: conf
                .get_bool(
                    keys::DFS_PERMISSIONS_ENABLED_KEY,
                    keys::DFS_PERMISSIONS_ENABLED_DEFAULT,
                )
                .map_err(conf_err)?,
            superuser: rhdfs_conf::user::current_user(),
            supergroup: conf
                .get_trimmed(keys::DFS_PERMISSIONS_SUPERUSERGROUP_KEY)
                .unwrap_or(keys::DFS_PERMISSIONS_SUPERUSERGROUP_DEFAULT)
                .to_string(),
        };
        let shutdown = Arc::new(watch::Sender::new(None));
        let ipc = RpcServer::bind(
            ipc_bind,
            Arc::new(crate::recovery::DatanodeIpcRouter::new(
                ClientDatanodeService::new(
                    dataset.clone(),
                    triggers.clone(),
                    admins,
                    shutdown.clone(),
                ),
                dataset.clone(),
            )),
            ServerConfig::from_conf(&conf).map_err(conf_err)?,
        )
        .await?;
        let http_bind = bind_addr(
            &conf,
            keys::DFS_DATANODE_HTTP_ADDRESS_KEY,
            keys::DFS_DATANODE_HTTP_ADDRESS_DEFAULT,
        )
        .await?;
        let http = crate::http::HttpServer::start(&conf, http_bind).await?;
        let info_port = http.local_addr().port();

        let hostname_conf = conf
            .get_trimmed(keys::DFS_DATANODE_HOSTNAME_KEY)
            .map(str::to_string);
        let ip = advertised_ip(xceiver.local_addr().ip(), hostname_conf.as_deref()).await;
        let xfer_addr = SocketAddr::new(ip, xceiver.local_addr().port());
        let ipc_addr = SocketAddr::new(ip, ipc.local_addr().port());
        let identity = Identity {
            ip_addr: ip.to_string(),
            host_name: hostname_conf.unwrap_or_else(system_hostname),
            datanode_uuid: dataset.datanode_uuid().to_string(),
            xfer_port: xfer_addr.port(),
            info_port,
            ipc_port: ipc_addr.port(),
        };

        let acfg = actor_config(&conf)?;
        let threads = conf
            .get_usize(
                keys::DFS_DATANODE_FSDATASETASYNCDISK_MAX_THREADS_PER_VOLUME_KEY,
                keys::DFS_DATANODE_FSDATASETASYNCDISK_MAX_THREADS_PER_VOLUME_DEFAULT as usize,
            )
            .map_err(conf_err)?;
        let deleter = AsyncDeleter::start(&dataset, threads, notifier, faults.clone())?;
        let status_base = (
            ctx.dataset.clone(),
            ctx.activity.clone(),
            ctx.active.clone(),
        );
        let scan_activity = ctx.activity.clone();
        let actor = actor::start(ActorDeps {
            connectors,
            xceiver: Arc::new(ctx),
            identity: identity.clone(),
            clock: clock.clone(),
            cfg: acfg,
            events,
            deleter,
            triggers: triggers.clone(),
            volume_checker,
        });
        http.set_status(crate::http::Status {
            identity: identity.clone(),
            dataset: status_base.0,
            activity: status_base.1,
            xceivers: status_base.2,
            rpc: ipc.metrics(),
            actor: actor.view(),
            namenode: namenode_rpc_addresses(&conf)
                .map(|a| a.join(","))
                .unwrap_or_else(|_| nn_names.join(",")),
            started_ms,
            slow: metrics.clone(),
        });
        let directory_scanner = crate::scanners::directory_scan_interval(&conf)
            .map_err(conf_err)?
            .map(|every| crate::scanners::start_directory_scanner(dataset.clone(), every));
        let block_scanner = crate::block_scanner::ScannerConfig::from_conf(&conf)
            .map_err(conf_err)?
            .map(|cfg| {
                crate::block_scanner::BlockScanner::new(
                    dataset.clone(),
                    clock.clone(),
                    cfg,
                    actor.bad_replica_sink(),
                    scan_activity,
                )
                .start()
            });
        tracing::info!(uuid = %identity.datanode_uuid, %xfer_addr, %ipc_addr, http = %SocketAddr::new(ip, info_port), "DataNode started");
        Ok(DataNodeHandle {
            identity,
            xfer_addr,
            ipc_addr,
            storage_ids: dataset.storage_ids(),
            data_dirs,
            faults,
            dataset,
            xceiver,
            domain,
            ipc,
            http,
            actor,
            triggers,
            metrics,
            shutdown,
            _directory_scanner: directory_scanner,
            block_scanner,
        })
    }
}

impl DataNodeHandle {
    /// datanodeUuid (stable across restarts, stored in each volume's VERSION).
    pub fn uuid(&self) -> &str {
        &self.identity.datanode_uuid
    }

    /// Advertised data transfer address (what clients connect to).
    pub fn xfer_addr(&self) -> SocketAddr {
        self.xfer_addr
    }

    /// Advertised ClientDatanodeProtocol address.
    /// The HTTP (WebHDFS) address as advertised to the NameNode.
    pub fn http_addr(&self) -> SocketAddr {
        SocketAddr::new(self.xfer_addr.ip(), self.identity.info_port)
    }

    pub fn ipc_addr(&self) -> SocketAddr {
        self.ipc_addr
    }

    pub fn data_dirs(&self) -> &[PathBuf] {
        &self.data_dirs
    }

    /// Storage IDs (`DS-<uuid>`), one per data directory, in order.
    pub fn storage_ids(&self) -> &[String] {
        &self.storage_ids
    }

    pub fn faults(&self) -> &FaultHooks {
        &self.faults
    }

    /// Slow peer / slow disk statistics (None when all are off).
    pub fn metrics(&self) -> Option<&Arc<crate::metrics::DataNodeMetrics>> {
        self.metrics.as_ref()
    }

    pub fn dataset(&self) -> &Arc<Dataset> {
        &self.dataset
    }

    /// The block pool's HA view: which NameNode is taken as active, commands ignored from
    /// the others.
    pub fn ha(&self) -> &Arc<crate::actor::PoolHa> {
        self.actor.ha()
    }

    /// Identity as registered (ip, host name, ports).
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// True while registered with the NameNode.
    pub fn is_registered(&self) -> bool {
        self.actor.is_registered()
    }

    pub fn block_pool_id(&self) -> Option<String> {
        self.actor.block_pool_id()
    }

    /// Sends a full (or, with `incremental`, the pending incremental) block report now.
    pub fn trigger_block_report(&self, incremental: bool) {
        if incremental {
            self.triggers.incremental_report();
        } else {
            self.triggers.full_report();
        }
    }

    /// Resolves with the NameNode's reason once it refused this DataNode for good (see
    /// [`crate::actor::ActorHandle::refused`]); the daemon then shuts down.
    pub async fn refused(&self) -> String {
        self.actor.refused().await
    }

    /// Resolves once `dfsadmin -shutdownDatanode` asked this DataNode to stop, with the
    /// request's for-upgrade flag; the daemon then shuts down. (Hadoop also sends
    /// OOB_RESTART acks to writers for an upgrade; rhdfs writers see the pipeline break
    /// and recover it.)
    pub async fn shutdown_requested(&self) -> bool {
        actor::first_set(&self.shutdown).await
    }

    /// Resolves once more volumes failed than `dfs.datanode.failed.volumes.tolerated`
    /// allows, with the failed volumes: the DataNode has stopped serving the NameNode and
    /// the daemon then shuts down (Hadoop: "DataNode is shutting down due to failed
    /// volumes").
    pub async fn volumes_failed(&self) -> String {
        self.actor.volumes_failed().await
    }

    /// Runs the directory scan of every block pool now (what the periodic scanner does every
    /// `dfs.datanode.directoryscan.interval`): replicas whose files are gone leave the map
    /// and are reported deleted, length mismatches are reported with the length found.
    pub async fn scan_directories(&self) -> Vec<crate::dataset::ScanSummary> {
        crate::scanners::scan_all_pools(&self.dataset).await
    }

    /// Checks every FINALIZED replica not checked within `dfs.datanode.scan.period.hours`
    /// against its checksums now, unthrottled (what the block scanner does in the
    /// background); corrupt ones are reported to the NameNode. None when the scanner is off.
    pub async fn scan_blocks(&self) -> Option<crate::block_scanner::ScanTotals> {
        let scanner = Arc::clone(self.block_scanner.as_ref()?.scanner());
        tokio::task::spawn_blocking(move || {
            scanner.scan_now();
            scanner.totals()
        })
        .await
        .ok()
    }

    /// Stops the actor, the servers and the deleter threads.
    pub async fn shutdown(self) {
        self.actor.shutdown().await;
        self.xceiver.shutdown().await;
        if let Some(d) = self.domain {
            d.shutdown().await;
        }
        self.ipc.shutdown().await;
        drop(self.http);
        tracing::info!(uuid = %self.identity.datanode_uuid, "DataNode stopped");
    }
}

fn data_dirs(conf: &Configuration) -> Vec<PathBuf> {
    let list = conf.get_list(keys::DFS_DATANODE_DATA_DIR_KEY);
    let dirs: Vec<PathBuf> = list.iter().filter_map(|e| parse_data_dir(e)).collect();
    if !dirs.is_empty() {
        return dirs;
    }
    let tmp = conf
        .get_trimmed(keys::HADOOP_TMP_DIR_KEY)
        .map(str::to_string)
        .unwrap_or_else(|| format!("/tmp/hadoop-{}", rhdfs_conf::user::current_user()));
    vec![PathBuf::from(tmp).join("dfs").join("data")]
}

fn volume_checker(
    conf: &Configuration,
    clock: SharedClock,
) -> Result<crate::volume_check::VolumeChecker, DataNodeError> {
    let min_gap = conf
        .get_duration(
            keys::DFS_DATANODE_DISK_CHECK_MIN_GAP_KEY,
            keys::DFS_DATANODE_DISK_CHECK_MIN_GAP_DEFAULT,
            keys::DFS_DATANODE_DISK_CHECK_MIN_GAP_UNIT,
        )
        .map_err(conf_err)?;
    let timeout = conf
        .get_duration(
            keys::DFS_DATANODE_DISK_CHECK_TIMEOUT_KEY,
            keys::DFS_DATANODE_DISK_CHECK_TIMEOUT_DEFAULT,
            keys::DFS_DATANODE_DISK_CHECK_TIMEOUT_UNIT,
        )
        .map_err(conf_err)?;
    if timeout.is_zero() {
        return Err(DataNodeError::Config(format!(
            "{} - 0 (should be > 0)",
            keys::DFS_DATANODE_DISK_CHECK_TIMEOUT_KEY
        )));
    }
    Ok(crate::volume_check::VolumeChecker::new(
        min_gap, timeout, clock,
    ))
}

/// The rpc addresses of the NameNodes this DataNode serves: each NameNode of the HA
/// nameservice `dfs.nameservices` names (`dfs.ha.namenodes.<ns>`,
/// `dfs.namenode.rpc-address.<ns>.<nn>`), else the one NameNode of dfs.namenode.rpc-address
/// or fs.defaultFS.
pub fn namenode_rpc_addresses(conf: &Configuration) -> Result<Vec<String>, DataNodeError> {
    if let Some(ns) = rhdfs_conf::ha::single_nameservice(conf).map_err(conf_err)? {
        return Ok(ns.namenodes.iter().map(|n| n.rpc_addr()).collect());
    }
    let (host, port) = addr::namenode_rpc_address(conf).map_err(conf_err)?;
    Ok(vec![format!("{host}:{port}")])
}

fn actor_config(conf: &Configuration) -> Result<ActorConfig, DataNodeError> {
    let heartbeat_interval = conf
        .get_duration(
            keys::DFS_HEARTBEAT_INTERVAL_KEY,
            keys::DFS_HEARTBEAT_INTERVAL_DEFAULT,
            keys::DFS_HEARTBEAT_INTERVAL_UNIT,
        )
        .map_err(conf_err)?;
    let block_report_interval = conf
        .get_duration(
            keys::DFS_BLOCKREPORT_INTERVAL_MSEC_KEY,
            keys::DFS_BLOCKREPORT_INTERVAL_MSEC_DEFAULT,
            keys::DFS_BLOCKREPORT_INTERVAL_MSEC_UNIT,
        )
        .map_err(conf_err)?;
    let initial_delay = conf
        .get_duration(
            keys::DFS_BLOCKREPORT_INITIAL_DELAY_KEY,
            keys::DFS_BLOCKREPORT_INITIAL_DELAY_DEFAULT,
            keys::DFS_BLOCKREPORT_INITIAL_DELAY_UNIT,
        )
        .map_err(conf_err)?;
    let split_threshold = conf
        .get_u64(
            keys::DFS_BLOCKREPORT_SPLIT_THRESHOLD_KEY,
            keys::DFS_BLOCKREPORT_SPLIT_THRESHOLD_DEFAULT,
        )
        .map_err(conf_err)?;
    let ibr_interval = conf
        .get_duration(
            keys::DFS_BLOCKREPORT_INCREMENTAL_INTERVAL_MSEC_KEY,
            keys::DFS_BLOCKREPORT_INCREMENTAL_INTERVAL_MSEC_DEFAULT,
            keys::DFS_BLOCKREPORT_INCREMENTAL_INTERVAL_MSEC_UNIT,
        )
        .map_err(conf_err)?;
    let process_commands_threshold = conf
        .get_duration(
            keys::DFS_DATANODE_PROCESSCOMMANDS_THRESHOLD_KEY,
            keys::DFS_DATANODE_PROCESSCOMMANDS_THRESHOLD_DEFAULT,
            keys::DFS_DATANODE_PROCESSCOMMANDS_THRESHOLD_UNIT,
        )
        .map_err(conf_err)?;
    Ok(ActorConfig {
        split_threshold,
        ibr_interval,
        process_commands_threshold,
        heartbeat_interval: heartbeat_interval.max(Duration::from_millis(10)),
        block_report_interval: block_report_interval.max(Duration::from_millis(10)),
        initial_delay,
        retry_interval: heartbeat_interval
            .clamp(Duration::from_millis(100), Duration::from_secs(1)),
    })
}

async fn bind_addr(
    conf: &Configuration,
    key: &str,
    default: &str,
) -> Result<SocketAddr, DataNodeError> {
    let (host, port) = addr::address_from_conf(conf, key, default).map_err(conf_err)?;
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let mut it = tokio::net::lookup_host((host.as_str(), port)).await?;
    it.find(|a| a.is_ipv4())
        .ok_or_else(|| DataNodeError::Config(format!("{key}: cannot resolve {host}")))
}

/// The bound IP, or (bound to a wildcard) dfs.datanode.hostname's address, else 127.0.0.1.
async fn advertised_ip(bound: IpAddr, hostname: Option<&str>) -> IpAddr {
    if !bound.is_unspecified() {
        return bound;
    }
    if let Some(h) = hostname {
        if let Ok(ip) = h.parse::<IpAddr>() {
            return ip;
        }
        if let Ok(mut it) = tokio::net::lookup_host((h, 0)).await
            && let Some(a) = it.find(|a| a.is_ipv4())
        {
            return a.ip();
        }
        tracing::warn!(
            host = h,
            "cannot resolve dfs.datanode.hostname; advertising 127.0.0.1"
        );
    }
    IpAddr::V4(Ipv4Addr::LOCALHOST)
}

fn system_hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is a valid writable buffer of the given length.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match std::str::from_utf8(&buf[..len]) {
        Ok(h) if rc == 0 && !h.is_empty() => h.to_string(),
        _ => "localhost".to_string(),
    }
}
