//! registerDatanode: a DataNode joins (or rejoins) the cluster.

use bytes::Bytes;
use rhdfs_blockmanager::redundancy::decommission::disallowed_error;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::datanode::{RegisterDatanodeRequestProto, RegisterDatanodeResponseProto};

use super::DatanodeProtocolService;
use crate::rpc::datanode_info::datanode_id_from_proto;
use crate::rpc::errors::block_manager_to_rpc;

impl DatanodeProtocolService {
    pub(super) fn register(&self, ctx: &CallContext, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: RegisterDatanodeRequestProto = decode_request(body)?;
        let mut reg = req.registration;
        // Like Hadoop, trust the connection's address over the one the DataNode claims.
        let peer_ip = ctx.peer.ip();
        if !peer_ip.is_unspecified() {
            reg.datanode_id.ip_addr = peer_ip.to_string();
        }
        let id = datanode_id_from_proto(&reg.datanode_id);
        tracing::info!(
            uuid = %id.uuid, addr = %id.xfer_addr(),
            "BLOCK* registerDatanode: from DatanodeRegistration({})", id.xfer_addr()
        );
        let bm = self.bm();
        if !bm.is_host_allowed(&id) {
            return Err(block_manager_to_rpc(disallowed_error(&id)));
        }
        bm.register_datanode(id, &reg.software_version)
            .map_err(block_manager_to_rpc)?;
        Ok(encode_response(&RegisterDatanodeResponseProto {
            registration: reg,
        }))
    }
}
