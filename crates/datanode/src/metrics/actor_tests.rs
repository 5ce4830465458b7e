//! The actor puts the slow peer report into the heartbeat once per report interval.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use rhdfs_conf::clock::ManualClock;
use rhdfs_conf::{Configuration, keys};
use rhdfs_proto::datanode::{
    BlockReceivedAndDeletedRequestProto, BlockReportRequestProto, BlockReportResponseProto,
    DatanodeRegistrationProto, HeartbeatRequestProto, HeartbeatResponseProto, NamespaceInfoProto,
    StorageInfoProto,
};

use crate::actor::rpc::{ActorError, NamenodeConnector, NamenodeProtocol};
use crate::datanode::DataNode;

#[derive(Default)]
struct Fake {
    heartbeats: Mutex<Vec<HeartbeatRequestProto>>,
}

struct Conn(Arc<Fake>);

#[async_trait]
impl NamenodeConnector for Conn {
    async fn connect(&self) -> Result<Arc<dyn NamenodeProtocol>, ActorError> {
        Ok(Arc::new(Nn(self.0.clone())))
    }
}

struct Nn(Arc<Fake>);

#[async_trait]
impl NamenodeProtocol for Nn {
    async fn version_request(&self) -> Result<NamespaceInfoProto, ActorError> {
        Ok(NamespaceInfoProto {
            build_version: "x".into(),
            unused: 0,
            block_pool_id: "BP-9-127.0.0.1-9".into(),
            storage_info: StorageInfoProto {
                layout_version: 0,
                namespce_id: 9,
                cluster_id: "CID-slow".into(),
                c_time: 0,
            },
            software_version: "3.5.0".into(),
            capabilities: None,
            state: None,
        })
    }

    async fn register_datanode(
        &self,
        reg: DatanodeRegistrationProto,
    ) -> Result<DatanodeRegistrationProto, ActorError> {
        Ok(reg)
    }

    async fn send_heartbeat(
        &self,
        req: HeartbeatRequestProto,
    ) -> Result<HeartbeatResponseProto, ActorError> {
        self.0.heartbeats.lock().push(req);
        Ok(HeartbeatResponseProto::default())
    }

    async fn report_bad_blocks(
        &self,
        _req: rhdfs_proto::datanode::ReportBadBlocksRequestProto,
    ) -> Result<(), ActorError> {
        Ok(())
    }

    async fn block_report(
        &self,
        _req: BlockReportRequestProto,
    ) -> Result<BlockReportResponseProto, ActorError> {
        Ok(BlockReportResponseProto { cmd: None })
    }

    async fn block_received_and_deleted(
        &self,
        _req: BlockReceivedAndDeletedRequestProto,
    ) -> Result<(), ActorError> {
        Ok(())
    }
}

async fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..400 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_carries_slow_peers_once_per_interval() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut conf = Configuration::new();
    conf.set(
        "dfs.datanode.data.dir",
        format!("file://{}", dir.path().display()),
    );
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.heartbeat.interval", "50ms");
    conf.set(keys::DFS_DATANODE_PEER_STATS_ENABLED_KEY, "true");
    conf.set(
        keys::DFS_DATANODE_PEER_METRICS_MIN_OUTLIER_DETECTION_SAMPLES_KEY,
        "1",
    );
    conf.set(keys::DFS_DATANODE_MIN_OUTLIER_DETECTION_NODES_KEY, "4");
    conf.set(keys::DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_KEY, "10m");
    conf.set(super::ROLLING_WINDOW_LENGTH_KEY, "1m");
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let fake = Arc::new(Fake::default());
    let dn = DataNode::start_with(conf, clock.clone(), Arc::new(Conn(fake.clone())))
        .await
        .expect("start");
    let m = dn.metrics().expect("peer stats on").clone();
    // The first heartbeat is due at once and reports nothing.
    wait_for("a heartbeat", || !fake.heartbeats.lock().is_empty()).await;
    for (peer, ms) in [
        ("10.0.0.1:9864", 2),
        ("10.0.0.2:9864", 3),
        ("10.0.0.3:9864", 2),
    ] {
        m.record_peer(peer, Duration::from_millis(ms));
    }
    m.record_peer("10.0.0.9:9864", Duration::from_millis(90));
    clock.advance(Duration::from_secs(600));
    let slow = || {
        fake.heartbeats
            .lock()
            .iter()
            .filter(|h| !h.slow_peers.is_empty())
            .cloned()
            .collect::<Vec<_>>()
    };
    wait_for("a heartbeat with slow peers", || !slow().is_empty()).await;
    let n = fake.heartbeats.lock().len();
    wait_for("more heartbeats", || fake.heartbeats.lock().len() >= n + 3).await;
    let s = slow();
    assert_eq!(s.len(), 1, "reported once per interval");
    assert_eq!(s[0].slow_peers.len(), 1);
    assert_eq!(
        s[0].slow_peers[0].data_node_id.as_deref(),
        Some("10.0.0.9:9864")
    );
    assert_eq!(s[0].slow_peers[0].aggregate_latency, Some(90.0));
    assert!(s[0].slow_disks.is_empty());
    dn.shutdown().await;
}
