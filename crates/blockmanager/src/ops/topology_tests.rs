use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use rhdfs_conf::clock::{ManualClock, SharedClock};

use super::*;
use crate::block::Block;
use crate::config::BlockManagerConfig;
use crate::datanode_info::ReportKind;
use crate::error::BlockManagerError;
use crate::manager::NamespaceInfo;
use crate::ops::reports::IncrementalItem;
use crate::topology::{MappingSource, TopologyConfig, TopologyError};

const GB: u64 = 1 << 30;

fn temp_file(name: &str, text: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "rhdfs-topology-ops-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("mkdir {}: {e}", d.display()));
    let p = d.join(name);
    std::fs::write(&p, text).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
    p
}

/// A block manager whose racks come from `table` (TableMapping), seed `seed`.
fn manager(
    table: &str,
    seed: u64,
    tweak: impl FnOnce(&mut BlockManagerConfig),
) -> (Arc<BlockManager>, Arc<ManualClock>) {
    let mut cfg = BlockManagerConfig {
        seed: Some(seed),
        ..BlockManagerConfig::default()
    };
    cfg.placement.topology = TopologyConfig {
        source: MappingSource::Table(temp_file("topology.table", table)),
        reject_unresolved: false,
    };
    tweak(&mut cfg);
    let clock = ManualClock::shared(1_700_000_000_000);
    let shared: SharedClock = clock.clone();
    let ns = NamespaceInfo {
        namespace_id: 1,
        cluster_id: "CID".into(),
        block_pool_id: "BP-1".into(),
        ctime: 0,
    };
    (BlockManager::with_config(cfg, shared, ns), clock)
}

/// DataNode `i` on host `h{i}` with IP 10.0.0.{i}.
fn dn(i: u32) -> DatanodeId {
    DatanodeId {
        uuid: format!("dn{i}"),
        ip_addr: format!("10.0.0.{i}"),
        host_name: format!("h{i}"),
        xfer_port: 9866,
        info_port: 9864,
        info_secure_port: 0,
        ipc_port: 9867,
    }
}

fn join(bm: &BlockManager, i: u32) {
    bm.register_datanode(dn(i), "3.5.0")
        .unwrap_or_else(|e| panic!("register dn{i}: {e}"));
    let report = crate::datanodes::StorageReport {
        storage_id: format!("DS-{i}"),
        storage_type: 1,
        capacity: 2 * GB,
        remaining: GB,
        ..Default::default()
    };
    assert!(
        bm.heartbeat(&format!("dn{i}"), vec![report], 0, 0, false)
            .registered
    );
}

/// A COMPLETE block with one finalized replica on each of `nodes`, its replication the
/// number of nodes (no surplus to delete).
fn complete_block(bm: &BlockManager, id: u64, nodes: &[u32]) {
    let replication = u16::try_from(nodes.len()).unwrap_or(3);
    bm.add_block_under_construction(Block::new(id, 1001, 0), replication, &[]);
    bm.commit_block(Block::new(id, 1001, 64))
        .unwrap_or_else(|e| panic!("commit: {e}"));
    for &i in nodes {
        bm.incremental_report(
            &format!("dn{i}"),
            &format!("DS-{i}"),
            1,
            &[IncrementalItem::Received(Block::new(id, 1001, 64))],
        )
        .unwrap_or_else(|e| panic!("ibr: {e}"));
    }
}

/// Hosts h1, h2 on /r1; h3, h4 on /r2; client host 192.168.0.9 on /r2.
const TABLE: &str = "h1 /r1\n10.0.0.2 /r1\nh3 /r2\n10.0.0.4 /r2\n192.168.0.9 /r2\n";

fn uuids(locs: &[Location]) -> Vec<&str> {
    locs.iter().map(|l| l.info.id.uuid.as_str()).collect()
}

