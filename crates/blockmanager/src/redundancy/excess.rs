//! Excess replicas (Hadoop's processExtraRedundancyBlock / chooseExcessRedundancies): a
//! COMPLETE block with more live replicas than its replication loses the surplus, chosen by
//! the placement policy so that rack spread is kept where it can be (a rack holding more
//! than one replica gives one up first; then the holder with the oldest heartbeat or the
//! least free space). Blocks become candidates after setrep down, a node's return (its
//! report re-adds replicas already copied elsewhere), a node back in service, or a copy to
//! a new rack for a badly distributed block. A block with a replica on a storage whose
//! contents are stale is postponed instead (`postponed`).

use std::collections::HashMap;
use std::sync::Arc;

use crate::block::Block;
use crate::deleting::DeletionCause;
use crate::manager::BlockManager;
use crate::placement::NodeView;

use crate::limits::EXCESS_CHUNK;

/// One block with surplus replicas, as seen under the blocks lock.
struct Surplus {
    block: Block,
    expected: usize,
    /// Live replicas: (node, storage, replica as reported).
    live: Vec<(Arc<str>, Arc<str>, Block)>,
}

impl BlockManager {
    /// Sets the replication of `ids` and removes surplus replicas of those lowered.
    pub(crate) fn set_replication_chunk(&self, ids: &[u64], replication: u16) {
        {
            let mut st = self.blocks.lock("set_replication");
            for &id in ids {
                st.update_replication(id, replication);
            }
        }
        self.remove_excess(ids);
    }

    /// Chooses and queues for deletion the surplus replicas of blocks marked by reports.
    /// Returns the number of replicas queued.
    pub fn process_excess_work(&self) -> usize {
        // In safe mode the marked blocks wait: reports are still arriving.
        if self.in_safe_mode() {
            return 0;
        }
        let mut n = 0;
        loop {
            let ids = self.blocks.lock("excess").recon.take_excess(EXCESS_CHUNK);
            if ids.is_empty() {
                return n;
            }
            n += self.remove_excess(&ids);
        }
    }

    /// Removes live replicas beyond the replication of each of `ids`, keeping rack spread.
    /// Returns the number of replicas queued for deletion.
    pub(crate) fn remove_excess(&self, ids: &[u64]) -> usize {
        let mut queued = 0;
        for chunk in ids.chunks(EXCESS_CHUNK) {
            let surplus: Vec<Surplus> = {
                let mut st = self.blocks.lock("excess");
                let mut postpone = Vec::new();
                let surplus = chunk
                    .iter()
                    .filter_map(|&id| {
                        let info = st.map.get(id)?;
                        let expected = usize::from(info.replication).max(1);
                        let live = st.live_replicas(id, info);
                        if !info.is_complete() || live.len() <= expected {
                            return None;
                        }
                        // A storage that has not reported since the NameNode started may
                        // already have lost its replica: decide later.
                        if st.stale_storage_of(info).is_some() {
                            postpone.push(id);
                            return None;
                        }
                        Some(Surplus {
                            block: info.block(id),
                            expected,
                            live,
                        })
                    })
                    .collect();
                for id in postpone {
                    st.postpone_misreplicated(id);
                }
                surplus
            };
            if surplus.is_empty() {
                continue;
            }
            let now = self.now_mono();
            let views: HashMap<String, NodeView> = {
                let dns = self.datanodes.lock("excess");
                dns.placement_view(now)
                    .into_iter()
                    .map(|v| (v.uuid.clone(), v))
                    .collect()
            };
            let tolerance = self.cfg.heartbeat_interval * self.cfg.tolerate_heartbeat_multiplier;
            let mut doomed: Vec<(u64, Arc<str>, Arc<str>, Block)> = Vec::new();
            for s in &surplus {
                let holders: Vec<NodeView> = s
                    .live
                    .iter()
                    .map(|(dn, _, _)| {
                        views.get(&**dn).cloned().unwrap_or_else(|| NodeView {
                            uuid: dn.to_string(),
                            ..NodeView::default()
                        })
                    })
                    .collect();
                let candidates: Vec<usize> = (0..holders.len()).collect();
                let chosen = self.placement.choose_excess(
                    &holders,
                    &candidates,
                    s.expected,
                    None,
                    None,
                    now,
                    tolerance,
                );
                for i in chosen {
                    if let Some((dn, storage, b)) = s.live.get(i) {
                        doomed.push((s.block.id, dn.clone(), storage.clone(), *b));
                    }
                }
            }
            let mut st = self.blocks.lock("excess");
            for (id, dn, storage, b) in doomed {
                // Still surplus under the lock (a report may have changed the block).
                let still = st.map.get(id).is_some_and(|info| {
                    info.is_complete()
                        && st.live_replicas(id, info).len() > usize::from(info.replication).max(1)
                });
                if still
                    && let Some(newly) = st.delete_replica(&dn, &storage, b, DeletionCause::Surplus)
                {
                    tracing::info!(block = id, dn = %dn, "BLOCK* chooseExcessRedundancies: deleting surplus replica");
                    queued += usize::from(newly);
                }
            }
        }
        queued
    }
}
