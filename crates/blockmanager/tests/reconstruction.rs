//! Reconstruction: under-replicated blocks get DNA_TRANSFER work, surplus replicas are
//! deleted, pipeline replicas still on their way are not copied twice.

use crate::common;

use common::*;
use rhdfs_blockmanager::{Block, IncrementalItem, ReplicaState, ReportedReplica};

fn received(bm: &rhdfs_blockmanager::BlockManager, node: u32, b: Block) {
    bm.incremental_report(
        &uuid(node),
        &storage(node),
        1,
        &[IncrementalItem::Received(b)],
    )
    .expect("ibr");
}

#[test]
fn dead_node_replicas_are_copied_elsewhere() {
    let (bm, clock) = manager(config());
    add_nodes(&bm, 4, GB);
    complete_block(&bm, 1, &[1, 2, 3]);
    assert_eq!(bm.compute_reconstruction_work(), 0);
    for _ in 0..22 {
        clock.advance(secs(30));
        for i in [1, 2, 4] {
            bm.heartbeat(&uuid(i), vec![report(i, GB)], 0, 0, false);
        }
    }
    assert_eq!(bm.check_heartbeats().len(), 1);
    assert_eq!(bm.fs_stats().under_replicated, 1);
    // one copy scheduled, to the only node without a replica
    assert_eq!(bm.compute_reconstruction_work(), 1);
    assert_eq!(
        bm.compute_reconstruction_work(),
        0,
        "pending copies are not scheduled twice"
    );
    let mut sent = Vec::new();
    for i in [1, 2] {
        sent.extend(
            bm.heartbeat(&uuid(i), vec![report(i, GB)], 0, 0, false)
                .transfers,
        );
    }
    assert_eq!(sent.len(), 1);
    let (block, targets) = &sent[0];
    assert_eq!(*block, Block::new(1, 1001, 64));
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0].info.id.uuid, uuid(4));
    assert_eq!(targets[0].storage_id, storage(4));
    received(&bm, 4, *block);
    assert_eq!(bm.locations(1).len(), 3);
    assert_eq!(bm.fs_stats().under_replicated, 0);
    assert_eq!(bm.compute_reconstruction_work(), 0);
}

/// The copies a DataNode was receiving or sending when its process restarts (it registers
/// again before it could be declared dead) are lost with the process, so their blocks are
/// scheduled again at once rather than after the pending timeout; the others stay pending.
#[test]
fn a_restarted_node_has_its_pending_copies_scheduled_again() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 4, GB);
    // Two blocks a replica short.
    complete_block(&bm, 1, &[1, 2]);
    complete_block(&bm, 2, &[3, 4]);
    assert_eq!(bm.fs_stats().under_replicated, 2);
    assert_eq!(bm.compute_reconstruction_work(), 2);
    assert_eq!(bm.compute_reconstruction_work(), 0, "both pending");
    let mut sent = Vec::new();
    for i in 1..=4 {
        for (block, targets) in bm
            .heartbeat(&uuid(i), vec![report(i, GB)], 0, 0, false)
            .transfers
        {
            sent.push((uuid(i), block.id, targets[0].info.id.uuid.to_string()));
        }
    }
    assert_eq!(sent.len(), 2, "{sent:?}");
    // The first copy's target restarts.
    let restarted: u32 = sent[0]
        .2
        .trim_start_matches("dn-uuid-")
        .parse()
        .expect("uuid");
    let involved = sent
        .iter()
        .filter(|(src, _, dst)| **src == *uuid(restarted) || *dst == *uuid(restarted))
        .count();
    bm.register_datanode(dn_id(restarted), "3.5.0")
        .expect("register again");
    assert_eq!(
        bm.compute_reconstruction_work(),
        involved,
        "the copies node {restarted} took part in are scheduled again at once: {sent:?}"
    );
    assert_eq!(bm.compute_reconstruction_work(), 0);
}

