//! BlockManager behaviour on a manual clock: placement, report diff, the delete path and
//! invalidation scheduling, liveness. No sleeping.

use crate::common;

use std::time::Duration;

use common::*;
use rhdfs_blockmanager::{AdminState, DatanodeId};
use rhdfs_blockmanager::{
    Block, BlockManagerConfig, BlockManagerError, BlockUcState, CorruptReason, IncrementalItem,
    ReplicaState, ReportKind, ReportedReplica,
};

fn excluded(i: u32) -> DatanodeId {
    DatanodeId {
        ip_addr: format!("10.0.0.{i}"),
        xfer_port: 9866,
        ..DatanodeId::default()
    }
}

#[test]
fn choose_targets_local_first_distinct_and_bounded() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 3, GB);
    let t = bm
        .choose_targets("/f", 3, Some("10.0.0.2"), &[], &[], 1024)
        .expect("targets");
    assert_eq!(t.len(), 3);
    assert_eq!(t[0].info.id.uuid, uuid(2));
    assert_eq!(t[0].storage_id, storage(2));
    assert_eq!(t[0].info.location, "/default-rack");
    let mut ids: Vec<_> = t.iter().map(|l| l.info.id.uuid.clone()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3);
    // more than available: all of them
    assert_eq!(
        bm.choose_targets("/f", 5, None, &[], &[], 1)
            .map(|t| t.len()),
        Ok(3)
    );
    // the favored node and the writer's node are chosen (pipeline order is the policy's)
    let fav = vec!["host3:9866".to_string()];
    let t = bm
        .choose_targets("/f", 2, Some("10.0.0.1"), &[], &fav, 1)
        .expect("targets");
    let mut got: Vec<String> = t.iter().map(|l| l.info.id.uuid.clone()).collect();
    got.sort();
    assert_eq!(got, vec![uuid(1), uuid(3)]);
}

#[test]
fn choose_targets_fails_with_hadoops_message() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 3, GB);
    let ex = vec![excluded(1), excluded(2)];
    let t = bm
        .choose_targets("/f", 3, None, &ex, &[], 1)
        .expect("one left");
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].info.id.uuid, uuid(3));
    let ex = vec![excluded(1), excluded(2), excluded(3)];
    let err = bm.choose_targets("/a/b", 3, None, &ex, &[], 1).unwrap_err();
    assert!(matches!(err, BlockManagerError::NotEnoughReplicas(_)));
    assert_eq!(
        err.to_string(),
        "File /a/b could only be written to 0 of the 1 minReplication nodes. \
         There are 3 datanode(s) running and 3 node(s) are excluded in this operation."
    );
    // no node has room for the block
    assert!(
        bm.choose_targets("/a/b", 1, None, &[], &[], 2 * GB)
            .is_err()
    );
    // additional nodes never repeat existing ones
    let add = bm
        .additional_datanodes("/f", &[uuid(1), uuid(2)], &[], 2, 1)
        .expect("additional");
    assert_eq!(add.len(), 1);
    assert_eq!(add[0].info.id.uuid, uuid(3));
}

#[test]
fn write_path_locations_and_completion() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 3, GB);
    let targets = bm
        .choose_targets("/f", 3, None, &[], &[], 1)
        .expect("targets");
    let b = Block::new(1 << 30 | 1, 1001, 0);
    bm.add_block_under_construction(b, 3, &targets);
    let locs = bm.locations(b.id);
    assert_eq!(locs, targets);
    bm.commit_block(Block::new(b.id, 1001, 512))
        .expect("commit");
    assert_eq!(
        bm.get_block(b.id).map(|x| x.1),
        Some(BlockUcState::Committed)
    );
    assert!(!bm.try_complete_block(b.id));
    let first = &targets[0].info.id.uuid;
    bm.incremental_report(
        first,
        &targets[0].storage_id,
        1,
        &[IncrementalItem::Received(Block::new(b.id, 1001, 512))],
    )
    .expect("ibr");
    assert!(bm.try_complete_block(b.id));
    assert_eq!(
        bm.get_block(b.id),
        Some((Block::new(b.id, 1001, 512), BlockUcState::Complete))
    );
    // COMPLETE: locations are the reported replicas only
    let locs = bm.locations(b.id);
    assert_eq!(locs.len(), 1);
    assert_eq!(&locs[0].info.id.uuid, first);
}

