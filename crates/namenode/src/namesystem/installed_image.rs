//! A standby's namespace replaced by an installed image (HA: see `ha::apply`'s snapshots).

use rhdfs_blockmanager::{BlockUcState, ReloadSummary, ReloadedBlock};

use super::{Namesystem, to_block};
use crate::ha::ship::StandbyJournal;
use crate::namespace::Namespace;

impl Namesystem {
    /// Makes `ns` (loaded from an image this member installed) the namespace, journaling as
    /// a standby's does, and the block map follow it (`BlockManager::reload_blocks`: replicas
    /// of blocks in both are kept). The old namespace is dropped after the lock is released.
    pub fn install_namespace(&self, mut ns: Namespace) -> ReloadSummary {
        ns.set_journal(Box::new(StandbyJournal));
        let txid = ns.last_txid();
        let blocks: Vec<ReloadedBlock> = ns
            .loaded_blocks()
            .into_iter()
            .map(|b| ReloadedBlock {
                block: to_block(&b.block),
                replication: b.replication,
                state: BlockUcState::loaded(b.under_construction),
            })
            .collect();
        let old = self.with_ns_op("install_image", |cur| std::mem::replace(cur, ns));
        drop(old);
        // Its superuser and supergroup decide who is a superuser from now on.
        self.forget_cached_callers();
        let summary = self.bm.reload_blocks(blocks);
        self.bm.set_last_txid(txid);
        self.publish_safe_mode();
        tracing::info!(
            txid,
            removed = summary.removed,
            added = summary.added,
            updated = summary.updated,
            "the namespace is the installed image's now; the block map follows it"
        );
        summary
    }
}