#[test]
fn pipeline_replicas_count_as_pending_until_timeout() {
    let (bm, clock) = manager(config());
    add_nodes(&bm, 4, GB);
    let targets = bm
        .choose_targets("/f", 3, Some("10.0.0.1"), &[], &[], 1)
        .expect("targets");
    bm.add_block_under_construction(Block::new(1, 1001, 0), 3, &targets);
    bm.commit_block(Block::new(1, 1001, 64)).expect("commit");
    received(&bm, 1, Block::new(1, 1001, 64));
    assert!(bm.try_complete_block(1));
    // the other two pipeline nodes are expected to report: nothing to copy
    assert_eq!(bm.compute_reconstruction_work(), 0);
    // they never do: after the pending timeout (300 s) copies are scheduled
    clock.advance(secs(301));
    heartbeat_all(&bm, 4);
    assert_eq!(bm.compute_reconstruction_work(), 2);
    let transfers = bm
        .heartbeat(&uuid(1), vec![report(1, GB)], 0, 0, false)
        .transfers;
    assert_eq!(transfers.len(), 1);
    assert_eq!(transfers[0].1.len(), 2);
}

#[test]
fn highest_priority_copies_use_the_hard_limit() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 2, GB);
    for id in 1..=5 {
        complete_block(&bm, id, &[1]);
    }
    // One replica left of each: highest priority, so the source may take up to the hard
    // limit (4) of copies, not just max-streams (2).
    bm.set_replication(&(1..=5).collect::<Vec<_>>(), 2);
    assert_eq!(
        bm.compute_reconstruction_work(),
        4,
        "hard limit 4 per source"
    );
    assert_eq!(
        bm.compute_reconstruction_work(),
        0,
        "source at its hard limit"
    );
    // one transfer already running on the DataNode: 4 - 1 more
    assert_eq!(
        bm.heartbeat(&uuid(1), vec![], 0, 1, false).transfers.len(),
        3
    );
    assert_eq!(
        bm.heartbeat(&uuid(1), vec![], 0, 0, false).transfers.len(),
        1
    );
    assert_eq!(bm.compute_reconstruction_work(), 1);
    assert_eq!(
        bm.heartbeat(&uuid(1), vec![], 0, 0, false).transfers.len(),
        1
    );
    assert!(
        bm.heartbeat(&uuid(1), vec![], 0, 0, false)
            .transfers
            .is_empty()
    );
}

#[test]
fn normal_priority_copies_follow_max_streams() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 4, GB);
    for id in 1..=5 {
        complete_block(&bm, id, &[1, 2]);
    }
    // Two of three replicas: low redundancy, max-streams (2) per source.
    bm.set_replication(&(1..=5).collect::<Vec<_>>(), 3);
    assert_eq!(bm.compute_reconstruction_work(), 4, "2 sources × 2 streams");
    assert_eq!(bm.compute_reconstruction_work(), 0, "both sources busy");
    let sent = bm.heartbeat(&uuid(1), vec![], 0, 1, false).transfers.len()
        + bm.heartbeat(&uuid(2), vec![], 0, 1, false).transfers.len();
    assert_eq!(sent, 2, "one stream each already in use");
    let sent = bm.heartbeat(&uuid(1), vec![], 0, 0, false).transfers.len()
        + bm.heartbeat(&uuid(2), vec![], 0, 0, false).transfers.len();
    assert_eq!(sent, 2);
    assert_eq!(bm.compute_reconstruction_work(), 1);
}

#[test]
fn one_replica_left_is_copied_first() {
    let mut cfg = config();
    cfg.replication_work_multiplier = 1;
    let (bm, _clock) = manager(cfg);
    add_nodes(&bm, 4, GB);
    // Blocks 1..=5: two of three replicas (low); block 9: one of three (highest).
    for id in 1..=5 {
        complete_block(&bm, id, &[1, 2]);
    }
    complete_block(&bm, 9, &[3]);
    bm.set_replication(&[1, 2, 3, 4, 5, 9], 3);
    // 4 live nodes × 1 = 4 blocks this pass, the highest-priority one among them.
    let work = bm.compute_reconstruction_work();
    assert_eq!(
        work,
        4 + 1,
        "block 9 needs two copies, three low blocks one each"
    );
    let from_3: Vec<u64> = bm
        .heartbeat(&uuid(3), vec![], 0, 0, false)
        .transfers
        .iter()
        .map(|(b, _)| b.id)
        .collect();
    assert_eq!(from_3, vec![9]);
    let mut low: Vec<u64> = [1, 2]
        .iter()
        .flat_map(|&i| bm.heartbeat(&uuid(i), vec![], 0, 0, false).transfers)
        .map(|(b, _)| b.id)
        .collect();
    low.sort_unstable();
    assert_eq!(low, vec![1, 2, 3]);
}

