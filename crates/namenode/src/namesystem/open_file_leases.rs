//! Open files and their leases, namesystem side: recoverLease, the lease monitor's pass
//! over leases past the hard limit, and listOpenFiles.
//!
//! A file is closed at once when no block recovery is needed: every block COMPLETE, or
//! COMMITTED with its minimum replicas, or the last block empty and never written.
//! Otherwise a block recovery of the last block is started (`lease_recovery.rs`), the
//! lease passes to the recoverer (recoverLease's caller, or `HDFS_NameNode` for the
//! monitor), recoverLease answers false, and the file closes when the primary DataNode's
//! commitBlockSynchronization arrives.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rhdfs_blockmanager::views::{ReplicaStatus, VIEW_CHUNK};
use rhdfs_blockmanager::{BlockUcState, ReplicaState};

use super::{Applied, Effects, Namesystem};
use crate::error::FsResult;
use crate::fsdir::FsPath;
use crate::fsdir::permission::Caller;
use crate::leases::NAMENODE_LEASE_HOLDER;
use crate::namespace::{OpenFile, OpenFileEntry};

impl Namesystem {
    /// recoverLease by client `client_name`: true when the file is (now) closed. When
    /// the last block needs recovery the lease passes to the caller, as in Hadoop, so the
    /// writer that was cut off can no longer add to the file.
    pub async fn recover_lease(
        &self,
        caller: &Caller,
        src: &str,
        client_name: &str,
    ) -> FsResult<bool> {
        match self.with_ns(|ns| ns.recover_lease_prepare(caller, src))? {
            None => Ok(true),
            Some(of) => {
                let holder = (!client_name.is_empty()).then_some(client_name);
                self.release(&of, holder).await
            }
        }
    }

    /// Releases the lease of the open file at `src`, if its blocks allow it.
    pub(crate) async fn release_path(&self, src: &str) -> FsResult<bool> {
        let path = FsPath::parse(src)?;
        let of = self.with_ns(|ns| {
            let id = ns.dir().resolve(&path).last()?;
            ns.open_file_by_id(id)
        });
        match of {
            Some(of) => self.release(&of, None).await,
            None => Ok(false),
        }
    }

    /// Closes `of` if no block recovery is needed; true when closed. Otherwise a block
    /// recovery is started (or left running) and the lease passes to `recovery_holder`
    /// when one is given (Hadoop's internalReleaseLease and reassignLease).
    pub(crate) async fn release(
        &self,
        of: &OpenFile,
        recovery_holder: Option<&str>,
    ) -> FsResult<bool> {
        if of.truncate_last_to.is_some() {
            // A truncate inside the last block: only its recovery closes the file.
            self.start_truncate_recovery(of)?;
            if let Some(holder) = recovery_holder {
                let now = self.now();
                self.with_ns(|ns| ns.reassign_lease(of, holder, now))?;
            }
            return Ok(false);
        }
        let n = of.blocks.len();
        for b in &of.blocks[..n.saturating_sub(1)] {
            if !self.bm.try_complete_block(b.id) {
                return Ok(false);
            }
        }
        let now = self.now();
        let Some(last) = of.blocks.last() else {
            return self.with_ns(|ns| ns.release_lease(of, None, false, now));
        };
        let state = self.bm.get_block(last.id).map(|(_, s)| s);
        let drop_last = match state {
            Some(BlockUcState::Complete) => false,
            Some(BlockUcState::Committed) => {
                if !self.bm.try_complete_block(last.id) {
                    return Ok(false);
                }
                false
            }
            Some(BlockUcState::UnderConstruction | BlockUcState::UnderRecovery) | None => {
                if last.num_bytes != 0
                    || self
                        .bm
                        .wait_for_min_replication(last.id, std::time::Duration::ZERO)
                        .await
                {
                    // Logged once per recovery started: the lease monitor comes back to
                    // files held by HDFS_NameNode at every pass while one runs.
                    if self.start_block_recovery(of, last)? {
                        tracing::info!(
                            file = of.file,
                            block = last.id,
                            "lease of {} not released: its last block needs block recovery",
                            of.holder
                        );
                    } else {
                        tracing::debug!(
                            file = of.file,
                            block = last.id,
                            "lease of {} not released: block recovery in progress",
                            of.holder
                        );
                    }
                    if let Some(holder) = recovery_holder {
                        self.with_ns(|ns| ns.reassign_lease(of, holder, now))?;
                    }
                    return Ok(false);
                }
                true
            }
        };
        let closed = self.with_ns(|ns| ns.release_lease(of, None, drop_last, now))?;
        if closed && drop_last {
            // The empty last block leaves the blocks map once the close is durable.
            let applied = Applied::new("release_lease", (), Effects::Abandon(last.id));
            self.commit(applied).await?;
        }
        if closed {
            tracing::info!(file = of.file, holder = %of.holder, "lease released");
        }
        Ok(closed)
    }

