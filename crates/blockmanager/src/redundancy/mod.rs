//! RedundancyMonitor work: copying replicas of under-replicated blocks (DNA_TRANSFER from a
//! node holding a good replica to nodes chosen by the placement policy) and of badly
//! distributed ones (one copy to a new rack), plus the pass that runs it together with
//! excess removal, invalidation, the postponed-block rescan and the decommission check.
//!
//! `low_redundancy`: the priority queues; `decommission`: the DatanodeAdminManager;
//! `excess`: surplus replicas; `postponed`: surplus decisions waiting for stale storages;
//! `racks`: the rack-spread rule and the blocks lock's copy of each node's rack.

pub mod decommission;
mod decommission_health;
pub mod excess;
pub mod low_redundancy;
pub mod postponed;
pub mod racks;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rand::seq::IndexedRandom;

use self::decommission::AdminState;
use self::low_redundancy::{QUEUE_HIGHEST_PRIORITY, QUEUE_REPLICAS_BADLY_DISTRIBUTED};

use crate::block::Block;
use crate::manager::{BlockManager, Location};
use crate::placement::{ExcludedNode, PlacementRequest};
use crate::reconstruction::Transfer;

/// A block picked for reconstruction, as seen under the blocks lock.
struct Candidate {
    block: Block,
    priority: usize,
    missing: usize,
    /// Nodes with a usable replica, with their admin state.
    sources: Vec<(Arc<str>, AdminState)>,
    holders: Vec<String>,
    /// Nodes deleting a replica of it (`deleting`): excluded as targets.
    deleting: Vec<ExcludedNode>,
    /// A badly distributed block: the copy must go to a rack other than these (its
    /// replicas' racks); every live node on them is excluded from the choice.
    crowded: Option<(HashSet<Arc<str>>, Vec<ExcludedNode>)>,
}

