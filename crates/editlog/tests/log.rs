//! Writer and reader: round trips, rolls, purging, reopening.

use crate::common;

use common::{files, formatted_roots, open, payload, txids};
use rhdfs_editlog::layout::{finalized_name, inprogress_name};
use rhdfs_editlog::{EditLog, EditLogError, RecoveryMode, StorageDirs, read_edits};

#[test]
fn round_trip_many_records() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let (log, recs) = open(&roots, 0);
    assert!(recs.is_empty());
    for i in 1..=2000u64 {
        assert_eq!(log.append(&payload(i)).unwrap(), i);
        if i % 100 == 0 {
            log.sync(i).unwrap();
        }
    }
    log.sync_all().unwrap();
    assert_eq!(log.synced_txid(), 2000);
    drop(log);
    // Reopening without close: the in-progress segment is recovered and finalized.
    let (log, recs) = open(&roots, 0);
    assert_eq!(recs.len(), 2000);
    for r in &recs {
        assert_eq!(r.payload, payload(r.txid));
    }
    assert_eq!(log.last_txid(), 2000);
    assert_eq!(log.segment_first_txid(), 2001);
    assert_eq!(
        files(&roots[0], "edits_"),
        vec![finalized_name(1, 2000), inprogress_name(2001)]
    );
    // Appends continue after the recovered txids.
    assert_eq!(log.append(b"more").unwrap(), 2001);
    log.sync(2001).unwrap();
    log.close().unwrap();
    assert!(matches!(log.append(b"x"), Err(EditLogError::Closed)));
    assert_eq!(
        files(&roots[0], "edits_"),
        vec![finalized_name(1, 2000), finalized_name(2001, 2001)]
    );
    // Reading after a txid skips what the image covers.
    let (_log, recs) = open(&roots, 1500);
    assert_eq!(txids(&recs), (1501..=2001).collect::<Vec<_>>());
    let seen = std::fs::read_to_string(roots[0].join("current/seen_txid")).unwrap();
    assert_eq!(seen.trim(), "2002");
}

#[test]
fn empty_payloads_and_sync_errors() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let (log, _) = open(&roots, 0);
    let a = log.append(b"").unwrap();
    assert!(matches!(
        log.sync(a + 1),
        Err(EditLogError::NotAppended { .. })
    ));
    log.sync(a).unwrap();
    // Syncing an already durable txid does no I/O.
    let n = log.fsync_count();
    log.sync(a).unwrap();
    assert_eq!(log.fsync_count(), n);
    let big = vec![0u8; rhdfs_editlog::record::MAX_PAYLOAD + 1];
    assert!(matches!(
        log.append(&big),
        Err(EditLogError::RecordTooLarge { .. })
    ));
    drop(log);
    let (_, recs) = open(&roots, 0);
    assert_eq!(recs.len(), 1);
    assert!(recs[0].payload.is_empty());
}

#[test]
fn roll_and_purge() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let (log, _) = open(&roots, 0);
    // An empty segment rolls to itself.
    assert_eq!(log.roll().unwrap(), 1);
    let mut next = 1;
    for seg in 0..4 {
        for _ in 0..10 {
            next = log.append(&payload(next)).unwrap() + 1;
        }
        // roll syncs what was appended, without an explicit sync.
        assert_eq!(log.roll().unwrap(), next);
        assert_eq!(log.synced_txid(), next - 1);
        assert_eq!(log.segment_txns(), 0);
        let _ = seg;
    }
    for root in &roots {
        assert_eq!(
            files(root, "edits_"),
            vec![
                finalized_name(1, 10),
                finalized_name(11, 20),
                finalized_name(21, 30),
                finalized_name(31, 40),
                inprogress_name(41),
            ]
        );
    }
    log.append(b"41").unwrap();
    log.sync_all().unwrap();
    // A checkpoint at txid 25 covers 1-10 and 11-20, not 21-30.
    assert_eq!(log.purge_before(26).unwrap(), 4); // two files in each of two dirs
    for root in &roots {
        assert_eq!(
            files(root, "edits_"),
            vec![
                finalized_name(21, 30),
                finalized_name(31, 40),
                inprogress_name(41)
            ]
        );
    }
    // Purging never touches the in-progress segment.
    assert_eq!(log.purge_before(u64::MAX).unwrap(), 4);
    for root in &roots {
        assert_eq!(files(root, "edits_"), vec![inprogress_name(41)]);
    }
    drop(log);
    let (log, recs) = open(&roots, 40);
    assert_eq!(txids(&recs), vec![41]);
    assert_eq!(log.last_txid(), 41);
    // Starting from an image older than the oldest segment left is a gap.
    drop(log);
    let dirs = StorageDirs::new(roots.clone()).unwrap();
    match EditLog::open(dirs, 20, RecoveryMode::Strict) {
        Err(EditLogError::Gap {
            expected, found, ..
        }) => {
            assert_eq!((expected, found), (21, 41));
        }
        other => panic!("expected a gap, got {other:?}"),
    }
}

