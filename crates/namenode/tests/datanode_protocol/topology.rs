//! registerDatanode with a rack mapping, over the DatanodeProtocol service: the rack is
//! stored and reported; a rack that does not fit the topology, or an unresolved node
//! when those are rejected, is refused with Hadoop's exception class, not a panic.

use super::support::*;
use rhdfs_namenode::rpc::datanode::DatanodeProtocolService;

use rhdfs_blockmanager::ReportKind;
use rhdfs_blockmanager::topology::{MappingSource, TopologyConfig};
use rhdfs_proto::datanode::{RegisterDatanodeRequestProto, RegisterDatanodeResponseProto};

async fn register(
    svc: &DatanodeProtocolService,
    i: u32,
) -> Result<RegisterDatanodeResponseProto, rhdfs_ipc::RpcError> {
    let req = RegisterDatanodeRequestProto {
        registration: registration(i),
    };
    call(svc, "registerDatanode", &req).await
}

fn table(text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rhdfs-topology-service-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let p = dir.join("topology.table");
    std::fs::write(&p, text).expect("write table");
    p
}

#[tokio::test]
async fn register_stores_the_rack_and_refuses_a_mixed_depth() {
    let mut cfg = config();
    cfg.placement.topology = TopologyConfig {
        source: MappingSource::Table(table("host1 /r1\nhost2 /dc1/r2\nhost3 /r2\n")),
        reject_unresolved: false,
    };
    let (bm, _clock) = manager(cfg);
    let svc = dn_service(&bm);
    register(&svc, 1).await.expect("host1 on /r1");
    register(&svc, 3).await.expect("host3 on /r2");
    let err = register(&svc, 2)
        .await
        .expect_err("/dc1/r2 is one level deeper");
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.net.NetworkTopology$InvalidTopologyException"
    );
    assert_eq!(
        err.message,
        "Failed to add /dc1/r2/127.0.0.1:9002: You cannot have a rack and a non-rack node at \
         the same level of the network topology."
    );
    let racks: Vec<(String, String)> = bm
        .datanode_report(ReportKind::All)
        .into_iter()
        .map(|d| (d.id.host_name, d.location))
        .collect();
    assert_eq!(
        racks,
        vec![
            ("host1".to_string(), "/r1".to_string()),
            ("host3".to_string(), "/r2".to_string()),
        ]
    );
    assert_eq!(bm.num_racks(), 2);
}

#[tokio::test]
async fn unresolved_nodes_rejected_when_configured() {
    let mut cfg = config();
    cfg.placement.topology = TopologyConfig {
        source: MappingSource::Script {
            path: "/nonexistent/rhdfs-topology-script".into(),
            max_args: 100,
        },
        reject_unresolved: true,
    };
    let (bm, _clock) = manager(cfg);
    let svc = dn_service(&bm);
    let err = register(&svc, 1).await.expect_err("unresolved");
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.net.UnresolvedTopologyException"
    );
    assert_eq!(err.message, "Unresolved topology mapping for host host1");
    assert_eq!(bm.live_datanodes(), 0);
}
