//! The block side's state under one lock: the blocks map, InvalidateBlocks and the
//! per-node queues of deletions waiting for a heartbeat. Plain synchronous logic; the
//! `BlockManager` decides how long the lock is held around each call.

use std::sync::Arc;

use std::time::Duration;

use crate::block::{
    Block, BlockInfo, BlockRecovery, BlockUcState, CorruptReason, ExpectedLocation, ReplicaState,
    StorageIdx,
};
use crate::blocks_map::BlocksMap;
use crate::deleting::{DeletingReplicas, DeletionCause};
use crate::error::BlockManagerError;
use crate::invalidate::{InvalidateBlocks, PendingCommands};
use crate::orphans::{OrphanClass, Orphans};
use crate::reconstruction::Reconstruction;
use crate::redundancy::decommission::{AdminState, AdminTracker, is_sufficient};
use crate::redundancy::low_redundancy::{NumberReplicas, priority};
use crate::report::{ReportAction, ReportedReplica, classify};

/// `numBytes` of a block deleted from the namespace in a DNA_INVALIDATE command: the
/// DataNode need not acknowledge its deletion (Hadoop's BlockCommand.NO_ACK).
pub const NO_ACK: u64 = i64::MAX as u64;

/// What processing one reported replica did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicaOutcome {
    /// A finalized replica was recorded (wake waiters of minimum replication).
    pub finalized_added: bool,
    /// The block went COMMITTED -> COMPLETE.
    pub completed: bool,
    pub invalidated: bool,
    pub corrupt: bool,
    /// The block is unknown and the replica is held (`orphans`), not deleted.
    pub held: bool,
}

/// Counts for fsStats / dfsadmin -report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockCounts {
    pub blocks_total: u64,
    pub under_replicated: u64,
    pub corrupt_blocks: u64,
    pub missing_blocks: u64,
    pub missing_repl_one: u64,
    /// COMPLETE blocks, and those with at least minReplication good replicas (safe mode).
    pub complete_blocks: u64,
    pub safe_blocks: u64,
}

#[derive(Debug)]
pub struct BlockState {
    pub map: BlocksMap,
    pub invalidate: InvalidateBlocks,
    pub pending: PendingCommands,
    /// Surplus and corrupt replicas of existing blocks queued for deletion, which their
    /// nodes may still hold (no copy target for those blocks).
    pub deleting: DeletingReplicas,
    pub recon: Reconstruction,
    /// Admin states (decommissioning) of the nodes, and the host lists.
    pub admin: AdminTracker,
    /// Replicas of unknown blocks that are held instead of deleted.
    pub orphans: Orphans,
    /// A replica of an unknown block with a generation stamp above this is from the
    /// future (held): the namespace's last generation stamp, or its hold floor when lower.
    /// `u64::MAX` (no namespace attached) turns the check off.
    pub hold_above_gs: u64,
    /// Hadoop's isPopulatingReplQueues: false from a NameNode's start until start-up safe
    /// mode's thresholds are reached (`ops::repl_queues`). While false a reported replica
    /// only joins its block (no low-redundancy queue, excess or corrupt-replica work: every
    /// block looks under-replicated while the reports arrive, and each replica moved its
    /// block from queue to queue); the queues are then filled by one scan of the map.
    pub(crate) populating: bool,
    min_replication: usize,
}

impl BlockState {
    pub fn new(min_replication: usize) -> Self {
        BlockState {
            map: BlocksMap::with_min_replication(min_replication.max(1)),
            invalidate: InvalidateBlocks::new(),
            pending: PendingCommands::default(),
            deleting: DeletingReplicas::default(),
            recon: Reconstruction::default(),
            admin: AdminTracker::default(),
            orphans: Orphans::default(),
            hold_above_gs: u64::MAX,
            populating: true,
            min_replication: min_replication.max(1),
        }
    }

    pub fn min_replication(&self) -> usize {
        self.min_replication
    }

