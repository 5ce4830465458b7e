//! The replica map over all volumes and the state transitions of replicas (create, append,
//! recovery, finalize, invalidate). Every method here does blocking file I/O: call it from
//! `spawn_blocking` or a dedicated thread.
//!
//! Each replica has a `writer_epoch`; every change of state gives it a new one, so a writer
//! of an older epoch fails from then on. A change of state ([`Dataset::transition`]) and every
//! write of the replica's writer hold the replica's *guard* (a mutex kept per epoch while the
//! replica is being written or changed), so a recovery that takes a replica over waits for a
//! write in flight and no stale write lands after it.

mod directory_scan;
pub mod failures;
mod profiling;
mod recovery;
#[cfg(test)]
mod recovery_tests;
mod transitions;

pub use directory_scan::ScanSummary;
pub use profiling::FileIoEvents;

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use crate::error::StorageError;
use crate::meta;
use crate::notify::{BlockEvent, BlockNotifier, BlockStatus};
use crate::replica::{ReplicaInfo, ReplicaState};
use crate::scan;
use crate::short_circuit_registry::ShortCircuitRegistry;
use crate::volume::{Volume, VolumeSpace};
use failures::VolumeFailure;

/// Serializes the writes of a replica's writer and the changes of its state.
pub(crate) type ReplicaGuard = Arc<Mutex<()>>;

#[derive(Debug, Default)]
struct Inner {
    pools: HashMap<String, HashMap<u64, ReplicaInfo>>,
    next_volume: usize,
    next_epoch: u64,
    /// Guards by writer epoch, for replicas with a writer or a change under way; removed
    /// when the epoch ends (the replica changes state or is removed).
    guards: HashMap<u64, ReplicaGuard>,
}

/// Space and usage of one volume, for storage reports.
#[derive(Debug, Clone)]
pub struct StorageStats {
    pub storage_id: String,
    pub space: VolumeSpace,
    pub dfs_used: u64,
    /// Replicas on the volume (every block pool, every state).
    pub replicas: u64,
    /// Out of service after a failed disk check (left out of reports).
    pub failed: bool,
}

/// All volumes of this DataNode and the replicas on them.
#[derive(Debug)]
pub struct Dataset {
    volumes: Vec<Arc<Volume>>,
    datanode_uuid: String,
    inner: Mutex<Inner>,
    /// Where replica events the dataset raises itself go (a replica finalized by a block
    /// recovery is RECEIVED_BLOCK in the next incremental report).
    notifier: OnceLock<Arc<dyn BlockNotifier>>,
    /// `dfs.datanode.failed.volumes.tolerated`.
    tolerated: i32,
    /// Failed volumes, at start-up and since (`failures`).
    failures: Mutex<Vec<VolumeFailure>>,
    /// Volumes an I/O failed on, waiting for the volume monitor's check.
    suspects: Mutex<Vec<usize>>,
    suspect_notify: tokio::sync::Notify,
    /// Base paths of slow volumes new replicas avoid (dfs.datanode.max.slowdisks.to.exclude).
    slow_excluded: Mutex<Vec<String>>,
    /// The profiler of metadata operations (`profiling`), when file I/O profiling is on.
    file_io: OnceLock<Arc<dyn FileIoEvents>>,
    /// Short-circuit shared-memory segments and the slots registered for replicas: a replica
    /// leaving the map or its finalized state invalidates its slots.
    short_circuit: Arc<ShortCircuitRegistry>,
}

/// Files removed from the map by `remove_for_delete`, to be deleted by the async deleter.
#[derive(Debug, Clone)]
pub struct DeletedReplica {
    pub bpid: String,
    pub info: ReplicaInfo,
    pub block_file: PathBuf,
    pub meta_file: PathBuf,
}

impl Dataset {
    /// Opens every data directory (creating missing ones), agrees on one datanodeUuid and scans
    /// every block pool found on disk. Any unusable directory is an error.
    pub fn open(dirs: &[PathBuf], reserved: u64) -> Result<Arc<Self>, StorageError> {
        Self::open_tolerating(dirs, reserved, 0, 0)
    }

