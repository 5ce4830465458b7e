//! Replica placement. `SimplePlacement` picks distinct live nodes with space: favored
//! nodes first, then the writer's own node, then random others. The rack-aware default
//! policy (seed 003) is `rack_aware::RackAwarePlacement`.

mod deletion;
pub mod rack_aware;
mod read_order;
mod reasons;
mod settings;

use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

/// What placement sees of one live DataNode.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeView {
    pub uuid: String,
    pub ip_addr: String,
    pub host_name: String,
    pub xfer_port: u32,
    pub remaining: u64,
    pub rack: String,
    pub stale: bool,
    /// Active transfer threads (the heartbeat's xceiverCount), for considerLoad.
    pub xceiver_count: u32,
    /// Blocks scheduled to be written to the node and not yet reported.
    pub blocks_scheduled: u64,
    /// Free space of each storage of the type new replicas go to (empty: `remaining` is
    /// the node's one figure).
    pub type_remaining: Vec<u64>,
    /// Decommissioning, decommissioned or in maintenance: never a write target.
    pub out_of_service: bool,
    /// Decommissioned (read last).
    pub decommissioned: bool,
    /// In the slow-node set (slow peer reports).
    pub slow: bool,
    /// Monotonic time of the last heartbeat.
    pub last_update_mono: Duration,
}

impl NodeView {
    /// Hadoop's `getRemaining(type, minSize)`: the free space of the storages that have at
    /// least `min_size` each, summed.
    pub fn remaining_for(&self, min_size: u64) -> u64 {
        if self.type_remaining.is_empty() {
            return if self.remaining >= min_size {
                self.remaining
            } else {
                0
            };
        }
        self.type_remaining.iter().filter(|r| **r >= min_size).sum()
    }

    /// True if `host_port` ("host:port") names this node's transfer address.
    pub fn matches_host_port(&self, host_port: &str) -> bool {
        let Some((host, port)) = host_port.rsplit_once(':') else {
            return false;
        };
        let Ok(port) = port.parse::<u32>() else {
            return false;
        };
        port == self.xfer_port && (host == self.ip_addr || host == self.host_name)
    }

    pub fn matches_host(&self, host: &str) -> bool {
        host == self.ip_addr || host == self.host_name
    }
}

/// A node to keep out of the choice, as a client names it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExcludedNode {
    pub uuid: String,
    pub ip_addr: String,
    pub xfer_port: u32,
}

impl ExcludedNode {
    pub fn matches(&self, n: &NodeView) -> bool {
        (!self.uuid.is_empty() && self.uuid == n.uuid)
            || (!self.ip_addr.is_empty()
                && self.ip_addr == n.ip_addr
                && self.xfer_port == n.xfer_port)
    }
}

/// One placement question.
#[derive(Clone, Debug, Default)]
pub struct PlacementRequest<'a> {
    /// How many targets are wanted.
    pub count: usize,
    /// The writer's host (ip or name), if known.
    pub writer_host: Option<&'a str>,
    pub excluded: &'a [ExcludedNode],
    /// "host:port" transfer addresses to prefer, in order.
    pub favored: &'a [String],
    /// Nodes already holding the block (uuids), never chosen again.
    pub existing: &'a [String],
    pub block_size: u64,
}

/// A placement policy: returns indices into `nodes`, in pipeline order, at most
/// `req.count` of them, all distinct.
pub trait PlacementPolicy: Send + Sync {
    fn choose(
        &self,
        req: &PlacementRequest<'_>,
        nodes: &[NodeView],
        rng: &mut StdRng,
    ) -> Vec<usize>;

    /// The same choice, with why the nodes passed over were rejected and how many nodes
    /// ended up excluded (policies that do not track reasons report none).
    fn choose_detailed(
        &self,
        req: &PlacementRequest<'_>,
        nodes: &[NodeView],
        rng: &mut StdRng,
    ) -> rack_aware::PlacementOutcome {
        let chosen = self.choose(req, nodes, rng);
        rack_aware::PlacementOutcome {
            chosen,
            excluded: req.excluded.len(),
            ..Default::default()
        }
    }

