//! Issue 16, item 5: blocks scheduled to a node count against its free space (Hadoop's
//! isGoodTarget: `blockSize × MIN_BLOCKS_FOR_WRITE > remaining − scheduled × blockSize`), so
//! concurrent writers on nearly full nodes never over-commit one; a received block frees its
//! slot and blocks never received stop counting after two roll intervals.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::*;
use rhdfs_blockmanager::limits::SCHEDULED_ROLL_INTERVAL as ROLL_INTERVAL;
use rhdfs_blockmanager::{Block, IncrementalItem};

const B: u64 = 1 << 20;
const NODES: u32 = 4;
/// Each node has room for this many blocks.
const ROOM: u64 = 5;

fn heartbeat(bm: &rhdfs_blockmanager::BlockManager, i: u32, remaining: u64) {
    assert!(
        bm.heartbeat(&uuid(i), vec![report(i, remaining)], 0, 0, false)
            .registered
    );
}

#[test]
fn concurrent_writers_never_over_commit_a_node() {
    let (bm, clock) = manager(config());
    add_nodes(&bm, NODES, ROOM * B);
    let chosen: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let bm = Arc::clone(&bm);
                s.spawn(move || {
                    let mut mine = Vec::new();
                    for k in 0.. {
                        match bm.choose_targets(&format!("/w{t}/f{k}"), 3, None, &[], &[], B) {
                            Ok(targets) => mine.extend(targets.into_iter().map(|l| l.info.id.uuid)),
                            Err(_) => break,
                        }
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("writer"))
            .collect()
    });
    let mut per_node: BTreeMap<String, u64> = BTreeMap::new();
    for u in chosen.into_iter().flatten() {
        *per_node.entry(u).or_default() += 1;
    }
    // Every node filled exactly to its room, none beyond.
    for i in 1..=NODES {
        assert_eq!(per_node.get(&uuid(i)), Some(&ROOM), "{per_node:?}");
    }
    assert!(bm.choose_targets("/full", 1, None, &[], &[], B).is_err());

    // Node 1 receives two of its blocks: its free space shrinks by as much as its scheduled
    // count, so it still has no room.
    let received: Vec<IncrementalItem> = (1..=2)
        .map(|id| IncrementalItem::Received(Block::new(id, 1001, B)))
        .collect();
    bm.incremental_report(&uuid(1), &storage(1), 1, &received)
        .expect("ibr");
    heartbeat(&bm, 1, (ROOM - 2) * B);
    assert!(
        bm.choose_targets("/still-full", 1, None, &[], &[], B)
            .is_err()
    );
    // Those two blocks deleted again: room for exactly two more.
    heartbeat(&bm, 1, ROOM * B);
    for k in 0..2 {
        let t = bm
            .choose_targets(&format!("/again{k}"), 1, None, &[], &[], B)
            .expect("room for two");
        assert_eq!(t[0].info.id.uuid, uuid(1));
    }
    assert!(bm.choose_targets("/none", 1, None, &[], &[], B).is_err());

    // Blocks never received stop counting after two rolls of the scheduled counts.
    for _ in 0..2 {
        clock.advance(ROLL_INTERVAL + secs(1));
        for i in 1..=NODES {
            heartbeat(&bm, i, ROOM * B);
        }
    }
    let t = bm
        .choose_targets("/after-roll", 3, None, &[], &[], B)
        .expect("room again");
    assert_eq!(t.len(), 3);
}
