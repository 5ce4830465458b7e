use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use rand::SeedableRng;

use super::*;
use crate::placement::ExcludedNode;
use std::time::Duration;

use rhdfs_conf::Configuration;
use rhdfs_conf::keys::*;

use crate::topology::{DnsToSwitchMapping, ReadSortFlags, TableMapping};

const GB: u64 = 1 << 30;

/// Node `i` of rack `r` ("/r{r}"): ip 10.0.r.i, host h{r}-{i}, uuid u{r}-{i}.
fn node(r: usize, i: usize) -> NodeView {
    NodeView {
        uuid: format!("u{r}-{i}"),
        ip_addr: format!("10.0.{r}.{i}"),
        host_name: format!("h{r}-{i}"),
        xfer_port: 9866,
        remaining: GB,
        rack: format!("/r{r}"),
        ..Default::default()
    }
}

/// `sizes[r]` nodes on rack r.
fn cluster(sizes: &[usize]) -> Vec<NodeView> {
    sizes
        .iter()
        .enumerate()
        .flat_map(|(r, &n)| (0..n).map(move |i| node(r, i)))
        .collect()
}

fn policy() -> RackAwarePlacement {
    RackAwarePlacement::default()
}

fn policy_with(s: PlacementSettings) -> RackAwarePlacement {
    RackAwarePlacement::new(s, Arc::new(RackResolver::default()))
}

fn req(count: usize, block_size: u64) -> PlacementRequest<'static> {
    PlacementRequest {
        count,
        block_size,
        ..Default::default()
    }
}

fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

fn racks_of(nodes: &[NodeView], chosen: &[usize]) -> BTreeSet<String> {
    chosen.iter().map(|&i| nodes[i].rack.clone()).collect()
}

fn distinct(chosen: &[usize]) -> bool {
    chosen.iter().collect::<BTreeSet<_>>().len() == chosen.len()
}

#[test]
fn three_replicas_span_two_racks_writer_first() {
    for sizes in [vec![2, 2], vec![3, 2, 4], vec![5, 5, 5, 5], vec![2, 6]] {
        let nodes = cluster(&sizes);
        for seed in 0..30 {
            let w = (seed as usize * 7) % nodes.len();
            let r = PlacementRequest {
                writer_host: Some(&nodes[w].ip_addr),
                ..req(3, 1024)
            };
            let out = policy().choose_detailed(&r, &nodes, &mut rng(seed));
            assert_eq!(out.chosen.len(), 3, "{sizes:?} seed {seed}");
            assert_eq!(out.chosen[0], w, "writer first");
            assert!(distinct(&out.chosen));
            assert_eq!(
                racks_of(&nodes, &out.chosen).len(),
                2,
                "{sizes:?} seed {seed}"
            );
            // 2nd and 3rd share a rack other than the writer's
            assert_ne!(nodes[out.chosen[1]].rack, nodes[w].rack);
            assert_eq!(nodes[out.chosen[1]].rack, nodes[out.chosen[2]].rack);
            assert!(out.reasons.is_empty());
        }
    }
}

#[test]
fn writer_not_a_datanode_or_local_not_preferred() {
    let nodes = cluster(&[3, 3]);
    let r = PlacementRequest {
        writer_host: Some("192.168.9.9"),
        ..req(3, 1)
    };
    let out = policy().choose_detailed(&r, &nodes, &mut rng(3));
    assert_eq!(out.chosen.len(), 3);
    assert_eq!(racks_of(&nodes, &out.chosen).len(), 2);
    // prefer-local-node off: the first replica is on the writer's rack, not its node
    let p = policy_with(PlacementSettings {
        prefer_local_node: false,
        ..Default::default()
    });
    let r = PlacementRequest {
        writer_host: Some("10.0.1.0"),
        ..req(1, 1)
    };
    for seed in 0..20 {
        let out = p.choose_detailed(&r, &nodes, &mut rng(seed));
        // the writer's rack, the writer's node only by chance
        assert_eq!(nodes[out.chosen[0]].rack, "/r1");
    }
}

