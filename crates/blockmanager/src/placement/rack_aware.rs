//! The rack-aware default placement policy (Hadoop's BlockPlacementPolicyDefault, seed
//! 003): the 1st replica on the writer's node when it is a good DataNode (else on its rack,
//! else anywhere), the 2nd on another rack, the 3rd on the 2nd's rack, the rest anywhere
//! with at most `(total - 1) / racks + 2` replicas per rack. Favored nodes come first,
//! excluded nodes are never chosen, and every node examined and passed over is counted
//! under the reason it was rejected, so a short answer can say why.
//!
//! Beside it: `reasons` (why nodes were passed over), `settings` (what the configuration
//! says), `read_order` (nearest replicas first), `deletion` (which surplus replica goes).

use std::collections::HashMap;
use std::sync::Arc;

use rand::Rng;
use rand::rngs::StdRng;

use super::{NodeView, PlacementPolicy, PlacementRequest, SimplePlacement};
use crate::topology::{DEFAULT_RACK, RackResolver, distance};

pub use super::deletion::{ReplicaHolder, choose_replicas_to_delete};
pub use super::read_order::{replica_holders, sort_for_read, view_racks};
pub use super::reasons::{
    NotChosenReason, PlacementOutcome, ReasonCounts, not_enough_replicas_detailed,
};
pub use super::settings::{PlacementConfig, PlacementSettings, PolicyKind};

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

#[cfg(test)]
#[path = "rack_aware_tests.rs"]
mod tests;
