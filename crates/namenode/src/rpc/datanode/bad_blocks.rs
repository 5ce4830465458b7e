//! reportBadBlocks from a DataNode: replicas its block scanner or a reader found corrupt.
//! Clients report through ClientProtocol's call of the same name (`rpc/block_locations.rs`);
//! both end in [`mark_corrupt`].

use bytes::Bytes;
use rhdfs_blockmanager::{Block, BlockManager};
use rhdfs_ipc::{RpcError, decode_request, encode_response};
use rhdfs_proto::datanode::{ReportBadBlocksRequestProto, ReportBadBlocksResponseProto};
use rhdfs_proto::hdfs::LocatedBlockProto;

use super::DatanodeProtocolService;

/// Each reported replica (a block at each of its listed locations and storages) is
/// corrupt: the block manager stops serving it and schedules a new copy.
pub fn mark_corrupt(bm: &BlockManager, blocks: &[LocatedBlockProto]) {
    for lb in blocks {
        let b = Block::new(
            lb.b.block_id,
            lb.b.generation_stamp,
            lb.b.num_bytes.unwrap_or(0),
        );
        for (i, loc) in lb.locs.iter().enumerate() {
            let storage = lb
                .storage_i_ds
                .get(i)
                .map(String::as_str)
                .filter(|s| !s.is_empty());
            bm.report_bad_block(b, &loc.id.datanode_uuid, storage);
        }
    }
}

impl DatanodeProtocolService {
    pub(super) fn report_bad_blocks(&self, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: ReportBadBlocksRequestProto = decode_request(body)?;
        mark_corrupt(self.bm(), &req.blocks);
        Ok(encode_response(&ReportBadBlocksResponseProto {}))
    }
}