    /// As [`Dataset::open`], with Hadoop's `dfs.datanode.failed.volumes.tolerated` rules: a
    /// directory that fails its disk check or cannot be opened is a failed volume (dated
    /// `now_ms`, no capacity known); the start is refused when more failed than tolerated.
    pub fn open_tolerating(
        dirs: &[PathBuf],
        reserved: u64,
        tolerated: i32,
        now_ms: u64,
    ) -> Result<Arc<Self>, StorageError> {
        if dirs.is_empty() {
            return Err(StorageError::NoVolumes);
        }
        failures::validate_tolerated(tolerated, dirs.len())?;
        let fresh = uuid::Uuid::new_v4().to_string();
        let mut volumes = Vec::new();
        let mut failed = Vec::new();
        let mut uuid: Option<String> = None;
        for d in dirs {
            let opened = crate::volume_check::check_dir(d)
                .map_err(StorageError::DiskError)
                .and_then(|()| {
                    Volume::open(
                        volumes.len(),
                        d,
                        reserved,
                        uuid.as_deref().unwrap_or(&fresh),
                    )
                });
            match opened {
                Ok((vol, found)) => {
                    if uuid.is_none() {
                        uuid = Some(found.unwrap_or_else(|| fresh.clone()));
                    }
                    volumes.push(Arc::new(vol));
                }
                Err(e) => {
                    tracing::warn!(dir = %d.display(), error = %e, "data directory failed its check");
                    failed.push(VolumeFailure {
                        location: d.display().to_string(),
                        date_ms: now_ms,
                        capacity_lost: 0,
                    });
                }
            }
        }
        failures::check_startup_failures(tolerated, dirs.len(), failed.len())?;
        let uuid = uuid.unwrap_or(fresh);
        for v in &volumes {
            v.set_datanode_uuid(&uuid)?;
        }
        let ds = Dataset {
            volumes,
            datanode_uuid: uuid,
            inner: Mutex::new(Inner::default()),
            notifier: OnceLock::new(),
            tolerated,
            failures: Mutex::new(failed),
            suspects: Mutex::new(Vec::new()),
            suspect_notify: tokio::sync::Notify::new(),
            slow_excluded: Mutex::new(Vec::new()),
            file_io: OnceLock::new(),
            short_circuit: Arc::default(),
        };
        let mut pools = Vec::new();
        for v in &ds.volumes {
            pools.extend(v.pools_on_disk()?);
        }
        pools.sort();
        pools.dedup();
        for p in pools {
            ds.add_block_pool(&p)?;
        }
        Ok(Arc::new(ds))
    }

    /// The short-circuit segments and slots of this DataNode's replicas.
    pub fn short_circuit_registry(&self) -> &Arc<ShortCircuitRegistry> {
        &self.short_circuit
    }

    /// A replica left the map or its finalized state: its short-circuit slots become invalid.
    pub(crate) fn invalidate_slots(&self, bpid: &str, id: u64) {
        self.short_circuit.invalidate(bpid, id);
    }

    pub fn datanode_uuid(&self) -> &str {
        &self.datanode_uuid
    }

    pub fn volumes(&self) -> &[Arc<Volume>] {
        &self.volumes
    }

    pub fn storage_ids(&self) -> Vec<String> {
        self.volumes.iter().map(|v| v.storage_id.clone()).collect()
    }

    pub fn volume(&self, index: usize) -> Option<&Arc<Volume>> {
        self.volumes.get(index)
    }

    /// Block pools known to the map.
    pub fn pools(&self) -> Vec<String> {
        self.inner.lock().pools.keys().cloned().collect()
    }

    /// Creates the pool's directories and loads its replicas (once).
    pub fn add_block_pool(&self, bpid: &str) -> Result<(), StorageError> {
        if self.inner.lock().pools.contains_key(bpid) {
            return Ok(());
        }
        let mut found: HashMap<u64, ReplicaInfo> = HashMap::new();
        for v in self.volumes.iter().filter(|v| !v.is_failed()) {
            for r in scan::scan_pool(v, bpid)? {
                match found.get(&r.id) {
                    Some(old) if !prefer(&r, old) => {
                        tracing::warn!(id = r.id, "duplicate replica on another volume ignored");
                    }
                    _ => {
                        found.insert(r.id, r);
                    }
                }
            }
        }
        tracing::info!(bpid, replicas = found.len(), "block pool loaded");
        let mut inner = self.inner.lock();
        if inner.pools.contains_key(bpid) {
            return Ok(());
        }
        // Every replica gets an epoch of its own, so changes of different replicas never
        // wait on one another's guard.
        for r in found.values_mut() {
            inner.next_epoch += 1;
            r.writer_epoch = inner.next_epoch;
        }
        inner.pools.insert(bpid.to_string(), found);
        Ok(())
    }

    /// Sends the replica events the dataset raises itself to `n` (set once, at start).
    pub fn set_notifier(&self, n: Arc<dyn BlockNotifier>) {
        if self.notifier.set(n).is_err() {
            tracing::warn!("dataset notifier already set; the new one is ignored");
        }
    }

