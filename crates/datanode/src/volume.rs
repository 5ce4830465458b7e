//! One data directory: its layout, its `current/VERSION` (storage ID, datanodeUuid) and its space.

use std::ffi::CString;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use crate::error::StorageError;
use crate::replica::ReplicaState;

/// Layout version written to VERSION (Hadoop 3.x DataNode layout).
const LAYOUT_VERSION: i32 = -57;

/// Parses a `dfs.datanode.data.dir` entry: strips `file://` / `file:` and a `[DISK]` style prefix.
pub fn parse_data_dir(entry: &str) -> Option<PathBuf> {
    let mut s = entry.trim();
    if s.starts_with('[')
        && let Some(end) = s.find(']')
    {
        s = &s[end + 1..];
    }
    let s = s
        .strip_prefix("file://")
        .or_else(|| s.strip_prefix("file:"))
        .unwrap_or(s);
    if s.is_empty() {
        None
    } else {
        Some(PathBuf::from(s))
    }
}

/// Contents of `<dir>/current/VERSION` (a Java properties file).
#[derive(Debug, Clone, Default)]
pub struct VersionFile {
    pub storage_id: Option<String>,
    pub datanode_uuid: Option<String>,
    pub cluster_id: Option<String>,
}

impl VersionFile {
    fn read(path: &Path) -> Result<Option<Self>, StorageError> {
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let mut v = VersionFile::default();
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let Some((k, val)) = line.split_once('=') else {
                return Err(StorageError::BadVersion {
                    path: path.display().to_string(),
                    msg: format!("line without '=': {line}"),
                });
            };
            let val = val.trim().to_string();
            match k.trim() {
                "storageID" => v.storage_id = Some(val),
                "datanodeUuid" => v.datanode_uuid = Some(val),
                "clusterID" => v.cluster_id = Some(val),
                _ => {}
            }
        }
        Ok(Some(v))
    }

    fn write(&self, path: &Path) -> Result<(), StorageError> {
        let mut text = String::from("#rhdfs DataNode storage\n");
        if let Some(s) = &self.storage_id {
            text.push_str(&format!("storageID={s}\n"));
        }
        if let Some(c) = &self.cluster_id {
            text.push_str(&format!("clusterID={c}\n"));
        }
        text.push_str("cTime=0\n");
        if let Some(u) = &self.datanode_uuid {
            text.push_str(&format!("datanodeUuid={u}\n"));
        }
        text.push_str("storageType=DATA_NODE\n");
        text.push_str(&format!("layoutVersion={LAYOUT_VERSION}\n"));
        let tmp = path.with_extension("tmp");
        {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        fs::rename(&tmp, path)?;
        Ok(())
    }
}

/// Space figures of a volume, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VolumeSpace {
    pub capacity: u64,
    pub available: u64,
}

/// One data directory.
#[derive(Debug)]
pub struct Volume {
    pub index: usize,
    pub base: PathBuf,
    pub storage_id: String,
    reserved: u64,
    version: Mutex<VersionFile>,
    /// Removed from service after a failed disk check (the disk checker in `volume_check.rs`).
    failed: AtomicBool,
    /// Test hook: every I/O on the volume fails and so does its disk check.
    io_fault: AtomicBool,
}

impl Volume {
    /// Opens (creating if missing) `base`, reading or creating `current/VERSION`. `uuid` is the
    /// datanodeUuid to write when this volume has none yet.
    pub fn open(
        index: usize,
        base: &Path,
        reserved: u64,
        uuid: &str,
    ) -> Result<(Self, Option<String>), StorageError> {
        let current = base.join("current");
        fs::create_dir_all(&current)?;
        let vpath = current.join("VERSION");
        let existing = VersionFile::read(&vpath)?;
        let found_uuid = existing.as_ref().and_then(|v| v.datanode_uuid.clone());
        let mut v = existing.unwrap_or_default();
        let mut dirty = false;
        if v.storage_id.as_deref().is_none_or(|s| s.is_empty()) {
            v.storage_id = Some(format!("DS-{}", uuid::Uuid::new_v4()));
            dirty = true;
        }
        if v.datanode_uuid.as_deref().is_none_or(|s| s.is_empty()) {
            v.datanode_uuid = Some(uuid.to_string());
            dirty = true;
        }
        if dirty {
            v.write(&vpath)?;
        }
        let storage_id = v.storage_id.clone().unwrap_or_default();
        Ok((
            Volume {
                index,
                base: base.to_path_buf(),
                storage_id,
                reserved,
                version: Mutex::new(v),
                failed: AtomicBool::new(false),
                io_fault: AtomicBool::new(false),
            },
            found_uuid,
        ))
    }

    /// Bytes kept free for other uses (dfs.datanode.du.reserved), left out of the capacity.
    pub fn reserved(&self) -> u64 {
        self.reserved
    }

