//! The rack-aware default placement policy (Hadoop's BlockPlacementPolicyDefault, seed
//! 003): the 1st replica on the writer's node when it is a good DataNode (else on its rack,
//! else anywhere), the 2nd on another rack, the 3rd on the 2nd's rack, the rest anywhere
//! with at most `(total - 1) / racks + 2` replicas per rack. Favored nodes come first,
//! excluded nodes are never chosen, and every node examined and passed over is counted
//! under the reason it was rejected, so a short answer can say why.
//!
//! Also here: which replicas to delete when a block has too many (rack spread kept), and
//! the settings read from the configuration (`dfs.block.replicator.classname` and the
//! placement / load keys).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;
use rhdfs_conf::Configuration;
use rhdfs_conf::keys::*;

use super::{NodeView, PlacementPolicy, PlacementRequest, SimplePlacement};
use crate::error::BlockManagerError;
use crate::topology::{
    DEFAULT_RACK, RackResolver, ReadNode, ReadSortFlags, Reader, TopologyConfig, distance,
    sort_by_distance,
};

/// `dfs.namenode.tolerate.heartbeat.multiplier` (Hadoop's default): a replica holder whose
/// last heartbeat is older than this many heartbeat intervals is deleted from first.
pub const TOLERATE_HEARTBEAT_MULTIPLIER: u32 = 4;

/// Why a node examined for a target was not chosen (Hadoop's NodeNotChosenReason).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NotChosenReason {
    /// Decommissioning, decommissioned or in maintenance.
    NotInService,
    NodeStale,
    NodeTooBusy,
    TooManyNodesOnRack,
    NotEnoughStorageSpace,
    NodeSlow,
}

impl NotChosenReason {
    pub const ALL: [NotChosenReason; 6] = [
        NotChosenReason::NotInService,
        NotChosenReason::NodeStale,
        NotChosenReason::NodeTooBusy,
        NotChosenReason::TooManyNodesOnRack,
        NotChosenReason::NotEnoughStorageSpace,
        NotChosenReason::NodeSlow,
    ];

    /// Hadoop's enum constant name.
    pub fn name(self) -> &'static str {
        match self {
            NotChosenReason::NotInService => "NOT_IN_SERVICE",
            NotChosenReason::NodeStale => "NODE_STALE",
            NotChosenReason::NodeTooBusy => "NODE_TOO_BUSY",
            NotChosenReason::TooManyNodesOnRack => "TOO_MANY_NODES_ON_RACK",
            NotChosenReason::NotEnoughStorageSpace => "NOT_ENOUGH_STORAGE_SPACE",
            NotChosenReason::NodeSlow => "NODE_SLOW",
        }
    }

    /// Hadoop's text for the reason.
    pub fn text(self) -> &'static str {
        match self {
            NotChosenReason::NotInService => "the node is not in service",
            NotChosenReason::NodeStale => "the node is stale",
            NotChosenReason::NodeTooBusy => "the node is too busy",
            NotChosenReason::TooManyNodesOnRack => "the rack has too many chosen nodes",
            NotChosenReason::NotEnoughStorageSpace => "not enough storage space to place the block",
            NotChosenReason::NodeSlow => "the node is too slow",
        }
    }
}

impl fmt::Display for NotChosenReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many examined nodes were passed over for each reason (each node counted once,
/// under the last reason it was rejected for). Displays as Hadoop logs its reason map:
/// `{NODE_TOO_BUSY=5, NOT_ENOUGH_STORAGE_SPACE=2}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReasonCounts(pub BTreeMap<NotChosenReason, usize>);

impl ReasonCounts {
    pub fn get(&self, r: NotChosenReason) -> usize {
        self.0.get(&r).copied().unwrap_or(0)
    }
    pub fn total(&self) -> usize {
        self.0.values().sum()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for ReasonCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (r, n)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}={n}", r.name())?;
        }
        f.write_str("}")
    }
}

/// The result of one placement: the chosen indices into the node list in pipeline order,
/// why the other examined nodes were passed over, and how many nodes were excluded by the
/// end of the operation (the client's excluded nodes plus every node examined, as in
/// Hadoop's "N node(s) are excluded in this operation").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlacementOutcome {
    pub chosen: Vec<usize>,
    pub reasons: ReasonCounts,
    pub excluded: usize,
}

impl PlacementOutcome {
    /// Hadoop's log line for a short placement, or "" when no node was rejected.
    pub fn reasons_detail(&self) -> String {
        if self.reasons.is_empty() {
            String::new()
        } else {
            format!("Not enough replicas was chosen. Reason: {}", self.reasons)
        }
    }
}

