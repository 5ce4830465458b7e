//! Committed edits into a NameNode: openraft's state machine for the replicated edit log.
//!
//! Every member applies each committed [`EditBatch`] in log order, record by record:
//! 1. a txid its own edit log already holds is skipped (Raft re-applies the log after a
//!    restart; the image and edit log loaded at start hold everything applied before);
//! 2. a txid its namespace already has is one this member applied as the active: the
//!    committed record must be the one it queued ([`EditShipper::take_own`]) — otherwise
//!    another leader's edit replaced it and this namespace has diverged: the member turns
//!    [`Role::Failed`] and applies nothing more until it is restarted;
//! 3. the next txid is replayed into the namespace (the replay path of a restart) and its
//!    consequences for the block map follow ([`to_block_manager`]);
//! 4. an at-most-once call the batch says the record completes is remembered in the retry
//!    cache as committed (also for a record skipped by rule 1, so a restarted member knows
//!    the calls of the entries it applies again), so a retry of it reaching this member
//!    once it is active gets the call's answer rebuilt instead of a second run
//!    (at-most-once across failover);
//! 5. the record is appended to the member's own edit log, synced in the background at most
//!    once a second (`LOCAL_SYNC_EVERY`): the Raft log is what makes an edit durable, and what
//!    a crash loses of the edit log's tail is applied again from the Raft log at restart; an
//!    fdatasync of it per batch would double each member's disk writes.
//!
//! Snapshots are the member's newest image (`ha::snapshot`): after each entry the member's
//! last txid is remembered ([`AppliedPoints`]) so a snapshot can name the entry an image
//! covers; installing one replaces the namespace with the image's.

use std::sync::Arc;

use openraft::LogId;
use parking_lot::Mutex;
use rhdfs_blockmanager::BlockUcState;
use rhdfs_editlog::EditLog;
use rhdfs_raftlog::{SnapshotJob, StateMachineApp};

use crate::edit::EditOp;
use crate::edit_codec;
use crate::fsdir::{FileBlock, Inode, Removed};
use crate::ha::Role;
use crate::ha::batch::{BatchCall, EditBatch, EditRaft};
use crate::ha::ship::EditShipper;
use crate::ha::snapshot::{self, AppliedPoints};
use crate::namesystem::{Namesystem, to_block};

/// What applying one record found.
enum Step {
    /// Already in this member's namespace (it was the active).
    Own,
    /// Replayed; what the block map must learn.
    Replayed(BlockWork),
    /// Cannot be applied: the namespace is elsewhere.
    Diverged(String),
}

/// The block map's side of a replayed edit (a standby's block map follows the namespace).
#[derive(Debug, Default)]
struct BlockWork {
    removed: Vec<u64>,
    added: Option<(FileBlock, u16)>,
    abandoned: Option<u64>,
    /// A closed file's last block: committed with its final length and stamp.
    closed_last: Option<FileBlock>,
    /// Blocks at a new replication (setReplication, or concat's blocks at the target's).
    replication: Option<(Vec<u64>, u16)>,
    /// An append's re-opened last block, back under construction.
    reopened: Option<(FileBlock, u16)>,
    /// The last block at a new stamp or length (updatePipeline, fsync's length).
    updated: Option<FileBlock>,
}

/// How often applied edits are synced to the member's own edit log.
const LOCAL_SYNC_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// The state machine application of a NameNode.
pub struct NamespaceApp {
    fs: Arc<Namesystem>,
    log: EditLog,
    shipper: Arc<EditShipper>,
    /// Monotonic time of the last background sync of the edit log.
    last_sync: Option<std::time::Duration>,
    /// The member's last txid after applied entries (what a snapshot covers).
    points: Arc<Mutex<AppliedPoints>>,
}

impl NamespaceApp {
    pub fn new(fs: Arc<Namesystem>, log: EditLog, shipper: Arc<EditShipper>) -> Self {
        NamespaceApp {
            fs,
            log,
            shipper,
            last_sync: None,
            points: Arc::default(),
        }
    }

    /// Remembers the calls completed at `txid` as committed (an entry the cache already has
    /// is kept), taken from `calls` (the batch's, in txid order) past those of earlier
    /// records.
    fn remember_calls<'a>(
        &self,
        calls: &mut std::iter::Peekable<impl Iterator<Item = &'a BatchCall>>,
        txid: u64,
    ) {
        while let Some(c) = calls.next_if(|c| c.txid <= txid) {
            if let Some(cache) = self.fs.retry_cache()
                && c.txid == txid
            {
                cache.record_committed(&c.client_id, c.call_id);
            }
        }
    }

    fn diverge(&self, txid: u64, why: &str) {
        tracing::error!(
            txid,
            "the namespace diverged from the replicated edit log ({why}); this NameNode stops \
             serving and must be restarted to reload it"
        );
        self.fs.ha_role().set(Role::Failed);
        self.shipper.deactivate();
    }

    fn apply_record(&self, txid: u64, record: &[u8]) -> Step {
        let mono = self.fs.clock().monotonic();
        self.fs.with_ns_op("ha_apply", |ns| {
            let last = ns.last_txid();
            if txid <= last {
                return Step::Own;
            }
            if txid != last + 1 {
                return Step::Diverged(format!("txid {txid} after namespace txid {last}"));
            }
            let op = match edit_codec::decode(record) {
                Ok(op) => op,
                Err(e) => return Step::Diverged(format!("record does not decode: {e}")),
            };
            let removed = match ns.apply_committed(&op, txid, mono) {
                Ok(r) => r,
                Err(e) => return Step::Diverged(format!("record does not apply: {e}")),
            };
            Step::Replayed(block_work(ns, &op, removed))
        })
    }

    fn to_block_manager(&self, w: BlockWork) {
        let bm = self.fs.block_manager();
        if !w.removed.is_empty() {
            bm.remove_blocks(w.removed);
        }
        if let Some((b, replication)) = w.added {
            bm.add_block_under_construction(to_block(&b), replication, &[]);
        }
        if let Some(id) = w.abandoned {
            bm.abandon_block(id);
        }
        if let Some(b) = w.closed_last
            && let Some((_, BlockUcState::UnderConstruction)) = bm.get_block(b.id)
        {
            if let Err(e) = bm.commit_block(to_block(&b)) {
                tracing::warn!(
                    block = b.id,
                    "standby: committing a closed file's block: {e}"
                );
            }
            bm.try_complete_block(b.id);
        }
        if let Some((ids, r)) = w.replication {
            bm.set_replication(&ids, r);
        }
        if let Some((b, replication)) = w.reopened {
            self.fs.reopen_block(&b, replication);
        }
        if let Some(b) = w.updated {
            // Replicas at another stamp leave; those at the new one come with their reports.
            bm.update_pipeline(to_block(&b), to_block(&b), &[], &[]);
        }
    }
}

