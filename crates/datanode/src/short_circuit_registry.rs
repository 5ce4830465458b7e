//! The DataNode's shared-memory segments and slots for short-circuit reads (Hadoop's
//! ShortCircuitRegistry). A local client asks for a segment over the domain socket
//! (REQUEST_SHORT_CIRCUIT_SHM): it is created as a file under one of
//! `dfs.datanode.shared.file.descriptor.paths`, unlinked at once, sized to
//! [`SEGMENT_SIZE`] and mapped here; its descriptor goes to the client, which maps it too.
//! The client marks a slot VALID and sends its id with REQUEST_SHORT_CIRCUIT_FDS; the slot is
//! then registered for that replica. When the replica is invalidated — deleted, dropped with
//! its volume or by the directory scan, reopened for append or recovery — every slot registered
//! for it loses VALID, and the client stops using its descriptors. A slot stays registered until
//! RELEASE_SHORT_CIRCUIT_FDS, or until the segment's connection closes (the segment goes then).
//!
//! Lock order: the dataset's replica map is never locked while this registry's lock is held.

use std::collections::{HashMap, HashSet};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use rhdfs_transfer::shm::{SEGMENT_SIZE, Segment, ShmId, VALID};

/// dfs.datanode.shared.file.descriptor.paths and its default.
pub const SHARED_FILE_DESCRIPTOR_PATHS_KEY: &str = "dfs.datanode.shared.file.descriptor.paths";
pub const SHARED_FILE_DESCRIPTOR_PATHS_DEFAULT: &str = "/dev/shm,/tmp";

/// A replica as slots name it: (block pool, block id), any generation stamp.
type BlockKey = (String, u64);

#[derive(Debug)]
struct Registered {
    segment: Arc<Segment>,
    /// Registered slots and their replicas.
    slots: HashMap<usize, BlockKey>,
}

#[derive(Debug, Default)]
struct Inner {
    segments: HashMap<ShmId, Registered>,
    by_block: HashMap<BlockKey, HashSet<(ShmId, usize)>>,
}

/// Segments by id, slots by replica.
#[derive(Debug)]
pub struct ShortCircuitRegistry {
    inner: Mutex<Inner>,
    /// The high half of every segment id of this DataNode's run; the low half counts.
    id_hi: i64,
    next_lo: AtomicU64,
}

impl Default for ShortCircuitRegistry {
    fn default() -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        ShortCircuitRegistry {
            inner: Mutex::new(Inner::default()),
            id_hi: (now ^ (u64::from(std::process::id()) << 32)) as i64,
            next_lo: AtomicU64::new(1),
        }
    }
}

impl ShortCircuitRegistry {
    /// Creates, unlinks and maps a new segment in the first of `dirs` that takes it; blocking.
    pub fn create_segment(
        &self,
        client_name: &str,
        dirs: &[PathBuf],
    ) -> io::Result<(ShmId, Arc<Segment>)> {
        let id = ShmId {
            hi: self.id_hi,
            lo: self.next_lo.fetch_add(1, Ordering::Relaxed) as i64,
        };
        let name: String = client_name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(64)
            .collect();
        let mut last = io::Error::new(
            io::ErrorKind::NotFound,
            format!("no directory in {SHARED_FILE_DESCRIPTOR_PATHS_KEY}"),
        );
        for dir in dirs {
            let path = dir.join(format!(
                "HadoopShortCircuitShm_{name}_{:x}_{:x}",
                id.hi as u64, id.lo as u64
            ));
            let created = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path);
            let file = match created {
                Ok(f) => f,
                Err(e) => {
                    tracing::debug!(dir = %dir.display(), error = %e, "no shared memory file here");
                    last = e;
                    continue;
                }
            };
            let _ = std::fs::remove_file(&path);
            file.set_len(SEGMENT_SIZE as u64)?;
            let segment = Arc::new(Segment::map(file.into(), SEGMENT_SIZE)?);
            self.inner.lock().segments.insert(
                id,
                Registered {
                    segment: segment.clone(),
                    slots: HashMap::new(),
                },
            );
            return Ok((id, segment));
        }
        Err(last)
    }

    /// Forgets segment `id` and all its slots (its connection closed).
    pub fn remove_segment(&self, id: ShmId) {
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        if let Some(r) = inner.segments.remove(&id) {
            for (idx, key) in r.slots {
                unlink(&mut inner.by_block, &key, (id, idx));
            }
        }
    }

    /// Registers slot `idx` of segment `id` for replica `bpid`/`block_id`. The client must have
    /// marked it VALID; a slot registered already, or of an unknown segment, is refused.
    pub fn register_slot(
        &self,
        id: ShmId,
        idx: usize,
        bpid: &str,
        block_id: u64,
    ) -> Result<(), String> {
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        let r = inner
            .segments
            .get_mut(&id)
            .ok_or_else(|| format!("there is no shared memory segment {id:?}"))?;
        if idx >= r.segment.slots() {
            return Err(format!("slot {idx} is past the end of segment {id:?}"));
        }
        if r.slots.contains_key(&idx) {
            return Err(format!("slot {idx} of segment {id:?} is already in use"));
        }
        if !r.segment.is_valid(idx) {
            return Err(format!(
                "slot {idx} of segment {id:?} is not marked as valid"
            ));
        }
        let key = (bpid.to_string(), block_id);
        r.slots.insert(idx, key.clone());
        inner.by_block.entry(key).or_default().insert((id, idx));
        Ok(())
    }

    /// Releases slot `idx` of segment `id` (RELEASE_SHORT_CIRCUIT_FDS).
    pub fn unregister_slot(&self, id: ShmId, idx: usize) -> Result<(), String> {
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        let r = inner
            .segments
            .get_mut(&id)
            .ok_or_else(|| format!("there is no shared memory segment {id:?}"))?;
        let key = r
            .slots
            .remove(&idx)
            .ok_or_else(|| format!("slot {idx} of segment {id:?} is not registered"))?;
        unlink(&mut inner.by_block, &key, (id, idx));
        Ok(())
    }

    /// Clears VALID on every slot registered for `bpid`/`block_id`: clients stop reading the
    /// replica through the descriptors they hold. The slots stay registered until released.
    pub fn invalidate(&self, bpid: &str, block_id: u64) {
        let inner = self.inner.lock();
        let Some(slots) = inner.by_block.get(&(bpid.to_string(), block_id)) else {
            return;
        };
        for (id, idx) in slots {
            if let Some(r) = inner.segments.get(id) {
                r.segment.clear(*idx, VALID);
            }
        }
        tracing::debug!(
            block_id,
            slots = slots.len(),
            "short-circuit slots invalidated"
        );
    }

    /// Clears VALID on slot `idx` of segment `id` (a replica that went while it registered).
    pub fn invalidate_slot(&self, id: ShmId, idx: usize) {
        if let Some(r) = self.inner.lock().segments.get(&id) {
            r.segment.clear(idx, VALID);
        }
    }

    /// (segments, registered slots).
    pub fn counts(&self) -> (usize, usize) {
        let inner = self.inner.lock();
        let slots = inner.segments.values().map(|r| r.slots.len()).sum();
        (inner.segments.len(), slots)
    }
}

