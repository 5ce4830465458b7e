//! reportDiff rows and block state transitions, on the bare state (no locks, no clock).

use std::sync::Arc;

use super::*;
use crate::block::{BlockUcState, CorruptReason, ExpectedLocation, ReplicaState};
use crate::report::{ReportAction, ReportedReplica, classify};

fn a(s: &str) -> Arc<str> {
    Arc::from(s)
}

fn rep(id: u64, gs: u64, len: u64, state: ReplicaState) -> ReportedReplica {
    ReportedReplica {
        block: Block::new(id, gs, len),
        state,
    }
}

/// A COMPLETE block 1 (gs 1001, 100 bytes, replication 3) with finalized replicas on dn1..dn{n}.
fn complete_block(n: usize) -> BlockState {
    let mut st = BlockState::new(1);
    st.add_under_construction(Block::new(1, 1001, 0), 3, vec![]);
    for i in 1..=n {
        st.process_replica(
            &a(&format!("dn{i}")),
            &a(&format!("DS-{i}")),
            &rep(1, 1001, 100, ReplicaState::Finalized),
        );
    }
    assert_eq!(st.commit(Block::new(1, 1001, 100)), Ok(n >= 1));
    st
}

#[test]
fn known_good_replica_is_kept() {
    let mut st = complete_block(1);
    let info = st.map.get(1).cloned();
    let r = rep(1, 1001, 100, ReplicaState::Finalized);
    assert_eq!(
        classify(&r, info.as_ref(), &st.map.on_node("dn1"), false),
        ReportAction::Keep
    );
    let o = st.process_replica(&a("dn1"), &a("DS-1"), &r);
    assert_eq!(o, ReplicaOutcome::default());
    assert_eq!(st.map.get(1).map(|i| i.good_finalized()), Some(1));
}

#[test]
fn unknown_block_is_invalidated() {
    let mut st = complete_block(1);
    let o = st.process_replica(
        &a("dn1"),
        &a("DS-1"),
        &rep(77, 1001, 5, ReplicaState::Finalized),
    );
    assert!(o.invalidated);
    assert!(st.invalidate.contains("dn1", Block::new(77, 1001, 5)));
    assert!(!st.map.contains(77));
}

/// A node's replica of an older generation stamp was found corrupt and queued for
/// deletion; the node then reports its replica at the block's generation stamp (it was in
/// the recovered pipeline): that replica is counted, not ignored as the one to delete.
#[test]
fn a_newer_replica_than_the_one_queued_for_deletion_counts() {
    let mut st = complete_block(3);
    let old = rep(1, 1000, 100, ReplicaState::Finalized);
    let o = st.process_replica(&a("dn4"), &a("DS-4"), &old);
    assert!(o.corrupt && o.invalidated);
    // The same replica again is the one being deleted: ignored.
    let o = st.process_replica(&a("dn4"), &a("DS-4"), &old);
    assert_eq!(o, ReplicaOutcome::default());
    assert_eq!(st.map.get(1).map(|i| i.good_finalized()), Some(3));
    let new = rep(1, 1001, 100, ReplicaState::Finalized);
    let o = st.process_replica(&a("dn4"), &a("DS-4"), &new);
    assert!(o.finalized_added, "{o:?}");
    assert_eq!(st.map.get(1).map(|i| i.good_finalized()), Some(4));
    assert_eq!(
        st.deleting.nodes_of(1).count(),
        0,
        "dn4 holds a counted replica"
    );
    assert_eq!(
        st.invalidate.num_blocks(),
        0,
        "the older stamp's deletion is dropped: dn4 would refuse it"
    );
}

#[test]
fn smaller_generation_stamp_is_corrupt() {
    let mut st = complete_block(3);
    let r = rep(1, 1000, 100, ReplicaState::Finalized);
    match classify(&r, st.map.get(1), &st.map.on_node("dn4"), false) {
        ReportAction::Corrupt(CorruptReason::GenstampMismatch, msg) => assert_eq!(
            msg,
            "block is COMPLETE and reported genstamp 1000 does not match genstamp in block map 1001"
        ),
        other => panic!("{other:?}"),
    }
    // three good replicas = replication: the corrupt one is deleted at once
    let o = st.process_replica(&a("dn4"), &a("DS-4"), &r);
    assert!(o.corrupt && o.invalidated);
    assert!(st.invalidate.contains("dn4", Block::new(1, 1000, 100)));
    assert_eq!(st.map.get(1).map(|i| i.replicas.len()), Some(3));
}

