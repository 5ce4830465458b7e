//! What the NameNode tells about slow nodes: the heartbeat's `isSlownode` (Hadoop's
//! HDFS-16320) and getSlowDatanodeReport (HDFS-16521), both read from [`crate::slowpeers`].

use crate::datanode_info::DatanodeInfo;
use crate::datanodes::DatanodeId;
use crate::manager::BlockManager;

impl BlockManager {
    /// Whether the DataNode `uuid` is in the collected slow node set (its heartbeat's
    /// isSlownode). False when peer stats are off.
    pub fn is_slow_node(&self, uuid: &str) -> bool {
        if !self.slow.config().collects()
            || self
                .slow
                .fresh_slow_node_addrs()
                .is_some_and(|a| a.is_empty())
        {
            return false;
        }
        let dns = self.datanodes.lock("is_slow_node");
        let ids: Vec<&DatanodeId> = dns.all().map(|d| &d.id).collect();
        self.slow.slow_node_uuids(&ids).contains(uuid)
    }

    /// getSlowDatanodeReport: every registered node some peer validly reports slow, the most
    /// reported first (Hadoop's DatanodeManager.getAllSlowDataNodes); empty when peer stats
    /// are off.
    pub fn slow_datanode_report(&self) -> Vec<DatanodeInfo> {
        if !self.slow.config().peer_stats_enabled {
            return Vec::new();
        }
        let per_node = self
            .blocks
            .lock("slow_datanode_report")
            .map
            .replicas_per_node();
        let dns = self.datanodes.lock("slow_datanode_report");
        let now = self.now_mono();
        let addrs = self
            .slow
            .peers
            .slow_nodes(usize::MAX, self.clock.monotonic());
        let mut seen = std::collections::BTreeSet::new();
        addrs
            .iter()
            .filter_map(|a| crate::slowpeers::resolve(a, dns.all().map(|d| &d.id)))
            .filter(|uuid| seen.insert(uuid.clone()))
            .filter_map(|uuid| {
                let d = dns.get(&uuid)?;
                let n = per_node.get(&d.uuid).copied().unwrap_or(0);
                Some(DatanodeInfo::for_report(d, dns.liveness_of(d, now), n))
            })
            .collect()
    }

    /// The decision about each node of [`Self::slow_datanode_report`], by its uuid.
    pub fn slow_datanode_details(&self) -> Vec<(String, crate::slowpeers::SlowNodeDetail)> {
        let details = self.slow.details();
        if details.is_empty() {
            return Vec::new();
        }
        let dns = self.datanodes.lock("slow_datanode_details");
        details
            .into_iter()
            .filter_map(|d| {
                let uuid = crate::slowpeers::resolve(&d.addr, dns.all().map(|n| &n.id))?;
                Some((uuid, d))
            })
            .collect()
    }
}
