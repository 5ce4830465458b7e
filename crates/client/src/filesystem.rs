//! `FileSystem`: the NameNode connection and every metadata call.

use std::sync::Arc;

use futures::Stream;
use rhdfs_conf::clock::{SharedClock, system_clock};
use rhdfs_conf::{Configuration, addr};
use rhdfs_ipc::{ClientConfig, ConnectRetry, LocalConnector, RpcClient};
use rhdfs_proto::hdfs::*;
use rhdfs_proto::protocols::CLIENT_PROTOCOL;
use tokio::sync::OnceCell;
use tracing::debug;

use crate::config::ClientConf;
use crate::error::{ClientError, Result};
use crate::failover::{FailoverSettings, NameNodeProxy, ObserverSettings};
use crate::lease::{LeaseGuard, LeaseRenewer, RENEW_INTERVAL_DEFAULT};
use crate::path;
use crate::peer_cache::PeerCache;
use crate::types::{BlockLocation, ContentSummary, FileStatus, FsStats, ServerDefaults};

/// Value sent for "the whole file" in getBlockLocations.
pub(crate) const WHOLE_FILE: u64 = i64::MAX as u64;

/// A connection to one HDFS namespace. Cheap to clone.
#[derive(Clone, Debug)]
pub struct FileSystem {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) nn: NameNodeProxy,
    pub(crate) conf: ClientConf,
    pub(crate) raw_conf: Configuration,
    pub(crate) user: String,
    pub(crate) client_name: String,
    pub(crate) uri: String,
    pub(crate) working_dir: String,
    pub(crate) clock: SharedClock,
    server_defaults: OnceCell<ServerDefaults>,
    pub(crate) leases: Arc<LeaseRenewer>,
    /// Idle DataNode connections for reuse, and connection counters.
    pub(crate) peers: PeerCache,
    /// Permits for hedged requests (dfs.client.hedged.read.threadpool.size).
    pub(crate) hedge_permits: Arc<tokio::sync::Semaphore>,
    pub(crate) hedge_stats: crate::hedge_stats::HedgeStats,
    /// Short-circuit local reads: open replicas, disabled sockets, counters.
    pub(crate) short_circuit: crate::short_circuit::ShortCircuit,
}

/// How to create a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateOptions {
    pub overwrite: bool,
    pub create_parent: bool,
    /// `None`: dfs.replication from the client configuration.
    pub replication: Option<u16>,
    /// `None`: dfs.blocksize from the client configuration.
    pub block_size: Option<u64>,
    /// Unmasked permission (the umask is applied); `None`: 0666.
    pub permission: Option<u16>,
}

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions {
            overwrite: false,
            create_parent: true,
            replication: None,
            block_size: None,
            permission: None,
        }
    }
}

/// CreateFlag bits.
pub(crate) const CREATE_FLAG_CREATE: u32 = 1;
pub(crate) const CREATE_FLAG_OVERWRITE: u32 = 2;
pub(crate) const CREATE_FLAG_APPEND: u32 = 4;

impl FileSystem {
    /// Connects to `uri` (`hdfs://host:port`), with the configuration from `HADOOP_CONF_DIR`.
    pub async fn connect(uri: &str) -> Result<Self> {
        Self::connect_with(Some(uri), Configuration::from_env()?).await
    }

    /// Connects to `fs.defaultFS` (or `dfs.namenode.rpc-address`) of `conf`.
    pub async fn from_conf(conf: Configuration) -> Result<Self> {
        Self::connect_with(None, conf).await
    }

    /// Connects to `uri` if given, else to the configured default filesystem.
    pub async fn connect_with(uri: Option<&str>, conf: Configuration) -> Result<Self> {
        Self::connect_with_clock(uri, conf, system_clock()).await
    }

