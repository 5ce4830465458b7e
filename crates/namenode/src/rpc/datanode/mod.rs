//! DatanodeProtocol (`org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol`) over Hadoop
//! IPC: decoding, dispatch by method name and encoding, one file per handler. The block
//! manager answers in domain types (`rhdfs_blockmanager`); each reply is composed here once,
//! from its outcome and, for heartbeats and commitBlockSynchronization, from the namespace's
//! block recoveries. Block manager errors become Java exceptions in `rpc/errors.rs`.

pub mod bad_blocks;
mod block_report;
pub mod commands;
mod commit_sync;
mod convert;
mod error_report;
mod heartbeat;
mod incremental;
mod register;
pub mod version;

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use rhdfs_blockmanager::BlockManager;
use rhdfs_ipc::{CallContext, RpcError, RpcService};
use rhdfs_proto::protocols::DATANODE_PROTOCOL;

use crate::namesystem::Namesystem;

/// The NameNode's DatanodeProtocol handler; method names are Hadoop's.
#[derive(Clone)]
pub struct DatanodeProtocolService {
    fs: Arc<Namesystem>,
}

impl std::fmt::Debug for DatanodeProtocolService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatanodeProtocolService")
            .finish_non_exhaustive()
    }
}

impl DatanodeProtocolService {
    /// Serves DataNodes for `fs` (and its block manager).
    pub fn new(fs: Arc<Namesystem>) -> Self {
        DatanodeProtocolService { fs }
    }

    fn bm(&self) -> &Arc<BlockManager> {
        self.fs.block_manager()
    }
}

#[async_trait]
impl RpcService for DatanodeProtocolService {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        match ctx.method.as_str() {
            "versionRequest" => self.version_request(&body),
            "registerDatanode" => self.register(&ctx, &body),
            "sendHeartbeat" => self.heartbeat(&body),
            "blockReport" => self.block_report(&body).await,
            "blockReceivedAndDeleted" => self.block_received_and_deleted(&body),
            "errorReport" => self.error_report(&body),
            "reportBadBlocks" => self.report_bad_blocks(&body),
            "commitBlockSynchronization" => self.commit_block_synchronization(&body).await,
            other => Err(RpcError::no_such_method_on(other, DATANODE_PROTOCOL)),
        }
    }
}