/// Picks the copy source among `sources` (Hadoop's chooseSourceDatanodes): alive nodes under
/// their stream limit (`max_streams` for normal priorities, `hard_limit` for the highest),
/// in-service before decommissioning before decommissioned, then the least busy; ties
/// broken by `pick`.
pub(crate) fn choose_source<'a>(
    sources: &'a [(Arc<str>, AdminState)],
    priority: usize,
    load: impl Fn(&str) -> Option<usize>,
    max_streams: usize,
    hard_limit: usize,
    pick: impl FnOnce(&[&'a Arc<str>]) -> Option<&'a Arc<str>>,
) -> Option<Arc<str>> {
    let rank = |s: AdminState| match s {
        AdminState::Normal => 0,
        AdminState::DecommissionInProgress => 1,
        AdminState::Decommissioned => 2,
    };
    let eligible: Vec<(&Arc<str>, usize, usize)> = sources
        .iter()
        .filter_map(|(u, st)| {
            let busy = load(u)?;
            let limit = if priority == QUEUE_HIGHEST_PRIORITY {
                hard_limit
            } else {
                max_streams
            };
            (busy < limit).then_some((u, rank(*st), busy))
        })
        .collect();
    let best = eligible.iter().map(|(_, r, b)| (*r, *b)).min()?;
    let ties: Vec<&Arc<str>> = eligible
        .iter()
        .filter(|(_, r, b)| (*r, *b) == best)
        .map(|(u, _, _)| *u)
        .collect();
    pick(&ties).cloned()
}

impl BlockManager {
    /// One RedundancyMonitor pass: reconstruction work, then invalidation work, then (once
    /// per decommission interval) the decommission check. Returns the number of replicas
    /// scheduled (copies + deletions).
    pub fn redundancy_monitor_pass(&self) -> usize {
        self.refresh_rack_map();
        self.release_startup_orphans();
        let mut n = self.process_excess_work()
            + self.compute_reconstruction_work()
            + self.compute_invalidate_work();
        // Hadoop rescans postponed blocks only while the replication queues are populated
        // (not in safe mode).
        if !self.in_safe_mode() {
            n += self.rescan_postponed_misreplicated();
        }
        self.decommission_check(false);
        n
    }

    /// Schedules copies for up to `live × dfs.namenode.replication.work.multiplier.per.iteration`
    /// under-replicated blocks. Returns the number of target replicas scheduled.
    pub fn compute_reconstruction_work(&self) -> usize {
        if self.in_safe_mode() {
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
            let mut recheck = Vec::new();
            for (id, priority) in ids {
                let Some(info) = st.map.get(id) else {
                    st.recon.unmark(id);
                    continue;
                };
                let gs = info.gs();
                let sources: Vec<(Arc<str>, AdminState)> = info
                    .replicas
                    .iter()
                    .filter(|r| r.is_good_finalized() && info.replica_gs(r) == gs)
                    .map(|r| (st.map.dn_of(r).clone(), st.admin.state(st.map.dn_of(r))))
                    .collect();
                let want = usize::from(info.replication);
                let live = st.count_replicas(info).live;
                let have = live + st.recon.pending_count(id);
                if sources.is_empty() {
                    continue;
                }
                let (missing, crowded) = if have >= want {
                    // Enough replicas: work only for a block still on too few racks, which
                    // gets one copy on a new rack (Hadoop's scheduleReconstruction:
                    // additionalReplRequired = 1).
                    if priority != QUEUE_REPLICAS_BADLY_DISTRIBUTED
                        || !st.is_badly_distributed(id, info, live)
                    {
                        if priority == QUEUE_REPLICAS_BADLY_DISTRIBUTED {
                            recheck.push(id);
                        }
                        continue;
                    }
                    let racks: HashSet<Arc<str>> = st
                        .placement_holders(info)
                        .into_iter()
                        .filter_map(|h| st.recon.racks.rack_of(h).map(Arc::from))
                        .collect();
                    let on: HashSet<&str> = racks.iter().map(|r| &**r).collect();
                    let excluded: Vec<ExcludedNode> = st
                        .recon
                        .racks
                        .nodes_on(&on)
                        .into_iter()
                        .map(|u| ExcludedNode {
                            uuid: u.to_string(),
                            ..ExcludedNode::default()
                        })
                        .collect();
                    (1, Some((racks, excluded)))
                } else {
                    (want - have, None)
                };
                let mut holders: Vec<String> = info
                    .replicas
                    .iter()
                    .map(|r| st.map.dn_of(r).to_string())
                    .collect();
                holders.extend(st.recon.pending_targets(id).iter().map(|t| t.to_string()));
                // Nodes still deleting a surplus or corrupt replica of it hold it until they
                // have: no target (they would refuse the copy), nor a replica for placement.
                let deleting: Vec<ExcludedNode> = st
                    .deleting
                    .nodes_of(id)
                    .map(|d| ExcludedNode {
                        uuid: d.to_string(),
                        ..ExcludedNode::default()
                    })
                    .collect();
                out.push(Candidate {
                    block: info.block(id),
                    priority,
                    missing,
                    sources,
                    holders,
                    deleting,
                    crowded,
                });
            }
            // Placement fine again (a node moved or left): off the queue.
            for id in recheck {
                st.check_redundancy(id);
            }
            out
        };
        // Copies already queued per source (not yet sent), counted against its streams.
        let mut queued: HashMap<Arc<str>, usize> = HashMap::new();
        {
            let st = self.blocks.lock("reconstruction_work");
            for c in &candidates {
                for (s, _) in &c.sources {
                    queued
                        .entry(s.clone())
                        .or_insert_with(|| st.recon.queued_for(s));
                }
            }
        }
        let mut scheduled = 0;
        for c in candidates {
            let source = {
                let dns = self.datanodes.lock("reconstruction_work");
                let mut rng = self.rng.lock();
                choose_source(
                    &c.sources,
                    c.priority,
                    |u| {
                        let d = dns.get(u)?;
                        (dns.liveness_of(d, now) != crate::datanodes::Liveness::Dead).then(|| {
                            queued.get(u).copied().unwrap_or(0) + d.xmits_in_progress as usize
                        })
                    },
                    self.cfg.max_replication_streams,
                    self.cfg.admin.max_streams_hard_limit,
                    |ties| ties.choose(&mut *rng).copied(),
                )
            };
            let Some(source) = source else { continue };
            let excluded: Cow<'_, [ExcludedNode]> = match &c.crowded {
                None => Cow::Borrowed(&c.deleting),
                Some((_, ex)) if c.deleting.is_empty() => Cow::Borrowed(ex),
                Some((_, ex)) => ex.iter().chain(&c.deleting).cloned().collect(),
            };
            let req = PlacementRequest {
                count: c.missing,
                writer_host: None,
                excluded: &excluded,
                favored: &[],
                existing: &c.holders,
                block_size: c.block.num_bytes,
            };
            let targets = self.place(&req);
            if targets.is_empty() {
                continue;
            }
            if let Some((racks, _)) = &c.crowded {
                // Hadoop's validateReconstructionWork: a copy for rack spread is only of use
                // on a new rack (the node may have moved since the exclusion was made).
                let st = self.blocks.lock("reconstruction_work");
                let new_rack = targets.iter().all(|t| {
                    st.recon
                        .racks
                        .rack_of(&t.info.id.uuid)
                        .is_some_and(|r| !racks.contains(r))
                });
                if !new_rack {
                    continue;
                }
            }
            let kinds: Vec<(String, i32)> = targets
                .iter()
                .map(|l| (l.info.id.uuid.clone(), l.storage_type))
                .collect();
            let targets: Vec<(Arc<str>, Arc<str>)> = targets
                .iter()
                .map(|l| {
                    (
                        Arc::from(l.info.id.uuid.as_str()),
                        Arc::from(l.storage_id.as_str()),
                    )
                })
                .collect();
            let mut st = self.blocks.lock("reconstruction_work");
            let still = st.map.get(c.block.id).is_some_and(|i| i.gs() == c.block.gs);
            if !still {
                continue;
            }
            scheduled += targets.len();
            *queued.entry(source.clone()).or_default() += 1;
            st.recon
                .add_pending(c.block.id, targets.iter().map(|(t, _)| t.clone()));
            st.recon.set_pending_source(c.block.id, source.clone());
            st.recon.queue_transfer(
                &source,
                Transfer {
                    block: c.block,
                    targets,
                    priority: c.priority,
                },
            );
            drop(st);
            self.note_scheduled(&kinds);
        }
        scheduled
    }

    /// Blocks per low-redundancy queue, highest priority first (the last one: blocks with
    /// no usable replica, corrupt or missing).
    pub fn low_redundancy_queue_sizes(&self) -> [usize; low_redundancy::LEVEL] {
        let st = self.blocks.lock("queue_sizes");
        std::array::from_fn(|p| st.recon.queue_size(p))
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
                            info: crate::datanode_info::DatanodeInfo::of(d, live),
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
