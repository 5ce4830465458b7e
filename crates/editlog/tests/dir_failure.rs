//! A failing storage directory is taken out of service; the log goes on while one works.

use crate::common;

use std::sync::Arc;

use common::{files, formatted_roots, open, payload, txids};
use rhdfs_editlog::fs::FaultInjectingFs;
use rhdfs_editlog::layout::inprogress_name;
use rhdfs_editlog::{EditLog, EditLogError, ImageStore, RecoveryMode, StorageDirs, read_edits};

#[test]
fn failed_directory_is_dropped_and_the_log_keeps_going() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let fs = FaultInjectingFs::new();
    let dirs = StorageDirs::with_fs(roots.clone(), Arc::new(fs.clone())).unwrap();
    let (log, _) = EditLog::open(dirs.clone(), 0, RecoveryMode::Strict).unwrap();
    for i in 1..=10 {
        log.append(&payload(i)).unwrap();
    }
    log.sync_all().unwrap();

    fs.fail_dir(&roots[1]);
    for i in 11..=20 {
        let txid = log.append(&payload(i)).unwrap();
        log.sync(txid).unwrap();
    }
    assert_eq!(dirs.active(), vec![roots[0].join("current")]);
    let failed = dirs.failed();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].0, roots[1].join("current"));
    assert!(failed[0].1.contains("injected fault"), "{}", failed[0].1);

    // Rolls and purges skip the failed directory.
    assert_eq!(log.roll().unwrap(), 21);
    assert_eq!(
        files(&roots[1], "edits_"),
        vec![inprogress_name(1)],
        "nothing new in the failed directory"
    );

    // Losing the last directory is an error for every caller, and stays one.
    fs.fail_dir(&roots[0]);
    let txid = log.append(b"doomed").unwrap();
    let err = log.sync(txid).unwrap_err();
    assert!(
        matches!(err, EditLogError::NoDirectoriesLeft { .. }),
        "{err}"
    );
    assert!(matches!(
        log.append(b"x"),
        Err(EditLogError::NoDirectoriesLeft { .. })
    ));
    assert!(log.sync(txid).is_err());
    assert_eq!(log.synced_txid(), 20);
    drop(log);

    // After a restart with both directories healthy, the lagging one is repaired.
    fs.heal_all();
    let (log, recs) = open(&roots, 0);
    assert_eq!(txids(&recs), (1..=20).collect::<Vec<_>>());
    log.close().unwrap();
    assert_eq!(files(&roots[0], "edits_"), files(&roots[1], "edits_"));
    let recs = read_edits(&rhdfs_editlog::fs::LocalFs, &roots[1].join("current"), 0).unwrap();
    assert_eq!(txids(&recs), (1..=20).collect::<Vec<_>>());
}

#[test]
fn directory_failing_at_start_is_left_out() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 3);
    let fs = FaultInjectingFs::new();
    fs.fail_dir(&roots[2]);
    let dirs = StorageDirs::with_fs(roots.clone(), Arc::new(fs.clone())).unwrap();
    let (log, _) = EditLog::open(dirs.clone(), 0, RecoveryMode::Strict).unwrap();
    assert_eq!(dirs.active().len(), 2);
    let txid = log.append(b"a").unwrap();
    log.sync(txid).unwrap();
    // An image save also skips it, and a failure there takes a directory out for the log too.
    let images = ImageStore::new(dirs.clone(), 2);
    fs.fail_dir(&roots[1]);
    images.save_image(1, b"image").unwrap();
    assert_eq!(dirs.active(), vec![roots[0].join("current")]);
    let txid = log.append(b"b").unwrap();
    log.sync(txid).unwrap();
    assert_eq!(
        images.load_latest_image().unwrap(),
        Some((1, b"image".to_vec()))
    );
}

#[test]
fn unformatted_or_foreign_directories() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let extra = t.path().join("new-empty");
    let dirs = StorageDirs::new(vec![roots[0].clone(), extra.clone()]).unwrap();
    // The formatted one answers; the unformatted one is taken out of service.
    assert_eq!(dirs.read_version().unwrap().namespace_id, 1);
    assert_eq!(dirs.failed().len(), 1);
    assert_eq!(dirs.failed()[0].0, extra.join("current"));
}