#[test]
fn wrong_length_is_corrupt_and_kept_when_it_is_needed() {
    let mut st = complete_block(1);
    let r = rep(1, 1001, 99, ReplicaState::Finalized);
    assert!(matches!(
        classify(&r, st.map.get(1), &st.map.on_node("dn2"), false),
        ReportAction::Corrupt(CorruptReason::SizeMismatch, _)
    ));
    // one good replica of three expected: the corrupt one stays recorded (not served), not deleted
    let o = st.process_replica(&a("dn2"), &a("DS-2"), &r);
    assert!(o.corrupt && !o.invalidated);
    let info = st.map.get(1).cloned().unwrap_or_else(|| panic!("block"));
    assert_eq!(info.corrupt_replicas(), 1);
    assert_eq!(info.good_finalized(), 1);
    assert_eq!(st.counts().corrupt_blocks, 1);
    // the DataNode later reports a good copy: no longer corrupt
    st.process_replica(
        &a("dn2"),
        &a("DS-2"),
        &rep(1, 1001, 100, ReplicaState::Finalized),
    );
    assert_eq!(st.map.get(1).map(|i| i.corrupt_replicas()), Some(0));
    assert_eq!(st.map.get(1).map(|i| i.good_finalized()), Some(2));
}

#[test]
fn rbw_of_under_construction_block() {
    let mut st = BlockState::new(1);
    st.add_under_construction(Block::new(5, 1001, 0), 3, vec![]);
    let r = rep(5, 1001, 10, ReplicaState::Rbw);
    assert_eq!(
        classify(&r, st.map.get(5), &st.map.on_node("dn1"), false),
        ReportAction::UnderConstruction
    );
    let o = st.process_replica(&a("dn1"), &a("DS-1"), &r);
    assert!(!o.finalized_added);
    let info = st.map.get(5).cloned().unwrap_or_else(|| panic!("block"));
    assert_eq!(info.replicas[0].state(), ReplicaState::Rbw);
    assert_eq!(info.uc().expected().len(), 1);
    assert!(!st.has_min_replicas(5));
}

#[test]
fn finalized_of_under_construction_block_then_commit_completes() {
    let mut st = BlockState::new(1);
    let exp = vec![ExpectedLocation {
        dn_uuid: a("dn1"),
        storage_id: a("DS-1"),
    }];
    st.add_under_construction(Block::new(5, 1001, 0), 3, exp);
    let r = rep(5, 1001, 10, ReplicaState::Finalized);
    assert_eq!(
        classify(&r, st.map.get(5), &st.map.on_node("dn1"), false),
        ReportAction::UnderConstruction
    );
    assert!(
        st.process_replica(&a("dn1"), &a("DS-1"), &r)
            .finalized_added
    );
    assert_eq!(st.map.get(5).map(|i| i.uc().expected().len()), Some(1));
    assert_eq!(st.commit(Block::new(5, 1001, 10)), Ok(true));
    assert_eq!(st.map.get(5).map(|i| i.state), Some(BlockUcState::Complete));
}

#[test]
fn committed_block_completes_on_received() {
    let mut st = BlockState::new(1);
    st.add_under_construction(Block::new(5, 1001, 0), 3, vec![]);
    assert_eq!(st.commit(Block::new(5, 1001, 10)), Ok(false));
    assert!(!st.try_complete(5));
    // an RBW report of a committed block is recorded but does not count
    st.process_replica(&a("dn1"), &a("DS-1"), &rep(5, 1001, 10, ReplicaState::Rbw));
    assert!(!st.has_min_replicas(5));
    let o = st.process_replica(
        &a("dn1"),
        &a("DS-1"),
        &rep(5, 1001, 10, ReplicaState::Finalized),
    );
    assert!(o.finalized_added && o.completed);
    assert!(st.try_complete(5));
}

#[test]
fn finalized_with_older_gs_of_under_construction_block_is_corrupt() {
    let mut st = BlockState::new(1);
    st.add_under_construction(Block::new(5, 1002, 0), 3, vec![]);
    let r = rep(5, 1001, 10, ReplicaState::Finalized);
    assert!(matches!(
        classify(&r, st.map.get(5), &st.map.on_node("dn1"), false),
        ReportAction::Corrupt(CorruptReason::GenstampMismatch, _)
    ));
}

