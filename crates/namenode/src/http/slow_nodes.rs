//! The slow node attributes of Hadoop's `Hadoop:service=NameNode,name=NameNodeStatus` bean:
//! `SlowPeersReport` and `SlowDisksReport`, JSON text as Hadoop's SlowPeerTracker and
//! SlowDiskTracker write it, present only when peer (disk) statistics are on.

use rhdfs_blockmanager::BlockManager;

/// (attribute name, JSON text) for each report that is enabled.
pub fn slow_node_attributes(bm: &BlockManager) -> Vec<(&'static str, String)> {
    let slow = bm.slow_nodes();
    [
        ("SlowPeersReport", slow.slow_peers_report()),
        ("SlowDisksReport", slow.slow_disks_report()),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| (k, v)))
    .collect()
}