    /// Adds a new block under construction, or re-opens an existing one (append): its
    /// replicas stay recorded but count again only once re-reported finalized.
    pub fn add_under_construction(
        &mut self,
        block: Block,
        replication: u16,
        expected: Vec<ExpectedLocation>,
    ) {
        let map = &mut self.map;
        let mut located: Vec<ExpectedLocation> = Vec::new();
        if expected.is_empty()
            && let Some(info) = map.get(block.id)
        {
            located = info
                .replicas
                .iter()
                .filter(|r| r.corrupt().is_none())
                .map(|r| ExpectedLocation {
                    dn_uuid: map.dn_of(r).clone(),
                    storage_id: map.storage_id_of(r).clone(),
                })
                .collect();
        }
        if let Some(mut info) = map.get_mut(block.id) {
            info.set_block(block);
            info.state = BlockUcState::UnderConstruction;
            info.set_recovery(None);
            info.replication = replication;
            for r in &mut info.replicas {
                if r.state() == ReplicaState::Finalized {
                    r.set_state(ReplicaState::Rbw);
                }
            }
            info.set_expected(if expected.is_empty() {
                located
            } else {
                expected
            });
            return;
        }
        self.map.insert(
            block.id,
            BlockInfo::new_under_construction(block, replication, expected),
        );
    }

    /// Adds a block loaded from the image or edit log: COMPLETE blocks (and UC ones) start
    /// with no replicas until DataNodes report them.
    pub fn load_block(&mut self, block: Block, replication: u16, state: BlockUcState) {
        let mut info = BlockInfo::new_under_construction(block, replication, Vec::new());
        info.state = state;
        self.map.insert(block.id, info);
    }

    /// UC -> COMMITTED with the client's length and generation stamp, then COMPLETE at once
    /// if enough finalized replicas are already there. Ok(true) if the block is COMPLETE.
    pub fn commit(&mut self, commit: Block) -> Result<bool, BlockManagerError> {
        let mut info = self
            .map
            .get_mut(commit.id)
            .ok_or(BlockManagerError::UnknownBlock(commit.id))?;
        match info.state {
            BlockUcState::Complete => return Ok(true),
            BlockUcState::Committed => {
                if info.gs() != commit.gs || info.num_bytes() != commit.num_bytes {
                    return Err(BlockManagerError::InvalidState(format!(
                        "Trying to commit block {} of length {} but it is already committed as {} of length {}",
                        commit,
                        commit.num_bytes,
                        info.block(commit.id),
                        info.num_bytes()
                    )));
                }
            }
            BlockUcState::UnderConstruction | BlockUcState::UnderRecovery => {
                if info.gs() != commit.gs {
                    return Err(BlockManagerError::InvalidState(format!(
                        "Commit block with mismatching GS. NN has {}, client submits {}",
                        info.block(commit.id),
                        commit
                    )));
                }
                info.set_block(commit);
                info.state = BlockUcState::Committed;
                info.set_recovery(None);
                // Finalized replicas of another length cannot serve the committed block.
                let short: Vec<StorageIdx> = info
                    .replicas
                    .iter()
                    .filter(|r| {
                        let b = info.replica_block(commit.id, r);
                        r.state() == ReplicaState::Finalized
                            && b.gs == commit.gs
                            && b.num_bytes != commit.num_bytes
                            && r.corrupt().is_none()
                    })
                    .map(|r| r.storage())
                    .collect();
                for st in short {
                    if let Some(r) = info.replica_on_mut(st) {
                        r.set_corrupt(Some(CorruptReason::SizeMismatch));
                    }
                }
            }
        }
        drop(info);
        Ok(self.try_complete(commit.id))
    }

