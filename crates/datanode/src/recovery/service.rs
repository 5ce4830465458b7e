//! InterDatanodeProtocol: initReplicaRecovery and updateReplicaUnderRecovery, served to
//! the primary DataNode of a block recovery.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, RpcService, decode_request, encode_response};
use rhdfs_proto::datanode::{
    InitReplicaRecoveryRequestProto, InitReplicaRecoveryResponseProto,
    UpdateReplicaUnderRecoveryRequestProto, UpdateReplicaUnderRecoveryResponseProto,
};
use rhdfs_proto::hdfs::BlockProto;

use super::replica::{init_replica_recovery, update_replica_under_recovery};
use crate::dataset::Dataset;
use crate::error::StorageError;

/// The service; dispatch InterDatanodeProtocol calls to it.
pub struct InterDatanodeService {
    ds: Arc<Dataset>,
}

impl InterDatanodeService {
    pub fn new(ds: Arc<Dataset>) -> Self {
        InterDatanodeService { ds }
    }

    /// initReplicaRecovery on the local dataset (blocking work off the async threads).
    pub async fn init(
        &self,
        req: InitReplicaRecoveryRequestProto,
    ) -> Result<InitReplicaRecoveryResponseProto, RpcError> {
        let b = req.block.block.b;
        let recovery_id = req.block.new_gen_stamp;
        let ds = self.ds.clone();
        let (pool, id, gs) = (b.pool_id, b.block_id, b.generation_stamp);
        let report = tokio::task::spawn_blocking(move || {
            init_replica_recovery(&ds, &pool, id, gs, recovery_id)
        })
        .await
        .map_err(|e| RpcError::io(format!("initReplicaRecovery failed: {e}")))?
        .map_err(to_rpc)?;
        Ok(match report {
            None => InitReplicaRecoveryResponseProto {
                replica_found: false,
                state: None,
                block: None,
            },
            Some(r) => InitReplicaRecoveryResponseProto {
                replica_found: true,
                state: Some(r.state.code() as i32),
                block: Some(BlockProto {
                    block_id: id,
                    gen_stamp: r.gs,
                    num_bytes: Some(r.len),
                }),
            },
        })
    }

    /// updateReplicaUnderRecovery on the local dataset.
    pub async fn update(
        &self,
        req: UpdateReplicaUnderRecoveryRequestProto,
    ) -> Result<UpdateReplicaUnderRecoveryResponseProto, RpcError> {
        let ds = self.ds.clone();
        let (pool, id) = (req.block.pool_id.clone(), req.block.block_id);
        let (recovery_id, len) = (req.recovery_id, req.new_length);
        // The primary names the replica as it reported itself: its length must not have moved.
        let reported_len = req.block.num_bytes;
        if let Some(new_id) = req.new_block_id
            && new_id > 0
            && new_id != id
        {
            return Err(RpcError::io(format!(
                "updateReplicaUnderRecovery of blk_{id}: copy-on-truncate to blk_{new_id} is not supported"
            )));
        }
        let info = tokio::task::spawn_blocking(move || {
            update_replica_under_recovery(&ds, &pool, id, recovery_id, reported_len, len)
        })
        .await
        .map_err(|e| RpcError::io(format!("updateReplicaUnderRecovery failed: {e}")))?
        .map_err(to_rpc)?;
        Ok(UpdateReplicaUnderRecoveryResponseProto {
            storage_uuid: self.ds.storage_ids().get(info.volume).cloned(),
        })
    }
}

/// Java class of a refused recovery step, as Hadoop's DataNode throws it.
pub use rhdfs_ipc::exceptions::RECOVERY_IN_PROGRESS;
use rhdfs_ipc::exceptions::REPLICA_NOT_FOUND;

fn to_rpc(e: StorageError) -> RpcError {
    match e {
        StorageError::RecoveryInProgress { .. } => {
            RpcError::new(RECOVERY_IN_PROGRESS, e.to_string())
        }
        StorageError::ReplicaNotFound(_) => RpcError::new(REPLICA_NOT_FOUND, e.to_string()),
        e => RpcError::io(e.to_string()),
    }
}

#[async_trait]
impl RpcService for InterDatanodeService {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        match ctx.method.as_str() {
            "initReplicaRecovery" => {
                let req: InitReplicaRecoveryRequestProto = decode_request(&body)?;
                Ok(encode_response(&self.init(req).await?))
            }
            "updateReplicaUnderRecovery" => {
                let req: UpdateReplicaUnderRecoveryRequestProto = decode_request(&body)?;
                Ok(encode_response(&self.update(req).await?))
            }
            _ => Err(RpcError::no_such_method_on(&ctx.method, &ctx.protocol)),
        }
    }
}
