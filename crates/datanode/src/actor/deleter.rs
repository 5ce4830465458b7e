//! Per-volume asynchronous deleter: a few threads per volume remove the block and meta files of
//! invalidated replicas, then report DELETED_BLOCK. The heartbeat path only queues work here.

use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use crate::dataset::{Dataset, DeletedReplica, delete_files};
use crate::faults::FaultHooks;
use crate::notify::{BlockEvent, BlockNotifier, BlockStatus};

/// Deletion threads for every volume.
#[derive(Debug)]
pub struct AsyncDeleter {
    queues: Mutex<Vec<mpsc::Sender<DeletedReplica>>>,
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
            let (tx, rx) = mpsc::channel::<DeletedReplica>();
            let rx = Arc::new(Mutex::new(rx));
            for t in 0..threads_per_volume.max(1) {
                let (rx, notifier, faults) = (rx.clone(), notifier.clone(), faults.clone());
                let storage_id = v.storage_id.clone();
                let h = std::thread::Builder::new()
                    .name(format!("dn-deleter-{}-{t}", v.index))
                    .spawn(move || run(rx, storage_id, notifier, faults))?;
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
    pub fn submit(&self, d: DeletedReplica) {
        let queues = self.queues.lock();
        match queues.get(d.info.volume) {
            Some(q) => {
                if q.send(d).is_err() {
                    tracing::warn!("deleter stopped; replica files left on disk");
                }
            }
            None => tracing::warn!(volume = d.info.volume, "no deleter for volume"),
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
    rx: Arc<Mutex<mpsc::Receiver<DeletedReplica>>>,
    storage_id: String,
    notifier: Arc<dyn BlockNotifier>,
    faults: Arc<FaultHooks>,
) {
    loop {
        let next = rx.lock().recv();
        let Ok(d) = next else { return };
        let delay = faults.delete_delay();
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        match delete_files(&d) {
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