/// Hadoop's "could only be written to" message followed by the rejection reasons.
pub fn not_enough_replicas_detailed(
    src: &str,
    min_replication: usize,
    running: usize,
    outcome: &PlacementOutcome,
) -> String {
    let base = super::not_enough_replicas_message(
        src,
        outcome.chosen.len(),
        min_replication,
        running,
        outcome.excluded,
    );
    let detail = outcome.reasons_detail();
    if detail.is_empty() {
        base
    } else {
        format!("{base} {detail}")
    }
}

/// Placement and load settings.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacementSettings {
    /// `dfs.namenode.block-placement-policy.default.prefer-local-node`.
    pub prefer_local_node: bool,
    /// `dfs.namenode.redundancy.considerLoad`.
    pub consider_load: bool,
    /// `dfs.namenode.redundancy.considerLoad.factor`.
    pub consider_load_factor: f64,
    /// `dfs.namenode.block-placement.min-blocks-for.write`.
    pub min_blocks_for_write: u64,
    /// `dfs.namenode.avoid.write.stale.datanode`.
    pub avoid_stale_for_write: bool,
    /// `dfs.namenode.write.stale.datanode.ratio`: stale nodes are avoided only while at
    /// most this fraction of the live nodes is stale.
    pub stale_write_ratio: f64,
    /// `dfs.namenode.block-placement-policy.exclude-slow-nodes.enabled`.
    pub exclude_slow_nodes: bool,
    /// `dfs.namenode.avoid.read.stale.datanode`: stale nodes read last.
    pub avoid_stale_for_read: bool,
    /// `dfs.namenode.read.considerLoad`: equally distant replicas, least busy first.
    pub read_consider_load: bool,
    /// `dfs.namenode.read.considerStorageType`: equally distant replicas, fastest storage
    /// first (ignored when `read_consider_load` is set).
    pub read_consider_storage_type: bool,
}

impl Default for PlacementSettings {
    fn default() -> Self {
        PlacementSettings {
            prefer_local_node: DFS_NAMENODE_BLOCKPLACEMENTPOLICY_DEFAULT_PREFER_LOCAL_NODE_DEFAULT,
            consider_load: DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_DEFAULT,
            consider_load_factor: DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_FACTOR_DEFAULT,
            min_blocks_for_write: DFS_NAMENODE_BLOCKPLACEMENT_MIN_BLOCKS_FOR_WRITE_DEFAULT,
            avoid_stale_for_write: DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_WRITE_DEFAULT,
            stale_write_ratio: DFS_NAMENODE_USE_STALE_DATANODE_FOR_WRITE_RATIO_DEFAULT,
            exclude_slow_nodes:
                DFS_NAMENODE_BLOCKPLACEMENTPOLICY_EXCLUDE_SLOW_NODES_ENABLED_DEFAULT,
            avoid_stale_for_read: DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_READ_DEFAULT,
            read_consider_load: DFS_NAMENODE_READ_CONSIDERLOAD_DEFAULT,
            read_consider_storage_type: DFS_NAMENODE_READ_CONSIDERSTORAGETYPE_DEFAULT,
        }
    }
}

fn conf_err(e: impl fmt::Display) -> BlockManagerError {
    BlockManagerError::Config(e.to_string())
}

