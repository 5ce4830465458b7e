//! Slow peer reports in heartbeats -> the slow node set -> placement skips slow nodes.

use crate::common;

use std::time::Duration;

use bytes::Bytes;
use common::*;
use prost::Message;
use rhdfs_blockmanager::slowpeers::SlowNodeConfig;
use rhdfs_blockmanager::{BlockManager, BlockManagerConfig, DatanodeProtocolService};
use rhdfs_ipc::{CallContext, RpcService};
use rhdfs_proto::datanode::{
    DatanodeRegistrationProto, HeartbeatRequestProto, HeartbeatResponseProto, SlowDiskReportProto,
    SlowPeerReportProto,
};
use rhdfs_proto::hdfs::{DatanodeIdProto, ExportedBlockKeysProto, StorageInfoProto};

fn registration(i: u32) -> DatanodeRegistrationProto {
    let id = dn_id(i);
    DatanodeRegistrationProto {
        datanode_id: DatanodeIdProto {
            ip_addr: id.ip_addr,
            host_name: id.host_name,
            datanode_uuid: id.uuid,
            xfer_port: id.xfer_port,
            info_port: id.info_port,
            ipc_port: id.ipc_port,
            info_secure_port: None,
        },
        storage_info: StorageInfoProto {
            layout_version: (-57i32) as u32,
            namespce_id: 42,
            cluster_id: "CID-test".into(),
            c_time: 0,
        },
        keys: ExportedBlockKeysProto::default(),
        software_version: "3.5.0".into(),
    }
}

async fn heartbeat(
    svc: &DatanodeProtocolService,
    i: u32,
    slow_peers: Vec<SlowPeerReportProto>,
    slow_disks: Vec<SlowDiskReportProto>,
) {
    let req = HeartbeatRequestProto {
        registration: registration(i),
        slow_peers,
        slow_disks,
        ..HeartbeatRequestProto::default()
    };
    let ctx = CallContext {
        user: "dn".into(),
        protocol: rhdfs_proto::protocols::DATANODE_PROTOCOL.into(),
        method: "sendHeartbeat".into(),
        client_id: Bytes::from_static(&[0; 16]),
        call_id: 0,
        retry_count: 0,
        peer: "10.0.0.1:50000".parse().expect("addr"),
    };
    let body = svc
        .call(ctx, Bytes::from(req.encode_to_vec()))
        .await
        .expect("heartbeat");
    HeartbeatResponseProto::decode(body).expect("decodes");
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
        ..SlowNodeConfig::default()
    };
    c.placement.settings.exclude_slow_nodes = exclude;
    c
}

fn chosen(bm: &BlockManager, n: usize) -> Vec<String> {
    bm.choose_targets("/f", n, None, &[], &[], 1024)
        .expect("targets")
        .into_iter()
        .map(|l| l.info.id.datanode_uuid)
        .collect()
}

#[tokio::test]
async fn reported_slow_node_is_not_a_write_target_until_reports_expire() {
    let (bm, clock) = manager(cfg(true));
    add_nodes(&bm, 4, GB);
    let svc = DatanodeProtocolService::new(bm.clone());
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

    // Reports are valid for 3 × the 30 minute report interval.
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
    let svc = DatanodeProtocolService::new(bm.clone());
    heartbeat(&svc, 1, vec![slow("10.0.0.4:9864", 120.0)], vec![]).await;
    assert_eq!(chosen(&bm, 4).len(), 4);
}

#[tokio::test]
async fn slow_disks_reported_in_heartbeats() {
    let (bm, _clock) = manager(cfg(true));
    add_nodes(&bm, 2, GB);
    let svc = DatanodeProtocolService::new(bm.clone());
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
