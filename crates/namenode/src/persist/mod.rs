//! Durability of the namespace: the edit log behind the [`Journal`] seam, format, start
//! (newest image + replay of the edits after it) and checkpoints.
//!
//! Every mutation appends its op (under the namespace lock, so log order is apply order);
//! the RPC layer then waits for [`rhdfs_editlog::EditLog::sync_async`] before it answers
//! (see `Namesystem::sync_edits`). The periodic checkpoint is built off the live
//! namespace on a blocking thread (roll, newest image + finalized edits into a private
//! namespace, save, purge: see `checkpoint`), so the NameNode keeps serving while it is
//! built and written; saveNamespace encodes the live namespace under the lock.

mod checkpoint;
mod install;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::{Configuration, keys};
use rhdfs_editlog::{
    EditLog, EditLogError, ImageStore, RecoveryMode, StorageDirs, StorageLock, StorageVersion,
};

pub use checkpoint::{CheckpointPolicy, CheckpointStats, spawn_checkpointer};

use crate::edit::{EditOp, Journal};
use crate::edit_codec;
use crate::error::{FsError, FsResult};
use crate::namespace::{ImageDecodeError, Namespace, NamespaceConfig, Now, SyntheticSpec};
use crate::startup::{Phase, StartupProgress};

/// Why the name directories could not be formatted, loaded or written.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("{0}")]
    EditLog(#[from] EditLogError),
    #[error("image {txid}: {source}")]
    Image { txid: u64, source: ImageDecodeError },
    #[error("edit record txid {txid} cannot be decoded: {reason}")]
    BadRecord { txid: u64, reason: String },
    #[error("edit record txid {txid} cannot be replayed: {reason}")]
    Replay { txid: u64, reason: String },
    /// A record a checkpoint replays does not decode or apply.
    #[error("edit record txid {txid} in {} at byte offset {offset}: {reason}", path.display())]
    RecordAt {
        path: PathBuf,
        offset: u64,
        txid: u64,
        reason: String,
    },
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    #[error("name directory {0} is not formatted and not empty")]
    NotFormatted(String),
    #[error("background task failed: {0}")]
    Task(String),
}

/// The journal that makes the namespace durable: each applied op becomes one edit-log
/// record (buffered; the caller syncs before acknowledging).
#[derive(Debug)]
pub struct EditLogJournal {
    log: EditLog,
}

impl EditLogJournal {
    pub fn new(log: EditLog) -> Self {
        EditLogJournal { log }
    }
}

impl Journal for EditLogJournal {
    fn record(&mut self, op: &EditOp) -> FsResult<u64> {
        self.log.append(&edit_codec::encode(op)).map_err(|e| {
            tracing::error!("cannot log a namespace edit: {e}");
            FsError::Io(format!("cannot log the edit: {e}"))
        })
    }
}

/// The open storage of a running NameNode: the edit log, the image store and the
/// directory locks.
#[derive(Debug)]
pub struct Durable {
    log: EditLog,
    images: ImageStore,
    version: StorageVersion,
    lock: Mutex<Option<StorageLock>>,
    /// Serializes checkpoints.
    checkpointing: tokio::sync::Mutex<()>,
    /// What a checkpoint's private namespace is built with.
    ns_cfg: NamespaceConfig,
    clock: SharedClock,
    /// The txid of the newest image saved while running (checkpoints, installed images).
    saved: tokio::sync::watch::Sender<u64>,
}

impl Durable {
    pub fn log(&self) -> &EditLog {
        &self.log
    }

    pub fn images(&self) -> &ImageStore {
        &self.images
    }

    /// Follows the txid of the newest image saved (an HA member snapshots its Raft log at
    /// each one).
    pub fn images_saved(&self) -> tokio::sync::watch::Receiver<u64> {
        self.saved.subscribe()
    }

    /// A namespace of its own loaded from the image `payload` at `txid` (a checkpoint's
    /// private namespace, an installed image). Blocking.
    pub fn namespace_from_image(
        &self,
        txid: u64,
        payload: &[u8],
    ) -> Result<Namespace, PersistError> {
        let mono = self.clock.monotonic();
        let mut ns = Namespace::new(
            self.ns_cfg.clone(),
            Now {
                wall_ms: self.clock.now_millis(),
                mono,
            },
        );
        ns.load_image(payload, mono)
            .map_err(|source| PersistError::Image { txid, source })?;
        ns.set_last_txid(txid);
        Ok(ns)
    }

