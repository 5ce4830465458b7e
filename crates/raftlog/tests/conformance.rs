//! openraft's own storage conformance suite against the store on a temporary directory,
//! with snapshots kept in memory and kept on disk.

use openraft::StorageError;
use openraft::testing::{StoreBuilder, Suite};
use rhdfs_editlog::fs::LocalFs;
use rhdfs_raftlog::kv::{KvApp, KvConfig};
use rhdfs_raftlog::{AppStateMachine, RaftLogStore};
use std::sync::Arc;
use tempfile::TempDir;

use crate::common::options;

type Sm = AppStateMachine<KvConfig, KvApp>;

struct Builder {
    persist_snapshots: bool,
}

impl StoreBuilder<KvConfig, RaftLogStore<KvConfig>, Sm, TempDir> for Builder {
    async fn build(&self) -> Result<(TempDir, RaftLogStore<KvConfig>, Sm), StorageError<u64>> {
        let dir = TempDir::new().expect("tempdir");
        let store = RaftLogStore::open_async(&dir.path().join("log"), options())
            .await
            .expect("open store");
        let sm = if self.persist_snapshots {
            let sm_dir = dir.path().join("sm");
            tokio::task::spawn_blocking(move || {
                AppStateMachine::open(KvApp::default(), &sm_dir, Arc::new(LocalFs))
            })
            .await
            .expect("open task")
            .expect("open state machine")
        } else {
            AppStateMachine::new(KvApp::default())
        };
        Ok((dir, store, sm))
    }
}

#[test]
fn openraft_suite_with_snapshots_in_memory() -> Result<(), Box<StorageError<u64>>> {
    Ok(Suite::test_all(Builder {
        persist_snapshots: false,
    })?)
}

#[test]
fn openraft_suite_with_snapshots_on_disk() -> Result<(), Box<StorageError<u64>>> {
    Ok(Suite::test_all(Builder {
        persist_snapshots: true,
    })?)
}
