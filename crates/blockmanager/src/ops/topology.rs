//! The block manager's side of the network topology (Hadoop's DatanodeManager parts):
//! resolving a registering DataNode's rack, and ordering block locations for a reader
//! (sortLocatedBlocks).
//!
//! Rack resolution may run a topology script, so it happens before the `datanodes` lock
//! is taken; the lock is held only to check the rack against the topology and store it.

use std::collections::HashMap;

use crate::datanodes::{DEFAULT_RACK, DatanodeId, Liveness, RegisterOutcome};
use crate::error::BlockManagerError;
use crate::manager::{BlockManager, Location};
use crate::redundancy::decommission::AdminState;
use crate::topology::{ReadNode, ReadSortFlags, Reader, TopologyError, sort_by_distance};

/// What read ordering knows of one replica holder.
struct Holder {
    rack: String,
    stale: bool,
    decommissioning: bool,
    decommissioned: bool,
    slow: bool,
    xceiver_count: u32,
}

impl BlockManager {
    /// The network location of a DataNode, from the configured mapping (by IP, then host
    /// name): Hadoop's resolveNetworkLocation. Unresolved nodes go to /default-rack unless
    /// `dfs.namenode.reject-unresolved-dn-topology-mapping` is set.
    pub fn resolve_network_location(&self, id: &DatanodeId) -> Result<String, TopologyError> {
        if self.resolver.is_trivial() {
            return Ok(DEFAULT_RACK.to_string());
        }
        match self.resolver.rack_of_node(&id.ip_addr, &id.host_name) {
            Ok(rack) => Ok(rack),
            Err(TopologyError::Unresolved(_)) => {
                let host = if id.host_name.is_empty() {
                    &id.ip_addr
                } else {
                    &id.host_name
                };
                tracing::error!(host = %host, "The resolve call returned null!");
                Err(TopologyError::Unresolved(host.clone()))
            }
            Err(e) => Err(e),
        }
    }

    /// Resolves `id`'s rack (outside every lock), then records the registration on it.
    /// A rack that does not fit the topology is refused and the mapping's cached answers
    /// for the node are dropped, so a corrected mapping is asked again next time.
    pub(crate) fn register_on_rack(
        &self,
        id: DatanodeId,
        software_version: &str,
    ) -> Result<RegisterOutcome, BlockManagerError> {
        let location = self.resolve_network_location(&id)?;
        let ip = id.ip_addr.clone();
        let host = id.host_name.clone();
        let now_ms = self.clock.now_millis();
        let now = self.now_mono();
        let res =
            self.datanodes
                .lock("register")
                .register(id, software_version, &location, now_ms, now);
        match res {
            Ok(o) => Ok(o),
            Err(e) => {
                tracing::error!(%e, "registration refused");
                self.resolver.forget(&[&ip, &host]);
                Err(e.into())
            }
        }
    }

    /// Racks holding a DataNode that is not dead.
    pub fn num_racks(&self) -> usize {
        let now = self.now_mono();
        self.datanodes.lock("num_racks").num_racks(now)
    }

    /// Read ordering flags from the configuration: `dfs.namenode.avoid.read.stale.datanode`,
    /// `dfs.namenode.avoid.read.slow.datanode`, `dfs.namenode.read.considerLoad` and
    /// `dfs.namenode.read.considerStorageType`.
    pub fn read_sort_flags(&self) -> ReadSortFlags {
        let s = &self.cfg.placement.settings;
        ReadSortFlags {
            avoid_stale: s.avoid_stale_for_read,
            avoid_slow: self.slow.config().avoid_for_read,
            consider_load: s.read_consider_load,
            consider_storage_type: s.read_consider_storage_type,
        }
    }

