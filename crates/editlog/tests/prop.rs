//! Property tests: random operation sequences with crashes, and cuts anywhere in a segment.

use crate::common;

use common::formatted_roots;
use proptest::prelude::*;
use rhdfs_editlog::layout::inprogress_name;
use rhdfs_editlog::record::{RECORD_OVERHEAD, SEGMENT_MAGIC};
use rhdfs_editlog::{EditLog, RecoveryMode, StorageDirs};

#[derive(Debug, Clone)]
enum Op {
    Append(Vec<u8>),
    Sync,
    Roll,
    /// Drop the log without closing it (a crash: buffered, unsynced records are lost).
    Crash,
    /// Close cleanly and reopen.
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => proptest::collection::vec(any::<u8>(), 0..200).prop_map(Op::Append),
        2 => Just(Op::Sync),
        1 => Just(Op::Roll),
        1 => Just(Op::Crash),
        1 => Just(Op::Restart),
    ]
}

fn open_log(roots: &[std::path::PathBuf]) -> (EditLog, Vec<Vec<u8>>) {
    let dirs = StorageDirs::new(roots.to_vec()).unwrap();
    let (log, recs) = EditLog::open(dirs, 0, RecoveryMode::Strict).unwrap();
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r.txid, i as u64 + 1);
    }
    (log, recs.into_iter().map(|r| r.payload).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// What comes back after any mix of appends, syncs, rolls, crashes and restarts is
    /// exactly what was synced.
    #[test]
    fn recovered_log_is_exactly_the_synced_prefix(ops in proptest::collection::vec(op(), 1..60)) {
        let t = tempfile::tempdir().unwrap();
        let roots = formatted_roots(t.path(), 2);
        let (mut log, recs) = open_log(&roots);
        prop_assert!(recs.is_empty());
        let mut durable: Vec<Vec<u8>> = Vec::new();
        let mut pending: Vec<Vec<u8>> = Vec::new();
        for op in ops {
            match op {
                Op::Append(p) => {
                    let txid = log.append(&p).unwrap();
                    prop_assert_eq!(txid, (durable.len() + pending.len()) as u64 + 1);
                    pending.push(p);
                }
                Op::Sync => {
                    log.sync_all().unwrap();
                    durable.append(&mut pending);
                }
                Op::Roll => {
                    let next = log.roll().unwrap();
                    durable.append(&mut pending);
                    prop_assert_eq!(next, durable.len() as u64 + 1);
                }
                Op::Crash => {
                    drop(log);
                    pending.clear();
                    let (l, recs) = open_log(&roots);
                    prop_assert_eq!(&recs, &durable);
                    log = l;
                }
                Op::Restart => {
                    log.close().unwrap();
                    durable.append(&mut pending);
                    drop(log);
                    let (l, recs) = open_log(&roots);
                    prop_assert_eq!(&recs, &durable);
                    log = l;
                }
            }
        }
        log.sync_all().unwrap();
        durable.append(&mut pending);
        drop(log);
        let (_, recs) = open_log(&roots);
        prop_assert_eq!(recs, durable);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Cutting the in-progress segment anywhere keeps exactly the records wholly before the cut.
    #[test]
    fn cut_anywhere_keeps_whole_records(
        payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 1..20),
        cut_frac in 0.0f64..1.0,
    ) {
        let t = tempfile::tempdir().unwrap();
        let roots = formatted_roots(t.path(), 1);
        let (log, _) = open_log(&roots);
        for p in &payloads {
            log.append(p).unwrap();
        }
        log.sync_all().unwrap();
        drop(log);
        let path = roots[0].join("current").join(inprogress_name(1));
        let full = std::fs::read(&path).unwrap();
        let cut = SEGMENT_MAGIC.len() + ((full.len() - SEGMENT_MAGIC.len()) as f64 * cut_frac) as usize;
        std::fs::write(&path, &full[..cut]).unwrap();
        let mut end = SEGMENT_MAGIC.len();
        let mut whole = 0;
        for p in &payloads {
            end += RECORD_OVERHEAD + p.len();
            if end <= cut {
                whole += 1;
            }
        }
        let (log, recs) = open_log(&roots);
        prop_assert_eq!(&recs[..], &payloads[..whole]);
        prop_assert_eq!(log.last_txid(), whole as u64);
    }
}
