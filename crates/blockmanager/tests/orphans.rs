//! Issue 11: safe mode sends nothing to a DataNode, and replicas of unknown blocks are held
//! (from the future: until released; in a storage's first report: until the start-up
//! delay has passed out of safe mode) instead of deleted.

use std::time::Duration;

use rhdfs_blockmanager::state::NO_ACK;
use rhdfs_blockmanager::{
    Block, BlockManagerConfig, IncrementalItem, OrphanClass, ReplicaState, ReportedReplica,
};

use crate::common::*;

fn finalized(id: u64, gs: u64) -> ReportedReplica {
    ReportedReplica {
        block: Block::new(id, gs, 64),
        state: ReplicaState::Finalized,
    }
}

#[test]
fn safe_mode_computes_no_work_and_heartbeats_carry_no_commands() {
    let cfg = BlockManagerConfig {
        invalidate_work_pct: 1.0,
        ..config()
    };
    let (bm, _clock) = manager(cfg);
    add_nodes(&bm, 3, GB);
    first_reports(&bm, 3);
    // Block 1 has one replica (under-replicated: a copy would be scheduled); node 1 also
    // has replicas of unknown blocks (a later report: they are to be deleted).
    complete_block(&bm, 1, &[1]);
    bm.full_report(
        &uuid(1),
        &storage(1),
        1,
        &[finalized(1, 1001), finalized(50, 1001), finalized(51, 1001)],
    )
    .expect("report");
    assert_eq!(bm.fs_stats().pending_deletion, 2);

    bm.set_safe_mode(true);
    for _ in 0..3 {
        assert_eq!(bm.redundancy_monitor_pass(), 0, "no work in safe mode");
        for n in 1..=3 {
            let out = bm.heartbeat(&uuid(n), vec![report(n, GB)], 0, 0, false);
            assert!(out.invalidate.is_empty() && out.transfers.is_empty());
        }
    }
    assert_eq!(bm.fs_stats().pending_deletion, 2, "still queued, not sent");

    // Out of safe mode the queued work goes out.
    bm.set_safe_mode(false);
    assert!(
        bm.redundancy_monitor_pass() >= 3,
        "a copy and two deletions"
    );
    let out = bm.heartbeat(&uuid(1), vec![report(1, GB)], 0, 0, false);
    let mut deleted: Vec<u64> = out.invalidate.iter().map(|b| b.id).collect();
    deleted.sort();
    assert_eq!(deleted, vec![50, 51]);
    assert_eq!(out.transfers.len(), 1, "block 1 copied from node 1");
}