#[test]
fn full_report_diff_adds_removes_and_invalidates() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 2, GB);
    complete_block(&bm, 1, &[1]);
    complete_block(&bm, 2, &[1]);
    bm.add_block_under_construction(Block::new(3, 1001, 0), 3, &[]);
    let report = vec![
        // known good
        ReportedReplica {
            block: Block::new(1, 1001, 64),
            state: ReplicaState::Finalized,
        },
        // unknown to the namespace
        ReportedReplica {
            block: Block::new(99, 1001, 64),
            state: ReplicaState::Finalized,
        },
        // replica of a block being written
        ReportedReplica {
            block: Block::new(3, 1001, 10),
            state: ReplicaState::Rbw,
        },
        // block 2 is not reported: removed from this storage
    ];
    let sum = bm
        .full_report(&uuid(1), &storage(1), 1, &report)
        .expect("report");
    // The storage's first report holds the unknown block's replica instead of deleting it.
    assert_eq!(
        (sum.reported, sum.removed, sum.invalidated, sum.held),
        (3, 1, 0, 1)
    );
    assert_eq!(bm.locations(1).len(), 1);
    assert!(bm.locations(2).is_empty());
    assert_eq!(bm.fs_stats().pending_deletion, 0);
    assert_eq!(bm.orphan_counts().replicas, 1);
    assert_eq!(bm.fs_stats().missing_blocks, 1);
    // The next report deletes it (its generation stamp is not from the future).
    let sum = bm
        .full_report(&uuid(1), &storage(1), 1, &report)
        .expect("report");
    assert_eq!((sum.added, sum.removed, sum.invalidated), (0, 0, 1));
    assert_eq!(bm.fs_stats().pending_deletion, 1);
    assert_eq!(bm.orphan_counts().replicas, 0);
    // the same report again changes nothing
    let sum = bm
        .full_report(&uuid(1), &storage(1), 1, &report)
        .expect("report");
    assert_eq!((sum.added, sum.removed, sum.invalidated), (0, 0, 0));
    // a second node reports block 1 with the wrong length: corrupt, not served
    let bad = vec![ReportedReplica {
        block: Block::new(1, 1001, 63),
        state: ReplicaState::Finalized,
    }];
    let sum = bm
        .full_report(&uuid(2), &storage(2), 1, &bad)
        .expect("report");
    assert_eq!(sum.corrupt, 1);
    assert_eq!(bm.locations(1).len(), 1);
    assert_eq!(bm.fs_stats().corrupt_blocks, 1);
    // fsck and metasave name the reason: a length mismatch.
    let view = bm.block_views(&[1]).remove(0).expect("block 1");
    let reasons: Vec<_> = view.replicas.iter().map(|r| r.corrupt_reason).collect();
    assert!(
        reasons.contains(&Some(CorruptReason::SizeMismatch)),
        "{reasons:?}"
    );
    assert!(reasons.contains(&None), "{reasons:?}");
    let meta = bm.metasave_text();
    assert!(meta.contains("\tReason=SIZE_MISMATCH"), "{meta}");
    // reports from unknown nodes are refused with Hadoop's message
    let err = bm.full_report("nobody", "DS-x", 1, &report).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ProcessReport from dead or unregistered node: nobody"
    );
}

#[test]
fn full_report_is_processed_in_chunks() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 1, GB);
    let report: Vec<ReportedReplica> = (0..2500)
        .map(|i| ReportedReplica {
            block: Block::new(10_000 + i, 1001, 1),
            state: ReplicaState::Finalized,
        })
        .collect();
    // Not the storage's first report (which holds unknown replicas instead).
    bm.full_report(&uuid(1), &storage(1), 1, &[])
        .expect("first report");
    let sum = bm
        .full_report(&uuid(1), &storage(1), 1, &report)
        .expect("report");
    assert_eq!(sum.invalidated, 2500);
    assert!(sum.chunks >= 3, "{sum:?}");
    let stat = bm
        .lock_stats()
        .into_iter()
        .find(|s| s.lock == "blocks" && s.op == "full_report")
        .expect("full_report lock stat");
    assert!(stat.count >= 4);
}

