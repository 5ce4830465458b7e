//! RedundancyMonitor work: copying replicas of under-replicated blocks (DNA_TRANSFER from a
//! node holding a good replica to nodes chosen by the placement policy), plus the pass
//! that runs it together with invalidation.

use std::sync::Arc;

use rand::seq::IndexedRandom;

use crate::block::Block;
use crate::manager::{BlockManager, Location};
use crate::placement::PlacementRequest;
use crate::reconstruction::Transfer;

/// A block picked for reconstruction, as seen under the blocks lock.
struct Candidate {
    block: Block,
    missing: usize,
    sources: Vec<Arc<str>>,
    holders: Vec<String>,
}

impl BlockManager {
    /// One RedundancyMonitor pass: reconstruction work, then invalidation work. Returns the
    /// number of replicas scheduled (copies + deletions).
    pub fn redundancy_monitor_pass(&self) -> usize {
        self.compute_reconstruction_work() + self.compute_invalidate_work()
    }

    /// Schedules copies for up to `live × dfs.namenode.replication.work.multiplier.per.iteration`
    /// under-replicated blocks. Returns the number of target replicas scheduled.
    pub fn compute_reconstruction_work(&self) -> usize {
        if !self
            .reconstruction_enabled
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return 0;
        }
        let now = self.now_mono();
        let live = self.live_datanodes();
        let max_blocks = live * self.cfg.replication_work_multiplier;
        if max_blocks == 0 {
            return 0;
        }
        let candidates: Vec<Candidate> = {
            let mut st = self.blocks.lock("reconstruction_work");
            for id in st
                .recon
                .expire(now, self.cfg.reconstruction_pending_timeout)
            {
                tracing::info!(block = id, "pending reconstruction timed out; rescheduling");
                st.check_redundancy(id);
            }
            let ids = st.recon.next_needed(max_blocks);
            let mut out = Vec::new();
            for id in ids {
                let Some(info) = st.map.get(id) else {
                    st.recon.unmark(id);
                    continue;
                };
                let gs = info.block.gs;
                let sources: Vec<Arc<str>> = info
                    .replicas
                    .iter()
                    .filter(|r| r.is_good_finalized() && r.gs == gs)
                    .map(|r| r.dn_uuid.clone())
                    .collect();
                let want = usize::from(info.replication);
                let have = sources.len() + st.recon.pending_count(id);
                if sources.is_empty() || have >= want {
                    continue;
                }
                let mut holders: Vec<String> = info
                    .replicas
                    .iter()
                    .map(|r| r.dn_uuid.to_string())
                    .collect();
                holders.extend(st.recon.pending_targets(id).iter().map(|t| t.to_string()));
                out.push(Candidate {
                    block: info.block,
                    missing: want - have,
                    sources,
                    holders,
                });
            }
            out
        };
        let mut scheduled = 0;
        for c in candidates {
            let source = {
                let dns = self.datanodes.lock("reconstruction_work");
                let alive: Vec<&Arc<str>> =
                    c.sources.iter().filter(|s| dns.is_alive(s, now)).collect();
                alive.choose(&mut *self.rng.lock()).map(|s| (*s).clone())
            };
            let Some(source) = source else { continue };
            let req = PlacementRequest {
                count: c.missing,
                writer_host: None,
                excluded: &[],
                favored: &[],
                existing: &c.holders,
                block_size: c.block.num_bytes,
            };
            let targets = self.place(&req);
            if targets.is_empty() {
                continue;
            }
            let targets: Vec<(Arc<str>, Arc<str>)> = targets
                .iter()
                .map(|l| {
                    (
                        Arc::from(l.info.id.datanode_uuid.as_str()),
                        Arc::from(l.storage_id.as_str()),
                    )
                })
                .collect();
            let mut st = self.blocks.lock("reconstruction_work");
            let still = st
                .map
                .get(c.block.id)
                .is_some_and(|i| i.block.gs == c.block.gs);
            if !still {
                continue;
            }
            scheduled += targets.len();
            st.recon
                .add_pending(c.block.id, targets.iter().map(|(t, _)| t.clone()));
            st.recon.queue_transfer(
                &source,
                Transfer {
                    block: c.block,
                    targets,
                },
            );
        }
        scheduled
    }

    /// Renders queued transfers with the targets' current DatanodeInfo (dead targets dropped).
    pub(crate) fn render_transfers(&self, transfers: Vec<Transfer>) -> Vec<(Block, Vec<Location>)> {
        if transfers.is_empty() {
            return Vec::new();
        }
        let dns = self.datanodes.lock("heartbeat");
        let now = self.now_mono();
        transfers
            .into_iter()
            .filter_map(|t| {
                let locs: Vec<Location> = t
                    .targets
                    .iter()
                    .filter_map(|(uuid, storage)| {
                        let d = dns.get(uuid)?;
                        let live = dns.liveness_of(d, now);
                        (live != crate::datanodes::Liveness::Dead).then(|| Location {
                            info: crate::render::datanode_info(d, live),
                            storage_id: storage.to_string(),
                            storage_type: d.storage(storage).map_or(1, |s| s.storage_type),
                        })
                    })
                    .collect();
                (!locs.is_empty()).then_some((t.block, locs))
            })
            .collect()
    }
}
