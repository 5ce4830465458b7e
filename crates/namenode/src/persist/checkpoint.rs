//! Checkpoints: the image of the namespace written beside the edit log, then a roll and
//! a purge of the segments no retained image needs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rhdfs_conf::clock::SharedClock;
use tokio::task::JoinHandle;

use super::{Durable, PersistError};
use crate::namesystem::Namesystem;

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

impl Durable {
    /// Saves an image of the namespace as `encode` returns it (called under the namespace
    /// lock by the caller: one in-memory pass), once the edits it covers are durable; the
    /// file is written, the log rolled and old segments purged on a blocking thread.
    /// Returns the image's txid. One checkpoint at a time.
    pub async fn checkpoint(
        self: &Arc<Self>,
        encode: impl FnOnce() -> (u64, Vec<u8>),
    ) -> Result<u64, PersistError> {
        let _one = self.checkpointing.lock().await;
        let (txid, payload) = encode();
        self.log.sync_async(txid).await?;
        let me = self.clone();
        tokio::task::spawn_blocking(move || -> Result<u64, PersistError> {
            me.images.save_image(txid, &payload)?;
            me.log.roll()?;
            if let Some(oldest) = me.images.oldest_retained_txid() {
                let removed = me.log.purge_before(oldest + 1)?;
                tracing::info!(txid, bytes = payload.len(), removed, "checkpoint saved");
            }
            Ok(txid)
        })
        .await
        .map_err(|e| PersistError::Task(e.to_string()))?
    }

    /// The txid of the newest image.
    pub fn newest_image_txid(&self) -> u64 {
        self.images.image_txids().into_iter().max().unwrap_or(0)
    }
}

/// Checkpoints every `policy.period`, or sooner once `policy.txns` edits accumulated
/// since the newest image, until `stop`.
pub fn spawn_checkpointer(
    fs: Arc<Namesystem>,
    durable: Arc<Durable>,
    policy: CheckpointPolicy,
    clock: SharedClock,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut last_time = clock.monotonic();
        loop {
            tokio::time::sleep(policy.check).await;
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let since = durable
                .log
                .last_txid()
                .saturating_sub(durable.newest_image_txid());
            let due = since >= policy.txns
                || (since > 0 && clock.monotonic().saturating_sub(last_time) >= policy.period);
            if !due {
                continue;
            }
            match durable
                .checkpoint(|| fs.with_ns(|ns| ns.encode_image()))
                .await
            {
                Ok(_) => last_time = clock.monotonic(),
                Err(e) => tracing::error!("checkpoint failed: {e}"),
            }
        }
    })
}