#[test]
fn client_rack_from_the_mapping_gets_the_first_replica() {
    let nodes: Vec<NodeView> = cluster(&[3, 3])
        .into_iter()
        .map(|mut n| {
            n.rack = DEFAULT_RACK.into();
            n
        })
        .collect();
    let table = TableMapping::parse(
        "10.0.0.0 /a\n10.0.0.1 /a\n10.0.0.2 /a\n10.0.1.0 /b\n10.0.1.1 /b\n10.0.1.2 /b\n192.168.0.1 /b\n",
    );
    assert!(table.resolve(&["10.0.0.0".to_string()]).is_some());
    let p = RackAwarePlacement::new(
        PlacementSettings::default(),
        Arc::new(RackResolver::with_mapping(Box::new(table), false)),
    );
    let racks = p.racks_of(&nodes);
    assert_eq!(racks[0], "/a");
    assert_eq!(racks[5], "/b");
    let r = PlacementRequest {
        writer_host: Some("192.168.0.1"),
        ..req(3, 1)
    };
    for seed in 0..20 {
        let out = p.choose_detailed(&r, &nodes, &mut rng(seed));
        assert_eq!(out.chosen.len(), 3);
        assert_eq!(racks[out.chosen[0]], "/b", "first on the client's rack");
        let spread: BTreeSet<&String> = out.chosen.iter().map(|&i| &racks[i]).collect();
        assert_eq!(spread.len(), 2);
    }
}

#[test]
fn single_rack_falls_back_to_any_good_node() {
    let nodes = cluster(&[4]);
    let r = PlacementRequest {
        writer_host: Some("h0-2"),
        ..req(3, 1)
    };
    let out = policy().choose_detailed(&r, &nodes, &mut rng(1));
    assert_eq!(out.chosen.len(), 3);
    assert_eq!(out.chosen[0], 2);
    assert!(distinct(&out.chosen));
    // more than the cluster has: all of it
    let out = policy().choose_detailed(&req(9, 1), &nodes, &mut rng(1));
    assert_eq!(out.chosen.len(), 4);
    assert!(distinct(&out.chosen));
}

#[test]
fn favored_nodes_first_then_policy() {
    let nodes = cluster(&[3, 3]);
    let favored = vec!["h1-2:9866".to_string(), "10.0.0.1:9866".to_string()];
    let r = PlacementRequest {
        favored: &favored,
        ..req(3, 1)
    };
    for seed in 0..10 {
        let out = policy().choose_detailed(&r, &nodes, &mut rng(seed));
        assert_eq!(out.chosen.len(), 3);
        assert!(out.chosen.contains(&5) && out.chosen.contains(&1));
        assert_eq!(
            out.chosen[0], 5,
            "pipeline starts at the first favored node"
        );
        assert!(distinct(&out.chosen));
    }
    // an excluded favored node is not used
    let excluded = vec![ExcludedNode {
        uuid: "u1-2".into(),
        ..Default::default()
    }];
    let r = PlacementRequest {
        favored: &favored,
        excluded: &excluded,
        ..req(2, 1)
    };
    let out = policy().choose_detailed(&r, &nodes, &mut rng(2));
    assert_eq!(out.chosen.len(), 2);
    assert!(!out.chosen.contains(&5));
    assert!(out.chosen.contains(&1));
}

#[test]
fn excluded_nodes_are_never_chosen() {
    let nodes = cluster(&[3, 3, 3]);
    let excluded: Vec<ExcludedNode> = [0, 4, 8]
        .iter()
        .map(|&i: &usize| ExcludedNode {
            uuid: String::new(),
            ip_addr: nodes[i].ip_addr.clone(),
            xfer_port: 9866,
        })
        .collect();
    for seed in 0..20 {
        let r = PlacementRequest {
            excluded: &excluded,
            writer_host: Some("10.0.0.0"),
            ..req(6, 1)
        };
        let out = policy().choose_detailed(&r, &nodes, &mut rng(seed));
        assert_eq!(out.chosen.len(), 6);
        assert!(out.chosen.iter().all(|i| ![0, 4, 8].contains(i)));
    }
}

