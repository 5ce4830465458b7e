//! Replica state transitions: create (RBW, TEMPORARY), append, the recovery stages, and the
//! GS bump / move to rbw that they share. Blocking file I/O.

use std::fs;
use std::sync::Arc;

use super::{Dataset, bad};
use crate::checksum::ChecksumSpec;
use crate::error::StorageError;
use crate::replica::{ReplicaInfo, ReplicaState};
use crate::writer::ReplicaWriter;

impl Dataset {
    /// New RBW replica for PIPELINE_SETUP_CREATE.
    pub fn create_rbw(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        spec: ChecksumSpec,
        expected_len: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        self.create(bpid, id, gs, spec, expected_len, ReplicaState::Rbw)
    }

    /// New TEMPORARY replica for a DN-to-DN transfer; replaces an older unfinished copy.
    pub fn create_temporary(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        spec: ChecksumSpec,
        expected_len: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        if let Some(old) = self.get(bpid, id) {
            // A replica under recovery belongs to the recovery: a copy does not replace it.
            let stale = old.gs < gs
                && !matches!(old.state, ReplicaState::Finalized | ReplicaState::Rur)
                || old.state == ReplicaState::Temporary
                || old.state == ReplicaState::Rwr;
            if !stale {
                if old.state == ReplicaState::Finalized
                    && old.gs == gs
                    && old.num_bytes == expected_len
                {
                    // The NameNode sent a copy here because it does not count this replica
                    // (a RECEIVED lost with a killed process, say): tell it again, so it
                    // counts the replica and drops the pending copy now rather than after
                    // the pending timeout or the next full report.
                    self.notify(bpid, &old, crate::notify::BlockStatus::Received);
                }
                return Err(StorageError::ReplicaExists {
                    id,
                    state: old.state.to_string(),
                });
            }
            self.remove_files_now(bpid, id)?;
        }
        self.create(bpid, id, gs, spec, expected_len, ReplicaState::Temporary)
    }

    fn create(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        spec: ChecksumSpec,
        expected_len: u64,
        state: ReplicaState,
    ) -> Result<ReplicaWriter, StorageError> {
        self.add_block_pool(bpid)?;
        let (info, epoch) = {
            let mut inner = self.inner.lock();
            if let Some(old) = inner.pools.get(bpid).and_then(|m| m.get(&id)) {
                return Err(StorageError::ReplicaExists {
                    id,
                    state: old.state.to_string(),
                });
            }
            let volume = self.choose_volume(&mut inner, expected_len)?;
            inner.next_epoch += 1;
            let epoch = inner.next_epoch;
            let info = ReplicaInfo {
                id,
                gs,
                state,
                num_bytes: 0,
                volume,
                checksum: spec,
                writer_epoch: epoch,
                recovery: None,
            };
            inner
                .pools
                .entry(bpid.to_string())
                .or_default()
                .insert(id, info.clone());
            (info, epoch)
        };
        let block = self.block_path(bpid, &info);
        let metap = self.meta_path(bpid, &info);
        let created = self.attach_writer(bpid, &info).and_then(|guard| {
            ReplicaWriter::create(self.clone(), bpid, &info, &block, &metap, guard)
        });
        match created {
            Ok(w) => Ok(w),
            Err(e) => {
                self.remove_if_epoch(bpid, id, epoch);
                Err(e)
            }
        }
    }

    fn remove_if_epoch(&self, bpid: &str, id: u64, epoch: u64) {
        let mut inner = self.inner.lock();
        if let Some(m) = inner.pools.get_mut(bpid)
            && m.get(&id).is_some_and(|r| r.writer_epoch == epoch)
        {
            m.remove(&id);
            inner.guards.remove(&epoch);
        }
    }

    /// PIPELINE_SETUP_APPEND: the finalized replica moves to rbw with the new GS.
    pub fn append(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        new_gs: u64,
        expected_len: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        self.reopen(bpid, id, new_gs, None, |r| {
            if r.state != ReplicaState::Finalized {
                return Err(bad(
                    id,
                    format!("cannot append to a replica in state {}", r.state),
                ));
            }
            check_gs(r, gs, new_gs)?;
            if r.num_bytes != expected_len {
                return Err(bad(
                    id,
                    format!(
                        "length {} differs from the expected {expected_len}",
                        r.num_bytes
                    ),
                ));
            }
            Ok(())
        })
    }

    /// PIPELINE_SETUP_APPEND_RECOVERY: a finalized or RBW replica is reopened with the new GS.
    pub fn recover_append(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        new_gs: u64,
        expected_len: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        self.reopen(bpid, id, new_gs, None, |r| {
            if !matches!(r.state, ReplicaState::Finalized | ReplicaState::Rbw) {
                return Err(bad(
                    id,
                    format!("cannot recover append in state {}", r.state),
                ));
            }
            check_gs(r, gs, new_gs)?;
            if r.num_bytes < expected_len {
                return Err(bad(
                    id,
                    format!(
                        "length {} is less than the expected {expected_len}",
                        r.num_bytes
                    ),
                ));
            }
            Ok(())
        })
    }

