//! Recovery: torn tails, damage in the middle, `-recover`, several directories.

use crate::common;

use std::path::{Path, PathBuf};

use common::{files, formatted_roots, open, payload, txids};
use rhdfs_editlog::fs::SEGMENT_PREALLOCATION;
use rhdfs_editlog::layout::{finalized_name, inprogress_name};
use rhdfs_editlog::record::RECORD_OVERHEAD;
use rhdfs_editlog::{EditLog, EditLogError, RecoveryMode, StorageDirs};

/// Writes records 1..=n into a fresh one-directory log, left in progress (as after a crash).
/// Returns the root and the in-progress file's bytes.
fn crashed_log(base: &Path, n: u64) -> (PathBuf, Vec<u8>) {
    let roots = formatted_roots(base, 1);
    let (log, _) = open(&roots, 0);
    for i in 1..=n {
        log.append(&payload(i)).unwrap();
    }
    log.sync_all().unwrap();
    drop(log);
    let path = roots[0].join("current").join(inprogress_name(1));
    let mut bytes = std::fs::read(&path).unwrap();
    // The segment's reserved space follows the records as zeros; callers get the records.
    let end = record_offset(n + 1);
    assert_eq!(
        bytes.len() as u64,
        SEGMENT_PREALLOCATION,
        "space reserved ahead"
    );
    assert!(
        bytes[end..].iter().all(|b| *b == 0),
        "reserved space is zeros"
    );
    bytes.truncate(end);
    (roots[0].clone(), bytes)
}

/// Byte offset where record `txid` starts in a segment beginning at txid 1.
fn record_offset(txid: u64) -> usize {
    record_offset_in(1, txid)
}

/// Byte offset where record `txid` starts in a segment beginning at `first`.
fn record_offset_in(first: u64, txid: u64) -> usize {
    8 + (first..txid)
        .map(|i| RECORD_OVERHEAD + payload(i).len())
        .sum::<usize>()
}

#[test]
fn torn_tail_at_every_offset_keeps_the_records_before_it() {
    let t = tempfile::tempdir().unwrap();
    let n = 6;
    let (_, full) = crashed_log(&t.path().join("orig"), n);
    let last_start = record_offset(n);
    assert_eq!(full.len(), last_start + RECORD_OVERHEAD + payload(n).len());
    for cut in last_start..full.len() {
        let root = t.path().join(format!("cut{cut}"));
        let current = root.join("current");
        std::fs::create_dir_all(&current).unwrap();
        std::fs::write(current.join(inprogress_name(1)), &full[..cut]).unwrap();
        let dirs = StorageDirs::new(vec![root.clone()]).unwrap();
        let (log, recs) = EditLog::open(dirs, 0, RecoveryMode::Strict)
            .unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert_eq!(txids(&recs), (1..n).collect::<Vec<_>>(), "cut at {cut}");
        for r in &recs {
            assert_eq!(r.payload, payload(r.txid));
        }
        // The torn bytes are gone and the log carries on at txid n.
        assert_eq!(log.append(b"after").unwrap(), n);
        log.sync(n).unwrap();
        drop(log);
        let finalized = current.join(finalized_name(1, n - 1));
        assert_eq!(
            std::fs::metadata(&finalized).unwrap().len() as usize,
            last_start
        );
        let (_, recs) = open(&[root], 0);
        assert_eq!(txids(&recs), (1..=n).collect::<Vec<_>>());
        assert_eq!(recs[n as usize - 1].payload, b"after");
    }
}

