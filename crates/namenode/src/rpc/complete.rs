//! complete and fsync.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    CompleteRequestProto, CompleteResponseProto, FsyncRequestProto, FsyncResponseProto,
};

use super::ClientProtocolService;
use super::convert::block_from_proto;

impl ClientProtocolService {
    /// false until every block has dfs.namenode.replication.min replicas (the client retries).
    pub(super) async fn complete(
        &self,
        _ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: CompleteRequestProto = decode_request(body)?;
        let last = req.last.as_ref().map(block_from_proto);
        let result = self
            .fs
            .complete(&req.src, &req.client_name, last, req.file_id.unwrap_or(0))
            .await?;
        Ok(encode_response(&CompleteResponseProto { result }))
    }

    /// Records the visible length of the open last block.
    pub(super) async fn fsync(&self, _ctx: &CallContext, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: FsyncRequestProto = decode_request(body)?;
        self.fs.fsync(
            &req.src,
            &req.client,
            req.last_block_length.unwrap_or(-1),
            req.file_id.unwrap_or(0),
        )?;
        Ok(encode_response(&FsyncResponseProto {}))
    }
}