/// dfs.namenode.block.deletion.lock.threshold.ms = 0: every hold of the blocks lock removes
/// one block, whatever the increment.
#[test]
fn deletion_lock_threshold_bounds_each_hold() {
    let cfg = BlockManagerConfig {
        deletion_increment: 10,
        deletion_lock_threshold: std::time::Duration::ZERO,
        ..config()
    };
    let (bm, _clock) = manager(cfg);
    add_nodes(&bm, 3, GB);
    for id in 1..=5 {
        complete_block(&bm, id, &[1, 2, 3]);
    }
    bm.reset_lock_stats();
    bm.remove_blocks_now(&[1, 2, 3, 4, 5]);
    let holds: u64 = bm
        .lock_stats()
        .iter()
        .filter(|s| s.op == "remove_blocks")
        .map(|s| s.count)
        .sum();
    assert_eq!(holds, 5);
    assert_eq!(bm.fs_stats().blocks_total, 0);
}

#[test]
fn remove_blocks_in_batches_then_invalidation_scheduled_and_sent() {
    let cfg = BlockManagerConfig {
        deletion_increment: 10,
        ..config()
    };
    let (bm, _clock) = manager(cfg);
    add_nodes(&bm, 3, GB);
    for id in 1..=35 {
        complete_block(&bm, id, &[1, 2, 3]);
    }
    bm.reset_lock_stats();
    bm.remove_blocks_now(&(1..=35).collect::<Vec<_>>());
    let stat = bm
        .lock_stats()
        .into_iter()
        .find(|s| s.op == "remove_blocks")
        .expect("remove_blocks stat");
    assert_eq!(stat.count, 4, "35 blocks in batches of 10");
    let s = bm.fs_stats();
    assert_eq!((s.blocks_total, s.pending_deletion), (0, 105));
    // 3 live nodes × 0.32 -> one node per pass, all 35 of its replicas (limit 1000)
    assert_eq!(bm.compute_invalidate_work(), 35);
    assert_eq!(bm.fs_stats().pending_deletion, 70);
    assert_eq!(bm.fs_stats().pending_deletion_commands, 35);
    assert_eq!(bm.compute_invalidate_work(), 35);
    assert_eq!(bm.compute_invalidate_work(), 35);
    assert_eq!(bm.compute_invalidate_work(), 0);
    for i in 1..=3 {
        let out = bm.heartbeat(&uuid(i), vec![report(i, GB)], 0, 0, false);
        assert_eq!(out.invalidate.len(), 35);
    }
    assert_eq!(bm.fs_stats().pending_deletion_commands, 0);
}

#[test]
fn invalidation_respects_limit_percentage_and_startup_delay() {
    let cfg = BlockManagerConfig {
        block_invalidate_limit: 20,
        invalidate_work_pct: 0.32,
        startup_delay_deletion: Duration::from_secs(5),
        ..config()
    };
    let (bm, clock) = manager(cfg);
    add_nodes(&bm, 10, GB);
    // 50 unknown replicas on every node
    for i in 1..=10 {
        let rep: Vec<ReportedReplica> = (0..50)
            .map(|b| ReportedReplica {
                block: Block::new(1000 * u64::from(i) + b, 1001, 1),
                state: ReplicaState::Finalized,
            })
            .collect();
        // Not the storage's first report (which holds unknown replicas instead).
        bm.full_report(&uuid(i), &storage(i), 1, &[])
            .expect("first report");
        bm.full_report(&uuid(i), &storage(i), 1, &rep)
            .expect("report");
    }
    assert_eq!(bm.fs_stats().pending_deletion, 500);
    // held back during the startup delay
    assert_eq!(bm.compute_invalidate_work(), 0);
    clock.advance(Duration::from_secs(4));
    heartbeat_all(&bm, 10);
    assert_eq!(bm.compute_invalidate_work(), 0);
    assert_eq!(bm.fs_stats().pending_deletion, 500);
    clock.advance(Duration::from_secs(1));
    // ceil(10 × 0.32) = 4 nodes, 20 blocks each
    assert_eq!(bm.compute_invalidate_work(), 80);
    assert_eq!(bm.fs_stats().pending_deletion, 420);
    let mut given = 0;
    for i in 1..=10 {
        let out = bm.heartbeat(&uuid(i), vec![report(i, GB)], 0, 0, false);
        assert!(out.invalidate.is_empty() || out.invalidate.len() == 20);
        given += out.invalidate.len();
    }
    assert_eq!(given, 80);
    // everything drains after enough passes
    let mut passes = 0;
    while bm.fs_stats().pending_deletion > 0 {
        let n = bm.compute_invalidate_work();
        assert!(n > 0 && n <= 80, "{n}");
        passes += 1;
        assert!(passes < 100);
    }
    assert!(passes >= 6); // 420 left, at most 80 per pass
}