#[test]
fn replicas_from_the_future_are_held_until_released() {
    let cfg = BlockManagerConfig {
        invalidate_work_pct: 1.0,
        ..config()
    };
    let (bm, clock) = manager(cfg);
    add_nodes(&bm, 2, GB);
    // The namespace's last generation stamp is 1005: 2000 and 2001 are from the future.
    bm.set_namespace_marks(1005, u64::MAX);
    complete_block(&bm, 1, &[]);
    for n in 1..=2 {
        bm.full_report(&uuid(n), &storage(n), 1, &[])
            .expect("first report");
        let sum = bm
            .full_report(
                &uuid(n),
                &storage(n),
                1,
                &[
                    finalized(1, 1001),
                    finalized(70, 2000),
                    finalized(71, 2001),
                    finalized(60, 1003),
                ],
            )
            .expect("report");
        // Not a first report: block 60 (generation stamp in the past) is deleted.
        assert_eq!((sum.held, sum.invalidated), (2, 1));
    }
    let c = bm.orphan_counts();
    assert_eq!((c.replicas, c.future_replicas, c.future_bytes), (4, 4, 256));
    assert_eq!((c.future_max_id, c.future_max_gs), (71, 2001));
    assert_eq!(bm.orphans_above(1005), (4, 256));
    let held = bm.held_orphans();
    assert!(held.iter().all(|r| r.class == OrphanClass::Future));

    // Never released by time, passes or further reports.
    clock.advance(Duration::from_secs(3600));
    for _ in 0..3 {
        heartbeat_all(&bm, 2);
        bm.redundancy_monitor_pass();
        bm.full_report(
            &uuid(1),
            &storage(1),
            1,
            &[finalized(1, 1001), finalized(70, 2000), finalized(71, 2001)],
        )
        .expect("report");
    }
    assert_eq!(bm.orphan_counts().future_replicas, 4);
    let sent: usize = (1..=2)
        .map(|n| {
            bm.heartbeat(&uuid(n), vec![report(n, GB)], 0, 0, false)
                .invalidate
                .iter()
                .filter(|b| b.id >= 70)
                .count()
        })
        .sum();
    assert_eq!(sent, 0);

    // The namespace moves past them and keeps a floor at 1005: still held.
    bm.set_namespace_marks(2001, 1005);
    bm.full_report(
        &uuid(1),
        &storage(1),
        1,
        &[finalized(1, 1001), finalized(70, 2000), finalized(71, 2001)],
    )
    .expect("report");
    assert_eq!(bm.orphan_counts().future_replicas, 4);

    // A node that drops a replica no longer holds it.
    bm.incremental_report(
        &uuid(2),
        &storage(2),
        1,
        &[IncrementalItem::Deleted(Block::new(71, 2001, 64))],
    )
    .expect("ibr");
    assert_eq!(bm.orphan_counts().replicas, 3);

    // Released: deleted without acknowledgement, like a deleted file's replicas.
    assert_eq!(bm.release_orphans(None), 3);
    assert_eq!(bm.orphan_counts().replicas, 0);
    bm.redundancy_monitor_pass();
    let mut deleted = Vec::new();
    for n in 1..=2 {
        deleted.extend(
            bm.heartbeat(&uuid(n), vec![report(n, GB)], 0, 0, false)
                .invalidate,
        );
    }
    deleted.sort_by_key(|b| b.id);
    let ids: Vec<u64> = deleted.iter().map(|b| b.id).collect();
    assert_eq!(ids, vec![70, 70, 71]);
    assert!(deleted.iter().all(|b| b.num_bytes == NO_ACK));
}

#[test]
fn first_report_holds_unknown_replicas_until_the_startup_delay_out_of_safe_mode() {
    let cfg = BlockManagerConfig {
        startup_delay_deletion: Duration::from_secs(10),
        invalidate_work_pct: 1.0,
        ..config()
    };
    let (bm, clock) = manager(cfg);
    bm.set_safe_mode(true);
    bm.set_namespace_marks(1005, u64::MAX);
    add_nodes(&bm, 1, GB);
    let sum = bm
        .full_report(
            &uuid(1),
            &storage(1),
            1,
            &[
                finalized(60, 1003),
                finalized(61, 1004),
                finalized(80, 3000),
            ],
        )
        .expect("first report");
    assert_eq!((sum.held, sum.invalidated), (3, 0));
    let c = bm.orphan_counts();
    assert_eq!((c.replicas, c.future_replicas), (3, 1));

    // Past the delay but in safe mode: held.
    clock.advance(Duration::from_secs(11));
    heartbeat_all(&bm, 1);
    assert_eq!(bm.redundancy_monitor_pass(), 0);
    assert_eq!(bm.orphan_counts().replicas, 3);

    // Out of safe mode: the startup ones go, the one from the future stays.
    bm.set_safe_mode(false);
    assert_eq!(bm.redundancy_monitor_pass(), 2);
    let out = bm.heartbeat(&uuid(1), vec![report(1, GB)], 0, 0, false);
    let mut ids: Vec<u64> = out.invalidate.iter().map(|b| b.id).collect();
    ids.sort();
    assert_eq!(ids, vec![60, 61]);
    let c = bm.orphan_counts();
    assert_eq!((c.replicas, c.future_replicas), (1, 1));
}

#[test]
fn a_dead_node_drops_its_held_replicas() {
    let (bm, clock) = manager(config());
    add_nodes(&bm, 2, GB);
    bm.set_namespace_marks(1005, u64::MAX);
    bm.full_report(&uuid(1), &storage(1), 1, &[finalized(90, 4000)])
        .expect("report");
    bm.full_report(&uuid(2), &storage(2), 1, &[finalized(90, 4000)])
        .expect("report");
    assert_eq!(bm.orphan_counts().replicas, 2);
    clock.advance(Duration::from_secs(700));
    bm.heartbeat(&uuid(2), vec![report(2, GB)], 0, 0, false);
    let dead = bm.check_heartbeats();
    assert_eq!(dead.len(), 1);
    assert_eq!(bm.orphan_counts().replicas, 1);
}
