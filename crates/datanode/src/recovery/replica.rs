//! InterDatanodeProtocol's two steps on the local dataset. Both block on disk I/O: call
//! them from a blocking thread.

use std::sync::Arc;

use crate::dataset::Dataset;
use crate::error::StorageError;
use crate::replica::{ReplicaInfo, ReplicaState};

use super::sync::ReplicaReport;

/// initReplicaRecovery: the local replica of `id` as recovery `recovery_id` sees it, or
/// None when there is none. A replica older than the NameNode's `block_gs`, or a recovery
/// id not newer than the replica's GS (an older recovery), is refused.
pub fn init_replica_recovery(
    ds: &Arc<Dataset>,
    bpid: &str,
    id: u64,
    block_gs: u64,
    recovery_id: u64,
) -> Result<Option<ReplicaReport>, StorageError> {
    let Some(r) = ds.get(bpid, id) else {
        return Ok(None);
    };
    if r.gs < block_gs {
        return Err(StorageError::BadReplicaState {
            id,
            msg: format!(
                "replica generation stamp {} is older than the block's {block_gs}",
                r.gs
            ),
        });
    }
    if recovery_id <= r.gs {
        return Err(StorageError::BadReplicaState {
            id,
            msg: format!(
                "recovery id {recovery_id} is not newer than the replica's generation stamp {}",
                r.gs
            ),
        });
    }
    let state = match r.state {
        // A replica left by an earlier recovery reports the state it had.
        ReplicaState::Rur => ReplicaState::Rwr,
        s => s,
    };
    Ok(Some(ReplicaReport {
        state,
        gs: r.gs,
        len: r.num_bytes,
    }))
}

/// updateReplicaUnderRecovery: the replica takes generation stamp `recovery_id` and
/// length `new_len` and is finalized (a writer still attached is superseded).
pub fn update_replica_under_recovery(
    ds: &Arc<Dataset>,
    bpid: &str,
    id: u64,
    recovery_id: u64,
    new_len: u64,
) -> Result<ReplicaInfo, StorageError> {
    let r = ds.get(bpid, id).ok_or(StorageError::ReplicaNotFound(id))?;
    match r.state {
        ReplicaState::Finalized => {
            if r.num_bytes != new_len {
                return Err(StorageError::BadReplicaState {
                    id,
                    msg: format!(
                        "finalized replica has length {}, not the recovered {new_len}",
                        r.num_bytes
                    ),
                });
            }
            ds.recover_close(bpid, id, r.gs, recovery_id, new_len)
        }
        _ => {
            if r.num_bytes < new_len {
                return Err(StorageError::BadReplicaState {
                    id,
                    msg: format!(
                        "replica has {} bytes, fewer than the recovered length {new_len}",
                        r.num_bytes
                    ),
                });
            }
            ds.recover_rbw(bpid, id, r.gs, recovery_id, new_len, new_len)?
                .finalize()
        }
    }
}
