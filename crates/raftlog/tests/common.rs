//! Entry builders and store opening shared by the tests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use openraft::{BasicNode, CommittedLeaderId, Entry, EntryPayload, LogId, Membership};
use rhdfs_raftlog::kv::{KvCommand, KvConfig};
use rhdfs_raftlog::{RaftLogStore, StoreOptions};

pub type Store = RaftLogStore<KvConfig>;

pub fn log_id(term: u64, index: u64) -> LogId<u64> {
    LogId::new(CommittedLeaderId::new(term, 1), index)
}

pub fn normal(term: u64, index: u64) -> Entry<KvConfig> {
    Entry {
        log_id: log_id(term, index),
        payload: EntryPayload::Normal(KvCommand {
            key: format!("k{}", index % 7),
            value: format!("value of entry {index} in term {term}"),
        }),
    }
}

pub fn membership(term: u64, index: u64) -> Entry<KvConfig> {
    Entry {
        log_id: log_id(term, index),
        payload: EntryPayload::Membership(Membership::new(
            vec![BTreeSet::from([1, 2, 3])],
            BTreeMap::from([
                (1, BasicNode::new("nn1:8020")),
                (2, BasicNode::new("nn2:8020")),
                (3, BasicNode::new("nn3:8020")),
            ]),
        )),
    }
}

/// Index 0 is a membership entry, the rest normal ones of `term`.
pub fn entries(term: u64, range: std::ops::RangeInclusive<u64>) -> Vec<Entry<KvConfig>> {
    range
        .map(|i| {
            if i == 0 {
                membership(term, i)
            } else {
                normal(term, i)
            }
        })
        .collect()
}

/// Small segments, so a few dozen entries span several files.
pub fn options() -> StoreOptions {
    StoreOptions {
        segment_bytes: 512,
        ..StoreOptions::default()
    }
}

pub async fn open(dir: &Path) -> Store {
    Store::open_async(dir, options())
        .await
        .expect("open raft log")
}

pub fn debug<T: std::fmt::Debug>(v: &[T]) -> Vec<String> {
    v.iter().map(|e| format!("{e:?}")).collect()
}

/// The segment files in `dir`, oldest first.
pub fn segment_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("raftlog_"))
        })
        .collect();
    v.sort();
    v
}

/// How far apart in time a test starts its members. openraft checks a member's election
/// timeout only on its ticks (every 1.5 heartbeats) and draws the timeout once per member, so
/// members started together tick together, and when two followers' timeouts fall in the same
/// tick slot (one draw in three or four with the tests' settings) both campaign on the same
/// tick in every term, each refusing the other, until scheduling jitter parts them (seen: no
/// leader for 20 s under load). Started this far apart, no two members tick within a vote's
/// round trip of each other (ticks of 75 and 150 ms: at least 25 ms apart).
pub const START_APART: Duration = Duration::from_millis(25);
