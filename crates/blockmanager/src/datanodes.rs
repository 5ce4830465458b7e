//! DataNode registry: registration (with the node's network location), heartbeats with
//! storage reports, and liveness (stale / dead) decided against an injected clock.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::placement::NodeView;
use crate::redundancy::decommission::AdminState;
use crate::scheduled::BlocksScheduled;
use crate::topology::{TopologyError, depth};

/// The rack of a node no mapping places (`topology::DEFAULT_RACK`).
pub use crate::topology::DEFAULT_RACK;

pub use crate::datanode_id::DatanodeId;

/// One storage (volume) of a DataNode, from its heartbeat.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StorageReport {
    pub storage_id: String,
    /// StorageTypeProto value (DISK = 1).
    pub storage_type: i32,
    pub failed: bool,
    pub capacity: u64,
    pub dfs_used: u64,
    pub remaining: u64,
    pub block_pool_used: u64,
    /// As reported; None: computed as capacity - dfsUsed - remaining.
    pub non_dfs_used: Option<u64>,
}

/// Liveness of a DataNode at some instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    Live,
    Stale,
    Dead,
}

#[derive(Clone, Debug)]
pub struct DatanodeDescriptor {
    pub id: DatanodeId,
    pub uuid: Arc<str>,
    pub software_version: String,
    pub storages: Vec<StorageReport>,
    pub xceiver_count: u32,
    pub xmits_in_progress: u32,
    /// Wall-clock ms of the last heartbeat (or registration).
    pub last_update_ms: u64,
    /// Monotonic time of the last heartbeat (or registration).
    pub last_update_mono: Duration,
    /// Set by the heartbeat checker; cleared by re-registration.
    pub dead: bool,
    /// Wall-clock ms and monotonic time of the last full block report (0 / zero: none).
    pub last_block_report_ms: u64,
    pub last_block_report_mono: Duration,
    /// Normal, decommission in progress or decommissioned (`redundancy::decommission`).
    pub admin: AdminState,
    /// The rack path resolved at registration (Hadoop's networkLocation), e.g. "/r1".
    pub network_location: String,
    /// Blocks on their way to this node (`crate::scheduled`).
    pub scheduled: BlocksScheduled,
    /// Failed volumes the node reported in its last heartbeat (Hadoop's volFailures).
    pub volume_failures: u32,
    /// Its VolumeFailureSummary, when it has failed volumes.
    pub volume_failure_summary: Option<crate::volume_failures::VolumeFailureSummary>,
}

impl DatanodeDescriptor {
    pub fn capacity(&self) -> u64 {
        self.live_storages().map(|s| s.capacity).sum()
    }
    pub fn dfs_used(&self) -> u64 {
        self.live_storages().map(|s| s.dfs_used).sum()
    }
    pub fn remaining(&self) -> u64 {
        self.live_storages().map(|s| s.remaining).sum()
    }
    pub fn block_pool_used(&self) -> u64 {
        self.live_storages().map(|s| s.block_pool_used).sum()
    }
    pub fn non_dfs_used(&self) -> u64 {
        self.live_storages()
            .map(|s| {
                s.non_dfs_used.unwrap_or_else(|| {
                    s.capacity
                        .saturating_sub(s.dfs_used)
                        .saturating_sub(s.remaining)
                })
            })
            .sum()
    }
    fn live_storages(&self) -> impl Iterator<Item = &StorageReport> {
        self.storages.iter().filter(|s| !s.failed)
    }

    /// Free space of each non-failed storage of the type new replicas go to (the best
    /// storage's), for Hadoop's `getRemaining(type, minSize)`.
    pub fn type_remaining(&self) -> Vec<u64> {
        let Some(t) = self.best_storage().map(|s| s.storage_type) else {
            return Vec::new();
        };
        self.live_storages()
            .filter(|s| s.storage_type == t)
            .map(|s| s.remaining)
            .collect()
    }

