//! releaseOrphans (rhdfs's own ClientProtocol method, superuser only, not in safe mode):
//! the held orphan replicas are deleted once the release is durable. With its client side
//! for `rhdfs dfsadmin -releaseOrphans`.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{ReleaseOrphansRequestProto, ReleaseOrphansResponseProto};

use super::ClientProtocolService;

impl ClientProtocolService {
    pub(super) async fn release_orphans(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let _: ReleaseOrphansRequestProto = decode_request(body)?;
        let caller = self.require_superuser(ctx).await?;
        self.fs
            .with_ns(|ns| ns.check_safe_mode("Cannot release orphan replicas"))?;
        let applied = self.fs.release_orphans()?;
        let released = self.fs.commit(applied).await?;
        tracing::info!(user = %caller.user, released, "releaseOrphans");
        Ok(encode_response(&ReleaseOrphansResponseProto { released }))
    }
}

/// The client side: asks the NameNode at `addr` (host:port) to delete its held orphan
/// replicas; returns how many it released.
pub async fn release_orphans(addr: &str, user: &str) -> Result<u64, rhdfs_ipc::IpcError> {
    let c =
        rhdfs_ipc::RpcClient::connect(addr, rhdfs_proto::protocols::CLIENT_PROTOCOL, user).await?;
    let r: ReleaseOrphansResponseProto = c
        .call("releaseOrphans", &ReleaseOrphansRequestProto {})
        .await?;
    Ok(r.released)
}