#[test]
fn busy_nodes_are_passed_over() {
    let mut nodes = cluster(&[2, 2]);
    for n in &mut nodes {
        n.xceiver_count = 2;
    }
    nodes[3].xceiver_count = 40; // avg 11.5, limit 23
    let out = policy().choose_detailed(&req(4, 1), &nodes, &mut rng(4));
    assert_eq!(out.chosen.len(), 3);
    assert!(!out.chosen.contains(&3));
    assert_eq!(out.reasons.get(NotChosenReason::NodeTooBusy), 1);
    assert_eq!(out.reasons.to_string(), "{NODE_TOO_BUSY=1}");
    // considerLoad off
    let p = policy_with(PlacementSettings {
        consider_load: false,
        ..Default::default()
    });
    assert_eq!(
        p.choose_detailed(&req(4, 1), &nodes, &mut rng(4))
            .chosen
            .len(),
        4
    );
    // a higher factor lets it through
    let p = policy_with(PlacementSettings {
        consider_load_factor: 4.0,
        ..Default::default()
    });
    assert_eq!(
        p.choose_detailed(&req(4, 1), &nodes, &mut rng(4))
            .chosen
            .len(),
        4
    );
    // an idle cluster (average 0) rejects nobody
    let idle = cluster(&[2, 2]);
    assert_eq!(
        policy()
            .choose_detailed(&req(4, 1), &idle, &mut rng(4))
            .chosen
            .len(),
        4
    );
}

#[test]
fn space_counts_scheduled_blocks_and_min_blocks() {
    let mut nodes = cluster(&[2, 2]);
    let bs = 100;
    nodes[0].remaining = 99; // too small
    nodes[1].remaining = 300;
    nodes[1].blocks_scheduled = 3; // 300 - 300 < 100
    nodes[2].remaining = 200;
    nodes[2].blocks_scheduled = 1; // 200 - 100 >= 100: fits
    let out = policy().choose_detailed(&req(4, bs), &nodes, &mut rng(1));
    let got: BTreeSet<usize> = out.chosen.iter().copied().collect();
    assert_eq!(got, BTreeSet::from([2, 3]));
    assert_eq!(out.reasons.get(NotChosenReason::NotEnoughStorageSpace), 2);
    // min-blocks-for.write = 2 needs 200 free beyond what is scheduled
    let p = policy_with(PlacementSettings {
        min_blocks_for_write: 2,
        ..Default::default()
    });
    nodes[3].remaining = 150;
    let out = p.choose_detailed(&req(4, bs), &nodes, &mut rng(1));
    assert!(out.chosen.is_empty());
    assert_eq!(out.reasons.get(NotChosenReason::NotEnoughStorageSpace), 4);
}

#[test]
fn stale_nodes_avoided_only_when_asked_and_few() {
    let mut nodes = cluster(&[2, 2]);
    nodes[1].stale = true;
    let avoid = policy_with(PlacementSettings {
        avoid_stale_for_write: true,
        ..Default::default()
    });
    for seed in 0..20 {
        let out = avoid.choose_detailed(&req(3, 1), &nodes, &mut rng(seed));
        assert_eq!(out.chosen.len(), 3);
        assert!(!out.chosen.contains(&1), "seed {seed}");
    }
    // needing every node: the retry without stale avoidance takes the stale one too
    let out = avoid.choose_detailed(&req(4, 1), &nodes, &mut rng(1));
    assert_eq!(out.chosen.len(), 4);
    // not avoided by default
    let mut seen = false;
    for seed in 0..40 {
        seen |= policy()
            .choose_detailed(&req(3, 1), &nodes, &mut rng(seed))
            .chosen
            .contains(&1);
    }
    assert!(seen);
    // more than half stale: no longer avoided
    nodes[0].stale = true;
    nodes[2].stale = true;
    let mut seen = false;
    for seed in 0..40 {
        seen |= avoid
            .choose_detailed(&req(1, 1), &nodes, &mut rng(seed))
            .chosen
            .contains(&1);
    }
    assert!(seen);
}

