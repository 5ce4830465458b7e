//! getListing: paged by dfs.ls.limit; a missing path is an empty response.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{DirectoryListingProto, GetListingRequestProto, GetListingResponseProto};

use super::ClientProtocolService;
use super::convert::{file_status, located_blocks};

impl ClientProtocolService {
    pub(super) async fn get_listing(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetListingRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let listing = self
            .fs
            .listing(&caller, &req.src, &req.start_after, req.need_location)?;
        let dir_list = listing.map(|l| DirectoryListingProto {
            partial_listing: l
                .entries
                .iter()
                .map(|e| {
                    let locs = e.blocks.as_ref().map(|fb| {
                        located_blocks(self.pool(), &self.fs.located_blocks(fb, 0, u64::MAX))
                    });
                    file_status(e, locs)
                })
                .collect(),
            remaining_entries: l.remaining,
        });
        Ok(encode_response(&GetListingResponseProto { dir_list }))
    }
}
