//! The namespace's side of held orphans (`rhdfs_blockmanager::orphans`) and of safe mode
//! actions: replicas from the future keep start-up safe mode on until `forceExit`, move the
//! block id and generation stamp counters past them (logged, so no new block reuses their
//! ids), and are deleted only when an operator releases them.

use rhdfs_blockmanager::OrphanCounts;

use super::{Applied, Effects, Namesystem};
use crate::edit::EditOp;
use crate::error::FsResult;
use crate::safemode::SafeModeAction;

/// Held replicas from the future for a namespace: how many, how many bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FutureReplicas {
    pub replicas: u64,
    pub bytes: u64,
}

impl FutureReplicas {
    /// The safe-mode text for them (Hadoop's "blocks with generation stamps in future"
    /// warning, with what rhdfs does instead of losing them).
    pub fn message(&self) -> String {
        format!(
            "Name node detected blocks with generation stamps in future. This means that Name \
             node metadata is inconsistent. This can happen if Name node metadata files have \
             been manually replaced. {} replica(s) with {} byte(s) are not in the namespace. \
             Please restart the NameNode with the right metadata, or use \"hdfs dfsadmin \
             -safemode forceExit\" if you are certain that the NameNode was started with the \
             correct FsImage and edit logs: rhdfs then keeps those replicas as held orphans \
             (\"rhdfs fsck / -list-orphans\") until \"rhdfs dfsadmin -releaseOrphans\".",
            self.replicas, self.bytes
        )
    }
}

impl Namesystem {
    /// Held replicas newer than the namespace's last generation stamp.
    pub fn future_replicas(&self) -> FutureReplicas {
        let gs = self.with_ns(|ns| ns.last_generation_stamp());
        let (replicas, bytes) = self.bm.orphans_above(gs);
        FutureReplicas { replicas, bytes }
    }

    pub fn orphan_counts(&self) -> OrphanCounts {
        self.bm.orphan_counts()
    }

    /// Logs `HoldOrphans` when held replicas from the future are beyond the block id or
    /// generation stamp counters; true when an edit was logged (the caller syncs).
    pub fn hold_future_orphans(&self) -> FsResult<bool> {
        let c = self.bm.orphan_counts();
        if c.future_replicas == 0 {
            return Ok(false);
        }
        let mono = self.now().mono;
        self.with_ns_op("hold_orphans", |ns| {
            match ns.hold_orphans_op(c.future_max_id, c.future_max_gs) {
                Some(op) => {
                    tracing::warn!(
                        ?op,
                        replicas = c.future_replicas,
                        bytes = c.future_bytes,
                        "holding replicas from the future: block id and generation stamp counters move past them"
                    );
                    ns.log_and_apply(op, mono)?;
                    Ok(true)
                }
                None => Ok(false),
            }
        })
    }

    /// `hold_future_orphans`, then a sync when it logged.
    pub async fn hold_future_orphans_durably(&self) -> FsResult<()> {
        if self.hold_future_orphans()? {
            self.sync_edits().await?;
        }
        Ok(())
    }

    /// dfsadmin -releaseOrphans: every held replica is deleted once the release (which
    /// drops the hold floor) is durable. Returns the replicas released.
    pub fn release_orphans(&self) -> FsResult<Applied<u64>> {
        let n = self.bm.orphan_counts().replicas;
        let mono = self.now().mono;
        self.with_ns_op("release_orphans", |ns| {
            if ns.orphan_floor().is_some() {
                ns.log_and_apply(EditOp::ReleaseOrphans, mono)?;
            }
            Ok::<_, crate::error::FsError>(())
        })?;
        tracing::warn!(replicas = n, "held orphan replicas released by an operator");
        Ok(Applied::new("release_orphans", n, Effects::ReleaseOrphans))
    }

    /// setSafeMode: ENTER, LEAVE (refused while replicas from the future are held in
    /// start-up safe mode, as Hadoop refuses without the force flag), FORCE_EXIT (holds
    /// those replicas, then leaves) or GET. Returns whether safe mode is on afterwards;
    /// the block manager follows at once.
    pub async fn safe_mode_action(&self, action: SafeModeAction) -> FsResult<bool> {
        match action {
            SafeModeAction::Get => {}
            SafeModeAction::Enter => self.with_ns(|ns| ns.set_manual_safe_mode(true)),
            SafeModeAction::Leave => {
                let future = self.future_replicas();
                let starting = self.with_ns(|ns| ns.startup_safe_mode_reason().is_some());
                if starting && future.replicas > 0 {
                    tracing::error!(
                        "Refusing to leave safe mode without a force flag. {}",
                        future.message()
                    );
                } else {
                    self.with_ns(|ns| ns.set_manual_safe_mode(false));
                }
            }
            SafeModeAction::ForceExit => {
                self.hold_future_orphans_durably().await?;
                self.with_ns(|ns| ns.set_manual_safe_mode(false));
            }
        }
        Ok(self.publish_safe_mode())
    }

    /// Tells the block manager whether the namespace is in safe mode; returns it.
    /// A standby's block manager stays in safe mode (no reconstruction, invalidation or
    /// excess work computed, no commands): the active decides those.
    pub fn publish_safe_mode(&self) -> bool {
        let on = self.with_ns(|ns| ns.in_safe_mode());
        let standby = self.role.get() != crate::ha::Role::Active;
        self.bm.set_safe_mode(on || standby);
        on
    }
}
