//! Issue 5 item 3: reportDiff, row by row. The pure classification (`report::classify`) is
//! checked for every stored block state × reported replica state × generation stamp/length
//! relation; the block-manager tests below check the lists are applied (toAdd, toRemove,
//! toInvalidate delayed after a start, toCorrupt, toUC).

use crate::common;

use std::time::Duration;

use common::*;
use rhdfs_blockmanager::block::{Replica, StorageIdx};
use rhdfs_blockmanager::report::{ReportAction, classify};
use rhdfs_blockmanager::{
    Block, BlockInfo, BlockManagerConfig, BlockUcState, CorruptReason, ReplicaState,
    ReportedReplica,
};

const GS: u64 = 1005;
/// dn1's storage; dn2 has none with a replica.
const S1: StorageIdx = StorageIdx(0);

fn dn1(s: StorageIdx) -> bool {
    s == S1
}

fn dn2(_: StorageIdx) -> bool {
    false
}
const LEN: u64 = 4096;

fn stored(state: BlockUcState, replica_on_dn1: Option<ReplicaState>) -> BlockInfo {
    let mut b = BlockInfo::new_under_construction(Block::new(1, GS, LEN), 3, Vec::new());
    b.state = state;
    if let Some(rs) = replica_on_dn1 {
        b.replicas.push(Replica::new(S1, rs));
    }
    b
}

fn rep(gs: u64, len: u64, state: ReplicaState) -> ReportedReplica {
    ReportedReplica {
        block: Block::new(1, gs, len),
        state,
    }
}

fn corrupt_reason(a: &ReportAction) -> Option<CorruptReason> {
    match a {
        ReportAction::Corrupt(r, _) => Some(*r),
        _ => None,
    }
}

use BlockUcState::{Committed, Complete, UnderConstruction, UnderRecovery};
use ReplicaState::{Finalized, Rbw, Rur, Rwr, Temporary};

#[test]
fn unknown_block_goes_to_invalidate() {
    for s in [Finalized, Rbw, Rwr, Rur, Temporary] {
        assert_eq!(
            classify(&rep(GS, LEN, s), None, &dn1, false),
            ReportAction::Invalidate
        );
    }
}

#[test]
fn replica_already_scheduled_for_deletion_is_left_alone() {
    let b = stored(Complete, Some(Finalized));
    assert_eq!(
        classify(&rep(GS - 1, 1, Finalized), Some(&b), &dn1, true),
        ReportAction::Keep
    );
}

#[test]
fn finalized_replica_rows() {
    // (stored state, reported gs, reported len, expected)
    let rows: &[(BlockUcState, u64, u64, &str)] = &[
        (Complete, GS, LEN, "add"),
        (Complete, GS - 1, LEN, "corrupt-gs"),
        (Complete, GS + 1, LEN, "corrupt-gs"),
        (Complete, GS, LEN + 1, "corrupt-len"),
        (Committed, GS, LEN, "add"),
        (Committed, GS - 1, LEN, "corrupt-gs"),
        (Committed, GS, LEN - 1, "corrupt-len"),
        (UnderConstruction, GS, LEN, "uc"),
        (UnderConstruction, GS + 1, 7, "uc"),
        (UnderConstruction, GS - 1, LEN, "corrupt-gs"),
        (UnderRecovery, GS, LEN, "uc"),
        (UnderRecovery, GS - 1, LEN, "corrupt-gs"),
    ];
    for &(state, gs, len, want) in rows {
        let b = stored(state, None);
        let got = classify(&rep(gs, len, Finalized), Some(&b), &dn1, false);
        let ok = match want {
            "add" => got == ReportAction::Add,
            "uc" => got == ReportAction::UnderConstruction,
            "corrupt-gs" => corrupt_reason(&got) == Some(CorruptReason::GenstampMismatch),
            "corrupt-len" => corrupt_reason(&got) == Some(CorruptReason::SizeMismatch),
            _ => unreachable!(),
        };
        assert!(
            ok,
            "FINALIZED gs {gs} len {len} of a {state} block: {got:?}, want {want}"
        );
    }
    // Known good: a finalized replica already recorded on that node is kept as it is.
    let b = stored(Complete, Some(Finalized));
    assert_eq!(
        classify(&rep(GS, LEN, Finalized), Some(&b), &dn1, false),
        ReportAction::Keep
    );
    assert_eq!(
        classify(&rep(GS, LEN, Finalized), Some(&b), &dn2, false),
        ReportAction::Add
    );
}