    /// Orders the locations of each block for a reader at `reader_host` (an IP address or
    /// host name), as Hadoop's DatanodeManager.sortLocatedBlocks: by network distance from
    /// the reader (its DataNode, its rack, other racks; a reader that is not a DataNode
    /// is placed by the rack mapping), equal distances shuffled with the seeded RNG (or
    /// ordered by load / storage type when configured); slow and stale nodes (when
    /// avoided), then decommissioning and decommissioned nodes last.
    pub fn sort_for_reader(&self, reader_host: &str, blocks: &mut [&mut Vec<Location>]) {
        if blocks.iter().all(|b| b.len() < 2) {
            return;
        }
        let flags = self.read_sort_flags();
        let (holders, mut local) = {
            let dns = self.datanodes.lock("sort_locations");
            let now = self.now_mono();
            let slow = if flags.avoid_slow {
                let ids: Vec<&DatanodeId> = dns.all().map(|d| &d.id).collect();
                self.slow.slow_node_uuids(&ids)
            } else {
                Default::default()
            };
            let mut holders: HashMap<String, Holder> = HashMap::new();
            for loc in blocks.iter().flat_map(|b| b.iter()) {
                let uuid = &loc.info.id.uuid;
                if holders.contains_key(uuid) {
                    continue;
                }
                let h = match dns.get(uuid) {
                    Some(d) => Holder {
                        rack: d.network_location.clone(),
                        stale: dns.liveness_of(d, now) == Liveness::Stale,
                        decommissioning: d.admin == AdminState::DecommissionInProgress,
                        decommissioned: d.admin == AdminState::Decommissioned,
                        slow: slow.contains(uuid),
                        xceiver_count: d.xceiver_count,
                    },
                    None => Holder {
                        rack: loc.info.location.clone(),
                        stale: false,
                        decommissioning: false,
                        decommissioned: false,
                        slow: false,
                        xceiver_count: 0,
                    },
                };
                holders.insert(uuid.clone(), h);
            }
            let mut local: Vec<(String, String)> = dns
                .all()
                .filter(|d| {
                    dns.liveness_of(d, now) != Liveness::Dead
                        && (d.id.ip_addr == reader_host || d.id.host_name == reader_host)
                })
                .map(|d| (d.id.uuid.clone(), d.network_location.clone()))
                .collect();
            local.sort();
            (holders, local)
        };
        // A reader that is not a DataNode is placed by the mapping (outside the locks: it
        // may run the topology script).
        let mapped_rack = if !local.is_empty() {
            None
        } else if self.resolver.is_trivial() {
            Some(DEFAULT_RACK.to_string())
        } else {
            match self.resolver.resolve(&[reader_host.to_string()]) {
                Ok(mut v) => v.pop(),
                Err(e) => {
                    tracing::error!(%e, "Node Resolution failed. Please make sure that rack awareness scripts are functional.");
                    None
                }
            }
        };
        let mut rng = self.rng.lock();
        // A reader on a DataNode's host is that node (one of them, at random, when the
        // host runs several, as Hadoop's Host2NodesMap answers).
        let (reader_node, reader_rack) = match local.len() {
            0 => (None, mapped_rack),
            n => {
                let (uuid, rack) = local.swap_remove(rand::Rng::random_range(&mut *rng, 0..n));
                (Some(uuid), Some(rack))
            }
        };
        let reader = Reader {
            node: reader_node.as_deref(),
            rack: reader_rack.as_deref(),
        };
        for locs in blocks.iter_mut() {
            if locs.len() < 2 {
                continue;
            }
            let nodes: Vec<ReadNode<'_>> = locs
                .iter()
                .map(|l| {
                    let uuid = l.info.id.uuid.as_str();
                    match holders.get(uuid) {
                        Some(h) => ReadNode {
                            uuid,
                            rack: &h.rack,
                            stale: h.stale,
                            decommissioning: h.decommissioning,
                            decommissioned: h.decommissioned,
                            slow: h.slow,
                            xceiver_count: h.xceiver_count,
                            storage_type: l.storage_type,
                        },
                        None => ReadNode {
                            uuid,
                            rack: DEFAULT_RACK,
                            storage_type: l.storage_type,
                            ..Default::default()
                        },
                    }
                })
                .collect();
            let order = sort_by_distance(Some(&reader), &nodes, flags, &mut rng);
            drop(nodes);
            let mut taken: Vec<Option<Location>> = locs.drain(..).map(Some).collect();
            for i in order {
                if let Some(l) = taken.get_mut(i).and_then(Option::take) {
                    locs.push(l);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "topology_tests.rs"]
mod tests;