    /// PIPELINE_SETUP_STREAMING_RECOVERY: an RBW replica truncated to the acked length
    /// (`min_bytes`), new GS.
    pub fn recover_rbw(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        new_gs: u64,
        min_bytes: u64,
        max_bytes: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        self.reopen(bpid, id, new_gs, Some(min_bytes), |r| {
            if !matches!(
                r.state,
                ReplicaState::Rbw | ReplicaState::Temporary | ReplicaState::Rwr
            ) {
                return Err(bad(
                    id,
                    format!("cannot recover a replica in state {}", r.state),
                ));
            }
            check_gs(r, gs, new_gs)?;
            if r.num_bytes < min_bytes {
                return Err(bad(
                    id,
                    format!(
                        "has {} bytes, fewer than the acked {min_bytes} (max {max_bytes})",
                        r.num_bytes
                    ),
                ));
            }
            Ok(())
        })
    }

    /// PIPELINE_CLOSE_RECOVERY: bump the GS of a finalized or RBW replica and finalize it.
    pub fn recover_close(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        new_gs: u64,
        expected_len: u64,
    ) -> Result<ReplicaInfo, StorageError> {
        let check = |r: &ReplicaInfo| {
            if !matches!(r.state, ReplicaState::Finalized | ReplicaState::Rbw) {
                return Err(bad(
                    id,
                    format!("cannot recover close in state {}", r.state),
                ));
            }
            check_gs(r, gs, new_gs)?;
            if r.num_bytes < expected_len {
                return Err(bad(
                    id,
                    format!(
                        "length {} is less than the expected {expected_len}",
                        r.num_bytes
                    ),
                ));
            }
            Ok(())
        };
        let (finalized, info) = self.transition(bpid, id, |r| {
            check(r)?;
            if r.state != ReplicaState::Finalized {
                return Ok((None, false));
            }
            // A finalized replica only takes the new GS (its meta file is renamed).
            if new_gs == r.gs {
                return Ok((None, true));
            }
            let mut n = r.clone();
            n.gs = new_gs;
            self.metadata_op(r.volume, || {
                fs::rename(self.meta_path(bpid, r), self.meta_path(bpid, &n))
            })?;
            Ok((Some(n), true))
        })?;
        if finalized {
            return match info {
                Some(n) => Ok(n),
                None => self.get(bpid, id).ok_or(StorageError::ReplicaNotFound(id)),
            };
        }
        let truncate = (expected_len > 0).then_some(expected_len);
        let w = self.reopen(bpid, id, new_gs, truncate, check)?;
        w.finalize()
    }

    /// Moves the replica to rbw with `new_gs`, optionally truncated, and opens a writer on it,
    /// if `check` accepts it. The previous writer, if any, is stopped.
    fn reopen(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        new_gs: u64,
        truncate_to: Option<u64>,
        check: impl Fn(&ReplicaInfo) -> Result<(), StorageError>,
    ) -> Result<ReplicaWriter, StorageError> {
        let (paths, n) = self.transition(bpid, id, |r| {
            check(r)?;
            let old_block = self.block_path(bpid, r);
            let old_meta = self.meta_path(bpid, r);
            let mut n = r.clone();
            n.gs = new_gs;
            if n.state != ReplicaState::Temporary {
                n.state = ReplicaState::Rbw;
            }
            let new_block = self.block_path(bpid, &n);
            let new_meta = self.meta_path(bpid, &n);
            self.rename_replica_files(r.volume, (&old_block, &old_meta), (&new_block, &new_meta))?;
            Ok((Some(n), (new_block, new_meta)))
        })?;
        let n = n.ok_or(StorageError::ReplicaNotFound(id))?;
        let (new_block, new_meta) = paths;
        let guard = self.attach_writer(bpid, &n)?;
        let mut w = ReplicaWriter::open(self.clone(), bpid, &n, &new_block, &new_meta, guard)?;
        if let Some(len) = truncate_to
            && len < n.num_bytes
        {
            w.truncate(len)?;
        }
        Ok(w)
    }
}

fn check_gs(r: &ReplicaInfo, gs: u64, new_gs: u64) -> Result<(), StorageError> {
    if new_gs < r.gs {
        return Err(bad(
            r.id,
            format!(
                "new generation stamp {new_gs} is older than the replica's {}",
                r.gs
            ),
        ));
    }
    if gs > r.gs {
        return Err(bad(
            r.id,
            format!(
                "replica generation stamp {} is older than the requested {gs}",
                r.gs
            ),
        ));
    }
    Ok(())
}
