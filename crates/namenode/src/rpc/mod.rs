//! ClientProtocol (ClientNamenodeProtocol) over Hadoop IPC: decoding, dispatch by
//! method name, encoding. One file per handler or small group of handlers.

mod add_block;
mod admin;
mod append;
mod attributes;
mod block_locations;
mod complete;
pub mod convert;
mod create;
mod delete;
pub mod errors;
mod info;
mod leases;
mod listing;
mod metasave;
mod mkdirs;
pub mod open_files;
mod pipeline;
pub mod refresh_nodes;
mod rename;
mod save_namespace;
mod summary;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use rhdfs_conf::{Configuration, keys};
use rhdfs_ipc::{CallContext, RpcError, RpcService};
use rhdfs_proto::hdfs::{ChecksumTypeProto, FsServerDefaultsProto};

use crate::fsdir::permission::Caller;
use crate::namesystem::Namesystem;
use crate::retry_cache::{Lookup, RetryCache};

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

/// Calls that change nothing in the namespace: answered without waiting for the edit log.
const READ_ONLY: &[&str] = &[
    "listOpenFiles",
    "getServerDefaults",
    "getFileInfo",
    "getLocatedFileInfo",
    "isFileClosed",
    "getPreferredBlockSize",
    "getLinkTarget",
    "getListing",
    "getContentSummary",
    "getQuotaUsage",
    "getBlockLocations",
    "getFsStats",
    "getStats",
    "getFsReplicatedBlockStats",
    "getDatanodeReport",
    "msync",
    "getHAServiceState",
];

/// The ClientProtocol service.
pub struct ClientProtocolService {
    fs: Arc<Namesystem>,
    defaults: FsServerDefaultsProto,
    retry_cache: Option<Arc<RetryCache>>,
}

impl ClientProtocolService {
    pub fn new(fs: Arc<Namesystem>, defaults: FsServerDefaultsProto) -> Self {
        let retry_cache = Some(RetryCache::new(
            crate::retry_cache::DEFAULT_EXPIRY,
            fs.clock().clone(),
        ));
        ClientProtocolService {
            fs,
            defaults,
            retry_cache,
        }
    }

    /// Sets the retry cache's expiry; `None` turns the cache off.
    pub fn with_retry_cache(mut self, expiry: Option<std::time::Duration>) -> Self {
        self.retry_cache = expiry.map(|e| RetryCache::new(e, self.fs.clock().clone()));
        self
    }

    pub fn namesystem(&self) -> &Arc<Namesystem> {
        &self.fs
    }

    async fn caller(&self, ctx: &CallContext) -> Caller {
        self.fs.caller(&ctx.user, &ctx.peer.ip().to_string()).await
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

#[async_trait]
impl RpcService for ClientProtocolService {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        let guard = match &self.retry_cache {
            Some(cache) if RetryCache::applies(&ctx.method, &ctx.client_id, ctx.call_id) => {
                match cache.lookup(&ctx.client_id, ctx.call_id).await {
                    Lookup::Cached(answer) => return answer,
                    Lookup::Run(g) => Some(g),
                }
            }
            _ => None,
        };
        let answer = self.dispatch(&ctx, &body).await;
        // Nothing is acknowledged before its edits are durable (reads log nothing).
        let answer = if READ_ONLY.contains(&ctx.method.as_str()) {
            answer
        } else {
            match self.fs.sync_edits().await {
                Ok(()) => answer,
                Err(e) => Err(e.into()),
            }
        };
        if let Some(g) = guard {
            g.finish(&answer);
        }
        answer
    }
}

impl ClientProtocolService {
    async fn dispatch(&self, c: &CallContext, b: &Bytes) -> Result<Bytes, RpcError> {
        let ctx = c;
        match ctx.method.as_str() {
            "getServerDefaults" => self.get_server_defaults(c, b),
            "getFileInfo" => self.get_file_info(c, b).await,
            "getLocatedFileInfo" => self.get_located_file_info(c, b).await,
            "isFileClosed" => self.is_file_closed(c, b).await,
            "getPreferredBlockSize" => self.get_preferred_block_size(c, b).await,
            "getLinkTarget" => self.get_link_target(c, b).await,
            "getListing" => self.get_listing(c, b).await,
            "getContentSummary" => self.get_content_summary(c, b).await,
            "getQuotaUsage" => self.get_quota_usage(c, b).await,
            "mkdirs" => self.mkdirs(c, b).await,
            "create" => self.create(c, b).await,
            "append" => self.append(c, b).await,
            "addBlock" => self.add_block(c, b).await,
            "abandonBlock" => self.abandon_block(c, b).await,
            "complete" => self.complete(c, b).await,
            "fsync" => self.fsync(c, b).await,
            "getBlockLocations" => self.get_block_locations(c, b).await,
            "reportBadBlocks" => self.report_bad_blocks(c, b),
            "updateBlockForPipeline" => self.update_block_for_pipeline(c, b).await,
            "updatePipeline" => self.update_pipeline(c, b).await,
            "getAdditionalDatanode" => self.get_additional_datanode(c, b).await,
            "delete" => self.delete(c, b).await,
            "rename" => self.rename(c, b).await,
            "rename2" => self.rename2(c, b).await,
            "setReplication" => self.set_replication(c, b).await,
            "setPermission" => self.set_permission(c, b).await,
            "setOwner" => self.set_owner(c, b).await,
            "setTimes" => self.set_times(c, b).await,
            "renewLease" => self.renew_lease(c, b).await,
            "recoverLease" => self.recover_lease(c, b).await,
            "getFsStats" | "getStats" => self.get_fs_stats(c, b),
            "getFsReplicatedBlockStats" => self.get_fs_replicated_block_stats(c, b),
            "getDatanodeReport" => self.get_datanode_report(c, b).await,
            "metaSave" => self.meta_save(c, b).await,
            "refreshNodes" => self.refresh_nodes(c, b).await,
            "listOpenFiles" => self.list_open_files(c, b).await,
            "setSafeMode" => self.set_safe_mode(c, b).await,
            "saveNamespace" => self.save_namespace(c, b).await,
            "rollEdits" => self.roll_edits(c, b).await,
            "msync" => self.msync(c, b),
            "getHAServiceState" => self.get_ha_service_state(c, b),
            _ => Err(RpcError::no_such_method_on(&ctx.method, &ctx.protocol)),
        }
    }
}