#[test]
fn missing_segment_in_the_middle_is_a_gap() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let (log, _) = open(&roots, 0);
    for i in 1..=30 {
        log.append(&payload(i)).unwrap();
        if i % 10 == 0 {
            log.roll().unwrap();
        }
    }
    log.close().unwrap();
    std::fs::remove_file(roots[0].join("current").join(finalized_name(11, 20))).unwrap();
    let dirs = StorageDirs::new(roots.clone()).unwrap();
    let err = EditLog::open(dirs, 0, RecoveryMode::Strict).unwrap_err();
    assert!(
        matches!(
            err,
            EditLogError::Gap {
                expected: 11,
                found: 21,
                ..
            }
        ),
        "{err}"
    );
    // -recover keeps 1-10 and sets the rest aside.
    let dirs = StorageDirs::new(roots.clone()).unwrap();
    let (log, recs) = EditLog::open(dirs, 0, RecoveryMode::KeepPrefix).unwrap();
    assert_eq!(txids(&recs), (1..=10).collect::<Vec<_>>());
    assert_eq!(log.last_txid(), 10);
    assert_eq!(
        files(&roots[0], "edits_"),
        vec![
            finalized_name(1, 10),
            finalized_name(21, 30) + ".corrupt",
            inprogress_name(11)
        ]
    );
}

#[test]
fn lost_tail_is_detected_by_seen_txid() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let (log, _) = open(&roots, 0);
    for i in 1..=10 {
        log.append(&payload(i)).unwrap();
    }
    log.roll().unwrap();
    log.append(b"11").unwrap();
    log.sync_all().unwrap();
    drop(log);
    // Losing the newest segments entirely (seen_txid says 11 was started).
    for name in files(&roots[0], "edits_") {
        std::fs::remove_file(roots[0].join("current").join(name)).unwrap();
    }
    let dirs = StorageDirs::new(roots.clone()).unwrap();
    let err = EditLog::open(dirs, 5, RecoveryMode::Strict).unwrap_err();
    assert!(
        matches!(err, EditLogError::MissingEdits { seen: 11, .. }),
        "{err}"
    );
}

#[test]
fn read_edits_is_read_only() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let (log, _) = open(&roots, 0);
    for i in 1..=5 {
        log.append(&payload(i)).unwrap();
    }
    log.sync_all().unwrap();
    let before = files(&roots[0], "edits_");
    let recs = read_edits(&rhdfs_editlog::fs::LocalFs, &roots[0].join("current"), 2).unwrap();
    assert_eq!(txids(&recs), vec![3, 4, 5]);
    assert_eq!(files(&roots[0], "edits_"), before);
}

#[test]
fn a_log_starts_over_after_an_installed_image() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let (log, _) = open(&roots, 0);
    for i in 1..=10u64 {
        log.append(&payload(i)).unwrap();
    }
    log.roll().unwrap();
    log.append(&payload(11)).unwrap();
    // Not behind an image that does not hold its edits.
    assert!(matches!(
        log.restart_after(5),
        Err(EditLogError::AheadOfImage { txid: 5, last: 11 })
    ));
    // After an image at txid 100: every segment goes, numbering goes on from 101.
    log.restart_after(100).unwrap();
    for root in &roots {
        assert_eq!(files(root, "edits_"), vec![inprogress_name(101)]);
        let seen = std::fs::read_to_string(root.join("current/seen_txid")).unwrap();
        assert_eq!(seen.trim(), "101");
    }
    assert_eq!(log.last_txid(), 100);
    assert_eq!(log.synced_txid(), 100);
    assert_eq!(log.append(&payload(101)).unwrap(), 101);
    log.sync(101).unwrap();
    drop(log);
    // A restart after the image reads the edits after it.
    let (log, recs) = open(&roots, 100);
    assert_eq!(txids(&recs), vec![101]);
    assert_eq!(log.last_txid(), 101);
}
