use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::clock::{Clock, ManualClock};
use rhdfs_conf::{Configuration, keys};

use super::*;

const MIN: Duration = Duration::from_secs(60);

fn id(uuid: &str, ip: &str, xfer: u32, info: u32, ipc: u32) -> DatanodeId {
    DatanodeId {
        uuid: uuid.into(),
        ip_addr: ip.into(),
        host_name: format!("host-{uuid}"),
        xfer_port: xfer,
        info_port: info,
        info_secure_port: 0,
        ipc_port: ipc,
    }
}

fn peer(id: &str, lat: f64) -> SlowPeerEntry {
    SlowPeerEntry {
        peer: id.into(),
        latency: Some(lat),
        ..Default::default()
    }
}

fn cfg() -> SlowNodeConfig {
    SlowNodeConfig {
        peer_stats_enabled: true,
        disk_stats_enabled: true,
        report_validity: 3 * MIN,
        max_collect_nodes: 2,
        collect_interval: 5 * MIN,
        exclude_for_write: true,
        avoid_for_read: false,
        max_avoided_percent: 100,
    }
}

#[test]
fn config_from_conf() {
    let mut c = Configuration::new();
    c.set(keys::DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_KEY, "10m");
    c.set(keys::DFS_DATANODE_PEER_STATS_ENABLED_KEY, "true");
    c.set(
        keys::DFS_NAMENODE_BLOCKPLACEMENTPOLICY_EXCLUDE_SLOW_NODES_ENABLED_KEY,
        "false",
    );
    c.set(keys::RHDFS_NAMENODE_SLOWNODES_MAX_PERCENT_KEY, "150");
    let s = SlowNodeConfig::from_conf(&c).unwrap();
    assert_eq!(s.report_validity, Duration::from_secs(1800));
    assert!(s.peer_stats_enabled && s.avoid_for_read && !s.exclude_for_write);
    assert!(s.collects() && !s.disk_stats_enabled);
    assert_eq!(s.max_collect_nodes, 5);
    assert_eq!(s.max_avoided_percent, 100);
    // rhdfs's defaults: on, reports every 30s kept 90s, collected every 30s, 20% at most.
    let d = SlowNodeConfig::from_conf(&Configuration::new()).unwrap();
    assert_eq!(d, SlowNodeConfig::default());
    assert!(d.collects() && d.exclude_for_write && d.avoid_for_read);
    assert_eq!(d.report_validity, Duration::from_secs(90));
    assert_eq!(d.collect_interval, Duration::from_secs(30));
    assert_eq!(d.max_avoided_percent, 20);
    assert_eq!(
        [4, 5, 10, 12, 24, 100].map(|n| d.max_avoided(n)),
        [0, 1, 2, 2, 4, 5]
    );
    c.set(keys::DFS_DATANODE_PEER_STATS_ENABLED_KEY, "false");
    assert!(!SlowNodeConfig::from_conf(&c).unwrap().collects());
    c.set(keys::DFS_DATANODE_PEER_STATS_ENABLED_KEY, "maybe");
    assert!(SlowNodeConfig::from_conf(&c).is_err());
}

#[test]
fn peer_reports_expire_after_validity() {
    let clock = Arc::new(ManualClock::new(0));
    let t = SlowPeerTracker::new(3 * MIN);
    let now = || clock.monotonic();
    t.add_report("10.0.0.9:9864", "10.0.0.1:9867", 40.0, now());
    clock.advance(2 * MIN);
    t.add_report("10.0.0.9:9864", "10.0.0.2:9867", 50.0, now());
    assert_eq!(t.reports_for_node("10.0.0.9:9864", now()).len(), 2);
    // The first report is 3 minutes old: expired (validity is exclusive).
    clock.advance(MIN);
    let r = t.reports_for_node("10.0.0.9:9864", now());
    assert_eq!(
        r,
        vec![PeerReport {
            reporting_node: "10.0.0.2:9867".into(),
            latency: 50.0,
            stats: Default::default(),
            at: 2 * MIN,
        }]
    );
    // A fresh report from the same reporter replaces the old one.
    t.add_report("10.0.0.9:9864", "10.0.0.2:9867", 60.0, now());
    clock.advance(2 * MIN + Duration::from_secs(59));
    assert_eq!(t.reports_for_node("10.0.0.9:9864", now())[0].latency, 60.0);
    clock.advance(Duration::from_secs(1));
    assert!(t.all_reports(now()).is_empty());
    assert!(t.slow_nodes(5, now()).is_empty());
    assert_eq!(t.json(5, now()), "[]");
}