    /// Notes one more block on its way to the node's best storage.
    pub fn schedule_block(&mut self) {
        if let Some(t) = self.best_storage().map(|s| s.storage_type) {
            self.scheduled.increment(t);
        }
    }

    /// The storage a new replica goes to: the non-failed one with most room.
    pub fn best_storage(&self) -> Option<&StorageReport> {
        self.live_storages().max_by_key(|s| s.remaining)
    }

    pub fn storage(&self, storage_id: &str) -> Option<&StorageReport> {
        self.storages.iter().find(|s| s.storage_id == storage_id)
    }
}

/// Liveness thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LivenessConfig {
    pub stale_after: Duration,
    pub dead_after: Duration,
}

impl LivenessConfig {
    /// Hadoop's rules: stale interval floored at `stale_min_heartbeats × heartbeat`;
    /// dead after `2 × recheck + 10 × heartbeat`.
    pub fn from_intervals(
        heartbeat: Duration,
        recheck: Duration,
        stale: Duration,
        stale_min_heartbeats: u32,
    ) -> Self {
        LivenessConfig {
            stale_after: stale.max(heartbeat * stale_min_heartbeats),
            dead_after: recheck * 2 + heartbeat * 10,
        }
    }
}

/// What a registration changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegisterOutcome {
    pub new_node: bool,
    pub was_dead: bool,
    /// Another uuid that had the same transfer address and was dropped (a re-formatted node).
    pub replaced: Option<Arc<str>>,
}

/// Liveness events since the NameNode started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LivenessCounters {
    /// Successful registrations, first ones and re-registrations alike.
    pub registrations: u64,
    /// Nodes the heartbeat checker declared dead.
    pub declared_dead: u64,
    /// Heartbeat checker passes that scanned, and those skipped or not applied after the
    /// checker was held up.
    pub heartbeat_scans: u64,
    pub skipped_scans: u64,
}

#[derive(Debug)]
pub struct DatanodeManager {
    nodes: HashMap<Arc<str>, DatanodeDescriptor>,
    liveness: LivenessConfig,
    /// Set once two racks held nodes at the same time (Hadoop's
    /// hasClusterEverBeenMultiRack): placement checks apply from then on.
    ever_multi_rack: bool,
    counters: LivenessCounters,
}

impl DatanodeManager {
    pub fn new(liveness: LivenessConfig) -> Self {
        DatanodeManager {
            nodes: HashMap::new(),
            liveness,
            ever_multi_rack: false,
            counters: LivenessCounters::default(),
        }
    }

    pub fn counters(&self) -> LivenessCounters {
        self.counters
    }

    /// Counts a pass of the heartbeat checker: one that scanned, or one skipped.
    pub fn record_heartbeat_pass(&mut self, scanned: bool) {
        if scanned {
            self.counters.heartbeat_scans += 1;
        } else {
            self.counters.skipped_scans += 1;
        }
    }

    pub fn liveness_config(&self) -> LivenessConfig {
        self.liveness
    }