    /// One pass of the lease monitor: leases past the hard limit are released where
    /// possible (nothing happens in safe mode, as in Hadoop's LeaseManager.Monitor).
    /// Returns the number of files closed.
    pub async fn check_leases(&self) -> usize {
        let mono = self.now().mono;
        let expired = self.with_ns(|ns| {
            if ns.in_safe_mode() {
                Vec::new()
            } else {
                ns.hard_expired_leases(mono)
            }
        });
        let mut closed = 0;
        for (_, files) in &expired {
            for &id in files {
                let Some(of) = self.with_ns(|ns| ns.open_file_by_id(id)) else {
                    continue;
                };
                match self.release(&of, Some(NAMENODE_LEASE_HOLDER)).await {
                    Ok(true) => closed += 1,
                    Ok(false) => {}
                    Err(e) => tracing::warn!(file = id, "lease release failed: {e}"),
                }
            }
        }
        // Closes and recovery ids become durable (Hadoop's monitor syncs the edit log too).
        if !expired.is_empty()
            && let Err(e) = self.sync_edits().await
        {
            tracing::warn!("edit log sync after the lease check failed: {e}");
        }
        closed
    }

    /// listOpenFiles: files open for write with an inode id above `after` under `path`, at
    /// most `dfs.namenode.list.openfiles.num.responses` of them, and whether more follow.
    /// With `blocking_decommission` only files holding up a decommission count (see
    /// `blocks_decommission`). The namespace lock is taken once per page of candidates.
    pub fn list_open_files(
        &self,
        after: u64,
        path: &str,
        blocking_decommission: bool,
    ) -> (Vec<OpenFileEntry>, bool) {
        let limit = self.settings.list_open_files_batch.max(1);
        if !blocking_decommission {
            return self.with_ns(|ns| ns.open_files_after(after, path, limit));
        }
        let mut out = Vec::new();
        let mut cursor = after;
        loop {
            let (page, more) = self.with_ns(|ns| ns.open_files_after(cursor, path, limit));
            let Some(last) = page.last().map(|e| e.id) else {
                return (out, false);
            };
            out.extend(
                page.into_iter()
                    .filter(|e| self.blocks_decommission(&e.blocks)),
            );
            if out.len() >= limit {
                out.truncate(limit);
                return (out, true);
            }
            if !more {
                return (out, false);
            }
            cursor = last;
        }
    }

    /// Hadoop's test for an open file in a decommissioning node's way: one of its blocks
    /// has a finalized replica there and is not yet sufficiently replicated elsewhere
    /// (live replicas below the file's replication, or, for the last block still being
    /// written, below the minimum replication).
    fn blocks_decommission(&self, blocks: &[u64]) -> bool {
        let min = self.bm.config().min_replication;
        let last = blocks.last().copied();
        blocks.chunks(VIEW_CHUNK).any(|ids| {
            self.bm.block_views(ids).iter().flatten().any(|v| {
                let there = v.replicas.iter().any(|r| {
                    r.status == ReplicaStatus::Decommissioning && r.state == ReplicaState::Finalized
                });
                let sufficient = v.live >= usize::from(v.replication)
                    || (Some(v.block.id) == last
                        && v.state != BlockUcState::Complete
                        && v.live >= min);
                there && !sufficient
            })
        })
    }

    /// Runs the lease monitor until `stop` is set.
    pub fn spawn_lease_monitor(
        self: &Arc<Self>,
        stop: Arc<AtomicBool>,
    ) -> tokio::task::JoinHandle<()> {
        let me = Arc::clone(self);
        tokio::spawn(tracing::Instrument::in_current_span(async move {
            let mut tick = tokio::time::interval(me.settings.lease_recheck);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                // Only the active recovers leases (its edits; a standby follows them).
                if me.role.get() != crate::ha::Role::Active {
                    continue;
                }
                me.check_leases().await;
            }
        }))
    }
}
