//! Fault hooks for tests: slow deletes, slow incremental reports, slow packets, slow reads, refused transfer connections,
//! failing acks, failing volumes, and a way to find a replica's files.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use std::time::Duration;

use crate::dataset::Dataset;

/// Files of one replica on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaFiles {
    pub bpid: String,
    pub block_file: PathBuf,
    pub meta_file: PathBuf,
}

/// Called with the mirror's transfer address ("ip:port") inside the timed send of each
/// packet a write pipeline forwards (Hadoop's DataNodeFaultInjector
/// stopSendingPacketDownstream): a test advancing a manual clock here makes that send slow.
pub type MirrorSendHook = Arc<dyn Fn(&str) + Send + Sync>;

#[derive(Default)]
struct SendHook(Mutex<Option<MirrorSendHook>>);

impl std::fmt::Debug for SendHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.lock().is_some() {
            "Some(..)"
        } else {
            "None"
        })
    }
}

/// Switches tests flip on a running DataNode. All default to off.
#[derive(Debug, Default)]
pub struct FaultHooks {
    delete_delay_ms: AtomicU64,
    ibr_delay_ms: AtomicU64,
    packet_delay_ms: AtomicU64,
    reject_transfers: AtomicBool,
    ack_error: AtomicBool,
    read_delay_ms: AtomicU64,
    mirror_send: SendHook,
    dataset: OnceLock<Arc<Dataset>>,
}

impl FaultHooks {
    pub(crate) fn attach(&self, ds: Arc<Dataset>) {
        let _ = self.dataset.set(ds);
    }

    /// Each replica deletion sleeps this long first (on the deleter thread).
    pub fn set_delete_delay(&self, d: Duration) {
        self.delete_delay_ms
            .store(d.as_millis() as u64, Ordering::Relaxed);
    }

    pub fn delete_delay(&self) -> Duration {
        Duration::from_millis(self.delete_delay_ms.load(Ordering::Relaxed))
    }

    /// Each incremental block report waits this long before it is sent.
    pub fn set_ibr_delay(&self, d: Duration) {
        self.ibr_delay_ms
            .store(d.as_millis() as u64, Ordering::Relaxed);
    }

    pub fn ibr_delay(&self) -> Duration {
        Duration::from_millis(self.ibr_delay_ms.load(Ordering::Relaxed))
    }

    /// Each packet this node receives in a write pipeline waits this long before it is
    /// forwarded, written and acknowledged, and before the next one is read off the socket
    /// (a slow node: once its socket buffers are full, the upstream node's sends to it wait).
    pub fn set_packet_delay(&self, d: Duration) {
        self.packet_delay_ms
            .store(d.as_millis() as u64, Ordering::Relaxed);
    }

    pub fn packet_delay(&self) -> Duration {
        Duration::from_millis(self.packet_delay_ms.load(Ordering::Relaxed))
    }

    /// Sets (or clears) the hook run inside each timed packet send to a mirror.
    pub fn set_mirror_send_hook(&self, hook: Option<MirrorSendHook>) {
        *self.mirror_send.0.lock() = hook;
    }

    /// Runs the mirror send hook, if any, for a packet going to `mirror`.
    pub fn before_mirror_send(&self, mirror: &str) {
        let hook = self.mirror_send.0.lock().clone();
        if let Some(h) = hook {
            h(mirror);
        }
    }

    /// When on, new data-transfer connections are closed without reading anything.
    pub fn set_reject_transfers(&self, on: bool) {
        self.reject_transfers.store(on, Ordering::Relaxed);
    }

    pub fn reject_transfers(&self) -> bool {
        self.reject_transfers.load(Ordering::Relaxed)
    }

    /// When on, this node reports ERROR for itself in every pipeline ack.
    pub fn set_ack_error(&self, on: bool) {
        self.ack_error.store(on, Ordering::Relaxed);
    }

    pub fn ack_error(&self) -> bool {
        self.ack_error.load(Ordering::Relaxed)
    }

    /// Each READ_BLOCK waits this long before answering (a slow DataNode for hedged reads).
    pub fn set_read_delay(&self, d: Duration) {
        self.read_delay_ms
            .store(d.as_millis() as u64, Ordering::Relaxed);
    }

    pub fn read_delay(&self) -> Duration {
        Duration::from_millis(self.read_delay_ms.load(Ordering::Relaxed))
    }

    /// While on, every replica I/O on volume `index` (creating, writing, opening for a
    /// read) fails and so does the volume's disk check: a failing disk. False when this
    /// DataNode has no such volume.
    pub fn set_volume_io_error(&self, index: usize, on: bool) -> bool {
        match self.dataset.get().and_then(|ds| ds.volume(index)) {
            Some(v) => {
                v.set_io_fault(on);
                true
            }
            None => false,
        }
    }

    /// Block and meta file of replica `block_id` in any block pool (for corruption tests).
    pub fn replica_files(&self, block_id: u64) -> Option<ReplicaFiles> {
        let ds = self.dataset.get()?;
        ds.pools().into_iter().find_map(|bpid| {
            let r = ds.get(&bpid, block_id)?;
            Some(ReplicaFiles {
                block_file: ds.block_path(&bpid, &r),
                meta_file: ds.meta_path(&bpid, &r),
                bpid,
            })
        })
    }
}