#[test]
fn late_rbw_of_complete_block_is_ignored_but_rwr_is_corrupt() {
    let st = complete_block(1);
    let rbw = rep(1, 1001, 50, ReplicaState::Rbw);
    assert_eq!(
        classify(&rbw, st.map.get(1), &st.map.on_node("dn2"), false),
        ReportAction::Keep
    );
    let rwr = rep(1, 1001, 50, ReplicaState::Rwr);
    assert!(matches!(
        classify(&rwr, st.map.get(1), &st.map.on_node("dn2"), false),
        ReportAction::Corrupt(CorruptReason::InvalidState, _)
    ));
    let old_rbw = rep(1, 999, 50, ReplicaState::Rbw);
    assert!(matches!(
        classify(&old_rbw, st.map.get(1), &st.map.on_node("dn2"), false),
        ReportAction::Corrupt(CorruptReason::GenstampMismatch, _)
    ));
}

#[test]
fn replica_scheduled_for_deletion_is_left_alone() {
    let st = complete_block(1);
    let r = rep(1, 1000, 1, ReplicaState::Finalized);
    assert_eq!(
        classify(&r, st.map.get(1), &st.map.on_node("dn2"), true),
        ReportAction::Keep
    );
}

#[test]
fn commit_checks_generation_stamp() {
    let mut st = BlockState::new(1);
    st.add_under_construction(Block::new(5, 1001, 0), 3, vec![]);
    let err = st.commit(Block::new(5, 1002, 10));
    assert!(
        matches!(err, Err(BlockManagerError::InvalidState(ref m)) if m.starts_with("Commit block with mismatching GS"))
    );
    assert!(matches!(
        st.commit(Block::new(9, 1, 1)),
        Err(BlockManagerError::UnknownBlock(9))
    ));
}

#[test]
fn pipeline_update_drops_stale_replicas() {
    let mut st = BlockState::new(1);
    st.add_under_construction(Block::new(5, 1001, 0), 3, vec![]);
    st.process_replica(&a("dn1"), &a("DS-1"), &rep(5, 1001, 10, ReplicaState::Rbw));
    st.process_replica(&a("dn2"), &a("DS-2"), &rep(5, 1002, 10, ReplicaState::Rbw));
    st.process_replica(&a("dn3"), &a("DS-3"), &rep(5, 1001, 10, ReplicaState::Rbw));
    let exp = ["dn2", "dn3"]
        .map(|d| ExpectedLocation {
            dn_uuid: a(d),
            storage_id: a(&d.replace("dn", "DS-")),
        })
        .to_vec();
    st.update_pipeline(Block::new(5, 1002, 10), exp);
    let info = st.map.get(5).cloned().unwrap_or_else(|| panic!("block"));
    assert_eq!(info.gs(), 1002);
    // dn3 is in the new pipeline: its old replica leaves the map (it reports the new one).
    assert_eq!(st.map.storage_block_count("DS-3"), 0);
    // dn1 was left out: its replica of the old stamp is corrupt, as its next full report
    // would show it, not gone.
    let on = |dn: &str| {
        info.replicas
            .iter()
            .find(|r| &**st.map.dn_of(r) == dn)
            .map(|r| r.corrupt())
    };
    assert_eq!(on("dn1"), Some(Some(CorruptReason::GenstampMismatch)));
    assert_eq!(on("dn2"), Some(None));
    assert_eq!(info.replicas.len(), 2);
    // Not deleted while the block has no finalized replica of its stamp.
    assert!(!st.invalidate.contains("dn1", Block::new(5, 1001, 10)));
    // Without the new pipeline named (a standby's replay) stale replicas just leave.
    st.update_pipeline(Block::new(5, 1003, 10), Vec::new());
    assert_eq!(st.map.get(5).map(|i| i.replicas.len()), Some(0));
}