#[test]
fn decommissioning_and_slow_nodes() {
    let mut nodes = cluster(&[2, 2]);
    nodes[0].out_of_service = true;
    nodes[2].slow = true;
    // Hadoop's default: slow nodes are chosen (rhdfs excludes them by default).
    let hadoop = policy_with(PlacementSettings {
        exclude_slow_nodes: false,
        ..Default::default()
    });
    let out = hadoop.choose_detailed(&req(4, 1), &nodes, &mut rng(1));
    assert_eq!(out.chosen.len(), 3);
    assert!(!out.chosen.contains(&0));
    assert_eq!(out.reasons.to_string(), "{NOT_IN_SERVICE=1}");
    let p = policy_with(PlacementSettings {
        exclude_slow_nodes: true,
        ..Default::default()
    });
    let out = p.choose_detailed(&req(4, 1), &nodes, &mut rng(1));
    let got: BTreeSet<usize> = out.chosen.iter().copied().collect();
    assert_eq!(got, BTreeSet::from([1, 3]));
    assert_eq!(out.reasons.to_string(), "{NOT_IN_SERVICE=1, NODE_SLOW=1}");
    // the writer's own node when it is decommissioning is not the first replica
    let r = PlacementRequest {
        writer_host: Some("10.0.0.0"),
        ..req(1, 1)
    };
    let out = policy().choose_detailed(&r, &nodes, &mut rng(2));
    assert_eq!(out.chosen, vec![1], "falls back to the writer's rack");
}

#[test]
fn zero_targets_message_names_the_reasons() {
    let mut nodes = cluster(&[3]);
    for n in &mut nodes {
        n.remaining = 10;
    }
    let out = policy().choose_detailed(&req(3, 1024), &nodes, &mut rng(1));
    assert!(out.chosen.is_empty());
    assert_eq!(
        not_enough_replicas_detailed("/tmp/x.tmp", 1, 3, &out),
        "File /tmp/x.tmp could only be written to 0 of the 1 minReplication nodes. \
         There are 3 datanode(s) running and 3 node(s) are excluded in this operation. \
         Not enough replicas was chosen. Reason: {NOT_ENOUGH_STORAGE_SPACE=3}"
    );
    // every node excluded by the client: no reasons, Hadoop's message as is
    let excluded: Vec<ExcludedNode> = nodes
        .iter()
        .map(|n| ExcludedNode {
            uuid: n.uuid.clone(),
            ..Default::default()
        })
        .collect();
    let r = PlacementRequest {
        excluded: &excluded,
        ..req(3, 1)
    };
    let out = policy().choose_detailed(&r, &nodes, &mut rng(1));
    assert_eq!(
        not_enough_replicas_detailed("/f", 1, 3, &out),
        "File /f could only be written to 0 of the 1 minReplication nodes. \
         There are 3 datanode(s) running and 3 node(s) are excluded in this operation."
    );
}

#[test]
fn seed_003_case_every_node_examined_and_excluded() {
    // 983 nodes on 20 racks, nearly full (seed 003): every one is examined and rejected.
    let mut nodes: Vec<NodeView> = (0..983).map(|i| node(i % 20, i)).collect();
    for (i, n) in nodes.iter_mut().enumerate() {
        n.remaining = 64 << 20; // below a 128 MiB block
        n.xceiver_count = if i % 10 == 0 { 500 } else { 10 };
    }
    let out = policy().choose_detailed(&req(3, 128 << 20), &nodes, &mut rng(9));
    assert!(out.chosen.is_empty());
    assert_eq!(out.excluded, 983);
    let busy = out.reasons.get(NotChosenReason::NodeTooBusy);
    let space = out.reasons.get(NotChosenReason::NotEnoughStorageSpace);
    assert_eq!((busy, space), (99, 884));
    let msg = not_enough_replicas_detailed("/tmp/xxxx.tmp", 1, 983, &out);
    assert!(msg.contains("There are 983 datanode(s) running and 983 node(s) are excluded"));
    assert!(msg.ends_with("Reason: {NODE_TOO_BUSY=99, NOT_ENOUGH_STORAGE_SPACE=884}"));
}

