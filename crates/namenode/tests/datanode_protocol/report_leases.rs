//! Full block report leases over DatanodeProtocol (issue 5, block reports): at most
//! `dfs.namenode.max.full.block.report.leases` DataNodes hold a lease; a report whose lease is
//! not the node's current one is ignored (Hadoop's checkBlockReportLease; id 0 bypasses); a
//! report split over several RPCs keeps the lease until its last RPC and applies each storage
//! once, even when an RPC is retried.

use super::support::*;
use rhdfs_blockmanager::{Block, BlockManagerConfig, ReplicaState, ReportedReplica, encode_longs};
use rhdfs_namenode::rpc::datanode::DatanodeProtocolService;
use rhdfs_proto::datanode::{
    BlockReportContextProto, BlockReportRequestProto, BlockReportResponseProto,
    StorageBlockReportProto,
};
use rhdfs_proto::hdfs::DatanodeStorageProto;

fn finalized(ids: &[u64]) -> Vec<ReportedReplica> {
    ids.iter()
        .map(|&id| ReportedReplica {
            block: Block::new(id, 1001, 64),
            state: ReplicaState::Finalized,
        })
        .collect()
}

/// One blockReport RPC: storage `storage_id` of node `i` with `ids`, RPC `cur` of `total`.
#[allow(clippy::too_many_arguments)]
async fn send(
    svc: &DatanodeProtocolService,
    i: u32,
    storage_id: &str,
    ids: &[u64],
    report_id: i64,
    cur: i32,
    total: i32,
    lease: u64,
) {
    let req = BlockReportRequestProto {
        registration: registration_of(dn_id(i)),
        block_pool_id: "BP-1-127.0.0.1-1".into(),
        reports: vec![StorageBlockReportProto {
            storage: DatanodeStorageProto {
                storage_uuid: storage_id.to_string(),
                state: None,
                storage_type: Some(1),
            },
            blocks: encode_longs(&finalized(ids)),
            number_of_blocks: None,
            blocks_buffers: vec![],
        }],
        context: Some(BlockReportContextProto {
            total_rpcs: total,
            cur_rpc: cur,
            id: report_id,
            lease_id: Some(lease),
            sorted: None,
        }),
    };
    let _: BlockReportResponseProto = call(svc, "blockReport", &req).await.expect("blockReport");
}

fn on_node(bm: &rhdfs_blockmanager::BlockManager, id: u64, i: u32) -> bool {
    bm.locations(id).iter().any(|l| l.info.id.uuid == uuid(i))
}

#[tokio::test]
async fn leases_admit_reports_and_multi_rpc_reports_apply_each_storage_once() {
    let cfg = BlockManagerConfig {
        max_report_leases: 1,
        ..config()
    };
    let (bm, _clock) = manager(cfg);
    let svc = dn_service(&bm);
    add_nodes(&bm, 2, GB);
    complete_block(&bm, 7, &[2]);
    complete_block(&bm, 8, &[2]);

    // One lease at a time.
    let l1 = bm
        .heartbeat(&uuid(1), vec![report(1, GB)], 0, 0, true)
        .full_report_lease;
    assert_ne!(l1, 0);
    let l2 = bm
        .heartbeat(&uuid(2), vec![report(2, GB)], 0, 0, true)
        .full_report_lease;
    assert_eq!(l2, 0, "the only lease is taken");

    // Node 2 reports under a lease it does not hold: ignored (block 7 would lose its
    // replica on node 2 and block 99 would be queued for deletion).
    send(&svc, 2, &storage(2), &[8, 99], 1, 0, 1, l1).await;
    assert!(on_node(&bm, 7, 2), "the report was not applied");
    assert_eq!(bm.fs_stats().pending_deletion, 0);

    // Node 1: a report in two RPCs, one storage each, under its lease.
    send(&svc, 1, &storage(1), &[7], 10, 0, 2, l1).await;
    assert!(on_node(&bm, 7, 1));
    assert_eq!(
        bm.active_report_leases(),
        1,
        "the lease lasts until the last RPC"
    );
    // The first RPC retried with other contents: not applied a second time.
    send(&svc, 1, &storage(1), &[], 10, 0, 2, l1).await;
    assert!(on_node(&bm, 7, 1), "storage DS-1 was applied once");
    send(&svc, 1, "DS-1b", &[8], 10, 1, 2, l1).await;
    assert!(on_node(&bm, 8, 1));
    assert_eq!(bm.active_report_leases(), 0, "released after the last RPC");
    // A later report (new id) is applied again.
    send(&svc, 1, &storage(1), &[], 11, 0, 1, 0).await;
    assert!(
        !on_node(&bm, 7, 1),
        "a new report with lease id 0 (bypass) is applied"
    );

    // The lease is free for node 2 now.
    let l2 = bm
        .heartbeat(&uuid(2), vec![report(2, GB)], 0, 0, true)
        .full_report_lease;
    assert_ne!(l2, 0);
    send(&svc, 2, &storage(2), &[8, 99], 2, 0, 1, l2).await;
    assert!(!on_node(&bm, 7, 2), "applied: block 7 was not reported");
    // The storage's first report holds block 99's replica (`orphans`), the next deletes it.
    assert_eq!(bm.orphan_counts().replicas, 1, "block 99 is unknown");
    send(&svc, 2, &storage(2), &[8, 99], 3, 0, 1, 0).await;
    assert_eq!(bm.fs_stats().pending_deletion, 1, "block 99 is unknown");
    assert_eq!(bm.orphan_counts().replicas, 0);
}