/// A pipeline node that finalized its replica before the pipeline was recovered without it
/// holds a replica of the old stamp: recorded corrupt, deleted once the block is COMPLETE
/// with minReplication live replicas.
#[test]
fn a_replica_the_pipeline_left_out_is_deleted_once_the_block_is_complete() {
    let mut st = BlockState::new(1);
    let pipeline = |dns: &[&str]| -> Vec<ExpectedLocation> {
        dns.iter()
            .map(|d| ExpectedLocation {
                dn_uuid: a(d),
                storage_id: a(&d.replace("dn", "DS-")),
            })
            .collect()
    };
    st.add_under_construction(Block::new(5, 1001, 0), 3, pipeline(&["dn1", "dn2", "dn3"]));
    st.process_replica(
        &a("dn3"),
        &a("DS-3"),
        &rep(5, 1001, 100, ReplicaState::Finalized),
    );
    st.update_pipeline(Block::new(5, 1004, 100), pipeline(&["dn1", "dn2"]));
    for dn in ["dn1", "dn2"] {
        st.process_replica(
            &a(dn),
            &a(&dn.replace("dn", "DS-")),
            &rep(5, 1004, 100, ReplicaState::Finalized),
        );
    }
    // Not deleted before the block is COMPLETE.
    assert!(!st.invalidate.contains("dn3", Block::new(5, 1001, 100)));
    assert_eq!(st.map.get(5).map(|i| i.corrupt_replicas()), Some(1));
    // COMPLETE with two live replicas (minReplication 1): the stale one goes at once, as a
    // corrupt replica of an older write reported then would.
    assert_eq!(st.commit(Block::new(5, 1004, 100)), Ok(true));
    assert!(st.invalidate.contains("dn3", Block::new(5, 1001, 100)));
    let info = st.map.get(5).cloned().unwrap_or_else(|| panic!("block"));
    assert_eq!(info.corrupt_replicas(), 0);
    assert_eq!(st.count_replicas(&info).live, 2);
}

/// A replica found corrupt for another reason waits for the block's full replication.
#[test]
fn a_corrupt_replica_of_the_current_stamp_waits_for_full_replication() {
    let mut st = complete_block(2);
    st.mark_corrupt(
        &a("dn2"),
        &a("DS-2"),
        Block::new(1, 1001, 100),
        ReplicaState::Finalized,
        CorruptReason::CorruptionReported,
    );
    assert_eq!(st.invalidate_corrupt_if_replaced(1), 0);
    assert!(!st.invalidate.contains("dn2", Block::new(1, 1001, 100)));
    for i in [3, 4] {
        st.process_replica(
            &a(&format!("dn{i}")),
            &a(&format!("DS-{i}")),
            &rep(1, 1001, 100, ReplicaState::Finalized),
        );
    }
    assert!(st.invalidate.contains("dn2", Block::new(1, 1001, 100)));
}

#[test]
fn removed_block_replicas_go_to_invalidate_without_ack() {
    let mut st = complete_block(2);
    // plus a pipeline node that never reported
    st.add_under_construction(
        Block::new(2, 1001, 0),
        3,
        vec![ExpectedLocation {
            dn_uuid: a("dn9"),
            storage_id: a("DS-9"),
        }],
    );
    assert_eq!(st.remove_block(1), 2);
    assert_eq!(st.remove_block(2), 1);
    assert_eq!(st.remove_block(1), 0);
    assert!(st.map.is_empty());
    assert_eq!(st.invalidate.num_blocks(), 3);
    let polled = st.invalidate.poll("dn1", 10);
    assert_eq!(polled, vec![Block::new(1, 1001, NO_ACK)]);
}

#[test]
fn lowering_replication_deletes_surplus() {
    let mut st = complete_block(3);
    assert_eq!(st.set_replication(1, 2), 1);
    assert_eq!(st.map.get(1).map(|i| i.good_finalized()), Some(2));
    assert_eq!(st.invalidate.num_blocks(), 1);
    assert_eq!(st.counts().under_replicated, 0);
    assert_eq!(st.set_replication(1, 3), 0);
    assert_eq!(st.counts().under_replicated, 1);
}

#[test]
fn missing_blocks_are_counted() {
    let mut st = complete_block(1);
    st.replica_deleted("dn1", "DS-1", 1);
    st.set_replication(1, 1);
    let c = st.counts();
    assert_eq!(
        (c.blocks_total, c.missing_blocks, c.missing_repl_one),
        (1, 1, 1)
    );
}

#[test]
fn reopen_for_append_keeps_replicas_until_rereported() {
    let mut st = complete_block(2);
    st.add_under_construction(Block::new(1, 1001, 100), 3, vec![]);
    let info = st.map.get(1).cloned().unwrap_or_else(|| panic!("block"));
    assert_eq!(info.state, BlockUcState::UnderConstruction);
    assert_eq!(info.replicas.len(), 2);
    assert_eq!(info.uc().expected().len(), 2);
    assert_eq!(info.good_finalized(), 0);
    // same generation stamp (hdfs-native appends without a bump), new length
    st.process_replica(
        &a("dn1"),
        &a("DS-1"),
        &rep(1, 1001, 150, ReplicaState::Finalized),
    );
    assert_eq!(st.commit(Block::new(1, 1001, 150)), Ok(true));
    // dn2 still holds the old length: it no longer counts
    st.process_replica(
        &a("dn2"),
        &a("DS-2"),
        &rep(1, 1001, 100, ReplicaState::Finalized),
    );
    assert_eq!(st.map.get(1).map(|i| i.good_finalized()), Some(1));
}

