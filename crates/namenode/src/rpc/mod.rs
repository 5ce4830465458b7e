//! ClientProtocol (ClientNamenodeProtocol) over Hadoop IPC: decoding, dispatch by
//! method name, encoding. One file per handler or small group of handlers.

mod access;
pub mod acl;
mod add_block;
mod admin;
mod append;
mod attributes;
pub mod audit;
mod block_locations;
mod complete;
mod concat;
pub mod convert;
mod create;
pub mod datanode;
pub mod datanode_info;
mod delete;
pub mod errors;
pub mod ha_service;
mod ha_state;
mod info;
mod listing;
mod metasave;
mod mkdirs;
mod msync;
pub mod observer_reads;
pub mod open_files;
pub mod orphans;
mod pipeline;
pub mod quota;
pub mod refresh_nodes;
mod rename;
mod renew_recover_lease;
mod save_namespace;
mod slow_datanodes;
mod summary;
mod truncate;
pub mod xattr;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use rhdfs_conf::{Configuration, keys};
use rhdfs_ipc::{CallContext, RpcError, RpcService};
use rhdfs_proto::hdfs::{ChecksumTypeProto, FsServerDefaultsProto};

use crate::audit::AuditLog;
use crate::fsdir::permission::Caller;
use crate::namespace::call_txid;
use crate::namesystem::Namesystem;
use crate::retry_cache::{CallIds, Lookup, RetryCache};

/// The server defaults clients read with getServerDefaults.
pub fn server_defaults(
    conf: &Configuration,
) -> Result<FsServerDefaultsProto, rhdfs_conf::ConfError> {
    let checksum = match conf
        .get_str(keys::DFS_CHECKSUM_TYPE_KEY, keys::DFS_CHECKSUM_TYPE_DEFAULT)
        .trim()
        .to_ascii_uppercase()
        .as_str()
    {
        "CRC32" => ChecksumTypeProto::ChecksumCrc32,
        "NULL" => ChecksumTypeProto::ChecksumNull,
        _ => ChecksumTypeProto::ChecksumCrc32c,
    };
    let trash = conf.get_f64(keys::FS_TRASH_INTERVAL_KEY, keys::FS_TRASH_INTERVAL_DEFAULT)?;
    Ok(FsServerDefaultsProto {
        block_size: conf.get_size(keys::DFS_BLOCKSIZE_KEY, keys::DFS_BLOCKSIZE_DEFAULT)?,
        bytes_per_checksum: conf.get_u32(
            keys::DFS_BYTES_PER_CHECKSUM_KEY,
            keys::DFS_BYTES_PER_CHECKSUM_DEFAULT as u32,
        )?,
        write_packet_size: conf.get_u32("dfs.client-write-packet-size", 65536)?,
        replication: conf.get_u32(
            keys::DFS_REPLICATION_KEY,
            keys::DFS_REPLICATION_DEFAULT as u32,
        )?,
        file_buffer_size: conf.get_u32(
            keys::IO_FILE_BUFFER_SIZE_KEY,
            keys::IO_FILE_BUFFER_SIZE_DEFAULT as u32,
        )?,
        encrypt_data_transfer: Some(false),
        trash_interval: Some(trash.max(0.0) as u64),
        checksum_type: Some(checksum as i32),
        key_provider_uri: None,
        policy_id: None,
        snapshot_trash_root_enabled: None,
    })
}

/// The ClientProtocol service.
pub struct ClientProtocolService {
    fs: Arc<Namesystem>,
    defaults: FsServerDefaultsProto,
    retry_cache: Option<Arc<RetryCache>>,
    audit: Option<Arc<AuditLog>>,
    /// With HA: how reads are served as an observer (`observer_reads`).
    observer: Option<observer_reads::ObserverGate>,
}

impl ClientProtocolService {
    pub fn new(fs: Arc<Namesystem>, defaults: FsServerDefaultsProto) -> Self {
        let retry_cache = Some(RetryCache::new(
            crate::retry_cache::RetryCacheSettings::with_expiry(crate::retry_cache::DEFAULT_EXPIRY),
            fs.clock().clone(),
        ));
        ClientProtocolService {
            fs,
            defaults,
            retry_cache,
            audit: None,
            observer: None,
        }
    }