#[test]
fn a_crash_inside_the_reserved_space_keeps_the_records_before_it() {
    // A group write that reached the disk only in part, the rest of the record still the
    // segment's reserved zeros: a torn tail, not damage, in strict mode.
    let t = tempfile::tempdir().unwrap();
    let n = 4;
    let (_, full) = crashed_log(&t.path().join("orig"), n);
    let last_start = record_offset(n);
    let header_end = last_start + 16;
    for cut in [
        last_start + 5,
        header_end - 1,
        header_end + 2,
        full.len() - 2,
    ] {
        let root = t.path().join(format!("cut{cut}"));
        let current = root.join("current");
        std::fs::create_dir_all(&current).unwrap();
        let mut bytes = full.clone();
        bytes[cut..].fill(0);
        bytes.extend_from_slice(&[0u8; 8192]);
        std::fs::write(current.join(inprogress_name(1)), &bytes).unwrap();
        let dirs = StorageDirs::new(vec![root.clone()]).unwrap();
        let (log, recs) = EditLog::open(dirs, 0, RecoveryMode::Strict)
            .unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert_eq!(txids(&recs), (1..n).collect::<Vec<_>>(), "cut at {cut}");
        drop(log);
        let finalized = current.join(finalized_name(1, n - 1));
        assert_eq!(
            std::fs::metadata(&finalized).unwrap().len() as usize,
            last_start,
            "cut at {cut}"
        );
    }
}

#[test]
fn zero_filled_tail_is_torn() {
    let t = tempfile::tempdir().unwrap();
    let (root, mut full) = crashed_log(t.path(), 3);
    full.extend_from_slice(&[0u8; 4096]);
    std::fs::write(root.join("current").join(inprogress_name(1)), &full).unwrap();
    let (_, recs) = open(&[root], 0);
    assert_eq!(txids(&recs), vec![1, 2, 3]);
}

#[test]
fn flipped_bit_in_the_middle_names_file_and_offset() {
    let t = tempfile::tempdir().unwrap();
    let (root, full) = crashed_log(t.path(), 5);
    let path = root.join("current").join(inprogress_name(1));
    let start = record_offset(3);
    let end = record_offset(4);
    for pos in [start, start + 5, start + 14, start + 17, end - 1] {
        let mut bad = full.clone();
        bad[pos] ^= 0x10;
        std::fs::write(&path, &bad).unwrap();
        let dirs = StorageDirs::new(vec![root.clone()]).unwrap();
        let err = EditLog::open(dirs, 0, RecoveryMode::Strict).unwrap_err();
        match &err {
            EditLogError::Corrupt {
                path: p, offset, ..
            } => {
                assert_eq!(p, &path, "flip at {pos}");
                assert_eq!(*offset, start as u64, "flip at {pos}");
            }
            other => panic!("flip at {pos}: {other}"),
        }
        let msg = err.to_string();
        assert!(msg.contains(&inprogress_name(1)), "{msg}");
        assert!(msg.contains(&format!("offset {start}")), "{msg}");
        // Nothing was changed by the failed start.
        assert_eq!(std::fs::read(&path).unwrap(), bad);
    }
}

#[test]
fn keep_prefix_recovery_truncates_at_the_damage() {
    let t = tempfile::tempdir().unwrap();
    let (root, mut full) = crashed_log(t.path(), 5);
    let path = root.join("current").join(inprogress_name(1));
    let start = record_offset(3);
    full[start + 20] ^= 0x01;
    std::fs::write(&path, &full).unwrap();
    let dirs = StorageDirs::new(vec![root.clone()]).unwrap();
    let (log, recs) = EditLog::open(dirs, 0, RecoveryMode::KeepPrefix).unwrap();
    assert_eq!(txids(&recs), vec![1, 2]);
    assert_eq!(log.append(b"new 3").unwrap(), 3);
    log.close().unwrap();
    // A normal start afterwards sees the prefix plus the new record.
    let (_, recs) = open(std::slice::from_ref(&root), 0);
    assert_eq!(txids(&recs), vec![1, 2, 3]);
    assert_eq!(recs[2].payload, b"new 3");
    assert_eq!(
        files(&root, "edits_"),
        vec![
            finalized_name(1, 2),
            finalized_name(3, 3),
            inprogress_name(4)
        ]
    );
}

