//! Tests of the blocks map and its storage table.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::*;

#[derive(Debug, Clone)]
enum Op {
    Add(u64, usize),
    Remove(u64, usize),
    RemoveOfNode(u64, usize),
    RemoveBlock(u64),
    InsertBlock(u64),
    ForgetStorage(usize),
}

/// Storage k is on DataNode k / 2.
const STORAGES: usize = 6;

fn op() -> impl Strategy<Value = Op> {
    let b = 1u64..6;
    let s = 0..STORAGES;
    prop_oneof![
        6 => (b.clone(), s.clone()).prop_map(|(b, s)| Op::Add(b, s)),
        2 => (b.clone(), s.clone()).prop_map(|(b, s)| Op::Remove(b, s)),
        1 => (b.clone(), 0..STORAGES / 2).prop_map(|(b, d)| Op::RemoveOfNode(b, d)),
        1 => b.clone().prop_map(Op::RemoveBlock),
        1 => b.prop_map(Op::InsertBlock),
        1 => s.prop_map(Op::ForgetStorage),
    ]
}

proptest! {
    /// A block's replicas behave as a set of storages, at most one per DataNode, and
    /// each storage's block set is exactly the blocks with a replica on it, under any
    /// sequence of adds, replacements, removals and storages forgotten and reused.
    #[test]
    fn replicas_are_a_set_of_storages(ops in proptest::collection::vec(op(), 0..200)) {
        let sid: Vec<Arc<str>> = (0..STORAGES).map(|k| arc(&format!("DS-{k}"))).collect();
        let dn: Vec<Arc<str>> = (0..STORAGES / 2).map(|d| arc(&format!("dn{d}"))).collect();
        let mut m = BlocksMap::new();
        let mut model: BTreeMap<u64, BTreeSet<usize>> = BTreeMap::new();
        for o in &ops {
            match *o {
                Op::Add(b, s) => {
                    let got = m.add_replica(&dn[s / 2], &sid[s], Block::new(b, 1, 1), ReplicaState::Finalized);
                    let want = match model.get_mut(&b) {
                        None => AddResult::NoBlock,
                        Some(set) if set.contains(&s) => AddResult::Replaced,
                        Some(set) => {
                            set.retain(|x| x / 2 != s / 2);
                            set.insert(s);
                            AddResult::Added
                        }
                    };
                    prop_assert_eq!(got, want);
                }
                Op::Remove(b, s) => {
                    let got = m.remove_replica(b, &sid[s]).is_some();
                    let want = model.get_mut(&b).is_some_and(|set| set.remove(&s));
                    prop_assert_eq!(got, want);
                }
                Op::RemoveOfNode(b, d) => {
                    let got = m.remove_replica_of_node(b, &dn[d]).is_some();
                    let want = model.get_mut(&b).is_some_and(|set| {
                        let before = set.len();
                        set.retain(|x| x / 2 != d);
                        set.len() < before
                    });
                    prop_assert_eq!(got, want);
                }
                Op::RemoveBlock(b) => {
                    prop_assert_eq!(m.remove(b).is_some(), model.remove(&b).is_some());
                }
                Op::InsertBlock(b) => {
                    m.insert(b, BlockInfo::new_under_construction(Block::new(b, 1, 1), 3, vec![]));
                    model.insert(b, BTreeSet::new());
                }
                Op::ForgetStorage(s) => {
                    if model.values().all(|set| !set.contains(&s)) {
                        m.forget_storage_if_empty(&sid[s]);
                        prop_assert_eq!(m.storage_idx(&sid[s]), None);
                    }
                }
            }
            for (b, set) in &model {
                let info = m.get(*b);
                prop_assert!(info.is_some());
                let Some(info) = info else { continue };
                let got: BTreeSet<String> =
                    info.replicas.iter().map(|r| m.storage_id_of(r).to_string()).collect();
                let want: BTreeSet<String> = set.iter().map(|s| sid[*s].to_string()).collect();
                prop_assert_eq!(got, want);
                prop_assert_eq!(info.replicas.len(), set.len());
                for r in &info.replicas {
                    prop_assert_eq!(&**m.dn_of(r), &*dn[m.storage_id_of(r)[3..].parse::<usize>().unwrap_or(0) / 2]);
                }
            }
            for (s, id) in sid.iter().enumerate() {
                let want: Vec<u64> = model
                    .iter()
                    .filter(|(_, set)| set.contains(&s))
                    .map(|(b, _)| *b)
                    .collect();
                prop_assert_eq!(m.storage_blocks(id), want.clone());
                prop_assert_eq!(m.storage_block_count(id), want.len());
            }
        }
    }
}

fn arc(s: &str) -> Arc<str> {
    Arc::from(s)
}

