//! Operator views: replica states per block (fsck -replicaDetails), blocks with no good
//! replica (fsck -list-corruptfileblocks), the highest-priority low-redundancy count and
//! the metasave text.

use crate::common;

use common::*;
use rhdfs_blockmanager::views::ReplicaStatus;
use rhdfs_blockmanager::{Block, BlockUcState};

fn statuses(bm: &rhdfs_blockmanager::BlockManager, id: u64) -> Vec<(String, ReplicaStatus)> {
    let v = bm.block_views(&[id]).pop().flatten().expect("known block");
    v.replicas
        .iter()
        .map(|r| (r.xfer_addr.clone(), r.status))
        .collect()
}

#[test]
fn replica_states_and_counts() {
    let (bm, clock) = manager(config());
    add_nodes(&bm, 4, GB);
    complete_block(&bm, 1, &[1, 2, 3]);
    complete_block(&bm, 2, &[1]);
    complete_block(&bm, 3, &[1, 4]);
    complete_block(&bm, 4, &[2]);

    // All live at first.
    let v = bm.block_views(&[1, 2, 3, 4, 99]);
    assert_eq!(v.len(), 5);
    assert!(v[4].is_none());
    let live: Vec<usize> = v.iter().flatten().map(|b| b.live).collect();
    assert_eq!(live, vec![3, 1, 2, 1]);
    assert!(
        v.iter()
            .flatten()
            .all(|b| b.state == BlockUcState::Complete)
    );
    assert_eq!(bm.highest_priority_low_redundancy(), 2, "blocks 2 and 4");
    let n = bm.node_counts();
    assert_eq!((n.live, n.dead, n.racks), (4, 0, 1));

    // Node 3 decommissioning: its replica is shown and counted apart from the live ones.
    bm.start_decommission(&uuid(3));
    let b1 = bm.block_views(&[1]).pop().flatten().expect("block 1");
    assert_eq!((b1.live, b1.decommissioning, b1.corrupt), (2, 1, 0));
    assert_eq!(
        statuses(&bm, 1),
        vec![
            ("10.0.0.1:9866".to_string(), ReplicaStatus::Live),
            ("10.0.0.2:9866".to_string(), ReplicaStatus::Live),
            ("10.0.0.3:9866".to_string(), ReplicaStatus::Decommissioning),
        ]
    );
    assert_eq!(ReplicaStatus::Decommissioning.label(), "DECOMMISSIONING");

    // Node 4 misses heartbeats past the stale interval (but is not dead yet).
    clock.advance(secs(40));
    heartbeat_all(&bm, 3);
    let b3 = bm.block_views(&[3]).pop().flatten().expect("block 3");
    assert_eq!(
        (b3.live, b3.stale),
        (2, 1),
        "stale replicas still count as live"
    );
    assert_eq!(statuses(&bm, 3)[1].1, ReplicaStatus::StaleNode);

    // The only replica of block 4 reported bad: corrupt, no good replica left.
    bm.report_bad_block(Block::new(4, 1001, 64), &uuid(2), Some(&storage(2)));
    let b4 = bm.block_views(&[4]).pop().flatten().expect("block 4");
    assert!(b4.is_corrupt);
    assert_eq!((b4.live, b4.corrupt), (0, 1));
    assert_eq!(
        statuses(&bm, 4),
        vec![("10.0.0.2:9866".to_string(), ReplicaStatus::Corrupt)]
    );
    let bad: Vec<u64> = bm
        .corrupt_or_missing_blocks()
        .iter()
        .map(|b| b.id)
        .collect();
    assert_eq!(bad, vec![4]);
    assert_eq!(bm.highest_priority_low_redundancy(), 1, "block 2 only");

    let meta = bm.metasave_text();
    assert!(
        meta.contains("Block=4\tSize=64\tNode=10.0.0.2:9866\tStorageID=DS-2\t"),
        "{meta}"
    );
    assert!(
        meta.contains("Metasave: Number of datanodes: 4\n"),
        "{meta}"
    );
    assert!(
        meta.contains(":blk_2_1001 (replicas: l: 1 d: 0 c: 0 e: 0) 10.0.0.1:9866\n"),
        "{meta}"
    );
}

/// A surplus replica is shown as EXCESS (and counted apart from the live ones) until its
/// node reports it deleted, as Hadoop's fsck shows it; a corrupt replica being deleted is
/// not shown (Hadoop removes it from the blocks map at once too).
#[test]
fn a_surplus_replica_being_deleted_is_excess() {
    use rhdfs_blockmanager::IncrementalItem;
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 4, GB);
    first_reports(&bm, 4);
    complete_block(&bm, 1, &[1, 2, 3]);
    let b = Block::new(1, 1001, 64);
    bm.incremental_report(&uuid(4), &storage(4), 1, &[IncrementalItem::Received(b)])
        .expect("ibr");
    let v = bm.block_views(&[1]).pop().flatten().expect("block 1");
    assert_eq!((v.live, v.excess), (3, 1));
    let excess: Vec<String> = statuses(&bm, 1)
        .into_iter()
        .filter(|(_, s)| *s == ReplicaStatus::Excess)
        .map(|(addr, _)| addr)
        .collect();
    assert_eq!(excess.len(), 1, "{excess:?}");
    let node: u32 = excess[0]
        .trim_start_matches("10.0.0.")
        .trim_end_matches(":9866")
        .parse()
        .expect("address");
    bm.incremental_report(
        &uuid(node),
        &storage(node),
        1,
        &[IncrementalItem::Deleted(b)],
    )
    .expect("ibr");
    let v = bm.block_views(&[1]).pop().flatten().expect("block 1");
    assert_eq!((v.live, v.excess, v.replicas.len()), (3, 0, 3));
}
