//! getBlockLocations and reportBadBlocks.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    GetBlockLocationsRequestProto, GetBlockLocationsResponseProto, ReportBadBlocksRequestProto,
    ReportBadBlocksResponseProto,
};

use super::ClientProtocolService;
use super::convert::located_blocks;
use crate::ha::observer::ObserverError;

impl ClientProtocolService {
    /// FileNotFoundException for a missing path ("File does not exist: /x").
    pub(super) async fn get_block_locations(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetBlockLocationsRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let offset = i64::try_from(req.offset).unwrap_or(i64::MAX);
        let length = i64::try_from(req.length).unwrap_or(i64::MAX);
        let mut lbs = self
            .fs
            .get_block_locations(&caller, &req.src, offset, length)?;
        // An observer may not know a new block's replicas yet: the client asks the active.
        if self.fs.ha_role().get() == crate::ha::Role::Observer
            && lbs.blocks.iter().any(|b| b.locations.is_empty())
        {
            self.fs.ha_role().observer_reads().count_refused();
            return Err(ObserverError::ZeroBlockLocations(req.src).into());
        }
        // Closest replicas first for the caller's address (Hadoop sorts the located blocks
        // and the last block by the client machine after the namespace work).
        let reader = ctx.peer.ip().to_string();
        let mut locs: Vec<&mut Vec<rhdfs_blockmanager::Location>> = lbs
            .blocks
            .iter_mut()
            .chain(lbs.last.iter_mut())
            .map(|lb| &mut lb.locations)
            .collect();
        self.fs.block_manager().sort_for_reader(&reader, &mut locs);
        Ok(encode_response(&GetBlockLocationsResponseProto {
            locations: Some(located_blocks(self.pool(), &lbs)),
        }))
    }

    /// A client found replicas corrupt: the block manager stops serving them.
    pub(super) async fn report_bad_blocks(
        &self,
        _ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: ReportBadBlocksRequestProto = decode_request(body)?;
        super::datanode::bad_blocks::mark_corrupt(self.fs.block_manager(), &req.blocks);
        Ok(encode_response(&ReportBadBlocksResponseProto {}))
    }
}
