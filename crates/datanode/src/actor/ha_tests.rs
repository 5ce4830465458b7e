//! A DataNode configured with an HA nameservice of two NameNodes (Hadoop's keys only) serves
//! both over Hadoop IPC — here two fake NameNodes answering heartbeats with a chosen HA
//! status and chosen commands — and deletes replicas only on the word of the one it takes as
//! active: a standby's DNA_INVALIDATE is ignored, the active one's obeyed, a failover moves
//! the trust, and a stale ACTIVE claim (lower txid) is ignored.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use parking_lot::Mutex;
use rhdfs_ipc::{
    CallContext, RpcError, RpcServer, RpcService, ServerConfig, decode_request, encode_response,
};
use rhdfs_proto::datanode::datanode_command_proto::Type as CmdType;
use rhdfs_proto::datanode::{
    BlockCommandProto, BlockReceivedAndDeletedRequestProto, BlockReportResponseProto,
    DatanodeCommandProto, HeartbeatResponseProto, NamespaceInfoProto, RegisterDatanodeRequestProto,
    RegisterDatanodeResponseProto, StorageInfoProto, VersionResponseProto, block_command_proto,
};
use rhdfs_proto::hdfs::nnha_status_heartbeat_proto::State;
use rhdfs_proto::hdfs::{BlockProto, NnhaStatusHeartbeatProto};

use crate::datanode::DataNode;

const BP: &str = "BP-7-127.0.0.1-1";
/// The DELETED_BLOCK status of an incremental report.
const DELETED: i32 = 3;

/// A NameNode that answers DatanodeProtocol with the HA status it is given and hands out
/// the commands queued for it, one heartbeat at a time.
#[derive(Default)]
struct FakeNn {
    status: Mutex<(i32, u64)>,
    cmds: Mutex<Vec<DatanodeCommandProto>>,
    heartbeats: AtomicU64,
    registrations: AtomicU64,
    /// The heartbeat (1, 2, ...) whose response carried the last queued commands.
    delivered_at: AtomicU64,
    ibrs: Mutex<Vec<(u64, i32)>>,
}

impl FakeNn {
    fn set_status(&self, state: State, txid: u64) {
        *self.status.lock() = (state as i32, txid);
    }

    fn send(&self, cmd: DatanodeCommandProto) {
        self.delivered_at.store(0, Ordering::Relaxed);
        self.cmds.lock().push(cmd);
    }
}

struct Svc(Arc<FakeNn>);

#[async_trait]
impl RpcService for Svc {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        let nn = &self.0;
        match ctx.method.as_str() {
            "versionRequest" => Ok(encode_response(&VersionResponseProto {
                info: namespace_info(nn.status.lock().0),
            })),
            "registerDatanode" => {
                let req: RegisterDatanodeRequestProto = decode_request(&body)?;
                nn.registrations.fetch_add(1, Ordering::Relaxed);
                Ok(encode_response(&RegisterDatanodeResponseProto {
                    registration: req.registration,
                }))
            }
            "sendHeartbeat" => {
                let n = nn.heartbeats.fetch_add(1, Ordering::Relaxed) + 1;
                let cmds = std::mem::take(&mut *nn.cmds.lock());
                if !cmds.is_empty() {
                    nn.delivered_at.store(n, Ordering::Relaxed);
                }
                let (state, txid) = *nn.status.lock();
                Ok(encode_response(&HeartbeatResponseProto {
                    cmds,
                    ha_status: NnhaStatusHeartbeatProto { state, txid },
                    full_block_report_lease_id: Some(0),
                    ..Default::default()
                }))
            }
            "blockReport" => Ok(encode_response(&BlockReportResponseProto { cmd: None })),
            "blockReceivedAndDeleted" => {
                let req: BlockReceivedAndDeletedRequestProto = decode_request(&body)?;
                for s in req.blocks {
                    for b in s.blocks {
                        nn.ibrs.lock().push((b.block.block_id, b.status));
                    }
                }
                Ok(Bytes::new())
            }
            "errorReport" | "reportBadBlocks" => Ok(Bytes::new()),
            m => Err(RpcError::no_such_method(m)),
        }
    }
}

fn namespace_info(state: i32) -> NamespaceInfoProto {
    NamespaceInfoProto {
        build_version: "x".into(),
        unused: 0,
        block_pool_id: BP.into(),
        storage_info: StorageInfoProto {
            layout_version: 0,
            namespce_id: 7,
            cluster_id: "CID-ha".into(),
            c_time: 0,
        },
        software_version: "3.5.0".into(),
        capabilities: None,
        state: Some(state),
    }
}