/// What `op`, just applied, means for the block map.
fn block_work(ns: &crate::namespace::Namespace, op: &EditOp, removed: Removed) -> BlockWork {
    let file = |id: u64| ns.dir().get(id).and_then(Inode::as_file);
    let mut w = BlockWork {
        removed: removed.blocks,
        ..BlockWork::default()
    };
    match op {
        EditOp::AddBlock { file: id, block } => {
            let replication = file(*id).map_or(1, |f| f.replication());
            w.added = Some((*block, replication));
        }
        EditOp::AbandonBlock { block_id, .. } => w.abandoned = Some(*block_id),
        EditOp::CloseFile { file: id, .. } => {
            w.closed_last = file(*id).and_then(|f| f.blocks.last().copied());
        }
        EditOp::UpdateLastBlock { block, .. } => w.updated = Some(*block),
        EditOp::ReopenFile {
            file: id,
            new_block,
            ..
        } => {
            w.reopened = file(*id).and_then(|f| {
                crate::namespace::reopened_block(f, *new_block).map(|b| (b, f.replication()))
            });
        }
        EditOp::SetReplication { id, replication } => {
            if let Some(f) = file(*id) {
                w.replication = Some((f.blocks.iter().map(|b| b.id).collect(), *replication));
            }
        }
        EditOp::Concat { target, .. } => {
            if let Some(f) = file(*target) {
                w.replication = Some((f.blocks.iter().map(|b| b.id).collect(), f.replication()));
            }
        }
        _ => {}
    }
    w
}

impl StateMachineApp<EditRaft> for NamespaceApp {
    fn apply(&mut self, log_id: &LogId<u64>, data: Option<&EditBatch>) {
        if self.fs.ha_role().get() == Role::Failed {
            return;
        }
        if let Some(batch) = data {
            self.apply_batch(batch);
        }
        self.points.lock().record(*log_id, self.log.last_txid());
    }

    fn snapshot(&self, _last_applied: Option<LogId<u64>>) -> SnapshotJob {
        snapshot::snapshot_job(&self.fs, &self.points)
    }

    fn restore(&mut self, data: &[u8]) -> Result<(), String> {
        snapshot::install(&self.fs, &self.shipper, &self.points, data)
    }
}

impl NamespaceApp {
    /// Applies one committed batch: see the module docs.
    fn apply_batch(&mut self, batch: &EditBatch) {
        let mut appended = None;
        let mut calls = batch.calls.iter().peekable();
        for (txid, record) in &batch.records {
            let txid = *txid;
            if txid <= self.log.last_txid() {
                // Applied before a restart (or in an installed image): its calls are
                // remembered again, so a retry after the restart gets its answer.
                self.remember_calls(&mut calls, txid);
                continue;
            }
            match self.apply_record(txid, record) {
                Step::Own => match self.shipper.take_own(txid) {
                    // The call's own answer is in the cache already (not overwritten).
                    Some(own) if own == *record => self.remember_calls(&mut calls, txid),
                    _ => {
                        self.diverge(txid, "another leader's edit at a txid this NameNode used");
                        return;
                    }
                },
                Step::Replayed(work) => {
                    self.to_block_manager(work);
                    self.remember_calls(&mut calls, txid);
                }
                Step::Diverged(why) => {
                    self.diverge(txid, &why);
                    return;
                }
            }
            match self.log.append(record) {
                Ok(t) if t == txid => appended = Some(txid),
                Ok(t) => {
                    self.diverge(txid, &format!("the local edit log numbered it {t}"));
                    return;
                }
                Err(e) => {
                    self.diverge(txid, &format!("the local edit log refused it: {e}"));
                    return;
                }
            }
        }
        if let Some(txid) = appended {
            self.fs.block_manager().set_last_txid(txid);
            let now = self.fs.clock().monotonic();
            if self
                .last_sync
                .is_some_and(|at| now.saturating_sub(at) < LOCAL_SYNC_EVERY)
            {
                return;
            }
            self.last_sync = Some(now);
            let log = self.log.clone();
            tokio::spawn(async move {
                if let Err(e) = log.sync_async(txid).await {
                    tracing::error!("syncing applied edits to the local edit log: {e}");
                }
            });
        }
    }
}