impl PlacementSettings {
    pub fn from_conf(conf: &Configuration) -> Result<Self, BlockManagerError> {
        let d = PlacementSettings::default();
        let ratio = conf
            .get_f64(
                DFS_NAMENODE_USE_STALE_DATANODE_FOR_WRITE_RATIO_KEY,
                d.stale_write_ratio,
            )
            .map_err(conf_err)?;
        if !(ratio > 0.0 && ratio <= 1.0) {
            return Err(BlockManagerError::Config(format!(
                "{DFS_NAMENODE_USE_STALE_DATANODE_FOR_WRITE_RATIO_KEY} = '{ratio}' is invalid. \
                 It should be a positive non-zero float value, not greater than 1.0f."
            )));
        }
        let factor = conf
            .get_f64(
                DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_FACTOR_KEY,
                d.consider_load_factor,
            )
            .map_err(conf_err)?;
        if factor <= 0.0 {
            return Err(BlockManagerError::Config(format!(
                "{DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_FACTOR_KEY} = '{factor}' must be greater than 0"
            )));
        }
        let read_consider_load = conf
            .get_bool(DFS_NAMENODE_READ_CONSIDERLOAD_KEY, d.read_consider_load)
            .map_err(conf_err)?;
        let read_consider_storage_type = conf
            .get_bool(
                DFS_NAMENODE_READ_CONSIDERSTORAGETYPE_KEY,
                d.read_consider_storage_type,
            )
            .map_err(conf_err)?;
        if read_consider_load && read_consider_storage_type {
            tracing::warn!(
                "{DFS_NAMENODE_READ_CONSIDERLOAD_KEY} and {DFS_NAMENODE_READ_CONSIDERSTORAGETYPE_KEY} \
                 are incompatible and only one can be enabled. Both are currently enabled. \
                 {DFS_NAMENODE_READ_CONSIDERSTORAGETYPE_KEY} will be ignored."
            );
        }
        Ok(PlacementSettings {
            read_consider_load,
            read_consider_storage_type,
            prefer_local_node: conf
                .get_bool(
                    DFS_NAMENODE_BLOCKPLACEMENTPOLICY_DEFAULT_PREFER_LOCAL_NODE_KEY,
                    d.prefer_local_node,
                )
                .map_err(conf_err)?,
            consider_load: conf
                .get_bool(DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_KEY, d.consider_load)
                .map_err(conf_err)?,
            consider_load_factor: factor,
            min_blocks_for_write: conf
                .get_u64(
                    DFS_NAMENODE_BLOCKPLACEMENT_MIN_BLOCKS_FOR_WRITE_KEY,
                    d.min_blocks_for_write,
                )
                .map_err(conf_err)?,
            avoid_stale_for_write: conf
                .get_bool(
                    DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_WRITE_KEY,
                    d.avoid_stale_for_write,
                )
                .map_err(conf_err)?,
            stale_write_ratio: ratio,
            exclude_slow_nodes: conf
                .get_bool(
                    DFS_NAMENODE_BLOCKPLACEMENTPOLICY_EXCLUDE_SLOW_NODES_ENABLED_KEY,
                    d.exclude_slow_nodes,
                )
                .map_err(conf_err)?,
            avoid_stale_for_read: conf
                .get_bool(
                    DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_READ_KEY,
                    d.avoid_stale_for_read,
                )
                .map_err(conf_err)?,
        })
    }
}

/// Which policy `dfs.block.replicator.classname` names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PolicyKind {
    /// BlockPlacementPolicyDefault (the default): `RackAwarePlacement`.
    #[default]
    RackAware,
    /// rhdfs's rack-blind `SimplePlacement` ("SimplePlacement").
    Simple,
}

impl PolicyKind {
    /// Accepts the full or short class name of BlockPlacementPolicyDefault, or
    /// "SimplePlacement".
    pub fn from_class_name(name: &str) -> Result<Self, BlockManagerError> {
        let name = name.trim();
        match name.rsplit('.').next().unwrap_or(name) {
            "BlockPlacementPolicyDefault" => Ok(PolicyKind::RackAware),
            "SimplePlacement" => Ok(PolicyKind::Simple),
            _ => Err(BlockManagerError::Config(format!(
                "{DFS_BLOCK_REPLICATOR_CLASSNAME_KEY} = '{name}' is not a supported block \
                 placement policy (supported: {DFS_BLOCK_REPLICATOR_CLASSNAME_DEFAULT}, SimplePlacement)"
            ))),
        }
    }
}

/// Everything placement reads from the configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlacementConfig {
    pub policy: PolicyKind,
    pub settings: PlacementSettings,
    pub topology: TopologyConfig,
}

impl PlacementConfig {
    pub fn from_conf(conf: &Configuration) -> Result<Self, BlockManagerError> {
        Ok(PlacementConfig {
            policy: PolicyKind::from_class_name(
                conf.get_trimmed(DFS_BLOCK_REPLICATOR_CLASSNAME_KEY)
                    .unwrap_or(DFS_BLOCK_REPLICATOR_CLASSNAME_DEFAULT),
            )?,
            settings: PlacementSettings::from_conf(conf)?,
            topology: TopologyConfig::from_conf(conf).map_err(conf_err)?,
        })
    }
}

/// The policy `cfg` names, with its own rack resolver built from `cfg.topology`.
pub fn build_policy(cfg: &PlacementConfig) -> Box<dyn PlacementPolicy> {
    build_policy_with(cfg, Arc::new(RackResolver::from_config(&cfg.topology)))
}

/// The policy `cfg` names, resolving racks with `resolver` (the block manager's, shared
/// with DataNode registration).
pub fn build_policy_with(
    cfg: &PlacementConfig,
    resolver: Arc<RackResolver>,
) -> Box<dyn PlacementPolicy> {
    match cfg.policy {
        PolicyKind::Simple => Box::new(SimplePlacement),
        PolicyKind::RackAware => Box::new(RackAwarePlacement::new(cfg.settings.clone(), resolver)),
    }
}

/// BlockPlacementPolicyDefault.
#[derive(Debug, Default)]
pub struct RackAwarePlacement {
    settings: PlacementSettings,
    resolver: Arc<RackResolver>,
}

