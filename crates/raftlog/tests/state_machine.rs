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

/// An application that keeps its own state durable and snapshots an earlier point of it
/// (the NameNode's newest image): what it covers is set by the test.
#[derive(Default)]
struct Behind {
    kv: KvApp,
    covers: Arc<std::sync::Mutex<Option<openraft::LogId<u64>>>>,
    restored: Vec<Vec<u8>>,
}

impl rhdfs_raftlog::StateMachineApp<KvConfig> for Behind {
    fn apply(
        &mut self,
        log_id: &openraft::LogId<u64>,
        data: Option<&rhdfs_raftlog::kv::KvCommand>,
    ) -> KvResponse {
        self.kv.apply(log_id, data)
    }

    fn snapshot(&self, _last_applied: Option<openraft::LogId<u64>>) -> rhdfs_raftlog::SnapshotJob {
        let covers = *self.covers.lock().expect("covers");
        let data = format!("state covering {covers:?}").into_bytes();
        Box::new(move || Ok(rhdfs_raftlog::AppSnapshot { covers, data }))
    }

    fn restore(&mut self, snapshot: &[u8]) -> Result<(), String> {
        self.restored.push(snapshot.to_vec());
        Ok(())
    }
}

#[tokio::test]
async fn an_application_durable_snapshot_covers_its_own_point_and_keeps_only_the_meta()
-> Result<(), Box<StorageError<u64>>> {
    type Bsm = AppStateMachine<KvConfig, Behind>;
    let tmp = TempDir::new().expect("tempdir");
    let dir = tmp.path().join("sm");
    let fs = Arc::new(LocalFs);
    let covers = Arc::new(std::sync::Mutex::new(None));
    let app = Behind {
        covers: covers.clone(),
        ..Behind::default()
    };
    let mut sm = Bsm::open_app_durable(app, &dir, fs.clone()).expect("open");
    sm.apply(entries(1, 0..=10)).await?;
    // A membership change after the point the application's snapshot will cover.
    sm.apply([crate::common::membership(2, 11), normal(2, 12)])
        .await?;

    // Nothing to offer yet: no snapshot, nothing saved.
    let none = sm.get_snapshot_builder().await.build_snapshot().await?;
    assert_eq!(none.meta.last_log_id, None);
    assert_eq!(sm.snapshot_last_log_id(), None);
    assert!(sm.get_current_snapshot().await?.is_none());

    // A snapshot behind the last applied entry takes the membership in force there.
    *covers.lock().expect("covers") = Some(log_id(1, 7));
    let snap = sm.get_snapshot_builder().await.build_snapshot().await?;
    assert_eq!(snap.meta.last_log_id, Some(log_id(1, 7)));
    assert_eq!(*snap.meta.last_membership.log_id(), Some(log_id(1, 0)));
    // The file holds the meta only.
    let on_disk = std::fs::metadata(dir.join("raft_snapshot"))
        .expect("file")
        .len();
    assert!(on_disk < 200, "{on_disk} bytes: the meta alone");

    // An older point changes nothing.
    *covers.lock().expect("covers") = Some(log_id(1, 3));
    let again = sm.get_snapshot_builder().await.build_snapshot().await?;
    assert_eq!(again.meta, snap.meta);
    drop(sm);

    // A restart resumes after the snapshot without restoring the application (its own
    // storage holds the state), and the bytes a follower gets are built by the application.
    let mut sm = Bsm::open_app_durable(Behind::default(), &dir, fs.clone()).expect("reopen");
    assert_eq!(sm.applied_state().await?.0, Some(log_id(1, 7)));
    assert!(sm.with_app(|a| a.restored.is_empty()));
    let current = sm.get_current_snapshot().await?.expect("current");
    assert_eq!(current.meta, snap.meta);
    assert_eq!(
        current.snapshot.into_inner(),
        b"state covering None".to_vec()
    );

    // Installing: the application restores, then the meta is saved.
    let mut other = Sm::new(KvApp::default());
    other.apply(entries(5, 0..=3)).await?;
    let theirs = other.get_snapshot_builder().await.build_snapshot().await?;
    let bytes = theirs.snapshot.get_ref().clone();
    sm.install_snapshot(&theirs.meta, theirs.snapshot).await?;
    assert_eq!(sm.with_app(|a| a.restored.clone()), vec![bytes]);
    drop(sm);
    let mut sm = Bsm::open_app_durable(Behind::default(), &dir, fs).expect("reopen");
    assert_eq!(sm.applied_state().await?.0, Some(log_id(5, 3)));
    Ok(())
}

/// A member restarted in the same process opens its snapshot directory while a snapshot
/// of its predecessor may still be being built (on a blocking thread, saving when done):
/// the open waits until nothing of the old adapter can save there, and then sees that save.
#[tokio::test]
async fn a_reopen_waits_for_the_old_adapters_builds() -> Result<(), Box<StorageError<u64>>> {
    let tmp = TempDir::new().expect("tempdir");
    let dir = tmp.path().join("sm");
    let fs = Arc::new(LocalFs);
    let mut sm = Sm::open(KvApp::default(), &dir, fs.clone()).expect("open");
    sm.apply(entries(1, 0..=6)).await?;
    let mut building = sm.get_snapshot_builder().await;
    drop(sm);
    let reopen = {
        let (dir, fs) = (dir.clone(), fs.clone());
        tokio::task::spawn_blocking(move || Sm::open(KvApp::default(), &dir, fs))
    };
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(
        !reopen.is_finished(),
        "opened while a build could still save"
    );
    let snap = building.build_snapshot().await?;
    drop(building);
    let mut sm = reopen.await.expect("task").expect("reopen");
    assert_eq!(sm.applied_state().await?.0, snap.meta.last_log_id);
    assert_eq!(sm.with_app(|app| app.map.len()), 6);
    Ok(())
}