    /// Reports `r` (as it is now) with `status` to the NameNode side, if a notifier is set.
    pub(crate) fn notify(&self, bpid: &str, r: &ReplicaInfo, status: BlockStatus) {
        let (Some(n), Some(v)) = (self.notifier.get(), self.volumes.get(r.volume)) else {
            return;
        };
        n.notify(BlockEvent {
            bpid: bpid.to_string(),
            storage_id: v.storage_id.clone(),
            block_id: r.id,
            gs: r.gs,
            num_bytes: r.num_bytes,
            status,
        });
    }

    pub fn get(&self, bpid: &str, id: u64) -> Option<ReplicaInfo> {
        self.inner.lock().pools.get(bpid)?.get(&id).cloned()
    }

    pub fn replicas(&self, bpid: &str) -> Vec<ReplicaInfo> {
        self.inner
            .lock()
            .pools
            .get(bpid)
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Stops the writer of every RBW and TEMPORARY replica, as `dfsadmin -evictWriters`
    /// asks: each gets a new writer epoch (after any write in flight), so its writer's
    /// next write or finalize fails and the client rebuilds its pipeline without this
    /// DataNode. The replicas stay. Returns how many were stopped. Blocking.
    pub fn stop_writers(&self) -> usize {
        let writing =
            |r: &ReplicaInfo| matches!(r.state, ReplicaState::Rbw | ReplicaState::Temporary);
        let mut stopped = 0;
        for bpid in self.pools() {
            for r in self.replicas(&bpid).iter().filter(|r| writing(r)) {
                if matches!(self.stop_writer_if(&bpid, r.id, writing), Ok(true)) {
                    stopped += 1;
                }
            }
        }
        stopped
    }

    /// Gives replica `id` a new writer epoch, unchanged otherwise, when `pred` holds for
    /// it: its current writer's next write or finalize fails. True when it was stopped.
    pub(crate) fn stop_writer_if(
        &self,
        bpid: &str,
        id: u64,
        pred: impl Fn(&ReplicaInfo) -> bool,
    ) -> Result<bool, StorageError> {
        self.transition(bpid, id, |r| {
            Ok(if pred(r) {
                (Some(r.clone()), true)
            } else {
                (None, false)
            })
        })
        .map(|(stopped, _)| stopped)
    }

    /// The block file (an RUR replica's files stay where its original state keeps them).
    pub fn block_path(&self, bpid: &str, r: &ReplicaInfo) -> PathBuf {
        self.dir_of(bpid, r.volume, r.original_state())
            .join(meta::block_file_name(r.id))
    }

    pub fn meta_path(&self, bpid: &str, r: &ReplicaInfo) -> PathBuf {
        self.dir_of(bpid, r.volume, r.original_state())
            .join(meta::meta_file_name(r.id, r.gs))
    }

    fn dir_of(&self, bpid: &str, volume: usize, state: ReplicaState) -> PathBuf {
        match self.volumes.get(volume) {
            Some(v) => v.state_dir(bpid, state),
            None => PathBuf::from("/nonexistent"),
        }
    }

    /// Per-volume space and bytes used by replicas.
    pub fn storage_stats(&self) -> Vec<StorageStats> {
        let mut used = vec![(0u64, 0u64); self.volumes.len()];
        {
            let inner = self.inner.lock();
            for m in inner.pools.values() {
                for r in m.values() {
                    if let Some((u, n)) = used.get_mut(r.volume) {
                        *u += r.num_bytes
                            + meta::META_HEADER_LEN
                            + r.checksum.chunks(r.num_bytes) * 4;
                        *n += 1;
                    }
                }
            }
        }
        self.volumes
            .iter()
            .zip(used)
            .map(|(v, (dfs_used, replicas))| StorageStats {
                storage_id: v.storage_id.clone(),
                space: v.space(),
                dfs_used,
                replicas,
                failed: v.is_failed(),
            })
            .collect()
    }

    /// Sets the slow volumes (base paths) new replicas avoid.
    pub fn set_slow_volumes(&self, paths: Vec<String>) {
        let mut cur = self.slow_excluded.lock();
        if *cur != paths {
            if !paths.is_empty() {
                tracing::info!(volumes = ?paths, "slow volumes excluded from new replicas");
            }
            *cur = paths;
        }
    }

    /// Round-robin volume choice among those in service with at least `needed` bytes
    /// available, leaving out the slow volumes (Hadoop's FsVolumeList.chooseVolume). When
    /// only slow volumes would do, one of them is chosen: excluding slow disks never leaves
    /// the DataNode without a volume.
    fn choose_volume(&self, inner: &mut Inner, needed: u64) -> Result<usize, StorageError> {
        let slow = self.slow_excluded.lock().clone();
        let n = self.volumes.len();
        for avoid_slow in [true, false] {
            if !avoid_slow && slow.is_empty() {
                break;
            }
            for k in 0..n {
                let i = (inner.next_volume + k) % n;
                let v = &self.volumes[i];
                if avoid_slow && slow.iter().any(|p| Path::new(p) == v.base) {
                    continue;
                }
                if !v.is_failed() && v.space().available >= needed {
                    inner.next_volume = (i + 1) % n;
                    return Ok(i);
                }
            }
        }
        Err(StorageError::OutOfSpace(needed))
    }

    /// Fails unless the writer with `epoch` still owns the replica (an RUR replica has no
    /// writer: a recovery took it over).
    pub(crate) fn check_epoch(&self, bpid: &str, id: u64, epoch: u64) -> Result<(), StorageError> {
        let inner = self.inner.lock();
        match inner.pools.get(bpid).and_then(|m| m.get(&id)) {
            Some(r) if r.writer_epoch == epoch => Ok(()),
            Some(r) => Err(superseded(r)),
            None => Err(StorageError::ReplicaNotFound(id)),
        }
    }

    /// Records the length written by the writer with `epoch`.
    pub(crate) fn update_len(
        &self,
        bpid: &str,
        id: u64,
        epoch: u64,
        len: u64,
    ) -> Result<(), StorageError> {
        let mut inner = self.inner.lock();
        match inner.pools.get_mut(bpid).and_then(|m| m.get_mut(&id)) {
            Some(r) if r.writer_epoch == epoch => {
                r.num_bytes = len;
                Ok(())
            }
            Some(r) => Err(superseded(r)),
            None => Err(StorageError::ReplicaNotFound(id)),
        }
    }

    /// Moves an RBW/TEMPORARY replica to finalized (or a TEMPORARY one to rbw when `to_rbw`).
    pub(crate) fn finish(
        &self,
        bpid: &str,
        id: u64,
        epoch: u64,
        len: u64,
        to: ReplicaState,
    ) -> Result<ReplicaInfo, StorageError> {
        let r = self
            .get(bpid, id)
            .ok_or(StorageError::ReplicaNotFound(id))?;
        if r.writer_epoch != epoch {
            return Err(superseded(&r));
        }
        let mut n = r.clone();
        n.state = to;
        n.num_bytes = len;
        let (ob, om) = (self.block_path(bpid, &r), self.meta_path(bpid, &r));
        let (nb, nm) = (self.block_path(bpid, &n), self.meta_path(bpid, &n));
        if ob != nb {
            self.metadata_op(r.volume, || {
                fs::rename(&ob, &nb)?;
                if let Err(e) = fs::rename(&om, &nm) {
                    let _ = fs::rename(&nb, &ob);
                    return Err(e);
                }
                Ok(())
            })?;
        }
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        match inner.pools.get_mut(bpid).and_then(|m| m.get_mut(&id)) {
            Some(e) if e.writer_epoch == epoch => {
                // The writer is done: its epoch ends with it.
                inner.guards.remove(&epoch);
                inner.next_epoch += 1;
                n.writer_epoch = inner.next_epoch;
                *e = n.clone();
                Ok(n)
            }
            _ => Err(bad(id, "replica changed while finalizing".into())),
        }
    }

    /// The guard of a replica's current epoch (created when nobody holds one yet), with the
    /// replica as it was when the guard was looked up.
    fn guard_for(&self, bpid: &str, id: u64) -> Result<(ReplicaInfo, ReplicaGuard), StorageError> {
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        let r = inner
            .pools
            .get(bpid)
            .and_then(|m| m.get(&id))
            .ok_or(StorageError::ReplicaNotFound(id))?;
        let g = inner.guards.entry(r.writer_epoch).or_default().clone();
        Ok((r.clone(), g))
    }

    /// The guard a new writer of `info` (just created or reopened) holds for its writes;
    /// fails if the replica changed again since.
    pub(crate) fn attach_writer(
        &self,
        bpid: &str,
        info: &ReplicaInfo,
    ) -> Result<ReplicaGuard, StorageError> {
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        match inner.pools.get(bpid).and_then(|m| m.get(&info.id)) {
            Some(r) if r.writer_epoch == info.writer_epoch => {
                Ok(inner.guards.entry(r.writer_epoch).or_default().clone())
            }
            Some(_) => Err(bad(
                info.id,
                "replica was reopened by another writer".into(),
            )),
            None => Err(StorageError::ReplicaNotFound(info.id)),
        }
    }

    /// Changes replica `id` with its writer and every other change of it shut out. `work`
    /// sees the replica as it is, does the file work of the change and returns the replica's
    /// new record (or None for no change) plus a value for the caller. The new record gets a
    /// new epoch (a writer of the old one fails from then on) and is returned.
    pub(crate) fn transition<T>(
        &self,
        bpid: &str,
        id: u64,
        mut work: impl FnMut(&ReplicaInfo) -> Result<(Option<ReplicaInfo>, T), StorageError>,
    ) -> Result<(T, Option<ReplicaInfo>), StorageError> {
        for _ in 0..TRANSITION_ATTEMPTS {
            let (seen, guard) = self.guard_for(bpid, id)?;
            let _held = guard.lock();
            let cur = self
                .get(bpid, id)
                .ok_or(StorageError::ReplicaNotFound(id))?;
            if cur.writer_epoch != seen.writer_epoch {
                // Changed before the guard was ours: look again.
                continue;
            }
            let (new, value) = work(&cur)?;
            let Some(mut new) = new else {
                return Ok((value, None));
            };
            let mut inner = self.inner.lock();
            let inner = &mut *inner;
            let Some(slot) = inner
                .pools
                .get_mut(bpid)
                .and_then(|m| m.get_mut(&id))
                .filter(|e| e.writer_epoch == cur.writer_epoch)
            else {
                tracing::warn!(id, "replica removed while it changed state");
                return Err(StorageError::ReplicaNotFound(id));
            };
            inner.guards.remove(&cur.writer_epoch);
            inner.next_epoch += 1;
            new.writer_epoch = inner.next_epoch;
            *slot = new.clone();
            if cur.state == ReplicaState::Finalized
                && (new.state != ReplicaState::Finalized || new.gs != cur.gs)
            {
                self.invalidate_slots(bpid, id);
            }
            return Ok((value, Some(new)));
        }
        Err(bad(
            id,
            "replica kept changing while another change waited for it".into(),
        ))
    }

    /// Takes a replica out of the map for deletion (DNA_INVALIDATE); the caller deletes the files.
    /// A replica with a GS newer than the command's is kept.
    pub fn remove_for_delete(&self, bpid: &str, id: u64, gs: u64) -> Option<DeletedReplica> {
        let info = {
            let mut inner = self.inner.lock();
            let m = inner.pools.get_mut(bpid)?;
            if m.get(&id)?.gs > gs {
                tracing::warn!(id, gs, "invalidate of an older generation stamp ignored");
                return None;
            }
            let info = m.remove(&id)?;
            inner.guards.remove(&info.writer_epoch);
            info
        };
        self.invalidate_slots(bpid, id);
        Some(DeletedReplica {
            bpid: bpid.to_string(),
            block_file: self.block_path(bpid, &info),
            meta_file: self.meta_path(bpid, &info),
            info,
        })
    }

    fn remove_files_now(&self, bpid: &str, id: u64) -> Result<(), StorageError> {
        if let Some(d) = self.remove_for_delete(bpid, id, u64::MAX) {
            self.delete_replica_files(&d)?;
        }
        Ok(())
    }
}

/// Deletes a removed replica's block and meta files (a missing file is not an error).
pub fn delete_files(d: &DeletedReplica) -> Result<(), StorageError> {
    for p in [&d.block_file, &d.meta_file] {
        match fs::remove_file(p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

fn prefer(new: &ReplicaInfo, old: &ReplicaInfo) -> bool {
    (new.gs, new.state == ReplicaState::Finalized, new.num_bytes)
        > (old.gs, old.state == ReplicaState::Finalized, old.num_bytes)
}

/// How often a change of state looks again at a replica that changed under it.
const TRANSITION_ATTEMPTS: usize = 8;

/// The error a writer gets once its replica is no longer its own.
fn superseded(r: &ReplicaInfo) -> StorageError {
    match r.recovery_id() {
        Some(rid) => bad(
            r.id,
            format!("replica is under recovery (recovery id {rid}); its writer was stopped"),
        ),
        None => bad(r.id, "replica was reopened by another writer".into()),
    }
}

fn bad(id: u64, msg: String) -> StorageError {
    StorageError::BadReplicaState { id, msg }
}
