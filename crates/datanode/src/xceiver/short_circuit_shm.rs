//! The shared-memory slot protocol on the domain socket (Hadoop's DataXceiver
//! requestShortCircuitShm / releaseShortCircuitFds, `crate::short_circuit_registry`).
//!
//! REQUEST_SHORT_CIRCUIT_SHM (op 89): a new segment, its id in a SUCCESS answer and its
//! descriptor after it as SCM_RIGHTS on a zero byte. The connection then belongs to the
//! segment: nothing more is read from it as ops, and when the client closes it (or the server
//! stops) the segment and all its slots are forgotten. With no directory in
//! `dfs.datanode.shared.file.descriptor.paths` the answer is ERROR_UNSUPPORTED (the client reads
//! without slots); when no segment can be created there, ERROR with the reason.
//!
//! RELEASE_SHORT_CIRCUIT_FDS (op 88): the slot is unregistered (SUCCESS), or ERROR naming why
//! (unknown segment, slot not registered).

use std::sync::Arc;

use rhdfs_proto::hdfs::{
    ReleaseShortCircuitAccessRequestProto, ReleaseShortCircuitAccessResponseProto,
    ShortCircuitShmIdProto, ShortCircuitShmRequestProto, ShortCircuitShmResponseProto,
    ShortCircuitShmSlotProto, Status,
};
use rhdfs_transfer::shm::ShmId;
use rhdfs_transfer::short_circuit::send_fds;
use rhdfs_transfer::write_delimited;
use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;

use super::{Next, XceiverContext, XceiverError, blocking};
use crate::short_circuit_registry::ShortCircuitRegistry;

/// The segment of a connection: forgotten when the connection's task ends, however it ends.
struct Lease {
    registry: Arc<ShortCircuitRegistry>,
    id: ShmId,
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.registry.remove_segment(self.id);
        tracing::debug!(id = ?self.id, "short-circuit shared memory segment closed");
    }
}

/// Answers REQUEST_SHORT_CIRCUIT_SHM; after a grant, holds the connection until it closes.
pub(crate) async fn request_shm(
    ctx: &Arc<XceiverContext>,
    sock: &mut UnixStream,
    req: ShortCircuitShmRequestProto,
) -> Result<Next, XceiverError> {
    let answer =
        |status: Status, error: Option<String>, id: Option<ShmId>| ShortCircuitShmResponseProto {
            status: status as i32,
            error,
            id: id.map(|i| ShortCircuitShmIdProto { hi: i.hi, lo: i.lo }),
        };
    if ctx.config.shm_paths.is_empty() {
        let msg = "This datanode has not been configured to support short-circuit shared \
                   memory segments.";
        write_delimited(
            sock,
            &answer(Status::ErrorUnsupported, Some(msg.into()), None),
        )
        .await?;
        return Ok(Next::Continue);
    }
    let registry = ctx.dataset.short_circuit_registry().clone();
    let (reg, dirs, client) = (
        registry.clone(),
        ctx.config.shm_paths.clone(),
        req.client_name.clone(),
    );
    let created = blocking(move || reg.create_segment(&client, &dirs)).await?;
    let (id, segment) = match created {
        Ok(c) => c,
        Err(e) => {
            let msg = format!("Failed to create a shared memory segment: {e}");
            tracing::warn!(client = %req.client_name, "{msg}");
            write_delimited(sock, &answer(Status::Error, Some(msg), None)).await?;
            return Ok(Next::Continue);
        }
    };
    let _lease = Lease { registry, id };
    write_delimited(sock, &answer(Status::Success, None, Some(id))).await?;
    send_fds(sock, &[std::os::fd::AsFd::as_fd(segment.fd())], 0).await?;
    drop(segment);
    tracing::debug!(?id, client = %req.client_name, "short-circuit shared memory segment granted");
    // The client sends nothing more here; its close (EOF), an error or a stray byte ends the
    // segment.
    let mut byte = [0u8; 1];
    let _ = sock.read(&mut byte).await;
    Ok(Next::Close)
}

/// The (segment, slot index) a slot proto names, if the index is not negative.
pub(crate) fn slot_of(s: &ShortCircuitShmSlotProto) -> Option<(ShmId, usize)> {
    let idx = usize::try_from(s.slot_idx).ok()?;
    Some((
        ShmId {
            hi: s.shm_id.hi,
            lo: s.shm_id.lo,
        },
        idx,
    ))
}

/// Answers RELEASE_SHORT_CIRCUIT_FDS.
pub(crate) async fn release(
    ctx: &Arc<XceiverContext>,
    sock: &mut UnixStream,
    req: ReleaseShortCircuitAccessRequestProto,
) -> Result<Next, XceiverError> {
    let registry = ctx.dataset.short_circuit_registry();
    let done = match slot_of(&req.slot_id) {
        Some((id, idx)) => registry.unregister_slot(id, idx),
        None => Err(format!("bad slot index {}", req.slot_id.slot_idx)),
    };
    let resp = match done {
        Ok(()) => ReleaseShortCircuitAccessResponseProto {
            status: Status::Success as i32,
            error: None,
        },
        Err(e) => {
            tracing::debug!(error = %e, "RELEASE_SHORT_CIRCUIT_FDS refused");
            ReleaseShortCircuitAccessResponseProto {
                status: Status::Error as i32,
                error: Some(e),
            }
        }
    };
    write_delimited(sock, &resp).await?;
    Ok(Next::Continue)
}
