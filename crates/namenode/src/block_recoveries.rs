//! Block recoveries in progress and the commands waiting for their primary DataNode's
//! heartbeat (Hadoop's PendingRecoveryBlocks and the recovery commands of a
//! DatanodeDescriptor), and the block recovery timeout. Plain state: `lease_recovery.rs`
//! starts and finishes recoveries through it; the namesystem owns one.

use std::collections::HashMap;
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_proto::datanode::RecoveringBlockProto;

/// Heartbeat intervals a block recovery may go unanswered before another is started
/// (Hadoop's BlockManager.BLOCK_RECOVERY_TIMEOUT_MULTIPLIER).
pub const BLOCK_RECOVERY_TIMEOUT_MULTIPLIER: u32 = 30;

/// The block recovery timeout for a `dfs.heartbeat.interval` (Hadoop's
/// getBlockRecoveryTimeout: 30 heartbeats, 90 s by default). Hadoop reads the interval
/// in whole seconds; a sub-second interval is kept as it is here rather than becoming 0.
pub fn block_recovery_timeout(heartbeat_interval: Duration) -> Duration {
    heartbeat_interval * BLOCK_RECOVERY_TIMEOUT_MULTIPLIER
}

#[derive(Debug, Clone)]
struct Recovery {
    recovery_id: u64,
    started: Duration,
    /// The DataNode told to run it (None: no live location when it was started).
    primary: Option<String>,
}

/// Recoveries in progress and the commands waiting for their primary's heartbeat.
#[derive(Debug, Default)]
pub struct BlockRecoveries {
    /// Held through a start, so the lease monitor and a recoverLease call cannot both
    /// start a recovery of one block (Hadoop does it under the namesystem write lock).
    starting: Mutex<()>,
    in_progress: Mutex<HashMap<u64, Recovery>>,
    pending: Mutex<HashMap<String, Vec<RecoveringBlockProto>>>,
}

impl BlockRecoveries {
    /// Held through a start, so two starts of one block's recovery cannot interleave.
    pub(crate) fn starting(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.starting.lock()
    }

    /// Records a started recovery (replacing an older one of the block).
    pub(crate) fn begin(
        &self,
        block_id: u64,
        recovery_id: u64,
        started: Duration,
        primary: Option<String>,
    ) {
        self.in_progress.lock().insert(
            block_id,
            Recovery {
                recovery_id,
                started,
                primary,
            },
        );
    }

    /// Queues a recovery command for DataNode `uuid`'s next heartbeat.
    pub(crate) fn queue(&self, uuid: String, cmd: RecoveringBlockProto) {
        self.pending.lock().entry(uuid).or_default().push(cmd);
    }

    /// The recovery id of the block's recovery in progress.
    pub fn recovery_id(&self, block_id: u64) -> Option<u64> {
        self.in_progress
            .lock()
            .get(&block_id)
            .map(|r| r.recovery_id)
    }

    /// Takes the commands waiting for DataNode `uuid`.
    pub fn take_commands(&self, uuid: &str) -> Vec<RecoveringBlockProto> {
        self.pending.lock().remove(uuid).unwrap_or_default()
    }

    /// The recovery of `block_id` started at or after `now - timeout`, with its primary.
    pub(crate) fn running(
        &self,
        block_id: u64,
        now: Duration,
        timeout: Duration,
    ) -> Option<Option<String>> {
        self.in_progress
            .lock()
            .get(&block_id)
            .filter(|r| now.saturating_sub(r.started) < timeout)
            .map(|r| r.primary.clone())
    }

    /// Forgets the recovery of `block_id` and any command for it not yet sent.
    pub(crate) fn finish(&self, block_id: u64) {
        self.in_progress.lock().remove(&block_id);
        self.drop_commands(block_id);
    }

    pub(crate) fn drop_commands(&self, block_id: u64) {
        let mut pending = self.pending.lock();
        pending.retain(|_, cmds| {
            cmds.retain(|c| c.block.b.block_id != block_id);
            !cmds.is_empty()
        });
    }
}