fn invalidate(id: u64) -> DatanodeCommandProto {
    DatanodeCommandProto {
        cmd_type: CmdType::BlockCommand as i32,
        blk_cmd: Some(BlockCommandProto {
            action: block_command_proto::Action::Invalidate as i32,
            block_pool_id: BP.into(),
            blocks: vec![BlockProto {
                block_id: id,
                gen_stamp: 1001,
                num_bytes: Some(5),
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Polls `f` until it holds, failing after 10 s.
async fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn fake_namenode() -> (Arc<FakeNn>, RpcServer) {
    let nn = Arc::new(FakeNn::default());
    let server = RpcServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(Svc(nn.clone())),
        ServerConfig::default(),
    )
    .await
    .unwrap();
    (nn, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_only_on_the_word_of_the_active_namenode() {
    let dir = tempfile::tempdir().unwrap();
    {
        let ds = crate::Dataset::open(&[dir.path().to_path_buf()], 0).unwrap();
        for id in [77, 78, 79] {
            let mut w = ds
                .create_rbw(BP, id, 1001, crate::ChecksumSpec::default(), 0)
                .unwrap();
            w.write_at(0, b"hello").unwrap();
            w.finalize().unwrap();
        }
    }
    let (nn1, server1) = fake_namenode().await;
    let (nn2, server2) = fake_namenode().await;
    nn1.set_status(State::Standby, 10);
    nn2.set_status(State::Active, 5);

    let mut conf = super::tests::dn_conf(dir.path(), "50ms");
    conf.set("fs.defaultFS", "hdfs://ns1");
    conf.set("dfs.nameservices", "ns1");
    conf.set("dfs.ha.namenodes.ns1", "nn1,nn2");
    let addr1 = server1.local_addr().to_string();
    let addr2 = server2.local_addr().to_string();
    conf.set("dfs.namenode.rpc-address.ns1.nn1", &addr1);
    conf.set("dfs.namenode.rpc-address.ns1.nn2", &addr2);
    let dn = DataNode::start(conf, rhdfs_conf::clock::system_clock())
        .await
        .unwrap();
    let ha = dn.ha().clone();
    wait_for("registration with both NameNodes", || {
        nn1.registrations.load(Ordering::Relaxed) > 0
            && nn2.registrations.load(Ordering::Relaxed) > 0
    })
    .await;
    wait_for("nn2 taken as active", || {
        ha.active().as_deref() == Some(addr2.as_str())
    })
    .await;

    // The standby's DNA_INVALIDATE: once the response carrying it was handled, it was
    // dropped (ignored commands never reach the command worker) and the replica stays.
    nn1.send(invalidate(77));
    let (i1, i2) = (0, 1);
    wait_for("the standby's command handled", || {
        let at = nn1.delivered_at.load(Ordering::Relaxed);
        at > 0 && ha.heartbeats_handled(i1) >= at
    })
    .await;
    assert_eq!(ha.ignored_commands(), 1);
    let kept = dn.faults().replica_files(77).unwrap();
    assert!(dn.dataset().get(BP, 77).is_some());

    // The active one's is obeyed, and both NameNodes hear of the deletion.
    nn2.send(invalidate(78));
    wait_for("78 deleted and reported to both", || {
        nn2.ibrs.lock().contains(&(78, DELETED)) && nn1.ibrs.lock().contains(&(78, DELETED))
    })
    .await;
    assert!(dn.dataset().get(BP, 78).is_none());
    assert!(kept.block_file.exists() && kept.meta_file.exists());
    assert!(dn.dataset().get(BP, 77).is_some());
    assert_eq!(ha.ignored_commands(), 1);

    // Failover: nn2 steps down, nn1 claims ACTIVE at a higher txid and is obeyed.
    nn2.set_status(State::Standby, 12);
    nn1.set_status(State::Active, 12);
    wait_for("nn1 taken as active", || {
        ha.active().as_deref() == Some(addr1.as_str())
    })
    .await;
    nn1.send(invalidate(77));
    wait_for("77 deleted on nn1's word", || {
        nn1.ibrs.lock().contains(&(77, DELETED))
    })
    .await;
    assert!(dn.dataset().get(BP, 77).is_none());

    // nn2 claims ACTIVE again with a txid below nn1's claim: a stale claim, ignored.
    nn2.set_status(State::Active, 11);
    let seen = ha.heartbeats_handled(i2);
    nn2.send(invalidate(79));
    wait_for("the stale claimant's command handled", || {
        let at = nn2.delivered_at.load(Ordering::Relaxed);
        at > 0 && ha.heartbeats_handled(i2) >= at && ha.heartbeats_handled(i2) > seen
    })
    .await;
    assert_eq!(ha.active().as_deref(), Some(addr1.as_str()));
    assert_eq!(ha.ignored_commands(), 2);
    assert!(dn.dataset().get(BP, 79).is_some());

    dn.shutdown().await;
    server1.shutdown().await;
    server2.shutdown().await;
}
