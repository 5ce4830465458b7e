//! Rack spread of a block's replicas (Hadoop's isPlacementPolicySatisfied with
//! BlockPlacementPolicyDefault.verifyBlockPlacement): once the cluster has ever had nodes on
//! more than one rack, a block of replication >= 2 must have replicas on at least two racks
//! (or on every rack the cluster has). A block with enough live replicas that fails this
//! goes to the QUEUE_REPLICAS_BADLY_DISTRIBUTED low-redundancy queue; the RedundancyMonitor
//! copies it once to a node on another rack, and the excess check then removes a replica
//! from the crowded rack.
//!
//! `RackMap` is the blocks lock's copy of each live DataNode's rack, refreshed from the
//! `datanodes` registry by `BlockManager::refresh_rack_map` (every RedundancyMonitor pass
//! and before each full block report), so redundancy checks under the blocks lock never
//! take the datanodes lock.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// Racks a block of `replication` replicas must span (Hadoop's minRacks: 2, or fewer when
/// fewer replicas are wanted).
pub fn required_racks(replication: usize) -> usize {
    replication.clamp(1, 2)
}

/// Hadoop's verifyBlockPlacement + isPlacementPolicySatisfied for one block: `replica_racks`
/// are the racks of its usable replicas (one entry per replica), `cluster_racks` the racks
/// holding a live node now, `ever_multi_rack` whether the cluster ever had two racks.
pub fn placement_satisfied(
    replica_racks: &[&str],
    replication: usize,
    cluster_racks: usize,
    ever_multi_rack: bool,
) -> bool {
    if !ever_multi_rack {
        return true;
    }
    let current = replica_racks.iter().collect::<BTreeSet<_>>().len();
    current >= required_racks(replication) || current >= cluster_racks
}

/// What a refresh of the rack map changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RackChange {
    /// The cluster went from one rack to several for the first time: every block's
    /// placement must be checked again (Hadoop's processMisReplicatedBlocks).
    pub became_multi_rack: bool,
    /// Nodes that are new in the map or changed rack (their blocks are checked again).
    pub moved: Vec<Arc<str>>,
}

/// Each live DataNode's rack, as the blocks lock sees it.
#[derive(Debug, Default)]
pub struct RackMap {
    rack_of: HashMap<Arc<str>, Arc<str>>,
    num_racks: usize,
    ever_multi_rack: bool,
}

impl RackMap {
    /// Replaces the map with `nodes` (uuid, rack) — the DataNodes not dead.
    pub fn update(&mut self, nodes: impl IntoIterator<Item = (Arc<str>, String)>) -> RackChange {
        let mut next: HashMap<Arc<str>, Arc<str>> = HashMap::new();
        let mut moved = Vec::new();
        for (uuid, rack) in nodes {
            let rack: Arc<str> = match self.rack_of.get(&uuid) {
                Some(old) if **old == *rack => old.clone(),
                _ => {
                    moved.push(uuid.clone());
                    Arc::from(rack)
                }
            };
            next.insert(uuid, rack);
        }
        moved.sort();
        self.rack_of = next;
        self.num_racks = self.rack_of.values().collect::<HashSet<_>>().len();
        let became_multi_rack = !self.ever_multi_rack && self.num_racks > 1;
        self.ever_multi_rack |= became_multi_rack;
        RackChange {
            became_multi_rack,
            moved,
        }
    }

    pub fn rack_of(&self, uuid: &str) -> Option<&str> {
        self.rack_of.get(uuid).map(|r| &**r)
    }

    /// Racks holding a live node.
    pub fn num_racks(&self) -> usize {
        self.num_racks
    }

    /// True once the map held nodes on two racks (sticky, as Hadoop's
    /// hasClusterEverBeenMultiRack).
    pub fn ever_multi_rack(&self) -> bool {
        self.ever_multi_rack
    }

