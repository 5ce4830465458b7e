//! metaSave: writes the block manager's queues and the DataNode list to a file in the
//! NameNode's log directory (`HADOOP_LOG_DIR`, else the working directory, as Hadoop's
//! `hadoop.log.dir`). Superuser only.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{MetaSaveRequestProto, MetaSaveResponseProto};

use super::ClientProtocolService;

impl ClientProtocolService {
    pub(super) async fn meta_save(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: MetaSaveRequestProto = decode_request(body)?;
        let caller = self.require_superuser(ctx).await?;
        let fs = self.fs.clone();
        let text = tokio::task::spawn_blocking(move || {
            let (inodes, _) = fs.with_ns(|ns| (ns.dir().inode_count(), ()));
            let bm = fs.block_manager();
            let stats = bm.fs_stats();
            format!(
                "{} files and directories, {} blocks = {} total\nLive Datanodes: {}\nDead Datanodes: {}\n{}",
                inodes,
                stats.blocks_total,
                inodes as u64 + stats.blocks_total,
                stats.live_datanodes,
                stats.dead_datanodes,
                bm.metasave_text()
            )
        })
        .await
        .map_err(|e| RpcError::io(format!("metaSave failed: {e}")))?;
        let dir = std::env::var_os("HADOOP_LOG_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| std::path::PathBuf::from("."));
        let path = dir.join(&req.filename);
        tokio::task::spawn_blocking(move || std::fs::write(&path, text))
            .await
            .map_err(|e| RpcError::io(format!("metaSave failed: {e}")))?
            .map_err(|e| RpcError::io(format!("metaSave: cannot write {}: {e}", req.filename)))?;
        tracing::info!(file = %req.filename, user = %caller.user, "metaSave written");
        Ok(encode_response(&MetaSaveResponseProto {}))
    }
}