    /// [`FileSystem::connect_with`] with an explicit clock (lease renewal timing).
    pub async fn connect_with_clock(
        uri: Option<&str>,
        conf: Configuration,
        clock: SharedClock,
    ) -> Result<Self> {
        let user = rhdfs_conf::user::current_user();
        Self::connect_impl(uri, conf, clock, user, ClientConfig::default()).await
    }

    /// Connects to `uri` as `user` (simple authentication), not as the process's user:
    /// what a server acting for a remote user needs (the NameNode's fsck -move).
    pub async fn connect_as(uri: &str, conf: Configuration, user: &str) -> Result<Self> {
        let ipc = ClientConfig::default();
        Self::connect_impl(Some(uri), conf, system_clock(), user.to_string(), ipc).await
    }

    /// [`FileSystem::connect_as`] reaching the NameNode through an in-process connection
    /// (a gateway inside the NameNode's process: its WebHDFS); `uri` still names it.
    pub async fn connect_in_process(
        uri: &str,
        conf: Configuration,
        user: &str,
        nn: LocalConnector,
    ) -> Result<Self> {
        let ipc = ClientConfig {
            in_process: Some(nn),
            ..ClientConfig::default()
        };
        Self::connect_impl(Some(uri), conf, system_clock(), user.to_string(), ipc).await
    }

    async fn connect_impl(
        uri: Option<&str>,
        conf: Configuration,
        clock: SharedClock,
        user: String,
        ipc: ClientConfig,
    ) -> Result<Self> {
        let uri_from_arg = uri.is_some();
        let (uri, authority) = match uri {
            Some(u) => {
                let auth = path::split_uri(u).authority.unwrap_or_default();
                path::parse_hdfs_uri(u)?;
                (format!("hdfs://{auth}"), auth)
            }
            None => {
                let fs = conf.get_str(rhdfs_conf::keys::FS_DEFAULT_FS_KEY, "");
                let parts = path::split_uri(&fs);
                match (parts.scheme.as_deref(), parts.authority) {
                    (Some("hdfs"), Some(a)) => (format!("hdfs://{a}"), a),
                    _ => {
                        let (h, p) = addr::namenode_rpc_address(&conf)?;
                        let a = rhdfs_conf::ha::join_host_port(&h, p);
                        (format!("hdfs://{a}"), a)
                    }
                }
            }
        };
        let cc = ClientConf::from_conf(&conf)?;
        let peers = PeerCache::new(
            cc.socket_cache_capacity,
            cc.socket_cache_expiry,
            Arc::clone(&clock),
        );
        let hedge_permits = Arc::new(tokio::sync::Semaphore::new(
            cc.hedged_read_pool_size
                .min(tokio::sync::Semaphore::MAX_PERMITS),
        ));
        let short_circuit = crate::short_circuit::ShortCircuit::new(
            cc.short_circuit.clone(),
            cc.transfer.socket_timeout,
            Arc::clone(&clock),
        );
        let nn = match rhdfs_conf::ha::logical_nameservice(&conf, &authority)? {
            Some(ns) => {
                debug!(nameservice = %ns.id, %user, "connecting to an HA nameservice");
                let settings = FailoverSettings::from_conf(&conf)?;
                let sleep = crate::failover::tokio_sleep();
                // A NameNode that stops answering is failed over from once the call times
                // out (`ipc.client.rpc-timeout.ms`).
                // Connects to one NameNode are retried as the failover keys say (none by
                // default): the next NameNode is tried instead.
                let ipc = ClientConfig {
                    in_process: ipc.in_process,
                    connect_retry: crate::failover::connect_retry(&conf)?,
                    ..ClientConfig::from_conf(&conf)?
                };
                let observer =
                    ObserverSettings::from_conf(&conf, &ns.id)?.map(|s| (s, Arc::clone(&clock)));
                NameNodeProxy::for_nameservice(&ns, &user, ipc, settings, None, sleep, observer)
            }
            None => {
                let target = match uri_from_arg {
                    true => {
                        let (h, p) = path::parse_hdfs_uri(&uri)?;
                        rhdfs_conf::ha::join_host_port(&h, p)
                    }
                    false => {
                        let (h, p) = addr::namenode_rpc_address(&conf)?;
                        rhdfs_conf::ha::join_host_port(&h, p)
                    }
                };
                debug!(%target, %user, "connecting to the NameNode");
                // The one NameNode: its call timeout and limits from the configuration, and
                // a connect refused retried (`ipc.client.connect.max.retries`, ...) so that a
                // client started while it restarts waits for it, as Hadoop's does.
                let ipc = ClientConfig {
                    in_process: ipc.in_process,
                    connect_retry: ConnectRetry::from_conf(&conf)?,
                    ..ClientConfig::from_conf(&conf)?
                };
                let client = RpcClient::connect_with(&target, CLIENT_PROTOCOL, &user, ipc).await?;
                NameNodeProxy::single(client)
            }
        };
        let client_name = format!(
            "DFSClient_NONMAPREDUCE_{}_1",
            rand::random::<u32>() & 0x7fff_ffff
        );
        let leases = LeaseRenewer::new(
            nn.clone(),
            client_name.clone(),
            Arc::clone(&clock),
            RENEW_INTERVAL_DEFAULT,
        );
        Ok(FileSystem {
            inner: Arc::new(Inner {
                nn,
                conf: cc,
                raw_conf: conf,
                working_dir: format!("/user/{user}"),
                user,
                client_name,
                uri,
                clock,
                server_defaults: OnceCell::new(),
                leases,
                peers,
                hedge_permits,
                hedge_stats: Default::default(),
                short_circuit,
            }),
        })
    }

