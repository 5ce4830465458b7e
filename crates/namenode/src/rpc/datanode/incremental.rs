//! blockReceivedAndDeleted: a DataNode's incremental block report (replicas being
//! received, received, deleted), per storage.

use bytes::Bytes;
use rhdfs_blockmanager::IncrementalItem;
use rhdfs_ipc::{RpcError, decode_request, encode_response};
use rhdfs_proto::datanode::{
    BlockReceivedAndDeletedRequestProto, BlockReceivedAndDeletedResponseProto,
    received_deleted_block_info_proto::BlockStatus,
};

use super::DatanodeProtocolService;
use super::convert::{block_of, storage_of};
use crate::rpc::errors::block_manager_to_rpc;

impl DatanodeProtocolService {
    pub(super) fn block_received_and_deleted(&self, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: BlockReceivedAndDeletedRequestProto = decode_request(body)?;
        let uuid = &req.registration.datanode_id.datanode_uuid;
        for s in &req.blocks {
            #[allow(deprecated)]
            let legacy_id = &s.storage_uuid;
            let (storage_id, storage_type) = storage_of(s.storage.as_ref(), legacy_id);
            let items: Vec<IncrementalItem> = s
                .blocks
                .iter()
                .filter_map(|b| {
                    let block = block_of(&b.block);
                    match BlockStatus::try_from(b.status) {
                        Ok(BlockStatus::Receiving) => Some(IncrementalItem::Receiving(block)),
                        Ok(BlockStatus::Received) => Some(IncrementalItem::Received(block)),
                        Ok(BlockStatus::Deleted) => Some(IncrementalItem::Deleted(block)),
                        Err(_) => {
                            tracing::warn!(
                                status = b.status,
                                "unknown block status in incremental report"
                            );
                            None
                        }
                    }
                })
                .collect();
            self.bm()
                .incremental_report(uuid, &storage_id, storage_type, &items)
                .map_err(block_manager_to_rpc)?;
        }
        Ok(encode_response(&BlockReceivedAndDeletedResponseProto {}))
    }
}
