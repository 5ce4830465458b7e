//! mkdirs.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{MkdirsRequestProto, MkdirsResponseProto};

use super::ClientProtocolService;

impl ClientProtocolService {
    /// `masked` is already umasked by the client.
    pub(super) async fn mkdirs(&self, ctx: &CallContext, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: MkdirsRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let mode = (req.masked.perm & 0o7777) as u16;
        let unmasked = req.unmasked.map(|u| (u.perm & 0o7777) as u16);
        let result = self
            .fs
            .mkdirs(&caller, &req.src, mode, unmasked, req.create_parent)?;
        Ok(encode_response(&MkdirsResponseProto { result }))
    }
}