    /// `hdfs://host:port` as given (no trailing slash).
    pub fn uri(&self) -> &str {
        &self.inner.uri
    }
    /// The user the NameNode sees.
    pub fn user(&self) -> &str {
        &self.inner.user
    }
    /// The lease holder name sent in create/append/addBlock/complete.
    pub fn client_name(&self) -> &str {
        &self.inner.client_name
    }
    /// `/user/<user>`: where relative paths are resolved.
    pub fn working_dir(&self) -> &str {
        &self.inner.working_dir
    }
    /// The client settings in use.
    pub fn client_conf(&self) -> &ClientConf {
        &self.inner.conf
    }
    /// The configuration this filesystem was made from.
    pub fn conf(&self) -> &Configuration {
        &self.inner.raw_conf
    }
    /// Number of renewLease calls the background renewer has made.
    pub fn lease_renewals(&self) -> usize {
        self.inner.leases.renewals()
    }

    /// The clock used for lease renewal and trash checkpoints.
    pub fn clock(&self) -> &SharedClock {
        &self.inner.clock
    }

    pub(crate) fn lease(&self) -> LeaseGuard {
        self.inner.leases.acquire()
    }

    /// Resolves a path argument (relative, absolute or `hdfs://` URI) to an absolute path.
    pub fn resolve(&self, p: &str) -> Result<String> {
        path::resolve(&self.inner.working_dir, p)
    }

    /// `hdfs://host:port/path` for an absolute path.
    pub fn qualify(&self, abs: &str) -> String {
        format!("{}{}", self.inner.uri, abs)
    }

    /// One NameNode call with this client's error mapping.
    pub async fn call<Req, Resp>(&self, method: &str, req: &Req) -> Result<Resp>
    where
        Req: prost::Message,
        Resp: prost::Message + Default,
    {
        Ok(self.inner.nn.call::<Req, Resp>(method, req).await?)
    }

    /// The status of `p`, or `None` if it does not exist.
    pub async fn get_file_info(&self, p: &str) -> Result<Option<FileStatus>> {
        let src = self.resolve(p)?;
        let resp: GetFileInfoResponseProto = self
            .call("getFileInfo", &GetFileInfoRequestProto { src: src.clone() })
            .await?;
        Ok(resp.fs.as_ref().map(|s| FileStatus::from_proto(s, &src)))
    }