/// Where the writer is: one of the nodes, a rack (a client that is not a DataNode), or
/// unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Local<'a> {
    Node(usize),
    Rack(&'a str),
    Unknown,
}

#[derive(Clone, Copy, Debug)]
enum Scope<'a> {
    All,
    In(&'a str),
    NotIn(&'a str),
}

/// Not enough good nodes in the scope searched.
#[derive(Debug)]
struct NotEnough;

struct Chooser<'a, 'r> {
    nodes: &'a [NodeView],
    racks: &'a [String],
    settings: &'a PlacementSettings,
    num_racks: usize,
    block_size: u64,
    avg_load: f64,
    avoid_stale: bool,
    max_per_rack: usize,
    excluded: Vec<bool>,
    /// Ever excluded during the operation (for the excluded count).
    touched: Vec<bool>,
    results: Vec<usize>,
    rejected: HashMap<usize, NotChosenReason>,
    rng: &'r mut StdRng,
}

impl<'a> Chooser<'a, '_> {
    fn exclude(&mut self, i: usize) {
        self.excluded[i] = true;
        self.touched[i] = true;
    }

    fn in_scope(&self, i: usize, scope: Scope<'_>) -> bool {
        match scope {
            Scope::All => true,
            Scope::In(r) => self.racks[i] == r,
            Scope::NotIn(r) => self.racks[i] != r,
        }
    }

    fn is_good(&self, i: usize) -> Result<(), NotChosenReason> {
        let n = &self.nodes[i];
        if n.out_of_service {
            return Err(NotChosenReason::NotInService);
        }
        if self.avoid_stale && n.stale {
            return Err(NotChosenReason::NodeStale);
        }
        if self.settings.consider_load {
            let max_load = self.settings.consider_load_factor * self.avg_load;
            if max_load > 0.0 && f64::from(n.xceiver_count) > max_load {
                return Err(NotChosenReason::NodeTooBusy);
            }
        }
        let on_rack = 1 + self
            .results
            .iter()
            .filter(|&&r| self.racks[r] == self.racks[i])
            .count();
        if on_rack > self.max_per_rack {
            return Err(NotChosenReason::TooManyNodesOnRack);
        }
        if self.settings.exclude_slow_nodes && n.slow {
            return Err(NotChosenReason::NodeSlow);
        }
        let required = i128::from(self.block_size) * i128::from(self.settings.min_blocks_for_write);
        let scheduled = i128::from(self.block_size) * i128::from(n.blocks_scheduled);
        let remaining = n.remaining_for(u64::try_from(required).unwrap_or(u64::MAX));
        if required > i128::from(remaining) - scheduled {
            return Err(NotChosenReason::NotEnoughStorageSpace);
        }
        Ok(())
    }

    /// Examines node `i` (not excluded yet): excludes it, and adds it to the results if good.
    fn try_node(&mut self, i: usize) -> bool {
        self.exclude(i);
        match self.is_good(i) {
            Ok(()) => {
                self.results.push(i);
                self.rejected.remove(&i);
                true
            }
            Err(reason) => {
                tracing::debug!(node = %self.nodes[i].uuid, "Node is not chosen since {}", reason.text());
                self.rejected.insert(i, reason);
                false
            }
        }
    }

    /// Picks `num` good nodes at random in `scope`; the first one picked, or NotEnough
    /// (keeping those it did pick) when the scope runs out.
    fn choose_random(
        &mut self,
        mut num: usize,
        scope: Scope<'_>,
    ) -> Result<Option<usize>, NotEnough> {
        let mut candidates: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| !self.excluded[i] && self.in_scope(i, scope))
            .collect();
        let mut first = None;
        while num > 0 && !candidates.is_empty() {
            let k = self.rng.random_range(0..candidates.len());
            let i = candidates.swap_remove(k);
            if self.try_node(i) {
                num -= 1;
                first.get_or_insert(i);
            }
        }
        if num > 0 { Err(NotEnough) } else { Ok(first) }
    }

    fn pick_one(&mut self, scope: Scope<'_>) -> Result<usize, NotEnough> {
        self.choose_random(1, scope)?.ok_or(NotEnough)
    }

    fn rack_of_local(&self, local: Local<'a>) -> Option<&'a str> {
        match local {
            Local::Node(i) => Some(self.racks[i].as_str()),
            Local::Rack(r) => Some(r),
            Local::Unknown => None,
        }
    }

    /// The writer's node if good (and preferred), else (with `fallback`) its rack, else
    /// anywhere.
    fn choose_local_storage(
        &mut self,
        local: Local<'a>,
        fallback: bool,
    ) -> Result<usize, NotEnough> {
        if self.settings.prefer_local_node
            && let Local::Node(w) = local
            && !self.excluded[w]
            && self.try_node(w)
        {
            return Ok(w);
        }
        if !fallback {
            return Err(NotEnough);
        }
        self.choose_local_rack(local)
    }

    /// A node on the rack of `local`; else on the rack of another chosen node; else anywhere.
    fn choose_local_rack(&mut self, local: Local<'a>) -> Result<usize, NotEnough> {
        let Some(rack) = self.rack_of_local(local) else {
            return self.pick_one(Scope::All);
        };
        if let Ok(i) = self.pick_one(Scope::In(rack)) {
            return Ok(i);
        }
        for r in self.results.clone() {
            if local != Local::Node(r) {
                let other: &'a str = self.racks[r].as_str();
                if let Ok(i) = self.pick_one(Scope::In(other)) {
                    return Ok(i);
                }
            }
        }
        self.pick_one(Scope::All)
    }

    /// `num` nodes off the rack of node `local`; the shortfall from its own rack.
    fn choose_remote_rack(&mut self, num: usize, local: usize) -> Result<(), NotEnough> {
        let rack: &'a str = self.racks[local].as_str();
        let before = self.results.len();
        if self.choose_random(num, Scope::NotIn(rack)).is_err() {
            let got = self.results.len() - before;
            self.choose_random(num - got, Scope::In(rack))?;
        }
        Ok(())
    }

    fn choose_inner(
        &mut self,
        mut num: usize,
        writer: &mut Local<'a>,
        new_block: bool,
    ) -> Result<(), NotEnough> {
        if num == 0 || self.nodes.is_empty() {
            return Ok(());
        }
        let num_results = self.results.len();
        if !matches!(writer, Local::Node(_)) && !new_block && num_results > 0 {
            *writer = Local::Node(self.results[0]);
        }
        if num_results == 0 {
            let w = self.choose_local_storage(*writer, true)?;
            *writer = Local::Node(w);
            num -= 1;
            if num == 0 {
                return Ok(());
            }
        }
        let dn0 = self.results[0];
        if num_results <= 1 {
            self.choose_remote_rack(1, dn0)?;
            num -= 1;
            if num == 0 {
                return Ok(());
            }
        }
        if num_results <= 2 {
            let dn1 = self.results[1];
            if self.racks[dn0] == self.racks[dn1] {
                self.choose_remote_rack(1, dn0)?;
            } else if new_block {
                self.choose_local_rack(Local::Node(dn1))?;
            } else {
                self.choose_local_rack(*writer)?;
            }
            num -= 1;
            if num == 0 {
                return Ok(());
            }
        }
        self.choose_random(num, Scope::All)?;
        Ok(())
    }

    /// Hadoop's getMaxNodesPerRack: (replicas still to choose, per-rack cap).
    fn max_nodes_per_rack(&self, num_chosen: usize, mut num: usize) -> (usize, usize) {
        let cluster = self.nodes.len();
        let mut total = num_chosen + num;
        if total > cluster {
            num -= total - cluster;
            total = cluster;
        }
        if self.num_racks <= 1 || total <= 1 {
            return (num, total);
        }
        let mut max = (total - 1) / self.num_racks + 2;
        if max == total {
            max -= 1;
        }
        (num, max)
    }

    /// Chooses `num` more nodes with the current results as already chosen; once more
    /// without avoiding stale nodes when that fell short. Returns the local node.
    fn run(&mut self, num: usize, writer: Local<'a>, new_block: bool) -> Local<'a> {
        let (num, max) = self.max_nodes_per_rack(self.results.len(), num);
        self.max_per_rack = max;
        let mut w = writer;
        if num == 0 {
            return w;
        }
        let old_excluded = self.excluded.clone();
        let total = num + self.results.len();
        if self.choose_inner(num, &mut w, new_block).is_err() && self.avoid_stale {
            let mut ex = old_excluded;
            for &r in &self.results {
                ex[r] = true;
            }
            self.excluded = ex;
            self.avoid_stale = false;
            let need = total - self.results.len();
            let _ = self.choose_inner(need, &mut w, new_block);
        }
        w
    }

    /// Orders `targets` as a pipeline: from `start` (or the first target) always to the
    /// nearest one not yet visited.
    fn pipeline(&self, start: Option<usize>, mut targets: Vec<usize>) -> Vec<usize> {
        if targets.is_empty() {
            return targets;
        }
        let dist = |a: usize, b: usize| distance(&self.racks[a], &self.racks[b], a == b);
        let mut cur = start.unwrap_or(targets[0]);
        for idx in 0..targets.len() {
            let mut best = idx;
            let mut best_d = dist(cur, targets[idx]);
            for (j, &t) in targets.iter().enumerate().skip(idx + 1) {
                let d = dist(cur, t);
                if d < best_d {
                    best_d = d;
                    best = j;
                }
            }
            targets.swap(idx, best);
            cur = targets[idx];
        }
        targets
    }
}

impl RackAwarePlacement {
    pub fn new(settings: PlacementSettings, resolver: Arc<RackResolver>) -> Self {
        RackAwarePlacement { settings, resolver }
    }

    pub fn settings(&self) -> &PlacementSettings {
        &self.settings
    }

    /// The rack resolver (shared with whatever resolves DataNodes at registration).
    pub fn resolver(&self) -> &Arc<RackResolver> {
        &self.resolver
    }

    /// Each node's rack: the one in its view when set to something other than
    /// /default-rack, else the mapping's answer for its address (cached after the first
    /// time).
    pub fn racks_of(&self, nodes: &[NodeView]) -> Vec<String> {
        nodes
            .iter()
            .map(|n| {
                if n.rack != DEFAULT_RACK && !n.rack.is_empty() || self.resolver.is_trivial() {
                    if n.rack.is_empty() {
                        DEFAULT_RACK.to_string()
                    } else {
                        n.rack.clone()
                    }
                } else {
                    self.resolver
                        .rack_of_node(&n.ip_addr, &n.host_name)
                        .unwrap_or_else(|_| DEFAULT_RACK.to_string())
                }
            })
            .collect()
    }

    /// Chooses targets as BlockPlacementPolicyDefault does, with the reasons for the
    /// nodes passed over. `racks[i]` is the rack of `nodes[i]`.
    pub fn choose_with_racks(
        &self,
        req: &PlacementRequest<'_>,
        nodes: &[NodeView],
        racks: &[String],
        rng: &mut StdRng,
    ) -> PlacementOutcome {
        let n = nodes.len();
        let mut excluded = vec![false; n];
        let mut outside = 0;
        for e in req.excluded {
            let mut hit = false;
            for (i, node) in nodes.iter().enumerate() {
                if e.matches(node) {
                    excluded[i] = true;
                    hit = true;
                }
            }
            if !hit {
                outside += 1;
            }
        }
        let mut chosen: Vec<usize> = Vec::new();
        for u in req.existing {
            if let Some(i) = nodes.iter().position(|v| &v.uuid == u)
                && !chosen.contains(&i)
            {
                chosen.push(i);
                excluded[i] = true;
            }
        }
        let mut num_racks: Vec<&str> = racks.iter().map(String::as_str).collect();
        num_racks.sort_unstable();
        num_racks.dedup();
        let stale = nodes.iter().filter(|v| v.stale).count();
        let avoid_stale = self.settings.avoid_stale_for_write
            && (stale as f64) <= (n as f64) * self.settings.stale_write_ratio;
        let in_service: Vec<&NodeView> = nodes.iter().filter(|v| !v.out_of_service).collect();
        let avg_load = if in_service.is_empty() {
            0.0
        } else {
            in_service
                .iter()
                .map(|v| f64::from(v.xceiver_count))
                .sum::<f64>()
                / in_service.len() as f64
        };
        // The writer: a DataNode on its host (a random one if several), else its rack
        // when a mapping knows it.
        let writer_rack: Option<String> = req.writer_host.and_then(|h| {
            if nodes.iter().any(|v| v.matches_host(h)) || self.resolver.is_trivial() {
                None
            } else {
                self.resolver.resolve(&[h.to_string()]).ok()?.pop()
            }
        });
        let writer_nodes: Vec<usize> = match req.writer_host {
            Some(h) => (0..n).filter(|&i| nodes[i].matches_host(h)).collect(),
            None => Vec::new(),
        };
        let mut ch = Chooser {
            nodes,
            racks,
            settings: &self.settings,
            num_racks: num_racks.len(),
            block_size: req.block_size,
            avg_load,
            avoid_stale,
            max_per_rack: n,
            touched: excluded.clone(),
            excluded,
            results: chosen.clone(),
            rejected: HashMap::new(),
            rng,
        };
        let writer = match writer_nodes.len() {
            0 => match writer_rack.as_deref() {
                Some(r) if racks.iter().any(|x| x == r) => Local::Rack(r),
                _ => Local::Unknown,
            },
            1 => Local::Node(writer_nodes[0]),
            k => Local::Node(writer_nodes[ch.rng.random_range(0..k)]),
        };
        let writer_node = match writer {
            Local::Node(i) => Some(i),
            _ => None,
        };
        let mut targets: Vec<usize> = Vec::new();
        if req.count > 0 && n > 0 {
            let favored: Vec<usize> = req
                .favored
                .iter()
                .filter_map(|f| {
                    let i = nodes.iter().position(|v| v.matches_host_port(f));
                    if i.is_none() {
                        tracing::warn!(favored = %f, "Could not find a target with favored node");
                    }
                    i
                })
                .collect();
            if !favored.is_empty() && chosen.is_empty() {
                let (num, max) = ch.max_nodes_per_rack(0, req.count);
                ch.max_per_rack = max;
                for &f in favored.iter().take(num) {
                    if ch.results.len() >= num {
                        break;
                    }
                    if ch.choose_local_storage(Local::Node(f), false).is_err() {
                        tracing::warn!(node = %nodes[f].uuid, "Could not find a target with favored node");
                    }
                }
                for &f in &favored {
                    ch.exclude(f);
                }
                if ch.results.len() < num {
                    let need = num - ch.results.len();
                    ch.run(need, writer, ch.results.is_empty());
                }
                targets = ch.results.clone();
                targets = ch.pipeline(writer_node, targets);
            } else {
                let local = ch.run(req.count, writer, chosen.is_empty());
                targets = ch.results[chosen.len()..].to_vec();
                let start = writer_node.or(match local {
                    Local::Node(i) => Some(i),
                    _ => None,
                });
                targets = ch.pipeline(start, targets);
            }
        }
        let mut reasons = ReasonCounts::default();
        for (i, r) in &ch.rejected {
            if !ch.results.contains(i) {
                *reasons.0.entry(*r).or_default() += 1;
            }
        }
        let excluded_count = ch.touched.iter().filter(|t| **t).count() + outside;
        if targets.len() < req.count && !reasons.is_empty() {
            tracing::info!(
                wanted = req.count,
                chosen = targets.len(),
                "Not enough replicas was chosen. Reason: {reasons}"
            );
        }
        PlacementOutcome {
            chosen: targets,
            reasons,
            excluded: excluded_count,
        }
    }

    /// Holders of `nodes` with their racks, for `choose_replicas_to_delete`.
    pub fn replica_holders(&self, nodes: &[NodeView]) -> Vec<ReplicaHolder> {
        replica_holders(nodes, self.racks_of(nodes))
    }
}

/// The racks the views carry (empty: /default-rack).
pub fn view_racks(nodes: &[NodeView]) -> Vec<String> {
    nodes
        .iter()
        .map(|n| {
            if n.rack.is_empty() {
                DEFAULT_RACK.to_string()
            } else {
                n.rack.clone()
            }
        })
        .collect()
}

/// `nodes` as replica holders on `racks`.
pub fn replica_holders(nodes: &[NodeView], racks: Vec<String>) -> Vec<ReplicaHolder> {
    nodes
        .iter()
        .zip(racks)
        .map(|(v, rack)| ReplicaHolder {
            uuid: v.uuid.clone(),
            rack,
            remaining: v.remaining,
            last_update_mono: v.last_update_mono,
        })
        .collect()
}

/// Read order for `nodes` under policy `p`'s racks: see `PlacementPolicy::sort_for_read`.
/// A reader on the host of one of `nodes` reads from that node (one picked with `rng` when
/// the host has several), else its rack comes from `p.rack_of_host`.
pub fn sort_for_read<P: PlacementPolicy + ?Sized>(
    p: &P,
    reader_host: Option<&str>,
    nodes: &[NodeView],
    flags: ReadSortFlags,
    rng: &mut StdRng,
) -> Vec<usize> {
    let racks = p.racks_of(nodes);
    let (reader_node, reader_rack): (Option<usize>, Option<String>) = match reader_host {
        None => (None, None),
        Some(h) => {
            let on_host: Vec<usize> = (0..nodes.len())
                .filter(|&i| nodes[i].matches_host(h))
                .collect();
            match on_host.len() {
                0 => (None, p.rack_of_host(h)),
                k => {
                    let i = on_host[rng.random_range(0..k)];
                    (Some(i), Some(racks[i].clone()))
                }
            }
        }
    };
    let reader = reader_host.map(|_| Reader {
        node: reader_node.map(|i| nodes[i].uuid.as_str()),
        rack: reader_rack.as_deref(),
    });
    let read_nodes: Vec<ReadNode<'_>> = nodes
        .iter()
        .zip(&racks)
        .map(|(v, r)| ReadNode {
            uuid: &v.uuid,
            rack: r,
            stale: v.stale,
            decommissioning: v.out_of_service && !v.decommissioned,
            decommissioned: v.decommissioned,
            slow: v.slow,
            xceiver_count: v.xceiver_count,
            storage_type: 1,
        })
        .collect();
    sort_by_distance(reader.as_ref(), &read_nodes, flags, rng)
}

impl PlacementPolicy for RackAwarePlacement {
    fn choose(
        &self,
        req: &PlacementRequest<'_>,
        nodes: &[NodeView],
        rng: &mut StdRng,
    ) -> Vec<usize> {
        self.choose_detailed(req, nodes, rng).chosen
    }

    fn choose_detailed(
        &self,
        req: &PlacementRequest<'_>,
        nodes: &[NodeView],
        rng: &mut StdRng,
    ) -> PlacementOutcome {
        let racks = RackAwarePlacement::racks_of(self, nodes);
        self.choose_with_racks(req, nodes, &racks, rng)
    }

    fn racks_of(&self, nodes: &[NodeView]) -> Vec<String> {
        RackAwarePlacement::racks_of(self, nodes)
    }

    fn rack_of_host(&self, host: &str) -> Option<String> {
        if self.resolver.is_trivial() {
            return Some(DEFAULT_RACK.to_string());
        }
        self.resolver.resolve(&[host.to_string()]).ok()?.pop()
    }
}

/// One node holding a replica, as the excess-replica choice sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicaHolder {
    pub uuid: String,
    pub rack: String,
    /// Free space of the storage holding the replica.
    pub remaining: u64,
    /// Monotonic time of the holder's last heartbeat.
    pub last_update_mono: Duration,
}