#[test]
fn registration_stores_the_rack_everywhere() {
    let (bm, _clock) = manager(TABLE, 1, |_| {});
    for i in 1..=4 {
        join(&bm, i);
    }
    // by host name (h1, h3) or by IP (10.0.0.2, 10.0.0.4)
    let report = bm.datanode_report(ReportKind::All);
    let racks: Vec<(&str, &str)> = report
        .iter()
        .map(|d| (d.id.uuid.as_str(), d.location.as_str()))
        .collect();
    assert_eq!(
        racks,
        vec![
            ("dn1", "/r1"),
            ("dn2", "/r1"),
            ("dn3", "/r2"),
            ("dn4", "/r2")
        ]
    );
    assert_eq!(bm.num_racks(), 2);
    assert_eq!(bm.node_counts().racks, 2);
    complete_block(&bm, 1, &[1, 3]);
    let locs = bm.locations(1);
    let mut located: Vec<(String, String)> = locs
        .iter()
        .map(|l| (l.info.id.uuid.clone(), l.info.location.clone()))
        .collect();
    located.sort();
    assert_eq!(
        located,
        vec![("dn1".into(), "/r1".into()), ("dn3".into(), "/r2".into())]
    );
    let views = bm.block_views(&[1]);
    let v = views[0]
        .as_ref()
        .unwrap_or_else(|| panic!("block 1 viewed"));
    let mut replica_racks: Vec<&str> = v.replicas.iter().map(|r| r.rack.as_str()).collect();
    replica_racks.sort();
    assert_eq!(replica_racks, vec!["/r1", "/r2"]);
    assert_eq!(v.rack_spread.racks, 2);
    assert!(v.rack_spread.is_satisfied(3));
    // a block on one rack of a two-rack cluster is mis-replicated
    complete_block(&bm, 2, &[1, 2]);
    let views = bm.block_views(&[2]);
    let v = views[0]
        .as_ref()
        .unwrap_or_else(|| panic!("block 2 viewed"));
    assert!(!v.rack_spread.is_satisfied(3));
    assert!(v.rack_spread.is_satisfied(1), "one replica needs one rack");
    assert_eq!(
        v.rack_spread.violation(3).as_deref(),
        Some(
            "Block should be additionally replicated on 1 more rack(s). Total number of racks in the cluster: 2"
        )
    );
    // new targets spread over both racks
    let targets = bm
        .choose_targets("/f", 3, Some("10.0.0.1"), &[], &[], 1)
        .unwrap_or_else(|e| panic!("targets: {e}"));
    let spread: std::collections::BTreeSet<String> =
        targets.iter().map(|l| l.info.location.clone()).collect();
    assert_eq!(spread.len(), 2, "{targets:?}");
}

#[test]
fn single_rack_cluster_is_never_mis_replicated() {
    let (bm, _clock) = manager("", 1, |_| {});
    join(&bm, 1);
    join(&bm, 2);
    complete_block(&bm, 1, &[1]);
    let views = bm.block_views(&[1]);
    let v = views[0].as_ref().unwrap_or_else(|| panic!("viewed"));
    assert_eq!(v.replicas[0].rack, DEFAULT_RACK);
    assert!(v.rack_spread.is_satisfied(3));
    assert_eq!(bm.node_counts().racks, 1);
}

#[test]
fn registration_refused_for_a_rack_at_another_depth() {
    let (bm, _clock) = manager("h1 /r1\nh2 /dc1/r2\n", 1, |_| {});
    join(&bm, 1);
    let err = bm
        .register_datanode(dn(2), "3.5.0")
        .err()
        .unwrap_or_else(|| panic!("refused"));
    assert!(matches!(
        err,
        BlockManagerError::Topology(TopologyError::Invalid(_))
    ));
    assert_eq!(
        err.to_string(),
        "Failed to add /dc1/r2/10.0.0.2:9866: You cannot have a rack and a non-rack node at the \
         same level of the network topology."
    );
    assert_eq!(bm.live_datanodes(), 1);
}

#[test]
fn unresolved_nodes_default_rack_or_rejected() {
    // the script fails: /default-rack unless unresolved nodes are rejected
    let script = temp_file("fail.sh", "#!/bin/sh\nexit 1\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("chmod: {e}"));
    }
    let source = MappingSource::Script {
        path: script,
        max_args: 100,
    };
    let s2 = source.clone();
    let (bm, _clock) = manager("", 1, |c| c.placement.topology.source = source);
    join(&bm, 1);
    assert_eq!(
        bm.datanode_report(ReportKind::All)[0].location,
        DEFAULT_RACK
    );
    let (bm, _clock) = manager("", 1, |c| {
        c.placement.topology = TopologyConfig {
            source: s2,
            reject_unresolved: true,
        }
    });
    let err = bm
        .register_datanode(dn(1), "3.5.0")
        .err()
        .unwrap_or_else(|| panic!("rejected"));
    assert!(matches!(
        err,
        BlockManagerError::Topology(TopologyError::Unresolved(_))
    ));
    assert_eq!(err.to_string(), "Unresolved topology mapping for host h1");
}

#[test]
fn reads_sorted_by_distance_from_the_reader() {
    let (bm, _clock) = manager(TABLE, 3, |_| {});
    for i in 1..=4 {
        join(&bm, i);
    }
    complete_block(&bm, 1, &[1, 2, 3, 4]);
    complete_block(&bm, 2, &[2, 4]);
    for _ in 0..10 {
        // a reader on DataNode 3's host: dn3, then its rack-mate dn4, then rack /r1
        let mut b1 = bm.locations(1);
        let mut b2 = bm.locations(2);
        bm.sort_for_reader("10.0.0.3", &mut [&mut b1, &mut b2]);
        assert_eq!(&uuids(&b1)[..2], &["dn3", "dn4"]);
        assert_eq!(uuids(&b2), vec!["dn4", "dn2"]);
        // by host name as well
        let mut b1 = bm.locations(1);
        bm.sort_for_reader("h1", &mut [&mut b1]);
        assert_eq!(&uuids(&b1)[..2], &["dn1", "dn2"]);
        // a client that is not a DataNode, on /r2 by the table: /r2 first, in some order
        let mut b1 = bm.locations(1);
        bm.sort_for_reader("192.168.0.9", &mut [&mut b1]);
        let mut first: Vec<&str> = uuids(&b1)[..2].to_vec();
        first.sort();
        assert_eq!(first, vec!["dn3", "dn4"]);
    }
    // equal distances shuffled: an unknown client sees several first nodes
    let mut firsts = std::collections::BTreeSet::new();
    for _ in 0..40 {
        let mut b1 = bm.locations(1);
        bm.sort_for_reader("172.16.0.1", &mut [&mut b1]);
        assert_eq!(b1.len(), 4);
        firsts.insert(b1[0].info.id.uuid.clone());
    }
    assert!(firsts.len() > 1, "{firsts:?}");
}