    /// The status of `p`; a missing path is [`ClientError::FileNotFound`].
    pub async fn status(&self, p: &str) -> Result<FileStatus> {
        let src = self.resolve(p)?;
        self.get_file_info(&src)
            .await?
            .ok_or(ClientError::FileNotFound(src))
    }

    /// True if `p` exists.
    pub async fn exists(&self, p: &str) -> Result<bool> {
        Ok(self.get_file_info(p).await?.is_some())
    }

    /// One page of a listing after `start_after` (raw name bytes, empty for the first page):
    /// the entries and how many remain. A missing path is FileNotFound.
    pub async fn list_page(
        &self,
        p: &str,
        start_after: &[u8],
    ) -> Result<(Vec<FileStatus>, u32, Vec<u8>)> {
        let src = self.resolve(p)?;
        let resp: GetListingResponseProto = self
            .call(
                "getListing",
                &GetListingRequestProto {
                    src: src.clone(),
                    start_after: bytes::Bytes::copy_from_slice(start_after),
                    need_location: false,
                },
            )
            .await?;
        let list = resp
            .dir_list
            .ok_or_else(|| ClientError::FileNotFound(src.clone()))?;
        let last = list
            .partial_listing
            .last()
            .map(|e| e.path.to_vec())
            .unwrap_or_default();
        let entries = list
            .partial_listing
            .iter()
            .map(|e| FileStatus::from_proto(e, &src))
            .collect();
        Ok((entries, list.remaining_entries, last))
    }

    /// Every entry of a directory (or the file itself for a file), fetching all pages.
    pub async fn list_status(&self, p: &str) -> Result<Vec<FileStatus>> {
        let mut out = Vec::new();
        let mut after = Vec::new();
        loop {
            let (mut page, remaining, last) = self.list_page(p, &after).await?;
            let empty = page.is_empty();
            out.append(&mut page);
            if remaining == 0 || empty || last.is_empty() {
                return Ok(out);
            }
            after = last;
        }
    }

    /// The listing as a stream, one NameNode page at a time.
    pub fn list_stream(&self, p: &str) -> impl Stream<Item = Result<FileStatus>> + use<> {
        struct St {
            fs: FileSystem,
            path: String,
            after: Vec<u8>,
            buf: std::collections::VecDeque<FileStatus>,
            done: bool,
        }
        let st = St {
            fs: self.clone(),
            path: p.to_string(),
            after: Vec::new(),
            buf: Default::default(),
            done: false,
        };
        futures::stream::unfold(st, |mut st| async move {
            loop {
                if let Some(x) = st.buf.pop_front() {
                    return Some((Ok(x), st));
                }
                if st.done {
                    return None;
                }
                match st.fs.list_page(&st.path, &st.after).await {
                    Ok((page, remaining, last)) => {
                        st.done = remaining == 0 || page.is_empty() || last.is_empty();
                        st.after = last;
                        st.buf.extend(page);
                    }
                    Err(e) => {
                        st.done = true;
                        return Some((Err(e), st));
                    }
                }
            }
        })
    }

    /// mkdirs with parents; `permission` before the umask (default 0777).
    pub async fn mkdirs(&self, p: &str, permission: Option<u16>) -> Result<bool> {
        self.mkdir_impl(p, permission, true).await
    }

    /// mkdir of one level (fails with FileNotFound if the parent is missing).
    pub async fn mkdir(&self, p: &str, permission: Option<u16>) -> Result<bool> {
        self.mkdir_impl(p, permission, false).await
    }