    pub fn version(&self) -> &StorageVersion {
        &self.version
    }

    /// Waits until every record appended so far is durable.
    pub async fn sync_all(&self) -> Result<(), EditLogError> {
        self.log.sync_async(self.log.last_txid()).await
    }

    /// Syncs and closes the log and releases the directory locks (blocking).
    pub fn close(&self) {
        if let Err(e) = self.log.close() {
            tracing::error!("closing the edit log: {e}");
        }
        self.lock.lock().take();
    }

    /// Releases the directory locks without closing the log, as a crashed process would
    /// (tests restart a NameNode in the same process this way).
    pub fn abandon(&self) {
        self.lock.lock().take();
    }
}

/// The hostname part of the block pool id.
fn pool_host(host: &str) -> String {
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) if !ip.is_unspecified() => ip.to_string(),
        _ => "127.0.0.1".to_string(),
    }
}

fn is_empty_or_missing(dir: &Path) -> bool {
    match std::fs::read_dir(dir) {
        Ok(mut it) => it.all(|e| {
            e.map(|e| e.file_name() == rhdfs_editlog::LOCK_FILE)
                .unwrap_or(false)
        }),
        Err(_) => true,
    }
}

/// `namenode -format`: a new namespace identity and an empty image at txid 0 in every
/// name directory; refuses directories holding a namespace unless `force`. Blocking.
pub fn format(
    conf: &Configuration,
    clock: &SharedClock,
    ns_cfg: NamespaceConfig,
    force: bool,
) -> Result<StorageVersion, PersistError> {
    let dirs = StorageDirs::from_conf(conf)?;
    let _lock = dirs.lock()?;
    format_locked(conf, clock, &dirs, ns_cfg, force, None)
}

/// `format`, with `spec`'s synthetic files in the first image instead of an empty
/// namespace (benchmarks: a NameNode with millions of files without creating them).
pub fn format_synthetic(
    conf: &Configuration,
    clock: &SharedClock,
    ns_cfg: NamespaceConfig,
    spec: &SyntheticSpec,
    force: bool,
) -> Result<StorageVersion, PersistError> {
    let dirs = StorageDirs::from_conf(conf)?;
    let _lock = dirs.lock()?;
    format_locked(conf, clock, &dirs, ns_cfg, force, Some(spec))
}

fn format_locked(
    conf: &Configuration,
    clock: &SharedClock,
    dirs: &StorageDirs,
    ns_cfg: NamespaceConfig,
    force: bool,
    synthetic: Option<&SyntheticSpec>,
) -> Result<StorageVersion, PersistError> {
    let host = rhdfs_conf::addr::namenode_rpc_address(conf)
        .map(|(h, _)| pool_host(&h))
        .unwrap_or_else(|_| "127.0.0.1".into());
    let version = StorageVersion::generate(clock, None, &host);
    dirs.format(&version, force)?;
    let now = Now {
        wall_ms: clock.now_millis(),
        mono: clock.monotonic(),
    };
    let (txid, payload) = match synthetic {
        Some(spec) => (0, spec.image(ns_cfg, now)),
        None => Namespace::new(ns_cfg, now).encode_image(),
    };
    ImageStore::from_conf(dirs.clone(), conf)?.save_image(txid, &payload)?;
    tracing::info!(
        cluster = %version.cluster_id,
        pool = %version.block_pool_id,
        "formatted the namespace"
    );
    Ok(version)
}

/// Start-up: locks the name directories (formatting them when all are empty), loads the
/// newest image, recovers the edit log in `mode` and replays the edits after the image.
/// The returned namespace journals to the log. Blocking.
pub fn load(
    conf: &Configuration,
    clock: &SharedClock,
    ns_cfg: NamespaceConfig,
    mode: RecoveryMode,
) -> Result<(Arc<Durable>, Namespace), PersistError> {
    let progress = StartupProgress::new(clock.clone());
    load_reporting(conf, clock, ns_cfg, mode, &progress)
}

