//! append.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{AppendRequestProto, AppendResponseProto};

use super::ClientProtocolService;
use super::convert::{file_status, located_block};
use crate::namespace::flags;
use crate::namesystem::LocatedAppend;

impl ClientProtocolService {
    /// Returns the last block (with its locations and current length) when it is partial
    /// and NEW_BLOCK was not asked for.
    pub(super) async fn append(&self, ctx: &CallContext, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: AppendRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let flag = req.flag.unwrap_or(flags::APPEND);
        let r = self
            .fs
            .append(&caller, &req.src, &req.client_name, flag)
            .await?;
        Ok(self.append_answer(&r))
    }

    fn append_answer(&self, r: &LocatedAppend) -> Bytes {
        encode_response(&AppendResponseProto {
            block: r.block.as_ref().map(|b| located_block(self.pool(), b)),
            stat: Some(file_status(&r.status, None)),
        })
    }

    /// An append another NameNode ran and committed: the answer read back from the file it
    /// left open by the client. A namespace without it runs the append.
    pub(super) async fn append_replayed(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: AppendRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let flag = req.flag.unwrap_or(flags::APPEND);
        match self
            .fs
            .appended(&caller, &req.src, &req.client_name, flag)?
        {
            Some(r) => Ok(self.append_answer(&r)),
            None => self.append(ctx, body).await,
        }
    }
}