    /// Hadoop's initializeBlockRecovery: the block under construction (or already under
    /// recovery) becomes UNDER_RECOVERY with `recovery_id`. The primary is the expected
    /// location whose node heartbeated most recently among the live ones not yet chosen
    /// as primary; once every live one has been tried, all are eligible again. `alive`
    /// gives a live node's last heartbeat (monotonic) and None for a dead or unknown one.
    /// Returns the primary, or None when no expected location is alive.
    pub fn initialize_recovery(
        &mut self,
        id: u64,
        recovery_id: u64,
        alive: &dyn Fn(&str) -> Option<Duration>,
    ) -> Result<Option<Arc<str>>, BlockManagerError> {
        let mut info = self
            .map
            .get_mut(id)
            .ok_or(BlockManagerError::UnknownBlock(id))?;
        if !matches!(
            info.state,
            BlockUcState::UnderConstruction | BlockUcState::UnderRecovery
        ) {
            return Err(BlockManagerError::InvalidState(format!(
                "Cannot recover block {} in state {}",
                info.block(id),
                info.state
            )));
        }
        let mut tried = info.take_recovery().map(|r| r.tried).unwrap_or_default();
        info.state = BlockUcState::UnderRecovery;
        let live: Vec<(Arc<str>, Duration)> = info
            .uc()
            .expected()
            .iter()
            .filter_map(|e| alive(&e.dn_uuid).map(|t| (e.dn_uuid.clone(), t)))
            .collect();
        if live.iter().all(|(dn, _)| tried.contains(dn)) {
            tried.clear();
        }
        let mut primary: Option<(Arc<str>, Duration)> = None;
        for (dn, last) in live {
            if tried.contains(&dn) {
                continue;
            }
            if primary.as_ref().is_none_or(|(_, best)| last > *best) {
                primary = Some((dn, last));
            }
        }
        let primary = primary.map(|(dn, _)| dn);
        if let Some(p) = &primary {
            tried.push(p.clone());
        }
        info.set_recovery(Some(BlockRecovery {
            recovery_id,
            primary: primary.clone(),
            tried,
        }));
        Ok(primary)
    }

    /// COMMITTED -> COMPLETE when at least minReplication good finalized replicas exist.
    pub fn try_complete(&mut self, id: u64) -> bool {
        let min = self.min_replication;
        let map = &self.map;
        let Some(info) = map.get(id) else {
            return false;
        };
        match info.state {
            BlockUcState::Complete => true,
            BlockUcState::Committed if info.good_finalized() >= min => {
                // Pipeline nodes that have not reported yet are counted as replicas on
                // their way (Hadoop's addExpectedReplicasToPending).
                let gs = info.gs();
                let coming: Vec<Arc<str>> = info
                    .uc()
                    .expected()
                    .iter()
                    .filter(|e| {
                        !info.replicas.iter().any(|r| {
                            *map.dn_of(r) == e.dn_uuid
                                && r.is_good_finalized()
                                && info.replica_gs(r) == gs
                        })
                    })
                    .map(|e| e.dn_uuid.clone())
                    .collect();
                if let Some(mut info) = self.map.get_mut(id) {
                    info.state = BlockUcState::Complete;
                    info.clear_expected();
                }
                self.recon.add_pending(id, coming);
                if self.populating {
                    // Replicas of an older stamp left by a pipeline recovery go now.
                    self.invalidate_corrupt_if_replaced(id);
                }
                self.check_redundancy(id);
                true
            }
            _ => false,
        }
    }

    /// Replica counts of a block: good finalized replicas of its generation stamp split by
    /// the admin state of their nodes, and corrupt ones.
    pub fn count_replicas(&self, info: &BlockInfo) -> NumberReplicas {
        let mut n = NumberReplicas::default();
        for r in &info.replicas {
            if r.corrupt().is_some() {
                n.corrupt += 1;
            } else if r.is_good_finalized() && info.replica_gs(r) == info.gs() {
                match self.admin.state(self.map.dn_of(r)) {
                    AdminState::Normal => n.live += 1,
                    AdminState::DecommissionInProgress => n.decommissioning += 1,
                    AdminState::Decommissioned => n.decommissioned += 1,
                }
            }
        }
        n
    }