#[test]
fn heartbeat_limit_applies_per_response() {
    let cfg = BlockManagerConfig {
        block_invalidate_limit: 20,
        invalidate_work_pct: 1.0,
        ..config()
    };
    let (bm, _clock) = manager(cfg);
    add_nodes(&bm, 1, GB);
    complete_block(&bm, 1, &[1]);
    let rep: Vec<ReportedReplica> = (0..30)
        .map(|b| ReportedReplica {
            block: Block::new(500 + b, 1001, 1),
            state: ReplicaState::Finalized,
        })
        .collect();
    // Not the storage's first report (which holds unknown replicas instead).
    bm.full_report(&uuid(1), &storage(1), 1, &[])
        .expect("first report");
    bm.full_report(&uuid(1), &storage(1), 1, &rep)
        .expect("report");
    assert_eq!(bm.compute_invalidate_work(), 20);
    assert_eq!(bm.compute_invalidate_work(), 10);
    assert_eq!(
        bm.heartbeat(&uuid(1), vec![], 0, 0, false).invalidate.len(),
        20
    );
    assert_eq!(
        bm.heartbeat(&uuid(1), vec![], 0, 0, false).invalidate.len(),
        10
    );
}

#[test]
fn liveness_stale_dead_and_replica_removal() {
    let (bm, clock) = manager(config());
    add_nodes(&bm, 3, GB);
    complete_block(&bm, 1, &[1, 2, 3]);
    assert_eq!(bm.locations(1).len(), 3);
    // node 3 goes quiet: stale after 30 s (listed last), dead after 630 s
    clock.advance(secs(31));
    heartbeat_all(&bm, 2);
    let locs = bm.locations(1);
    assert_eq!(locs.len(), 3);
    assert_eq!(locs[2].info.id.uuid, uuid(3));
    assert_eq!(bm.live_datanodes(), 3);
    for _ in 0..20 {
        clock.advance(secs(30));
        heartbeat_all(&bm, 2);
    }
    assert_eq!(
        bm.check_heartbeats(),
        vec![std::sync::Arc::from(uuid(3).as_str())]
    );
    assert_eq!(bm.live_datanodes(), 2);
    assert_eq!(bm.locations(1).len(), 2);
    assert_eq!(bm.datanode_report(ReportKind::Dead).len(), 1);
    assert_eq!(bm.datanode_report(ReportKind::Live).len(), 2);
    assert_eq!(bm.datanode_report(ReportKind::All).len(), 3);
    let s = bm.fs_stats();
    assert_eq!(
        (s.live_datanodes, s.dead_datanodes, s.capacity),
        (2, 1, 4 * GB)
    );
    // the dead node must register again, then report
    assert!(
        !bm.heartbeat(&uuid(3), vec![report(3, GB)], 0, 0, false)
            .registered
    );
    assert!(
        bm.register_datanode(dn_id(3), "3.5.0")
            .expect("register")
            .was_dead
    );
    let rep = vec![ReportedReplica {
        block: Block::new(1, 1001, 64),
        state: ReplicaState::Finalized,
    }];
    bm.full_report(&uuid(3), &storage(3), 1, &rep)
        .expect("report");
    assert_eq!(bm.locations(1).len(), 3);
}

#[test]
fn datanode_info_rendering() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 1, GB);
    let info = bm.datanode_report(ReportKind::All).pop().expect("one node");
    assert_eq!(info.id.ip_addr, "10.0.0.1");
    assert_eq!(info.id.host_name, "host1");
    assert_eq!(info.id.uuid, uuid(1));
    assert_eq!(
        (info.id.xfer_port, info.id.info_port, info.id.ipc_port),
        (9866, 9864, 9867)
    );
    assert_eq!(info.capacity, 2 * GB);
    assert_eq!(info.remaining, GB);
    assert_eq!(info.dfs_used, GB / 2);
    assert_eq!(info.last_update_ms, 1_700_000_000_000);
    assert_eq!(info.admin_state, AdminState::Normal);
    // capacity - dfsUsed - remaining when the DataNode does not say
    assert_eq!(info.non_dfs_used, GB / 2);
    assert_eq!(info.num_blocks, Some(0));
    assert_eq!(info.last_block_report_ms, 0);
    assert_eq!(info.blocks_scheduled, 0);
    bm.choose_targets("/f", 1, None, &[], &[], 1)
        .expect("a target");
    let info = bm.datanode_report(ReportKind::All).pop().expect("one node");
    assert_eq!(info.blocks_scheduled, 1, "JMX LiveNodes' blockScheduled");
    complete_block(&bm, 1, &[1]);
    bm.full_report(
        &uuid(1),
        &storage(1),
        1,
        &[ReportedReplica {
            block: Block::new(1, 1001, 64),
            state: ReplicaState::Finalized,
        }],
    )
    .expect("report");
    let info = bm
        .datanode_report(ReportKind::Live)
        .pop()
        .expect("one node");
    assert_eq!(info.num_blocks, Some(1));
    assert_eq!(info.last_block_report_ms, 1_700_000_000_000);
}