    /// Records a registration on rack `location`; a known uuid is updated in place (its
    /// location too) and counts as alive again. Refused, changing nothing, when the rack's
    /// depth differs from that of the other nodes not dead (Hadoop's NetworkTopology.add:
    /// all leaves at one level).
    pub fn register(
        &mut self,
        id: DatanodeId,
        software_version: &str,
        location: &str,
        now_ms: u64,
        now_mono: Duration,
    ) -> Result<RegisterOutcome, TopologyError> {
        let mut outcome = RegisterOutcome::default();
        let same_addr: Option<Arc<str>> = self
            .nodes
            .values()
            .find(|d| {
                *d.uuid != *id.uuid && d.id.ip_addr == id.ip_addr && d.id.xfer_port == id.xfer_port
            })
            .map(|d| d.uuid.clone());
        let level = depth(location);
        let conflict = self.nodes.values().any(|d| {
            *d.uuid != *id.uuid
                && same_addr.as_deref() != Some(&*d.uuid)
                && self.liveness_of(d, now_mono) != Liveness::Dead
                && depth(&d.network_location) != level
        });
        if conflict {
            return Err(TopologyError::Invalid(format!(
                "{}/{}",
                location.trim_end_matches('/'),
                id.xfer_addr()
            )));
        }
        if let Some(old) = same_addr {
            self.nodes.remove(&old);
            outcome.replaced = Some(old);
        }
        match self.nodes.get_mut(id.uuid.as_str()) {
            Some(d) => {
                outcome.was_dead = d.dead;
                if d.network_location != location {
                    tracing::info!(uuid = %d.uuid, from = %d.network_location, to = location, "DataNode moved to another rack");
                }
                d.id = id;
                d.software_version = software_version.to_string();
                d.dead = false;
                d.last_update_ms = now_ms;
                d.last_update_mono = now_mono;
                d.network_location = location.to_string();
                // A (re)started node's first heartbeat says again which volumes failed.
                d.volume_failures = 0;
            }
            None => {
                outcome.new_node = true;
                let uuid: Arc<str> = Arc::from(id.uuid.as_str());
                self.nodes.insert(
                    uuid.clone(),
                    DatanodeDescriptor {
                        id,
                        uuid,
                        software_version: software_version.to_string(),
                        storages: Vec::new(),
                        xceiver_count: 0,
                        xmits_in_progress: 0,
                        last_update_ms: now_ms,
                        last_update_mono: now_mono,
                        dead: false,
                        last_block_report_ms: 0,
                        last_block_report_mono: Duration::ZERO,
                        admin: AdminState::Normal,
                        network_location: location.to_string(),
                        scheduled: BlocksScheduled::new(now_mono),
                        volume_failures: 0,
                        volume_failure_summary: None,
                    },
                );
            }
        }
        if !self.ever_multi_rack && self.num_racks(now_mono) > 1 {
            tracing::info!("The cluster has become multi-rack");
            self.ever_multi_rack = true;
        }
        self.counters.registrations += 1;
        Ok(outcome)
    }

    /// Racks holding a node that is not dead (Hadoop's NetworkTopology.getNumOfRacks:
    /// dead nodes leave the topology, decommissioned ones stay).
    pub fn num_racks(&self, now_mono: Duration) -> usize {
        let mut racks: Vec<&str> = self
            .nodes
            .values()
            .filter(|d| self.liveness_of(d, now_mono) != Liveness::Dead)
            .map(|d| d.network_location.as_str())
            .collect();
        racks.sort_unstable();
        racks.dedup();
        racks.len()
    }

    /// True once nodes on two racks were registered at the same time.
    pub fn ever_multi_rack(&self) -> bool {
        self.ever_multi_rack
    }

    /// Records a heartbeat. False if the node is unknown or was declared dead: it must
    /// register again (DNA_REGISTER).
    pub fn heartbeat(
        &mut self,
        uuid: &str,
        reports: Vec<StorageReport>,
        xceiver_count: u32,
        xmits_in_progress: u32,
        now_ms: u64,
        now_mono: Duration,
    ) -> bool {
        let Some(d) = self.nodes.get_mut(uuid) else {
            return false;
        };
        if d.dead {
            return false;
        }
        // Storages not in this report keep their last values (a report lists them all).
        for r in reports {
            match d.storages.iter_mut().find(|s| s.storage_id == r.storage_id) {
                Some(s) => *s = r,
                None => d.storages.push(r),
            }
        }
        d.xceiver_count = xceiver_count;
        d.xmits_in_progress = xmits_in_progress;
        d.scheduled.roll(now_mono);
        d.last_update_ms = now_ms;
        d.last_update_mono = now_mono;
        true
    }

