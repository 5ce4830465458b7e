//! Per-volume asynchronous deleter: a few threads per volume remove the block and meta files of
//! invalidated replicas, then report DELETED_BLOCK (unless the NameNode marked the block
//! [`NO_ACK`]). The heartbeat path only queues work here.

use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use crate::dataset::{Dataset, DeletedReplica};
use crate::faults::FaultHooks;
use crate::notify::{BlockEvent, BlockNotifier, BlockStatus};

/// Hadoop's `BlockCommand.NO_ACK`: the `numBytes` the NameNode puts on an invalidated block it
/// already dropped from its blocks map; such a deletion is not reported back.
pub const NO_ACK: u64 = i64::MAX as u64;

/// One replica to delete, and whether its deletion is reported as DELETED_BLOCK.
#[derive(Debug)]
pub struct DeleteTask {
    pub replica: DeletedReplica,
    pub report: bool,
}

impl DeleteTask {
    /// The task for a replica invalidated by a command whose block carried `command_len` as
    /// its numBytes: reported unless that is [`NO_ACK`] (as Hadoop's ReplicaFileDeleteTask).
    pub fn for_command(replica: DeletedReplica, command_len: Option<u64>) -> Self {
        DeleteTask {
            replica,
            report: command_len != Some(NO_ACK),
        }
    }
}

/// Deletion threads for every volume.
#[derive(Debug)]
pub struct AsyncDeleter {
    queues: Mutex<Vec<mpsc::Sender<DeleteTask>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl AsyncDeleter {
    /// Starts `threads_per_volume` (at least 1) threads for each volume of `ds`.
    pub fn start(
        ds: &Arc<Dataset>,
        threads_per_volume: usize,
        notifier: Arc<dyn BlockNotifier>,
        faults: Arc<FaultHooks>,
    ) -> std::io::Result<Self> {
        let mut queues = Vec::new();
        let mut threads = Vec::new();
        for v in ds.volumes() {
            let (tx, rx) = mpsc::channel::<DeleteTask>();
            let rx = Arc::new(Mutex::new(rx));
            for t in 0..threads_per_volume.max(1) {
                let (rx, notifier, faults) = (rx.clone(), notifier.clone(), faults.clone());
                let (ds, storage_id) = (ds.clone(), v.storage_id.clone());
                let h = std::thread::Builder::new()
                    .name(format!("dn-deleter-{}-{t}", v.index))
                    .spawn(move || run(rx, ds, storage_id, notifier, faults))?;
                threads.push(h);
            }
            queues.push(tx);
        }
        Ok(AsyncDeleter {
            queues: Mutex::new(queues),
            threads: Mutex::new(threads),
        })
    }

    /// Queues the files of a replica already removed from the replica map.
    pub fn submit(&self, task: DeleteTask) {
        let queues = self.queues.lock();
        let volume = task.replica.info.volume;
        match queues.get(volume) {
            Some(q) => {
                if q.send(task).is_err() {
                    tracing::warn!("deleter stopped; replica files left on disk");
                }
            }
            None => tracing::warn!(volume, "no deleter for volume"),
        }
    }

    /// Stops accepting work and waits for queued deletions to finish (blocking).
    pub fn shutdown(&self) {
        self.queues.lock().clear();
        let threads = std::mem::take(&mut *self.threads.lock());
        for t in threads {
            let _ = t.join();
        }
    }
}

fn run(
    rx: Arc<Mutex<mpsc::Receiver<DeleteTask>>>,
    ds: Arc<Dataset>,
    storage_id: String,
    notifier: Arc<dyn BlockNotifier>,
    faults: Arc<FaultHooks>,
) {
    loop {
        let next = rx.lock().recv();
        let Ok(DeleteTask { replica: d, report }) = next else {
            return;
        };
        let delay = faults.delete_delay();
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        match ds.delete_replica_files(&d) {
            Ok(()) if !report => {
                tracing::debug!(id = d.info.id, path = %d.block_file.display(), "deleted replica (NO_ACK: not reported)");
            }
            Ok(()) => {
                tracing::debug!(id = d.info.id, path = %d.block_file.display(), "deleted replica");
                notifier.notify(BlockEvent {
                    bpid: d.bpid.clone(),
                    storage_id: storage_id.clone(),
                    block_id: d.info.id,
                    gs: d.info.gs,
                    num_bytes: d.info.num_bytes,
                    status: BlockStatus::Deleted,
                });
            }
            Err(e) => {
                tracing::warn!(id = d.info.id, path = %d.block_file.display(), error = %e, "cannot delete replica");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::BlockStatus;

    const BP: &str = "BP-7-127.0.0.1-1";

    #[test]
    fn a_command_length_of_no_ack_skips_the_report() {
        let dir = tempfile::tempdir().unwrap();
        let ds = Dataset::open(&[dir.path().to_path_buf()], 0).unwrap();
        for id in [1, 2, 3] {
            let mut w = ds
                .create_rbw(BP, id, 1001, crate::ChecksumSpec::default(), 0)
                .unwrap();
            w.write_at(0, b"abc").unwrap();
            w.finalize().unwrap();
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // One thread per volume: the tasks run in order, so every report is made by shutdown.
        let deleter =
            AsyncDeleter::start(&ds, 1, Arc::new(tx), Arc::new(FaultHooks::default())).unwrap();
        let mut files = Vec::new();
        for (id, command_len) in [(1, Some(NO_ACK)), (2, Some(3)), (3, None)] {
            let d = ds.remove_for_delete(BP, id, 1001).unwrap();
            files.extend([d.block_file.clone(), d.meta_file.clone()]);
            deleter.submit(DeleteTask::for_command(d, command_len));
        }
        deleter.shutdown();
        for f in &files {
            assert!(!f.exists(), "{} left on disk", f.display());
        }
        let mut reported = Vec::new();
        while let Ok(ev) = rx.try_recv() {
            assert_eq!(ev.status, BlockStatus::Deleted);
            reported.push(ev.block_id);
        }
        assert_eq!(
            reported,
            vec![2, 3],
            "the NO_ACK replica is deleted silently"
        );
    }
}