#[test]
fn read_order_is_reproducible_with_a_seed() {
    let orders = |seed| {
        let (bm, _clock) = manager(TABLE, seed, |_| {});
        for i in 1..=4 {
            join(&bm, i);
        }
        complete_block(&bm, 1, &[1, 2, 3, 4]);
        (0..5)
            .map(|_| {
                let mut b = bm.locations(1);
                bm.sort_for_reader("172.16.0.1", &mut [&mut b]);
                uuids(&b).iter().map(|s| s.to_string()).collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(orders(11), orders(11));
}

#[test]
fn decommissioned_and_stale_nodes_read_last() {
    let stale_setup = |avoid: bool| {
        let (bm, clock) = manager(TABLE, 5, |c| {
            c.placement.settings.avoid_stale_for_read = avoid
        });
        for i in 1..=4 {
            join(&bm, i);
        }
        complete_block(&bm, 1, &[1, 2, 3, 4]);
        // dn1 (the reader's own node) goes stale: every other node heartbeats later
        clock.advance(Duration::from_secs(40));
        for i in 2..=4 {
            join(&bm, i);
        }
        bm
    };
    let bm = stale_setup(true);
    let mut b = bm.locations(1);
    bm.sort_for_reader("10.0.0.1", &mut [&mut b]);
    assert_eq!(uuids(&b)[0], "dn2", "rack-mate before the stale local node");
    assert_eq!(uuids(&b)[3], "dn1");
    // dfs.namenode.avoid.read.stale.datanode=false (the default): distance only
    let bm = stale_setup(false);
    let mut b = bm.locations(1);
    bm.sort_for_reader("10.0.0.1", &mut [&mut b]);
    assert_eq!(uuids(&b)[0], "dn1");
    // a decommissioned replica holder is read last even by its own host
    bm.datanodes
        .lock("test")
        .set_admin("dn1", AdminState::Decommissioned);
    let mut b = bm.locations(1);
    bm.sort_for_reader("10.0.0.1", &mut [&mut b]);
    assert_eq!(uuids(&b)[3], "dn1");
    assert_eq!(uuids(&b)[0], "dn2");
    // a node being decommissioned is read after the in-service ones, before a
    // decommissioned one (Hadoop's order: in service, stale, decommissioning,
    // decommissioned)
    bm.datanodes
        .lock("test")
        .set_admin("dn1", AdminState::DecommissionInProgress);
    bm.datanodes
        .lock("test")
        .set_admin("dn2", AdminState::Decommissioned);
    let mut b = bm.locations(1);
    bm.sort_for_reader("10.0.0.1", &mut [&mut b]);
    let mut first: Vec<&str> = uuids(&b)[..2].to_vec();
    first.sort();
    assert_eq!(first, vec!["dn3", "dn4"]);
    assert_eq!(&uuids(&b)[2..], &["dn1", "dn2"]);
}

#[test]
fn read_consider_load_orders_equal_distances_by_xceivers() {
    let (bm, _clock) = manager(TABLE, 9, |c| c.placement.settings.read_consider_load = true);
    for i in 1..=4 {
        join(&bm, i);
    }
    complete_block(&bm, 1, &[1, 2, 3, 4]);
    // busier nodes report more transfer threads
    for (i, load) in [(1, 9), (2, 1), (3, 7), (4, 3)] {
        let report = crate::datanodes::StorageReport {
            storage_id: format!("DS-{i}"),
            storage_type: 1,
            capacity: 2 * GB,
            remaining: GB,
            ..Default::default()
        };
        bm.heartbeat(&format!("dn{i}"), vec![report], load, 0, false);
    }
    for _ in 0..5 {
        // a client off the cluster: every node at the same distance, least busy first
        let mut b = bm.locations(1);
        bm.sort_for_reader("172.16.0.1", &mut [&mut b]);
        assert_eq!(uuids(&b), vec!["dn2", "dn4", "dn3", "dn1"]);
        // distance still comes first: the reader's rack (/r2) before the other
        let mut b = bm.locations(1);
        bm.sort_for_reader("192.168.0.9", &mut [&mut b]);
        assert_eq!(uuids(&b), vec!["dn4", "dn3", "dn2", "dn1"]);
    }
}
