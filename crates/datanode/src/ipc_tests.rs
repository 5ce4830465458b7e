//! DataNode::start over real Hadoop IPC: a fake DatanodeProtocol server records the calls; the
//! DataNode's ClientDatanodeProtocol port answers getReplicaVisibleLength.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use parking_lot::Mutex;
use rhdfs_conf::Configuration;
use rhdfs_ipc::{
    CallContext, IpcError, RpcClient, RpcError, RpcServer, RpcService, ServerConfig,
    decode_request, encode_response,
};
use rhdfs_proto::datanode::{
    BlockReceivedAndDeletedRequestProto, BlockReceivedAndDeletedResponseProto,
    BlockReportRequestProto, BlockReportResponseProto, HeartbeatRequestProto,
    HeartbeatResponseProto, NamespaceInfoProto, NnhaStatusHeartbeatProto,
    RegisterDatanodeRequestProto, RegisterDatanodeResponseProto, StorageInfoProto,
    VersionResponseProto,
};
use rhdfs_proto::hdfs::{
    ExtendedBlockProto, GetDatanodeInfoRequestProto, GetDatanodeInfoResponseProto,
    GetReplicaVisibleLengthRequestProto, GetReplicaVisibleLengthResponseProto,
    TriggerBlockReportRequestProto, TriggerBlockReportResponseProto,
};
use rhdfs_proto::protocols::{CLIENT_DATANODE_PROTOCOL, DATANODE_PROTOCOL};

use crate::checksum::ChecksumSpec;
use crate::datanode::DataNode;

const BP: &str = "BP-9-127.0.0.1-9";

#[derive(Default)]
struct FakeNn {
    calls: Mutex<Vec<String>>,
    reports: Mutex<Vec<BlockReportRequestProto>>,
}