#[test]
fn a_full_report_keeps_what_was_added_while_it_ran() {
    let mut m = BlocksMap::new();
    let (dn, s1) = (arc("dn1"), arc("DS-1"));
    for id in 1..=3 {
        m.insert(
            id,
            BlockInfo::new_under_construction(Block::new(id, 1, 1), 3, vec![]),
        );
    }
    m.add_replica(&dn, &s1, Block::new(1, 1, 1), ReplicaState::Finalized);
    m.add_replica(&dn, &s1, Block::new(2, 1, 1), ReplicaState::Finalized);
    let start = m
        .begin_full_report(&s1, &dn)
        .expect("the storage holds blocks");
    // recorded (2 again, 3 new) after the report began: not the report's to remove
    m.add_replica(&dn, &s1, Block::new(2, 1, 1), ReplicaState::Finalized);
    m.add_replica(&dn, &s1, Block::new(3, 1, 1), ReplicaState::Finalized);
    let removable = |m: &BlocksMap, start| -> Vec<u64> {
        m.storage_blocks_from("DS-1", 0, 100)
            .into_iter()
            .filter(|&id| !m.recorded_since("DS-1", id, start))
            .collect()
    };
    assert_eq!(removable(&m, start), vec![1]);
    m.end_full_report("DS-1");
    // the log is gone with the report
    let start = m
        .begin_full_report(&s1, &dn)
        .expect("the storage holds blocks");
    assert_eq!(removable(&m, start), vec![1, 2, 3]);
    m.end_full_report("DS-1");
    assert!(
        m.storage(StorageIdx(0))
            .is_some_and(|s| s.reports.is_none())
    );
    // walked in steps
    assert_eq!(m.storage_blocks_from("DS-1", 2, 1), vec![2]);
    assert_eq!(m.storage_blocks_from("DS-1", 4, 10), Vec::<u64>::new());
}

#[test]
fn a_full_report_of_an_empty_storage_keeps_no_log() {
    let mut m = BlocksMap::new();
    let (dn, s1) = (arc("dn1"), arc("DS-1"));
    m.insert(
        1,
        BlockInfo::new_under_construction(Block::new(1, 1, 1), 3, vec![]),
    );
    assert_eq!(m.begin_full_report(&s1, &dn), None);
    m.add_replica(&dn, &s1, Block::new(1, 1, 1), ReplicaState::Finalized);
    assert!(
        m.storage(StorageIdx(0))
            .is_some_and(|s| s.reports.is_none())
    );
    // a report that began once it held a block keeps track, a later one ends it
    let start = m
        .begin_full_report(&s1, &dn)
        .expect("the storage holds a block");
    assert!(!m.recorded_since("DS-1", 1, start));
    m.end_full_report("DS-1");
    m.end_full_report("DS-1");
}

#[test]
fn three_replicas_take_the_three_inline_slots() {
    let mut m = BlocksMap::new();
    m.insert(
        1,
        BlockInfo::new_under_construction(Block::new(1, 1, 1), 3, vec![]),
    );
    for k in 0..3 {
        let (dn, s) = (arc(&format!("dn{k}")), arc(&format!("DS-{k}")));
        m.add_replica(&dn, &s, Block::new(1, 1, 1), ReplicaState::Finalized);
        assert_eq!(m.get(1).map(|i| i.replicas.slots()), Some(3));
    }
    assert_eq!(std::mem::size_of::<Replica>(), 4);
    assert!(!m.get(1).is_some_and(|i| i.replicas.is_spilled()));
    assert!(m.remove_replica(1, "DS-1").is_some());
    let info = m.get(1).cloned().unwrap_or_else(|| panic!("block 1"));
    assert_eq!((info.replicas.len(), info.replicas.slots()), (2, 3));
    let ids: Vec<&str> = info
        .replicas
        .iter()
        .map(|r| &**m.storage_id_of(r))
        .collect();
    assert_eq!(ids, ["DS-0", "DS-2"]);
}

#[test]
fn replicas_are_indexed_by_storage() {
    let mut m = BlocksMap::new();
    let b = Block::new(1, 1001, 10);
    m.insert(b.id, BlockInfo::new_under_construction(b, 3, vec![]));
    let (dn, s1, s2) = (arc("dn1"), arc("DS-1"), arc("DS-2"));
    assert_eq!(
        m.add_replica(&dn, &s1, b, ReplicaState::Finalized),
        AddResult::Added
    );
    assert_eq!(
        m.add_replica(&dn, &s1, b, ReplicaState::Finalized),
        AddResult::Replaced
    );
    assert_eq!(m.storage_block_count("DS-1"), 1);
    // the same node moving the replica to another storage keeps one replica
    assert_eq!(
        m.add_replica(&dn, &s2, b, ReplicaState::Finalized),
        AddResult::Added
    );
    assert_eq!(m.storage_block_count("DS-1"), 0);
    assert_eq!(m.get(1).map(|i| i.replicas.len()), Some(1));
    assert!(m.remove_replica_of_node(1, "dn1").is_some());
    assert_eq!(m.storage_block_count("DS-2"), 0);
    m.add_replica(&dn, &s2, b, ReplicaState::Finalized);
    assert!(m.remove(1).is_some());
    assert_eq!(m.storage_block_count("DS-2"), 0);
    assert_eq!(
        m.add_replica(&dn, &s2, b, ReplicaState::Finalized),
        AddResult::NoBlock
    );
}
