//! `BlockManager`: the NameNode's block side behind its own locks (separate from the
//! namespace lock). Write path, locations and statistics live here; DataNode traffic in
//! `ops/reports.rs`, deletion in `ops/deletion.rs`, the other concerns in `ops/`, background
//! tasks in `monitor.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rhdfs_conf::Configuration;
use rhdfs_conf::clock::SharedClock;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::block::{Block, BlockRecovery, BlockUcState, ExpectedLocation};
use crate::config::BlockManagerConfig;
use crate::datanode_id::DatanodeId;
use crate::datanode_info::{DatanodeInfo, ReportKind};
use crate::datanodes::{DatanodeManager, Liveness};
use crate::error::BlockManagerError;
use crate::locks::{LockStat, TimedMutex};
use crate::placement::{
    ExcludedNode, PlacementPolicy, PlacementRequest,
    rack_aware::{PlacementOutcome, not_enough_replicas_detailed},
};
use crate::redundancy::decommission::AdminState;
use crate::report_leases::ReportLeases;
use crate::state::{BlockCounts, BlockState};

use crate::limits::STATS_CHUNK;

/// A replica location handed to clients: the node, and the storage on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Location {
    pub info: DatanodeInfo,
    pub storage_id: String,
    /// StorageTypeProto value (DISK = 1).
    pub storage_type: i32,
}

/// The namespace identity DataNodes learn from versionRequest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NamespaceInfo {
    pub namespace_id: u32,
    pub cluster_id: String,
    pub block_pool_id: String,
    pub ctime: u64,
}

/// Cluster-wide figures for getStats / getFsStats / dfsadmin -report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FsStats {
    pub capacity: u64,
    pub used: u64,
    pub remaining: u64,
    pub block_pool_used: u64,
    pub under_replicated: u64,
    pub corrupt_blocks: u64,
    pub missing_blocks: u64,
    pub missing_repl_one: u64,
    /// Replicas waiting in InvalidateBlocks (not yet handed to a DataNode).
    pub pending_deletion: u64,
    /// Replicas handed to DataNodes and waiting for their next heartbeat.
    pub pending_deletion_commands: u64,
    /// Blocks whose removal from the map (remove_blocks) has not run yet.
    pub pending_removal: u64,
    pub blocks_total: u64,
    /// COMPLETE blocks, and those with >= dfs.namenode.replication.min good replicas
    /// (what safe mode's threshold compares).
    pub complete_blocks: u64,
    pub safe_blocks: u64,
    pub live_datanodes: u64,
    pub dead_datanodes: u64,
    /// Live nodes whose last heartbeat is older than the stale interval.
    pub stale_datanodes: u64,
    /// Live nodes being decommissioned / decommissioned.
    pub decommissioning_datanodes: u64,
    pub decommissioned_datanodes: u64,
    /// Failed volumes of live nodes, as their heartbeats count them (Hadoop's
    /// VolumeFailuresTotal).
    pub volume_failures: u64,
    /// Capacity lost to those failures (Hadoop's EstimatedCapacityLostTotal).
    pub capacity_lost: u64,
    /// Blocks with copies scheduled and not yet received (PendingReconstructionBlocks).
    pub pending_reconstruction: u64,
}

impl FsStats {
    /// Hadoop's PendingDeletionBlocks: replicas waiting for deletion (queued, or handed out
    /// and not yet sent), plus the blocks whose removal from the map has not run yet. rhdfs
    /// removes a delete's blocks in increments after the call returns, Hadoop inside it, so
    /// without them the count could read 0 just after a delete that will delete replicas.
    pub fn pending_deletion_blocks(&self) -> u64 {
        self.pending_deletion
            .saturating_add(self.pending_deletion_commands)
            .saturating_add(self.pending_removal)
    }
}

/// A block with its locations, as getBlockLocations needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockLocations {
    pub block: Block,
    pub state: BlockUcState,
    pub locations: Vec<Location>,
    /// Every known replica is corrupt (the locations are the corrupt ones).
    pub corrupt: bool,
}