    /// Whether replicas on `holders` (node uuids) satisfy the rack rule for `replication`.
    /// A holder the map does not know yet (registered since the last refresh) cannot be
    /// judged: the block counts as satisfied until the refresh re-checks that node's blocks.
    pub fn satisfied(&self, holders: &[&str], replication: usize) -> bool {
        if !self.ever_multi_rack {
            return true;
        }
        let mut racks = Vec::with_capacity(holders.len());
        for h in holders {
            match self.rack_of(h) {
                Some(r) => racks.push(r),
                None => return true,
            }
        }
        placement_satisfied(&racks, replication, self.num_racks, self.ever_multi_rack)
    }

    /// Live nodes on any of `racks`, sorted.
    pub fn nodes_on(&self, racks: &HashSet<&str>) -> Vec<Arc<str>> {
        let mut v: Vec<Arc<str>> = self
            .rack_of
            .iter()
            .filter(|(_, r)| racks.contains(&***r))
            .map(|(u, _)| u.clone())
            .collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_block_placement_like_hadoop() {
        // A cluster that never had two racks: always satisfied.
        assert!(placement_satisfied(&["/r1", "/r1", "/r1"], 3, 1, false));
        // Several racks: replication >= 2 needs two of them.
        assert!(!placement_satisfied(&["/r1", "/r1", "/r1"], 3, 2, true));
        assert!(placement_satisfied(&["/r1", "/r1", "/r2"], 3, 2, true));
        assert!(!placement_satisfied(&["/r1", "/r1"], 2, 3, true));
        assert!(placement_satisfied(&["/r1", "/r2"], 2, 3, true));
        // Replication 1 needs one rack.
        assert!(placement_satisfied(&["/r1"], 1, 2, true));
        // All racks the cluster has now are used (the other rack's nodes died).
        assert!(placement_satisfied(&["/r1", "/r1", "/r1"], 3, 1, true));
        // No replica at all: not satisfied (its redundancy is what matters then).
        assert!(!placement_satisfied(&[], 3, 2, true));
        assert_eq!(required_racks(10), 2);
        assert_eq!(required_racks(1), 1);
        assert_eq!(required_racks(0), 1);
    }

    fn nodes(v: &[(&str, &str)]) -> Vec<(Arc<str>, String)> {
        v.iter()
            .map(|(u, r)| (Arc::from(*u), r.to_string()))
            .collect()
    }

    #[test]
    fn rack_map_tracks_moves_and_is_sticky_multi_rack() {
        let mut m = RackMap::default();
        let c = m.update(nodes(&[("a", "/r1"), ("b", "/r1")]));
        assert!(!c.became_multi_rack);
        assert_eq!(c.moved, vec![Arc::from("a"), Arc::from("b")]);
        assert!(m.satisfied(&["a", "b"], 3), "single rack: nothing to check");
        let c = m.update(nodes(&[("a", "/r1"), ("b", "/r1"), ("c", "/r2")]));
        assert!(c.became_multi_rack);
        assert_eq!(c.moved, vec![Arc::from("c")]);
        assert_eq!(m.num_racks(), 2);
        assert!(!m.satisfied(&["a", "b"], 2));
        assert!(m.satisfied(&["a", "c"], 2));
        assert!(m.satisfied(&["a", "zz"], 2), "unknown holder: not judged");
        let on_r1: HashSet<&str> = ["/r1"].into_iter().collect();
        assert_eq!(m.nodes_on(&on_r1), vec![Arc::from("a"), Arc::from("b")]);
        // c moves to /r1: one rack again, but the cluster was multi-rack.
        let c = m.update(nodes(&[("a", "/r1"), ("b", "/r1"), ("c", "/r1")]));
        assert!(!c.became_multi_rack);
        assert_eq!(c.moved, vec![Arc::from("c")]);
        assert!(m.ever_multi_rack());
        assert_eq!(m.num_racks(), 1);
        assert!(m.satisfied(&["a", "b"], 2), "every rack there is is used");
    }
}
