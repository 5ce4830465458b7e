//! Hedged read counters (DFSHedgedReadMetrics' hedgedReadOps and hedgedReadOpsWin), kept
//! by the FileSystem and counted by positioned reads (`read/pread.rs`).

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub(crate) struct HedgeStats {
    ops: AtomicU64,
    wins: AtomicU64,
}

impl HedgeStats {
    /// (hedged reads started, hedged reads that answered first).
    pub(crate) fn get(&self) -> (u64, u64) {
        (
            self.ops.load(Ordering::Relaxed),
            self.wins.load(Ordering::Relaxed),
        )
    }

    /// A hedged read was started.
    pub(crate) fn started(&self) {
        self.ops.fetch_add(1, Ordering::Relaxed);
    }

    /// A hedged read answered before the first.
    pub(crate) fn won(&self) {
        self.wins.fetch_add(1, Ordering::Relaxed);
    }
}
