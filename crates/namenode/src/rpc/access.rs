//! checkAccess: whether the caller may read, write or execute a path (WebHDFS CHECKACCESS,
//! FileSystem.access).

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{CheckAccessRequestProto, CheckAccessResponseProto};

use super::ClientProtocolService;

impl ClientProtocolService {
    pub(super) async fn check_access(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: CheckAccessRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        // FsActionProto's numbers are the rwx bits (NONE = 0 … PERM_ALL = 7).
        let mode = u16::try_from(req.mode).unwrap_or(0) & 0o7;
        self.fs
            .with_ns(|ns| ns.check_access(&caller, &req.path, mode))?;
        Ok(encode_response(&CheckAccessResponseProto {}))
    }
}
