//! Issue 5 redundancy bookkeeping on a manual clock: over-replicated blocks postponed while
//! a storage holding them has stale contents (no full report since the NameNode started),
//! rescanned once every storage has reported; under-replication counted with
//! decommissioning replicas as not live; blocks on a single rack of a multi-rack cluster
//! in the badly-distributed queue, copied to a new rack, then trimmed on the crowded rack.

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;

use common::*;
use rhdfs_blockmanager::redundancy::decommission::AdminState;
use rhdfs_blockmanager::{
    Block, BlockManager, BlockManagerConfig, IncrementalItem, ReplicaState, ReportedReplica,
};

fn finalized(ids: &[u64]) -> Vec<ReportedReplica> {
    ids.iter()
        .map(|&id| ReportedReplica {
            block: Block::new(id, 1001, 64),
            state: ReplicaState::Finalized,
        })
        .collect()
}

/// Node `i`'s full block report listing `ids`.
fn full_report(bm: &BlockManager, i: u32, ids: &[u64]) {
    bm.full_report(&uuid(i), &storage(i), 1, &finalized(ids))
        .expect("full report");
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("rhdfs-misrepl-{}-{name}", std::process::id()));
    std::fs::write(&p, text).expect("write temp file");
    p
}

fn nodes_of(bm: &BlockManager, id: u64) -> Vec<String> {
    let mut v: Vec<String> = bm
        .locations(id)
        .into_iter()
        .map(|l| l.info.id.uuid)
        .collect();
    v.sort();
    v
}

#[test]
fn surplus_waits_until_every_storage_has_reported() {
    let (bm, _clock) = manager(config());
    // Registered but no full report yet: as right after a NameNode restart.
    add_nodes(&bm, 3, GB);
    complete_block(&bm, 1, &[1, 2, 3]);
    complete_block(&bm, 2, &[1, 2, 3]);
    assert!(bm.storage_contents_stale(&storage(1)));
    bm.set_replication(&[1, 2], 2);
    assert_eq!(bm.fs_stats().pending_deletion, 0, "nothing chosen yet");
    assert_eq!(nodes_of(&bm, 1).len(), 3);
    assert_eq!(bm.postponed_misreplicated_blocks(), 2);
    let meta = bm.metasave_text();
    assert!(
        meta.contains(
            "Mis-replicated blocks that have been postponed:\n\
             BP-1-127.0.0.1-1:blk_1_1001 (replicas: l: 3 d: 0 c: 0 e: 0) "
        ),
        "{meta}"
    );

    // Deleting a postponed block takes it out of the set (its replicas go to
    // InvalidateBlocks as for any deleted block).
    bm.remove_blocks_now(&[2]);
    assert_eq!(bm.postponed_misreplicated_blocks(), 1);
    let deleted = bm.fs_stats().pending_deletion;
    assert_eq!(deleted, 3);

    // Rescans while storages are stale leave it postponed.
    assert_eq!(bm.rescan_postponed_misreplicated(), 0);
    full_report(&bm, 1, &[1]);
    full_report(&bm, 2, &[1]);
    assert!(!bm.storage_contents_stale(&storage(1)));
    assert_eq!(bm.rescan_postponed_misreplicated(), 0);
    assert_eq!(bm.postponed_misreplicated_blocks(), 1);
    assert_eq!(bm.fs_stats().pending_deletion, deleted);

    // The last storage reports: the next rescan removes the surplus replica.
    full_report(&bm, 3, &[1]);
    assert_eq!(bm.rescan_postponed_misreplicated(), 1);
    assert_eq!(bm.postponed_misreplicated_blocks(), 0);
    assert_eq!(nodes_of(&bm, 1).len(), 2);
    assert_eq!(bm.fs_stats().pending_deletion, deleted + 1);
    let meta = bm.metasave_text();
    assert!(
        meta.contains(
            "Mis-replicated blocks that have been postponed:\nMetasave: Blocks being reconstructed:"
        ),
        "{meta}"
    );
}

#[test]
fn dead_node_storage_is_stale_again_and_rescan_is_bounded() {
    let cfg = BlockManagerConfig {
        postponed_rescan: 1,
        ..config()
    };
    let (bm, clock) = manager(cfg);
    add_nodes(&bm, 4, GB);
    first_reports(&bm, 4);
    assert!(!bm.storage_contents_stale(&storage(4)));
    // Node 4 stops heartbeating and is declared dead: what it holds is unknown again.
    clock.advance(secs(400));
    heartbeat_all(&bm, 3);
    clock.advance(secs(400));
    heartbeat_all(&bm, 3);
    assert_eq!(bm.check_heartbeats(), vec![Arc::<str>::from(uuid(4))]);
    assert!(bm.storage_contents_stale(&storage(4)));
    assert!(!bm.storage_contents_stale(&storage(3)));
    // It comes back and IBRs reach the NameNode before its first full report.
    add_nodes(&bm, 4, GB);
    for id in [1, 2] {
        complete_block(&bm, id, &[1, 2, 3]);
        bm.incremental_report(
            &uuid(4),
            &storage(4),
            1,
            &[IncrementalItem::Received(Block::new(id, 1001, 64))],
        )
        .expect("ibr");
    }
    // Four live replicas of replication 3, one on a stale storage: postponed.
    assert_eq!(bm.postponed_misreplicated_blocks(), 2);
    assert_eq!(bm.fs_stats().pending_deletion, 0);
    full_report(&bm, 4, &[1, 2]);
    // One block per rescan (dfs.namenode.blocks.per.postponedblocks.rescan = 1).
    assert_eq!(bm.rescan_postponed_misreplicated(), 1);
    assert_eq!(bm.postponed_misreplicated_blocks(), 1);
    assert_eq!(bm.rescan_postponed_misreplicated(), 1);
    assert_eq!(bm.postponed_misreplicated_blocks(), 0);
    assert_eq!(bm.fs_stats().pending_deletion, 2);
}

