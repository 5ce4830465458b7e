//! The NameNode's storage directories (`dfs.namenode.name.dir`): which are in service,
//! formatting, the VERSION and `seen_txid` files, and atomic small-file writes.
//!
//! A directory whose write or sync fails is taken out of service for the life of this
//! [`StorageDirs`] (shared by the edit log and the image store); work goes on while at
//! least one directory remains.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use rhdfs_conf::Configuration;
use rhdfs_conf::keys;

use crate::error::{EditLogError, Result};
use crate::fs::{FileSystem, LocalFs};
use crate::layout::{CURRENT_DIR, SEEN_TXID_FILE, VERSION_FILE};
use crate::version::StorageVersion;

/// Name of the lock file in each storage root.
pub const LOCK_FILE: &str = "in_use.lock";

/// Exclusive locks on every storage root, held until dropped (or the process dies).
#[derive(Debug)]
pub struct StorageLock {
    _files: Vec<std::fs::File>,
}

/// The set of storage directories, cheap to clone (shared state).
#[derive(Clone)]
pub struct StorageDirs {
    inner: Arc<Inner>,
}

struct Inner {
    fs: Arc<dyn FileSystem>,
    dirs: Vec<Dir>,
}

struct Dir {
    root: PathBuf,
    current: PathBuf,
    failure: Mutex<Option<String>>,
}

impl fmt::Debug for StorageDirs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StorageDirs")
            .field("active", &self.active())
            .field("failed", &self.failed())
            .finish()
    }
}

/// Turns a `dfs.namenode.name.dir` entry (`file:///x`, `file:/x` or a plain path) into a path.
fn entry_to_path(entry: &str) -> Result<PathBuf> {
    let p = if let Some(rest) = entry.strip_prefix("file://") {
        rest
    } else if let Some(rest) = entry.strip_prefix("file:") {
        rest
    } else if entry.contains("://") {
        return Err(EditLogError::Config(format!(
            "unsupported storage directory URI {entry:?}"
        )));
    } else {
        entry
    };
    if p.is_empty() {
        return Err(EditLogError::Config(format!(
            "empty storage directory in {entry:?}"
        )));
    }
    Ok(PathBuf::from(p))
}

impl StorageDirs {
    /// Directories on the local file system.
    pub fn new(roots: Vec<PathBuf>) -> Result<Self> {
        Self::with_fs(roots, Arc::new(LocalFs))
    }

    /// Directories accessed through `fs` (tests inject faults this way).
    pub fn with_fs(roots: Vec<PathBuf>, fs: Arc<dyn FileSystem>) -> Result<Self> {
        if roots.is_empty() {
            return Err(EditLogError::Config("no storage directory given".into()));
        }
        let mut dirs: Vec<Dir> = Vec::new();
        for root in roots {
            if dirs.iter().any(|d| d.root == root) {
                continue;
            }
            dirs.push(Dir {
                current: root.join(CURRENT_DIR),
                root,
                failure: Mutex::new(None),
            });
        }
        Ok(StorageDirs {
            inner: Arc::new(Inner { fs, dirs }),
        })
    }

    /// The directories of `dfs.namenode.name.dir` (comma list, `file://` URIs or paths).
    pub fn from_conf(conf: &Configuration) -> Result<Self> {
        let entries = conf.get_list(keys::DFS_NAMENODE_NAME_DIR_KEY);
        if entries.is_empty() {
            return Err(EditLogError::Config(format!(
                "{} is not set",
                keys::DFS_NAMENODE_NAME_DIR_KEY
            )));
        }
        let roots = entries
            .iter()
            .map(|e| entry_to_path(e))
            .collect::<Result<Vec<_>>>()?;
        Self::new(roots)
    }

    /// The file system used for all access.
    pub fn fs(&self) -> &Arc<dyn FileSystem> {
        &self.inner.fs
    }