    /// Makes sure a storage named in a report is known, so its blocks can be attributed.
    pub fn ensure_storage(&mut self, uuid: &str, storage_id: &str, storage_type: i32) {
        if let Some(d) = self.nodes.get_mut(uuid)
            && d.storage(storage_id).is_none()
        {
            d.storages.push(StorageReport {
                storage_id: storage_id.to_string(),
                storage_type,
                ..StorageReport::default()
            });
        }
    }

    /// Records the time of a full block report from `uuid`.
    pub fn block_report_done(&mut self, uuid: &str, now_ms: u64, now_mono: Duration) {
        if let Some(d) = self.nodes.get_mut(uuid) {
            d.last_block_report_ms = now_ms;
            d.last_block_report_mono = now_mono;
        }
    }

    pub fn liveness_of(&self, d: &DatanodeDescriptor, now_mono: Duration) -> Liveness {
        let since = now_mono.saturating_sub(d.last_update_mono);
        if d.dead || since > self.liveness.dead_after {
            Liveness::Dead
        } else if since > self.liveness.stale_after {
            Liveness::Stale
        } else {
            Liveness::Live
        }
    }

    /// Marks nodes whose last heartbeat is older than the dead interval; returns those
    /// newly declared dead.
    pub fn check_dead(&mut self, now_mono: Duration) -> Vec<Arc<str>> {
        let out = self.expired(now_mono);
        self.mark_dead(&out);
        out
    }

    /// Nodes not yet declared dead whose last heartbeat is older than the dead interval,
    /// sorted by uuid.
    pub fn expired(&self, now_mono: Duration) -> Vec<Arc<str>> {
        let dead_after = self.liveness.dead_after;
        let mut out: Vec<Arc<str>> = self
            .nodes
            .values()
            .filter(|d| !d.dead && now_mono.saturating_sub(d.last_update_mono) > dead_after)
            .map(|d| d.uuid.clone())
            .collect();
        out.sort();
        out
    }

    /// Declares these nodes dead (they must register again).
    pub fn mark_dead(&mut self, uuids: &[Arc<str>]) {
        for uuid in uuids {
            if let Some(d) = self.nodes.get_mut(uuid)
                && !d.dead
            {
                d.dead = true;
                self.counters.declared_dead += 1;
            }
        }
    }

    pub fn get_mut(&mut self, uuid: &str) -> Option<&mut DatanodeDescriptor> {
        self.nodes.get_mut(uuid)
    }

    pub fn get(&self, uuid: &str) -> Option<&DatanodeDescriptor> {
        self.nodes.get(uuid)
    }

    /// Sets a node's admin state; false if the node is unknown.
    pub fn set_admin(&mut self, uuid: &str, state: AdminState) -> bool {
        self.nodes.get_mut(uuid).map(|d| d.admin = state).is_some()
    }

    pub fn is_alive(&self, uuid: &str, now_mono: Duration) -> bool {
        self.nodes
            .get(uuid)
            .is_some_and(|d| self.liveness_of(d, now_mono) != Liveness::Dead)
    }

    pub fn all(&self) -> impl Iterator<Item = &DatanodeDescriptor> {
        self.nodes.values()
    }

    /// Nodes not dead, sorted by uuid (a stable order for seeded choices).
    pub fn live(&self, now_mono: Duration) -> Vec<&DatanodeDescriptor> {
        let mut v: Vec<&DatanodeDescriptor> = self
            .nodes
            .values()
            .filter(|d| self.liveness_of(d, now_mono) != Liveness::Dead)
            .collect();
        v.sort_by(|a, b| a.uuid.cmp(&b.uuid));
        v
    }

    pub fn live_count(&self, now_mono: Duration) -> usize {
        self.nodes
            .values()
            .filter(|d| self.liveness_of(d, now_mono) != Liveness::Dead)
            .count()
    }

