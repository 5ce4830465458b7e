//! REQUEST_SHORT_CIRCUIT_FDS (op 87) on the domain socket: the block and meta files of a
//! finalized replica, opened here and passed to the local client as SCM_RIGHTS after a
//! SUCCESS answer carrying `shortCircuitAccessVersion`, as Hadoop's
//! DataXceiver.requestShortCircuitFds.
//!
//! Refusals, as Hadoop's: a client whose `maxVersion` is below the block format version gets
//! ERROR_UNSUPPORTED with the version ("Your client is too old…"); a replica not finalized
//! (still being written or recovered) ERROR_UNSUPPORTED with the version, so the client stops
//! asking for this block only; a replica not found or whose files cannot be opened ERROR with
//! the reason. A shared-memory slot in the request (`short_circuit_shm`) is registered for the
//! replica, so invalidating the replica clears the slot's VALID bit; a slot that cannot be
//! registered (unknown segment, in use, not marked valid) is ERROR, as in Hadoop. The replica is
//! looked at again after the slot is registered: one removed or changed in between has its slot
//! released and the request answered as for a replica not found. Receipt verification is not
//! used: the descriptors' byte says DO_NOT_USE_RECEIPT_VERIFICATION.

use std::os::fd::AsFd;
use std::sync::Arc;

use rhdfs_proto::hdfs::{
    BlockOpResponseProto, OpRequestShortCircuitAccessProto, ShortCircuitFdResponse, Status,
};
use rhdfs_transfer::short_circuit::{CURRENT_BLOCK_FORMAT_VERSION, send_fds};
use rhdfs_transfer::write_delimited;
use tokio::net::UnixStream;

use super::{Next, XceiverContext, XceiverError, blocking};
use crate::reader::ReplicaReader;
use crate::replica::ReplicaState;

/// Answers one request on `sock`.
pub(crate) async fn request_short_circuit_fds(
    ctx: &Arc<XceiverContext>,
    sock: &mut UnixStream,
    req: OpRequestShortCircuitAccessProto,
) -> Result<Next, XceiverError> {
    let block = req.header.block.clone();
    let id = block.block_id;
    let refused = |status: Status, message: String, version: bool| BlockOpResponseProto {
        status: status as i32,
        message: Some(message),
        short_circuit_access_version: version.then_some(CURRENT_BLOCK_FORMAT_VERSION),
        ..Default::default()
    };
    if req.max_version < CURRENT_BLOCK_FORMAT_VERSION {
        let msg = format!(
            "Your client is too old to read this block!  Its format version is \
             {CURRENT_BLOCK_FORMAT_VERSION}, but the highest format version you can read is {}",
            req.max_version
        );
        write_delimited(sock, &refused(Status::ErrorUnsupported, msg, true)).await?;
        return Ok(Next::Continue);
    }
    let (ds, b) = (ctx.dataset.clone(), block.clone());
    let opened =
        blocking(move || ReplicaReader::open(&ds, &b.pool_id, b.block_id, b.generation_stamp))
            .await?;
    let reader = match opened {
        Ok(r) if r.info().state == ReplicaState::Finalized => r,
        Ok(r) => {
            let msg = format!(
                "replica blk_{id}_{} is {:?}, not finalized: short-circuit reads need a \
                 finalized replica",
                r.info().gs,
                r.info().state
            );
            tracing::debug!(id, %msg, "REQUEST_SHORT_CIRCUIT_FDS refused");
            write_delimited(sock, &refused(Status::ErrorUnsupported, msg, true)).await?;
            return Ok(Next::Continue);
        }
        Err(e) => {
            let msg = match e {
                crate::error::StorageError::ReplicaNotFound(_) => format!(
                    "Replica not found for {}:blk_{id}_{}",
                    block.pool_id, block.generation_stamp
                ),
                other => other.to_string(),
            };
            tracing::info!(id, %msg, "REQUEST_SHORT_CIRCUIT_FDS failed");
            write_delimited(sock, &refused(Status::Error, msg, false)).await?;
            return Ok(Next::Continue);
        }
    };
    if let Some(slot) = &req.slot_id {
        let registry = ctx.dataset.short_circuit_registry();
        let registered = match super::short_circuit_shm::slot_of(slot) {
            Some((shm, idx)) => registry
                .register_slot(shm, idx, &block.pool_id, id)
                .map(|()| (shm, idx)),
            None => Err(format!("bad slot index {}", slot.slot_idx)),
        };
        let (shm, idx) = match registered {
            Ok(r) => r,
            Err(msg) => {
                tracing::info!(id, %msg, "REQUEST_SHORT_CIRCUIT_FDS: slot refused");
                write_delimited(sock, &refused(Status::Error, msg, false)).await?;
                return Ok(Next::Continue);
            }
        };
        // An invalidation before the registration found no slot to clear: look again.
        let info = reader.info();
        let still = ctx
            .dataset
            .get(&block.pool_id, id)
            .is_some_and(|r| r.state == ReplicaState::Finalized && r.gs == info.gs);
        if !still {
            let _ = registry.unregister_slot(shm, idx);
            let msg = format!(
                "Replica not found for {}:blk_{id}_{}",
                block.pool_id, block.generation_stamp
            );
            write_delimited(sock, &refused(Status::Error, msg, false)).await?;
            return Ok(Next::Continue);
        }
    }
    let (block_file, meta_file) = reader.into_files();
    let ok = BlockOpResponseProto {
        status: Status::Success as i32,
        short_circuit_access_version: Some(CURRENT_BLOCK_FORMAT_VERSION),
        ..Default::default()
    };
    write_delimited(sock, &ok).await?;
    let byte = ShortCircuitFdResponse::DoNotUseReceiptVerification as u8;
    send_fds(sock, &[block_file.as_fd(), meta_file.as_fd()], byte).await?;
    tracing::debug!(id, "REQUEST_SHORT_CIRCUIT_FDS: descriptors passed");
    Ok(Next::Continue)
}