#[test]
fn commit_marks_short_finalized_replicas() {
    let mut st = BlockState::new(1);
    st.add_under_construction(Block::new(5, 1001, 0), 3, vec![]);
    st.process_replica(
        &a("dn1"),
        &a("DS-1"),
        &rep(5, 1001, 10, ReplicaState::Finalized),
    );
    st.process_replica(
        &a("dn2"),
        &a("DS-2"),
        &rep(5, 1001, 7, ReplicaState::Finalized),
    );
    assert_eq!(st.commit(Block::new(5, 1001, 10)), Ok(true));
    let info = st.map.get(5).cloned().unwrap_or_else(|| panic!("block"));
    assert_eq!(info.good_finalized(), 1);
    assert_eq!(info.corrupt_replicas(), 1);
}

/// Block 7 under construction, expected on dn1..dn3 (heartbeats at 10 s, 30 s, 20 s).
fn block_for_recovery() -> BlockState {
    let mut st = BlockState::new(1);
    let exp = (1..=3)
        .map(|i| ExpectedLocation {
            dn_uuid: a(&format!("dn{i}")),
            storage_id: a(&format!("DS-{i}")),
        })
        .collect();
    st.add_under_construction(Block::new(7, 1001, 0), 3, exp);
    st
}

fn heartbeats(dead: &'static [&'static str]) -> impl Fn(&str) -> Option<std::time::Duration> {
    move |dn: &str| {
        if dead.contains(&dn) {
            return None;
        }
        let s = match dn {
            "dn1" => 10,
            "dn2" => 30,
            "dn3" => 20,
            _ => return None,
        };
        Some(std::time::Duration::from_secs(s))
    }
}

#[test]
fn recovery_primary_is_the_latest_heartbeat_not_yet_tried() {
    let mut st = block_for_recovery();
    let alive = heartbeats(&[]);
    let picks: Vec<Option<Arc<str>>> = (0..4)
        .map(|i| st.initialize_recovery(7, 2000 + i, &alive).ok().flatten())
        .collect();
    // dn2 (30 s), then dn3 (20 s), then dn1; with every node tried, dn2 again.
    assert_eq!(
        picks,
        vec![
            Some(a("dn2")),
            Some(a("dn3")),
            Some(a("dn1")),
            Some(a("dn2"))
        ]
    );
    let info = st.map.get(7).cloned().unwrap_or_else(|| panic!("block"));
    assert_eq!(info.state, BlockUcState::UnderRecovery);
    let rec = info.uc().recovery().cloned().unwrap_or_default();
    assert_eq!(rec.recovery_id, 2003);
    assert_eq!(rec.primary, Some(a("dn2")));
    assert_eq!(rec.tried, vec![a("dn2")]);
}

#[test]
fn recovery_skips_dead_nodes_and_may_find_none() {
    let mut st = block_for_recovery();
    // dn2 is dead: dn3 is the most recent live node.
    assert_eq!(
        st.initialize_recovery(7, 2000, &heartbeats(&["dn2"])),
        Ok(Some(a("dn3")))
    );
    // Only dn3 alive and already tried: it is chosen again.
    assert_eq!(
        st.initialize_recovery(7, 2001, &heartbeats(&["dn1", "dn2"])),
        Ok(Some(a("dn3")))
    );
    // Nobody alive: still UNDER_RECOVERY with the new id, no primary.
    assert_eq!(
        st.initialize_recovery(7, 2002, &heartbeats(&["dn1", "dn2", "dn3"])),
        Ok(None)
    );
    let info = st.map.get(7).cloned().unwrap_or_else(|| panic!("block"));
    assert_eq!(info.state, BlockUcState::UnderRecovery);
    assert_eq!(info.uc().recovery().map(|r| r.recovery_id), Some(2002));
}