    /// An HA member: as an observer it serves reads once it applied the client's state id,
    /// waking on `gate.raft`'s metrics.
    pub fn with_observer_reads(mut self, gate: observer_reads::ObserverGate) -> Self {
        self.observer = Some(gate);
        self
    }

    /// Writes an audit line per audited call to `log` (see `audit`).
    pub fn with_audit(mut self, log: Option<Arc<AuditLog>>) -> Self {
        self.audit = log;
        self
    }

    /// Sets the retry cache's expiry and bound; `None` turns the cache off.
    pub fn with_retry_cache(
        mut self,
        settings: Option<crate::retry_cache::RetryCacheSettings>,
    ) -> Self {
        self.retry_cache = settings.map(|s| RetryCache::new(s, self.fs.clock().clone()));
        self
    }

    /// The retry cache (None when switched off).
    pub fn retry_cache(&self) -> Option<&Arc<RetryCache>> {
        self.retry_cache.as_ref()
    }

    pub fn namesystem(&self) -> &Arc<Namesystem> {
        &self.fs
    }

    async fn caller(&self, ctx: &CallContext) -> Caller {
        // The forwarded client for a gateway call (WebHDFS), as Hadoop's Server.getRemoteIp().
        self.fs
            .caller(&ctx.user, &ctx.client_ip().to_string())
            .await
    }

    /// The caller, when it is the superuser or permissions are off; otherwise Hadoop's
    /// AccessControlException for superuser-only operations.
    async fn require_superuser(&self, ctx: &CallContext) -> Result<Caller, RpcError> {
        let caller = self.caller(ctx).await;
        if !caller.superuser && self.fs.with_ns(|ns| ns.config().permissions_enabled) {
            return Err(errors::superuser_required(&caller.user));
        }
        Ok(caller)
    }

    fn pool(&self) -> &str {
        self.fs.block_pool_id()
    }
}

/// What a ClientProtocol method does to the namespace, declared once per method in the
/// table below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodKind {
    /// Logs nothing: answered without waiting for the edit log (Hadoop's READ category: a
    /// standby refuses it).
    Read,
    /// A `Read` served in every HA state (Hadoop's UNCHECKED category: HA state queries).
    Unchecked,
    /// May log edits: answered only once every edit logged so far is durable.
    Mutate,
    /// A `Mutate` that must take effect at most once: a retry with the same client id and
    /// call id gets the first answer (the retry cache).
    AtMostOnce,
}

/// The ClientProtocol methods rhdfs serves: name, kind, handler, for those Hadoop audits
/// how (`audit::*`), and for at-most-once methods that log edits the handler answering a
/// retry of a call another NameNode committed (`replay`), in one table. It makes
/// `method_kind`, `audit_spec` and the dispatches, so a method's kind, audit or replay
/// cannot drift from its handler.
macro_rules! client_protocol {
    ($($name:literal => $kind:ident $handler:ident $([$audit:ident])? $(replay $replay:ident)?,)*) => {
        /// Every ClientProtocol method rhdfs serves, in table order.
        pub const SERVED_METHODS: &[&str] = &[$($name,)*];

        /// The kind of a ClientProtocol method; None for one rhdfs does not serve.
        pub fn method_kind(method: &str) -> Option<MethodKind> {
            match method {
                $($name => Some(MethodKind::$kind),)*
                _ => None,
            }
        }

        /// How a ClientProtocol method is audited; None for one Hadoop does not audit.
        pub fn audit_spec(method: &str) -> Option<&'static audit::AuditSpec> {
            match method {
                $($name => audit_of!($($audit)?),)*
                _ => None,
            }
        }

        impl ClientProtocolService {
            /// Each handler's future is boxed on its own: inline, this future would be as
            /// large as the largest handler's, and every call's future — boxed whole as an
            /// `RpcService` call — was allocated and copied at that size (kilobytes per call,
            /// a large allocation each time).
            async fn dispatch(&self, c: &CallContext, b: &Bytes) -> Result<Bytes, RpcError> {
                match c.method.as_str() {
                    $($name => Box::pin(self.$handler(c, b)).await,)*
                    _ => Err(RpcError::no_such_method_on(&c.method, &c.protocol)),
                }
            }

            /// Answers a call another NameNode committed (its edits are applied here): the
            /// method's replay handler; a method without one (it logs no edits through the
            /// replicated log) runs.
            async fn replay(&self, c: &CallContext, b: &Bytes) -> Result<Bytes, RpcError> {
                match c.method.as_str() {
                    $($name => replay_of!(self, c, b, $handler $(, $replay)?),)*
                    _ => Err(RpcError::no_such_method_on(&c.method, &c.protocol)),
                }
            }
        }
    };
}

