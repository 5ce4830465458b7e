//! Hadoop's replication queue initialization. A NameNode that starts from an image knows
//! every block and none of its replicas: while the DataNodes' first reports arrive every
//! block looks under-replicated, and keeping the low-redundancy queues current meant moving
//! each block from queue to queue with each of its replicas (a third of the report storm's
//! CPU). As Hadoop's `isPopulatingReplQueues`, the queues are left alone from the start
//! (`defer_replication_queues`) until start-up safe mode's thresholds are reached or safe
//! mode is left, and then filled by one scan of the blocks map in bounded holds
//! (Hadoop's processMisReplicatedBlocks): low redundancy, surplus replicas, corrupt
//! replicas that can go. The scan runs on the RedundancyMonitor's turn, off the async
//! workers; the flag is set before it starts, so a replica reported meanwhile updates its
//! block's queue itself (both compute the queue from the block as it is).

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::limits::REPL_QUEUE_SCAN_CHUNK;
use crate::manager::BlockManager;
use crate::state::BlockState;

impl BlockState {
    /// Hadoop's processMisReplicatedBlock: a COMPLETE block's low-redundancy queue,
    /// surplus replicas and replaceable corrupt replicas, from the block as it is.
    pub(crate) fn recheck_block(&mut self, id: u64) {
        let Some(info) = self.map.get(id) else {
            return;
        };
        if !info.is_complete() {
            return;
        }
        if self.count_replicas(info).live > usize::from(info.replication).max(1) {
            self.recon.mark_excess(id);
        }
        self.invalidate_corrupt_if_replaced(id);
        self.check_redundancy(id);
    }
}

impl BlockManager {
    /// Leaves the replication queues alone until `initialize_replication_queues` (a
    /// NameNode's start: the blocks are loaded, no replica is reported yet).
    pub fn defer_replication_queues(&self) {
        self.blocks.lock("repl_queues").populating = false;
        self.repl_queues_wanted.store(false, Ordering::Relaxed);
    }

    /// Start-up safe mode's thresholds are reached (Hadoop's replication queue threshold,
    /// `dfs.namenode.replqueue.threshold-pct`, defaults to the safe mode one): the next
    /// RedundancyMonitor turn fills the queues, even while the safe mode extension lasts.
    pub fn replication_queues_wanted(&self) {
        self.repl_queues_wanted.store(true, Ordering::Relaxed);
    }

    /// Whether the replication queues are kept (Hadoop's isPopulatingReplQueues).
    pub fn populating_replication_queues(&self) -> bool {
        self.blocks.lock("repl_queues").populating
    }

    /// True when the queues wait for their scan: asked for, or safe mode is off.
    pub(crate) fn replication_queues_due(&self) -> bool {
        (self.repl_queues_wanted.load(Ordering::Relaxed) || !self.in_safe_mode())
            && !self.blocks.lock("repl_queues").populating
    }

    /// Starts keeping the replication queues and fills them with one scan of every block,
    /// in holds of the blocks lock of at most `REPL_QUEUE_SCAN_CHUNK` blocks or
    /// `dfs.namenode.blockreport.max.lock.hold.time`. Returns the blocks scanned (0 when
    /// the queues were kept already). Blocking.
    pub fn initialize_replication_queues(&self) -> usize {
        {
            let mut st = self.blocks.lock("repl_queues");
            if st.populating {
                return 0;
            }
            st.populating = true;
        }
        let started = Instant::now();
        let mut after = None;
        let mut scanned = 0;
        loop {
            let mut st = self.blocks.lock("repl_queues_scan");
            let t0 = Instant::now();
            let ids = st.map.ids_after(after, REPL_QUEUE_SCAN_CHUNK);
            if ids.is_empty() {
                break;
            }
            for (i, &id) in ids.iter().enumerate() {
                st.recheck_block(id);
                after = Some(id);
                scanned += 1;
                if i % 64 == 63 && t0.elapsed() >= self.cfg.report_max_lock_hold {
                    break;
                }
            }
        }
        let needed = self.blocks.lock("repl_queues").recon.needed_len();
        tracing::info!(
            blocks = scanned,
            low_redundancy = needed,
            took_ms = started.elapsed().as_millis() as u64,
            "replication queues initialized"
        );
        scanned
    }
}

#[cfg(test)]
mod tests {
    use crate::block::{Block, BlockUcState, ReplicaState};
    use crate::manager::BlockManager;
    use crate::report::ReportedReplica;
    use crate::testing::{self, GB};

    /// Each block's queue and the blocks marked for the excess check.
    fn queues(bm: &BlockManager) -> (Vec<Option<usize>>, Vec<u64>) {
        let st = bm.blocks.lock("test");
        let q = (1..=70).map(|id| st.recon.priority_of(id)).collect();
        (q, st.recon.excess_ids())
    }

    #[test]
    fn deferred_queues_are_filled_by_the_scan_as_if_kept_all_along() {
        let (kept, _) = testing::manager(testing::config());
        let (deferred, _) = testing::manager(testing::config());
        deferred.defer_replication_queues();
        for bm in [&kept, &deferred] {
            // In safe mode, as at a start: nothing acts on the queues.
            bm.set_safe_mode(true);
            testing::add_nodes(bm, 3, GB);
            // 1..=40: replication 3; 41..=60: replication 1; 61..=70: replication 2.
            for id in 1..=70u64 {
                let repl = match id {
                    1..=40 => 3,
                    41..=60 => 1,
                    _ => 2,
                };
                bm.load_block(Block::new(id, 1000, 10), repl, BlockUcState::Complete);
            }
            // Node 1 holds every block, node 2 the even ones, node 3 the multiples of 3.
            for node in 1..=3u32 {
                let replicas: Vec<ReportedReplica> = (1..=70u64)
                    .filter(|id| node == 1 || id % u64::from(node) == 0)
                    .map(|id| ReportedReplica {
                        block: Block::new(id, 1000, 10),
                        state: ReplicaState::Finalized,
                    })
                    .collect();
                bm.full_report(&testing::uuid(node), &testing::storage(node), 1, &replicas)
                    .expect("full report");
            }
        }
        assert!(!deferred.populating_replication_queues());
        assert_eq!(
            queues(&deferred),
            (vec![None; 70], Vec::new()),
            "no queue work before the scan"
        );
        assert!(!deferred.replication_queues_due());
        deferred.replication_queues_wanted();
        assert!(deferred.replication_queues_due());
        assert_eq!(deferred.initialize_replication_queues(), 70);
        assert!(deferred.populating_replication_queues());
        assert!(!deferred.replication_queues_due());
        assert_eq!(deferred.initialize_replication_queues(), 0);
        assert_eq!(queues(&deferred), queues(&kept));
        // Some blocks are low on replicas, some have too many.
        let (q, excess) = queues(&kept);
        assert!(q.iter().any(Option::is_some));
        assert!(q.iter().any(Option::is_none));
        assert!(!excess.is_empty());
    }

    #[test]
    fn leaving_safe_mode_makes_the_scan_due() {
        let (bm, _) = testing::manager(testing::config());
        bm.set_safe_mode(true);
        bm.defer_replication_queues();
        assert!(!bm.replication_queues_due());
        bm.set_safe_mode(false);
        assert!(bm.replication_queues_due());
        // An empty map: nothing scanned, the queues kept from now on.
        assert_eq!(bm.initialize_replication_queues(), 0);
        assert!(bm.populating_replication_queues());
    }
}
