//! truncate.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{TruncateRequestProto, TruncateResponseProto};

use super::ClientProtocolService;

impl ClientProtocolService {
    /// true when the file has its new length at once; false when the client waits for
    /// the block recovery (the file is closed when it ends).
    pub(super) async fn truncate(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: TruncateRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        // newLength travels as uint64; Java sends a negative long as its two's complement.
        let result = self
            .fs
            .truncate(&caller, &req.src, req.new_length as i64, &req.client_name)
            .await?;
        Ok(encode_response(&TruncateResponseProto { result }))
    }
}