pub struct BlockManager {
    pub(crate) cfg: BlockManagerConfig,
    pub(crate) clock: SharedClock,
    pub(crate) ns: NamespaceInfo,
    pub(crate) started: Duration,
    pub(crate) datanodes: TimedMutex<DatanodeManager>,
    pub(crate) blocks: TimedMutex<BlockState>,
    pub(crate) placement: Box<dyn PlacementPolicy>,
    /// Rack mapping of DataNodes (at registration) and readers; shared with the policy.
    pub(crate) resolver: Arc<crate::topology::RackResolver>,
    pub(crate) rng: Mutex<StdRng>,
    pub(crate) replica_event: Notify,
    pub(crate) last_txid: AtomicU64,
    pub(crate) pending_removal: AtomicU64,
    pub(crate) leases: Mutex<ReportLeases>,
    /// Held while one full report is applied: reports are applied one at a time (as
    /// Hadoop's single block report processing thread), so report threads do not take
    /// turns on the blocks lock.
    pub(crate) applying_report: Mutex<()>,
    pub(crate) tasks: Mutex<Vec<JoinHandle<()>>>,
    pub(crate) stopped: AtomicBool,
    /// Safe mode (start-up or manual): no replication, invalidation or excess work is
    /// computed and heartbeats carry no commands.
    pub(crate) safe_mode: AtomicBool,
    /// `set_namespace_marks`: unknown replicas newer than this are held (MAX: no namespace).
    pub(crate) hold_above_gs: AtomicU64,
    /// The replication queues are to be filled (`ops::repl_queues`): start-up safe mode's
    /// thresholds were reached.
    pub(crate) repl_queues_wanted: AtomicBool,
    pub(crate) slow: crate::slowpeers::SlowNodes,
}

impl std::fmt::Debug for BlockManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockManager")
            .field("block_pool_id", &self.ns.block_pool_id)
            .finish_non_exhaustive()
    }
}

fn excluded_of(ids: &[DatanodeId]) -> Vec<ExcludedNode> {
    ids.iter()
        .map(|d| ExcludedNode {
            uuid: d.uuid.clone(),
            ip_addr: d.ip_addr.clone(),
            xfer_port: d.xfer_port,
        })
        .collect()
}

impl BlockManager {
    pub fn new(
        conf: &Configuration,
        clock: SharedClock,
        ns: NamespaceInfo,
    ) -> Result<Arc<Self>, BlockManagerError> {
        Ok(Self::with_config(
            BlockManagerConfig::from_conf(conf)?,
            clock,
            ns,
        ))
    }

    /// Builds from explicit settings (tests pick a seed here).
    pub fn with_config(
        cfg: BlockManagerConfig,
        clock: SharedClock,
        ns: NamespaceInfo,
    ) -> Arc<Self> {
        let started = clock.monotonic();
        let rng = rhdfs_conf::rng::seeded_rng(cfg.seed);
        let resolver = Arc::new(crate::topology::RackResolver::from_config(
            &cfg.placement.topology,
        ));
        Arc::new(BlockManager {
            datanodes: TimedMutex::new("datanodes", DatanodeManager::new(cfg.liveness)),
            blocks: TimedMutex::new("blocks", BlockState::new(cfg.min_replication)),
            placement: crate::placement::rack_aware::build_policy_with(
                &cfg.placement,
                resolver.clone(),
            ),
            resolver,
            rng: Mutex::new(rng),
            replica_event: Notify::new(),
            last_txid: AtomicU64::new(0),
            pending_removal: AtomicU64::new(0),
            applying_report: Mutex::new(()),
            leases: Mutex::new(ReportLeases::new(
                cfg.max_report_leases,
                cfg.report_lease_length,
            )),
            tasks: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
            safe_mode: AtomicBool::new(false),
            hold_above_gs: AtomicU64::new(u64::MAX),
            repl_queues_wanted: AtomicBool::new(false),
            slow: crate::slowpeers::SlowNodes::new(cfg.slow, clock.clone()),
            started,
            cfg,
            clock,
            ns,
        })
    }

