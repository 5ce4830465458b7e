//! concat.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{ConcatRequestProto, ConcatResponseProto};

use super::ClientProtocolService;

impl ClientProtocolService {
    /// Appends the sources' blocks to the target and removes the sources.
    pub(super) async fn concat(&self, ctx: &CallContext, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: ConcatRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let applied = self.fs.concat(&caller, &req.trg, &req.srcs)?;
        self.fs.commit(applied).await?;
        Ok(encode_response(&ConcatResponseProto {}))
    }

    /// A concat another NameNode ran and committed.
    pub(super) async fn concat_replayed(
        &self,
        _ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        Ok(encode_response(&ConcatResponseProto {}))
    }
}