/// [`load`], reporting the image and edits loaded into `progress` (inodes loaded of the
/// image's count, edits replayed of those read back; no checkpoint is saved at start-up, so
/// that phase begins and ends at once, as in Hadoop when none is needed).
pub fn load_reporting(
    conf: &Configuration,
    clock: &SharedClock,
    ns_cfg: NamespaceConfig,
    mode: RecoveryMode,
    progress: &StartupProgress,
) -> Result<(Arc<Durable>, Namespace), PersistError> {
    let dirs = StorageDirs::from_conf(conf)?;
    let lock = dirs.lock()?;
    if !dirs.is_formatted() {
        if let Some(d) = dirs.roots().iter().find(|d| !is_empty_or_missing(d)) {
            return Err(PersistError::NotFormatted(d.display().to_string()));
        }
        format_locked(conf, clock, &dirs, ns_cfg.clone(), false, None)?;
    }
    let version = dirs.read_version()?;
    let images = ImageStore::from_conf(dirs.clone(), conf)?;
    let mono = clock.monotonic();
    let mut ns = Namespace::new(
        ns_cfg.clone(),
        Now {
            wall_ms: clock.now_millis(),
            mono,
        },
    );
    progress.begin(Phase::LoadingFsImage);
    let image_txid = match images.load_latest_image()? {
        Some((txid, payload)) => {
            let mut total = |n| progress.set_total(Phase::LoadingFsImage, n);
            let loaded = progress.counter(Phase::LoadingFsImage);
            ns.load_image_counted(&payload, mono, &mut total, loaded)
                .map_err(|source| PersistError::Image { txid, source })?;
            ns.set_last_txid(txid);
            txid
        }
        None => 0,
    };
    progress.end(Phase::LoadingFsImage);
    progress.begin(Phase::LoadingEdits);
    let (log, records) = EditLog::open(dirs, image_txid, mode)?;
    let replayed = records.len();
    progress.set_total(Phase::LoadingEdits, replayed as u64);
    let applied = progress.counter(Phase::LoadingEdits);
    for rec in records {
        let op = edit_codec::decode(&rec.payload).map_err(|e| PersistError::BadRecord {
            txid: rec.txid,
            reason: e.to_string(),
        })?;
        ns.replay(&op, rec.txid, mono)
            .map_err(|e| PersistError::Replay {
                txid: rec.txid,
                reason: e.to_string(),
            })?;
        applied.fetch_add(1, Ordering::Relaxed);
    }
    progress.end(Phase::LoadingEdits);
    progress.end(Phase::SavingCheckpoint);
    ns.set_last_txid(ns.last_txid().max(log.last_txid()));
    tracing::info!(
        image_txid,
        replayed,
        last_txid = ns.last_txid(),
        inodes = ns.total_files_and_dirs(),
        blocks = ns.total_blocks(),
        "namespace loaded"
    );
    ns.set_journal(Box::new(EditLogJournal::new(log.clone())));
    Ok((
        Arc::new(Durable {
            log,
            images,
            version,
            lock: Mutex::new(Some(lock)),
            checkpointing: tokio::sync::Mutex::new(()),
            ns_cfg,
            clock: clock.clone(),
            saved: tokio::sync::watch::Sender::new(image_txid),
        }),
        ns,
    ))
}

/// The checkpoint triggers from the configuration.
pub fn checkpoint_policy(conf: &Configuration) -> Result<CheckpointPolicy, rhdfs_conf::ConfError> {
    let period = conf.get_duration(
        keys::DFS_NAMENODE_CHECKPOINT_PERIOD_KEY,
        keys::DFS_NAMENODE_CHECKPOINT_PERIOD_DEFAULT,
        keys::DFS_NAMENODE_CHECKPOINT_PERIOD_UNIT,
    )?;
    let txns = conf.get_u64(
        keys::DFS_NAMENODE_CHECKPOINT_TXNS_KEY,
        keys::DFS_NAMENODE_CHECKPOINT_TXNS_DEFAULT,
    )?;
    let check = conf.get_duration(
        keys::DFS_NAMENODE_CHECKPOINT_CHECK_PERIOD_KEY,
        keys::DFS_NAMENODE_CHECKPOINT_CHECK_PERIOD_DEFAULT,
        keys::DFS_NAMENODE_CHECKPOINT_CHECK_PERIOD_UNIT,
    )?;
    Ok(CheckpointPolicy {
        period,
        txns: txns.max(1),
        check: check.min(period).max(Duration::from_millis(10)),
    })
}

#[cfg(test)]
mod tests;