    /// Drops the copies node `dn` was to send or receive (it died, or restarted and lost
    /// them) and re-checks their blocks, so they are scheduled again now rather than after
    /// the pending timeout; how many blocks that was.
    pub fn reschedule_copies_of(&mut self, dn: &str) -> usize {
        let ids = self.recon.remove_node(dn);
        for &id in &ids {
            self.check_redundancy(id);
        }
        ids.len()
    }

    /// Puts a COMPLETE block with fewer live replicas than expected, or with enough but on
    /// too few racks (`redundancy::racks`), in its low-redundancy queue (Hadoop's
    /// priorities; no usable replica at all goes to the corrupt queue), or takes it off.
    pub fn check_redundancy(&mut self, id: u64) {
        let Some(info) = self.map.get(id) else {
            self.recon.remove_block(id);
            return;
        };
        if !info.is_complete() || !self.populating {
            return;
        }
        let n = self.count_replicas(info);
        let badly_distributed = self.is_badly_distributed(id, info, n.live);
        match priority(n, usize::from(info.replication), badly_distributed) {
            Some(p) => self.recon.mark_needed(id, p),
            None => self.recon.unmark(id),
        }
    }

    /// Blocks with a replica on any storage of node `dn`, sorted.
    pub fn blocks_of_node(&self, dn: &str) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .map
            .storages_of_node(dn)
            .iter()
            .flat_map(|s| self.map.storage_blocks(s))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// True when a decommissioning node's replica of `id` is no longer needed.
    pub fn sufficient_for_decommission(&self, id: u64) -> bool {
        let Some(info) = self.map.get(id) else {
            return true;
        };
        let n = self.count_replicas(info);
        let in_service = info
            .replicas
            .iter()
            .filter(|r| {
                r.corrupt().is_none()
                    && info.replica_gs(r) == info.gs()
                    && !self.admin.state(self.map.dn_of(r)).is_out_of_service()
            })
            .count();
        is_sufficient(info, n, in_service, self.min_replication)
    }

    /// Once a COMPLETE block has its full replication of live replicas again, its corrupt
    /// replicas are removed and queued for deletion (Hadoop's invalidateCorruptReplicas);
    /// corrupt replicas of an older generation stamp (left by a write) already once it has
    /// minReplication live ones, as `mark_corrupt` deletes such a replica reported then.
    /// Returns the number queued.
    pub fn invalidate_corrupt_if_replaced(&mut self, id: u64) -> usize {
        let Some(info) = self.map.get(id) else {
            return 0;
        };
        let live = self.count_replicas(info).live;
        if !info.is_complete() || info.corrupt_replicas() == 0 || live < self.min_replication {
            return 0;
        }
        let whole = live >= usize::from(info.replication).max(1);
        let corrupt: Vec<(Arc<str>, Arc<str>, Block)> = info
            .replicas
            .iter()
            .filter(|r| r.corrupt().is_some() && (whole || info.replica_gs(r) < info.gs()))
            .map(|r| {
                (
                    self.map.dn_of(r).clone(),
                    self.map.storage_id_of(r).clone(),
                    info.replica_block(id, r),
                )
            })
            .collect();
        let mut n = 0;
        for (dn, storage, b) in corrupt {
            tracing::info!(block = id, dn = %dn, "BLOCK* invalidateCorruptReplicas: enough live replicas; deleting the corrupt one");
            if self.delete_replica(&dn, &storage, b, DeletionCause::Corrupt) == Some(true) {
                n += 1;
            }
        }
        n
    }

