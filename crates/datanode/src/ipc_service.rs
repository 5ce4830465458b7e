//! ClientDatanodeProtocol on dfs.datanode.ipc.address: getReplicaVisibleLength,
//! triggerBlockReport and getDatanodeInfo; every other method answers
//! RpcNoSuchMethodException.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, RpcService, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    DatanodeLocalInfoProto, GetDatanodeInfoResponseProto, GetReplicaVisibleLengthRequestProto,
    GetReplicaVisibleLengthResponseProto, TriggerBlockReportRequestProto,
    TriggerBlockReportResponseProto,
};

use crate::actor::Triggers;
use crate::dataset::Dataset;

/// Software version reported by getDatanodeInfo.
pub const SOFTWARE_VERSION: &str = "3.5.0";

const REPLICA_NOT_FOUND: &str = "org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException";

/// Serves ClientDatanodeProtocol from the replica map.
#[derive(Debug, Clone)]
pub struct ClientDatanodeService {
    ds: Arc<Dataset>,
    triggers: Arc<Triggers>,
    started: std::time::Instant,
}

impl ClientDatanodeService {
    pub fn new(ds: Arc<Dataset>, triggers: Arc<Triggers>) -> Self {
        ClientDatanodeService {
            ds,
            triggers,
            started: std::time::Instant::now(),
        }
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
            "triggerBlockReport" => {
                let req: TriggerBlockReportRequestProto = decode_request(&body)?;
                if req.incremental {
                    self.triggers.incremental_report();
                } else {
                    self.triggers.full_report();
                }
                Ok(encode_response(&TriggerBlockReportResponseProto {}))
            }
            "getDatanodeInfo" => Ok(encode_response(&GetDatanodeInfoResponseProto {
                local_info: DatanodeLocalInfoProto {
                    software_version: SOFTWARE_VERSION.to_string(),
                    config_version: "rhdfs".to_string(),
                    uptime: self.started.elapsed().as_secs(),
                },
            })),
            other => Err(RpcError::no_such_method(other)),
        }
    }
}
