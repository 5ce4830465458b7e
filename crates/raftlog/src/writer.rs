//! The dedicated writer thread: every disk write of the log store happens here, in the
//! order the store issued it, so no async executor thread ever blocks on the disk.
//!
//! Group commit: the thread takes every append waiting in its queue, writes them one after
//! the other and fdatasyncs once, and only then reports each batch durable (openraft's
//! `LogFlushed` callback). Truncations and meta-file writes are done in queue order, after
//! the appends issued before them are durable. After a failed write or sync nothing more is
//! reported durable: every later command fails.

use std::sync::mpsc;
use std::thread::JoinHandle;

use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::codec::Meta;
use crate::error::{RaftLogError, Result};
use crate::segments::SegmentLog;

/// Called once the append it belongs to is durable, or failed.
pub type Done = Box<dyn FnOnce(std::io::Result<()>) + Send>;

/// Framed records to append, the first with index `first`.
pub struct AppendBatch {
    pub first: u64,
    pub bytes: Vec<u8>,
    /// Start of each record in `bytes`.
    pub offsets: Vec<u64>,
}

enum Command {
    Append(AppendBatch, Done),
    Truncate(u64, oneshot::Sender<Result<()>>),
    /// Write the meta file, then (when set) remove segments up to that index.
    Meta(Meta, Option<u64>, oneshot::Sender<Result<()>>),
    Close(oneshot::Sender<Result<()>>),
}