    pub fn config(&self) -> &BlockManagerConfig {
        &self.cfg
    }

    pub fn namespace_info(&self) -> &NamespaceInfo {
        &self.ns
    }

    pub fn block_pool_id(&self) -> &str {
        &self.ns.block_pool_id
    }

    /// Slow peer / slow disk reports and the slow node set (JMX SlowPeersReport and
    /// SlowDisksReport come from here).
    pub fn slow_nodes(&self) -> &crate::slowpeers::SlowNodes {
        &self.slow
    }

    /// The namespace's last transaction id, reported in heartbeat responses.
    pub fn set_last_txid(&self, txid: u64) {
        self.last_txid.store(txid, Ordering::Relaxed);
    }

    /// The last transaction id the namespace reported (heartbeat answers carry it).
    pub fn last_txid(&self) -> u64 {
        self.last_txid.load(Ordering::Relaxed)
    }

    pub(crate) fn now_mono(&self) -> Duration {
        self.clock.monotonic()
    }

    /// Longest lock holds and waits, per lock and operation kind.
    pub fn lock_stats(&self) -> Vec<LockStat> {
        let mut v = self.blocks.stats();
        v.extend(self.datanodes.stats());
        v
    }

    pub fn reset_lock_stats(&self) {
        self.blocks.reset_stats();
        self.datanodes.reset_stats();
    }

    // ---- placement ----

    /// Chooses up to `replication` targets for a new block of file `src`.
    pub fn choose_targets(
        &self,
        src: &str,
        replication: usize,
        writer_host: Option<&str>,
        excluded: &[DatanodeId],
        favored: &[String],
        block_size: u64,
    ) -> Result<Vec<Location>, BlockManagerError> {
        let excluded = excluded_of(excluded);
        let req = PlacementRequest {
            count: replication,
            writer_host,
            excluded: &excluded,
            favored,
            existing: &[],
            block_size,
        };
        let min = self.cfg.min_replication.min(replication.max(1));
        let (chosen, outcome) = self.place_detailed(&req, Some(min));
        if chosen.len() < min {
            let running = self.live_datanodes();
            return Err(BlockManagerError::NotEnoughReplicas(
                not_enough_replicas_detailed(src, self.cfg.min_replication, running, &outcome),
            ));
        }
        Ok(chosen)
    }

    /// Counts a block on its way to each (node uuid, storage type) (`crate::scheduled`).
    pub(crate) fn note_scheduled(&self, targets: &[(String, i32)]) {
        if targets.is_empty() {
            return;
        }
        let mut dns = self.datanodes.lock("blocks_scheduled");
        for (uuid, t) in targets {
            if let Some(d) = dns.get_mut(uuid) {
                d.scheduled.increment(*t);
            }
        }
    }

    /// Chooses `n` more nodes for an existing pipeline (getAdditionalDatanode). Returns only
    /// the new nodes; fewer than `n` (even none) when the cluster has no more.
    pub fn additional_datanodes(
        &self,
        _src: &str,
        existing: &[String],
        excluded: &[DatanodeId],
        n: usize,
        block_size: u64,
    ) -> Result<Vec<Location>, BlockManagerError> {
        let excluded = excluded_of(excluded);
        let req = PlacementRequest {
            count: n,
            writer_host: None,
            excluded: &excluded,
            favored: &[],
            existing,
            block_size,
        };
        Ok(self.place(&req))
    }

    pub(crate) fn place(&self, req: &PlacementRequest<'_>) -> Vec<Location> {
        self.place_detailed(req, None).0
    }