#[async_trait]
impl RpcService for FakeNn {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        assert_eq!(ctx.protocol, DATANODE_PROTOCOL);
        self.calls.lock().push(ctx.method.clone());
        match ctx.method.as_str() {
            "versionRequest" => Ok(encode_response(&VersionResponseProto {
                info: NamespaceInfoProto {
                    build_version: "b".into(),
                    unused: 0,
                    block_pool_id: BP.into(),
                    storage_info: StorageInfoProto {
                        layout_version: 0,
                        namespce_id: 9,
                        cluster_id: "CID-9".into(),
                        c_time: 0,
                    },
                    software_version: "3.5.0".into(),
                    capabilities: None,
                    state: None,
                },
            })),
            "registerDatanode" => {
                let r: RegisterDatanodeRequestProto = decode_request(&body)?;
                Ok(encode_response(&RegisterDatanodeResponseProto {
                    registration: r.registration,
                }))
            }
            "sendHeartbeat" => {
                let r: HeartbeatRequestProto = decode_request(&body)?;
                // Grant a full block report lease whenever one is asked for, as a NameNode
                // with free lease slots does.
                let lease = if r.request_full_block_report_lease.unwrap_or(false) {
                    Some(77)
                } else {
                    None
                };
                Ok(encode_response(&HeartbeatResponseProto {
                    cmds: Vec::new(),
                    ha_status: NnhaStatusHeartbeatProto { state: 0, txid: 0 },
                    full_block_report_lease_id: lease,
                    ..Default::default()
                }))
            }
            "blockReport" => {
                let r: BlockReportRequestProto = decode_request(&body)?;
                self.reports.lock().push(r);
                Ok(encode_response(&BlockReportResponseProto { cmd: None }))
            }
            "blockReceivedAndDeleted" => {
                let _: BlockReceivedAndDeletedRequestProto = decode_request(&body)?;
                Ok(encode_response(&BlockReceivedAndDeletedResponseProto {}))
            }
            m => Err(RpcError::no_such_method(m)),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datanode_over_ipc() {
    let nn = Arc::new(FakeNn::default());
    let server = RpcServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        nn.clone(),
        ServerConfig::default(),
    )
    .await
    .unwrap();
    let d1 = tempfile::tempdir().unwrap();
    let d2 = tempfile::tempdir().unwrap();
    let mut conf = Configuration::new();
    conf.set("fs.defaultFS", format!("hdfs://{}", server.local_addr()));
    conf.set(
        "dfs.datanode.data.dir",
        format!(
            "file://{},{}",
            d1.path().display(),
            d2.path().join("x").display()
        ),
    );
    conf.set("dfs.datanode.address", "0.0.0.0:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.heartbeat.interval", "50ms");
    let dn = DataNode::start(conf.clone(), rhdfs_conf::clock::system_clock())
        .await
        .unwrap();
    assert_eq!(
        dn.xfer_addr().ip().to_string(),
        "127.0.0.1",
        "wildcard bind advertises loopback"
    );
    assert_eq!(dn.storage_ids().len(), 2);
    assert_eq!(dn.data_dirs().len(), 2);
    for _ in 0..200 {
        if nn
            .calls
            .lock()
            .iter()
            .filter(|m| *m == "sendHeartbeat")
            .count()
            >= 2
            && !nn.reports.lock().is_empty()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    {
        let calls = nn.calls.lock();
        // The first full report waits for the lease granted by the first heartbeat.
        assert_eq!(
            &calls[..3],
            &["versionRequest", "registerDatanode", "sendHeartbeat"]
        );
        assert!(calls.iter().any(|m| m == "blockReport"), "{calls:?}");
        assert!(calls.iter().filter(|m| *m == "sendHeartbeat").count() >= 2);
        assert_eq!(
            nn.reports.lock()[0].reports.len(),
            2,
            "one report per storage"
        );
    }

    // ClientDatanodeProtocol
    let ds = dn.dataset().clone();
    tokio::task::spawn_blocking(move || {
        let mut w = ds
            .create_rbw(BP, 5, 1001, ChecksumSpec::default(), 0)
            .unwrap();
        w.write_at(0, &[7u8; 1234]).unwrap();
    })
    .await
    .unwrap();
    let c = RpcClient::connect(&dn.ipc_addr().to_string(), CLIENT_DATANODE_PROTOCOL, "me")
        .await
        .unwrap();
    let req = GetReplicaVisibleLengthRequestProto {
        block: ExtendedBlockProto {
            pool_id: BP.into(),
            block_id: 5,
            generation_stamp: 1001,
            num_bytes: None,
        },
    };
    let r: GetReplicaVisibleLengthResponseProto =
        c.call("getReplicaVisibleLength", &req).await.unwrap();
    assert_eq!(r.length, 1234);
    let mut missing = req.clone();
    missing.block.block_id = 6;
    let e = c
        .call::<_, GetReplicaVisibleLengthResponseProto>("getReplicaVisibleLength", &missing)
        .await
        .unwrap_err();
    assert!(matches!(e, IpcError::Remote { .. }));
    let e = c
        .call::<_, GetReplicaVisibleLengthResponseProto>("refreshNamenodes", &req)
        .await
        .unwrap_err();
    assert_eq!(
        e.remote_class(),
        Some("org.apache.hadoop.ipc.RpcNoSuchMethodException")
    );

    // triggerBlockReport is for the DataNode's own user (or the supergroup) only.
    let denied = c
        .call::<_, TriggerBlockReportResponseProto>(
            "triggerBlockReport",
            &TriggerBlockReportRequestProto {
                incremental: false,
                nn_address: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        denied.remote_class(),
        Some("org.apache.hadoop.security.AccessControlException")
    );
    let admin = RpcClient::connect(
        &dn.ipc_addr().to_string(),
        CLIENT_DATANODE_PROTOCOL,
        &rhdfs_conf::user::current_user(),
    )
    .await
    .unwrap();
    // triggerBlockReport (full) sends a report without waiting for the interval.
    let before = nn.reports.lock().len();
    let _: TriggerBlockReportResponseProto = admin
        .call(
            "triggerBlockReport",
            &TriggerBlockReportRequestProto {
                incremental: false,
                nn_address: None,
            },
        )
        .await
        .unwrap();
    for _ in 0..200 {
        if nn.reports.lock().len() > before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(nn.reports.lock().len() > before);
    let info: GetDatanodeInfoResponseProto = c
        .call("getDatanodeInfo", &GetDatanodeInfoRequestProto {})
        .await
        .unwrap();
    assert_eq!(info.local_info.software_version, "3.5.0");

    let uuid = dn.uuid().to_string();
    let ids = dn.storage_ids().to_vec();
    dn.shutdown().await;
    let seen = nn.reports.lock().len();
    // Restart: same identity, the RBW replica comes back as RWR in the first report.
    let dn = DataNode::start(conf, rhdfs_conf::clock::system_clock())
        .await
        .unwrap();
    assert_eq!(dn.uuid(), uuid);
    assert_eq!(dn.storage_ids(), &ids[..]);
    for _ in 0..200 {
        if nn.reports.lock().len() > seen {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let reports = nn.reports.lock().clone();
    let last = reports.last().unwrap();
    let uc: Vec<&[u64]> = last
        .reports
        .iter()
        .filter(|r| r.blocks.get(1) == Some(&1))
        .map(|r| &r.blocks[5..])
        .collect();
    assert_eq!(
        uc,
        vec![&[5, 1234, 1001, 2][..]],
        "RBW at restart is reported as RWR"
    );
    dn.shutdown().await;
    server.shutdown().await;
}