#[test]
fn slow_nodes_by_number_of_reporters() {
    let t = SlowPeerTracker::new(3 * MIN);
    let z = Duration::ZERO;
    for r in ["a", "b", "c"] {
        t.add_report("x:1", r, 10.0, z);
    }
    for r in ["a", "b"] {
        t.add_report("y:1", r, 10.0, z);
        t.add_report("w:1", r, 10.0, z);
    }
    t.add_report("v:1", "a", 99.0, z);
    assert_eq!(t.slow_nodes(3, z), vec!["x:1", "w:1", "y:1"]);
    assert_eq!(t.slow_nodes(1, z), vec!["x:1"]);
    assert_eq!(
        t.json(1, z),
        "[{\"SlowNode\":\"x:1\",\"SlowPeerLatencyWithReportingNodes\":[\
         {\"ReportingNode\":\"a\",\"ReportedLatency\":10.0,\"MedianLatency\":0.0,\"MadLatency\":0.0,\"UpperLimitLatency\":0.0},\
         {\"ReportingNode\":\"b\",\"ReportedLatency\":10.0,\"MedianLatency\":0.0,\"MadLatency\":0.0,\"UpperLimitLatency\":0.0},\
         {\"ReportingNode\":\"c\",\"ReportedLatency\":10.0,\"MedianLatency\":0.0,\"MadLatency\":0.0,\"UpperLimitLatency\":0.0}]}]"
    );
}

#[test]
fn disk_reports_sorted_and_expiring() {
    let t = SlowDiskTracker::new(3 * MIN);
    let d = |p: &str, w: f64| SlowDiskEntry {
        base_path: p.into(),
        metadata_latency: None,
        read_latency: Some(1.5),
        write_latency: Some(w),
    };
    t.add_reports(
        "10.0.0.1:9867",
        &[d("/d1", 30.0), d("/d2", 90.0)],
        Duration::ZERO,
    );
    t.add_reports("10.0.0.2:9867", &[d("/d1", 60.0), d("", 1e9)], MIN);
    let v = t.slow_disks(2, MIN);
    let ids: Vec<&str> = v.iter().map(|r| r.disk_id.as_str()).collect();
    assert_eq!(ids, vec!["10.0.0.1:9867:/d2", "10.0.0.2:9867:/d1"]);
    assert_eq!(
        t.json(1, MIN),
        "[{\"SlowDiskID\":\"10.0.0.1:9867:/d2\",\"Latencies\":{\"READ\":1.5,\"WRITE\":90.0}}]"
    );
    // The first node's reports expire first.
    let v = t.slow_disks(5, 3 * MIN);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].disk_id, "10.0.0.2:9867:/d1");
}

#[test]
fn resolve_by_host_and_port() {
    let nodes = [
        id("u1", "127.0.0.1", 5001, 6001, 7001),
        id("u2", "127.0.0.1", 5002, 6002, 7002),
        id("u3", "10.0.0.3", 9866, 9864, 9867),
    ];
    assert_eq!(resolve("127.0.0.1:6002", &nodes).as_deref(), Some("u2"));
    assert_eq!(resolve("127.0.0.1:7001", &nodes).as_deref(), Some("u1"));
    assert_eq!(resolve("127.0.0.1:1", &nodes), None, "ambiguous host");
    assert_eq!(resolve("10.0.0.3:1234", &nodes).as_deref(), Some("u3"));
    assert_eq!(resolve("host-u3:9864", &nodes).as_deref(), Some("u3"));
    assert_eq!(resolve("10.9.9.9:9864", &nodes), None);
}

