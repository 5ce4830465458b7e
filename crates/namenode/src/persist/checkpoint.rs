//! Checkpoints: an image of the namespace written beside the edit log, then a purge of
//! the segments no retained image needs.
//!
//! The periodic checkpoint is built the way a Secondary/Standby NameNode builds one, off
//! the live namespace: on a blocking thread the log is rolled (every edit up to `T` is
//! then in finalized segments), the newest image is loaded into a private [`Namespace`],
//! the finalized edits after it up to `T` are replayed with the start-up replay code, and
//! the result is saved as the image for `T`. The namespace lock is never taken; the only
//! state shared with the serving NameNode is the edit log's roll and its finalized files.
//! saveNamespace (safe mode: no mutations) takes the same path once its edits are
//! synced, so an image of a large namespace never blocks readers either.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rhdfs_conf::clock::SharedClock;
use tokio::task::JoinHandle;

use super::{Durable, PersistError};
use crate::edit_codec;

/// When the NameNode checkpoints on its own.
#[derive(Debug, Clone, Copy)]
pub struct CheckpointPolicy {
    /// `dfs.namenode.checkpoint.period`.
    pub period: Duration,
    /// `dfs.namenode.checkpoint.txns`.
    pub txns: u64,
    /// How often the triggers are looked at (`dfs.namenode.checkpoint.check.period`).
    pub check: Duration,
}

/// What one checkpoint did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointStats {
    /// The txid the saved image covers.
    pub txid: u64,
    /// The txid of the image it was built from (equal to `txid` when nothing was saved
    /// because no edit came after the newest image).
    pub base_txid: u64,
    /// Edits replayed onto the base image.
    pub replayed: u64,
    /// Inodes in the image.
    pub inodes: usize,
    /// Size of the image payload in bytes.
    pub bytes: usize,
    /// Wall time the checkpoint took (by the injected clock).
    pub elapsed: Duration,
}

/// The namespace rebuilt off the live one, encoded.
struct BuiltImage {
    base_txid: u64,
    replayed: u64,
    inodes: usize,
    payload: Vec<u8>,
}

impl Durable {
    /// The periodic checkpoint, off the live namespace (see the module docs): rolls the
    /// log, rebuilds the namespace up to the roll from the newest image and the finalized
    /// edits, saves it and purges. Never takes the namespace lock. A damaged segment or an
    /// edit that does not replay fails it without saving anything; the NameNode goes on
    /// serving. One checkpoint at a time.
    pub async fn checkpoint(self: &Arc<Self>) -> Result<CheckpointStats, PersistError> {
        let _one = self.checkpointing.lock().await;
        let me = self.clone();
        tokio::task::spawn_blocking(move || -> Result<CheckpointStats, PersistError> {
            let upto = me.log.roll()?.saturating_sub(1);
            me.checkpoint_upto(upto)
        })
        .await
        .map_err(|e| PersistError::Task(e.to_string()))?
    }

    /// Saves the image for `upto`, every txid up to which must be in finalized segments,
    /// built from the newest image and the edits after it; then purges. Blocking; the
    /// caller serializes checkpoints.
    pub(crate) fn checkpoint_upto(&self, upto: u64) -> Result<CheckpointStats, PersistError> {
        let started = self.clock.monotonic();
        let built = self.build_image(upto)?;
        let mut stats = CheckpointStats {
            txid: upto,
            base_txid: built.base_txid,
            replayed: built.replayed,
            inodes: built.inodes,
            bytes: built.payload.len(),
            elapsed: Duration::ZERO,
        };
        if built.base_txid == upto {
            tracing::debug!(
                txid = upto,
                "no edits since the newest image; no checkpoint"
            );
            return Ok(stats);
        }
        self.save_and_purge(upto, &built.payload)?;
        stats.elapsed = self.clock.monotonic().saturating_sub(started);
        tracing::info!(
            txid = upto,
            base_txid = stats.base_txid,
            replayed = stats.replayed,
            inodes = stats.inodes,
            bytes = stats.bytes,
            elapsed_ms = stats.elapsed.as_millis() as u64,
            "checkpoint saved (built off the live namespace)"
        );
        Ok(stats)
    }