    async fn mkdir_impl(&self, p: &str, permission: Option<u16>, parents: bool) -> Result<bool> {
        let src = self.resolve(p)?;
        let unmasked = permission.unwrap_or(0o777);
        let resp: MkdirsResponseProto = self
            .call(
                "mkdirs",
                &MkdirsRequestProto {
                    src,
                    masked: FsPermissionProto {
                        perm: u32::from(unmasked & !self.inner.conf.umask),
                    },
                    create_parent: parents,
                    unmasked: Some(FsPermissionProto {
                        perm: u32::from(unmasked),
                    }),
                },
            )
            .await?;
        Ok(resp.result)
    }

    /// Deletes `p`; false if it did not exist.
    pub async fn delete(&self, p: &str, recursive: bool) -> Result<bool> {
        let src = self.resolve(p)?;
        let resp: DeleteResponseProto = self
            .call("delete", &DeleteRequestProto { src, recursive })
            .await?;
        Ok(resp.result)
    }

    /// The old `rename`: moves into `dst` if it is a directory; false on failure.
    pub async fn rename(&self, src: &str, dst: &str) -> Result<bool> {
        let resp: RenameResponseProto = self
            .call(
                "rename",
                &RenameRequestProto {
                    src: self.resolve(src)?,
                    dst: self.resolve(dst)?,
                },
            )
            .await?;
        Ok(resp.result)
    }

    /// `rename2`: exact destination, errors as exceptions.
    pub async fn rename2(&self, src: &str, dst: &str, overwrite: bool) -> Result<()> {
        let _: Rename2ResponseProto = self
            .call(
                "rename2",
                &Rename2RequestProto {
                    src: self.resolve(src)?,
                    dst: self.resolve(dst)?,
                    overwrite_dest: overwrite,
                    move_to_trash: None,
                },
            )
            .await?;
        Ok(())
    }

    pub async fn content_summary(&self, p: &str) -> Result<ContentSummary> {
        let resp: GetContentSummaryResponseProto = self
            .call(
                "getContentSummary",
                &GetContentSummaryRequestProto {
                    path: self.resolve(p)?,
                },
            )
            .await?;
        Ok(ContentSummary::from(&resp.summary))
    }

    /// checkAccess: Ok when the caller may do `mode` (rwx bits: 4 read, 2 write, 1 execute)
    /// on `p`; AccessControlException or FileNotFoundException otherwise.
    pub async fn check_access(&self, p: &str, mode: u16) -> Result<()> {
        let _: CheckAccessResponseProto = self
            .call(
                "checkAccess",
                &CheckAccessRequestProto {
                    path: self.resolve(p)?,
                    mode: i32::from(mode & 0o7),
                },
            )
            .await?;
        Ok(())
    }

    /// false for a directory or a missing path.
    pub async fn set_replication(&self, p: &str, replication: u16) -> Result<bool> {
        let resp: SetReplicationResponseProto = self
            .call(
                "setReplication",
                &SetReplicationRequestProto {
                    src: self.resolve(p)?,
                    replication: u32::from(replication),
                },
            )
            .await?;
        Ok(resp.result)
    }

    pub async fn set_permission(&self, p: &str, permission: u16) -> Result<()> {
        let _: SetPermissionResponseProto = self
            .call(
                "setPermission",
                &SetPermissionRequestProto {
                    src: self.resolve(p)?,
                    permission: FsPermissionProto {
                        perm: u32::from(permission),
                    },
                },
            )
            .await?;
        Ok(())
    }

    /// Either may be `None` to leave it unchanged.
    pub async fn set_owner(&self, p: &str, owner: Option<&str>, group: Option<&str>) -> Result<()> {
        let _: SetOwnerResponseProto = self
            .call(
                "setOwner",
                &SetOwnerRequestProto {
                    src: self.resolve(p)?,
                    username: owner.map(str::to_string),
                    groupname: group.map(str::to_string),
                },
            )
            .await?;
        Ok(())
    }