#[test]
fn rereplication_keeps_rack_spread() {
    let nodes = cluster(&[3, 3, 3]);
    // two replicas on rack 0: the third goes elsewhere
    let existing = vec!["u0-0".to_string(), "u0-1".to_string()];
    for seed in 0..20 {
        let r = PlacementRequest {
            existing: &existing,
            ..req(1, 1)
        };
        let out = policy().choose_detailed(&r, &nodes, &mut rng(seed));
        assert_eq!(out.chosen.len(), 1);
        assert_ne!(nodes[out.chosen[0]].rack, "/r0");
    }
    // one replica left: two new ones, not both on its rack, neither on it
    let existing = vec!["u1-0".to_string()];
    for seed in 0..20 {
        let r = PlacementRequest {
            existing: &existing,
            ..req(2, 1)
        };
        let out = policy().choose_detailed(&r, &nodes, &mut rng(seed));
        assert_eq!(out.chosen.len(), 2);
        assert!(!out.chosen.contains(&3));
        let mut all = out.chosen.clone();
        all.push(3);
        assert!(racks_of(&nodes, &all).len() >= 2);
    }
    // three replicas all on one rack of two: the fourth goes to the other
    let nodes = cluster(&[4, 4]);
    let existing = vec!["u0-0".into(), "u0-1".into(), "u0-2".into()];
    for seed in 0..20 {
        let r = PlacementRequest {
            existing: &existing,
            ..req(1, 1)
        };
        let out = policy().choose_detailed(&r, &nodes, &mut rng(seed));
        assert_eq!(nodes[out.chosen[0]].rack, "/r1");
    }
}

#[test]
fn same_seed_same_choice() {
    let nodes = cluster(&[4, 4, 4]);
    let a = policy().choose_detailed(&req(5, 1), &nodes, &mut rng(42));
    let b = policy().choose_detailed(&req(5, 1), &nodes, &mut rng(42));
    assert_eq!(a, b);
}

#[test]
fn pipeline_orders_by_distance() {
    let nodes = cluster(&[3, 3]);
    let r = PlacementRequest {
        writer_host: Some("10.0.0.0"),
        ..req(4, 1)
    };
    for seed in 0..20 {
        let out = policy().choose_detailed(&r, &nodes, &mut rng(seed));
        // writer, then everything on its rack, then the other rack
        let rk: Vec<&str> = out.chosen.iter().map(|&i| nodes[i].rack.as_str()).collect();
        let first_other = rk.iter().position(|r| *r != "/r0").unwrap_or(rk.len());
        assert!(rk[first_other..].iter().all(|r| *r != "/r0"), "{rk:?}");
        assert_eq!(out.chosen[0], 0);
    }
}

fn holder(uuid: &str, rack: &str, remaining: u64, hb_secs: u64) -> ReplicaHolder {
    ReplicaHolder {
        uuid: uuid.into(),
        rack: rack.into(),
        remaining,
        last_update_mono: Duration::from_secs(hb_secs),
    }
}

#[test]
fn excess_replica_keeps_rack_spread() {
    let now = Duration::from_secs(1000);
    let tol = Duration::from_secs(12);
    // racks a, a, b: delete on rack a, the one with least space
    let h = vec![
        holder("1", "/a", 500, 999),
        holder("2", "/a", 100, 999),
        holder("3", "/b", 10, 999),
    ];
    assert_eq!(
        choose_replicas_to_delete(&h, &[0, 1, 2], 2, None, None, now, tol),
        vec![1]
    );
    // down to one: after a rack a replica goes, the rest are each alone on their rack
    assert_eq!(
        choose_replicas_to_delete(&h, &[0, 1, 2], 1, None, None, now, tol),
        vec![1, 2]
    );
    // an old heartbeat beats free space
    let h = vec![
        holder("1", "/a", 500, 900),
        holder("2", "/a", 100, 999),
        holder("3", "/b", 10, 999),
    ];
    assert_eq!(
        choose_replicas_to_delete(&h, &[0, 1, 2], 2, None, None, now, tol),
        vec![0]
    );
    // the delete hint is used when it keeps the rack count
    let h = vec![
        holder("1", "/a", 500, 999),
        holder("2", "/a", 100, 999),
        holder("3", "/b", 10, 999),
        holder("4", "/c", 10, 999),
    ];
    assert_eq!(
        choose_replicas_to_delete(&h, &[0, 1, 2, 3], 3, None, Some(0), now, tol),
        vec![0]
    );
    // ... and not when it would lose rack b (the added node shares a rack)
    assert_eq!(
        choose_replicas_to_delete(&h, &[0, 1, 2, 3], 3, Some(1), Some(2), now, tol),
        vec![1]
    );
    // a candidate alone on its rack is kept while another rack has two
    let h = vec![
        holder("1", "/a", 1, 999),
        holder("2", "/b", 900, 999),
        holder("3", "/b", 800, 999),
    ];
    assert_eq!(
        choose_replicas_to_delete(&h, &[0, 1, 2], 2, None, None, now, tol),
        vec![2]
    );
    // nothing to delete
    assert!(choose_replicas_to_delete(&h, &[0, 1, 2], 3, None, None, now, tol).is_empty());
}