    /// True once the volume was taken out of service after a failed disk check.
    pub fn is_failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Takes the volume out of service; true if it was in service until now.
    pub(crate) fn mark_failed(&self) -> bool {
        !self.failed.swap(true, Ordering::Relaxed)
    }

    /// Test hook: while on, replica I/O on this volume and its disk check fail.
    pub fn set_io_fault(&self, on: bool) {
        self.io_fault.store(on, Ordering::Relaxed);
    }

    /// Fails (as a disk would) while the I/O fault hook is on.
    pub(crate) fn io_fault(&self) -> std::io::Result<()> {
        if self.io_fault.load(Ordering::Relaxed) {
            return Err(std::io::Error::other(format!(
                "injected I/O error on volume {}",
                self.base.display()
            )));
        }
        Ok(())
    }

    /// Rewrites VERSION with `uuid` as datanodeUuid (used when volumes disagree).
    pub fn set_datanode_uuid(&self, uuid: &str) -> Result<(), StorageError> {
        let mut v = self.version.lock();
        if v.datanode_uuid.as_deref() != Some(uuid) {
            v.datanode_uuid = Some(uuid.to_string());
            v.write(&self.base.join("current").join("VERSION"))?;
        }
        Ok(())
    }

    /// Records the cluster ID learnt from the NameNode.
    pub fn set_cluster_id(&self, cluster_id: &str) -> Result<(), StorageError> {
        let mut v = self.version.lock();
        if v.cluster_id.as_deref() != Some(cluster_id) {
            if let Some(old) = &v.cluster_id {
                tracing::warn!(volume = %self.base.display(), old, new = cluster_id, "cluster ID changed");
            }
            v.cluster_id = Some(cluster_id.to_string());
            v.write(&self.base.join("current").join("VERSION"))?;
        }
        Ok(())
    }

    pub fn pool_dir(&self, bpid: &str) -> PathBuf {
        self.base.join("current").join(bpid).join("current")
    }

    pub fn state_dir(&self, bpid: &str, state: ReplicaState) -> PathBuf {
        let pool = self.pool_dir(bpid);
        match state {
            ReplicaState::Finalized => pool.join("finalized"),
            ReplicaState::Temporary => pool.join("tmp"),
            ReplicaState::Rbw | ReplicaState::Rwr | ReplicaState::Rur => pool.join("rbw"),
        }
    }

    /// Creates the block pool's directories.
    pub fn create_pool_dirs(&self, bpid: &str) -> Result<(), StorageError> {
        for s in [
            ReplicaState::Finalized,
            ReplicaState::Rbw,
            ReplicaState::Temporary,
        ] {
            fs::create_dir_all(self.state_dir(bpid, s))?;
        }
        Ok(())
    }

    /// Block pools present on disk (`current/BP-*`).
    pub fn pools_on_disk(&self) -> Result<Vec<String>, StorageError> {
        let mut out = Vec::new();
        for e in fs::read_dir(self.base.join("current"))? {
            let e = e?;
            if e.file_type()?.is_dir()
                && let Some(name) = e.file_name().to_str()
                && name.starts_with("BP-")
            {
                out.push(name.to_string());
            }
        }
        Ok(out)
    }

    /// Capacity and available space (free space minus dfs.datanode.du.reserved).
    pub fn space(&self) -> VolumeSpace {
        match statvfs(&self.base) {
            Some((cap, avail)) => VolumeSpace {
                capacity: cap.saturating_sub(self.reserved),
                available: avail.saturating_sub(self.reserved),
            },
            None => VolumeSpace::default(),
        }
    }
}

fn statvfs(path: &Path) -> Option<(u64, u64)> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a properly sized out-parameter.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return None;
    }
    let frsize = st.f_frsize as u64;
    Some((st.f_blocks as u64 * frsize, st.f_bavail as u64 * frsize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_dir_entries() {
        assert_eq!(parse_data_dir("file:///a/b"), Some(PathBuf::from("/a/b")));
        assert_eq!(parse_data_dir(" /x "), Some(PathBuf::from("/x")));
        assert_eq!(parse_data_dir("[DISK]file:///d"), Some(PathBuf::from("/d")));
        assert_eq!(parse_data_dir(""), None);
    }

    #[test]
    fn version_is_stable() {
        let d = tempfile::tempdir().unwrap();
        let (v1, found) = Volume::open(0, d.path(), 0, "u-1").unwrap();
        assert!(found.is_none());
        assert!(v1.storage_id.starts_with("DS-"));
        let (v2, found) = Volume::open(0, d.path(), 0, "u-2").unwrap();
        assert_eq!(found.as_deref(), Some("u-1"));
        assert_eq!(v1.storage_id, v2.storage_id);
        assert!(v2.space().capacity > 0);
    }
}
