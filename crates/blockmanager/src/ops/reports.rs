//! DataNode traffic: registration, heartbeats, incremental and full block reports, bad
//! block reports, and the removal of dead nodes' replicas. Every lock hold is bounded:
//! full reports and dead-node removal work in chunks with the lock released between them.

use std::sync::Arc;
use std::time::Instant;

use crate::block::{Block, CorruptReason, ReplicaState};
use crate::datanodes::{DatanodeId, RegisterOutcome, StorageReport};
use crate::error::BlockManagerError;
use crate::limits::{REPORT_CHUNK, REPORT_WALK_CHUNK};
use crate::manager::{BlockManager, Location};
use crate::report::ReportedReplica;

/// How many replicas a full report's chunk applies between two reads of the clock for
/// `dfs.namenode.blockreport.max.lock.hold.time`.
const HOLD_CHECK_STRIDE: usize = 32;

/// One entry of an incremental block report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncrementalItem {
    /// RECEIVING_BLOCK: an RBW replica exists.
    Receiving(Block),
    /// RECEIVED_BLOCK: a finalized replica exists.
    Received(Block),
    /// DELETED_BLOCK: the replica is gone.
    Deleted(Block),
}

/// What a heartbeat produced for its response.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HeartbeatOutcome {
    /// False: unknown or dead node; answer DNA_REGISTER.
    pub registered: bool,
    /// Replicas to delete (one DNA_INVALIDATE command).
    pub invalidate: Vec<Block>,
    /// Full block report lease (0 = none).
    pub full_report_lease: u64,
    /// Replicas to copy to other nodes (one DNA_TRANSFER command).
    pub transfers: Vec<(Block, Vec<Location>)>,
}

/// What processing one storage's full report did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FullReportSummary {
    pub reported: usize,
    pub added: usize,
    pub removed: usize,
    pub invalidated: usize,
    pub corrupt: usize,
    /// Replicas of unknown blocks held instead of deleted (`orphans`).
    pub held: usize,
    pub chunks: usize,
}

impl BlockManager {
    /// Records a registration on the node's resolved rack (`ops::topology`; refused when the
    /// rack is unresolved and such nodes are rejected, or does not fit the topology). A
    /// DataNode coming back from the dead starts with no replicas until its next full
    /// report; a node replaced at the same address loses its replicas. A live node that
    /// registers again (its process restarted faster than it could be declared dead) has
    /// lost the copies it was sending or receiving: they are scheduled again now, not
    /// after `dfs.namenode.reconstruction.pending.timeout-sec` (Hadoop waits those 5
    /// minutes).
    pub fn register_datanode(
        &self,
        id: DatanodeId,
        software_version: &str,
    ) -> Result<RegisterOutcome, BlockManagerError> {
        let uuid = id.uuid.clone();
        let outcome = self.register_on_rack(id, software_version)?;
        if let Some(old) = &outcome.replaced {
            tracing::info!(uuid = %old, "DataNode replaced by a new uuid at the same address");
            self.forget_node(old);
        }
        if !outcome.new_node && !outcome.was_dead {
            let again = self.blocks.lock("register").reschedule_copies_of(&uuid);
            if again > 0 {
                tracing::info!(
                    uuid = %uuid,
                    blocks = again,
                    "DataNode registered again: its pending copies are scheduled anew"
                );
            }
        }
        self.admin_on_register(&uuid);
        Ok(outcome)
    }

    /// Records a heartbeat and collects the commands for its response.
    pub fn heartbeat(
        &self,
        uuid: &str,
        reports: Vec<StorageReport>,
        xceiver_count: u32,
        xmits_in_progress: u32,
        request_full_report_lease: bool,
    ) -> HeartbeatOutcome {
        self.heartbeat_with_failures(
            uuid,
            reports,
            xceiver_count,
            xmits_in_progress,
            request_full_report_lease,
            0,
            None,
        )
    }

