//! Crash-style tests: the store dropped without `close` (what a crash leaves, minus
//! unsynced data), torn and damaged records, truncation and purge across a reopen, and a
//! failing disk.

use std::io::Write;
use std::sync::Arc;

use openraft::storage::{RaftLogStorage, RaftLogStorageExt};
use openraft::{RaftLogReader, Vote};
use rhdfs_editlog::fs::FaultInjectingFs;
use rhdfs_editlog::record::{SEGMENT_MAGIC, encode_record, scan_segment};
use rhdfs_raftlog::{RaftLogError, StoreOptions, encode_entry};
use tempfile::TempDir;

use crate::common::{Store, debug, entries, log_id, normal, open, options, segment_files};

async fn all(store: &mut Store) -> Vec<String> {
    debug(&store.try_get_log_entries(..).await.expect("read"))
}

#[tokio::test]
async fn synced_entries_vote_and_purge_point_survive_a_drop() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = tmp.path().join("raft");
    let mut store = open(&dir).await;
    // One entry per call, then batches: both kinds of group.
    for e in entries(1, 0..=9) {
        store.blocking_append([e]).await.expect("append");
    }
    for chunk in entries(2, 10..=40).chunks(4) {
        store.blocking_append(chunk.to_vec()).await.expect("append");
    }
    let vote = Vote::new_committed(2, 3);
    store.save_vote(&vote).await.expect("vote");
    store.purge(log_id(1, 4)).await.expect("purge");
    let expected = all(&mut store).await;
    assert_eq!(expected.len(), 36);
    assert!(segment_files(&dir).len() > 3, "small segments roll");
    drop(store);

    let mut store = open(&dir).await;
    assert_eq!(all(&mut store).await, expected);
    assert_eq!(store.read_vote().await.expect("vote"), Some(vote));
    let state = store.get_log_state().await.expect("state");
    assert_eq!(state.last_purged_log_id, Some(log_id(1, 4)));
    assert_eq!(state.last_log_id, Some(log_id(2, 40)));
    // And it goes on from there.
    store
        .blocking_append([normal(3, 41)])
        .await
        .expect("append");
    drop(store);
    let mut store = open(&dir).await;
    assert_eq!(all(&mut store).await.len(), 37);
}

/// Where the newest segment's good records end, and the segment's first index.
fn newest_segment_end(dir: &std::path::Path) -> (std::path::PathBuf, u64, u64) {
    let path = segment_files(dir).pop().expect("a segment");
    let first: u64 = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("raftlog_"))
        .and_then(|d| d.parse().ok())
        .expect("segment name");
    let data = std::fs::read(&path).expect("read");
    let end = scan_segment(&data, first).valid_len;
    (path, first, end)
}

#[tokio::test]
async fn a_torn_tail_record_is_cut_off_at_every_cut_point() {
    let next = normal(1, 6);
    let mut payload = Vec::new();
    encode_entry(&next, &mut payload);
    let mut record = Vec::new();
    encode_record(6, &payload, &mut record);
    for clean_close in [false, true] {
        for cut in 1..record.len() {
            let tmp = TempDir::new().expect("tempdir");
            let dir = tmp.path().join("raft");
            let mut store = open(&dir).await;
            store
                .blocking_append(entries(1, 0..=5))
                .await
                .expect("append");
            let expected = all(&mut store).await;
            if clean_close {
                store.close().await.expect("close");
            }
            drop(store);
            // A crash in the middle of writing entry 6: its first `cut` bytes reached the
            // disk (over the reserved zeros, or past the end of a closed segment).
            let (path, _, end) = newest_segment_end(&dir);
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .expect("open segment");
            use std::io::{Seek, SeekFrom};
            f.seek(SeekFrom::Start(end)).expect("seek");
            f.write_all(&record[..cut]).expect("write");
            drop(f);

            let mut store = open(&dir).await;
            assert_eq!(all(&mut store).await, expected, "cut {cut}");
            let state = store.get_log_state().await.expect("state");
            assert_eq!(state.last_log_id, Some(log_id(1, 5)), "cut {cut}");
            store
                .blocking_append([next.clone()])
                .await
                .expect("append after recovery");
            drop(store);
            let mut store = open(&dir).await;
            assert_eq!(all(&mut store).await.len(), 7, "cut {cut}");
        }
    }
}