    /// Times in ms since the epoch; `None` leaves the time unchanged.
    pub async fn set_times(&self, p: &str, mtime: Option<u64>, atime: Option<u64>) -> Result<()> {
        let _: SetTimesResponseProto = self
            .call(
                "setTimes",
                &SetTimesRequestProto {
                    src: self.resolve(p)?,
                    mtime: mtime.unwrap_or(u64::MAX),
                    atime: atime.unwrap_or(u64::MAX),
                },
            )
            .await?;
        Ok(())
    }

    /// The raw located blocks of `[offset, offset + len)`.
    pub async fn located_blocks(
        &self,
        p: &str,
        offset: u64,
        len: u64,
    ) -> Result<LocatedBlocksProto> {
        let src = self.resolve(p)?;
        let resp: GetBlockLocationsResponseProto = self
            .call(
                "getBlockLocations",
                &GetBlockLocationsRequestProto {
                    src: src.clone(),
                    offset,
                    length: len,
                },
            )
            .await?;
        resp.locations.ok_or(ClientError::FileNotFound(src))
    }

    /// Block locations of a whole file.
    pub async fn block_locations(&self, p: &str) -> Result<Vec<BlockLocation>> {
        let lbs = self.located_blocks(p, 0, WHOLE_FILE).await?;
        Ok(lbs
            .blocks
            .iter()
            .map(|b| BlockLocation {
                offset: b.offset,
                length: b.b.num_bytes.unwrap_or(0),
                block_id: b.b.block_id,
                generation_stamp: b.b.generation_stamp,
                hosts: b
                    .locs
                    .iter()
                    .map(rhdfs_transfer::headers::xfer_addr)
                    .collect(),
                corrupt: b.corrupt,
            })
            .collect())
    }

    /// Server defaults, fetched once per FileSystem.
    pub async fn server_defaults(&self) -> Result<ServerDefaults> {
        let d = self
            .inner
            .server_defaults
            .get_or_try_init(|| async {
                let resp: GetServerDefaultsResponseProto = self
                    .call("getServerDefaults", &GetServerDefaultsRequestProto {})
                    .await?;
                Ok::<_, ClientError>(ServerDefaults::from(&resp.server_defaults))
            })
            .await?;
        Ok(d.clone())
    }

    pub async fn fs_stats(&self) -> Result<FsStats> {
        let resp: GetFsStatsResponseProto =
            self.call("getFsStats", &GetFsStatusRequestProto {}).await?;
        Ok(FsStats::from(&resp))
    }

    /// Asks the NameNode to recover the lease of `p`; true if the file is closed.
    pub async fn recover_lease(&self, p: &str) -> Result<bool> {
        let resp: RecoverLeaseResponseProto = self
            .call(
                "recoverLease",
                &RecoverLeaseRequestProto {
                    src: self.resolve(p)?,
                    client_name: self.inner.client_name.clone(),
                },
            )
            .await?;
        Ok(resp.result)
    }

    /// Closes the NameNode connection.
    pub async fn close(&self) {
        self.inner.peers.clear();
        self.inner.nn.close().await;
    }

    /// DataNode data-transfer connections this client opened (for tests and benchmarks).
    pub fn datanode_connections_opened(&self) -> u64 {
        self.inner.peers.opened()
    }

    /// Reads that started on a cached DataNode connection.
    pub fn datanode_connections_reused(&self) -> u64 {
        self.inner.peers.reused()
    }

    /// Hedged positioned reads: (requests sent to a second replica, reads a hedge answered
    /// first), as Hadoop's hedgedReadOps and hedgedReadOpsWin.
    pub fn hedged_read_stats(&self) -> (u64, u64) {
        self.inner.hedge_stats.get()
    }

    /// Short-circuit local reads: (descriptor pairs received from DataNodes, bytes read
    /// straight from local block files), as Hadoop's ReadStatistics
    /// totalShortCircuitBytesRead counts the second.
    pub fn short_circuit_stats(&self) -> (u64, u64) {
        self.inner.short_circuit.stats()
    }
}