#[test]
fn returning_node_surplus_is_deleted() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 4, GB);
    first_reports(&bm, 4);
    complete_block(&bm, 1, &[1, 2, 3]);
    let rep = vec![ReportedReplica {
        block: Block::new(1, 1001, 64),
        state: ReplicaState::Finalized,
    }];
    bm.full_report(&uuid(4), &storage(4), 1, &rep)
        .expect("report");
    assert_eq!(bm.locations(1).len(), 3);
    assert_eq!(bm.fs_stats().pending_deletion, 1);
}

/// Four nodes, a block on three, a surplus replica reported by the fourth: one replica is
/// taken off the map for deletion. Returns the node deleting it and another holder.
fn surplus_being_deleted(bm: &rhdfs_blockmanager::BlockManager) -> (u32, u32) {
    add_nodes(bm, 4, GB);
    first_reports(bm, 4);
    complete_block(bm, 1, &[1, 2, 3]);
    received(bm, 4, Block::new(1, 1001, 64));
    assert_eq!(
        bm.fs_stats().pending_deletion,
        1,
        "the fourth replica is surplus"
    );
    let holders: Vec<String> = bm
        .locations(1)
        .iter()
        .map(|l| l.info.id.uuid.to_string())
        .collect();
    let deleting = (1..=4)
        .find(|i| !holders.contains(&uuid(*i)))
        .expect("one node lost the surplus replica");
    let other = (1..=4).find(|i| *i != deleting).expect("a holder");
    (deleting, other)
}

/// The copy targets of the transfers the next heartbeats carry.
fn copy_targets(bm: &rhdfs_blockmanager::BlockManager, nodes: u32) -> Vec<String> {
    let mut targets = Vec::new();
    for i in 1..=nodes {
        for (_, t) in bm
            .heartbeat(&uuid(i), vec![report(i, GB)], 0, 0, false)
            .transfers
        {
            targets.extend(t.iter().map(|t| t.info.id.uuid.to_string()));
        }
    }
    targets
}

/// A node whose surplus replica of a block is being deleted still holds it until it has
/// carried out the deletion, so it is no copy target for that block (it would refuse the
/// copy, leaving the block a replica short until the pending timeout) — whether the
/// deletion waits in the queue or has been handed out — until it reports the replica
/// deleted, as Hadoop keeps such a replica in its blocks map as excess until then.
#[test]
fn a_node_deleting_a_surplus_replica_is_no_copy_target_for_it() {
    for handed_out in [false, true] {
        let (bm, _clock) = manager(config());
        let (deleting, other) = surplus_being_deleted(&bm);
        let b = Block::new(1, 1001, 64);
        if handed_out {
            assert_eq!(bm.compute_invalidate_work(), 1);
            let hb = bm.heartbeat(&uuid(deleting), vec![report(deleting, GB)], 0, 0, false);
            assert_eq!(hb.invalidate, vec![b]);
        }
        // Another holder's replica is found corrupt: the block is a replica short, and the
        // only node that does not hold it is the one deleting it.
        bm.report_bad_block(b, &uuid(other), Some(&storage(other)));
        assert_eq!(bm.fs_stats().under_replicated, 1);
        assert_eq!(
            bm.compute_reconstruction_work(),
            0,
            "node {deleting} still holds the replica (handed out: {handed_out})"
        );
        assert_eq!(copy_targets(&bm, 4), Vec::<String>::new());
        // It carries out the deletion: now it may receive a copy.
        bm.incremental_report(
            &uuid(deleting),
            &storage(deleting),
            1,
            &[IncrementalItem::Deleted(b)],
        )
        .expect("ibr");
        assert_eq!(bm.compute_reconstruction_work(), 1);
        assert_eq!(copy_targets(&bm, 4), vec![uuid(deleting)]);
    }
}

