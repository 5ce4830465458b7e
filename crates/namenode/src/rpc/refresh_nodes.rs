//! refreshNodes (dfsadmin -refreshNodes): re-reads `dfs.hosts` / `dfs.hosts.exclude`;
//! newly excluded DataNodes start decommissioning, others return to service. Superuser only.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{RefreshNodesRequestProto, RefreshNodesResponseProto};

use super::ClientProtocolService;

impl ClientProtocolService {
    pub(super) async fn refresh_nodes(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let _req: RefreshNodesRequestProto = decode_request(body)?;
        let caller = self.require_superuser(ctx).await?;
        let bm = self.fs.block_manager().clone();
        let out = tokio::task::spawn_blocking(move || bm.refresh_nodes())
            .await
            .map_err(|e| RpcError::io(format!("refreshNodes failed: {e}")))?
            .map_err(super::errors::block_manager_to_rpc)?;
        tracing::info!(
            user = %caller.user,
            started = ?out.started,
            stopped = ?out.stopped,
            "refreshNodes"
        );
        Ok(encode_response(&RefreshNodesResponseProto {}))
    }
}

/// The client side (`dfsadmin -refreshNodes`): calls refreshNodes on the NameNode at
/// `addr` (host:port) as `user`.
pub async fn call(addr: &str, user: &str) -> Result<(), rhdfs_ipc::IpcError> {
    let client =
        rhdfs_ipc::RpcClient::connect(addr, rhdfs_proto::protocols::CLIENT_PROTOCOL, user).await?;
    let _: RefreshNodesResponseProto = client
        .call("refreshNodes", &RefreshNodesRequestProto {})
        .await?;
    Ok(())
}