#[test]
fn read_sort_through_the_policy() {
    let nodes = cluster(&[2, 2]);
    let p = policy();
    let o = p.sort_for_read(
        Some("10.0.1.1"),
        &nodes,
        ReadSortFlags::default(),
        &mut rng(3),
    );
    assert_eq!(o[0], 3);
    assert_eq!(o[1], 2);
    let holders = p.replica_holders(&nodes);
    assert_eq!(holders[2].rack, "/r1");
    // through the trait object, as the block manager holds it
    let dynp: Box<dyn PlacementPolicy> = build_policy(&PlacementConfig::default());
    let o = dynp.sort_for_read(Some("h0-0"), &nodes, ReadSortFlags::default(), &mut rng(3));
    assert_eq!(o[..2], [0, 1]);
    // a reader that is not a DataNode: all nodes at equal distance, every node listed once
    let o = dynp.sort_for_read(
        Some("1.2.3.4"),
        &nodes,
        ReadSortFlags::default(),
        &mut rng(3),
    );
    assert_eq!(o.iter().collect::<BTreeSet<_>>().len(), 4);
}

#[test]
fn excess_choice_through_the_trait() {
    let mut nodes = cluster(&[2, 1]);
    for (i, n) in nodes.iter_mut().enumerate() {
        n.remaining = 100 * (i as u64 + 1);
        n.last_update_mono = Duration::from_secs(100);
    }
    let now = Duration::from_secs(101);
    let tol = Duration::from_secs(12);
    for p in [
        build_policy(&PlacementConfig::default()),
        Box::new(SimplePlacement) as Box<dyn PlacementPolicy>,
    ] {
        // racks r0, r0, r1: one of rack r0 goes, the one with less room
        assert_eq!(
            p.choose_excess(&nodes, &[0, 1, 2], 2, None, None, now, tol),
            vec![0]
        );
    }
}

#[test]
fn configuration_picks_the_policy() {
    assert_eq!(
        PolicyKind::from_class_name(DFS_BLOCK_REPLICATOR_CLASSNAME_DEFAULT).ok(),
        Some(PolicyKind::RackAware)
    );
    assert_eq!(
        PolicyKind::from_class_name("SimplePlacement").ok(),
        Some(PolicyKind::Simple)
    );
    assert!(PolicyKind::from_class_name("org.example.Mine").is_err());
    let c = PlacementConfig::from_conf(&Configuration::new()).unwrap_or_default();
    assert_eq!(c, PlacementConfig::default());
    assert!(c.settings.consider_load && c.settings.prefer_local_node);
    assert_eq!(c.settings.consider_load_factor, 2.0);
    let mut conf = Configuration::new();
    conf.set(DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_KEY, "false");
    conf.set(DFS_NAMENODE_BLOCKPLACEMENT_MIN_BLOCKS_FOR_WRITE_KEY, "3");
    conf.set(
        DFS_NAMENODE_BLOCKPLACEMENTPOLICY_EXCLUDE_SLOW_NODES_ENABLED_KEY,
        "true",
    );
    conf.set(DFS_BLOCK_REPLICATOR_CLASSNAME_KEY, "SimplePlacement");
    let c = PlacementConfig::from_conf(&conf).unwrap_or_default();
    assert_eq!(c.policy, PolicyKind::Simple);
    assert!(!c.settings.consider_load && c.settings.exclude_slow_nodes);
    assert_eq!(c.settings.min_blocks_for_write, 3);
    conf.set(DFS_NAMENODE_USE_STALE_DATANODE_FOR_WRITE_RATIO_KEY, "1.5");
    assert!(PlacementConfig::from_conf(&conf).is_err());
}

