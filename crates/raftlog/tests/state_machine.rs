//! The state machine adapter over the test key-value application.

use std::sync::Arc;

use openraft::storage::RaftStateMachine;
use openraft::{RaftSnapshotBuilder, StorageError};
use rhdfs_editlog::fs::LocalFs;
use rhdfs_raftlog::AppStateMachine;
use rhdfs_raftlog::kv::{KvApp, KvConfig, KvResponse};
use tempfile::TempDir;

use crate::common::{entries, log_id, normal};

type Sm = AppStateMachine<KvConfig, KvApp>;

#[tokio::test]
async fn entries_reach_the_application_in_order_with_its_answers()
-> Result<(), Box<StorageError<u64>>> {
    let mut sm = Sm::new(KvApp::default());
    let out = sm.apply(entries(1, 0..=8)).await?;
    assert_eq!(out.len(), 9);
    assert_eq!(out[0], KvResponse(None), "membership entry");
    assert_eq!(out[1], KvResponse(None), "k1 first set");
    // Entry 8 sets k1 again (index % 7): its answer is entry 1's value.
    assert_eq!(
        out[8],
        KvResponse(Some("value of entry 1 in term 1".into()))
    );
    let (applied, membership) = sm.applied_state().await?;
    assert_eq!(applied, Some(log_id(1, 8)));
    assert_eq!(*membership.log_id(), Some(log_id(1, 0)));
    sm.with_app(|app| assert_eq!(app.applied, (0..=8).collect::<Vec<_>>()));
    Ok(())
}

#[tokio::test]
async fn a_snapshot_on_disk_is_where_a_restart_resumes() -> Result<(), Box<StorageError<u64>>> {
    let tmp = TempDir::new().expect("tempdir");
    let dir = tmp.path().join("sm");
    let fs = Arc::new(LocalFs);
    let mut sm = Sm::open(KvApp::default(), &dir, fs.clone()).expect("open");
    sm.apply(entries(1, 0..=20)).await?;
    let snap = sm.get_snapshot_builder().await.build_snapshot().await?;
    assert_eq!(snap.meta.last_log_id, Some(log_id(1, 20)));
    let map = sm.with_app(|app| app.map.clone());
    // Applied after the snapshot: gone after the restart, to be applied again from the log.
    sm.apply([normal(2, 21)]).await?;
    drop(sm);

    let mut sm = Sm::open(KvApp::default(), &dir, fs.clone()).expect("reopen");
    let (applied, membership) = sm.applied_state().await?;
    assert_eq!(applied, Some(log_id(1, 20)));
    assert_eq!(*membership.log_id(), Some(log_id(1, 0)));
    sm.with_app(|app| assert_eq!(app.map, map));
    let current = sm.get_current_snapshot().await?.expect("current snapshot");
    assert_eq!(current.meta, snap.meta);

    // Installing a received snapshot replaces it on disk as well.
    let mut other = Sm::new(KvApp::default());
    other.apply(entries(5, 0..=3)).await?;
    let theirs = other.get_snapshot_builder().await.build_snapshot().await?;
    sm.install_snapshot(&theirs.meta, theirs.snapshot).await?;
    drop(sm);
    let mut sm = Sm::open(KvApp::default(), &dir, fs).expect("reopen");
    assert_eq!(sm.applied_state().await?.0, Some(log_id(5, 3)));
    assert_eq!(sm.with_app(|app| app.map.len()), 3);
    Ok(())
}

#[tokio::test]
async fn a_damaged_snapshot_file_is_an_error() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = tmp.path().join("sm");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("raft_snapshot"), b"RHDFSRS1 not a snapshot").expect("write");
    assert!(Sm::open(KvApp::default(), &dir, Arc::new(LocalFs)).is_err());
}