#[tokio::test]
async fn damage_before_the_tail_is_an_error_not_a_panic() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = tmp.path().join("raft");
    let mut store = open(&dir).await;
    store
        .blocking_append(entries(1, 0..=5))
        .await
        .expect("append");
    drop(store);
    let (path, _, end) = newest_segment_end(&dir);
    let mut data = std::fs::read(&path).expect("read");
    let end = usize::try_from(end).expect("small");
    // Flip each byte of the records but the last one (whose damage reads as a torn tail).
    for pos in SEGMENT_MAGIC.len()..end / 2 {
        data[pos] ^= 0x40;
        std::fs::write(&path, &data).expect("write");
        match Store::open_async(&dir, options()).await {
            Err(RaftLogError::Corrupt { offset, .. }) => assert!(offset <= pos as u64),
            other => panic!("flip at {pos}: {other:?}"),
        }
        data[pos] ^= 0x40;
    }
    std::fs::write(&path, &data).expect("write");
    let mut store = open(&dir).await;
    assert_eq!(all(&mut store).await.len(), 6);
    // A damaged meta file too.
    drop(store);
    std::fs::write(dir.join(rhdfs_raftlog::META_FILE), b"garbage").expect("write");
    assert!(matches!(
        Store::open_async(&dir, options()).await,
        Err(RaftLogError::Decode { .. })
    ));
}

#[tokio::test]
async fn a_truncation_is_durable_and_new_entries_replace_the_old() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = tmp.path().join("raft");
    let mut store = open(&dir).await;
    store
        .blocking_append(entries(1, 0..=30))
        .await
        .expect("append");
    store.truncate(log_id(1, 12)).await.expect("truncate");
    store
        .blocking_append(entries(2, 12..=15))
        .await
        .expect("append");
    let expected = all(&mut store).await;
    drop(store);
    let mut store = open(&dir).await;
    assert_eq!(all(&mut store).await, expected);
    let state = store.get_log_state().await.expect("state");
    assert_eq!(state.last_log_id, Some(log_id(2, 15)));
    // Truncating everything, from the first index of a segment.
    store.truncate(log_id(1, 0)).await.expect("truncate");
    drop(store);
    let mut store = open(&dir).await;
    assert!(all(&mut store).await.is_empty());
    assert_eq!(
        store.get_log_state().await.expect("state").last_log_id,
        None
    );
}

#[tokio::test]
async fn a_purge_past_the_end_then_appends_from_there() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = tmp.path().join("raft");
    let mut store = open(&dir).await;
    store
        .blocking_append(entries(1, 0..=10))
        .await
        .expect("append");
    // What installing a snapshot ahead of the log does.
    store.purge(log_id(3, 20)).await.expect("purge");
    assert!(segment_files(&dir).is_empty());
    store
        .blocking_append((21..=25).map(|i| normal(3, i)))
        .await
        .expect("append");
    let expected = all(&mut store).await;
    drop(store);
    let mut store = open(&dir).await;
    assert_eq!(all(&mut store).await, expected);
    let state = store.get_log_state().await.expect("state");
    assert_eq!(state.last_purged_log_id, Some(log_id(3, 20)));
    assert_eq!(state.last_log_id, Some(log_id(3, 25)));
}

#[tokio::test]
async fn a_failed_write_is_never_reported_durable() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = tmp.path().join("raft");
    let fs = Arc::new(FaultInjectingFs::new());
    let opts = StoreOptions {
        fs: fs.clone(),
        ..options()
    };
    let mut store = Store::open_async(&dir, opts.clone()).await.expect("open");
    store
        .blocking_append(entries(1, 0..=3))
        .await
        .expect("append");
    let syncs = fs.file_syncs();
    assert!(syncs > 0);
    fs.fail_dir(&dir);
    assert!(store.blocking_append([normal(1, 4)]).await.is_err());
    fs.heal_all();
    // Nothing is claimed durable after a failure, even once the disk is back.
    assert!(store.blocking_append([normal(1, 5)]).await.is_err());
    assert!(store.save_vote(&Vote::new(2, 1)).await.is_err());
    drop(store);
    let mut store = Store::open_async(&dir, opts).await.expect("reopen");
    let got = all(&mut store).await;
    assert!(got.len() == 4 || got.len() == 5, "{}", got.len());
}
