//! Effects after durability. A namespace mutation changes the in-memory namespace and
//! appends its edits under the namespace lock; what it causes outside the namespace —
//! replicas deleted, replication changed, held orphans released — must not happen until
//! those edits are on disk, or a crash in between would leave a namespace that still
//! has the file and DataNodes that already deleted it (Hadoop syncs the log before
//! removing a delete's blocks for the same reason).
//!
//! So a mutation returns [`Applied`]: its answer and its [`Effects`], which nothing but
//! [`Namesystem::commit`] can run, and `commit` syncs the edit log first. Both types are
//! `#[must_use]`, so dropping effects without committing is a compile-time warning (an
//! error under CI's clippy).

use std::time::Duration;

use super::Namesystem;
use crate::error::FsResult;

/// Work outside the namespace that may run only once the mutation's edits are durable
/// (a mutation causes at most one of these).
#[must_use = "effects run only through Namesystem::commit"]
#[derive(Debug, Default)]
pub enum Effects {
    #[default]
    None,
    /// Blocks of removed files: out of the blocks map, their replicas deleted.
    RemoveBlocks(Vec<u64>),
    /// An abandoned last block: out of the blocks map at once (the writer goes on).
    Abandon(u64),
    /// A new replication factor for these blocks (surplus replicas deleted): setReplication,
    /// and concat's blocks at the target's replication.
    SetReplication(Vec<u64>, u16),
    /// Every held orphan replica deleted (`dfsadmin -releaseOrphans`).
    ReleaseOrphans,
}

/// A mutation's answer with the effects that wait for its edits to be durable.
#[must_use = "a mutation is answered only through Namesystem::commit"]
#[derive(Debug)]
pub struct Applied<T> {
    /// The operation, for logs and the crash-before-sync fault hook.
    op: &'static str,
    value: T,
    effects: Effects,
}

impl<T> Applied<T> {
    pub fn new(op: &'static str, value: T, effects: Effects) -> Self {
        Applied { op, value, effects }
    }

    /// A mutation with nothing to do after the sync.
    pub fn plain(op: &'static str, value: T) -> Self {
        Applied::new(op, value, Effects::None)
    }
}

/// A test hook (`rhdfs.namenode.fault.crash-before-sync`): the process aborts after the
/// named operation appended its edits and before they are synced, as a machine that loses
/// power there would; `rhdfs.namenode.fault.crash-before-sync.delay.ms` first lets that long
/// pass, so anything that wrongly ran before the sync has time to reach a DataNode.
#[derive(Debug, Clone, Default)]
pub struct CrashBeforeSync {
    pub op: Option<String>,
    pub delay: Duration,
}

impl Namesystem {
    /// Makes every edit appended so far durable, then runs the effects and returns the
    /// answer. The only way a mutation's effects run.
    pub async fn commit<T>(&self, applied: Applied<T>) -> FsResult<T> {
        let Applied { op, value, effects } = applied;
        self.crash_before_sync_hook(op).await;
        self.sync_edits().await?;
        self.run_effects(effects);
        Ok(value)
    }

    fn run_effects(&self, effects: Effects) {
        match effects {
            Effects::None => {}
            Effects::RemoveBlocks(ids) => self.bm.remove_blocks(ids),
            Effects::Abandon(id) => self.bm.abandon_block(id),
            Effects::SetReplication(ids, replication) => self.bm.set_replication(&ids, replication),
            Effects::ReleaseOrphans => {
                self.bm.release_orphans(None);
            }
        }
    }

    async fn crash_before_sync_hook(&self, op: &str) {
        let hook = &self.settings.crash_before_sync;
        if hook.op.as_deref() != Some(op) {
            return;
        }
        tracing::error!(
            op,
            delay = ?hook.delay,
            "fault hook rhdfs.namenode.fault.crash-before-sync: aborting before the edit log sync"
        );
        tokio::time::sleep(hook.delay).await;
        std::process::abort();
    }
}
