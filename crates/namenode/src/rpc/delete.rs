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
        let applied = self.fs.delete(&caller, &req.src, req.recursive)?;
        let result = self.fs.commit(applied).await?;
        Ok(encode_response(&DeleteResponseProto { result }))
    }

    /// A delete another NameNode ran and committed: it deleted (a delete that logs nothing
    /// is not remembered as committed).
    pub(super) async fn delete_replayed(
        &self,
        _ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        Ok(encode_response(&DeleteResponseProto { result: true }))
    }
}
