//! The client's shared-memory segments (Hadoop's DfsClientShmManager): one or more per
//! DataNode domain socket, each asked for with REQUEST_SHORT_CIRCUIT_SHM on a connection that is
//! kept open for the segment's life (the DataNode frees the segment's slots when it closes). A
//! slot is allocated per replica opened (marked VALID here, its id sent with
//! REQUEST_SHORT_CIRCUIT_FDS); the DataNode clears VALID when it invalidates the replica, and
//! a replica whose slot is not VALID is not read. A slot goes back (RELEASE_SHORT_CIRCUIT_FDS, on
//! a connection of its own) when the replica's descriptors are closed.
//!
//! A DataNode that answers ERROR_UNSUPPORTED (or cannot give a segment) is read without slots,
//! as before: it is not asked again for [`NO_SHM_FOR`]. A segment whose connection the DataNode
//! closed (it restarted) counts as invalid: its slots are no longer watched.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rhdfs_proto::hdfs::{ShortCircuitShmSlotProto, Status};
use rhdfs_transfer::shm::{SEGMENT_SIZE, Segment, ShmId, VALID};
use rhdfs_transfer::short_circuit::{ShmAnswer, release_slot, request_shm, slot_proto};
use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;

/// How long a DataNode without shared memory is read without slots before it is asked again.
const NO_SHM_FOR: Duration = Duration::from_secs(600);

/// One segment granted by a DataNode.
#[derive(Debug)]
struct ClientSegment {
    id: ShmId,
    segment: Segment,
    /// The DataNode's domain socket (releases are sent there).
    path: PathBuf,
    /// Slots handed out (true also for a slot whose release failed: never reused).
    used: Mutex<Vec<bool>>,
    /// The segment's connection closed: the DataNode no longer tracks these slots.
    disconnected: Arc<AtomicBool>,
    /// Dropped with the segment: ends the task that holds the connection.
    _close: tokio::sync::oneshot::Sender<()>,
}

impl ClientSegment {
    fn claim(self: &Arc<Self>) -> Option<Slot> {
        if self.disconnected.load(Ordering::Acquire) {
            return None;
        }
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let idx = used.iter().position(|u| !u)?;
        used[idx] = true;
        self.segment.set(idx, VALID);
        Some(Slot {
            seg: self.clone(),
            idx,
        })
    }

    fn free(&self, idx: usize) {
        self.segment.set(idx, 0);
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(u) = used.get_mut(idx) {
            *u = false;
        }
    }
}

/// A slot of a replica the client holds descriptors of; released when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    seg: Arc<ClientSegment>,
    idx: usize,
}

impl Slot {
    /// The replica may still be read: the DataNode has not invalidated it (and still watches
    /// this slot's segment).
    pub(crate) fn is_valid(&self) -> bool {
        !self.seg.disconnected.load(Ordering::Acquire) && self.seg.segment.is_valid(self.idx)
    }

    pub(crate) fn proto(&self) -> ShortCircuitShmSlotProto {
        slot_proto(self.seg.id, self.idx)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (seg, idx) = (self.seg.clone(), self.idx);
        if seg.disconnected.load(Ordering::Acquire) {
            // The DataNode forgot the segment; it is never handed out again.
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            // No runtime to send the release on: the slot stays taken until the segment closes.
            return;
        };
        rt.spawn(async move {
            let released = tokio::time::timeout(Duration::from_secs(60), async {
                let mut sock = UnixStream::connect(&seg.path).await?;
                release_slot(&mut sock, slot_proto(seg.id, idx))
                    .await
                    .map_err(|e| std::io::Error::other(e.to_string()))
            })
            .await;
            match released {
                // Released, or the DataNode did not have it registered: free either way.
                Ok(Ok(answer)) => {
                    if let Err(e) = answer {
                        tracing::debug!(slot = idx, "slot release refused: {e}");
                    }
                    seg.free(idx);
                }
                Ok(Err(e)) => tracing::debug!(slot = idx, error = %e, "slot release failed"),
                Err(_) => tracing::debug!(slot = idx, "slot release timed out"),
            }
        });
    }
}

#[derive(Debug)]
enum Node {
    /// No shared memory from this DataNode until the given monotonic time.
    Without(Duration),
    Segments(Vec<Arc<ClientSegment>>),
}

/// Segments by DataNode domain socket path.
#[derive(Debug)]
pub(crate) struct ShmManager {
    client_name: String,
    nodes: Mutex<HashMap<PathBuf, Node>>,
}

impl ShmManager {
    pub(crate) fn new(client_name: String) -> Self {
        ShmManager {
            client_name,
            nodes: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Node>> {
        self.nodes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A free slot on the DataNode at `path`, asking it for a segment when none has one;
    /// `None`: read without a slot.
    pub(crate) async fn allocate(
        &self,
        path: &Path,
        now: Duration,
        timeout: Duration,
    ) -> Option<Slot> {
        {
            let mut nodes = self.lock();
            match nodes.get_mut(path) {
                Some(Node::Without(until)) if *until > now => return None,
                Some(Node::Segments(segs)) => {
                    segs.retain(|s| !s.disconnected.load(Ordering::Acquire));
                    if let Some(slot) = segs.iter().find_map(|s| s.claim()) {
                        return Some(slot);
                    }
                }
                _ => {}
            }
        }
        let seg = match tokio::time::timeout(timeout, self.new_segment(path)).await {
            Ok(Ok(seg)) => seg,
            Ok(Err(why)) => {
                tracing::debug!(path = %path.display(), "reading without shared memory slots: {why}");
                self.lock()
                    .insert(path.to_path_buf(), Node::Without(now + NO_SHM_FOR));
                return None;
            }
            Err(_) => {
                self.lock()
                    .insert(path.to_path_buf(), Node::Without(now + NO_SHM_FOR));
                return None;
            }
        };
        let slot = seg.claim();
        let mut nodes = self.lock();
        match nodes.get_mut(path) {
            Some(Node::Segments(segs)) => segs.push(seg),
            _ => {
                nodes.insert(path.to_path_buf(), Node::Segments(vec![seg]));
            }
        }
        slot
    }

    async fn new_segment(&self, path: &Path) -> Result<Arc<ClientSegment>, String> {
        let mut sock = UnixStream::connect(path)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let (id, fd) = match request_shm(&mut sock, &self.client_name).await {
            Ok(ShmAnswer::Granted { id, fd }) => (id, fd),
            Ok(ShmAnswer::Refused { status, message }) => {
                let kind = if status == Status::ErrorUnsupported as i32 {
                    "unsupported"
                } else {
                    "refused"
                };
                return Err(format!("shared memory {kind} (status {status}): {message}"));
            }
            Err(e) => return Err(e.to_string()),
        };
        let segment = Segment::map(fd, SEGMENT_SIZE).map_err(|e| format!("cannot map: {e}"))?;
        let disconnected = Arc::new(AtomicBool::new(false));
        let (close, closed) = tokio::sync::oneshot::channel::<()>();
        let flag = disconnected.clone();
        tokio::spawn(async move {
            let mut byte = [0u8; 1];
            tokio::select! {
                _ = sock.read(&mut byte) => flag.store(true, Ordering::Release),
                _ = closed => {}
            }
        });
        tracing::debug!(?id, path = %path.display(), "short-circuit shared memory segment");
        Ok(Arc::new(ClientSegment {
            id,
            used: Mutex::new(vec![false; segment.slots()]),
            segment,
            path: path.to_path_buf(),
            disconnected,
            _close: close,
        }))
    }
}