fn unlink(
    by_block: &mut HashMap<BlockKey, HashSet<(ShmId, usize)>>,
    key: &BlockKey,
    slot: (ShmId, usize),
) {
    if let Some(s) = by_block.get_mut(key) {
        s.remove(&slot);
        if s.is_empty() {
            by_block.remove(key);
        }
    }
}

/// The directories of dfs.datanode.shared.file.descriptor.paths.
pub fn shared_paths(value: &str) -> Vec<PathBuf> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_register_invalidate_release() {
        let dir = tempfile::tempdir().expect("dir");
        let reg = ShortCircuitRegistry::default();
        let dirs = [dir.path().join("missing"), dir.path().to_path_buf()];
        let (id, seg) = reg.create_segment("DFSClient_x/1", &dirs).expect("segment");
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("ls").count(),
            0,
            "the file is unlinked"
        );
        assert_eq!(seg.slots(), 128);
        assert!(
            reg.register_slot(id, 3, "BP", 7).is_err(),
            "not marked valid"
        );
        seg.set(3, VALID);
        seg.set(4, VALID);
        seg.set(5, VALID);
        reg.register_slot(id, 3, "BP", 7).expect("register");
        reg.register_slot(id, 4, "BP", 7).expect("register");
        reg.register_slot(id, 5, "BP", 8).expect("register");
        assert!(reg.register_slot(id, 3, "BP", 7).is_err(), "in use");
        assert!(reg.register_slot(id, 128, "BP", 7).is_err(), "past the end");
        let other = ShmId { hi: 0, lo: 0 };
        assert!(reg.register_slot(other, 1, "BP", 7).is_err());
        assert_eq!(reg.counts(), (1, 3));
        reg.invalidate("BP", 7);
        assert!(!seg.is_valid(3) && !seg.is_valid(4) && seg.is_valid(5));
        reg.invalidate("other", 8);
        assert!(seg.is_valid(5));
        reg.unregister_slot(id, 3).expect("release");
        assert!(reg.unregister_slot(id, 3).is_err(), "released twice");
        assert_eq!(reg.counts(), (1, 2));
        reg.remove_segment(id);
        assert_eq!(reg.counts(), (0, 0));
        reg.invalidate("BP", 8);
        assert!(seg.is_valid(5), "a removed segment is no longer touched");
    }

    #[test]
    fn paths_value() {
        assert_eq!(
            shared_paths(SHARED_FILE_DESCRIPTOR_PATHS_DEFAULT),
            vec![PathBuf::from("/dev/shm"), PathBuf::from("/tmp")]
        );
        assert!(shared_paths(" , ").is_empty());
    }
}