/// The handle the store sends commands through; dropping the last one stops the thread.
#[derive(Debug)]
pub struct Writer {
    tx: mpsc::Sender<Command>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Writer {
    /// Starts the thread that owns `log`.
    pub fn start(log: SegmentLog) -> Result<Writer> {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("raft-log-writer".into())
            .spawn(move || run(log, rx))
            .map_err(|e| RaftLogError::io("spawn writer thread", "raft-log-writer", e))?;
        Ok(Writer {
            tx,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Queues an append; `done` runs on the writer thread once it is durable.
    pub fn append(&self, batch: AppendBatch, done: Done) {
        if let Err(mpsc::SendError(Command::Append(_, done))) =
            self.tx.send(Command::Append(batch, done))
        {
            done(Err(RaftLogError::Closed.into_io()));
        }
    }

    async fn call(&self, make: impl FnOnce(oneshot::Sender<Result<()>>) -> Command) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(make(tx)).map_err(|_| RaftLogError::Closed)?;
        rx.await.map_err(|_| RaftLogError::Closed)?
    }

    /// Removes the records from `index` on, durably, after the appends queued before.
    pub async fn truncate(&self, index: u64) -> Result<()> {
        self.call(|tx| Command::Truncate(index, tx)).await
    }

    /// Replaces the meta file durably; with `purge_upto`, then removes the segments
    /// holding only records up to it.
    pub async fn write_meta(&self, meta: Meta, purge_upto: Option<u64>) -> Result<()> {
        self.call(|tx| Command::Meta(meta, purge_upto, tx)).await
    }

    /// Syncs, gives back the newest segment's reserved space and stops the thread.
    pub async fn close(&self) -> Result<()> {
        let res = self.call(Command::Close).await;
        let handle = self.thread.lock().take();
        if let Some(h) = handle {
            // The thread has answered Close and is ending: this join is short.
            let _ = tokio::task::spawn_blocking(move || h.join()).await;
        }
        match res {
            Err(RaftLogError::Closed) => Ok(()),
            other => other,
        }
    }
}

fn run(mut log: SegmentLog, rx: mpsc::Receiver<Command>) {
    let mut failed: Option<String> = None;
    let mut next = rx.recv().ok();
    while let Some(cmd) = next.take() {
        match cmd {
            Command::Append(batch, done) => {
                let mut dones = vec![done];
                let mut res = check(&failed).and_then(|()| write(&mut log, &batch));
                // Everything else already queued joins this group commit.
                loop {
                    match rx.try_recv() {
                        Ok(Command::Append(b, d)) => {
                            dones.push(d);
                            if res.is_ok() {
                                res = write(&mut log, &b);
                            }
                        }
                        Ok(other) => {
                            next = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                let res = res.and_then(|()| log.sync());
                if let Err(e) = &res {
                    tracing::error!("raft log append failed: {e}");
                    failed.get_or_insert_with(|| e.to_string());
                }
                for d in dones {
                    d(match &res {
                        Ok(()) => Ok(()),
                        Err(e) => Err(std::io::Error::other(e.to_string())),
                    });
                }
            }
            Command::Truncate(index, tx) => {
                let res = check(&failed).and_then(|()| log.truncate(index));
                note(&mut failed, &res);
                let _ = tx.send(res);
            }
            Command::Meta(meta, purge, tx) => {
                let res = check(&failed).and_then(|()| log.write_meta(&meta));
                note(&mut failed, &res);
                // The meta file already says these are gone: a failure to remove a file
                // only leaves it for the next open to remove.
                if res.is_ok()
                    && let Some(upto) = purge
                    && let Err(e) = log.purge(upto)
                {
                    tracing::warn!("raft log purge up to {upto}: {e}");
                }
                let _ = tx.send(res);
            }
            Command::Close(tx) => {
                let res = check(&failed).and_then(|()| log.close());
                let _ = tx.send(res);
                return;
            }
        }
        if next.is_none() {
            next = rx.recv().ok();
        }
    }
}

fn check(failed: &Option<String>) -> Result<()> {
    match failed {
        Some(why) => Err(RaftLogError::Failed(why.clone())),
        None => Ok(()),
    }
}

fn note(failed: &mut Option<String>, res: &Result<()>) {
    if let Err(e) = res {
        tracing::error!("raft log write failed: {e}");
        failed.get_or_insert_with(|| e.to_string());
    }
}

fn write(log: &mut SegmentLog, batch: &AppendBatch) -> Result<()> {
    log.write(batch.first, &batch.bytes, &batch.offsets)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;
    use std::sync::mpsc as std_mpsc;
    use std::time::Duration;

    use rhdfs_editlog::fs::{FaultInjectingFs, FileSystem, LocalFs, WritableFile};
    use rhdfs_editlog::record::encode_record;

    use super::*;

    #[test]
    fn queued_appends_share_one_fsync_and_report_after_it() {
        let tmp = tempfile::TempDir::new().expect("tempdir");
        let fs = Arc::new(FaultInjectingFs::new());
        let (log, _, _) = SegmentLog::open(fs.clone(), tmp.path(), 64 << 20).expect("open");
        let (log_tx, log_rx) = mpsc::channel();
        let (done_tx, done_rx) = std_mpsc::channel();
        // Queue 100 appends before the writer runs, as openraft does while a flush is busy.
        for i in 0..100u64 {
            let mut bytes = Vec::new();
            encode_record(i, b"edit", &mut bytes);
            let tx = done_tx.clone();
            let done: Done = Box::new(move |r| {
                let _ = tx.send((i, r.is_ok()));
            });
            log_tx
                .send(Command::Append(
                    AppendBatch {
                        first: i,
                        bytes,
                        offsets: vec![0],
                    },
                    done,
                ))
                .expect("queue");
        }
        let before = fs.file_syncs();
        drop(log_tx);
        run(log, log_rx);
        let syncs = fs.file_syncs() - before;
        let done: Vec<_> = done_rx.try_iter().collect();
        assert_eq!(done.len(), 100);
        assert!(done.iter().all(|(_, ok)| *ok));
        // One segment start (header sync) and one group fsync.
        assert!(syncs <= 2, "{syncs} syncs for one group");
        let (_, _, records) = SegmentLog::open(fs, tmp.path(), 64 << 20).expect("reopen");
        assert_eq!(records.len(), 100);
    }

    /// The local file system, with every file sync held until the gate opens.
    #[derive(Debug, Default)]
    struct GatedFs {
        gate: Arc<Gate>,
    }

    #[derive(Debug, Default)]
    struct Gate {
        open: parking_lot::Mutex<bool>,
        opened: parking_lot::Condvar,
    }

    impl Gate {
        fn pass(&self) {
            let mut open = self.open.lock();
            while !*open {
                self.opened.wait(&mut open);
            }
        }
        fn open(&self) {
            *self.open.lock() = true;
            self.opened.notify_all();
        }
    }

    #[derive(Debug)]
    struct GatedFile {
        inner: Box<dyn WritableFile>,
        gate: Arc<Gate>,
    }

    impl WritableFile for GatedFile {
        fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
            self.inner.write_all(buf)
        }
        fn sync(&mut self) -> std::io::Result<()> {
            self.gate.pass();
            self.inner.sync()
        }
        fn finish(&mut self) -> std::io::Result<()> {
            self.inner.finish()
        }
    }

    impl GatedFs {
        fn gated(&self, f: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
            Box::new(GatedFile {
                inner: f,
                gate: self.gate.clone(),
            })
        }
    }

    impl FileSystem for GatedFs {
        fn create(&self, path: &Path) -> std::io::Result<Box<dyn WritableFile>> {
            LocalFs.create(path).map(|f| self.gated(f))
        }
        fn create_preallocated(
            &self,
            path: &Path,
            chunk: u64,
        ) -> std::io::Result<Box<dyn WritableFile>> {
            LocalFs
                .create_preallocated(path, chunk)
                .map(|f| self.gated(f))
        }
        fn open_append(&self, path: &Path) -> std::io::Result<Box<dyn WritableFile>> {
            LocalFs.open_append(path).map(|f| self.gated(f))
        }
        fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
            LocalFs.read(path)
        }
        fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
            LocalFs.rename(from, to)
        }
        fn remove_file(&self, path: &Path) -> std::io::Result<()> {
            LocalFs.remove_file(path)
        }
        fn truncate(&self, path: &Path, len: u64) -> std::io::Result<()> {
            LocalFs.truncate(path, len)
        }
        fn sync_dir(&self, dir: &Path) -> std::io::Result<()> {
            LocalFs.sync_dir(dir)
        }
        fn list_dir(&self, dir: &Path) -> std::io::Result<Vec<String>> {
            LocalFs.list_dir(dir)
        }
        fn create_dir_all(&self, dir: &Path) -> std::io::Result<()> {
            LocalFs.create_dir_all(dir)
        }
        fn exists(&self, path: &Path) -> bool {
            LocalFs.exists(path)
        }
    }

    fn record(i: u64) -> AppendBatch {
        let mut bytes = Vec::new();
        encode_record(i, b"edit", &mut bytes);
        AppendBatch {
            first: i,
            bytes,
            offsets: vec![0],
        }
    }

    /// A member restarted in the same process opens its directory while the dropped
    /// store's writer thread may still be writing what was queued: the new open waits for
    /// it instead of reading (and cutting as torn) a segment being written.
    #[test]
    fn a_reopen_waits_for_a_dropped_writers_queue() {
        let tmp = tempfile::TempDir::new().expect("tempdir");
        let fs = Arc::new(GatedFs::default());
        let gate = fs.gate.clone();
        let (log, _, _) = SegmentLog::open(fs, tmp.path(), 64 << 20).expect("open");
        let writer = Writer::start(log).expect("start");
        let (done_tx, done_rx) = std_mpsc::channel();
        for i in 1..=50u64 {
            let tx = done_tx.clone();
            writer.append(
                record(i),
                Box::new(move |r| {
                    let _ = tx.send(r.is_ok());
                }),
            );
        }
        // The thread is held in its first sync with the rest queued; the store goes away.
        drop(writer);
        let dir = tmp.path().to_path_buf();
        let (open_tx, open_rx) = std_mpsc::channel();
        std::thread::spawn(move || {
            let res = SegmentLog::open(Arc::new(LocalFs), &dir, 64 << 20)
                .map(|(_, _, records)| records.len());
            let _ = open_tx.send(res);
        });
        // Without the lock the open returns at once, with the records not yet written
        // missing; give it the chance to, then let the old writer go on.
        let early = open_rx.recv_timeout(Duration::from_millis(200)).ok();
        gate.open();
        let res = match early {
            Some(res) => res,
            None => open_rx.recv().expect("open finished"),
        };
        assert_eq!(res.expect("reopen"), 50);
        let done: Vec<bool> = done_rx.try_iter().collect();
        assert_eq!(done, vec![true; 50]);
    }

    #[test]
    fn a_directory_held_past_the_wait_is_refused() {
        let tmp = tempfile::TempDir::new().expect("tempdir");
        let (_log, _, _) = SegmentLog::open(Arc::new(LocalFs), tmp.path(), 64 << 20).expect("open");
        match crate::dir_lock::lock_dir(tmp.path(), Duration::from_millis(20)) {
            Err(RaftLogError::Locked(dir)) => assert_eq!(dir, tmp.path()),
            other => panic!("expected Locked, got {other:?}"),
        }
    }
}
