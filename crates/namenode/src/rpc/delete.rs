//! delete.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{DeleteRequestProto, DeleteResponseProto};

use super::ClientProtocolService;

impl ClientProtocolService {
    /// false for a missing path or "/"; PathIsNotEmptyDirectoryException without recursive.
    pub(super) async fn delete(&self, ctx: &CallContext, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: DeleteRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let result = self.fs.delete(&caller, &req.src, req.recursive)?;
        Ok(encode_response(&DeleteResponseProto { result }))
    }
}