    /// The rack of each node (a policy without a rack mapping: the view's own rack).
    fn racks_of(&self, nodes: &[NodeView]) -> Vec<String> {
        rack_aware::view_racks(nodes)
    }

    /// The rack of a host that is not one of `nodes` (a client), if a mapping knows it.
    fn rack_of_host(&self, _host: &str) -> Option<String> {
        None
    }

    /// Read order (indices into `nodes`) for a reader on `reader_host`: its node, its
    /// rack, the rest (shuffled among equals); (per `flags`) slow, then stale, then
    /// decommissioned nodes last (`topology::sort_by_distance`).
    fn sort_for_read(
        &self,
        reader_host: Option<&str>,
        nodes: &[NodeView],
        flags: crate::topology::ReadSortFlags,
        rng: &mut StdRng,
    ) -> Vec<usize> {
        rack_aware::sort_for_read(self, reader_host, nodes, flags, rng)
    }

    /// Which of `candidates` (indices into `holders`, the nodes holding good replicas) to
    /// delete so that `expected` replicas remain, keeping rack spread (Hadoop's
    /// chooseReplicasToDelete; see `rack_aware::choose_replicas_to_delete`).
    #[allow(clippy::too_many_arguments)]
    fn choose_excess(
        &self,
        holders: &[NodeView],
        candidates: &[usize],
        expected: usize,
        added: Option<usize>,
        del_hint: Option<usize>,
        now_mono: Duration,
        heartbeat_tolerance: Duration,
    ) -> Vec<usize> {
        let racks = self.racks_of(holders);
        let h = rack_aware::replica_holders(holders, racks);
        rack_aware::choose_replicas_to_delete(
            &h,
            candidates,
            expected,
            added,
            del_hint,
            now_mono,
            heartbeat_tolerance,
        )
    }
}

/// Distinct live nodes with `remaining >= block_size`; favored, then local, then random.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimplePlacement;

impl PlacementPolicy for SimplePlacement {
    fn choose(
        &self,
        req: &PlacementRequest<'_>,
        nodes: &[NodeView],
        rng: &mut StdRng,
    ) -> Vec<usize> {
        let eligible = |i: usize| {
            let n = &nodes[i];
            n.remaining >= req.block_size
                && !req.excluded.iter().any(|e| e.matches(n))
                && !req.existing.contains(&n.uuid)
        };
        let mut chosen: Vec<usize> = Vec::with_capacity(req.count);
        for f in req.favored {
            if chosen.len() >= req.count {
                break;
            }
            if let Some(i) = (0..nodes.len())
                .find(|&i| nodes[i].matches_host_port(f) && eligible(i) && !chosen.contains(&i))
            {
                chosen.push(i);
            }
        }
        if chosen.len() < req.count
            && let Some(host) = req.writer_host
            && let Some(i) = (0..nodes.len())
                .find(|&i| nodes[i].matches_host(host) && eligible(i) && !chosen.contains(&i))
        {
            chosen.push(i);
        }
        if chosen.len() < req.count {
            let mut rest: Vec<usize> = (0..nodes.len())
                .filter(|&i| eligible(i) && !chosen.contains(&i))
                .collect();
            rest.shuffle(rng);
            // Fresh nodes before stale ones, random within each group.
            rest.sort_by_key(|&i| nodes[i].stale);
            let need = req.count - chosen.len();
            chosen.extend(rest.into_iter().take(need));
        }
        chosen
    }
}

/// Hadoop's message when fewer than minReplication targets could be found.
pub fn not_enough_replicas_message(
    src: &str,
    chosen: usize,
    min_replication: usize,
    running: usize,
    excluded: usize,
) -> String {
    format!(
        "File {src} could only be written to {chosen} of the {min_replication} minReplication nodes. \
         There are {running} datanode(s) running and {excluded} node(s) are excluded in this operation."
    )
}