macro_rules! replay_of {
    ($self:ident, $c:ident, $b:ident, $handler:ident) => {
        Box::pin($self.$handler($c, $b)).await
    };
    ($self:ident, $c:ident, $b:ident, $handler:ident, $replay:ident) => {
        Box::pin($self.$replay($c, $b)).await
    };
}

macro_rules! audit_of {
    () => {
        None
    };
    ($audit:ident) => {
        Some(&audit::$audit)
    };
}

client_protocol! {
    "getServerDefaults" => Read get_server_defaults,
    "getFileInfo" => Read get_file_info [GET_FILE_INFO],
    "getLocatedFileInfo" => Read get_located_file_info [GET_LOCATED_FILE_INFO],
    "isFileClosed" => Read is_file_closed [IS_FILE_CLOSED],
    "getPreferredBlockSize" => Read get_preferred_block_size,
    "getLinkTarget" => Read get_link_target [GET_LINK_TARGET],
    "getListing" => Read get_listing [GET_LISTING],
    "getContentSummary" => Read get_content_summary [GET_CONTENT_SUMMARY],
    "getQuotaUsage" => Read get_quota_usage [GET_QUOTA_USAGE],
    "getBlockLocations" => Read get_block_locations [GET_BLOCK_LOCATIONS],
    "getFsStats" => Read get_fs_stats,
    "getStats" => Read get_fs_stats,
    "getFsReplicatedBlockStats" => Read get_fs_replicated_block_stats,
    "getDatanodeReport" => Read get_datanode_report [GET_DATANODE_REPORT],
    "getSlowDatanodeReport" => Read get_slow_datanode_report,
    "listOpenFiles" => Read list_open_files [LIST_OPEN_FILES],
    "metaSave" => Read meta_save [META_SAVE],
    "msync" => Unchecked msync,
    "getHAServiceState" => Unchecked get_ha_service_state,
    "getAclStatus" => Read get_acl_status [GET_ACL_STATUS],
    "getXAttrs" => Read get_xattrs [GET_XATTRS],
    "listXAttrs" => Read list_xattrs [LIST_XATTRS],
    "mkdirs" => Mutate mkdirs [MKDIRS],
    "addBlock" => Mutate add_block,
    "abandonBlock" => Mutate abandon_block,
    "complete" => Mutate complete,
    "fsync" => Mutate fsync,
    "reportBadBlocks" => Mutate report_bad_blocks,
    "updateBlockForPipeline" => Mutate update_block_for_pipeline,
    "updatePipeline" => AtMostOnce update_pipeline replay update_pipeline_replayed,
    "getAdditionalDatanode" => Mutate get_additional_datanode,
    "setReplication" => Mutate set_replication [SET_REPLICATION],
    "setPermission" => Mutate set_permission [SET_PERMISSION],
    "setOwner" => Mutate set_owner [SET_OWNER],
    "setTimes" => Mutate set_times [SET_TIMES],
    "renewLease" => Mutate renew_lease,
    "recoverLease" => Mutate recover_lease,
    "refreshNodes" => Mutate refresh_nodes [REFRESH_NODES],
    "setSafeMode" => Mutate set_safe_mode [SET_SAFE_MODE],
    "saveNamespace" => AtMostOnce save_namespace [SAVE_NAMESPACE],
    "rollEdits" => AtMostOnce roll_edits [ROLL_EDITS],
    "releaseOrphans" => Mutate release_orphans [RELEASE_ORPHANS],
    "setQuota" => Mutate set_quota [SET_QUOTA],
    "modifyAclEntries" => Mutate modify_acl_entries [MODIFY_ACL_ENTRIES],
    "removeAclEntries" => Mutate remove_acl_entries [REMOVE_ACL_ENTRIES],
    "removeDefaultAcl" => Mutate remove_default_acl [REMOVE_DEFAULT_ACL],
    "removeAcl" => Mutate remove_acl [REMOVE_ACL],
    "setAcl" => Mutate set_acl [SET_ACL],
    "create" => AtMostOnce create [CREATE] replay create_replayed,
    "append" => AtMostOnce append [APPEND] replay append_replayed,
    "delete" => AtMostOnce delete [DELETE] replay delete_replayed,
    "rename" => AtMostOnce rename [RENAME] replay rename_replayed,
    "rename2" => AtMostOnce rename2 [RENAME2] replay rename2_replayed,
    "setXAttr" => AtMostOnce set_xattr [SET_XATTR] replay set_xattr_replayed,
    "removeXAttr" => AtMostOnce remove_xattr [REMOVE_XATTR] replay remove_xattr_replayed,
    "checkAccess" => Read check_access [CHECK_ACCESS],
    "truncate" => Mutate truncate [TRUNCATE],
    "concat" => AtMostOnce concat [CONCAT] replay concat_replayed,
}