#[test]
fn slow_set_is_collected_per_interval_and_marks_views() {
    let clock = Arc::new(ManualClock::new(0));
    let s = SlowNodes::new(cfg(), clock.clone());
    let nodes = [
        id("u1", "127.0.0.1", 5001, 6001, 7001),
        id("u2", "127.0.0.1", 5002, 6002, 7002),
        id("u3", "127.0.0.1", 5003, 6003, 7003),
    ];
    // Collected once at the start: empty until the next interval.
    assert!(
        s.slow_node_uuids(&nodes.iter().collect::<Vec<_>>())
            .is_empty()
    );
    assert!(s.slow_node_addrs().is_empty());
    clock.advance(4 * MIN);
    s.on_heartbeat("127.0.0.1:7001", &[peer("127.0.0.1:6003", 80.0)], &[]);
    s.on_heartbeat("127.0.0.1:7002", &[peer("127.0.0.1:6003", 70.0)], &[]);
    assert!(
        s.slow_node_uuids(&nodes.iter().collect::<Vec<_>>())
            .is_empty()
    );
    clock.advance(MIN);
    assert_eq!(
        s.slow_node_uuids(&nodes.iter().collect::<Vec<_>>()),
        BTreeSet::from(["u3".to_string()])
    );
    let mut views: Vec<NodeView> = nodes
        .iter()
        .map(|n| NodeView {
            uuid: n.uuid.clone(),
            ..Default::default()
        })
        .collect();
    s.mark_views(&mut views, || &nodes);
    assert_eq!(
        views.iter().map(|v| v.slow).collect::<Vec<_>>(),
        vec![false, false, true]
    );
    let json = s.slow_peers_report().unwrap();
    assert!(json.contains("\"SlowNode\":\"127.0.0.1:6003\""), "{json}");
    assert_eq!(s.slow_disks_report().as_deref(), Some("[]"));
    assert!(
        json.contains("\"ReportCount\":2,\"Avoided\":true"),
        "{json}"
    );
    // Reported at 4 min, valid 3 min: expired at 7 min, left out by the collection at 10 min.
    assert!(json.contains("\"EligibleAgainInSeconds\":300"), "{json}");
    assert!(json.contains("\"ExpiresInSeconds\":120"), "{json}");
    // Reports expire after 3 minutes, but the set holds until the next collection.
    clock.advance(4 * MIN);
    let all: Vec<&DatanodeId> = nodes.iter().collect();
    assert_eq!(s.slow_node_uuids(&all).len(), 1);
    assert_eq!(s.slow_node_addrs().len(), 1);
    clock.advance(MIN);
    assert!(s.slow_node_uuids(&all).is_empty());
    assert!(s.slow_node_addrs().is_empty());
}