/// A random index below `n` (n > 0), for callers that need one pick.
pub fn pick(rng: &mut StdRng, n: usize) -> usize {
    rng.random_range(0..n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn node(i: u32, remaining: u64) -> NodeView {
        NodeView {
            uuid: format!("uuid-{i}"),
            ip_addr: format!("10.0.0.{i}"),
            host_name: format!("host{i}"),
            xfer_port: 9866,
            remaining,
            rack: "/default-rack".into(),
            stale: false,
            ..Default::default()
        }
    }

    fn nodes(n: u32) -> Vec<NodeView> {
        (1..=n).map(|i| node(i, 1 << 30)).collect()
    }

    #[test]
    fn distinct_and_bounded_by_available() {
        let ns = nodes(3);
        let mut rng = StdRng::seed_from_u64(7);
        let req = PlacementRequest {
            count: 5,
            block_size: 1024,
            ..Default::default()
        };
        let mut got = SimplePlacement.choose(&req, &ns, &mut rng);
        assert_eq!(got.len(), 3);
        got.sort();
        got.dedup();
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn writer_local_first() {
        let ns = nodes(5);
        for seed in 0..20 {
            let mut rng = StdRng::seed_from_u64(seed);
            let req = PlacementRequest {
                count: 3,
                writer_host: Some("10.0.0.4"),
                block_size: 1,
                ..Default::default()
            };
            let got = SimplePlacement.choose(&req, &ns, &mut rng);
            assert_eq!(got[0], 3);
            assert_eq!(got.len(), 3);
        }
        // A writer that is not a DataNode gets random nodes.
        let mut rng = StdRng::seed_from_u64(1);
        let req = PlacementRequest {
            count: 2,
            writer_host: Some("192.168.1.1"),
            block_size: 1,
            ..Default::default()
        };
        assert_eq!(SimplePlacement.choose(&req, &ns, &mut rng).len(), 2);
    }

    #[test]
    fn favored_before_local() {
        let ns = nodes(5);
        let favored = vec![
            "host2:9866".to_string(),
            "10.0.0.5:9866".to_string(),
            "host9:9866".to_string(),
        ];
        let mut rng = StdRng::seed_from_u64(3);
        let req = PlacementRequest {
            count: 3,
            writer_host: Some("host1"),
            favored: &favored,
            block_size: 1,
            ..Default::default()
        };
        assert_eq!(SimplePlacement.choose(&req, &ns, &mut rng), vec![1, 4, 0]);
        // a favored address with the wrong port does not match
        let favored = vec!["host2:1".to_string()];
        let req = PlacementRequest {
            count: 1,
            favored: &favored,
            block_size: 1,
            ..Default::default()
        };
        let got = SimplePlacement.choose(&req, &ns, &mut rng);
        assert_eq!(got.len(), 1);
    }

    #[test]
    fn excluded_by_uuid_or_address_and_space() {
        let mut ns = nodes(4);
        ns[3].remaining = 10;
        let excluded = vec![
            ExcludedNode {
                uuid: "uuid-1".into(),
                ..Default::default()
            },
            ExcludedNode {
                uuid: String::new(),
                ip_addr: "10.0.0.2".into(),
                xfer_port: 9866,
            },
        ];
        let mut rng = StdRng::seed_from_u64(9);
        let req = PlacementRequest {
            count: 3,
            excluded: &excluded,
            block_size: 100,
            ..Default::default()
        };
        assert_eq!(SimplePlacement.choose(&req, &ns, &mut rng), vec![2]);
        let existing = vec!["uuid-3".to_string()];
        let req = PlacementRequest {
            count: 3,
            excluded: &excluded,
            existing: &existing,
            block_size: 100,
            ..Default::default()
        };
        assert!(SimplePlacement.choose(&req, &ns, &mut rng).is_empty());
    }

    #[test]
    fn same_seed_same_choice() {
        let ns = nodes(10);
        let req = PlacementRequest {
            count: 3,
            block_size: 1,
            ..Default::default()
        };
        let a = SimplePlacement.choose(&req, &ns, &mut StdRng::seed_from_u64(42));
        let b = SimplePlacement.choose(&req, &ns, &mut StdRng::seed_from_u64(42));
        assert_eq!(a, b);
    }

    #[test]
    fn message_is_hadoops() {
        assert_eq!(
            not_enough_replicas_message("/a/f", 0, 1, 3, 2),
            "File /a/f could only be written to 0 of the 1 minReplication nodes. \
             There are 3 datanode(s) running and 2 node(s) are excluded in this operation."
        );
    }
}
