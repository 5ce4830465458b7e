//! `NameNode::start`: load or format the name directories, start the block manager, the
//! lease monitor and the RPC server (ClientProtocol and DatanodeProtocol on one port).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rhdfs_blockmanager::BlockManager;
use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::{Configuration, TimeUnit, keys};
use rhdfs_ipc::{ProtocolRouter, RpcServer, ServerConfig};
use rhdfs_proto::protocols::{CLIENT_PROTOCOL, DATANODE_PROTOCOL, HA_SERVICE_PROTOCOL};
use tokio::task::JoinHandle;

use crate::namespace::NamespaceConfig;
use crate::namesystem::{Namesystem, NamesystemSettings};
use crate::rpc::datanode::DatanodeProtocolService;
use crate::rpc::ha_service::HaServiceProtocolService;
use crate::rpc::{ClientProtocolService, server_defaults};
use crate::startup::{Phase, StartupProgress};
use crate::storage;
use rhdfs_editlog::RecoveryMode;

/// Why the NameNode could not start.
#[derive(Debug, thiserror::Error)]
pub enum NameNodeError {
    #[error("configuration: {0}")]
    Conf(#[from] rhdfs_conf::ConfError),
    #[error("HA configuration: {0}")]
    HaConf(#[from] rhdfs_conf::ha::HaConfError),
    #[error("name directory: {0}")]
    Storage(String),
    #[error("name directory: {0}")]
    Persist(#[from] crate::persist::PersistError),
    #[error("block manager: {0}")]
    BlockManager(#[from] rhdfs_blockmanager::BlockManagerError),
    #[error("HA: {0}")]
    Ha(#[from] crate::ha::member::HaError),
    #[error("cannot bind the RPC server at {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    /// The web port (`dfs.namenode.http-address`) could not be served. As in Hadoop, whose
    /// NameNode fails to start with "Port in use", the NameNode does not run without it:
    /// health checks, fsck, WebHDFS and the JMX beans all live there.
    #[error("{0}")]
    Http(#[from] crate::http::HttpError),
}

/// The namespace settings from the configuration; the superuser is `user`.
pub fn namespace_config(
    conf: &Configuration,
    user: &str,
) -> Result<NamespaceConfig, NameNodeError> {
    let d = NamespaceConfig::default();
    let u16_of = |v: u64| u16::try_from(v).unwrap_or(u16::MAX);
    Ok(NamespaceConfig {
        permissions_enabled: conf.get_bool(
            keys::DFS_PERMISSIONS_ENABLED_KEY,
            keys::DFS_PERMISSIONS_ENABLED_DEFAULT,
        )?,
        superuser: user.to_string(),
        supergroup: conf.get_str(
            keys::DFS_PERMISSIONS_SUPERUSERGROUP_KEY,
            keys::DFS_PERMISSIONS_SUPERUSERGROUP_DEFAULT,
        ),
        ls_limit: conf
            .get_usize(keys::DFS_LS_LIMIT_KEY, keys::DFS_LS_LIMIT_DEFAULT as usize)?
            .max(1),
        max_component_length: conf.get_usize(
            keys::DFS_NAMENODE_FS_LIMITS_MAX_COMPONENT_LENGTH_KEY,
            d.max_component_length,
        )?,
        max_directory_items: conf.get_usize(
            keys::DFS_NAMENODE_FS_LIMITS_MAX_DIRECTORY_ITEMS_KEY,
            d.max_directory_items,
        )?,
        min_block_size: conf.get_size(
            keys::DFS_NAMENODE_FS_LIMITS_MIN_BLOCK_SIZE_KEY,
            d.min_block_size,
        )?,
        max_blocks_per_file: conf.get_usize(
            keys::DFS_NAMENODE_FS_LIMITS_MAX_BLOCKS_PER_FILE_KEY,
            d.max_blocks_per_file,
        )?,
        min_replication: u16_of(conf.get_u64(
            keys::DFS_NAMENODE_REPLICATION_MIN_KEY,
            keys::DFS_NAMENODE_REPLICATION_MIN_DEFAULT,
        )?)
        .max(1),
        max_replication: u16_of(conf.get_u64(
            keys::DFS_REPLICATION_MAX_KEY,
            keys::DFS_REPLICATION_MAX_DEFAULT,
        )?),
        soft_limit: d.soft_limit,
        hard_limit: conf.get_duration(
            keys::DFS_NAMENODE_LEASE_HARD_LIMIT_SEC_KEY,
            keys::DFS_NAMENODE_LEASE_HARD_LIMIT_SEC_DEFAULT,
            TimeUnit::Seconds,
        )?,
        access_time_precision: conf
            .get_duration(
                keys::DFS_NAMENODE_ACCESSTIME_PRECISION_KEY,
                keys::DFS_NAMENODE_ACCESSTIME_PRECISION_DEFAULT,
                TimeUnit::Milliseconds,
            )?
            .as_millis() as u64,
        content_summary_limit: usize::try_from(conf.get_i64(
            keys::DFS_CONTENT_SUMMARY_LIMIT_KEY,
            keys::DFS_CONTENT_SUMMARY_LIMIT_DEFAULT,
        )?)
        .unwrap_or(0),
        acls_enabled: conf.get_bool(
            keys::DFS_NAMENODE_ACLS_ENABLED_KEY,
            keys::DFS_NAMENODE_ACLS_ENABLED_DEFAULT,
        )?,
        posix_acl_inheritance: conf.get_bool(
            keys::DFS_NAMENODE_POSIX_ACL_INHERITANCE_ENABLED_KEY,
            keys::DFS_NAMENODE_POSIX_ACL_INHERITANCE_ENABLED_DEFAULT,
        )?,
        type_quotas_enabled: conf.get_bool(
            keys::DFS_QUOTA_BY_STORAGETYPE_ENABLED_KEY,
            keys::DFS_QUOTA_BY_STORAGETYPE_ENABLED_DEFAULT,
        )?,
        xattrs_enabled: conf.get_bool(
            keys::DFS_NAMENODE_XATTRS_ENABLED_KEY,
            keys::DFS_NAMENODE_XATTRS_ENABLED_DEFAULT,
        )?,
        max_xattrs_per_inode: conf.get_usize(
            keys::DFS_NAMENODE_FS_LIMITS_MAX_XATTRS_PER_INODE_KEY,
            d.max_xattrs_per_inode,
        )?,
        max_xattr_size: conf.get_usize(
            keys::DFS_NAMENODE_FS_LIMITS_MAX_XATTR_SIZE_KEY,
            d.max_xattr_size,
        )?,
    })
}

/// `rhdfs namenode -format`: writes a new namespace identity into every name directory
/// (refusing non-empty ones unless `force`).
/// Also saves the empty namespace as image 0. Blocking.
pub fn format(conf: &Configuration, force: bool) -> Result<(), NameNodeError> {
    let user = rhdfs_conf::user::current_user();
    let ns_cfg = namespace_config(conf, &user)?;
    crate::persist::format(conf, &rhdfs_conf::clock::system_clock(), ns_cfg, force)?;
    Ok(())
}

/// `format` with a synthetic namespace of `spec`'s files in the first image (`rhdfs bench
/// nn-memory`). Blocking.
pub fn format_synthetic(
    conf: &Configuration,
    spec: &crate::namespace::SyntheticSpec,
    force: bool,
) -> Result<(), NameNodeError> {
    let user = rhdfs_conf::user::current_user();
    let ns_cfg = namespace_config(conf, &user)?;
    crate::persist::format_synthetic(
        conf,
        &rhdfs_conf::clock::system_clock(),
        ns_cfg,
        spec,
        force,
    )?;
    Ok(())
}

/// `rhdfs namenode -recover`: loads the name directories keeping the valid prefix of a
/// damaged edit log (RecoveryMode::KeepPrefix), repairs the directories and closes the
/// log. Returns the last txid kept. Blocking.
pub fn recover(conf: &Configuration) -> Result<u64, NameNodeError> {
    let user = rhdfs_conf::user::current_user();
    let ns_cfg = namespace_config(conf, &user)?;
    let (durable, ns) = crate::persist::load(
        conf,
        &rhdfs_conf::clock::system_clock(),
        ns_cfg,
        RecoveryMode::KeepPrefix,
    )?;
    durable.close();
    Ok(ns.last_txid())
}

/// The NameNode.
pub struct NameNode;

/// A running NameNode.
pub struct NameNodeHandle {
    rpc: RpcServer,
    fs: Arc<Namesystem>,
    bm: Arc<BlockManager>,
    stop: Arc<AtomicBool>,
    lease_monitor: JoinHandle<()>,
    checkpointer: JoinHandle<()>,
    safe_mode: JoinHandle<()>,
    /// The trash emptier, when `fs.trash.interval` is above 0.
    trash_emptier: Option<JoinHandle<()>>,
    durable: Arc<crate::persist::Durable>,
    http: crate::http::HttpServer,
    /// The Raft member, for a NameNode of an HA nameservice.
    ha: Option<crate::ha::member::HaMember>,
}

impl std::fmt::Debug for NameNodeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NameNodeHandle")
            .field("rpc_addr", &self.rpc.local_addr())
            .finish_non_exhaustive()
    }
}

impl NameNode {
    /// Loads (or formats, when empty) the name directories and starts serving.
    pub async fn start(
        conf: Configuration,
        clock: SharedClock,
    ) -> Result<NameNodeHandle, NameNodeError> {
        Self::start_with(conf, clock, RecoveryMode::Strict).await
    }

    /// [`NameNode::start`] with an edit-log recovery mode (`KeepPrefix` = `-recover`).
    pub async fn start_with(
        conf: Configuration,
        clock: SharedClock,
        mode: RecoveryMode,
    ) -> Result<NameNodeHandle, NameNodeError> {
        let mut conf = conf;
        // In an HA nameservice this NameNode's own addresses become the generic keys, and
        // with two NameNodes or more their edits are replicated through Raft.
        let mut ha_of = None;
        if let Some((ns, nn)) = rhdfs_conf::ha::apply_own_namenode(&mut conf)? {
            tracing::info!(nameservice = %ns, namenode = %nn, "NameNode of an HA nameservice");
            if let Some(nameservice) = rhdfs_conf::ha::nameservice(&conf, &ns)?
                && nameservice.namenodes.len() >= 2
            {
                ha_of = Some((nameservice, nn));
            }
        }
        let (host, port) = rhdfs_conf::addr::namenode_rpc_address(&conf)?;
        storage::name_dirs(&conf)?;
        let user = tokio::task::spawn_blocking(rhdfs_conf::user::current_user)
            .await
            .unwrap_or_else(|_| "hdfs".to_string());
        let ns_cfg = namespace_config(&conf, &user)?;
        let checkpoint_policy = crate::persist::checkpoint_policy(&conf)?;
        let progress = Arc::new(StartupProgress::new(clock.clone()));
        let (durable, namespace) = {
            let (conf, clock, ns_cfg) = (conf.clone(), clock.clone(), ns_cfg.clone());
            let progress = progress.clone();
            tokio::task::spawn_blocking(move || {
                crate::persist::load_reporting(&conf, &clock, ns_cfg, mode, &progress)
            })
            .await
            .map_err(|e| NameNodeError::Storage(format!("storage task failed: {e}")))??
        };
        let v = durable.version();
        let ns_info = rhdfs_blockmanager::NamespaceInfo {
            namespace_id: v.namespace_id,
            cluster_id: v.cluster_id.clone(),
            block_pool_id: v.block_pool_id.clone(),
            ctime: v.ctime,
        };
        let defaults = server_defaults(&conf)?;
        let retry_cache =
            crate::retry_cache::settings_from_conf(&conf, crate::retry_cache::machine_memory())?;
        let lease_recheck = conf.get_duration(
            keys::DFS_NAMENODE_LEASE_RECHECK_INTERVAL_MS_KEY,
            keys::DFS_NAMENODE_LEASE_RECHECK_INTERVAL_MS_DEFAULT,
            keys::DFS_NAMENODE_LEASE_RECHECK_INTERVAL_MS_UNIT,
        )?;
        let replication_wait = conf.get_duration(
            keys::RHDFS_NAMENODE_REPLICATION_WAIT_MS_KEY,
            keys::RHDFS_NAMENODE_REPLICATION_WAIT_MS_DEFAULT,
            keys::RHDFS_NAMENODE_REPLICATION_WAIT_MS_UNIT,
        )?;
        let heartbeat = conf.get_duration(
            keys::DFS_HEARTBEAT_INTERVAL_KEY,
            keys::DFS_HEARTBEAT_INTERVAL_DEFAULT,
            keys::DFS_HEARTBEAT_INTERVAL_UNIT,
        )?;
        let settings = NamesystemSettings {
            lease_recheck: lease_recheck.max(Duration::from_millis(10)),
            replication_wait,
            block_recovery_timeout: crate::block_recoveries::block_recovery_timeout(heartbeat),
            list_open_files_batch: usize::try_from(conf.get_u64(
                keys::DFS_NAMENODE_LIST_OPENFILES_NUM_RESPONSES_KEY,
                keys::DFS_NAMENODE_LIST_OPENFILES_NUM_RESPONSES_DEFAULT,
            )?)
            .unwrap_or(usize::MAX)
            .max(1),
            groups_cache: conf.get_duration(
                keys::HADOOP_SECURITY_GROUPS_CACHE_SECS_KEY,
                keys::HADOOP_SECURITY_GROUPS_CACHE_SECS_DEFAULT,
                keys::HADOOP_SECURITY_GROUPS_CACHE_SECS_UNIT,
            )?,
            crash_before_sync: crate::namesystem::CrashBeforeSync {
                op: conf
                    .get_trimmed(keys::RHDFS_NAMENODE_FAULT_CRASH_BEFORE_SYNC_KEY)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
                delay: conf.get_duration(
                    keys::RHDFS_NAMENODE_FAULT_CRASH_BEFORE_SYNC_DELAY_MS_KEY,
                    keys::RHDFS_NAMENODE_FAULT_CRASH_BEFORE_SYNC_DELAY_MS_DEFAULT,
                    keys::RHDFS_NAMENODE_FAULT_CRASH_BEFORE_SYNC_DELAY_MS_UNIT,
                )?,
            },
        };

        let bm = BlockManager::new(&conf, clock.clone(), ns_info.clone())?;
        // A NameNode starts in safe mode: nothing is sent to a DataNode before the first
        // safe-mode check below says otherwise.
        bm.set_safe_mode(true);
        // Hadoop's replication queues wait for start-up safe mode's thresholds: no
        // low-redundancy bookkeeping per reported replica while every block is reported.
        bm.defer_replication_queues();
        bm.start();
        let groups: crate::namesystem::GroupsLookup = Arc::new(rhdfs_conf::user::groups_of);
        let fs = Namesystem::new(namespace, bm.clone(), clock.clone(), settings, groups);
        fs.attach_durable(durable.clone());
        fs.register_loaded_blocks();
        // Hadoop's startCommonServices: the safe mode phase counts reported blocks from here.
        progress.begin(Phase::SafeMode);
        // The kept counts: fs_stats would scan every block.
        progress.set_total(Phase::SafeMode, bm.safe_block_counts().1);
        fs.attach_startup_progress(progress);
        bm.set_last_txid(durable.log().last_txid());
        let stop = Arc::new(AtomicBool::new(false));
        let lease_monitor = fs.spawn_lease_monitor(stop.clone());
        let safe_cfg = crate::safemode::SafeModeConfig::from_conf(&conf)?;
        let mut tracker = crate::safemode::SafeModeTracker::new(safe_cfg);
        crate::safemode::tick(&fs, &mut tracker);
        let safe_mode = crate::safemode::spawn_safe_mode_monitor(
            fs.clone(),
            tracker,
            safe_cfg.recheck,
            stop.clone(),
        );
        let audit = {
            let (conf, clock) = (conf.clone(), clock.clone());
            tokio::task::spawn_blocking(move || crate::audit::AuditLog::from_conf(&conf, clock))
                .await
                .ok()
                .flatten()
        };
        let checkpointer = crate::persist::spawn_checkpointer(
            durable.clone(),
            checkpoint_policy,
            clock.clone(),
            stop.clone(),
        );

        let starting = Starting {
            stop: &stop,
            tasks: [&lease_monitor, &checkpointer, &safe_mode],
            bm: &bm,
            durable: &durable,
        };
        let raft_faults = rhdfs_raftlog::net::Faults::new();
        let raft_service = crate::ha::member::HaMember::service(&raft_faults);
        if ha_of.is_some() {
            // A standby from before the port opens until Raft makes it the active.
            crate::ha::member::enter_standby(&fs);
        }
        let http = match crate::http::HttpServer::start(&conf, fs.clone()).await {
            Ok(h) => h,
            Err(e) => {
                starting.abandon().await;
                return Err(e.into());
            }
        };
        let mut ha_service = HaServiceProtocolService::new(fs.clone(), &conf)?;
        if let Some((nameservice, own)) = &ha_of {
            ha_service = ha_service.with_leadership(crate::ha::member::leadership(
                &fs,
                &raft_service,
                nameservice,
                own,
                &conf,
            )?);
        }
        let mut client_service = ClientProtocolService::new(fs.clone(), defaults)
            .with_retry_cache(retry_cache)
            .with_audit(audit);
        if ha_of.is_some() {
            client_service =
                client_service.with_observer_reads(crate::rpc::observer_reads::ObserverGate {
                    settings: crate::ha::observer::ObserverSettings::from_conf(&conf)?,
                    raft: raft_service.clone(),
                });
        }
        let client_service = Arc::new(client_service);
        if let Some(cache) = client_service.retry_cache() {
            fs.attach_retry_cache(cache.clone());
        }
        // Clients and DataNodes share the port; calls are routed by their protocol name
        // (an unknown one is RpcNoSuchProtocolException, as in Hadoop).
        let router = ProtocolRouter::new()
            .route(CLIENT_PROTOCOL, client_service)
            .route(
                DATANODE_PROTOCOL,
                Arc::new(DatanodeProtocolService::new(fs.clone())),
            )
            .route(HA_SERVICE_PROTOCOL, Arc::new(ha_service))
            .route(rhdfs_raftlog::net::RAFT_PROTOCOL, raft_service.clone());
        let bind_host = conf
            .get_trimmed(keys::DFS_NAMENODE_RPC_BIND_HOST_KEY)
            .map(str::to_string)
            .unwrap_or(host);
        let addr = tokio::net::lookup_host((bind_host.as_str(), port))
            .await
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| NameNodeError::Bind {
                addr: format!("{bind_host}:{port}"),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "cannot resolve host"),
            })?;
        let rpc =
            match RpcServer::bind(addr, Arc::new(router), rpc_server_config(&conf, &bm)?).await {
                Ok(rpc) => rpc,
                Err(source) => {
                    starting.abandon().await;
                    return Err(NameNodeError::Bind {
                        addr: addr.to_string(),
                        source,
                    });
                }
            };
        let ha = match &ha_of {
            Some((nameservice, own)) => {
                let started = match crate::ha::member::RaftSettings::from_conf(
                    &conf,
                    durable.log().dirs().roots().into_iter().next(),
                ) {
                    Ok(settings) => {
                        crate::ha::member::HaMember::start(
                            fs.clone(),
                            nameservice,
                            own,
                            settings,
                            raft_service,
                            raft_faults,
                            stop.clone(),
                        )
                        .await
                    }
                    Err(e) => Err(e),
                };
                match started {
                    Ok(m) => Some(m),
                    Err(e) => {
                        rpc.shutdown().await;
                        starting.abandon().await;
                        return Err(e.into());
                    }
                }
            }
            None => None,
        };
        http.set_rpc_connector(rpc.local_connector());
        http.set_rpc(rpc.local_addr(), rpc.metrics());
        let trash_emptier = crate::trash_emptier::EmptierConfig::from_conf(&conf)?.map(|cfg| {
            let mut own = rpc.local_addr();
            if own.ip().is_unspecified() {
                own.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
            }
            crate::trash_emptier::start(own, conf.clone(), cfg, clock.clone(), user.to_string())
        });
        tracing::info!(
            rpc = %rpc.local_addr(),
            pool = %ns_info.block_pool_id,
            cluster = %ns_info.cluster_id,
            superuser = %user,
            "NameNode started"
        );
        Ok(NameNodeHandle {
            rpc,
            fs,
            bm,
            stop,
            lease_monitor,
            checkpointer,
            safe_mode,
            trash_emptier,
            durable,
            http,
            ha,
        })
    }
}

/// What a start has set running before its servers bind; [`Starting::abandon`] stops it
/// when a bind fails, so a failed start leaves no task behind and releases the name
/// directories (a caller may retry in the same process).
struct Starting<'a> {
    stop: &'a AtomicBool,
    tasks: [&'a JoinHandle<()>; 3],
    bm: &'a BlockManager,
    durable: &'a Arc<crate::persist::Durable>,
}

impl Starting<'_> {
    async fn abandon(&self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.tasks {
            t.abort();
        }
        self.bm.stop();
        let durable = self.durable.clone();
        let _ = tokio::task::spawn_blocking(move || durable.close()).await;
    }
}

impl NameNodeHandle {
    /// The address the RPC server listens on.
    pub fn rpc_addr(&self) -> SocketAddr {
        self.rpc.local_addr()
    }

