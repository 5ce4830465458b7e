//! saveNamespace (superuser, safe mode only) and rollEdits.

use std::time::Duration;

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    RollEditsResponseProto, SaveNamespaceRequestProto, SaveNamespaceResponseProto,
};

use super::ClientProtocolService;

impl ClientProtocolService {
    /// Writes an image of the namespace now (the NameNode must be in safe mode), unless a
    /// time window / transaction gap is given and the newest image is within both.
    pub(super) async fn save_namespace(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: SaveNamespaceRequestProto = decode_request(body)?;
        self.require_superuser(ctx).await?;
        let window = Duration::from_secs(req.time_window.unwrap_or(0));
        let saved = self
            .fs
            .save_namespace(window, req.tx_gap.unwrap_or(0))
            .await?;
        tracing::info!(user = %ctx.user, saved, "saveNamespace");
        Ok(encode_response(&SaveNamespaceResponseProto {
            saved: Some(saved),
        }))
    }

    /// Finalizes the current edit segment and starts a new one (not in safe mode, as
    /// Hadoop's rollEditLog).
    pub(super) async fn roll_edits(
        &self,
        ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        self.require_superuser(ctx).await?;
        self.fs.with_ns(|ns| ns.check_safe_mode("Log not rolled"))?;
        let Some(d) = self.fs.durable().cloned() else {
            return Err(RpcError::io("the NameNode has no edit log"));
        };
        let next = tokio::task::spawn_blocking(move || d.log().roll())
            .await
            .map_err(|e| RpcError::io(format!("rollEdits failed: {e}")))?
            .map_err(|e| RpcError::io(format!("rollEdits failed: {e}")))?;
        Ok(encode_response(&RollEditsResponseProto {
            new_segment_tx_id: next,
        }))
    }
}