#[test]
fn recovered_block_commits_and_leaves_recovery() {
    let mut st = block_for_recovery();
    assert!(st.initialize_recovery(7, 2000, &heartbeats(&[])).is_ok());
    st.update_pipeline(Block::new(7, 2000, 50), Vec::new());
    st.process_replica(
        &a("dn2"),
        &a("DS-2"),
        &rep(7, 2000, 50, ReplicaState::Finalized),
    );
    assert_eq!(st.commit(Block::new(7, 2000, 50)), Ok(true));
    let info = st.map.get(7).cloned().unwrap_or_else(|| panic!("block"));
    assert_eq!(info.state, BlockUcState::Complete);
    assert_eq!(info.uc().recovery(), None);
    // A COMPLETE block cannot be recovered; an unknown one neither.
    assert!(matches!(
        st.initialize_recovery(7, 2001, &heartbeats(&[])),
        Err(BlockManagerError::InvalidState(_))
    ));
    assert_eq!(
        st.initialize_recovery(8, 2001, &heartbeats(&[])),
        Err(BlockManagerError::UnknownBlock(8))
    );
}

/// The blocks map's safe-mode counts (`SafeCounts`) equal a scan of its blocks after every
/// kind of change: loads, writes, commits, reports of every state, pipeline updates,
/// corruption, reopening, replication changes, removals.
#[test]
fn safe_counts_follow_every_change() {
    use rand::{Rng, SeedableRng, rngs::StdRng};
    let states = [
        ReplicaState::Finalized,
        ReplicaState::Rbw,
        ReplicaState::Rwr,
        ReplicaState::Rur,
        ReplicaState::Temporary,
    ];
    for min in [1, 2] {
        let mut rng = StdRng::seed_from_u64(17 + min as u64);
        let mut st = BlockState::new(min);
        let mut most_safe = 0;
        for id in 1..=20u64 {
            let state = if id % 2 == 0 {
                BlockUcState::Complete
            } else {
                BlockUcState::Committed
            };
            st.load_block(Block::new(id, 1000 + id % 3, 100), 3, state);
        }
        for step in 0..20_000 {
            let id = rng.random_range(1..=24u64);
            let n = rng.random_range(1..=5usize);
            let (dn, ds) = (a(&format!("dn{n}")), a(&format!("DS-{n}")));
            // Mostly the block's own values, so that blocks do become safe.
            let cur = st.map.get(id).map(|i| i.block(id));
            let gs = match cur {
                Some(b) if rng.random_bool(0.8) => b.gs,
                _ => 1000 + rng.random_range(0..4u64),
            };
            let len = match cur {
                Some(b) if rng.random_bool(0.9) => b.num_bytes,
                _ => 50,
            };
            match rng.random_range(0..16) {
                0..=5 => {
                    let s = if rng.random_bool(0.7) {
                        ReplicaState::Finalized
                    } else {
                        states[rng.random_range(0..states.len())]
                    };
                    st.process_replica(&dn, &ds, &rep(id, gs, len, s));
                }
                6 => {
                    st.remove_replica(id, &ds);
                }
                7 => {
                    st.replica_deleted(&dn, &ds, id);
                }
                8 => {
                    st.mark_corrupt(
                        &dn,
                        &ds,
                        Block::new(id, gs, len),
                        ReplicaState::Finalized,
                        CorruptReason::CorruptionReported,
                    );
                }
                9 => {
                    let _ = st.commit(Block::new(id, gs, len));
                }
                10 => st.update_pipeline(Block::new(id, gs, len), vec![]),
                11 if rng.random_bool(0.3) => {
                    st.add_under_construction(Block::new(id, gs, 0), 3, vec![])
                }
                12 | 13 => {
                    if rng.random_bool(0.5) {
                        st.set_replication(id, rng.random_range(1..=4u16));
                    } else {
                        st.update_replication(id, rng.random_range(1..=4u16));
                    }
                }
                _ => {
                    if rng.random_bool(0.1) {
                        st.remove_block(id);
                    } else {
                        st.try_complete(id);
                    }
                }
            }
            assert_eq!(
                st.map.safe_counts(),
                st.map.scan_safe_counts(),
                "min {min}, step {step}"
            );
            most_safe = most_safe.max(st.map.safe_counts().safe);
        }
        assert!(
            most_safe >= 5,
            "the walk reached few safe blocks: {most_safe}"
        );
        let c = st.counts();
        let k = st.map.safe_counts();
        assert_eq!((c.complete_blocks, c.safe_blocks), (k.complete, k.safe));
    }
}