/// Hadoop's chooseReplicasToDelete: which of `candidates` (indices into `available`, the
/// block's good replicas) to delete so that `expected` replicas remain. `del_hint` (a
/// replica the caller suggests, e.g. the source of a move) goes first when removing it
/// keeps the number of racks; otherwise each pick prefers a rack holding more than one
/// replica, and within the set picks the holder with the oldest heartbeat when that is
/// older than `now - heartbeat_tolerance`, else the one with the least free space.
pub fn choose_replicas_to_delete(
    available: &[ReplicaHolder],
    candidates: &[usize],
    expected: usize,
    added: Option<usize>,
    del_hint: Option<usize>,
    now_mono: Duration,
    heartbeat_tolerance: Duration,
) -> Vec<usize> {
    // Racks counted over all available replicas (a rack whose only other replica is not a
    // candidate still has more than one).
    let mut rack_total: HashMap<&str, usize> = HashMap::new();
    for a in available {
        *rack_total.entry(a.rack.as_str()).or_default() += 1;
    }
    let (mut more_than_one, mut exactly_one): (Vec<usize>, Vec<usize>) = candidates
        .iter()
        .partition(|&&c| rack_total[available[c].rack.as_str()] > 1);
    let oldest_allowed = now_mono.checked_sub(heartbeat_tolerance);
    let mut out = Vec::new();
    let mut first = true;
    while candidates.len().saturating_sub(expected) > out.len() {
        let use_hint = first
            && del_hint.is_some_and(|h| {
                candidates.contains(&h)
                    && (more_than_one.contains(&h)
                        || added.is_some_and(|a| {
                            candidates.contains(&a) && !more_than_one.contains(&a)
                        }))
            });
        first = false;
        let cur = if use_hint {
            del_hint
        } else {
            let set = if more_than_one.is_empty() {
                &exactly_one
            } else {
                &more_than_one
            };
            let mut oldest: Option<(Duration, usize)> = oldest_allowed.map(|t| (t, usize::MAX));
            let mut oldest_pick = None;
            let mut min_space: Option<(u64, usize)> = None;
            for &c in set {
                let h = &available[c];
                if let Some((t, _)) = oldest
                    && h.last_update_mono < t
                {
                    oldest = Some((h.last_update_mono, c));
                    oldest_pick = Some(c);
                }
                if min_space.is_none_or(|(s, _)| h.remaining < s) {
                    min_space = Some((h.remaining, c));
                }
            }
            oldest_pick.or(min_space.map(|(_, c)| c))
        };
        let Some(cur) = cur else { break };
        // Adjust the rack sets: the chosen replica leaves; a rack left with one replica
        // moves its survivor from "more than one" to "exactly one".
        let rack = available[cur].rack.as_str();
        if let Some(t) = rack_total.get_mut(rack) {
            *t -= 1;
            if *t == 1 {
                let survivors: Vec<usize> = more_than_one
                    .iter()
                    .copied()
                    .filter(|&c| c != cur && available[c].rack == rack)
                    .collect();
                more_than_one.retain(|c| !survivors.contains(c));
                exactly_one.extend(survivors);
            }
        }
        more_than_one.retain(|&c| c != cur);
        exactly_one.retain(|&c| c != cur);
        out.push(cur);
    }
    out
}

#[cfg(test)]
#[path = "rack_aware_tests.rs"]
mod tests;
