//! Every kind of traffic at once from several threads: no deadlock, consistent counts,
//! and deletion done in the promised number of lock holds (seed 000's property that
//! incremental reports only ever wait behind one bounded batch).

use crate::common;

use std::sync::Arc;
use std::thread;

use common::*;
use rhdfs_blockmanager::{
    Block, BlockManagerConfig, IncrementalItem, ReplicaState, ReportKind, ReportedReplica,
};

#[test]
fn mixed_traffic_from_many_threads() {
    let cfg = BlockManagerConfig {
        deletion_increment: 1000,
        invalidate_work_pct: 1.0,
        ..config()
    };
    let (bm, _clock) = manager(cfg);
    add_nodes(&bm, 3, GB);
    // 20,000 one-block files, three replicas each
    const OLD: u64 = 20_000;
    for id in 1..=OLD {
        bm.add_block_under_construction(Block::new(id, 1001, 0), 3, &[]);
        bm.commit_block(Block::new(id, 1001, 8)).expect("commit");
    }
    for n in 1..=3u32 {
        let items: Vec<IncrementalItem> = (1..=OLD)
            .map(|id| IncrementalItem::Received(Block::new(id, 1001, 8)))
            .collect();
        bm.incremental_report(&uuid(n), &storage(n), 1, &items)
            .expect("ibr");
    }
    assert_eq!(bm.fs_stats().safe_blocks, OLD);
    bm.reset_lock_stats();

    let deleter = {
        let bm = Arc::clone(&bm);
        thread::spawn(move || bm.remove_blocks_now(&(1..=OLD).collect::<Vec<_>>()))
    };
    let writers: Vec<_> = (0..4u64)
        .map(|w| {
            let bm = Arc::clone(&bm);
            thread::spawn(move || {
                for k in 0..200u64 {
                    let id = 1_000_000 + w * 1000 + k;
                    let t = bm
                        .choose_targets("/w", 3, None, &[], &[], 8)
                        .expect("targets");
                    bm.add_block_under_construction(Block::new(id, 1001, 0), 3, &t);
                    for l in &t {
                        bm.incremental_report(
                            &l.info.id.uuid,
                            &l.storage_id,
                            1,
                            &[IncrementalItem::Received(Block::new(id, 1001, 8))],
                        )
                        .expect("ibr");
                    }
                    bm.commit_block(Block::new(id, 1001, 8)).expect("commit");
                    assert!(bm.try_complete_block(id), "block {id} must complete");
                }
            })
        })
        .collect();
    let monitor = {
        let bm = Arc::clone(&bm);
        thread::spawn(move || {
            for _ in 0..200 {
                bm.redundancy_monitor_pass();
                for n in 1..=3 {
                    bm.heartbeat(&uuid(n), vec![report(n, GB)], 0, 0, false);
                }
                let _ = bm.fs_stats();
                let _ = bm.datanode_report(ReportKind::All);
            }
        })
    };
    let reporter = {
        let bm = Arc::clone(&bm);
        thread::spawn(move || {
            let rep: Vec<ReportedReplica> = (OLD - 500..=OLD)
                .map(|id| ReportedReplica {
                    block: Block::new(id, 1001, 8),
                    state: ReplicaState::Finalized,
                })
                .collect();
            for _ in 0..5 {
                let _ = bm.full_report(&uuid(3), &storage(3), 1, &rep);
            }
        })
    };
    for h in writers {
        h.join().expect("writer");
    }
    deleter.join().expect("deleter");
    monitor.join().expect("monitor");
    reporter.join().expect("reporter");

    let s = bm.fs_stats();
    assert_eq!(s.blocks_total, 800);
    assert_eq!(s.safe_blocks, 800);
    let holds = bm
        .lock_stats()
        .into_iter()
        .find(|l| l.op == "remove_blocks")
        .expect("remove_blocks stat");
    assert_eq!(holds.count, 20, "20,000 blocks in batches of 1,000");
    // every deleted replica is either still waiting, handed out, or was reported
    // (as unknown) by the full reports and is queued again
    while bm.fs_stats().pending_deletion > 0 {
        bm.compute_invalidate_work();
        for n in 1..=3 {
            bm.heartbeat(&uuid(n), vec![report(n, GB)], 0, 0, false);
        }
    }
    assert_eq!(bm.fs_stats().pending_deletion_commands, 0);
}