    /// Removes live replicas beyond the block's replication (a node back in service).
    /// Returns the number queued for deletion.
    pub fn remove_excess_live(&mut self, id: u64) -> usize {
        let Some(info) = self.map.get(id) else {
            return 0;
        };
        if !info.is_complete() {
            return 0;
        }
        let keep = usize::from(info.replication).max(1);
        let live = self.live_replicas(id, info);
        let mut n = 0;
        for (dn, storage, b) in live.into_iter().skip(keep) {
            tracing::info!(block = id, dn = %dn, "BLOCK* chooseExcessRedundancies: deleting surplus replica");
            if self.delete_replica(&dn, &storage, b, DeletionCause::Surplus) == Some(true) {
                n += 1;
            }
        }
        n
    }

    /// Good finalized replicas of the block's generation stamp on in-service nodes.
    pub(crate) fn live_replicas(
        &self,
        id: u64,
        info: &BlockInfo,
    ) -> Vec<(Arc<str>, Arc<str>, Block)> {
        info.replicas
            .iter()
            .filter(|r| {
                r.is_good_finalized()
                    && info.replica_gs(r) == info.gs()
                    && !self.admin.state(self.map.dn_of(r)).is_out_of_service()
            })
            .map(|r| {
                (
                    self.map.dn_of(r).clone(),
                    self.map.storage_id_of(r).clone(),
                    info.replica_block(id, r),
                )
            })
            .collect()
    }

    /// Takes a replica of an existing block (surplus or corrupt) off the map and queues its
    /// deletion; the node counts as holding it until it reports it gone (`deleting`). True
    /// if the deletion was newly queued; None (nothing done) if the map has no such replica.
    pub fn delete_replica(
        &mut self,
        dn: &Arc<str>,
        storage: &Arc<str>,
        b: Block,
        cause: DeletionCause,
    ) -> Option<bool> {
        self.map.remove_replica(b.id, storage)?;
        self.deleting.add(b.id, dn, storage, cause);
        Some(self.invalidate.add(dn, b))
    }

    /// Removes one replica (unreported in a full report, or its node died).
    pub fn remove_replica(&mut self, id: u64, storage: &str) -> bool {
        let removed = self.map.remove_replica(id, storage).is_some();
        if removed {
            self.check_redundancy(id);
        }
        removed
    }

    /// A COMPLETE block with more live replicas than expected is marked for the excess
    /// check (`redundancy::excess` chooses which replicas go, keeping rack spread).
    fn process_excess(&mut self, id: u64, dn: &Arc<str>) {
        let Some(info) = self.map.get(id) else {
            return;
        };
        if info.is_complete()
            && !self.admin.state(dn).is_out_of_service()
            && self.count_replicas(info).live > usize::from(info.replication).max(1)
        {
            self.recon.mark_excess(id);
        }
    }

    /// True when the block is COMPLETE or has minReplication good finalized replicas of its
    /// current generation stamp and length (for COMMITTED blocks).
    pub fn has_min_replicas(&self, id: u64) -> bool {
        let Some(info) = self.map.get(id) else {
            return false;
        };
        info.is_complete() || info.good_finalized() >= self.min_replication
    }

