//! setQuota (dfsadmin -setQuota/-clrQuota/-setSpaceQuota/-clrSpaceQuota): superuser only.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{SetQuotaRequestProto, SetQuotaResponseProto};

use super::ClientProtocolService;

impl ClientProtocolService {
    pub(super) async fn set_quota(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: SetQuotaRequestProto = decode_request(body)?;
        self.require_superuser(ctx).await?;
        // Quotas arrive as uint64: -1 (reset) and Long.MAX_VALUE (don't set) as their bits.
        let (ns, ds) = (req.namespace_quota as i64, req.storagespace_quota as i64);
        let mono = self.fs.now().mono;
        match req.storage_type {
            Some(t) => self
                .fs
                .with_ns_op("setQuota", |n| n.set_type_quota(&req.path, ns, t, ds, mono))?,
            None => self
                .fs
                .with_ns_op("setQuota", |n| n.set_quota(&req.path, ns, ds, mono))?,
        }
        Ok(encode_response(&SetQuotaResponseProto {}))
    }
}

/// The client side (`dfsadmin` quota commands): setQuota on the NameNode at `addr`
/// (host:port) as `user`. `storage_type` is a `StorageTypeProto` value.
pub async fn call(
    addr: &str,
    user: &str,
    path: &str,
    ns_quota: i64,
    ds_quota: i64,
    storage_type: Option<i32>,
) -> Result<(), rhdfs_ipc::IpcError> {
    let client =
        rhdfs_ipc::RpcClient::connect(addr, rhdfs_proto::protocols::CLIENT_PROTOCOL, user).await?;
    let _: SetQuotaResponseProto = client
        .call(
            "setQuota",
            &SetQuotaRequestProto {
                path: path.to_string(),
                namespace_quota: ns_quota as u64,
                storagespace_quota: ds_quota as u64,
                storage_type,
            },
        )
        .await?;
    Ok(())
}
