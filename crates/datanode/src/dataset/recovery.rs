//! Block recovery's two transitions of a replica (Hadoop's FsDatasetImpl
//! initReplicaRecovery / updateReplicaUnderRecovery): a FINALIZED, RBW or RWR replica becomes
//! RUR, owned by one recovery id, its writer stopped; then the recovery that owns it cuts it to
//! the agreed length, gives it the recovery id as generation stamp and finalizes it.
//! Blocking file I/O.

use std::fs::OpenOptions;

use super::{Dataset, bad};
use crate::error::StorageError;
use crate::replica::{ReplicaInfo, ReplicaState, UnderRecovery};
use crate::scan::checksummed_length;
use crate::writer::truncate_files;

impl Dataset {
    /// initReplicaRecovery: replica `id` joins recovery `recovery_id` of a block whose
    /// generation stamp at the NameNode is `block_gs`. Returns None when there is no replica,
    /// else the RUR record (`original_state()`, `gs` and `num_bytes` are what the primary is
    /// told). Refused: a TEMPORARY replica (its writer stopped first), a replica older than `block_gs`, a recovery id not
    /// newer than the replica's GS, and (RecoveryInProgress) a replica already owned by a
    /// recovery with an id at least `recovery_id`; a replica under an older recovery is taken
    /// over. A writer still attached is stopped: it waits out a write in flight, and its next
    /// write or finalize fails. The files stay where they are; an RBW/RWR replica's length is
    /// what its checksums on disk vouch for.
    pub fn init_replica_recovery(
        &self,
        bpid: &str,
        id: u64,
        block_gs: u64,
        recovery_id: u64,
    ) -> Result<Option<ReplicaInfo>, StorageError> {
        // A TEMPORARY replica (a DataNode-to-DataNode copy) is never recovered, but its
        // writer is stopped first, as Hadoop's initReplicaRecovery does: the copy of a
        // block under recovery is not left running.
        match self.stop_writer_if(bpid, id, |r| r.state == ReplicaState::Temporary) {
            Ok(true) => {
                tracing::info!(
                    id,
                    "initReplicaRecovery: writer of the TEMPORARY replica stopped"
                );
                return Err(bad(
                    id,
                    "cannot recover a replica in state TEMPORARY".into(),
                ));
            }
            Ok(false) => {}
            Err(StorageError::ReplicaNotFound(_)) => return Ok(None),
            Err(e) => return Err(e),
        }
        let done = self.transition(bpid, id, |r| {
            if r.gs < block_gs {
                return Err(bad(
                    id,
                    format!(
                        "replica generation stamp {} is older than the block's {block_gs}",
                        r.gs
                    ),
                ));
            }
            if r.gs >= recovery_id {
                return Err(bad(
                    id,
                    format!(
                        "replica generation stamp {} is not older than the recovery id {recovery_id}",
                        r.gs
                    ),
                ));
            }
            let mut n = r.clone();
            match r.state {
                // Became TEMPORARY between the two steps (a new copy): refused alike.
                ReplicaState::Temporary => {
                    return Err(bad(
                        id,
                        "cannot recover a replica in state TEMPORARY".into(),
                    ));
                }
                ReplicaState::Rur => {
                    let owner = r.recovery_id().unwrap_or(0);
                    if owner >= recovery_id {
                        return Err(StorageError::RecoveryInProgress {
                            id,
                            msg: format!(
                                "recovery id {owner} of the replica under recovery is not older than {recovery_id}"
                            ),
                        });
                    }
                    tracing::info!(
                        id,
                        from = owner,
                        to = recovery_id,
                        "initReplicaRecovery: recovery id of the replica under recovery updated"
                    );
                    n.recovery = Some(UnderRecovery {
                        original: r.original_state(),
                        recovery_id,
                    });
                }
                ReplicaState::Finalized | ReplicaState::Rbw | ReplicaState::Rwr => {
                    if r.state != ReplicaState::Finalized {
                        let (_, len) =
                            checksummed_length(&self.block_path(bpid, r), &self.meta_path(bpid, r))?;
                        n.num_bytes = len;
                    }
                    n.state = ReplicaState::Rur;
                    n.recovery = Some(UnderRecovery {
                        original: r.state,
                        recovery_id,
                    });
                    tracing::info!(
                        id,
                        recovery_id,
                        from = %r.state,
                        len = n.num_bytes,
                        "initReplicaRecovery: replica is now RUR"
                    );
                }
            }
            Ok((Some(n), ()))
        });
        match done {
            Ok((_, info)) => Ok(info),
            Err(StorageError::ReplicaNotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// updateReplicaUnderRecovery: the RUR replica owned by `recovery_id` is cut to `new_len`
    /// (the last chunk's CRC fixed in the meta file), takes generation stamp `recovery_id`
    /// and is finalized (its files move to finalized/). `reported_len`, when given, is the
    /// length the replica reported to initReplicaRecovery, which must still be its length.
    pub fn update_replica_under_recovery(
        &self,
        bpid: &str,
        id: u64,
        recovery_id: u64,
        reported_len: Option<u64>,
        new_len: u64,
    ) -> Result<ReplicaInfo, StorageError> {
        let (_, info) = self.transition(bpid, id, |r| {
            if r.state != ReplicaState::Rur {
                return Err(bad(
                    id,
                    format!("replica is {}, not RUR (initReplicaRecovery first)", r.state),
                ));
            }
            let owner = r.recovery_id().unwrap_or(0);
            if owner != recovery_id {
                return Err(bad(
                    id,
                    format!(
                        "recovery id {owner} of the replica under recovery differs from {recovery_id}"
                    ),
                ));
            }
            if let Some(reported) = reported_len
                && reported != r.num_bytes
            {
                return Err(bad(
                    id,
                    format!(
                        "replica under recovery has {} bytes, not the {reported} it reported",
                        r.num_bytes
                    ),
                ));
            }
            if r.num_bytes < new_len {
                return Err(bad(
                    id,
                    format!(
                        "replica under recovery has {} bytes, fewer than the recovered length {new_len}",
                        r.num_bytes
                    ),
                ));
            }
            let (old_block, old_meta) = (self.block_path(bpid, r), self.meta_path(bpid, r));
            let original = r.original_state();
            if original != ReplicaState::Finalized || new_len < r.num_bytes {
                let (block, meta) = self.metadata_op(r.volume, || {
                    let block = OpenOptions::new().read(true).write(true).open(&old_block)?;
                    let meta = OpenOptions::new().read(true).write(true).open(&old_meta)?;
                    Ok::<_, std::io::Error>((block, meta))
                })?;
                let on_disk = block.metadata()?.len();
                if on_disk < new_len {
                    return Err(bad(
                        id,
                        format!("block file has {on_disk} bytes, fewer than {new_len}"),
                    ));
                }
                truncate_files(&block, &meta, &r.checksum, new_len)?;
                block.sync_data()?;
                meta.sync_data()?;
            }
            let mut n = r.clone();
            n.state = ReplicaState::Finalized;
            n.recovery = None;
            n.gs = recovery_id;
            n.num_bytes = new_len;
            let (new_block, new_meta) = (self.block_path(bpid, &n), self.meta_path(bpid, &n));
            self.rename_replica_files(r.volume, (&old_block, &old_meta), (&new_block, &new_meta))?;
            tracing::info!(
                id,
                recovery_id,
                len = new_len,
                from = %original,
                "updateReplicaUnderRecovery: replica finalized"
            );
            Ok((Some(n), ()))
        })?;
        info.ok_or(StorageError::ReplicaNotFound(id))
    }
}