    /// Records a pipeline change: new generation stamp and length, new expected locations;
    /// replicas of older generation stamps no longer count. A stale replica on a node of the
    /// new pipeline leaves the map (the node reports its replica at the new stamp). One on a
    /// node the new pipeline left out (`expected` names it) is what the node's next full
    /// report would show as corrupt: it is recorded so now (GENSTAMP_MISMATCH), which keeps
    /// that node from being chosen to receive a copy of the block (it holds a replica and
    /// would refuse one) and deletes the replica once the block is COMPLETE with
    /// minReplication live replicas, instead of leaving it on the node until that report
    /// (Hadoop's removes it from the map only, so it stays on the disk, uncounted, until
    /// the next full report).
    pub fn update_pipeline(&mut self, new: Block, expected: Vec<ExpectedLocation>) {
        let Some(mut info) = self.map.get_mut(new.id) else {
            return;
        };
        info.set_block(new);
        let names_pipeline = !expected.is_empty();
        if names_pipeline {
            info.set_expected(expected);
        }
        drop(info);
        let Some(info) = self.map.get(new.id) else {
            return;
        };
        let stale: Vec<(StorageIdx, bool)> = info
            .replicas
            .iter()
            .filter(|r| info.replica_gs(r) != new.gs)
            .map(|r| {
                let in_pipeline = info
                    .uc()
                    .expected()
                    .iter()
                    .any(|e| e.dn_uuid == *self.map.dn_of(r));
                (r.storage(), in_pipeline)
            })
            .collect();
        for (idx, in_pipeline) in stale {
            let Some(storage) = self.map.storage(idx).map(|s| s.storage_id.clone()) else {
                continue;
            };
            if in_pipeline || !names_pipeline {
                self.map.remove_replica(new.id, &storage);
                continue;
            }
            let Some(info) = self.map.get(new.id) else {
                return;
            };
            let Some(r) = info.replica_on(idx) else {
                continue;
            };
            let (old, state) = (info.replica_block(new.id, r), r.state());
            let dn = self.map.dn_of(r).clone();
            tracing::info!(
                block = %old, dn = %dn, gs = new.gs,
                "BLOCK* markBlockAsCorrupt: a node the pipeline left out holds a replica of an older generation stamp"
            );
            self.mark_corrupt(&dn, &storage, old, state, CorruptReason::GenstampMismatch);
        }
    }

    /// Removes a block from the map; every replica (and every expected pipeline node that
    /// never reported one) is queued for deletion. Returns the number queued.
    pub fn remove_block(&mut self, id: u64) -> usize {
        self.recon.remove_block(id);
        self.deleting.forget_block(id);
        let Some(info) = self.map.remove(id) else {
            return 0;
        };
        let mut n = 0;
        for r in &info.replicas {
            if self.invalidate.add(
                self.map.dn_of(r),
                Block::new(id, info.replica_gs(r), NO_ACK),
            ) {
                n += 1;
            }
        }
        for e in info.uc().expected() {
            if !info
                .replicas
                .iter()
                .any(|r| *self.map.dn_of(r) == e.dn_uuid)
                && self
                    .invalidate
                    .add(&e.dn_uuid, Block::new(id, info.gs(), NO_ACK))
            {
                n += 1;
            }
        }
        n
    }

    /// Classifies and applies one replica from a full or incremental report.
    pub fn process_replica(
        &mut self,
        dn: &Arc<str>,
        storage: &Arc<str>,
        reported: &ReportedReplica,
    ) -> ReplicaOutcome {
        self.process_reported(dn, storage, reported, false, Duration::ZERO)
    }