    /// A heartbeat with the node's failed volume count and summary
    /// (`crate::volume_failures`).
    #[allow(clippy::too_many_arguments)]
    pub fn heartbeat_with_failures(
        &self,
        uuid: &str,
        reports: Vec<StorageReport>,
        xceiver_count: u32,
        xmits_in_progress: u32,
        request_full_report_lease: bool,
        volume_failures: u32,
        failure_summary: Option<crate::volume_failures::VolumeFailureSummary>,
    ) -> HeartbeatOutcome {
        let now_ms = self.clock.now_millis();
        let now = self.now_mono();
        let mut failed: Vec<String> = reports
            .iter()
            .filter(|r| r.failed)
            .map(|r| r.storage_id.clone())
            .collect();
        let reported: Vec<String> = reports.iter().map(|r| r.storage_id.clone()).collect();
        {
            let mut dns = self.datanodes.lock("heartbeat");
            if !dns.heartbeat(uuid, reports, xceiver_count, xmits_in_progress, now_ms, now) {
                return HeartbeatOutcome::default();
            }
            // Hadoop's updateFailedStorage: storages left out once the failure count grew.
            failed.extend(dns.record_volume_failures(
                uuid,
                &reported,
                volume_failures,
                failure_summary,
            ));
        }
        // A failed volume's replicas are gone.
        self.drop_failed_storages(uuid, &failed);
        // In safe mode a heartbeat carries no commands: queued deletions and copies wait.
        let (invalidate, transfers) = if self.in_safe_mode() {
            (Vec::new(), Vec::new())
        } else {
            let mut st = self.blocks.lock("heartbeat");
            let inv = st.pending.take(uuid, self.cfg.block_invalidate_limit);
            let xmits = xmits_in_progress as usize;
            let streams = self.cfg.max_replication_streams.saturating_sub(xmits);
            let hard = self.cfg.admin.max_streams_hard_limit.saturating_sub(xmits);
            (inv, st.recon.take_transfers(uuid, streams, hard))
        };
        let transfers = self.render_transfers(transfers);
        let full_report_lease = if request_full_report_lease {
            let seed = rand::Rng::random::<u64>(&mut *self.rng.lock());
            self.leases.lock().request(uuid, now, seed)
        } else {
            0
        };
        HeartbeatOutcome {
            registered: true,
            invalidate,
            full_report_lease,
            transfers,
        }
    }

    fn live_node_uuid(&self, uuid: &str) -> Option<Arc<str>> {
        let now = self.now_mono();
        let dns = self.datanodes.lock("report_check");
        let d = dns.get(uuid)?;
        (!d.dead && dns.is_alive(uuid, now)).then(|| d.uuid.clone())
    }

    /// Applies an incremental block report for one storage of a DataNode.
    pub fn incremental_report(
        &self,
        uuid: &str,
        storage_id: &str,
        storage_type: i32,
        items: &[IncrementalItem],
    ) -> Result<(), BlockManagerError> {
        let dn = self.live_node_uuid(uuid).ok_or_else(|| {
            BlockManagerError::UnregisteredNode(
                "Got incremental block report from unregistered or dead node".to_string(),
            )
        })?;
        self.datanodes
            .lock("ibr")
            .ensure_storage(uuid, storage_id, storage_type);
        let received = items
            .iter()
            .filter(|i| matches!(i, IncrementalItem::Received(_)))
            .count();
        if received > 0 {
            // A received replica is no longer on its way (Hadoop decrements per block).
            let mut dns = self.datanodes.lock("ibr_scheduled");
            if let Some(d) = dns.get_mut(uuid) {
                for _ in 0..received {
                    d.scheduled.decrement(storage_type);
                }
            }
        }
        let storage: Arc<str> = Arc::from(storage_id);
        let mut wake = false;
        for chunk in items.chunks(REPORT_CHUNK) {
            let mut st = self.blocks_for_reports("ibr");
            for item in chunk {
                match *item {
                    IncrementalItem::Receiving(b) => {
                        let r = ReportedReplica {
                            block: b,
                            state: ReplicaState::Rbw,
                        };
                        st.process_replica(&dn, &storage, &r);
                    }
                    IncrementalItem::Received(b) => {
                        let r = ReportedReplica {
                            block: b,
                            state: ReplicaState::Finalized,
                        };
                        let o = st.process_replica(&dn, &storage, &r);
                        wake |= o.finalized_added || o.completed;
                    }
                    IncrementalItem::Deleted(b) => {
                        st.replica_deleted(&dn, &storage, b.id);
                    }
                }
            }
        }
        if wake {
            self.replica_event.notify_waiters();
        }
        self.process_excess_work();
        Ok(())
    }