    /// All root directories, in configuration order.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.inner.dirs.iter().map(|d| d.root.clone()).collect()
    }

    /// The `current/` directories still in service.
    pub fn active(&self) -> Vec<PathBuf> {
        self.inner
            .dirs
            .iter()
            .filter(|d| d.failure.lock().is_none())
            .map(|d| d.current.clone())
            .collect()
    }

    /// The `current/` directories taken out of service, with the reason.
    pub fn failed(&self) -> Vec<(PathBuf, String)> {
        self.inner
            .dirs
            .iter()
            .filter_map(|d| d.failure.lock().clone().map(|why| (d.current.clone(), why)))
            .collect()
    }

    /// Active directories, or an error when none remains.
    pub(crate) fn active_or_err(&self) -> Result<Vec<PathBuf>> {
        let active = self.active();
        if active.is_empty() {
            return Err(self.none_left());
        }
        Ok(active)
    }

    pub(crate) fn none_left(&self) -> EditLogError {
        let detail = self
            .failed()
            .iter()
            .map(|(p, why)| format!("{}: {why}", p.display()))
            .collect::<Vec<_>>()
            .join("; ");
        EditLogError::NoDirectoriesLeft { detail }
    }

    /// Takes the directory whose `current/` is `current` out of service, with an error log line.
    pub fn mark_failed(&self, current: &Path, why: &str) {
        for d in &self.inner.dirs {
            if d.current == current {
                let mut f = d.failure.lock();
                if f.is_none() {
                    tracing::error!(
                        dir = %current.display(),
                        "storage directory failed and is taken out of service: {why}"
                    );
                    *f = Some(why.to_string());
                }
            }
        }
    }

    /// Writes `name` in `dir` atomically: temp file, sync, rename, directory sync.
    pub(crate) fn write_atomic(&self, dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
        let fs = self.fs();
        let tmp = dir.join(format!("{name}.tmp"));
        let dst = dir.join(name);
        let mut f = fs
            .create(&tmp)
            .map_err(|e| EditLogError::io("create", &tmp, e))?;
        f.write_all(bytes)
            .map_err(|e| EditLogError::io("write", &tmp, e))?;
        f.sync().map_err(|e| EditLogError::io("sync", &tmp, e))?;
        drop(f);
        fs.rename(&tmp, &dst)
            .map_err(|e| EditLogError::io("rename", &tmp, e))?;
        fs.sync_dir(dir)
            .map_err(|e| EditLogError::io("sync directory", dir, e))
    }

    /// Runs `op` on every active `current/`; a directory where it fails is taken out of
    /// service. Errors when no directory succeeded.
    pub(crate) fn for_each_active(
        &self,
        what: &str,
        mut op: impl FnMut(&Path) -> Result<()>,
    ) -> Result<()> {
        let mut ok = 0;
        for dir in self.active_or_err()? {
            match op(&dir) {
                Ok(()) => ok += 1,
                Err(e) => self.mark_failed(&dir, &format!("{what}: {e}")),
            }
        }
        if ok == 0 {
            return Err(self.none_left());
        }
        Ok(())
    }

    /// Creates `current/` with a VERSION file and `seen_txid` 0 in every directory.
    /// Refuses a directory whose `current/` is not empty unless `force`, which empties it.
    /// All directories are checked before any is touched. The caller then saves the empty
    /// namespace as image 0.
    pub fn format(&self, version: &StorageVersion, force: bool) -> Result<()> {
        let fs = self.fs().clone();
        for d in &self.inner.dirs {
            if fs.exists(&d.current) {
                let names = fs
                    .list_dir(&d.current)
                    .map_err(|e| EditLogError::io("list", &d.current, e))?;
                if !names.is_empty() && !force {
                    return Err(EditLogError::AlreadyFormatted(d.root.clone()));
                }
            }
        }
        for d in &self.inner.dirs {
            if fs.exists(&d.current) {
                std::fs::remove_dir_all(&d.current)
                    .map_err(|e| EditLogError::io("remove", &d.current, e))?;
            }
            fs.create_dir_all(&d.current)
                .map_err(|e| EditLogError::io("create directory", &d.current, e))?;
            self.write_atomic(&d.current, VERSION_FILE, version.to_text().as_bytes())?;
            self.write_atomic(&d.current, SEEN_TXID_FILE, b"0\n")?;
            fs.sync_dir(&d.root)
                .map_err(|e| EditLogError::io("sync directory", &d.root, e))?;
            *d.failure.lock() = None;
            tracing::info!(dir = %d.root.display(), "formatted storage directory");
        }
        Ok(())
    }

    /// Takes an exclusive lock (`<root>/in_use.lock`) on every root so that no second
    /// NameNode uses the same directories; the lock goes with the returned guard or the
    /// process. Errors with [`EditLogError::Locked`] when another holder exists. Locks are
    /// per open file, so a second call in the same process also fails while the first
    /// guard lives.
    pub fn lock(&self) -> Result<StorageLock> {
        let mut files = Vec::new();
        for d in &self.inner.dirs {
            std::fs::create_dir_all(&d.root)
                .map_err(|e| EditLogError::io("create directory", &d.root, e))?;
            let path = d.root.join(LOCK_FILE);
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| EditLogError::io("open", &path, e))?;
            match f.try_lock() {
                Ok(()) => files.push(f),
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(EditLogError::Locked(d.root.clone()));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(EditLogError::io("lock", &path, e));
                }
            }
        }
        Ok(StorageLock { _files: files })
    }

    /// Whether any directory has a `current/VERSION`.
    pub fn is_formatted(&self) -> bool {
        self.inner
            .dirs
            .iter()
            .any(|d| self.fs().exists(&d.current.join(VERSION_FILE)))
    }

    /// The VERSION of the first active directory. Directories without one (an unformatted
    /// directory added to the list) are taken out of service with a log line; a VERSION that
    /// differs from the first one found is too.
    pub fn read_version(&self) -> Result<StorageVersion> {
        let mut found: Option<StorageVersion> = None;
        let mut first_err = None;
        for dir in self.active() {
            let path = dir.join(VERSION_FILE);
            let res = self
                .fs()
                .read(&path)
                .map_err(|e| EditLogError::io("read", &path, e))
                .and_then(|bytes| {
                    let text = String::from_utf8_lossy(&bytes);
                    StorageVersion::parse(&text).map_err(|reason| EditLogError::BadVersion {
                        path: path.clone(),
                        reason,
                    })
                });
            match (res, &found) {
                (Ok(v), None) => found = Some(v),
                (Ok(v), Some(f)) if v.namespace_id != f.namespace_id => self.mark_failed(
                    &dir,
                    &format!(
                        "VERSION namespaceID {} differs from {}",
                        v.namespace_id, f.namespace_id
                    ),
                ),
                (Ok(_), Some(_)) => {}
                (Err(e), _) => {
                    self.mark_failed(&dir, &e.to_string());
                    first_err.get_or_insert(e);
                }
            }
        }
        match (found, first_err) {
            (Some(v), _) => Ok(v),
            (None, Some(EditLogError::Io { source, .. }))
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                Err(EditLogError::NotFormatted(self.inner.dirs[0].root.clone()))
            }
            (None, Some(e)) => Err(e),
            (None, None) => Err(self.none_left()),
        }
    }

    /// Rewrites VERSION atomically in every active directory.
    pub fn write_version(&self, version: &StorageVersion) -> Result<()> {
        let text = version.to_text();
        self.for_each_active("write VERSION", |dir| {
            self.write_atomic(dir, VERSION_FILE, text.as_bytes())
        })
    }

    /// The largest `seen_txid` among active directories (0 when none has one).
    pub fn read_seen_txid(&self) -> u64 {
        self.active()
            .iter()
            .filter_map(|dir| {
                let bytes = self.fs().read(&dir.join(SEEN_TXID_FILE)).ok()?;
                String::from_utf8_lossy(&bytes).trim().parse::<u64>().ok()
            })
            .max()
            .unwrap_or(0)
    }

    /// Writes `seen_txid` atomically in every active directory.
    pub fn write_seen_txid(&self, txid: u64) -> Result<()> {
        let text = format!("{txid}\n");
        self.for_each_active("write seen_txid", |dir| {
            self.write_atomic(dir, SEEN_TXID_FILE, text.as_bytes())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_is_exclusive() {
        let t = tempfile::tempdir().unwrap();
        let dirs = StorageDirs::new(vec![t.path().join("a"), t.path().join("b")]).unwrap();
        let guard = dirs.lock().unwrap();
        assert!(matches!(dirs.lock(), Err(EditLogError::Locked(_))));
        drop(guard);
        let _again = dirs.lock().unwrap();
    }

    #[test]
    fn conf_entries() {
        assert_eq!(
            entry_to_path("file:///a/b").ok(),
            Some(PathBuf::from("/a/b"))
        );
        assert_eq!(entry_to_path("file:/a").ok(), Some(PathBuf::from("/a")));
        assert_eq!(entry_to_path("/x").ok(), Some(PathBuf::from("/x")));
        assert!(entry_to_path("hdfs://nn/x").is_err());
        let mut conf = Configuration::new();
        conf.set(keys::DFS_NAMENODE_NAME_DIR_KEY, "file:///n1, /n2");
        let dirs = StorageDirs::from_conf(&conf).map(|d| d.roots()).ok();
        assert_eq!(dirs, Some(vec![PathBuf::from("/n1"), PathBuf::from("/n2")]));
    }

    #[test]
    fn format_version_and_seen_txid() -> Result<()> {
        let t = tempfile::tempdir().map_err(|e| EditLogError::io("tempdir", "/tmp", e))?;
        let roots = vec![t.path().join("a"), t.path().join("b")];
        let dirs = StorageDirs::new(roots.clone())?;
        assert!(!dirs.is_formatted());
        assert!(matches!(
            dirs.read_version(),
            Err(EditLogError::NotFormatted(_))
        ));
        let v = StorageVersion::new(7, "CID-1", "BP-1", 0);
        dirs.format(&v, false)?;
        assert!(dirs.is_formatted());
        assert_eq!(dirs.read_version()?, v);
        assert_eq!(dirs.read_seen_txid(), 0);
        dirs.write_seen_txid(17)?;
        assert_eq!(dirs.read_seen_txid(), 17);
        // A second format without force is refused, with force it starts over.
        let again = StorageDirs::new(roots)?;
        assert!(matches!(
            again.format(&v, false),
            Err(EditLogError::AlreadyFormatted(_))
        ));
        let w = StorageVersion::new(8, "CID-2", "BP-2", 0);
        again.format(&w, true)?;
        assert_eq!(again.read_version()?, w);
        assert_eq!(again.read_seen_txid(), 0);
        Ok(())
    }
}