    /// `process_replica` for a replica of a storage's first full report since the
    /// NameNode started (`first_report`), at monotonic time `now`: a replica of an unknown
    /// block is held or deleted by the rules in `orphans`.
    pub fn process_reported(
        &mut self,
        dn: &Arc<str>,
        storage: &Arc<str>,
        reported: &ReportedReplica,
        first_report: bool,
        now: Duration,
    ) -> ReplicaOutcome {
        let id = reported.block.id;
        let scheduled = self.invalidate.contains(dn, reported.block);
        let action = classify(reported, self.map.get(id), &self.map.on_node(dn), scheduled);
        let mut out = ReplicaOutcome::default();
        match action {
            ReportAction::Keep => {}
            ReportAction::Invalidate if !self.map.contains(id) && !scheduled => {
                match self.orphan_class(reported.block, first_report) {
                    Some(class) => {
                        if self.orphans.hold(
                            dn,
                            storage,
                            reported.block,
                            reported.state,
                            class,
                            now,
                        ) {
                            tracing::info!(
                                block = %reported.block, dn = %dn, class = class.name(),
                                "BLOCK* holding a replica of a block the namespace does not know"
                            );
                        }
                        out.held = true;
                    }
                    None => {
                        // A startup hold ends with the storage's next full report.
                        self.orphans.remove(id, dn);
                        out.invalidated = self.invalidate.add(dn, reported.block);
                    }
                }
            }
            ReportAction::Invalidate => {
                out.invalidated = self.invalidate.add(dn, reported.block);
            }
            ReportAction::Corrupt(reason, msg) => {
                tracing::info!(
                    block = %reported.block, dn = %dn, "BLOCK* markBlockAsCorrupt: {msg}"
                );
                out.corrupt = true;
                out.invalidated =
                    self.mark_corrupt(dn, storage, reported.block, reported.state, reason);
            }
            ReportAction::UnderConstruction => {
                self.map
                    .add_replica(dn, storage, reported.block, reported.state);
                if let Some(mut info) = self.map.get_mut(id)
                    && !info.uc().expected().iter().any(|e| e.dn_uuid == *dn)
                {
                    info.push_expected(ExpectedLocation {
                        dn_uuid: dn.clone(),
                        storage_id: storage.clone(),
                    });
                }
                out.finalized_added = reported.state == ReplicaState::Finalized;
            }
            ReportAction::Add => {
                // A replica told to be deleted but still held (the command was lost with a
                // restart, say) counts again; a deletion queued for an older generation stamp
                // of it could only be refused.
                self.deleting.remove(id, dn);
                self.invalidate.remove_older(dn, reported.block);
                self.map
                    .add_replica(dn, storage, reported.block, ReplicaState::Finalized);
                out.finalized_added = true;
                let state = self.map.get(id).map(|i| i.state);
                if state == Some(BlockUcState::Committed) {
                    out.completed = self.try_complete(id);
                } else if state == Some(BlockUcState::Complete) {
                    self.recon.replica_arrived(id, dn);
                    // Hadoop's addStoredBlock: no redundancy work before the queues are
                    // populated (`populating`); their scan does it for every block.
                    if self.populating {
                        self.process_excess(id, dn);
                        self.invalidate_corrupt_if_replaced(id);
                        self.check_redundancy(id);
                    }
                }
            }
        }
        out
    }

    /// Whether (and why) a replica of a block the map does not know is held.
    fn orphan_class(&self, block: Block, first_report: bool) -> Option<OrphanClass> {
        if block.gs > self.hold_above_gs {
            Some(OrphanClass::Future)
        } else if first_report {
            Some(OrphanClass::Startup)
        } else {
            None
        }
    }

    /// Moves held replicas to InvalidateBlocks (unacknowledged deletions, as for deleted
    /// files). Returns how many were queued.
    pub fn release_orphans(&mut self, class: Option<OrphanClass>) -> usize {
        let mut n = 0;
        for r in self.orphans.take(class) {
            if !self.map.contains(r.block.id)
                && self
                    .invalidate
                    .add(&r.dn_uuid, Block::new(r.block.id, r.block.gs, NO_ACK))
            {
                n += 1;
            }
        }
        n
    }

    /// A DataNode deleted its replica (DELETED_BLOCK).
    pub fn replica_deleted(&mut self, dn: &str, storage: &str, id: u64) -> bool {
        self.orphans.remove(id, dn);
        self.deleting.remove(id, dn);
        let removed = self.map.remove_replica(id, storage).is_some()
            || self.map.remove_replica_of_node(id, dn).is_some();
        if removed {
            self.check_redundancy(id);
        }
        removed
    }