#[test]
fn decommissioning_replicas_are_not_live_in_the_counts() {
    let exclude = temp_file("exclude", "");
    let mut cfg = config();
    cfg.admin.hosts_exclude = Some(exclude.clone());
    let (bm, _clock) = manager(cfg);
    add_nodes(&bm, 5, GB);
    first_reports(&bm, 5);
    complete_block(&bm, 1, &[1, 2, 3]); // replication 3
    complete_block(&bm, 2, &[1, 2, 4]);
    complete_block(&bm, 3, &[4]);
    // Before: only block 3 (one replica) is under-replicated.
    let s = bm.fs_stats();
    assert_eq!((s.under_replicated, s.missing_blocks), (1, 0), "{s:?}");

    std::fs::write(&exclude, "10.0.0.4\n").expect("exclude node 4");
    bm.refresh_nodes().expect("refresh");
    assert_eq!(bm.admin_state(&uuid(4)), AdminState::DecommissionInProgress);
    // Node 4 also gets a replica of block 1 (not surplus: it is not live there).
    bm.incremental_report(
        &uuid(4),
        &storage(4),
        1,
        &[IncrementalItem::Received(Block::new(1, 1001, 64))],
    )
    .expect("ibr");
    assert_eq!(bm.fs_stats().pending_deletion, 0);
    let views = bm.block_views(&[1, 2, 3]);
    let counts: Vec<(usize, usize)> = views
        .iter()
        .flatten()
        .map(|v| (v.live, v.decommissioning))
        .collect();
    assert_eq!(counts, vec![(3, 1), (2, 1), (0, 1)]);
    let s = bm.fs_stats();
    // Block 1 (3 live + 1 decommissioning) is fine; block 2 (2 live + 1 decommissioning)
    // is under-replicated; block 3 (only a decommissioning replica) is under-replicated at
    // the highest priority, not missing.
    assert_eq!(s.under_replicated, 2, "{s:?}");
    assert_eq!(s.missing_blocks, 0, "{s:?}");
    assert_eq!(bm.low_redundancy_queue_sizes(), [1, 0, 1, 0, 0]);
    let _ = std::fs::remove_file(exclude);
}

#[test]
fn single_rack_block_gets_a_copy_on_a_new_rack_then_loses_one_on_the_crowded_rack() {
    let table = temp_file(
        "racks",
        "10.0.0.1 /r1\n10.0.0.2 /r1\n10.0.0.3 /r1\n10.0.0.4 /r2\n",
    );
    let mut conf = rhdfs_conf::Configuration::new();
    conf.set(
        "net.topology.node.switch.mapping.impl",
        "org.apache.hadoop.net.TableMapping",
    );
    conf.set(
        "net.topology.table.file.name",
        table.to_string_lossy().to_string(),
    );
    let mut cfg = BlockManagerConfig::from_conf(&conf).expect("conf");
    cfg.seed = Some(7);
    let (bm, _clock) = manager(cfg);
    add_nodes(&bm, 3, GB);
    first_reports(&bm, 3);
    complete_block(&bm, 1, &[1, 2, 3]);
    complete_block(&bm, 2, &[1, 2, 3]);
    bm.set_replication(&[2], 1);
    let trimmed = bm.fs_stats().pending_deletion;
    assert_eq!(trimmed, 2);
    bm.refresh_rack_map();
    // One rack: nothing to spread.
    assert_eq!(bm.badly_distributed_blocks(), 0);
    assert_eq!(bm.compute_reconstruction_work(), 0);

    // A node on a second rack joins: the cluster is multi-rack, and block 1 (three
    // replicas, all on /r1) is badly distributed; block 2 (replication 1) is not.
    add_nodes(&bm, 4, GB);
    full_report(&bm, 4, &[]);
    assert_eq!(bm.badly_distributed_blocks(), 1);
    assert_eq!(bm.low_redundancy_queue_sizes(), [0, 0, 0, 1, 0]);
    assert_eq!(bm.fs_stats().under_replicated, 1);

    // One copy, to the node on the new rack.
    assert_eq!(bm.compute_reconstruction_work(), 1);
    assert_eq!(bm.compute_reconstruction_work(), 0, "pending: not again");
    let mut copies = Vec::new();
    for i in 1..=3 {
        for (b, targets) in bm
            .heartbeat(&uuid(i), vec![report(i, GB)], 0, 0, false)
            .transfers
        {
            copies.extend(targets.into_iter().map(|t| (b.id, t.info.id.uuid)));
        }
    }
    assert_eq!(copies, vec![(1, uuid(4))]);
    bm.incremental_report(
        &uuid(4),
        &storage(4),
        1,
        &[IncrementalItem::Received(Block::new(1, 1001, 64))],
    )
    .expect("ibr");
    // Four replicas on two racks: placement satisfied, and the surplus replica goes from
    // the crowded rack /r1.
    assert_eq!(bm.badly_distributed_blocks(), 0);
    assert_eq!(bm.fs_stats().under_replicated, 0);
    assert_eq!(bm.fs_stats().pending_deletion, trimmed + 1);
    let left = nodes_of(&bm, 1);
    assert_eq!(left.len(), 3);
    assert!(left.contains(&uuid(4)), "{left:?}");
    let _ = std::fs::remove_file(table);
}
