//! Test set-up shared by this crate's tests and the NameNode's: a block manager on a
//! manual clock with a fixed seed, and DataNodes. Built only with the `testing` feature.

use std::sync::Arc;
use std::time::Duration;

use crate::{
    Block, BlockManager, BlockManagerConfig, DatanodeId, IncrementalItem, NamespaceInfo,
    StorageReport,
};
use rhdfs_conf::clock::{ManualClock, SharedClock};

pub const GB: u64 = 1 << 30;

pub fn ns() -> NamespaceInfo {
    NamespaceInfo {
        namespace_id: 42,
        cluster_id: "CID-test".into(),
        block_pool_id: "BP-1-127.0.0.1-1".into(),
        ctime: 0,
    }
}

pub fn config() -> BlockManagerConfig {
    BlockManagerConfig {
        seed: Some(7),
        ..BlockManagerConfig::default()
    }
}

pub fn manager(cfg: BlockManagerConfig) -> (Arc<BlockManager>, Arc<ManualClock>) {
    let clock = ManualClock::shared(1_700_000_000_000);
    let shared: SharedClock = clock.clone();
    (BlockManager::with_config(cfg, shared, ns()), clock)
}

pub fn uuid(i: u32) -> String {
    format!("dn-uuid-{i}")
}

pub fn storage(i: u32) -> String {
    format!("DS-{i}")
}

pub fn dn_id(i: u32) -> DatanodeId {
    DatanodeId {
        uuid: uuid(i),
        ip_addr: format!("10.0.0.{i}"),
        host_name: format!("host{i}"),
        xfer_port: 9866,
        info_port: 9864,
        info_secure_port: 0,
        ipc_port: 9867,
    }
}

pub fn report(i: u32, remaining: u64) -> StorageReport {
    StorageReport {
        storage_id: storage(i),
        storage_type: 1,
        failed: false,
        capacity: 2 * remaining,
        dfs_used: remaining / 2,
        remaining,
        block_pool_used: remaining / 2,
        non_dfs_used: None,
    }
}

/// Registers DataNodes 1..=n, each with one storage of `remaining` bytes free.
pub fn add_nodes(bm: &BlockManager, n: u32, remaining: u64) {
    for i in 1..=n {
        if let Err(e) = bm.register_datanode(dn_id(i), "3.5.0") {
            panic!("register: {e}");
        }
        let out = bm.heartbeat(&uuid(i), vec![report(i, remaining)], 0, 0, false);
        assert!(out.registered);
    }
}

/// The first (empty) full block report of DataNodes 1..=n, as a DataNode sends right after
/// registering: their storages' contents are current from then on, so surplus replicas on
/// them may be chosen (until then excess decisions are postponed).
pub fn first_reports(bm: &BlockManager, n: u32) {
    for i in 1..=n {
        bm.full_report(&uuid(i), &storage(i), 1, &[])
            .expect("first full report");
    }
}

/// Heartbeats of every node 1..=n (keeps them alive on the manual clock).
pub fn heartbeat_all(bm: &BlockManager, n: u32) {
    for i in 1..=n {
        bm.heartbeat(&uuid(i), vec![report(i, GB)], 0, 0, false);
    }
}

/// A COMPLETE block with finalized replicas on the given nodes.
pub fn complete_block(bm: &BlockManager, id: u64, nodes: &[u32]) {
    bm.add_block_under_construction(Block::new(id, 1001, 0), 3, &[]);
    bm.commit_block(Block::new(id, 1001, 64)).expect("commit");
    for &i in nodes {
        bm.incremental_report(
            &uuid(i),
            &storage(i),
            1,
            &[IncrementalItem::Received(Block::new(id, 1001, 64))],
        )
        .expect("ibr");
    }
    assert!(bm.try_complete_block(id) || nodes.is_empty());
}

pub fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}
