//! Group commit: many threads share fsyncs, and nothing is reported durable before its
//! bytes were synced.

use crate::common;

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::{formatted_roots, open, txids};
use parking_lot::Mutex;
use rhdfs_editlog::fs::{FileSystem, LocalFs, WritableFile};
use rhdfs_editlog::layout::inprogress_name;
use rhdfs_editlog::record::scan_segment;
use rhdfs_editlog::{EditLog, RecoveryMode, StorageDirs};

/// A file system that remembers, per file, how many bytes the last sync covered.
#[derive(Debug, Default, Clone)]
struct SyncTracking {
    synced: Arc<Mutex<HashMap<PathBuf, usize>>>,
    syncs: Arc<AtomicU64>,
}

#[derive(Debug)]
struct TrackedFile {
    path: PathBuf,
    inner: Box<dyn WritableFile>,
    written: usize,
    fs: SyncTracking,
}

impl WritableFile for TrackedFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf)?;
        self.written += buf.len();
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        self.inner.sync()?;
        self.fs.syncs.fetch_add(1, Ordering::SeqCst);
        self.fs
            .synced
            .lock()
            .insert(self.path.clone(), self.written);
        Ok(())
    }
    fn finish(&mut self) -> io::Result<()> {
        self.inner.finish()
    }
}

impl FileSystem for SyncTracking {
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(TrackedFile {
            path: path.to_path_buf(),
            inner: LocalFs.create(path)?,
            written: 0,
            fs: self.clone(),
        }))
    }
    fn create_preallocated(&self, path: &Path, chunk: u64) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(TrackedFile {
            path: path.to_path_buf(),
            inner: LocalFs.create_preallocated(path, chunk)?,
            written: 0,
            fs: self.clone(),
        }))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let written = std::fs::metadata(path)?.len() as usize;
        Ok(Box::new(TrackedFile {
            path: path.to_path_buf(),
            inner: LocalFs.open_append(path)?,
            written,
            fs: self.clone(),
        }))
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        LocalFs.read(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        LocalFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        LocalFs.remove_file(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        LocalFs.truncate(path, len)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        LocalFs.sync_dir(dir)
    }
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        LocalFs.list_dir(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        LocalFs.create_dir_all(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        LocalFs.exists(path)
    }
}

#[test]
fn concurrent_appenders_share_fsyncs_and_never_see_unsynced_acks() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let fs = SyncTracking::default();
    let dirs = StorageDirs::with_fs(roots.clone(), Arc::new(fs.clone())).unwrap();
    let (log, _) = EditLog::open(dirs, 0, RecoveryMode::Strict).unwrap();
    let baseline = fs.syncs.load(Ordering::SeqCst);
    let segs: Vec<PathBuf> = roots
        .iter()
        .map(|r| r.join("current").join(inprogress_name(1)))
        .collect();
    let threads = 16u64;
    let per_thread = 100u64;
    let mut handles = Vec::new();
    for th in 0..threads {
        let log = log.clone();
        let fs = fs.clone();
        let segs = segs.clone();
        handles.push(std::thread::spawn(move || {
            let mut mine = Vec::new();
            for i in 0..per_thread {
                let txid = log.append(format!("t{th}-{i}").as_bytes()).unwrap();
                log.sync(txid).unwrap();
                // The ack must be backed by synced bytes in every directory.
                for seg in &segs {
                    let synced = fs.synced.lock().get(seg).copied().unwrap_or(0);
                    let bytes = std::fs::read(seg).unwrap();
                    let scan = scan_segment(&bytes[..synced.min(bytes.len())], 1);
                    let last = scan.records.last().map_or(0, |r| r.txid);
                    assert!(
                        last >= txid,
                        "txid {txid} acked but {seg:?} synced only to {last}"
                    );
                }
                mine.push(txid);
            }
            mine
        }));
    }
    let mut all: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    all.sort_unstable();
    let total = threads * per_thread;
    assert_eq!(all, (1..=total).collect::<Vec<_>>());
    let groups = log.fsync_count();
    eprintln!("{total} records, {groups} group syncs");
    assert!(groups > 0);
    assert!(
        groups <= total / 2,
        "{groups} group syncs for {total} records: no sharing"
    );
    // One file sync per directory per group.
    assert_eq!(fs.syncs.load(Ordering::SeqCst) - baseline, groups * 2);
    drop(log);
    let (_, recs) = open(&roots, 0);
    assert_eq!(txids(&recs), (1..=total).collect::<Vec<_>>());
    for r in &recs {
        assert!(r.payload.starts_with(b"t"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_async_from_many_tasks() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let (log, _) = open(&roots, 0);
    let mut tasks = Vec::new();
    for task in 0..32u64 {
        let log = log.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..20u64 {
                let txid = log.append(format!("{task}/{i}").as_bytes()).unwrap();
                log.sync_async(txid).await.unwrap();
                assert!(log.synced_txid() >= txid);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(log.synced_txid(), 640);
    assert!(log.fsync_count() < 640);
    drop(log);
    let (_, recs) = open(&roots, 0);
    assert_eq!(recs.len(), 640);
}

#[test]
fn rolls_and_purges_during_concurrent_appends() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let (log, _) = open(&roots, 0);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let roller = {
        let log = log.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut rolls = 0;
            while !stop.load(Ordering::SeqCst) {
                let first = log.roll().unwrap();
                // Everything before the new segment is durable.
                assert!(log.synced_txid() >= first - 1);
                rolls += 1;
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            rolls
        })
    };
    let writers: Vec<_> = (0..8u64)
        .map(|th| {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0..150u64 {
                    let txid = log.append(format!("{th}:{i}").as_bytes()).unwrap();
                    log.sync(txid).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    let rolls = roller.join().unwrap();
    assert!(rolls > 1);
    drop(log);
    let (log, recs) = open(&roots, 0);
    assert_eq!(txids(&recs), (1..=1200).collect::<Vec<_>>());
    // Purging everything finalized leaves a log that still opens after its last txid.
    log.purge_before(u64::MAX).unwrap();
    drop(log);
    let (log, recs) = open(&roots, 1200);
    assert!(recs.is_empty());
    assert_eq!(log.last_txid(), 1200);
}