/// Hadoop's operation category of a method kind: what a standby may serve.
fn operation_category(kind: Option<MethodKind>) -> crate::ha::OperationCategory {
    use crate::ha::OperationCategory;
    match kind {
        Some(MethodKind::Unchecked) => OperationCategory::Unchecked,
        Some(MethodKind::Read) => OperationCategory::Read,
        Some(MethodKind::Mutate | MethodKind::AtMostOnce) | None => OperationCategory::Write,
    }
}

#[async_trait]
impl RpcService for ClientProtocolService {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        let kind = method_kind(&ctx.method);
        // A standby serves nothing but HA queries: clients fail over on its StandbyException.
        // An observer serves reads too, coordinated ones once it applied the client's state.
        let role = self.fs.ha_role().get();
        role.check(operation_category(kind))?;
        let observer_read = role == crate::ha::Role::Observer && kind == Some(MethodKind::Read);
        if observer_read {
            self.align_observer_read(&ctx.method).await?;
        }
        let at_most_once = kind == Some(MethodKind::AtMostOnce)
            && RetryCache::applies(&ctx.client_id, ctx.call_id);
        let (guard, replay) = match &self.retry_cache {
            Some(cache) if at_most_once => match cache.lookup(&ctx.client_id, ctx.call_id).await {
                Lookup::Cached(answer) => return answer,
                Lookup::Run(g) => (Some(g), false),
                Lookup::Replay(g) => (Some(g), true),
            },
            _ => (None, false),
        };
        let audit = self
            .audit
            .as_ref()
            .and_then(|log| Some((log, audit_spec(&ctx.method)?)));
        // An at-most-once call's ids go with the edits it logs (to the standbys' caches).
        let ids = at_most_once.then(|| CallIds {
            client_id: ctx.client_id.clone(),
            call_id: ctx.call_id,
        });
        let (answer, logged) = call_txid::track(async {
            match ids {
                Some(ids) if replay => ids.scope(self.replay(&ctx, &body)).await,
                Some(ids) => ids.scope(self.dispatch(&ctx, &body)).await,
                None => self.dispatch(&ctx, &body).await,
            }
        })
        .await;
        // Nothing is acknowledged before its edits are durable (reads log nothing). Handlers
        // whose mutation has effects already committed them (`Namesystem::commit`); this
        // covers the others, and errors answered after an edit was logged.
        let answer = match kind {
            Some(MethodKind::Mutate | MethodKind::AtMostOnce) => {
                match self.fs.sync_edits_to(logged).await {
                    Ok(()) => answer,
                    Err(e) => Err(e.into()),
                }
            }
            Some(MethodKind::Read | MethodKind::Unchecked) | None => answer,
        };
        if observer_read && answer.is_ok() {
            self.fs.ha_role().observer_reads().count_served();
        }
        if let Some(g) = guard {
            g.finish(&answer);
        }
        if let Some((log, spec)) = audit {
            audit::record(log, &self.fs, spec, &ctx, &body, &answer);
        }
        answer
    }
}
