//! blockReport: a DataNode's full block report, per storage, processed off the async
//! workers (large reports are worked in chunks); replicas from the future that arrive
//! outside safe mode move the namespace's counters past them before it answers.

use bytes::Bytes;
use rhdfs_blockmanager::{BlockManager, decode_buffers, decode_longs};
use rhdfs_ipc::{RpcError, decode_request, encode_response};
use rhdfs_proto::datanode::{BlockReportRequestProto, BlockReportResponseProto};

use super::DatanodeProtocolService;
use super::convert::DISK;
use crate::rpc::errors::block_manager_to_rpc;

impl DatanodeProtocolService {
    pub(super) async fn block_report(&self, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: BlockReportRequestProto = decode_request(body)?;
        let bm = self.bm().clone();
        tokio::task::spawn_blocking(move || process(&bm, &req))
            .await
            .map_err(|e| RpcError::io(format!("block report processing failed: {e}")))??;
        if !self.bm().in_safe_mode() {
            self.fs.hold_future_orphans_durably().await?;
        }
        Ok(encode_response(&BlockReportResponseProto { cmd: None }))
    }
}

/// Applies one block report RPC (some or all of a report's storages) to the block manager.
fn process(bm: &BlockManager, req: &BlockReportRequestProto) -> Result<(), RpcError> {
    let uuid = &req.registration.datanode_id.datanode_uuid;
    if let Some(c) = &req.context
        && let Err(why) = bm.check_report_lease(uuid, c.lease_id.unwrap_or(0))
    {
        // Hadoop ignores the report; the DataNode asks for a lease again later.
        tracing::warn!(
            dn = %uuid, lease = format!("0x{:x}", c.lease_id.unwrap_or(0)), reason = ?why,
            "BR lease is not valid; the full block report is ignored"
        );
        return Ok(());
    }
    for r in &req.reports {
        if let Some(c) = &req.context
            && !bm.first_sight_of_storage(uuid, c.id, &r.storage.storage_uuid)
        {
            tracing::info!(
                dn = %uuid, storage = %r.storage.storage_uuid, report = c.id,
                "storage already processed in this full block report; skipped"
            );
            continue;
        }
        let replicas = if !r.blocks_buffers.is_empty() {
            decode_buffers(r.number_of_blocks.unwrap_or(0), &r.blocks_buffers)
        } else {
            decode_longs(&r.blocks)
        }
        .map_err(block_manager_to_rpc)?;
        let storage_type = r.storage.storage_type.unwrap_or(DISK);
        let sum = bm
            .full_report(uuid, &r.storage.storage_uuid, storage_type, &replicas)
            .map_err(block_manager_to_rpc)?;
        tracing::info!(
            dn = %uuid, storage = %r.storage.storage_uuid,
            blocks = sum.reported, added = sum.added, removed = sum.removed,
            invalidated = sum.invalidated, corrupt = sum.corrupt, chunks = sum.chunks,
            "BLOCK* processReport"
        );
    }
    let last = req
        .context
        .as_ref()
        .is_none_or(|c| c.cur_rpc + 1 >= c.total_rpcs);
    if last {
        bm.full_report_done(uuid);
    }
    Ok(())
}