#[test]
fn damage_in_a_finalized_segment_stops_the_start() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let (log, _) = open(&roots, 0);
    for i in 1..=20 {
        log.append(&payload(i)).unwrap();
        if i == 10 {
            log.roll().unwrap();
        }
    }
    log.sync_all().unwrap();
    drop(log);
    let seg = roots[0].join("current").join(finalized_name(1, 10));
    let mut bytes = std::fs::read(&seg).unwrap();
    // The last record of a finalized segment is not a torn tail.
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&seg, &bytes).unwrap();
    let dirs = StorageDirs::new(roots.clone()).unwrap();
    let err = EditLog::open(dirs, 0, RecoveryMode::Strict).unwrap_err();
    match err {
        EditLogError::Corrupt { path, offset, .. } => {
            assert_eq!(path, seg);
            assert_eq!(offset as usize, record_offset(10));
        }
        other => panic!("{other}"),
    }
    // Starting from an image at 10 does not need the damaged segment.
    let (_, recs) = open(&roots, 10);
    assert_eq!(txids(&recs), (11..=20).collect::<Vec<_>>());
}

#[test]
fn keep_prefix_sets_later_segments_aside() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let (log, _) = open(&roots, 0);
    for i in 1..=30 {
        log.append(&payload(i)).unwrap();
        if i % 10 == 0 {
            log.roll().unwrap();
        }
    }
    drop(log);
    let seg = roots[0].join("current").join(finalized_name(11, 20));
    let mut bytes = std::fs::read(&seg).unwrap();
    let off = record_offset_in(11, 15);
    bytes[off + 18] ^= 0x04;
    std::fs::write(&seg, &bytes).unwrap();
    let dirs = StorageDirs::new(roots.clone()).unwrap();
    let (log, recs) = EditLog::open(dirs, 0, RecoveryMode::KeepPrefix).unwrap();
    assert_eq!(txids(&recs), (1..=14).collect::<Vec<_>>());
    assert_eq!(log.last_txid(), 14);
    assert_eq!(
        files(&roots[0], "edits_"),
        vec![
            finalized_name(1, 10),
            finalized_name(11, 14),
            finalized_name(21, 30) + ".corrupt",
            inprogress_name(15),
            inprogress_name(31) + ".corrupt",
        ]
    );
}

#[test]
fn lagging_or_damaged_directory_is_repaired_from_the_good_one() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let (log, _) = open(&roots, 0);
    for i in 1..=12 {
        log.append(&payload(i)).unwrap();
        if i == 6 {
            log.roll().unwrap();
        }
    }
    log.sync_all().unwrap();
    drop(log);
    // Damage the first directory's copy of record 3; the second has it intact.
    let seg = roots[0].join("current").join(finalized_name(1, 6));
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes[record_offset(3) + 17] ^= 0x01;
    std::fs::write(&seg, &bytes).unwrap();
    let (log, recs) = open(&roots, 0);
    assert_eq!(txids(&recs), (1..=12).collect::<Vec<_>>());
    log.close().unwrap();
    let a = std::fs::read(&seg).unwrap();
    let b = std::fs::read(roots[1].join("current").join(finalized_name(1, 6))).unwrap();
    assert_eq!(a, b, "damaged copy repaired");
    assert_eq!(files(&roots[0], "edits_"), files(&roots[1], "edits_"));
}

#[test]
fn damage_everywhere_is_an_error() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let (log, _) = open(&roots, 0);
    for i in 1..=5 {
        log.append(&payload(i)).unwrap();
    }
    log.sync_all().unwrap();
    drop(log);
    for root in &roots {
        let seg = root.join("current").join(inprogress_name(1));
        let mut bytes = std::fs::read(&seg).unwrap();
        bytes[record_offset(2) + 16] ^= 0x01;
        std::fs::write(&seg, &bytes).unwrap();
    }
    let dirs = StorageDirs::new(roots.clone()).unwrap();
    let err = EditLog::open(dirs, 0, RecoveryMode::Strict).unwrap_err();
    assert!(matches!(err, EditLogError::Corrupt { .. }), "{err}");
}
