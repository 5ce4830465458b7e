//! renewLease and recoverLease.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    RecoverLeaseRequestProto, RecoverLeaseResponseProto, RenewLeaseRequestProto,
    RenewLeaseResponseProto,
};

use super::ClientProtocolService;

impl ClientProtocolService {
    pub(super) async fn renew_lease(
        &self,
        _ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: RenewLeaseRequestProto = decode_request(body)?;
        self.fs.renew_lease(&req.client_name)?;
        Ok(encode_response(&RenewLeaseResponseProto {}))
    }

    /// true when the file is closed. Files whose last block is still being written stay
    /// open (that needs block recovery).
    pub(super) async fn recover_lease(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: RecoverLeaseRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let result = self
            .fs
            .recover_lease(&caller, &req.src, &req.client_name)
            .await?;
        Ok(encode_response(&RecoverLeaseResponseProto { result }))
    }
}