    /// Applies one storage's full block report: every reported replica is classified
    /// (add / under construction / invalidate / corrupt), then replicas known on the storage
    /// but not reported (and recorded before this report began) are removed. Work is done in
    /// chunks of at most `REPORT_CHUNK` replicas or `dfs.namenode.blockreport.max.lock.hold.time`.
    pub fn full_report(
        &self,
        uuid: &str,
        storage_id: &str,
        storage_type: i32,
        replicas: &[ReportedReplica],
    ) -> Result<FullReportSummary, BlockManagerError> {
        let dn = self.live_node_uuid(uuid).ok_or_else(|| {
            BlockManagerError::UnregisteredNode(format!(
                "ProcessReport from dead or unregistered node: {uuid}"
            ))
        })?;
        self.datanodes
            .lock("full_report")
            .ensure_storage(uuid, storage_id, storage_type);
        // The reporting node's rack must be known before its replicas are checked for
        // rack spread (it may have registered since the last RedundancyMonitor pass). A
        // node the rack map has is left to the monitor's refresh (which re-checks the
        // blocks of a node that moved): a refresh reads every live node, a thousand nodes'
        // reports a thousand times each.
        let known = self
            .blocks
            .lock("full_report")
            .recon
            .racks
            .rack_of(uuid)
            .is_some();
        if !known {
            self.refresh_rack_map();
        }
        let storage: Arc<str> = Arc::from(storage_id);
        let mut sum = FullReportSummary {
            reported: replicas.len(),
            ..FullReportSummary::default()
        };
        // Hadoop's first-report rule: a storage's first report since the NameNode started
        // (or since its node came back) deletes no replica of an unknown block (`orphans`).
        // A storage that held nothing when the report began (its first report after a
        // start) has nothing the report could remove (`begin_full_report` gives None).
        let (start_seq, first_report, held_or_deleting) = {
            let mut st = self.blocks.lock("full_report");
            let stale = st.recon.freshness.is_stale(storage_id);
            let held = st.orphans.counts().replicas > 0 || st.deleting.on_storage(storage_id);
            (st.map.begin_full_report(&storage, &dn), stale, held)
        };
        let now = self.now_mono();
        let _one_at_a_time = self.applying_report.lock();
        // The reported ids, sorted once the report is applied, for the unreported filters
        // below (a hash set cost a SipHash per replica); not collected when no filter needs
        // them.
        let need_seen = start_seq.is_some() || held_or_deleting;
        let mut seen: Vec<u64> = Vec::with_capacity(if need_seen { replicas.len() } else { 0 });
        let mut wake = false;
        let mut i = 0;
        while i < replicas.len() {
            let mut st = self.blocks_for_reports("full_report");
            let t0 = Instant::now();
            let end = (i + REPORT_CHUNK).min(replicas.len());
            while i < end {
                let r = &replicas[i];
                i += 1;
                if need_seen {
                    seen.push(r.block.id);
                }
                let o = st.process_reported(&dn, &storage, r, first_report, now);
                sum.added += usize::from(o.finalized_added);
                sum.held += usize::from(o.held);
                sum.invalidated += usize::from(o.invalidated);
                sum.corrupt += usize::from(o.corrupt);
                wake |= o.finalized_added || o.completed;
                // The clock every HOLD_CHECK_STRIDE replicas (one takes about a microsecond).
                if i % HOLD_CHECK_STRIDE == 0 && t0.elapsed() >= self.cfg.report_max_lock_hold {
                    break;
                }
            }
            sum.chunks += 1;
        }
        seen.sort_unstable();
        seen.dedup();
        let reported = |id: u64| seen.binary_search(&id).is_ok();
        if let Some(start) = start_seq {
            // Replicas on the storage that the report did not list and that were recorded
            // there before it began are gone. The storage's blocks are walked in bounded
            // holds; each candidate is checked again when it is removed (recorded since?).
            let mut unreported = Vec::new();
            let mut from = 0;
            loop {
                let ids = self.blocks.lock("full_report").map.storage_blocks_from(
                    storage_id,
                    from,
                    REPORT_WALK_CHUNK,
                );
                let Some(&last) = ids.last() else { break };
                unreported.extend(ids.iter().copied().filter(|id| !reported(*id)));
                sum.chunks += 1;
                match last.checked_add(1) {
                    Some(next) if ids.len() == REPORT_WALK_CHUNK => from = next,
                    _ => break,
                }
            }
            for chunk in unreported.chunks(REPORT_CHUNK) {
                let mut st = self.blocks.lock("full_report");
                for &id in chunk {
                    if !st.map.recorded_since(storage_id, id, start)
                        && st.remove_replica(id, storage_id)
                    {
                        sum.removed += 1;
                    }
                }
                sum.chunks += 1;
            }
            self.blocks
                .lock("full_report")
                .map
                .end_full_report(storage_id);
        }
        // The storage's contents are current now: surplus replicas on it may be chosen
        // (postponed blocks are picked up by the next rescan); held replicas it no longer
        // has are forgotten.
        {
            let mut st = self.blocks.lock("full_report");
            st.recon.freshness.report_processed(storage_id);
            if need_seen {
                st.orphans.remove_unreported(storage_id, reported);
                // Replicas being deleted that the storage no longer holds are gone.
                st.deleting.retain_on_storage(storage_id, reported);
            }
        }
        if wake {
            self.replica_event.notify_waiters();
        }
        self.process_excess_work();
        let (now_ms, now) = (self.clock.now_millis(), self.now_mono());
        self.datanodes
            .lock("full_report")
            .block_report_done(uuid, now_ms, now);
        Ok(sum)
    }

