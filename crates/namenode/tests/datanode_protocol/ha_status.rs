//! The HA status of a heartbeat answer carries the NameNode's last written transaction id
//! (Hadoop's getLastAppliedOrWrittenTxId), the figure DataNodes order ACTIVE claims by: it
//! grows with each edit and is the log's, not zero, after a restart.

use rhdfs_conf::clock::system_clock;
use rhdfs_ipc::RpcClient;
use rhdfs_namenode::rpc::datanode::DatanodeProtocolService;
use rhdfs_namenode::{NameNode, NameNodeHandle};
use rhdfs_proto::datanode::{HeartbeatRequestProto, HeartbeatResponseProto};
use rhdfs_proto::hdfs::nnha_status_heartbeat_proto::State;
use rhdfs_proto::hdfs::{FsPermissionProto, MkdirsRequestProto, MkdirsResponseProto};
use rhdfs_proto::protocols::CLIENT_PROTOCOL;

use super::support::{call, registration};

use crate::common::conf;

async fn mkdirs(nn: &NameNodeHandle, paths: &[&str]) {
    let c = RpcClient::connect(
        &nn.rpc_addr().to_string(),
        CLIENT_PROTOCOL,
        &rhdfs_conf::user::current_user(),
    )
    .await
    .expect("connect");
    for p in paths {
        let r: MkdirsResponseProto = c
            .call(
                "mkdirs",
                &MkdirsRequestProto {
                    src: (*p).into(),
                    masked: FsPermissionProto { perm: 0o755 },
                    create_parent: true,
                    unmasked: None,
                },
            )
            .await
            .expect("mkdirs");
        assert!(r.result);
    }
}

/// The HA status a heartbeat of DataNode 1 is answered with (registered or not).
async fn ha_status(nn: &NameNodeHandle) -> (i32, u64) {
    let svc = DatanodeProtocolService::new(nn.namesystem().clone());
    let req = HeartbeatRequestProto {
        registration: registration(1),
        ..Default::default()
    };
    let hb: HeartbeatResponseProto = call(&svc, "sendHeartbeat", &req).await.expect("hb");
    (hb.ha_status.state, hb.ha_status.txid)
}

fn written(nn: &NameNodeHandle) -> u64 {
    nn.namesystem()
        .durable()
        .expect("durable namesystem")
        .log()
        .last_txid()
}

#[tokio::test]
async fn heartbeat_txid_is_the_last_written_transaction() {
    let t = tempfile::tempdir().expect("tempdir");
    let nn = NameNode::start(conf(t.path()), system_clock())
        .await
        .expect("start");
    let (state, first) = ha_status(&nn).await;
    assert_eq!(state, State::Active as i32);
    assert_eq!(first, written(&nn));
    mkdirs(&nn, &["/a", "/b", "/c"]).await;
    let (_, after) = ha_status(&nn).await;
    assert_eq!(after, written(&nn));
    assert!(
        after >= first + 3,
        "txid {first} -> {after} after three mkdirs"
    );
    nn.shutdown().await;

    // After a restart, before any new edit: the log's last txid, not zero.
    let nn = NameNode::start(conf(t.path()), system_clock())
        .await
        .expect("restart");
    let (_, restarted) = ha_status(&nn).await;
    assert_eq!(restarted, written(&nn));
    assert!(
        restarted >= after,
        "txid {after} before, {restarted} after the restart"
    );
    nn.shutdown().await;
}