    /// The HTTP address (`/fsck`, `/jmx`, `/metrics`, WebHDFS, the web UI).
    pub fn http_addr(&self) -> SocketAddr {
        self.http.local_addr()
    }

    pub fn block_manager(&self) -> Arc<BlockManager> {
        self.bm.clone()
    }

    pub fn namesystem(&self) -> &Arc<Namesystem> {
        &self.fs
    }

    /// Resolves when this HA NameNode's namespace diverged from the replicated edit log
    /// (`ha::Role::Failed`): it serves nothing more and must be restarted to reload it, as
    /// Hadoop's NameNode exits when it loses its edit log quorum. Never resolves without HA.
    pub async fn failed(&self) {
        if self.ha.is_none() {
            std::future::pending::<()>().await;
        }
        while self.fs.ha_role().get() != crate::ha::Role::Failed {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The Raft member of an HA NameNode (tests cut its Raft traffic through `faults`).
    pub fn ha_member(&self) -> Option<&crate::ha::member::HaMember> {
        self.ha.as_ref()
    }

    /// Stops serving, the lease monitor and the block manager's tasks.
    pub async fn shutdown(self) {
        self.stop.store(true, Ordering::Relaxed);
        self.lease_monitor.abort();
        self.checkpointer.abort();
        self.safe_mode.abort();
        if let Some(t) = &self.trash_emptier {
            t.abort();
        }
        if let Some(m) = self.ha {
            m.shutdown().await;
        }
        self.rpc.shutdown().await;
        self.bm.stop();
        let durable = self.durable.clone();
        let _ = tokio::task::spawn_blocking(move || durable.close()).await;
        tracing::info!("NameNode stopped");
    }

    /// Stops like a killed process: the RPC server and tasks end, the edit log is left as
    /// it is on disk (nothing more is synced or finalized) and the directory locks are
    /// released so a new NameNode in this process can start on the same directories.
    pub async fn crash(self) {
        self.stop.store(true, Ordering::Relaxed);
        self.lease_monitor.abort();
        self.checkpointer.abort();
        self.safe_mode.abort();
        if let Some(t) = &self.trash_emptier {
            t.abort();
        }
        if let Some(m) = self.ha {
            m.shutdown().await;
        }
        self.rpc.shutdown().await;
        self.bm.stop();
        self.durable.abandon();
        tracing::info!("NameNode crashed (test)");
    }
}

/// The RPC server's configuration; with `dfs.namenode.state.context.enabled` every response
/// header carries the NameNode's state id (`ha::observer::StateIdContext`).
fn rpc_server_config(
    conf: &Configuration,
    bm: &Arc<BlockManager>,
) -> Result<ServerConfig, rhdfs_conf::ConfError> {
    let config = ServerConfig::from_conf(conf)?;
    Ok(
        if conf.get_bool(
            keys::DFS_NAMENODE_STATE_CONTEXT_ENABLED_KEY,
            keys::DFS_NAMENODE_STATE_CONTEXT_ENABLED_DEFAULT,
        )? {
            config.with_alignment(Arc::new(crate::ha::observer::StateIdContext::new(
                bm.clone(),
            )))
        } else {
            config
        },
    )
}
