//! A block's replicas against a model that gives each replica its own generation stamp
//! and length: every replica reads back the values it was last given, whatever the
//! block's values did in between; the order is the order of adding; the spill record
//! exists only when needed.

use proptest::prelude::*;

use crate::block::{
    Block, BlockInfo, CorruptReason, INLINE, Replica, ReplicaState, StorageIdx, VACANT,
};

#[derive(Clone, Debug)]
enum Op {
    /// Adds a replica on storage `.0` (or gives it new values if present).
    Report(u32, u64, u64),
    Remove(u32),
    /// The block's generation stamp and length change.
    SetBlock(u64, u64),
}

fn op() -> impl Strategy<Value = Op> {
    // Few distinct values, so replicas often match the block and often do not.
    prop_oneof![
        4 => (0u32..6, 1u64..4, 0u64..3).prop_map(|(s, g, l)| Op::Report(s, g, l)),
        2 => (0u32..6).prop_map(Op::Remove),
        2 => (1u64..4, 0u64..3).prop_map(|(g, l)| Op::SetBlock(g, l)),
    ]
}

proptest! {
    #[test]
    fn replicas_keep_their_reported_values(ops in proptest::collection::vec(op(), 0..120)) {
        let mut info = BlockInfo::new_under_construction(Block::new(9, 1, 0), 3, vec![]);
        // (storage, gs, len) in order of adding
        let mut model: Vec<(u32, u64, u64)> = Vec::new();
        for o in &ops {
            match *o {
                Op::Report(s, gs, len) => {
                    let st = StorageIdx(s);
                    if info.replica_on(st).is_none() {
                        info.replicas.push_expecting(Replica::new(st, ReplicaState::Rbw), 3);
                    }
                    info.set_replica_values(st, gs, len);
                    match model.iter_mut().find(|m| m.0 == s) {
                        Some(m) => (m.1, m.2) = (gs, len),
                        None => model.push((s, gs, len)),
                    }
                }
                Op::Remove(s) => {
                    let pos = info.replicas.position(StorageIdx(s));
                    prop_assert_eq!(pos, model.iter().position(|m| m.0 == s));
                    if let Some(pos) = pos {
                        let r = info.replicas.remove(pos);
                        prop_assert_eq!(r.storage(), StorageIdx(s));
                        model.remove(pos);
                    }
                }
                Op::SetBlock(gs, len) => info.set_block(Block::new(9, gs, len)),
            }
            let got: Vec<(u32, u64, u64)> = info
                .replicas
                .iter()
                .map(|r| {
                    let b = info.replica_block(9, r);
                    prop_assert_eq!(b.id, 9);
                    prop_assert_eq!(info.replica_gs(r), b.gs);
                    Ok((r.storage().0, b.gs, b.num_bytes))
                })
                .collect::<Result<_, TestCaseError>>()?;
            prop_assert_eq!(&got, &model);
            let own_needed = model
                .iter()
                .any(|m| (m.1, m.2) != (info.gs(), info.num_bytes()));
            prop_assert_eq!(info.replicas.is_spilled(), own_needed || model.len() > INLINE);
        }
    }
}

#[test]
fn three_replicas_fit_in_the_record() {
    assert_eq!(std::mem::size_of::<Replica>(), 4);
    assert_eq!(std::mem::size_of::<super::Replicas>(), 16);
    // Its id is the blocks map's key, its construction parts in the spill record.
    assert_eq!(std::mem::size_of::<BlockInfo>(), 40);
    assert_eq!(std::mem::size_of::<Option<BlockInfo>>(), 40);
}

fn state() -> impl Strategy<Value = ReplicaState> {
    (0u64..5).prop_map(|v| ReplicaState::from_value(v).expect("0..5 are states"))
}

fn reason() -> impl Strategy<Value = Option<CorruptReason>> {
    prop_oneof![
        Just(None),
        Just(Some(CorruptReason::GenstampMismatch)),
        Just(Some(CorruptReason::SizeMismatch)),
        Just(Some(CorruptReason::InvalidState)),
        Just(Some(CorruptReason::CorruptionReported)),
    ]
}