#[test]
fn bad_block_reports_hide_the_replica() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 3, GB);
    complete_block(&bm, 1, &[1, 2]);
    bm.report_bad_block(Block::new(1, 1001, 64), &uuid(1), None);
    let locs = bm.locations(1);
    assert_eq!(locs.len(), 1);
    assert_eq!(locs[0].info.id.uuid, uuid(2));
    bm.report_bad_block(Block::new(1, 1001, 64), &uuid(2), Some(&storage(2)));
    let bl = bm.block_locations(1).expect("block");
    assert!(bl.corrupt);
    assert_eq!(bl.locations.len(), 2);
}

#[test]
fn set_replication_lowers_and_invalidates_surplus() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 3, GB);
    first_reports(&bm, 3);
    complete_block(&bm, 1, &[1, 2, 3]);
    bm.set_replication(&[1], 2);
    assert_eq!(bm.locations(1).len(), 2);
    assert_eq!(bm.fs_stats().pending_deletion, 1);
}

#[test]
fn deleted_block_report_removes_replica_and_dead_node_ibr_is_refused() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 2, GB);
    complete_block(&bm, 1, &[1, 2]);
    bm.incremental_report(
        &uuid(1),
        &storage(1),
        1,
        &[IncrementalItem::Deleted(Block::new(1, 1001, 64))],
    )
    .expect("ibr");
    assert_eq!(bm.locations(1).len(), 1);
    let err = bm
        .incremental_report(
            "ghost",
            "DS-g",
            1,
            &[IncrementalItem::Received(Block::new(1, 1001, 64))],
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Got incremental block report from unregistered or dead node"
    );
}

#[tokio::test]
async fn wait_for_min_replication_wakes_on_received() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 1, GB);
    bm.add_block_under_construction(Block::new(1, 1001, 0), 1, &[]);
    bm.commit_block(Block::new(1, 1001, 64)).expect("commit");
    assert!(!bm.wait_for_min_replication(1, Duration::ZERO).await);
    let waiter = {
        let bm = bm.clone();
        tokio::spawn(async move {
            bm.wait_for_min_replication(1, Duration::from_secs(30))
                .await
        })
    };
    tokio::task::yield_now().await;
    bm.incremental_report(
        &uuid(1),
        &storage(1),
        1,
        &[IncrementalItem::Received(Block::new(1, 1001, 64))],
    )
    .expect("ibr");
    assert!(waiter.await.expect("join"));
    assert!(bm.try_complete_block(1));
}

#[tokio::test]
async fn remove_blocks_returns_at_once_and_finishes_in_background() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 1, GB);
    for id in 1..=2500 {
        bm.add_block_under_construction(Block::new(id, 1001, 0), 1, &[]);
    }
    bm.remove_blocks((1..=2500).collect());
    for _ in 0..1000 {
        if bm.fs_stats().pending_removal == 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    let s = bm.fs_stats();
    assert_eq!((s.pending_removal, s.blocks_total), (0, 0));
}

#[test]
fn failed_storage_loses_its_replicas() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 2, GB);
    complete_block(&bm, 1, &[1, 2]);
    let mut r = report(1, GB);
    r.failed = true;
    assert!(bm.heartbeat(&uuid(1), vec![r], 0, 0, false).registered);
    let locs = bm.locations(1);
    assert_eq!(locs.len(), 1);
    assert_eq!(locs[0].info.id.uuid, uuid(2));
    assert_eq!(bm.fs_stats().under_replicated, 1);
}
