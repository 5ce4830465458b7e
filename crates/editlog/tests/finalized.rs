//! Reading finalized segments back while the log keeps being written (checkpoints built
//! off the live namespace).

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{formatted_roots, open, payload};
use rhdfs_editlog::layout::finalized_name;
use rhdfs_editlog::record::{RECORD_HEADER_LEN, SEGMENT_MAGIC};
use rhdfs_editlog::{EditLog, EditLogError};

/// Appends `n` records and syncs them; returns the last txid.
fn append(log: &EditLog, n: u64) -> u64 {
    let mut last = 0;
    for _ in 0..n {
        let next = log.last_txid() + 1;
        last = log.append(&payload(next)).unwrap();
    }
    log.sync_all().unwrap();
    last
}

/// Every record of `(after, upto]` as (txid, file, offset), checking each payload.
fn read_all(
    log: &EditLog,
    after: u64,
    upto: u64,
) -> Result<Vec<(u64, PathBuf, u64)>, EditLogError> {
    let mut out = Vec::new();
    let n = log.read_finalized::<EditLogError>(after, upto, |at, rec| {
        assert_eq!(rec.payload, payload(rec.txid));
        out.push((rec.txid, at.path.to_path_buf(), at.offset));
        Ok(())
    })?;
    assert_eq!(n as usize, out.len());
    Ok(out)
}

#[test]
fn reads_exactly_the_range_with_file_and_offset() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let (log, _) = open(&roots, 0);
    append(&log, 10);
    assert_eq!(log.roll().unwrap(), 11);
    append(&log, 15);
    assert_eq!(log.roll().unwrap(), 26);
    append(&log, 5); // in progress: 26..=30

    let all = read_all(&log, 0, 25).unwrap();
    assert_eq!(
        all.iter().map(|r| r.0).collect::<Vec<_>>(),
        (1..=25).collect::<Vec<_>>()
    );
    // Each location points at the record's header in the segment that holds it.
    for (txid, path, offset) in &all {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let want = if *txid <= 10 {
            finalized_name(1, 10)
        } else {
            finalized_name(11, 25)
        };
        assert_eq!(name, want);
        let bytes = std::fs::read(path).unwrap();
        let at = *offset as usize;
        assert!(at >= SEGMENT_MAGIC.len());
        let mut id = [0u8; 8];
        id.copy_from_slice(&bytes[at + 4..at + 12]);
        assert_eq!(u64::from_be_bytes(id), *txid);
        assert!(at + RECORD_HEADER_LEN <= bytes.len());
    }
    // A range starting and ending inside segments.
    let part = read_all(&log, 7, 13).unwrap();
    assert_eq!(
        part.iter().map(|r| r.0).collect::<Vec<_>>(),
        (8..=13).collect::<Vec<_>>()
    );
    // Nothing to read.
    assert!(read_all(&log, 25, 25).unwrap().is_empty());
    // The in-progress segment is never read.
    assert!(matches!(
        read_all(&log, 0, 27),
        Err(EditLogError::NotFinalized { txid: 26, .. })
    ));
}

#[test]
fn concurrent_appends_and_rolls_do_not_disturb_a_read() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let (log, _) = open(&roots, 0);
    append(&log, 300);
    let upto = log.roll().unwrap() - 1;
    assert_eq!(upto, 300);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (log, stop) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut rolls = 0;
            while !stop.load(Ordering::Relaxed) {
                append(&log, 7);
                if log.last_txid() % 3 == 0 {
                    log.roll().unwrap();
                    rolls += 1;
                }
            }
            rolls
        })
    };
    for _ in 0..20 {
        let got = read_all(&log, 0, upto).unwrap();
        assert_eq!(
            got.iter().map(|r| r.0).collect::<Vec<_>>(),
            (1..=upto).collect::<Vec<_>>()
        );
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    // Later finalized segments are read too once rolled.
    let last = log.roll().unwrap() - 1;
    assert_eq!(
        read_all(&log, upto, last).unwrap().len() as u64,
        last - upto
    );
}

#[test]
fn damaged_copy_falls_back_to_another_directory_else_names_file_and_offset() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let (log, _) = open(&roots, 0);
    append(&log, 20);
    log.roll().unwrap();
    let seg = |root: &PathBuf| root.join("current").join(finalized_name(1, 20));
    let flip = |p: PathBuf| {
        let mut b = std::fs::read(&p).unwrap();
        let mid = b.len() / 2;
        b[mid] ^= 0x40;
        std::fs::write(&p, b).unwrap();
    };
    flip(seg(&roots[0]));
    let got = read_all(&log, 0, 20).unwrap();
    assert_eq!(got.len(), 20);
    assert!(got.iter().all(|r| r.1 == seg(&roots[1])));

    flip(seg(&roots[1]));
    let err = read_all(&log, 0, 20).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(&err, EditLogError::Corrupt { path, offset, .. }
            if *path == seg(&roots[0]) && *offset >= SEGMENT_MAGIC.len() as u64),
        "{msg}"
    );
    assert!(msg.contains("offset"), "{msg}");
}

#[test]
fn truncated_finalized_segment_is_corrupt_and_callback_errors_stop_the_read() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let (log, _) = open(&roots, 0);
    append(&log, 12);
    log.roll().unwrap();
    // The callback's own error ends the read at once.
    let mut seen = 0;
    let res = log.read_finalized::<EditLogError>(0, 12, |_, rec| {
        seen += 1;
        if rec.txid == 4 {
            return Err(EditLogError::Config("stop".into()));
        }
        Ok(())
    });
    assert!(matches!(res, Err(EditLogError::Config(_))));
    assert_eq!(seen, 4);
    // A finalized segment cut short (a whole record missing) is damage, not a torn tail.
    let p = roots[0].join("current").join(finalized_name(1, 12));
    let len = std::fs::metadata(&p).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(len - 3).unwrap();
    drop(f);
    let mut handed = 0;
    let err = log
        .read_finalized::<EditLogError>(0, 12, |_, _| {
            handed += 1;
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(err, EditLogError::Corrupt { .. }), "{err}");
    assert_eq!(handed, 0, "no record of a damaged segment is handed out");
}