    /// Loads the newest image into a private namespace, replays the finalized edits after
    /// it up to `upto` (as start-up does) and encodes the result. The private namespace
    /// is dropped before this returns: only the payload stays. Blocking.
    fn build_image(&self, upto: u64) -> Result<BuiltImage, PersistError> {
        let Some((base_txid, image)) = self.images.load_latest_image()? else {
            return Err(PersistError::Checkpoint(
                "no image to build a checkpoint from".into(),
            ));
        };
        if base_txid > upto {
            return Err(PersistError::Checkpoint(format!(
                "the newest image (txid {base_txid}) is past the edits finalized (txid {upto})"
            )));
        }
        let mut ns = self.namespace_from_image(base_txid, &image)?;
        drop(image);
        let mono = self.clock.monotonic();
        let replayed = self
            .log
            .read_finalized::<PersistError>(base_txid, upto, |at, rec| {
                let bad = |reason: String| {
                    let err = PersistError::RecordAt {
                        path: at.path.to_path_buf(),
                        offset: at.offset,
                        txid: rec.txid,
                        reason,
                    };
                    tracing::error!("checkpoint replay: {err}");
                    err
                };
                let op = edit_codec::decode(&rec.payload).map_err(|e| bad(e.to_string()))?;
                ns.replay(&op, rec.txid, mono)
                    .map_err(|e| bad(e.to_string()))
            })
            .inspect_err(|e| {
                if let PersistError::EditLog(e) = e {
                    tracing::error!("checkpoint replay: {e}");
                }
            })?;
        if ns.last_txid() != upto {
            return Err(PersistError::Checkpoint(format!(
                "replay ended at txid {} instead of {upto}",
                ns.last_txid()
            )));
        }
        let (_, payload) = ns.encode_image();
        let inodes = ns.total_files_and_dirs();
        drop(ns);
        Ok(BuiltImage {
            base_txid,
            replayed,
            inodes,
            payload,
        })
    }

    /// Saves `payload` as the image for `txid` (temp file, fsync, rename in every
    /// directory), then removes the segments no retained image needs. Blocking.
    fn save_and_purge(&self, txid: u64, payload: &[u8]) -> Result<(), PersistError> {
        self.images.save_image(txid, payload)?;
        self.saved.send_replace(txid);
        if let Some(oldest) = self.images.oldest_retained_txid() {
            self.log.purge_before(oldest + 1)?;
        }
        Ok(())
    }

    /// saveNamespace's skip rule (Hadoop's FSImage.saveNamespace with a time window or a
    /// transaction gap, as `dfsadmin -saveNamespace -beforeShutdown` sends them): true
    /// when the newest image was written at most `time_window` ago and is at most `tx_gap`
    /// transactions behind the log. Both zero: never (an image is always saved).
    pub fn checkpoint_is_recent(&self, time_window: Duration, tx_gap: u64) -> bool {
        if time_window.is_zero() && tx_gap == 0 {
            return false;
        }
        let Some((txid, written_ms)) = self.images.newest_image_written() else {
            return false;
        };
        let age_ms = self.clock.now_millis().saturating_sub(written_ms);
        let window_ms = u64::try_from(time_window.as_millis()).unwrap_or(u64::MAX);
        age_ms <= window_ms && txid >= self.log.last_txid().saturating_sub(tx_gap)
    }

    /// The txid of the newest image.
    pub fn newest_image_txid(&self) -> u64 {
        self.images.image_txids().into_iter().max().unwrap_or(0)
    }
}

/// Checkpoints every `policy.period`, or sooner once `policy.txns` edits accumulated
/// since the newest image, until `stop`. A failed checkpoint is logged and retried no
/// sooner than one period later.
pub fn spawn_checkpointer(
    durable: Arc<Durable>,
    policy: CheckpointPolicy,
    clock: SharedClock,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    tokio::spawn(tracing::Instrument::in_current_span(async move {
        let mut last_time = clock.monotonic();
        let mut retry_at: Option<Duration> = None;
        loop {
            tokio::time::sleep(policy.check).await;
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let now = clock.monotonic();
            if retry_at.is_some_and(|at| now < at) {
                continue;
            }
            let since = durable
                .log
                .last_txid()
                .saturating_sub(durable.newest_image_txid());
            let due = since >= policy.txns
                || (since > 0 && now.saturating_sub(last_time) >= policy.period);
            if !due {
                continue;
            }
            match durable.checkpoint().await {
                Ok(_) => {
                    last_time = clock.monotonic();
                    retry_at = None;
                }
                Err(e) => {
                    tracing::error!(
                        "checkpoint failed: {e}; the NameNode keeps serving, next try in {:?}",
                        policy.period
                    );
                    retry_at = Some(clock.monotonic() + policy.period);
                }
            }
        }
    }))
}
