//! The replica map over all volumes and the state transitions of replicas (create, append,
//! recovery, finalize, invalidate). Every method here does blocking file I/O: call it from
//! `spawn_blocking` or a dedicated thread.

mod transitions;

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::StorageError;
use crate::meta;
use crate::replica::{ReplicaInfo, ReplicaState};
use crate::scan;
use crate::volume::{Volume, VolumeSpace};

#[derive(Debug, Default)]
struct Inner {
    pools: HashMap<String, HashMap<u64, ReplicaInfo>>,
    next_volume: usize,
    next_epoch: u64,
}

/// Space and usage of one volume, for storage reports.
#[derive(Debug, Clone)]
pub struct StorageStats {
    pub storage_id: String,
    pub space: VolumeSpace,
    pub dfs_used: u64,
}

/// All volumes of this DataNode and the replicas on them.
#[derive(Debug)]
pub struct Dataset {
    volumes: Vec<Arc<Volume>>,
    datanode_uuid: String,
    inner: Mutex<Inner>,
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
    /// every block pool found on disk.
    pub fn open(dirs: &[PathBuf], reserved: u64) -> Result<Arc<Self>, StorageError> {
        if dirs.is_empty() {
            return Err(StorageError::NoVolumes);
        }
        let fresh = uuid::Uuid::new_v4().to_string();
        let mut volumes = Vec::new();
        let mut uuid: Option<String> = None;
        for (i, d) in dirs.iter().enumerate() {
            let (vol, found) = Volume::open(i, d, reserved, uuid.as_deref().unwrap_or(&fresh))?;
            if uuid.is_none() {
                uuid = Some(found.unwrap_or_else(|| fresh.clone()));
            }
            volumes.push(Arc::new(vol));
        }
        let uuid = uuid.unwrap_or(fresh);
        for v in &volumes {
            v.set_datanode_uuid(&uuid)?;
        }
        let ds = Dataset {
            volumes,
            datanode_uuid: uuid,
            inner: Mutex::new(Inner::default()),
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
        for v in &self.volumes {
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
        self.inner
            .lock()
            .pools
            .entry(bpid.to_string())
            .or_insert(found);
        Ok(())
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

    pub fn block_path(&self, bpid: &str, r: &ReplicaInfo) -> PathBuf {
        self.dir_of(bpid, r.volume, r.state)
            .join(meta::block_file_name(r.id))
    }

    pub fn meta_path(&self, bpid: &str, r: &ReplicaInfo) -> PathBuf {
        self.dir_of(bpid, r.volume, r.state)
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
        let mut used = vec![0u64; self.volumes.len()];
        {
            let inner = self.inner.lock();
            for m in inner.pools.values() {
                for r in m.values() {
                    if let Some(u) = used.get_mut(r.volume) {
                        *u += r.num_bytes
                            + meta::META_HEADER_LEN
                            + r.checksum.chunks(r.num_bytes) * 4;
                    }
                }
            }
        }
        self.volumes
            .iter()
            .zip(used)
            .map(|(v, dfs_used)| StorageStats {
                storage_id: v.storage_id.clone(),
                space: v.space(),
                dfs_used,
            })
            .collect()
    }

    /// Round-robin volume choice among those with at least `needed` bytes available.
    fn choose_volume(&self, inner: &mut Inner, needed: u64) -> Result<usize, StorageError> {
        let n = self.volumes.len();
        for k in 0..n {
            let i = (inner.next_volume + k) % n;
            if self.volumes[i].space().available >= needed {
                inner.next_volume = (i + 1) % n;
                return Ok(i);
            }
        }
        Err(StorageError::OutOfSpace(needed))
    }

    /// Fails unless the writer with `epoch` still owns the replica.
    pub(crate) fn check_epoch(&self, bpid: &str, id: u64, epoch: u64) -> Result<(), StorageError> {
        let inner = self.inner.lock();
        match inner.pools.get(bpid).and_then(|m| m.get(&id)) {
            Some(r) if r.writer_epoch == epoch => Ok(()),
            Some(_) => Err(bad(id, "replica was reopened by another writer".into())),
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
            Some(_) => Err(bad(id, "replica was reopened by another writer".into())),
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
            return Err(bad(id, "replica was reopened by another writer".into()));
        }
        let mut n = r.clone();
        n.state = to;
        n.num_bytes = len;
        let (ob, om) = (self.block_path(bpid, &r), self.meta_path(bpid, &r));
        let (nb, nm) = (self.block_path(bpid, &n), self.meta_path(bpid, &n));
        if ob != nb {
            fs::rename(&ob, &nb)?;
            if let Err(e) = fs::rename(&om, &nm) {
                let _ = fs::rename(&nb, &ob);
                return Err(e.into());
            }
        }
        let mut inner = self.inner.lock();
        match inner.pools.get_mut(bpid).and_then(|m| m.get_mut(&id)) {
            Some(e) if e.writer_epoch == epoch => {
                *e = n.clone();
                Ok(n)
            }
            _ => Err(bad(id, "replica changed while finalizing".into())),
        }
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
            m.remove(&id)?
        };
        Some(DeletedReplica {
            bpid: bpid.to_string(),
            block_file: self.block_path(bpid, &info),
            meta_file: self.meta_path(bpid, &info),
            info,
        })
    }

    fn remove_files_now(&self, bpid: &str, id: u64) -> Result<(), StorageError> {
        if let Some(d) = self.remove_for_delete(bpid, id, u64::MAX) {
            delete_files(&d)?;
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

fn bad(id: u64, msg: String) -> StorageError {
    StorageError::BadReplicaState { id, msg }
}
