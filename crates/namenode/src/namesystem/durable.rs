//! The namesystem's side of durability: syncing edits before answering, saveNamespace,
//! and handing loaded blocks to the block manager.

use std::sync::Arc;
use std::time::Duration;

use rhdfs_blockmanager::BlockUcState;

use super::{Namesystem, to_block};
use crate::error::{FsError, FsResult};
use crate::persist::Durable;

/// Inodes whose blocks `register_loaded_blocks` hands to the block manager per step.
const LOAD_STEP_INODES: usize = 1 << 16;

impl Namesystem {
    /// Joins the namesystem to its storage (once, at start).
    pub fn attach_durable(&self, durable: Arc<Durable>) {
        if self.durable.set(durable).is_err() {
            tracing::warn!("namesystem storage attached twice; keeping the first");
        }
    }

    /// Gives the namesystem the start-up progress its load reported into (once).
    pub fn attach_startup_progress(&self, progress: Arc<crate::startup::StartupProgress>) {
        if self.startup.set(progress).is_err() {
            tracing::warn!("start-up progress attached twice; keeping the first");
        }
    }

    /// The start-up progress, when the namesystem was started by `NameNode::start`.
    pub fn startup_progress(&self) -> Option<&Arc<crate::startup::StartupProgress>> {
        self.startup.get()
    }

    /// The clock the namesystem runs on.
    pub fn clock(&self) -> &rhdfs_conf::clock::SharedClock {
        &self.clock
    }

    /// The storage, when the namesystem has one.
    pub fn durable(&self) -> Option<&Arc<Durable>> {
        self.durable.get()
    }

    /// Waits until every edit appended so far is durable: called before a mutation is
    /// acknowledged. A failed sync means no name directory is left.
    pub async fn sync_edits(&self) -> FsResult<()> {
        if let Some(shipper) = self.shipper.get() {
            // HA: durable once a majority of the NameNodes has it (Raft commit).
            let last = self.with_ns(|ns| ns.last_txid());
            let committed = shipper.sync(last).await?;
            self.bm.set_last_txid(committed);
            return Ok(());
        }
        let Some(d) = self.durable.get() else {
            return Ok(());
        };
        match d.sync_all().await {
            Ok(()) => {
                self.bm.set_last_txid(d.log().synced_txid());
                Ok(())
            }
            Err(e) => {
                tracing::error!("edit log sync failed: {e}");
                Err(FsError::Io(format!("edit log sync failed: {e}")))
            }
        }
    }

    /// Waits until a mutation may be answered. A call that logged edits waits for the last
    /// of them (`logged`, from `namespace::call_txid`), which follows every edit its answer
    /// saw, since it logged under the namespace lock after seeing them: at once when its
    /// handler's commit synced them already, otherwise the group commit that holds them —
    /// not the next one, as waiting for every edit logged by anyone until now would under
    /// load. A call that logged nothing, and every call of an HA member (durable means
    /// committed by Raft there), waits for every edit logged so far (`sync_edits`).
    pub async fn sync_edits_to(&self, logged: Option<u64>) -> FsResult<()> {
        let (Some(txid), Some(d), false) = (logged, self.durable.get(), self.is_ha()) else {
            return self.sync_edits().await;
        };
        let log = d.log();
        if let Err(e) = log.sync_async(txid).await {
            tracing::error!("edit log sync failed: {e}");
            return Err(FsError::Io(format!("edit log sync failed: {e}")));
        }
        self.bm.set_last_txid(log.synced_txid());
        Ok(())
    }

    /// saveNamespace: an image of the namespace now, built as the periodic checkpoint is
    /// (off the live namespace, without its lock) once every edit is synced. Only in safe
    /// mode, as HDFS requires, so the image is the namespace as it stands. With a time
    /// window or a transaction gap (`-beforeShutdown`) nothing is saved while the newest
    /// image is recent enough; returns whether an image was saved.
    pub async fn save_namespace(&self, time_window: Duration, tx_gap: u64) -> FsResult<bool> {
        if !self.with_ns(|ns| ns.in_safe_mode()) {
            return Err(FsError::Io(
                "Safe mode should be turned ON in order to create namespace image.".into(),
            ));
        }
        let Some(d) = self.durable.get() else {
            return Err(FsError::Io("the NameNode has no storage".into()));
        };
        if d.checkpoint_is_recent(time_window, tx_gap) {
            tracing::info!(
                ?time_window,
                tx_gap,
                "saveNamespace: the newest image is recent enough; none saved"
            );
            return Ok(false);
        }
        self.sync_edits().await?;
        let stats = d
            .checkpoint()
            .await
            .map_err(|e| FsError::Io(format!("saveNamespace failed: {e}")))?;
        tracing::info!(txid = stats.txid, "namespace saved");
        Ok(true)
    }

    /// A checkpoint now, regardless of safe mode and built off the live namespace (the
    /// periodic checkpoint's path; never takes the namespace lock). Returns the txid of
    /// the newest image afterwards.
    pub async fn checkpoint_now(&self) -> FsResult<u64> {
        let Some(d) = self.durable.get() else {
            return Err(FsError::Io("the NameNode has no storage".into()));
        };
        d.checkpoint()
            .await
            .map(|s| s.txid)
            .map_err(|e| FsError::Io(format!("checkpoint failed: {e}")))
    }

    /// Tells the block manager every block of the loaded namespace: blocks of closed files
    /// are complete, the last block of an open file is under construction. Replicas come
    /// with the DataNodes' reports. The files are walked in steps of
    /// [`LOAD_STEP_INODES`] inodes, each handed to the block manager at once
    /// (`BlockManager::load_blocks`: one hold of its lock per few thousand blocks, where a
    /// hold per block read the clock three times per block).
    ///
    /// This ends the load: the image's bytes and the tables' growth are freed by now, and
    /// malloc would keep those pages (70 B per file at 300,000 files) for good, so they are
    /// given back to the kernel (once, a few ms).
    pub fn register_loaded_blocks(&self) -> usize {
        self.bm.reserve_blocks(self.with_ns(|ns| ns.total_blocks()));
        let mut after = None;
        let mut n = 0;
        let mut batch = Vec::new();
        loop {
            let (blocks, last) = self.with_ns(|ns| ns.loaded_blocks_after(after, LOAD_STEP_INODES));
            let Some(last) = last else { break };
            after = Some(last);
            batch.clear();
            batch.extend(blocks.iter().map(|b| {
                let state = BlockUcState::loaded(b.under_construction);
                (to_block(&b.block), b.replication, state)
            }));
            self.bm.load_blocks(&batch);
            n += batch.len();
        }
        drop(batch);
        rhdfs_http::release_free_memory();
        n
    }
}
