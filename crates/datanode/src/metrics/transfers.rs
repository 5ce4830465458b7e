//! The DataNode's most recent block transfers, for its overview page: replicas read by
//! clients or other DataNodes, replicas received (client writes, pipelines, copies sent
//! here) and replicas this node copied out for the NameNode. A bounded ring: the oldest
//! entry goes when a new one comes past [`RECENT_TRANSFERS`].

use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;

/// How many transfers the ring keeps.
pub const RECENT_TRANSFERS: usize = 64;

/// Which way a replica went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferKind {
    /// READ_BLOCK served.
    Read,
    /// A replica received (WRITE_BLOCK) and closed.
    Write,
    /// A replica sent to another DataNode for the NameNode (DNA_TRANSFER).
    Replicate,
}

impl TransferKind {
    pub fn name(self) -> &'static str {
        match self {
            TransferKind::Read => "read",
            TransferKind::Write => "write",
            TransferKind::Replicate => "replicate",
        }
    }
}

/// One finished transfer.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer {
    pub kind: TransferKind,
    /// The other end: the reader or writer's address, or the copy's target(s).
    pub peer: String,
    pub block_id: u64,
    /// Bytes sent (reads, copies) or the replica's length once received (writes).
    pub bytes: u64,
    /// How long the op took.
    pub took: Duration,
    /// When it ended (wall clock).
    pub ended: SystemTime,
}

/// The ring of recent transfers.
#[derive(Debug, Default)]
pub struct RecentTransfers {
    ring: Mutex<VecDeque<Transfer>>,
}

impl RecentTransfers {
    /// Adds a transfer that ended now.
    pub fn record(
        &self,
        kind: TransferKind,
        peer: String,
        block_id: u64,
        bytes: u64,
        took: Duration,
    ) {
        let t = Transfer {
            kind,
            peer,
            block_id,
            bytes,
            took,
            ended: SystemTime::now(),
        };
        let mut ring = self.ring.lock();
        if ring.len() == RECENT_TRANSFERS {
            ring.pop_front();
        }
        ring.push_back(t);
    }

    /// The transfers kept, the newest first.
    pub fn newest_first(&self) -> Vec<Transfer> {
        self.ring.lock().iter().rev().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_up_to_the_bound() {
        let r = RecentTransfers::default();
        for id in 0..(RECENT_TRANSFERS as u64 + 5) {
            r.record(
                TransferKind::Read,
                "10.0.0.1:4000".into(),
                id,
                id * 10,
                Duration::ZERO,
            );
        }
        let got = r.newest_first();
        assert_eq!(got.len(), RECENT_TRANSFERS);
        assert_eq!(got[0].block_id, RECENT_TRANSFERS as u64 + 4);
        assert_eq!(got[RECENT_TRANSFERS - 1].block_id, 5);
        assert_eq!(got[0].bytes, got[0].block_id * 10);
    }
}
