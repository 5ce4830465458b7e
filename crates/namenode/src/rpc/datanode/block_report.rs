//! blockReport: a DataNode's full block report, per storage, processed off the async
//! workers (large reports are worked in chunks); replicas from the future that arrive
//! outside safe mode move the namespace's counters past them before it answers.
//!
//! A report's decoded replicas and request are large and short-lived: a storm of full
//! reports (every DataNode after a restart) leaves glibc's arenas holding their freed pages,
//! several times the memory the recorded replica locations take. When no report is being
//! processed any more and at least [`TRIM_AFTER_REPLICAS`] replicas were reported since the
//! last time, the free pages go back to the kernel (`rhdfs_http::release_free_memory`), on
//! the blocking thread that processed the last report — at most once per that many replicas.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

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
        let guard = InFlight::enter();
        tokio::task::spawn_blocking(move || {
            let replicas = reported_replicas(&req);
            let out = process(&bm, &req);
            drop(req);
            guard.leave(replicas);
            out
        })
        .await
        .map_err(|e| RpcError::io(format!("block report processing failed: {e}")))??;
        if !self.bm().in_safe_mode() {
            self.fs.hold_future_orphans_durably().await?;
        }
        Ok(encode_response(&BlockReportResponseProto { cmd: None }))
    }
}

/// Replicas reported since the free pages were last given back above which they are given
/// back once no report is in progress: about 30 MB of a report's transient buffers.
pub const TRIM_AFTER_REPLICAS: u64 = 500_000;

/// Block report RPCs being processed, process-wide (the trim is process-wide too).
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
/// Replicas in the reports processed since the last trim.
static SINCE_TRIM: AtomicU64 = AtomicU64::new(0);

/// One block report RPC counted in `IN_FLIGHT`; leaving (or dropping, if the processing
/// task was lost) counts it out.
struct InFlight {
    left: bool,
}

impl InFlight {
    fn enter() -> Self {
        IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
        InFlight { left: false }
    }

    /// The report of `replicas` replicas is done and its buffers freed: gives the free pages
    /// back when it was the last one in progress and enough were reported since the last
    /// time. Blocking: call it on a blocking thread.
    fn leave(mut self, replicas: u64) {
        self.left = true;
        let total = SINCE_TRIM.fetch_add(replicas, Ordering::Relaxed) + replicas;
        let others = IN_FLIGHT.fetch_sub(1, Ordering::Relaxed).saturating_sub(1);
        if others == 0 && total >= TRIM_AFTER_REPLICAS && should_trim() {
            rhdfs_http::release_free_memory();
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.left {
            IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// True for exactly one caller once `SINCE_TRIM` has reached the threshold (it resets it).
fn should_trim() -> bool {
    let total = SINCE_TRIM.load(Ordering::Relaxed);
    total >= TRIM_AFTER_REPLICAS
        && SINCE_TRIM
            .compare_exchange(total, 0, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
}

/// Replicas a report RPC claims (for the trim's count; not trusted for anything else).
fn reported_replicas(req: &BlockReportRequestProto) -> u64 {
    req.reports
        .iter()
        .map(|r| {
            if r.blocks_buffers.is_empty() {
                // The long-list format takes at least three longs per replica.
                r.blocks.len() as u64 / 3
            } else {
                // A buffer-format replica takes at least 4 bytes.
                let bytes: usize = r.blocks_buffers.iter().map(|b| b.len()).sum();
                r.number_of_blocks.unwrap_or(0).min(bytes as u64 / 4)
            }
        })
        .fold(0u64, u64::saturating_add)
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

#[cfg(test)]
mod tests {
    use rhdfs_blockmanager::{Block, ReplicaState, ReportedReplica, encode_buffer, encode_longs};
    use rhdfs_proto::datanode::StorageBlockReportProto;

    use super::*;

    #[test]
    fn replicas_counted_for_the_trim_in_both_formats_and_never_above_the_bytes() {
        let reps: Vec<ReportedReplica> = (1..=10)
            .map(|id| ReportedReplica {
                block: Block::new(id, 1001, 100),
                state: ReplicaState::Finalized,
            })
            .collect();
        let longs = StorageBlockReportProto {
            blocks: encode_longs(&reps),
            ..Default::default()
        };
        let buffers = StorageBlockReportProto {
            blocks_buffers: vec![encode_buffer(&reps)],
            number_of_blocks: Some(10),
            ..Default::default()
        };
        let lying = StorageBlockReportProto {
            blocks_buffers: vec![Bytes::from_static(&[0; 8])],
            number_of_blocks: Some(u64::MAX),
            ..Default::default()
        };
        let req = BlockReportRequestProto {
            reports: vec![longs, buffers, lying],
            ..Default::default()
        };
        // the long list's header and delimiter add a replica's worth of longs
        assert_eq!(reported_replicas(&req), 11 + 10 + 2);
    }
}