#[test]
fn slow_set_is_bounded_by_share_of_the_cluster() {
    let clock = Arc::new(ManualClock::new(0));
    let s = SlowNodes::new(
        SlowNodeConfig {
            collect_interval: Duration::ZERO,
            max_collect_nodes: 5,
            max_avoided_percent: 20,
            ..cfg()
        },
        clock,
    );
    let nodes: Vec<DatanodeId> = (1..=10)
        .map(|i| id(&format!("u{i}"), "127.0.0.1", 5000 + i, 6000 + i, 7000 + i))
        .collect();
    let all: Vec<&DatanodeId> = nodes.iter().collect();
    // Node 10 is reported by three peers, 9 by two, 8, 7 and 6 by one each; an unknown
    // address by four.
    for (slow, reporters) in [(10, 3), (9, 2), (8, 1), (7, 1), (6, 1)] {
        for r in 1..=reporters {
            s.on_heartbeat(
                &format!("127.0.0.1:{}", 7000 + r),
                &[peer(&format!("127.0.0.1:{}", 6000 + slow), 50.0)],
                &[],
            );
        }
    }
    for r in 1..=4 {
        s.on_heartbeat(
            &format!("127.0.0.1:{}", 7000 + r),
            &[peer("10.9.9.9:1", 50.0)],
            &[],
        );
    }
    assert_eq!(s.peer_entries_received(), 12);
    // 20% of 10 registered nodes: the two most reported known nodes.
    assert_eq!(
        s.slow_node_uuids(&all),
        BTreeSet::from(["u10".to_string(), "u9".to_string()])
    );
    let json = s.slow_peers_report().unwrap();
    assert!(
        json.contains("\"SlowNode\":\"127.0.0.1:6006\",\"SlowPeerLatencyWithReportingNodes\""),
        "{json}"
    );
    assert!(
        json.contains("\"ReportCount\":1,\"Avoided\":false,\"EligibleAgainInSeconds\":0"),
        "{json}"
    );
    assert!(
        json.contains("\"ReportCount\":3,\"Avoided\":true"),
        "{json}"
    );
    // Four registered nodes: 20% rounds down to none.
    assert!(s.slow_node_uuids(&all[..4]).is_empty());
}

#[test]
fn disabled_peer_stats_ignore_reports() {
    let clock = Arc::new(ManualClock::new(0));
    let s = SlowNodes::new(
        SlowNodeConfig {
            peer_stats_enabled: false,
            disk_stats_enabled: false,
            ..cfg()
        },
        clock,
    );
    s.on_heartbeat("a:1", &[peer("b:1", 5.0)], &[]);
    assert!(s.peers.all_reports(Duration::ZERO).is_empty());
    assert!(s.slow_node_addrs().is_empty());
    assert_eq!(s.slow_peers_report(), None);
    assert_eq!(s.slow_disks_report(), None);
}

#[test]
fn rack_aware_placement_skips_a_marked_slow_node() {
    use crate::placement::PlacementRequest;
    use crate::placement::rack_aware::{PlacementConfig, build_policy};
    let clock = Arc::new(ManualClock::new(0));
    let s = SlowNodes::new(
        SlowNodeConfig {
            collect_interval: Duration::ZERO,
            ..cfg()
        },
        clock,
    );
    let nodes: Vec<DatanodeId> = (1..=4)
        .map(|i| id(&format!("u{i}"), "127.0.0.1", 5000 + i, 6000 + i, 7000 + i))
        .collect();
    for r in ["127.0.0.1:7001", "127.0.0.1:7002"] {
        s.on_heartbeat(r, &[peer("127.0.0.1:6004", 100.0)], &[]);
    }
    let mut views: Vec<NodeView> = nodes
        .iter()
        .map(|n| NodeView {
            uuid: n.uuid.clone(),
            ip_addr: n.ip_addr.clone(),
            host_name: n.host_name.clone(),
            xfer_port: n.xfer_port,
            remaining: 1 << 40,
            rack: crate::datanodes::DEFAULT_RACK.into(),
            ..Default::default()
        })
        .collect();
    s.mark_views(&mut views, || &nodes);
    let mut pc = PlacementConfig::default();
    pc.settings.exclude_slow_nodes = true;
    let policy = build_policy(&pc);
    let mut rng = rhdfs_conf::rng::seeded_rng(Some(7));
    let req = PlacementRequest {
        count: 3,
        writer_host: None,
        excluded: &[],
        favored: &[],
        existing: &[],
        block_size: 1024,
    };
    for _ in 0..20 {
        let out = policy.choose_detailed(&req, &views, &mut rng);
        assert_eq!(out.chosen.len(), 3);
        assert!(
            !out.chosen.contains(&3),
            "slow node chosen: {:?}",
            out.chosen
        );
    }
}