    /// What placement sees: live nodes with their free space.
    pub fn placement_view(&self, now_mono: Duration) -> Vec<NodeView> {
        self.live(now_mono)
            .into_iter()
            .map(|d| NodeView {
                uuid: d.id.uuid.clone(),
                ip_addr: d.id.ip_addr.clone(),
                host_name: d.id.host_name.clone(),
                xfer_port: d.id.xfer_port,
                remaining: d.best_storage().map_or(0, |s| s.remaining),
                type_remaining: d.type_remaining(),
                blocks_scheduled: d
                    .best_storage()
                    .map_or(0, |s| d.scheduled.get(s.storage_type)),
                rack: d.network_location.clone(),
                stale: self.liveness_of(d, now_mono) == Liveness::Stale,
                xceiver_count: d.xceiver_count,
                out_of_service: d.admin.is_out_of_service(),
                decommissioned: d.admin == AdminState::Decommissioned,
                last_update_mono: d.last_update_mono,
                ..Default::default()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u32) -> DatanodeId {
        DatanodeId {
            uuid: format!("uuid-{n}"),
            ip_addr: "127.0.0.1".into(),
            host_name: "localhost".into(),
            xfer_port: 9000 + n,
            info_port: 1,
            info_secure_port: 0,
            ipc_port: 2,
        }
    }

    fn reg(m: &mut DatanodeManager, id: DatanodeId, rack: &str, t: Duration) -> RegisterOutcome {
        m.register(id, "3.5.0", rack, 0, t)
            .unwrap_or_else(|e| panic!("register: {e}"))
    }

    fn cfg() -> LivenessConfig {
        LivenessConfig::from_intervals(
            Duration::from_secs(3),
            Duration::from_secs(300),
            Duration::from_secs(30),
            3,
        )
    }

    #[test]
    fn thresholds_follow_hadoop() {
        let c = cfg();
        assert_eq!(c.stale_after, Duration::from_secs(30));
        assert_eq!(c.dead_after, Duration::from_secs(630));
        // stale floor: 3 heartbeats
        let c = LivenessConfig::from_intervals(
            Duration::from_secs(3),
            Duration::from_secs(300),
            Duration::from_secs(1),
            3,
        );
        assert_eq!(c.stale_after, Duration::from_secs(9));
    }

    #[test]
    fn live_stale_dead_with_manual_time() {
        let mut m = DatanodeManager::new(cfg());
        let t0 = Duration::from_secs(100);
        assert!(
            m.register(id(1), "3.5.0", DEFAULT_RACK, 0, t0)
                .unwrap_or_else(|e| panic!("{e}"))
                .new_node
        );
        let d = m
            .get("uuid-1")
            .cloned()
            .unwrap_or_else(|| panic!("registered"));
        assert_eq!(
            m.liveness_of(&d, t0 + Duration::from_secs(30)),
            Liveness::Live
        );
        assert_eq!(
            m.liveness_of(&d, t0 + Duration::from_secs(31)),
            Liveness::Stale
        );
        assert!(m.check_dead(t0 + Duration::from_secs(630)).is_empty());
        assert_eq!(
            m.check_dead(t0 + Duration::from_secs(631)),
            vec![Arc::from("uuid-1")]
        );
        assert!(m.check_dead(t0 + Duration::from_secs(700)).is_empty());
        assert_eq!(m.live_count(t0 + Duration::from_secs(700)), 0);
        // a dead node's heartbeat is refused until it registers again
        assert!(!m.heartbeat("uuid-1", vec![], 0, 0, 0, t0 + Duration::from_secs(701)));
        let o = reg(&mut m, id(1), DEFAULT_RACK, t0 + Duration::from_secs(702));
        assert!(o.was_dead && !o.new_node);
        assert!(m.heartbeat("uuid-1", vec![], 0, 0, 0, t0 + Duration::from_secs(703)));
        assert!(!m.heartbeat("nobody", vec![], 0, 0, 0, t0));
    }

    #[test]
    fn heartbeat_updates_storages() {
        let mut m = DatanodeManager::new(cfg());
        reg(&mut m, id(1), DEFAULT_RACK, Duration::ZERO);
        let r = |id: &str, cap| StorageReport {
            storage_id: id.into(),
            storage_type: 1,
            capacity: cap,
            remaining: cap / 2,
            dfs_used: 1,
            ..Default::default()
        };
        assert!(m.heartbeat(
            "uuid-1",
            vec![r("DS-a", 100), r("DS-b", 50)],
            4,
            0,
            5,
            Duration::from_secs(1)
        ));
        let d = m
            .get("uuid-1")
            .cloned()
            .unwrap_or_else(|| panic!("registered"));
        assert_eq!(d.capacity(), 150);
        assert_eq!(d.remaining(), 75);
        assert_eq!(d.xceiver_count, 4);
        assert_eq!(
            d.best_storage().map(|s| s.storage_id.as_str()),
            Some("DS-a")
        );
    }

    #[test]
    fn reformatted_node_replaces_old_uuid() {
        let mut m = DatanodeManager::new(cfg());
        reg(&mut m, id(1), DEFAULT_RACK, Duration::ZERO);
        let mut again = id(1);
        again.uuid = "uuid-new".into();
        let o = reg(&mut m, again, DEFAULT_RACK, Duration::ZERO);
        assert_eq!(o.replaced, Some(Arc::from("uuid-1")));
        assert!(m.get("uuid-1").is_none());
    }

    #[test]
    fn location_stored_and_racks_counted() {
        let mut m = DatanodeManager::new(cfg());
        let t = Duration::from_secs(1);
        reg(&mut m, id(1), "/r1", t);
        assert!(!m.ever_multi_rack());
        reg(&mut m, id(2), "/r1", t);
        reg(&mut m, id(3), "/r2", t);
        assert_eq!(m.num_racks(t), 2);
        assert!(m.ever_multi_rack());
        let view = m.placement_view(t);
        let racks: Vec<&str> = view.iter().map(|v| v.rack.as_str()).collect();
        assert_eq!(racks, vec!["/r1", "/r1", "/r2"]);
        // re-registration moves a node; an emptied rack no longer counts
        reg(&mut m, id(3), "/r1", t);
        assert_eq!(
            m.get("uuid-3").map(|d| d.network_location.as_str()),
            Some("/r1")
        );
        assert_eq!(m.num_racks(t), 1);
        assert!(m.ever_multi_rack(), "sticky");
        // dead nodes leave the rack count
        reg(&mut m, id(4), "/r9", t);
        assert_eq!(m.num_racks(t), 2);
        m.check_dead(t + Duration::from_secs(700));
        assert_eq!(m.num_racks(t + Duration::from_secs(700)), 0);
    }

    #[test]
    fn rack_depth_must_match_the_other_nodes() {
        let mut m = DatanodeManager::new(cfg());
        let t = Duration::from_secs(1);
        reg(&mut m, id(1), "/r1", t);
        let err = m
            .register(id(2), "3.5.0", "/dc1/r1", 0, t)
            .err()
            .unwrap_or_else(|| panic!("a deeper rack is refused"));
        assert_eq!(
            err.to_string(),
            "Failed to add /dc1/r1/127.0.0.1:9002: You cannot have a rack and a non-rack \
             node at the same level of the network topology."
        );
        assert!(matches!(err, crate::topology::TopologyError::Invalid(_)));
        assert!(m.get("uuid-2").is_none(), "nothing recorded");
        // the node itself may move to another depth when it is the only one
        reg(&mut m, id(1), "/dc1/r1", t);
        reg(&mut m, id(2), "/dc1/r2", t);
        // a dead node does not hold the depth
        m.check_dead(t + Duration::from_secs(700));
        let later = t + Duration::from_secs(701);
        assert!(m.register(id(3), "3.5.0", "/r3", 0, later).is_ok());
    }
}
