//! InterDatanodeProtocol's two steps on the local dataset. Both block on disk I/O: call
//! them from a blocking thread. The replica's state changes are the dataset's
//! ([`Dataset::init_replica_recovery`], [`Dataset::update_replica_under_recovery`]).

use std::sync::Arc;

use crate::dataset::Dataset;
use crate::error::StorageError;
use crate::notify::BlockStatus;
use crate::replica::ReplicaInfo;

use super::sync::ReplicaReport;

/// initReplicaRecovery: the local replica of `id` moves to RUR for recovery `recovery_id`
/// (its writer, if any, stopped); None when there is none. The primary is told the state
/// the replica had (FINALIZED, RBW or RWR), its GS and its length. A replica older than the
/// NameNode's `block_gs`, a recovery id not newer than the replica's GS, a TEMPORARY replica
/// and a replica owned by a recovery at least as new are refused.
pub fn init_replica_recovery(
    ds: &Arc<Dataset>,
    bpid: &str,
    id: u64,
    block_gs: u64,
    recovery_id: u64,
) -> Result<Option<ReplicaReport>, StorageError> {
    let rur = ds.init_replica_recovery(bpid, id, block_gs, recovery_id)?;
    Ok(rur.map(|r| ReplicaReport {
        state: r.original_state(),
        gs: r.gs,
        len: r.num_bytes,
    }))
}

/// updateReplicaUnderRecovery: the RUR replica owned by `recovery_id` takes generation stamp
/// `recovery_id` and length `new_len` and is finalized; the NameNode hears of it as
/// RECEIVED_BLOCK in the next incremental report. `reported_len` is the length the replica
/// gave initReplicaRecovery (from the request's block), checked when present.
pub fn update_replica_under_recovery(
    ds: &Arc<Dataset>,
    bpid: &str,
    id: u64,
    recovery_id: u64,
    reported_len: Option<u64>,
    new_len: u64,
) -> Result<ReplicaInfo, StorageError> {
    let info = ds.update_replica_under_recovery(bpid, id, recovery_id, reported_len, new_len)?;
    ds.notify(bpid, &info, BlockStatus::Received);
    Ok(info)
}