#[test]
fn rbw_and_rwr_rows() {
    for state in [UnderConstruction, UnderRecovery, Committed] {
        let b = stored(state, None);
        for s in [Rbw, Rwr] {
            assert_eq!(
                classify(&rep(GS, 0, s), Some(&b), &dn1, false),
                ReportAction::UnderConstruction,
                "{s} of a {state} block"
            );
        }
    }
    let b = stored(Complete, None);
    // A late RBW of a just-completed block (same gs) is ignored; a FINALIZED report follows.
    assert_eq!(
        classify(&rep(GS, 0, Rbw), Some(&b), &dn1, false),
        ReportAction::Keep
    );
    // Different gs: corrupt. RWR of a COMPLETE block: invalid state.
    assert_eq!(
        corrupt_reason(&classify(&rep(GS - 1, 0, Rbw), Some(&b), &dn1, false)),
        Some(CorruptReason::GenstampMismatch)
    );
    assert_eq!(
        corrupt_reason(&classify(&rep(GS, LEN, Rwr), Some(&b), &dn1, false)),
        Some(CorruptReason::InvalidState)
    );
}

#[test]
fn rur_and_temporary_are_never_reported() {
    for state in [UnderConstruction, UnderRecovery, Committed, Complete] {
        let b = stored(state, None);
        for s in [Rur, Temporary] {
            assert_eq!(
                corrupt_reason(&classify(&rep(GS, LEN, s), Some(&b), &dn1, false)),
                Some(CorruptReason::InvalidState),
                "{s} of a {state} block"
            );
        }
    }
}

#[test]
fn lists_are_applied_by_a_full_report() {
    let cfg = BlockManagerConfig {
        startup_delay_deletion: Duration::from_secs(5),
        invalidate_work_pct: 1.0,
        ..config()
    };
    let (bm, clock) = manager(cfg);
    add_nodes(&bm, 3, GB);
    // Not the storage's first report (which holds unknown replicas: `orphans`).
    bm.full_report(&uuid(1), &storage(1), 1, &[])
        .expect("first report");
    // 1: known good on node 1; 2: recorded on node 1 but not reported (toRemove);
    // 3: COMPLETE, reported with an older gs (toCorrupt); 4: under construction, RBW (toUC).
    complete_block(&bm, 1, &[1, 2]);
    complete_block(&bm, 2, &[1, 2]);
    complete_block(&bm, 3, &[2, 3]);
    let t = bm
        .choose_targets("/f", 3, None, &[], &[], 64)
        .expect("targets");
    bm.add_block_under_construction(Block::new(4, 1001, 0), 3, &t);
    let reps = vec![
        ReportedReplica {
            block: Block::new(1, 1001, 64),
            state: Finalized,
        },
        ReportedReplica {
            block: Block::new(3, 1000, 64),
            state: Finalized,
        },
        ReportedReplica {
            block: Block::new(4, 1001, 10),
            state: Rbw,
        },
        ReportedReplica {
            block: Block::new(99, 1001, 64),
            state: Finalized,
        },
    ];
    let sum = bm
        .full_report(&uuid(1), &storage(1), 1, &reps)
        .expect("report");
    assert_eq!(
        sum.removed, 1,
        "block 2's replica on node 1 was not reported"
    );
    assert_eq!(sum.corrupt, 1);
    // Block 99 is unknown; block 3's corrupt replica is deleted too (two good ones remain).
    assert_eq!(sum.invalidated, 2);
    assert_eq!(bm.locations(1).len(), 2);
    assert_eq!(bm.locations(2).len(), 1);
    let bl3 = bm.block_locations(3).expect("block 3");
    assert!(bl3.locations.iter().all(|l| l.info.id.uuid != uuid(1)));
    // Both wait for the startup delay before they are sent.
    assert_eq!(bm.fs_stats().pending_deletion, 2);
    assert_eq!(bm.compute_invalidate_work(), 0);
    clock.advance(Duration::from_secs(5));
    heartbeat_all(&bm, 3);
    assert!(bm.compute_invalidate_work() >= 1);
    let out = bm.heartbeat(&uuid(1), vec![report(1, GB)], 0, 0, false);
    let ids: Vec<u64> = out.invalidate.iter().map(|b| b.id).collect();
    assert!(ids.contains(&99) && ids.contains(&3), "{ids:?}");
}
