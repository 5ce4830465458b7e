//! Slow peer reports in heartbeats -> the slow node set -> placement skips slow nodes.

use rhdfs_namenode::rpc::datanode::DatanodeProtocolService;
use std::time::Duration;

use super::support::*;
use rhdfs_blockmanager::slowpeers::SlowNodeConfig;
use rhdfs_blockmanager::{BlockManager, BlockManagerConfig};
use rhdfs_proto::datanode::{
    HeartbeatRequestProto, HeartbeatResponseProto, SlowDiskReportProto, SlowPeerReportProto,
};

async fn heartbeat(
    svc: &DatanodeProtocolService,
    i: u32,
    slow_peers: Vec<SlowPeerReportProto>,
    slow_disks: Vec<SlowDiskReportProto>,
) {
    let req = HeartbeatRequestProto {
        registration: registration_of(dn_id(i)),
        slow_peers,
        slow_disks,
        ..HeartbeatRequestProto::default()
    };
    let _: HeartbeatResponseProto = call(svc, "sendHeartbeat", &req).await.expect("heartbeat");
}

fn slow(addr: &str, ms: f64) -> SlowPeerReportProto {
    SlowPeerReportProto {
        data_node_id: Some(addr.into()),
        aggregate_latency: Some(ms),
        ..Default::default()
    }
}

fn cfg(exclude: bool) -> BlockManagerConfig {
    let mut c = config();
    c.slow = SlowNodeConfig {
        peer_stats_enabled: true,
        disk_stats_enabled: true,
        exclude_for_write: exclude,
        collect_interval: Duration::ZERO,
        // Four nodes: rhdfs's 20% share bound would avoid none.
        max_avoided_percent: 100,
        ..SlowNodeConfig::default()
    };
    c.placement.settings.exclude_slow_nodes = exclude;
    c
}

fn chosen(bm: &BlockManager, n: usize) -> Vec<String> {
    bm.choose_targets("/f", n, None, &[], &[], 1024)
        .expect("targets")
        .into_iter()
        .map(|l| l.info.id.uuid)
        .collect()
}

#[tokio::test]
async fn reported_slow_node_is_not_a_write_target_until_reports_expire() {
    let (bm, clock) = manager(cfg(true));
    add_nodes(&bm, 4, GB);
    let svc = dn_service(&bm);
    for i in [1, 2] {
        heartbeat(&svc, i, vec![slow("10.0.0.4:9864", 120.0)], vec![]).await;
    }
    for _ in 0..20 {
        let c = chosen(&bm, 3);
        assert_eq!(c.len(), 3);
        assert!(!c.contains(&uuid(4)), "slow node chosen: {c:?}");
    }
    // Four replicas wanted, only three nodes are fast.
    assert_eq!(chosen(&bm, 4).len(), 3);
    let json = bm.slow_nodes().slow_peers_report().expect("peer stats on");
    assert!(
        json.starts_with("[{\"SlowNode\":\"10.0.0.4:9864\""),
        "{json}"
    );
    assert!(
        json.contains("\"ReportingNode\":\"10.0.0.1:9867\""),
        "{json}"
    );
    assert!(
        json.contains("\"ReportingNode\":\"10.0.0.2:9867\""),
        "{json}"
    );

    // Reports are valid for 3 × the report interval.
    for _ in 0..9 {
        clock.advance(Duration::from_secs(600));
        heartbeat_all(&bm, 4);
    }
    assert_eq!(bm.slow_nodes().slow_peers_report().as_deref(), Some("[]"));
    assert_eq!(chosen(&bm, 4).len(), 4);
}

#[tokio::test]
async fn slow_nodes_are_chosen_when_exclusion_is_off() {
    let (bm, _clock) = manager(cfg(false));
    add_nodes(&bm, 4, GB);
    let svc = dn_service(&bm);
    heartbeat(&svc, 1, vec![slow("10.0.0.4:9864", 120.0)], vec![]).await;
    assert_eq!(chosen(&bm, 4).len(), 4);
}

#[tokio::test]
async fn slow_disks_reported_in_heartbeats() {
    let (bm, _clock) = manager(cfg(true));
    add_nodes(&bm, 2, GB);
    let svc = dn_service(&bm);
    let disk = SlowDiskReportProto {
        base_path: Some("/data/2".into()),
        mean_metadata_op_latency: None,
        mean_read_io_latency: None,
        mean_write_io_latency: Some(300.0),
    };
    heartbeat(&svc, 2, vec![], vec![disk]).await;
    assert_eq!(
        bm.slow_nodes().slow_disks_report().as_deref(),
        Some("[{\"SlowDiskID\":\"10.0.0.2:9867:/data/2\",\"Latencies\":{\"WRITE\":300.0}}]")
    );
}