fn arb_cluster() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..5, 1..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn placement_invariants(
        sizes in arb_cluster(),
        count in 1usize..7,
        excl in prop::collection::vec(any::<bool>(), 20),
        writer in any::<prop::sample::Index>(),
        existing_n in 0usize..3,
        seed in any::<u64>(),
    ) {
        let nodes = cluster(&sizes);
        let excluded: Vec<ExcludedNode> = nodes
            .iter()
            .enumerate()
            .filter(|(i, _)| excl[*i % excl.len()] && *i % 3 == 0)
            .map(|(_, n)| ExcludedNode { uuid: n.uuid.clone(), ..Default::default() })
            .collect();
        let existing: Vec<String> = nodes.iter().rev().take(existing_n).map(|n| n.uuid.clone()).collect();
        let w = writer.index(nodes.len());
        let r = PlacementRequest {
            count,
            writer_host: Some(&nodes[w].ip_addr),
            excluded: &excluded,
            existing: &existing,
            block_size: 1,
            ..Default::default()
        };
        let out = policy().choose_detailed(&r, &nodes, &mut rng(seed));
        prop_assert!(out.chosen.len() <= count);
        prop_assert!(distinct(&out.chosen));
        for &i in &out.chosen {
            prop_assert!(!excluded.iter().any(|e| e.uuid == nodes[i].uuid));
            prop_assert!(!existing.contains(&nodes[i].uuid));
        }
        // the per-rack cap over existing + new replicas
        let racks = sizes.len();
        let total = (existing.len() + count).min(nodes.len());
        let mut per_rack: BTreeMap<&str, usize> = BTreeMap::new();
        for i in out.chosen.iter().copied().chain(
            nodes.iter().enumerate().filter(|(_, n)| existing.contains(&n.uuid)).map(|(i, _)| i),
        ) {
            *per_rack.entry(nodes[i].rack.as_str()).or_default() += 1;
        }
        if racks > 1 && total > 1 {
            let mut cap = (total - 1) / racks + 2;
            if cap == total { cap -= 1; }
            let new_per_rack: BTreeMap<&str, usize> = out.chosen.iter().fold(BTreeMap::new(), |mut m, &i| {
                *m.entry(nodes[i].rack.as_str()).or_default() += 1; m
            });
            for (rack, n) in &per_rack {
                // existing replicas may already exceed the cap; new ones never add to such a rack
                prop_assert!(*n <= cap || !new_per_rack.contains_key(rack), "rack {} has {} > {}", rack, n, cap);
            }
        }
        let available = nodes
            .iter()
            .filter(|n| !existing.contains(&n.uuid) && !excluded.iter().any(|e| e.uuid == n.uuid))
            .count();
        if racks == 1 {
            prop_assert_eq!(out.chosen.len(), count.min(available));
        }
        // a good writer not excluded gets the first replica of a new block
        let w_free = !excluded.iter().any(|e| e.uuid == nodes[w].uuid);
        if existing.is_empty() && w_free {
            prop_assert_eq!(out.chosen[0], w);
        }
        // three replicas of a new block on 2+ racks of 2+ nodes each, nothing excluded
        if existing.is_empty() && excluded.is_empty() && count == 3 && racks >= 2 && sizes.iter().all(|&s| s >= 2) {
            prop_assert_eq!(racks_of(&nodes, &out.chosen).len(), 2);
        }
        prop_assert!(out.reasons.is_empty() || out.chosen.len() < count || out.reasons.total() > 0);
    }
}