    /// Hadoop's markBlockAsCorrupt: the replica stays recorded as corrupt (never served),
    /// and is queued for deletion when enough good replicas exist. True if invalidated.
    pub fn mark_corrupt(
        &mut self,
        dn: &Arc<str>,
        storage: &Arc<str>,
        reported: Block,
        state: ReplicaState,
        reason: CorruptReason,
    ) -> bool {
        let id = reported.id;
        if !self.map.contains(id) {
            return false;
        }
        self.map.add_replica(dn, storage, reported, state);
        let idx = self.map.storage_idx(storage);
        let min = self.min_replication;
        let Some(mut info) = self.map.get_mut(id) else {
            return false;
        };
        if let Some(r) = idx.and_then(|i| info.replica_on_mut(i)) {
            r.set_corrupt(Some(reason));
        }
        let live = info.good_finalized();
        let corrupt = info.corrupt_replicas();
        let expected = usize::from(info.replication);
        let min_ok = live >= min;
        let older_write = reported.gs < info.gs();
        drop(info);
        let invalidated =
            if live >= expected.max(1) || (min_ok && (live + corrupt > expected || older_write)) {
                self.delete_replica(dn, storage, reported, DeletionCause::Corrupt);
                true
            } else {
                false
            };
        self.check_redundancy(id);
        invalidated
    }

    /// Changes the expected replication only (the caller handles surplus replicas).
    pub fn update_replication(&mut self, id: u64, replication: u16) {
        let Some(mut info) = self.map.get_mut(id) else {
            return;
        };
        info.replication = replication;
        drop(info);
        self.check_redundancy(id);
    }

    /// Changes the expected replication; surplus good replicas of a COMPLETE block are
    /// removed and queued for deletion. Returns the number queued.
    pub fn set_replication(&mut self, id: u64, replication: u16) -> usize {
        let Some(mut info) = self.map.get_mut(id) else {
            return 0;
        };
        info.replication = replication;
        if !info.is_complete() {
            return 0;
        }
        drop(info);
        self.check_redundancy(id);
        self.remove_excess_live(id)
    }

    /// Counts for fsStats (a scan of the whole map).
    pub fn counts(&self) -> BlockCounts {
        let mut c = BlockCounts {
            blocks_total: self.map.len() as u64,
            ..BlockCounts::default()
        };
        for (id, info) in self.map.iter() {
            self.count_block(&mut c, id, info);
        }
        c
    }

    /// Adds one block's contribution to `c`, its replicas counted as the redundancy rules
    /// count them (decommissioning and decommissioned replicas are not live).
    pub fn count_block(&self, c: &mut BlockCounts, id: u64, info: &BlockInfo) {
        let n = self.count_replicas(info);
        let badly_distributed = self.recon.priority_of(id)
            == Some(crate::redundancy::low_redundancy::QUEUE_REPLICAS_BADLY_DISTRIBUTED);
        c.add(info, n, badly_distributed, self.min_replication);
    }
}

impl BlockCounts {
    /// Adds one block's contribution: `n` its replica counts, `badly_distributed` whether
    /// it waits in the badly-distributed queue. Like Hadoop's LowRedundancyBlocks, a COMPLETE
    /// block is under-replicated when it has fewer live replicas than expected (replicas on
    /// decommissioning or decommissioned nodes are not live) or enough on too few racks, and
    /// missing when it has no live replica and none on a node being decommissioned (only
    /// corrupt ones, or none). Missing blocks are counted as missing only.
    pub fn add(
        &mut self,
        info: &BlockInfo,
        n: NumberReplicas,
        badly_distributed: bool,
        min_replication: usize,
    ) {
        if info.corrupt_replicas() > 0 {
            self.corrupt_blocks += 1;
        }
        if !info.is_complete() {
            return;
        }
        self.complete_blocks += 1;
        // Safe mode counts usable replicas (live + decommissioning, as Hadoop's addStoredBlock).
        if n.live + n.decommissioning >= min_replication {
            self.safe_blocks += 1;
        }
        match priority(n, usize::from(info.replication), badly_distributed) {
            Some(crate::redundancy::low_redundancy::QUEUE_WITH_CORRUPT_BLOCKS) => {
                self.missing_blocks += 1;
                if info.replication == 1 {
                    self.missing_repl_one += 1;
                }
            }
            Some(_) => self.under_replicated += 1,
            None => {}
        }
    }
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
