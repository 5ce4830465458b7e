//! What the DataNode did (Hadoop's DataNodeActivity): bytes and blocks read and written,
//! blocks copied for the NameNode, how long each data transfer op and each
//! call to the NameNode took, when the last heartbeat and full report went, and the recent
//! transfers. Atomics only, but for the small ring of recent transfers; shared by the
//! transfer server, the actor and the web port.

use std::sync::atomic::{AtomicU64, Ordering};

use rhdfs_metrics::Histogram;

use super::transfers::RecentTransfers;

/// The DataNode's activity counters since it started.
#[derive(Debug, Default)]
pub struct Activity {
    pub bytes_read: AtomicU64,
    pub bytes_written: AtomicU64,
    pub blocks_read: AtomicU64,
    pub blocks_written: AtomicU64,
    /// Replicas sent to another DataNode for the NameNode (DNA_TRANSFER).
    pub blocks_replicated: AtomicU64,
    /// Data transfer ops that failed on an I/O or protocol error.
    pub network_errors: AtomicU64,
    /// Volumes that failed while running (Hadoop's VolumeFailures counter).
    pub volume_failures: AtomicU64,
    /// Replicas the block scanner checked against their checksums (BlocksVerified).
    pub blocks_verified: AtomicU64,
    /// Replicas the block scanner found corrupt (BlockVerificationFailures).
    pub block_verification_failures: AtomicU64,
    pub read_block_op: Histogram,
    pub write_block_op: Histogram,
    pub block_checksum_op: Histogram,
    pub transfer_block_op: Histogram,
    /// sendHeartbeat, blockReport and blockReceivedAndDeleted round trips to the NameNode.
    pub heartbeats: Histogram,
    pub block_reports: Histogram,
    pub incremental_block_reports: Histogram,
    /// When the last heartbeat was answered, ms since the epoch (0: never).
    pub last_heartbeat_ms: AtomicU64,
    /// When the last full block report was answered, ms since the epoch (0: never).
    pub last_block_report_ms: AtomicU64,
    /// The latest reads, writes and copies, for the overview page.
    pub recent: RecentTransfers,
}

impl Activity {
    /// Adds `n` to counter `c`.
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// Sets `c` to `v`.
    pub fn set(c: &AtomicU64, v: u64) {
        c.store(v, Ordering::Relaxed);
    }

    /// Reads counter `c`.
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}
