//! ClientDatanodeProtocol on dfs.datanode.ipc.address: getReplicaVisibleLength; every other
//! method answers RpcNoSuchMethodException.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, RpcService, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    GetReplicaVisibleLengthRequestProto, GetReplicaVisibleLengthResponseProto,
};

use crate::dataset::Dataset;

const REPLICA_NOT_FOUND: &str = "org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException";

/// Serves ClientDatanodeProtocol from the replica map.
#[derive(Debug, Clone)]
pub struct ClientDatanodeService {
    ds: Arc<Dataset>,
}

impl ClientDatanodeService {
    pub fn new(ds: Arc<Dataset>) -> Self {
        ClientDatanodeService { ds }
    }

    fn visible_length(&self, req: &GetReplicaVisibleLengthRequestProto) -> Result<u64, RpcError> {
        let b = &req.block;
        let r = self.ds.get(&b.pool_id, b.block_id).ok_or_else(|| {
            RpcError::new(
                REPLICA_NOT_FOUND,
                format!(
                    "Replica not found for BP-{}:blk_{}_{}",
                    b.pool_id, b.block_id, b.generation_stamp
                ),
            )
        })?;
        if r.gs < b.generation_stamp {
            return Err(RpcError::io(format!(
                "replica blk_{}_{} has an older generation stamp than the requested {}",
                r.id, r.gs, b.generation_stamp
            )));
        }
        Ok(r.num_bytes)
    }
}

#[async_trait]
impl RpcService for ClientDatanodeService {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        match ctx.method.as_str() {
            "getReplicaVisibleLength" => {
                let req: GetReplicaVisibleLengthRequestProto = decode_request(&body)?;
                let length = self.visible_length(&req)?;
                Ok(encode_response(&GetReplicaVisibleLengthResponseProto {
                    length,
                }))
            }
            other => Err(RpcError::no_such_method(other)),
        }
    }
}
