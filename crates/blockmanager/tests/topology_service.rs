//! registerDatanode with a rack mapping, over the DatanodeProtocol service: the rack is
//! stored and reported; a rack that does not fit the topology, or an unresolved node
//! when those are rejected, is refused with Hadoop's exception class, not a panic.

use crate::common;

use bytes::Bytes;
use common::*;
use prost::Message;
use rhdfs_blockmanager::DatanodeProtocolService;
use rhdfs_blockmanager::topology::{MappingSource, TopologyConfig};
use rhdfs_ipc::{CallContext, RpcService};
use rhdfs_proto::datanode::{
    DatanodeRegistrationProto, RegisterDatanodeRequestProto, RegisterDatanodeResponseProto,
};
use rhdfs_proto::hdfs::{DatanodeIdProto, ExportedBlockKeysProto, StorageInfoProto};

fn registration(i: u32) -> RegisterDatanodeRequestProto {
    RegisterDatanodeRequestProto {
        registration: DatanodeRegistrationProto {
            datanode_id: DatanodeIdProto {
                ip_addr: "0.0.0.0".into(),
                host_name: format!("host{i}"),
                datanode_uuid: uuid(i),
                xfer_port: 9000 + i,
                info_port: 9864,
                ipc_port: 9867,
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
        },
    }
}

async fn register(
    svc: &DatanodeProtocolService,
    i: u32,
) -> Result<RegisterDatanodeResponseProto, rhdfs_ipc::RpcError> {
    let ctx = CallContext {
        user: "dn".into(),
        protocol: rhdfs_proto::protocols::DATANODE_PROTOCOL.into(),
        method: "registerDatanode".into(),
        client_id: Bytes::from_static(&[0; 16]),
        call_id: 0,
        retry_count: 0,
        peer: "127.0.0.1:50000".parse().expect("addr"),
    };
    let body = svc
        .call(ctx, Bytes::from(registration(i).encode_to_vec()))
        .await?;
    Ok(RegisterDatanodeResponseProto::decode(body).expect("response decodes"))
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
    let svc = DatanodeProtocolService::new(bm.clone());
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
    let racks: Vec<(String, Option<String>)> = bm
        .datanode_report(1)
        .into_iter()
        .map(|d| (d.id.host_name, d.location))
        .collect();
    assert_eq!(
        racks,
        vec![
            ("host1".to_string(), Some("/r1".to_string())),
            ("host3".to_string(), Some("/r2".to_string())),
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
    let svc = DatanodeProtocolService::new(bm.clone());
    let err = register(&svc, 1).await.expect_err("unresolved");
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.net.UnresolvedTopologyException"
    );
    assert_eq!(err.message, "Unresolved topology mapping for host host1");
    assert_eq!(bm.live_datanodes(), 0);
}