    /// The chosen targets, and the policy's account of the choice (rejection reasons).
    /// With `schedule_min`, a choice of at least that many targets is also counted as a
    /// block scheduled to each (`crate::scheduled`) under the same hold of the datanodes
    /// lock, so concurrent writers, each seeing the others' blocks, never over-commit a
    /// node's free space.
    pub(crate) fn place_detailed(
        &self,
        req: &PlacementRequest<'_>,
        schedule_min: Option<usize>,
    ) -> (Vec<Location>, PlacementOutcome) {
        let mut dns = self.datanodes.lock("choose_targets");
        let now = self.now_mono();
        let mut view = dns.placement_view(now);
        self.slow.mark_views(&mut view, || dns.all().map(|d| &d.id));
        let outcome = {
            let mut rng = self.rng.lock();
            self.placement.choose_detailed(req, &view, &mut rng)
        };
        let locations = outcome
            .chosen
            .iter()
            .copied()
            .filter_map(|i| {
                let d = dns.get(&view[i].uuid)?;
                let storage = d.best_storage();
                Some(Location {
                    info: DatanodeInfo::of(d, dns.liveness_of(d, now)),
                    storage_id: storage.map(|s| s.storage_id.clone()).unwrap_or_default(),
                    storage_type: storage.map_or(1, |s| s.storage_type),
                })
            })
            .collect::<Vec<_>>();
        if schedule_min.is_some_and(|min| locations.len() >= min) {
            for l in &locations {
                if let Some(d) = dns.get_mut(&l.info.id.uuid) {
                    d.scheduled.increment(l.storage_type);
                }
            }
        }
        (locations, outcome)
    }

    // ---- write path ----

    /// A new block under construction at `targets` (the namespace keeps which file it is
    /// of).
    pub fn add_block_under_construction(
        &self,
        block: Block,
        replication: u16,
        targets: &[Location],
    ) {
        let expected = targets
            .iter()
            .map(|l| ExpectedLocation {
                dn_uuid: Arc::from(l.info.id.uuid.as_str()),
                storage_id: Arc::from(l.storage_id.as_str()),
            })
            .collect();
        let mut st = self.blocks.lock("add_block");
        st.add_under_construction(block, replication, expected);
        // A standby may have heard of the replicas before the edit adding the block.
        st.adopt_held(block.id);
    }

    /// UC -> COMMITTED with the client's length and generation stamp (COMPLETE at once if
    /// enough replicas were already reported).
    pub fn commit_block(&self, block: Block) -> Result<(), BlockManagerError> {
        let completed = self.blocks.lock("commit").commit(block)?;
        if completed {
            self.replica_event.notify_waiters();
        }
        Ok(())
    }

    /// COMMITTED -> COMPLETE when >= dfs.namenode.replication.min finalized replicas; true
    /// if the block is COMPLETE.
    pub fn try_complete_block(&self, id: u64) -> bool {
        self.blocks.lock("complete").try_complete(id)
    }

