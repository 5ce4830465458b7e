//! The replica map over all volumes and the state transitions of replicas (create, append,
//! recovery, finalize, invalidate). Every method here does blocking file I/O: call it from
//! `spawn_blocking` or a dedicated thread.

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::checksum::ChecksumSpec;
use crate::error::StorageError;
use crate::meta;
use crate::replica::{ReplicaInfo, ReplicaState};
use crate::scan;
use crate::volume::{Volume, VolumeSpace};
use crate::writer::ReplicaWriter;

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

    /// New RBW replica for PIPELINE_SETUP_CREATE.
    pub fn create_rbw(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        spec: ChecksumSpec,
        expected_len: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        self.create(bpid, id, gs, spec, expected_len, ReplicaState::Rbw)
    }

    /// New TEMPORARY replica for a DN-to-DN transfer; replaces an older unfinished copy.
    pub fn create_temporary(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        spec: ChecksumSpec,
        expected_len: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        if let Some(old) = self.get(bpid, id) {
            let stale = old.gs < gs && old.state != ReplicaState::Finalized
                || old.state == ReplicaState::Temporary
                || old.state == ReplicaState::Rwr;
            if !stale {
                return Err(StorageError::ReplicaExists {
                    id,
                    state: old.state.to_string(),
                });
            }
            self.remove_files_now(bpid, id)?;
        }
        self.create(bpid, id, gs, spec, expected_len, ReplicaState::Temporary)
    }

    fn create(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        spec: ChecksumSpec,
        expected_len: u64,
        state: ReplicaState,
    ) -> Result<ReplicaWriter, StorageError> {
        self.add_block_pool(bpid)?;
        let (info, epoch) = {
            let mut inner = self.inner.lock();
            if let Some(old) = inner.pools.get(bpid).and_then(|m| m.get(&id)) {
                return Err(StorageError::ReplicaExists {
                    id,
                    state: old.state.to_string(),
                });
            }
            let volume = self.choose_volume(&mut inner, expected_len)?;
            inner.next_epoch += 1;
            let epoch = inner.next_epoch;
            let info = ReplicaInfo {
                id,
                gs,
                state,
                num_bytes: 0,
                volume,
                checksum: spec,
                writer_epoch: epoch,
            };
            inner
                .pools
                .entry(bpid.to_string())
                .or_default()
                .insert(id, info.clone());
            (info, epoch)
        };
        let block = self.block_path(bpid, &info);
        let metap = self.meta_path(bpid, &info);
        match ReplicaWriter::create(self.clone(), bpid, &info, &block, &metap) {
            Ok(w) => Ok(w),
            Err(e) => {
                self.remove_if_epoch(bpid, id, epoch);
                Err(e)
            }
        }
    }

    fn remove_if_epoch(&self, bpid: &str, id: u64, epoch: u64) {
        let mut inner = self.inner.lock();
        if let Some(m) = inner.pools.get_mut(bpid)
            && m.get(&id).is_some_and(|r| r.writer_epoch == epoch)
        {
            m.remove(&id);
        }
    }

    /// PIPELINE_SETUP_APPEND: the finalized replica moves to rbw with the new GS.
    pub fn append(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        new_gs: u64,
        expected_len: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        let r = self
            .get(bpid, id)
            .ok_or(StorageError::ReplicaNotFound(id))?;
        if r.state != ReplicaState::Finalized {
            return Err(bad(
                id,
                format!("cannot append to a replica in state {}", r.state),
            ));
        }
        check_gs(&r, gs, new_gs)?;
        if r.num_bytes != expected_len {
            return Err(bad(
                id,
                format!(
                    "length {} differs from the expected {expected_len}",
                    r.num_bytes
                ),
            ));
        }
        self.reopen(bpid, &r, new_gs, None)
    }

    /// PIPELINE_SETUP_APPEND_RECOVERY: a finalized or RBW replica is reopened with the new GS.
    pub fn recover_append(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        new_gs: u64,
        expected_len: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        let r = self
            .get(bpid, id)
            .ok_or(StorageError::ReplicaNotFound(id))?;
        if !matches!(r.state, ReplicaState::Finalized | ReplicaState::Rbw) {
            return Err(bad(
                id,
                format!("cannot recover append in state {}", r.state),
            ));
        }
        check_gs(&r, gs, new_gs)?;
        if r.num_bytes < expected_len {
            return Err(bad(
                id,
                format!(
                    "length {} is less than the expected {expected_len}",
                    r.num_bytes
                ),
            ));
        }
        self.reopen(bpid, &r, new_gs, None)
    }

    /// PIPELINE_SETUP_STREAMING_RECOVERY: an RBW replica truncated to the acked length
    /// (`min_bytes`), new GS.
    pub fn recover_rbw(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        new_gs: u64,
        min_bytes: u64,
        max_bytes: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        let r = self
            .get(bpid, id)
            .ok_or(StorageError::ReplicaNotFound(id))?;
        if !matches!(
            r.state,
            ReplicaState::Rbw | ReplicaState::Temporary | ReplicaState::Rwr
        ) {
            return Err(bad(
                id,
                format!("cannot recover a replica in state {}", r.state),
            ));
        }
        check_gs(&r, gs, new_gs)?;
        if r.num_bytes < min_bytes {
            return Err(bad(
                id,
                format!(
                    "has {} bytes, fewer than the acked {min_bytes} (max {max_bytes})",
                    r.num_bytes
                ),
            ));
        }
        self.reopen(bpid, &r, new_gs, Some(min_bytes))
    }

    /// PIPELINE_CLOSE_RECOVERY: bump the GS of a finalized or RBW replica and finalize it.
    pub fn recover_close(
        self: &Arc<Self>,
        bpid: &str,
        id: u64,
        gs: u64,
        new_gs: u64,
        expected_len: u64,
    ) -> Result<ReplicaInfo, StorageError> {
        let r = self
            .get(bpid, id)
            .ok_or(StorageError::ReplicaNotFound(id))?;
        if !matches!(r.state, ReplicaState::Finalized | ReplicaState::Rbw) {
            return Err(bad(
                id,
                format!("cannot recover close in state {}", r.state),
            ));
        }
        check_gs(&r, gs, new_gs)?;
        if r.num_bytes < expected_len {
            return Err(bad(
                id,
                format!(
                    "length {} is less than the expected {expected_len}",
                    r.num_bytes
                ),
            ));
        }
        if r.state == ReplicaState::Finalized {
            self.bump_gs(bpid, &r, new_gs)?;
            return self.get(bpid, id).ok_or(StorageError::ReplicaNotFound(id));
        }
        let truncate = (expected_len > 0).then_some(expected_len);
        let w = self.reopen(bpid, &r, new_gs, truncate)?;
        w.finalize()
    }

    fn bump_gs(&self, bpid: &str, r: &ReplicaInfo, new_gs: u64) -> Result<(), StorageError> {
        if new_gs == r.gs {
            return Ok(());
        }
        let old = self.meta_path(bpid, r);
        let mut n = r.clone();
        n.gs = new_gs;
        fs::rename(&old, self.meta_path(bpid, &n))?;
        let mut inner = self.inner.lock();
        if let Some(e) = inner.pools.get_mut(bpid).and_then(|m| m.get_mut(&r.id)) {
            e.gs = new_gs;
        }
        Ok(())
    }

    /// Moves the replica to rbw with `new_gs`, optionally truncated, and opens a writer on it.
    fn reopen(
        self: &Arc<Self>,
        bpid: &str,
        r: &ReplicaInfo,
        new_gs: u64,
        truncate_to: Option<u64>,
    ) -> Result<ReplicaWriter, StorageError> {
        let old_block = self.block_path(bpid, r);
        let old_meta = self.meta_path(bpid, r);
        let mut n = r.clone();
        n.gs = new_gs;
        if n.state != ReplicaState::Temporary {
            n.state = ReplicaState::Rbw;
        }
        let new_block = self.block_path(bpid, &n);
        let new_meta = self.meta_path(bpid, &n);
        if old_meta != new_meta {
            fs::rename(&old_meta, &new_meta)?;
        }
        if old_block != new_block
            && let Err(e) = fs::rename(&old_block, &new_block)
        {
            let _ = fs::rename(&new_meta, &old_meta);
            return Err(e.into());
        }
        {
            let mut inner = self.inner.lock();
            inner.next_epoch += 1;
            n.writer_epoch = inner.next_epoch;
            inner
                .pools
                .entry(bpid.to_string())
                .or_default()
                .insert(n.id, n.clone());
        }
        let mut w = ReplicaWriter::open(self.clone(), bpid, &n, &new_block, &new_meta)?;
        if let Some(len) = truncate_to
            && len < n.num_bytes
        {
            w.truncate(len)?;
        }
        Ok(w)
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

fn check_gs(r: &ReplicaInfo, gs: u64, new_gs: u64) -> Result<(), StorageError> {
    if new_gs < r.gs {
        return Err(bad(
            r.id,
            format!(
                "new generation stamp {new_gs} is older than the replica's {}",
                r.gs
            ),
        ));
    }
    if gs > r.gs {
        return Err(bad(
            r.id,
            format!(
                "replica generation stamp {} is older than the requested {gs}",
                r.gs
            ),
        ));
    }
    Ok(())
}

fn bad(id: u64, msg: String) -> StorageError {
    StorageError::BadReplicaState { id, msg }
}