    /// Releases the node's full block report lease (after the last RPC of a report).
    pub fn full_report_done(&self, uuid: &str) {
        self.leases.lock().release(uuid);
    }

    /// A client or DataNode found a replica corrupt: it is no longer served, and is deleted
    /// once enough good replicas exist. `storage_id` None: whichever storage of that node.
    pub fn report_bad_block(&self, block: Block, dn_uuid: &str, storage_id: Option<&str>) {
        let dn: Arc<str> = Arc::from(dn_uuid);
        let mut st = self.blocks.lock("report_bad_blocks");
        let Some(info) = st.map.get(block.id) else {
            tracing::info!(%block, dn = dn_uuid, "reportBadBlocks for a block not in the blocks map");
            return;
        };
        let found = info
            .replicas
            .iter()
            .find(|r| {
                &**st.map.dn_of(r) == dn_uuid
                    && storage_id.is_none_or(|s| &**st.map.storage_id_of(r) == s)
            })
            .map(|r| {
                let b = info.replica_block(block.id, r);
                (
                    st.map.storage_id_of(r).clone(),
                    r.state(),
                    b.gs,
                    b.num_bytes,
                )
            });
        let (storage, state, gs, len) = match found {
            Some(f) => f,
            None => match storage_id {
                Some(s) => (
                    Arc::from(s),
                    ReplicaState::Finalized,
                    block.gs,
                    block.num_bytes,
                ),
                None => {
                    tracing::info!(%block, dn = dn_uuid, "reportBadBlocks: no replica on that node");
                    return;
                }
            },
        };
        st.mark_corrupt(
            &dn,
            &storage,
            Block::new(block.id, gs, len),
            state,
            CorruptReason::CorruptionReported,
        );
    }

    /// Declares DataNodes dead whose last heartbeat is older than the dead interval and
    /// drops their replicas from the blocks map. Returns the uuids declared dead.
    /// (The background checker runs `heartbeat_check_pass`, which skips passes after a pause.)
    pub fn check_heartbeats(&self) -> Vec<Arc<str>> {
        let now = self.now_mono();
        let dead = self.datanodes.lock("heartbeat_check").check_dead(now);
        self.remove_dead_nodes(&dead);
        dead
    }

    /// Drops the replicas of nodes just declared dead from the blocks map.
    pub(crate) fn remove_dead_nodes(&self, dead: &[Arc<str>]) {
        for uuid in dead {
            tracing::info!(uuid = %uuid, "BLOCK* removeDeadDatanode: lost heartbeat");
            self.forget_node(uuid);
        }
    }

    /// Removes every replica on one storage from the blocks map, in chunks.
    pub(crate) fn forget_storage(&self, storage: &str) {
        let ids: Vec<u64> = self.blocks.lock("remove_node").map.storage_blocks(storage);
        for chunk in ids.chunks(self.cfg.deletion_increment) {
            let mut st = self.blocks.lock("remove_node");
            for id in chunk {
                st.remove_replica(*id, storage);
            }
        }
        let mut st = self.blocks.lock("remove_node");
        st.map.forget_storage_if_empty(storage);
        st.deleting.retain_on_storage(storage, |_| false);
        // Whatever it holds is unknown until its next full report.
        st.recon.freshness.forget(storage);
    }

    /// Removes every replica of a node from the blocks map (in chunks) and drops its
    /// pending deletions.
    pub(crate) fn forget_node(&self, uuid: &str) {
        let storages = self.blocks.lock("remove_node").map.storages_of_node(uuid);
        for storage in storages {
            self.forget_storage(&storage);
        }
        // Storages without replicas are stale again too.
        let empty: Vec<String> = self
            .datanodes
            .lock("remove_node")
            .get(uuid)
            .map(|d| d.storages.iter().map(|s| s.storage_id.clone()).collect())
            .unwrap_or_default();
        {
            let mut st = self.blocks.lock("remove_node");
            for s in &empty {
                st.recon.freshness.forget(s);
            }
        }
        let mut st = self.blocks.lock("remove_node");
        st.invalidate.remove_node(uuid);
        st.orphans.remove_node(uuid);
        st.pending.remove_node(uuid);
        st.reschedule_copies_of(uuid);
        drop(st);
        self.leases.lock().release(uuid);
    }
}