    /// Waits up to `timeout` for the block to be COMPLETE or to have minReplication
    /// finalized replicas. True if it does.
    pub async fn wait_for_min_replication(&self, id: u64, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.replica_event.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.blocks.lock("wait_min").has_min_replicas(id) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.blocks.lock("wait_min").has_min_replicas(id);
            }
        }
    }

    pub fn get_block(&self, id: u64) -> Option<(Block, BlockUcState)> {
        self.blocks
            .lock("get_block")
            .map
            .get(id)
            .map(|i| (i.block(id), i.state))
    }

    /// Live locations: the expected pipeline for blocks not yet COMPLETE, otherwise the
    /// good replicas; stale nodes last.
    pub fn locations(&self, id: u64) -> Vec<Location> {
        self.block_locations(id)
            .map(|b| b.locations)
            .unwrap_or_default()
    }

    /// The block, its state and its locations (corrupt=true when only corrupt replicas exist).
    pub fn block_locations(&self, id: u64) -> Option<BlockLocations> {
        let (block, state, picks, corrupt) = {
            let st = self.blocks.lock("locations");
            let info = st.map.get(id)?;
            let mut picks: Vec<(Arc<str>, Arc<str>)> = Vec::new();
            let mut corrupt = false;
            if !info.is_complete() && !info.uc().expected().is_empty() {
                picks.extend(
                    info.uc()
                        .expected()
                        .iter()
                        .map(|e| (e.dn_uuid.clone(), e.storage_id.clone())),
                );
            } else {
                picks.extend(
                    info.replicas
                        .iter()
                        .filter(|r| {
                            r.corrupt().is_none() && (r.is_good_finalized() || !info.is_complete())
                        })
                        .map(|r| (st.map.dn_of(r).clone(), st.map.storage_id_of(r).clone())),
                );
                if picks.is_empty() && info.corrupt_replicas() > 0 {
                    corrupt = true;
                    picks.extend(
                        info.replicas
                            .iter()
                            .filter(|r| r.corrupt().is_some())
                            .map(|r| (st.map.dn_of(r).clone(), st.map.storage_id_of(r).clone())),
                    );
                }
            }
            (info.block(id), info.state, picks, corrupt)
        };
        let dns = self.datanodes.lock("locations");
        let now = self.now_mono();
        let mut locs: Vec<(bool, Location)> = picks
            .into_iter()
            .filter_map(|(dn, storage)| {
                let d = dns.get(&dn)?;
                let live = dns.liveness_of(d, now);
                if live == Liveness::Dead {
                    return None;
                }
                Some((
                    live == Liveness::Stale,
                    Location {
                        info: DatanodeInfo::of(d, live),
                        storage_type: d.storage(&storage).map_or(1, |s| s.storage_type),
                        storage_id: storage.to_string(),
                    },
                ))
            })
            .collect();
        locs.sort_by_key(|(stale, _)| *stale);
        Some(BlockLocations {
            block,
            state,
            locations: locs.into_iter().map(|(_, l)| l).collect(),
            corrupt,
        })
    }

    /// Records a pipeline recovery: new GS/length and the new pipeline members.
    pub fn update_pipeline(
        &self,
        old: Block,
        new: Block,
        new_nodes: &[String],
        storage_ids: &[String],
    ) {
        if old.id != new.id {
            tracing::warn!(%old, %new, "updatePipeline with different block ids ignored");
            return;
        }
        let expected: Vec<ExpectedLocation> = {
            let dns = self.datanodes.lock("update_pipeline");
            new_nodes
                .iter()
                .enumerate()
                .map(|(i, uuid)| {
                    let storage = storage_ids
                        .get(i)
                        .filter(|s| !s.is_empty())
                        .cloned()
                        .or_else(|| {
                            dns.get(uuid)
                                .and_then(|d| d.best_storage())
                                .map(|s| s.storage_id.clone())
                        })
                        .unwrap_or_default();
                    ExpectedLocation {
                        dn_uuid: Arc::from(uuid.as_str()),
                        storage_id: Arc::from(storage.as_str()),
                    }
                })
                .collect()
        };
        self.blocks
            .lock("update_pipeline")
            .update_pipeline(new, expected);
    }

    /// Starts (or restarts) the recovery of block `id` under `recovery_id` (Hadoop's
    /// initializeBlockRecovery): the block becomes UNDER_RECOVERY and a primary is chosen
    /// among its live expected locations, the most recently heartbeating node not yet
    /// tried. Returns the primary's location with the locations the recovery is to
    /// synchronize (as Hadoop's getBlockRecoveryCommand: the live ones that are not stale
    /// when there are at least two of those, else every live one), or None when no
    /// location is alive (the block stays UNDER_RECOVERY until a later attempt finds one).
    pub fn initialize_block_recovery(
        &self,
        id: u64,
        recovery_id: u64,
    ) -> Result<Option<(Location, Vec<Location>)>, BlockManagerError> {
        let expected: Vec<(Arc<str>, Arc<str>)> = {
            let st = self.blocks.lock("recovery");
            let info = st.map.get(id).ok_or(BlockManagerError::UnknownBlock(id))?;
            info.uc()
                .expected()
                .iter()
                .map(|e| (e.dn_uuid.clone(), e.storage_id.clone()))
                .collect()
        };
        // Live expected locations in pipeline order: node, last heartbeat, location, stale.
        let live: Vec<(Arc<str>, Duration, Location, bool)> = {
            let dns = self.datanodes.lock("recovery");
            let now = self.now_mono();
            expected
                .iter()
                .filter_map(|(dn, storage)| {
                    let d = dns.get(dn)?;
                    let live = dns.liveness_of(d, now);
                    if live == Liveness::Dead {
                        return None;
                    }
                    let loc = Location {
                        info: DatanodeInfo::of(d, live),
                        storage_type: d.storage(storage).map_or(1, |s| s.storage_type),
                        storage_id: storage.to_string(),
                    };
                    Some((dn.clone(), d.last_update_mono, loc, live == Liveness::Stale))
                })
                .collect()
        };
        let last_heartbeat = |dn: &str| live.iter().find(|(n, ..)| &**n == dn).map(|(_, t, ..)| *t);
        let primary = {
            let mut st = self.blocks.lock("recovery");
            st.initialize_recovery(id, recovery_id, &last_heartbeat)?
        };
        let Some(primary) = primary.and_then(|p| {
            live.iter()
                .find(|(n, ..)| *n == p)
                .map(|(_, _, l, _)| l.clone())
        }) else {
            return Ok(None);
        };
        let fresh = live.iter().filter(|(.., stale)| !stale).count();
        let locations = live
            .into_iter()
            .filter(|(.., stale)| fresh < 2 || !stale)
            .map(|(_, _, l, _)| l)
            .collect();
        Ok(Some((primary, locations)))
    }

    /// The recovery of block `id` while it is UNDER_RECOVERY: its recovery id, primary
    /// and the primaries tried so far.
    pub fn block_recovery(&self, id: u64) -> Option<BlockRecovery> {
        let st = self.blocks.lock("recovery");
        let info = st.map.get(id)?;
        if info.state != BlockUcState::UnderRecovery {
            return None;
        }
        info.uc().recovery().cloned()
    }

    /// True when `uuid` is a registered DataNode not declared dead.
    pub fn is_datanode_alive(&self, uuid: &str) -> bool {
        let now = self.now_mono();
        self.datanodes.lock("liveness").is_alive(uuid, now)
    }

    /// Room for `additional` more blocks in the blocks map, before that many `load_block`s.
    pub fn reserve_blocks(&self, additional: usize) {
        self.blocks.lock("reserve_blocks").map.reserve(additional);
    }

    /// Adds a block loaded from the image or edit log (NameNode restart); its replicas
    /// come from the DataNodes' block reports.
    pub fn load_block(&self, block: Block, replication: u16, state: BlockUcState) {
        self.blocks
            .lock("load_block")
            .load_block(block, replication, state);
    }

    /// `load_block` for each of `blocks` (block, replication, state), holding the blocks
    /// lock for at most `LOAD_CHUNK` of them at a time.
    pub fn load_blocks(&self, blocks: &[(Block, u16, BlockUcState)]) {
        for chunk in blocks.chunks(crate::limits::LOAD_CHUNK) {
            let mut st = self.blocks.lock("load_block");
            for &(block, replication, state) in chunk {
                st.load_block(block, replication, state);
            }
        }
    }

    /// Enters or leaves safe mode as the namespace sees it. In safe mode (start-up, while
    /// block reports are still arriving and every block looks under-replicated, or manual)
    /// no reconstruction, invalidation or excess work is computed and heartbeats carry no
    /// commands, so nothing a report or a mistake put in the queues reaches a DataNode.
    pub fn set_safe_mode(&self, on: bool) {
        self.safe_mode.store(on, Ordering::Relaxed);
    }

    pub fn in_safe_mode(&self) -> bool {
        self.safe_mode.load(Ordering::Relaxed)
    }

    /// The namespace's last generation stamp and its orphan hold floor (`u64::MAX` for
    /// none): replicas of unknown blocks newer than the lower of the two are held.
    pub fn set_namespace_marks(&self, last_gs: u64, hold_floor: u64) {
        self.hold_above_gs
            .store(last_gs.min(hold_floor), Ordering::Relaxed);
    }

    /// The blocks state under its lock, with the namespace's marks (`set_namespace_marks`)
    /// current: what report processing classifies unknown replicas against.
    pub(crate) fn blocks_for_reports(
        &self,
        op: &'static str,
    ) -> crate::locks::TimedGuard<'_, BlockState> {
        let mut st = self.blocks.lock(op);
        st.hold_above_gs = self.hold_above_gs.load(Ordering::Relaxed);
        st
    }

    /// Totals of the held orphan replicas.
    pub fn orphan_counts(&self) -> crate::orphans::OrphanCounts {
        self.blocks.lock("orphans").orphans.counts()
    }

    /// Held replicas and bytes with a generation stamp above `gs`: from the future for a
    /// namespace whose last generation stamp is `gs`.
    pub fn orphans_above(&self, gs: u64) -> (u64, u64) {
        self.blocks.lock("orphans").orphans.above(gs)
    }

    /// Every held orphan replica (fsck -list-orphans).
    pub fn held_orphans(&self) -> Vec<crate::orphans::HeldReplica> {
        self.blocks.lock("orphans").orphans.list()
    }

    /// Queues every held replica (or those of `class`) for deletion; returns how many.
    pub fn release_orphans(&self, class: Option<crate::orphans::OrphanClass>) -> usize {
        let n = self.blocks.lock("release_orphans").release_orphans(class);
        if n > 0 {
            tracing::info!(replicas = n, "held orphan replicas released for deletion");
        }
        n
    }

    /// Drops a block the client abandoned; any replica written goes to InvalidateBlocks.
    pub fn abandon_block(&self, id: u64) {
        self.blocks.lock("abandon_block").remove_block(id);
    }

    /// New expected replication; surplus replicas of COMPLETE blocks are deleted.
    /// Raising replication does not copy replicas yet (no reconstruction work).
    pub fn set_replication(&self, ids: &[u64], replication: u16) {
        for chunk in ids.chunks(self.cfg.deletion_increment) {
            self.set_replication_chunk(chunk, replication);
        }
    }

    // ---- reports for clients and operators ----

    /// `(safe_blocks, complete_blocks)` as `fs_stats` counts them: what start-up safe
    /// mode compares, checked every few hundred milliseconds while the block reports
    /// arrive. Read from the blocks map's `SafeCounts` under one short hold, where the
    /// scan of every block took about a fifth of the NameNode's CPU during a report storm
    /// and held the blocks lock against the reports; by `fs_stats`'s scan when a node is
    /// decommissioned (its replicas do not count).
    pub fn safe_block_counts(&self) -> (u64, u64) {
        {
            let st = self.blocks.lock("safe_counts");
            if !st.admin.any_decommissioned() {
                let c = st.map.safe_counts();
                return (c.safe, c.complete);
            }
        }
        let s = self.fs_stats();
        (s.safe_blocks, s.complete_blocks)
    }

    pub fn fs_stats(&self) -> FsStats {
        #[cfg(debug_assertions)]
        {
            // Tests: the kept counts are those a scan finds (small maps: one hold).
            let st = self.blocks.lock("safe_counts_check");
            if st.map.len() <= STATS_CHUNK && !st.admin.any_decommissioned() {
                assert_eq!(
                    st.map.safe_counts(),
                    st.map.scan_safe_counts(),
                    "the blocks map's safe-mode counts drifted from its blocks"
                );
            }
        }
        // Counted in chunks so a large blocks map never holds the lock for long: each hold
        // takes up after the last id the previous one counted (no list of every id, which
        // took one long hold to make).
        let (pending_deletion, pending_cmds, pending_reconstruction) = {
            let st = self.blocks.lock("stats");
            (
                st.invalidate.num_blocks() as u64,
                st.pending.len() as u64,
                st.recon.pending_blocks() as u64,
            )
        };
        let mut counts = BlockCounts::default();
        let mut after = None;
        loop {
            let st = self.blocks.lock("stats");
            let ids = st.map.ids_after(after, STATS_CHUNK);
            let Some(&last) = ids.last() else { break };
            after = Some(last);
            for id in ids {
                if let Some(info) = st.map.get(id) {
                    counts.blocks_total += 1;
                    st.count_block(&mut counts, id, info);
                }
            }
        }
        let dns = self.datanodes.lock("stats");
        let now = self.now_mono();
        let mut s = FsStats {
            under_replicated: counts.under_replicated,
            corrupt_blocks: counts.corrupt_blocks,
            missing_blocks: counts.missing_blocks,
            missing_repl_one: counts.missing_repl_one,
            blocks_total: counts.blocks_total,
            complete_blocks: counts.complete_blocks,
            safe_blocks: counts.safe_blocks,
            pending_deletion,
            pending_deletion_commands: pending_cmds,
            pending_removal: self.pending_removal.load(Ordering::Relaxed),
            pending_reconstruction,
            ..FsStats::default()
        };
        for d in dns.all() {
            match dns.liveness_of(d, now) {
                Liveness::Dead => {
                    s.dead_datanodes += 1;
                    continue;
                }
                Liveness::Stale => s.stale_datanodes += 1,
                Liveness::Live => {}
            }
            s.live_datanodes += 1;
            match d.admin {
                AdminState::DecommissionInProgress => s.decommissioning_datanodes += 1,
                AdminState::Decommissioned => s.decommissioned_datanodes += 1,
                AdminState::Normal => {}
            }
            s.volume_failures += u64::from(d.volume_failures);
            if let Some(f) = &d.volume_failure_summary {
                s.capacity_lost += f.estimated_capacity_lost_total;
            }
            s.capacity += d.capacity();
            s.used += d.dfs_used();
            s.remaining += d.remaining();
            s.block_pool_used += d.block_pool_used();
        }
        s
    }

    /// The nodes of one kind, by transfer address (getDatanodeReport, dfsadmin -report).
    pub fn datanode_report(&self, kind: ReportKind) -> Vec<DatanodeInfo> {
        let (per_node, notes) = {
            let st = self.blocks.lock("datanode_report");
            (st.map.replicas_per_node(), st.admin.notes.clone())
        };
        let dns = self.datanodes.lock("datanode_report");
        let now = self.now_mono();
        let mut v: Vec<(String, DatanodeInfo)> = dns
            .all()
            .filter_map(|d| {
                let live = dns.liveness_of(d, now);
                let keep = match kind {
                    ReportKind::All => true,
                    ReportKind::Live => live != Liveness::Dead,
                    ReportKind::Dead => live == Liveness::Dead,
                    ReportKind::Decommissioning => d.admin.is_decommission_in_progress(),
                };
                keep.then(|| {
                    let n = per_node.get(&d.uuid).copied().unwrap_or(0);
                    let info = DatanodeInfo {
                        admin_note: notes.get(&d.uuid).cloned(),
                        ..DatanodeInfo::for_report(d, live, n)
                    };
                    (d.id.xfer_addr(), info)
                })
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.into_iter().map(|(_, i)| i).collect()
    }

    /// (ip, HTTP port) of each live DataNode in service, for WebHDFS redirects.
    pub fn live_http_endpoints(&self) -> Vec<(String, u32)> {
        let now = self.now_mono();
        let dns = self.datanodes.lock("live_http_endpoints");
        dns.live(now)
            .into_iter()
            .filter(|d| !d.admin.is_out_of_service())
            .map(|d| (d.id.ip_addr.clone(), d.id.info_port))
            .collect()
    }

    pub fn live_datanodes(&self) -> usize {
        let now = self.now_mono();
        self.datanodes.lock("live_count").live_count(now)
    }
}
