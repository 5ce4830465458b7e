//! rename (returns false on failure) and rename2 (throws).

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    Rename2RequestProto, Rename2ResponseProto, RenameRequestProto, RenameResponseProto,
};

use super::ClientProtocolService;

impl ClientProtocolService {
    pub(super) async fn rename(&self, ctx: &CallContext, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: RenameRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let result = self.fs.rename(&caller, &req.src, &req.dst)?;
        Ok(encode_response(&RenameResponseProto { result }))
    }

    /// A rename another NameNode ran and committed: it renamed.
    pub(super) async fn rename_replayed(
        &self,
        _ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        Ok(encode_response(&RenameResponseProto { result: true }))
    }

    pub(super) async fn rename2(&self, ctx: &CallContext, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: Rename2RequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let applied = self
            .fs
            .rename2(&caller, &req.src, &req.dst, req.overwrite_dest)?;
        self.fs.commit(applied).await?;
        Ok(encode_response(&Rename2ResponseProto {}))
    }

    /// A rename2 another NameNode ran and committed.
    pub(super) async fn rename2_replayed(
        &self,
        _ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        Ok(encode_response(&Rename2ResponseProto {}))
    }
}