/// The node is a copy target again once it cannot be holding the replica any more: it
/// restarted (its next full report says what it holds) or its full report leaves the
/// replica out; a full report that still lists the replica after the deletion was handed
/// out (the command lost with a restart) counts it again.
#[test]
fn a_deleting_node_is_a_target_again_once_its_report_leaves_the_replica_out() {
    for still_listed in [false, true] {
        let (bm, _clock) = manager(config());
        let (deleting, other) = surplus_being_deleted(&bm);
        let b = Block::new(1, 1001, 64);
        assert_eq!(bm.compute_invalidate_work(), 1);
        assert_eq!(
            bm.heartbeat(&uuid(deleting), vec![report(deleting, GB)], 0, 0, false)
                .invalidate,
            vec![b]
        );
        bm.report_bad_block(b, &uuid(other), Some(&storage(other)));
        assert_eq!(bm.compute_reconstruction_work(), 0);
        let listed = match still_listed {
            true => vec![ReportedReplica {
                block: b,
                state: ReplicaState::Finalized,
            }],
            false => Vec::new(),
        };
        bm.full_report(&uuid(deleting), &storage(deleting), 1, &listed)
            .expect("report");
        if still_listed {
            // Counted again: three live replicas, nothing to copy.
            assert!(
                bm.locations(1)
                    .iter()
                    .any(|l| *l.info.id.uuid == *uuid(deleting))
            );
            assert_eq!(bm.fs_stats().under_replicated, 0);
            assert_eq!(bm.compute_reconstruction_work(), 0);
        } else {
            assert_eq!(bm.compute_reconstruction_work(), 1);
            assert_eq!(copy_targets(&bm, 4), vec![uuid(deleting)]);
        }
    }
}

#[test]
fn nothing_to_copy_from_is_missing_not_scheduled() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 3, GB);
    complete_block(&bm, 1, &[1]);
    bm.incremental_report(
        &uuid(1),
        &storage(1),
        1,
        &[IncrementalItem::Deleted(Block::new(1, 1001, 64))],
    )
    .expect("ibr");
    assert_eq!(bm.fs_stats().missing_blocks, 1);
    assert_eq!(bm.compute_reconstruction_work(), 0);
}

#[test]
fn loaded_blocks_wait_for_reports_and_reconstruction_can_be_held() {
    use rhdfs_blockmanager::BlockUcState;
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 3, GB);
    bm.set_safe_mode(true);
    for id in 1..=4 {
        bm.load_block(Block::new(id, 1001, 64), 3, BlockUcState::Complete);
    }
    let s = bm.fs_stats();
    assert_eq!(
        (s.complete_blocks, s.safe_blocks, s.missing_blocks),
        (4, 0, 4)
    );
    let rep: Vec<ReportedReplica> = (1..=4)
        .map(|id| ReportedReplica {
            block: Block::new(id, 1001, 64),
            state: ReplicaState::Finalized,
        })
        .collect();
    bm.full_report(&uuid(1), &storage(1), 1, &rep)
        .expect("report");
    let s = bm.fs_stats();
    assert_eq!((s.safe_blocks, s.under_replicated), (4, 4));
    assert_eq!(bm.compute_reconstruction_work(), 0);
    bm.full_report(&uuid(2), &storage(2), 1, &rep)
        .expect("report");
    bm.full_report(&uuid(3), &storage(3), 1, &rep)
        .expect("report");
    bm.set_safe_mode(false);
    assert_eq!(bm.compute_reconstruction_work(), 0);
    assert_eq!(bm.fs_stats().under_replicated, 0);
}

/// A pipeline node that finalized its replica before the client recovered the pipeline
/// without it holds a replica of the old generation stamp. When the block is then a
/// replica short, that node is no copy target (it would refuse the copy, and the block
/// would wait out the pending timeout), and its stale replica is deleted once the block is
/// COMPLETE rather than left on its disk, uncounted, until its next full report.
#[test]
fn a_node_the_pipeline_left_out_is_no_copy_target_and_its_replica_goes() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 4, GB);
    bm.add_block_under_construction(Block::new(1, 1001, 0), 3, &[]);
    let old = Block::new(1, 1001, 64);
    received(&bm, 3, old);
    let new = Block::new(1, 1004, 64);
    bm.update_pipeline(old, new, &[uuid(1), uuid(2)], &[storage(1), storage(2)]);
    for i in [1, 2] {
        received(&bm, i, new);
    }
    bm.commit_block(new).expect("commit");
    assert!(bm.try_complete_block(1));
    assert_eq!(bm.fs_stats().under_replicated, 1);
    // The stale replica is to be deleted now; until node 3 has done so it is no target.
    assert_eq!(bm.compute_reconstruction_work(), 1);
    assert_eq!(copy_targets(&bm, 4), vec![uuid(4)]);
    assert_eq!(bm.compute_invalidate_work(), 1);
    let hb = bm.heartbeat(&uuid(3), vec![report(3, GB)], 0, 0, false);
    assert_eq!(hb.invalidate, vec![old]);
    received(&bm, 4, new);
    assert_eq!(bm.fs_stats().under_replicated, 0);
}