proptest! {
    /// A replica's storage index (every one below `VACANT`), state and corrupt reason read
    /// back as set, each change leaving the other two alone, against a plain record.
    #[test]
    fn a_replica_packs_its_three_parts(
        storage in prop_oneof![0u32..4, (VACANT.0 - 4)..VACANT.0, 0..VACANT.0],
        first in state(),
        changes in proptest::collection::vec((proptest::option::of(state()), reason()), 0..8),
    ) {
        let mut r = Replica::new(StorageIdx(storage), first);
        let (mut want_state, mut want_corrupt) = (first, None);
        prop_assert_eq!((r.storage(), r.state(), r.corrupt()), (StorageIdx(storage), first, None));
        for (s, c) in changes {
            if let Some(s) = s {
                r.set_state(s);
                want_state = s;
            } else {
                r.set_corrupt(c);
                want_corrupt = c;
            }
            prop_assert_eq!(r.storage(), StorageIdx(storage));
            prop_assert_eq!(r.state(), want_state);
            prop_assert_eq!(r.corrupt(), want_corrupt);
            prop_assert_eq!(
                r.is_good_finalized(),
                want_state == ReplicaState::Finalized && want_corrupt.is_none()
            );
        }
    }
}

/// Three replicas on the highest storage indexes stay inline; the slot marker is not one
/// of them.
#[test]
fn the_highest_storage_indexes_are_held_inline() {
    let mut info = BlockInfo::new_under_construction(Block::new(1, 5, 10), 3, vec![]);
    for s in (VACANT.0 - 3)..VACANT.0 {
        info.replicas
            .push(Replica::new(StorageIdx(s), ReplicaState::Finalized));
    }
    assert!(!info.replicas.is_spilled());
    let ids: Vec<u32> = info.replicas.iter().map(|r| r.storage().0).collect();
    assert_eq!(ids, [VACANT.0 - 3, VACANT.0 - 2, VACANT.0 - 1]);
    assert_eq!(info.replicas.position(StorageIdx(VACANT.0 - 1)), Some(2));
}

#[test]
fn construction_parts_ride_in_the_spill_record() {
    use std::sync::Arc;
    let loc = |n: &str| crate::block::ExpectedLocation {
        dn_uuid: Arc::from(n),
        storage_id: Arc::from(n),
    };
    let mut info = BlockInfo::new_under_construction(Block::new(1, 5, 10), 3, vec![loc("a")]);
    assert!(info.replicas.is_spilled(), "a pipeline needs the record");
    for s in 0..2 {
        info.replicas
            .push(Replica::new(StorageIdx(s), ReplicaState::Rbw));
    }
    info.set_recovery(Some(crate::block::BlockRecovery {
        recovery_id: 7,
        ..Default::default()
    }));
    info.clear_expected();
    assert!(info.replicas.is_spilled(), "the recovery still needs it");
    assert_eq!(info.uc().expected(), &[]);
    assert_eq!(info.take_recovery().map(|r| r.recovery_id), Some(7));
    assert!(
        !info.replicas.is_spilled(),
        "back inline once both are gone"
    );
    assert_eq!(info.replicas.len(), 2);
    assert!(info.uc().is_empty());
    // nothing to set: no record made
    info.set_recovery(None);
    info.set_expected(Vec::new());
    assert!(!info.replicas.is_spilled());
    info.push_expected(loc("b"));
    assert_eq!(info.uc().expected(), &[loc("b")]);
    assert_eq!(info.replicas.len(), 2);
}

#[test]
fn a_fourth_replica_spills_and_going_back_to_three_returns_inline() {
    let mut info = BlockInfo::new_under_construction(Block::new(1, 5, 10), 4, vec![]);
    for s in 0..4 {
        info.replicas
            .push_expecting(Replica::new(StorageIdx(s), ReplicaState::Finalized), 4);
    }
    assert!(info.replicas.is_spilled());
    assert_eq!(info.replicas.slots(), 4);
    info.replicas.remove(0);
    assert!(!info.replicas.is_spilled());
    let ids: Vec<u32> = info.replicas.iter().map(|r| r.storage().0).collect();
    assert_eq!(ids, [1, 2, 3]);
}

#[test]
fn commit_length_leaves_earlier_reports_their_own() {
    // a replica finalized at 10 before the block is committed at 10 (block length 0 until then)
    let mut info = BlockInfo::new_under_construction(Block::new(1, 5, 0), 3, vec![]);
    info.replicas
        .push(Replica::new(StorageIdx(0), ReplicaState::Finalized));
    info.set_replica_values(StorageIdx(0), 5, 10);
    info.replicas
        .push(Replica::new(StorageIdx(1), ReplicaState::Rbw));
    assert!(info.replicas.is_spilled());
    info.set_block(Block::new(1, 5, 10));
    let r: Vec<Block> = info
        .replicas
        .iter()
        .map(|r| info.replica_block(1, r))
        .collect();
    assert_eq!(r, [Block::new(1, 5, 10), Block::new(1, 5, 0)]);
    info.set_replica_values(StorageIdx(1), 5, 10);
    assert!(!info.replicas.is_spilled());
}
