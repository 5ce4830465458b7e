//! The delete path (seeds 000/001): blocks leave the map in bounded batches off the
//! caller's path, their replicas go to InvalidateBlocks, and the RedundancyMonitor hands
//! each chosen DataNode a bounded portion for its next heartbeat.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rand::seq::SliceRandom;

use crate::invalidate::{invalidation_delay, nodes_to_process};
use crate::manager::BlockManager;

impl BlockManager {
    /// Removes blocks of deleted files: batches of `dfs.namenode.block.deletion.increment`
    /// (each hold also bounded by `dfs.namenode.block.deletion.lock.threshold.ms`) with the
    /// lock released between batches, on a background task when a tokio runtime is
    /// running (the delete RPC does not wait), otherwise right here.
    pub fn remove_blocks(self: &Arc<Self>, ids: Vec<u64>) {
        if ids.is_empty() {
            return;
        }
        self.pending_removal
            .fetch_add(ids.len() as u64, Ordering::Relaxed);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let bm = Arc::clone(self);
                handle.spawn(tracing::Instrument::in_current_span(async move {
                    let mut rest = &ids[..];
                    while !rest.is_empty() {
                        let take = rest.len().min(bm.cfg.deletion_increment.max(1));
                        let n = bm.remove_batch(&rest[..take]);
                        rest = &rest[n..];
                        tokio::task::yield_now().await;
                    }
                }));
            }
            Err(_) => self.remove_blocks_now(&ids),
        }
    }

    /// Synchronous form of `remove_blocks` (same batching).
    pub fn remove_blocks_now(&self, ids: &[u64]) {
        let mut rest = ids;
        while !rest.is_empty() {
            let take = rest.len().min(self.cfg.deletion_increment.max(1));
            let n = self.remove_batch(&rest[..take]);
            rest = &rest[n..];
        }
    }

    /// Removes blocks from the front of `chunk` under one hold of the blocks lock, until the
    /// chunk is done or the hold has lasted `deletion_lock_threshold` on the manager's clock
    /// (at least one block); returns how many were removed.
    fn remove_batch(&self, chunk: &[u64]) -> usize {
        let mut done = 0;
        {
            let mut st = self.blocks.lock("remove_blocks");
            // On the injected clock, so a test's batches are cut by the increment alone
            // (a busy machine's preemption mid-hold does not change the count).
            let started = self.now_mono();
            for id in chunk {
                st.remove_block(*id);
                done += 1;
                if self.now_mono().saturating_sub(started) >= self.cfg.deletion_lock_threshold {
                    break;
                }
            }
        }
        self.pending_removal
            .fetch_sub(done as u64, Ordering::Relaxed);
        done
    }

    /// Deletes the held startup orphans (`orphans`) once the NameNode is out of safe mode
    /// and `dfs.namenode.startup.delay.block.deletion.sec` has passed since it started.
    pub(crate) fn release_startup_orphans(&self) -> usize {
        let since_start = self.now_mono().saturating_sub(self.started);
        if self.in_safe_mode()
            || !invalidation_delay(self.cfg.startup_delay_deletion, since_start).is_zero()
        {
            return 0;
        }
        let mut st = self.blocks.lock("release_orphans");
        if st.orphans.counts().replicas == st.orphans.counts().future_replicas {
            return 0;
        }
        st.release_orphans(Some(crate::orphans::OrphanClass::Startup))
    }

    /// One RedundancyMonitor pass of invalidation work (Hadoop's computeInvalidateWork):
    /// `ceil(live × pct)` nodes, shuffled, each given at most `dfs.block.invalidate.limit`
    /// replicas. Nothing is handed out before the startup delay has passed. Returns the
    /// number of replicas scheduled.
    pub fn compute_invalidate_work(&self) -> usize {
        if self.in_safe_mode() {
            return 0;
        }
        let since_start = self.now_mono().saturating_sub(self.started);
        let delay = invalidation_delay(self.cfg.startup_delay_deletion, since_start);
        if !delay.is_zero() {
            tracing::debug!(
                "Block deletion is delayed during NameNode startup. The deletion will start after {} ms.",
                delay.as_millis()
            );
            return 0;
        }
        let live = self.live_datanodes();
        let mut remaining_nodes = nodes_to_process(live, self.cfg.invalidate_work_pct);
        let mut nodes = self.blocks.lock("invalidate_work").invalidate.datanodes();
        nodes.sort();
        nodes.shuffle(&mut *self.rng.lock());
        remaining_nodes = remaining_nodes.min(nodes.len());
        let mut scheduled = 0;
        for dn in nodes {
            if remaining_nodes == 0 {
                break;
            }
            let now = self.now_mono();
            if !self.datanodes.lock("invalidate_work").is_alive(&dn, now) {
                continue;
            }
            let mut st = self.blocks.lock("invalidate_work");
            let blocks = st.invalidate.poll(&dn, self.cfg.block_invalidate_limit);
            if blocks.is_empty() {
                continue;
            }
            scheduled += blocks.len();
            st.pending.add(&dn, blocks);
            remaining_nodes -= 1;
        }
        scheduled
    }
}
