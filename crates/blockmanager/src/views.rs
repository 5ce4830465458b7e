//! Read-only operator views of the block side: per-block replica details with their
//! states (what fsck -replicaDetails prints), the blocks with no usable replica
//! (fsck -list-corruptfileblocks), and the metasave dump of the queues.
//!
//! Every view takes the locks for bounded chunks only: callers pass at most a chunk of
//! block ids per call, and whole-map walks snapshot the ids first and then look them up
//! `VIEW_CHUNK` at a time.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Arc;

use crate::block::{Block, BlockUcState, CorruptReason, ReplicaState};
use crate::datanodes::Liveness;
pub use crate::limits::VIEW_CHUNK;
use crate::manager::BlockManager;
use crate::redundancy::decommission::AdminState;

/// The state fsck -replicaDetails prints for one replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaStatus {
    Live,
    Decommissioned,
    Decommissioning,
    Corrupt,
    Excess,
    StaleNode,
}

impl ReplicaStatus {
    /// Hadoop's label (NamenodeFsck.getReplicaInfo).
    pub fn label(self) -> &'static str {
        match self {
            ReplicaStatus::Live => "LIVE",
            ReplicaStatus::Decommissioned => "DECOMMISSIONED",
            ReplicaStatus::Decommissioning => "DECOMMISSIONING",
            ReplicaStatus::Corrupt => "CORRUPT",
            ReplicaStatus::Excess => "EXCESS",
            ReplicaStatus::StaleNode => "STALE_NODE",
        }
    }
}

/// One replica (or expected pipeline location) with where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaView {
    pub dn_uuid: String,
    /// `ip:xferPort`.
    pub xfer_addr: String,
    pub host_name: String,
    pub rack: String,
    pub storage_id: String,
    /// StorageTypeProto value (DISK = 1).
    pub storage_type: i32,
    pub state: ReplicaState,
    pub status: ReplicaStatus,
    /// Why the block manager holds this replica corrupt (None: it does not).
    pub corrupt_reason: Option<CorruptReason>,
}

/// A block as fsck sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockView {
    pub block: Block,
    pub state: BlockUcState,
    pub replication: u16,
    /// Replicas on nodes that are not dead (for a block not COMPLETE: its expected
    /// pipeline when it has one).
    pub replicas: Vec<ReplicaView>,
    /// Good finalized replicas of the current generation stamp on in-service nodes not
    /// dead (Hadoop's liveReplicas, stale nodes included).
    pub live: usize,
    pub corrupt: usize,
    pub excess: usize,
    pub stale: usize,
    /// Non-corrupt replicas on nodes being decommissioned / decommissioned.
    pub decommissioning: usize,
    pub decommissioned: usize,
    /// Only corrupt replicas are left (LocatedBlock.isCorrupt).
    pub is_corrupt: bool,
    /// How the replicas spread over racks (fsck's mis-replicated blocks).
    pub rack_spread: RackSpread,
}

/// The racks a block's replicas are on, against the cluster's racks (Hadoop's
/// BlockPlacementPolicyDefault.verifyBlockPlacement / BlockPlacementStatusDefault).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RackSpread {
    /// Distinct racks of the replicas a reader would be given (the non-corrupt ones, or
    /// the corrupt ones when nothing else is left).
    pub racks: usize,
    /// Racks holding a node not dead.
    pub cluster_racks: usize,
    /// The cluster has ever had two racks; until then every placement is satisfied.
    pub multi_rack: bool,
}

impl RackSpread {
    /// Racks a block of `replication` should span: two (one if it has one replica).
    pub fn required_racks(&self, replication: u16) -> usize {
        if self.multi_rack {
            2.min(usize::from(replication))
        } else {
            1
        }
    }

    /// Placement satisfied: enough racks, or every rack of the cluster used.
    pub fn is_satisfied(&self, replication: u16) -> bool {
        if !self.multi_rack {
            return true;
        }
        self.required_racks(replication) <= self.racks || self.racks >= self.cluster_racks
    }

    /// Hadoop's description of a violation (None when satisfied).
    pub fn violation(&self, replication: u16) -> Option<String> {
        if self.is_satisfied(replication) {
            return None;
        }
        Some(format!(
            "Block should be additionally replicated on {} more rack(s). Total number of racks in the cluster: {}",
            self.required_racks(replication) - self.racks,
            self.cluster_racks
        ))
    }
}

/// Cluster facts fsck prints in its summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeCounts {
    pub live: usize,
    pub dead: usize,
    pub racks: usize,
}

impl BlockManager {
    /// Views of up to one chunk of blocks (None for ids the map does not hold). Takes the
    /// blocks lock once and the datanodes lock once; pass at most `VIEW_CHUNK` ids.
    pub fn block_views(&self, ids: &[u64]) -> Vec<Option<BlockView>> {
        /// (node uuid, storage id, state, generation stamp, why corrupt, excess)
        type RawReplica = (
            Arc<str>,
            Arc<str>,
            ReplicaState,
            u64,
            Option<CorruptReason>,
            bool,
        );
        struct Raw {
            block: Block,
            state: BlockUcState,
            replication: u16,
            reps: Vec<RawReplica>,
        }
        let raws: Vec<Option<Raw>> = {
            let st = self.blocks.lock("views");
            ids.iter()
                .map(|id| {
                    let info = st.map.get(*id)?;
                    let mut reps = Vec::new();
                    if !info.is_complete() && !info.uc().expected().is_empty() {
                        for e in info.uc().expected() {
                            let r = info.replicas.iter().find(|r| *st.map.dn_of(r) == e.dn_uuid);
                            let state = r.map_or(ReplicaState::Rbw, |r| r.state());
                            let gs = r.map_or(info.gs(), |r| info.replica_gs(r));
                            let corrupt = r.and_then(|r| r.corrupt());
                            reps.push((
                                e.dn_uuid.clone(),
                                e.storage_id.clone(),
                                state,
                                gs,
                                corrupt,
                                false,
                            ));
                        }
                    } else {
                        for r in &info.replicas {
                            let dn = st.map.dn_of(r);
                            let excess = st
                                .invalidate
                                .contains(dn, Block::new(*id, info.replica_gs(r), 0));
                            reps.push((
                                dn.clone(),
                                st.map.storage_id_of(r).clone(),
                                r.state(),
                                info.replica_gs(r),
                                r.corrupt(),
                                excess,
                            ));
                        }
                        // Surplus replicas taken off the map are held until their nodes
                        // delete them: EXCESS, as Hadoop's fsck shows them.
                        for (dn, storage) in st.deleting.surplus_of(*id) {
                            if !reps.iter().any(|r| r.0 == *dn) {
                                reps.push((
                                    dn.clone(),
                                    storage.clone(),
                                    ReplicaState::Finalized,
                                    info.gs(),
                                    None,
                                    true,
                                ));
                            }
                        }
                    }
                    Some(Raw {
                        block: info.block(*id),
                        state: info.state,
                        replication: info.replication,
                        reps,
                    })
                })
                .collect()
        };
        let dns = self.datanodes.lock("views");
        let now = self.now_mono();
        let cluster_racks = dns.num_racks(now);
        let multi_rack = dns.ever_multi_rack();
        raws.into_iter()
            .map(|raw| {
                let raw = raw?;
                let mut v = BlockView {
                    block: raw.block,
                    state: raw.state,
                    replication: raw.replication,
                    replicas: Vec::new(),
                    live: 0,
                    corrupt: 0,
                    excess: 0,
                    stale: 0,
                    decommissioning: 0,
                    decommissioned: 0,
                    is_corrupt: false,
                    rack_spread: RackSpread {
                        racks: 0,
                        cluster_racks,
                        multi_rack,
                    },
                };
                for (dn, storage, state, gs, corrupt_reason, excess) in raw.reps {
                    let corrupt = corrupt_reason.is_some();
                    let Some(d) = dns.get(&dn) else { continue };
                    let liveness = dns.liveness_of(d, now);
                    if liveness == Liveness::Dead {
                        continue;
                    }
                    // Counted as Hadoop's countNodes does (corrupt first), shown as
                    // getReplicaInfo does (decommission states first).
                    let good = !corrupt && state == ReplicaState::Finalized && gs == raw.block.gs;
                    let status = match d.admin {
                        AdminState::Decommissioned => {
                            if !corrupt {
                                v.decommissioned += 1;
                            }
                            ReplicaStatus::Decommissioned
                        }
                        AdminState::DecommissionInProgress => {
                            if !corrupt {
                                v.decommissioning += 1;
                            }
                            ReplicaStatus::Decommissioning
                        }
                        AdminState::Normal if corrupt => ReplicaStatus::Corrupt,
                        AdminState::Normal if excess => {
                            v.excess += 1;
                            ReplicaStatus::Excess
                        }
                        AdminState::Normal => {
                            if good {
                                v.live += 1;
                            }
                            if liveness == Liveness::Stale {
                                v.stale += 1;
                                ReplicaStatus::StaleNode
                            } else {
                                ReplicaStatus::Live
                            }
                        }
                    };
                    if corrupt {
                        v.corrupt += 1;
                    }
                    v.replicas.push(ReplicaView {
                        dn_uuid: dn.to_string(),
                        xfer_addr: d.id.xfer_addr(),
                        host_name: d.id.host_name.clone(),
                        rack: d.network_location.clone(),
                        storage_type: d.storage(&storage).map_or(1, |s| s.storage_type),
                        storage_id: storage.to_string(),
                        state,
                        status,
                        corrupt_reason,
                    });
                }
                v.is_corrupt = v.live + v.decommissioning + v.decommissioned == 0 && v.corrupt > 0;
                let mut racks: Vec<&str> = v
                    .replicas
                    .iter()
                    .filter(|r| {
                        r.status != ReplicaStatus::Excess
                            && (v.is_corrupt || r.status != ReplicaStatus::Corrupt)
                    })
                    .map(|r| r.rack.as_str())
                    .collect();
                racks.sort_unstable();
                racks.dedup();
                v.rack_spread.racks = racks.len();
                Some(v)
            })
            .collect()
    }

    /// Live and dead DataNodes, and the racks holding a node not dead.
    /// Each registered DataNode's transfer address (ip:port), by uuid.
    pub fn datanode_names(&self) -> std::collections::HashMap<String, String> {
        let dns = self.datanodes.lock("views");
        dns.all()
            .map(|d| (d.uuid.to_string(), d.id.xfer_addr()))
            .collect()
    }

    pub fn node_counts(&self) -> NodeCounts {
        let dns = self.datanodes.lock("views");
        let now = self.now_mono();
        let mut c = NodeCounts::default();
        for d in dns.all() {
            if dns.liveness_of(d, now) == Liveness::Dead {
                c.dead += 1;
            } else {
                c.live += 1;
            }
        }
        c.racks = dns.num_racks(now);
        c
    }

    /// COMPLETE blocks without a single good replica (missing, or only corrupt replicas
    /// left), in block-id order (their files: the namespace's block → file map). Walks
    /// the map in chunks.
    pub fn corrupt_or_missing_blocks(&self) -> Vec<Block> {
        let ids = {
            let st = self.blocks.lock("views");
            st.map.ids()
        };
        let mut out = Vec::new();
        for chunk in ids.chunks(VIEW_CHUNK) {
            for v in self.block_views(chunk).into_iter().flatten() {
                if v.state == BlockUcState::Complete
                    && v.live + v.decommissioning + v.decommissioned == 0
                {
                    out.push(v.block);
                }
            }
        }
        out.sort_by_key(|b| b.id);
        out
    }

    /// Blocks in Hadoop's QUEUE_HIGHEST_PRIORITY of the low-redundancy queues (one live
    /// replica left of several expected, or every replica on decommissioning nodes).
    pub fn highest_priority_low_redundancy(&self) -> u64 {
        self.low_redundancy_queue_sizes()[crate::redundancy::low_redundancy::QUEUE_HIGHEST_PRIORITY]
            as u64
    }

    /// The text `dfsadmin -metaSave` writes: the block manager's queues (blocks needing
    /// more replicas, pending reconstruction, replicas waiting for deletion, corrupt
    /// replicas) and one line per DataNode. Walks the map in chunks.
    pub fn metasave_text(&self) -> String {
        let stats = self.fs_stats();
        let ids = {
            let st = self.blocks.lock("views");
            let mut ids = st.map.ids();
            ids.sort_unstable();
            ids
        };
        let mut needed: Vec<BlockView> = Vec::new();
        let mut corrupt: Vec<BlockView> = Vec::new();
        let mut pending: Vec<(Block, usize)> = Vec::new();
        for chunk in ids.chunks(VIEW_CHUNK) {
            let pend: Vec<(u64, usize)> = {
                let st = self.blocks.lock("views");
                chunk
                    .iter()
                    .filter_map(|id| {
                        let n = st.recon.pending_count(*id);
                        (n > 0).then_some((*id, n))
                    })
                    .collect()
            };
            let views = self.block_views(chunk);
            let by_id: HashMap<u64, &BlockView> =
                views.iter().flatten().map(|v| (v.block.id, v)).collect();
            for (id, n) in pend {
                if let Some(v) = by_id.get(&id) {
                    pending.push((v.block, n));
                }
            }
            for v in views.iter().flatten() {
                if v.corrupt > 0 {
                    corrupt.push(v.clone());
                }
                if v.state == BlockUcState::Complete && v.live < usize::from(v.replication) {
                    needed.push(v.clone());
                }
            }
        }
        let (invalidate, dn_lines) = {
            let st = self.blocks.lock("views");
            let mut inv: BTreeMap<String, usize> = BTreeMap::new();
            for dn in st.invalidate.datanodes() {
                inv.insert(dn.to_string(), st.invalidate.blocks_of(&dn));
            }
            let dns = self.datanodes.lock("views");
            let now = self.now_mono();
            let mut lines: Vec<(String, String)> = dns
                .all()
                .map(|d| {
                    let state = match dns.liveness_of(d, now) {
                        Liveness::Dead => "DEAD",
                        Liveness::Stale => "STALE",
                        Liveness::Live => "IN",
                    };
                    let c = d.capacity();
                    let u = d.dfs_used();
                    let pct = if c == 0 {
                        100.0
                    } else {
                        u as f64 * 100.0 / c as f64
                    };
                    (
                        d.id.xfer_addr(),
                        format!(
                            "{} {} {}({}) {}({}) {:.2}% {}({}) 0(0 B) 0(0 B) 100.00% 0(0 B) last_contact_ms={} blocks={} pending_invalidate={} pending_commands={}",
                            d.id.xfer_addr(),
                            state,
                            c,
                            byte_desc(c),
                            u,
                            byte_desc(u),
                            pct,
                            d.remaining(),
                            byte_desc(d.remaining()),
                            d.last_update_ms,
                            st.map
                                .storages_of_node(&d.uuid)
                                .iter()
                                .map(|s| st.map.storage_block_count(s))
                                .sum::<usize>(),
                            st.invalidate.blocks_of(&d.uuid),
                            st.pending.of_node(&d.uuid),
                        ),
                    )
                })
                .collect();
            lines.sort();
            let names: HashMap<String, String> = dns
                .all()
                .map(|d| (d.uuid.to_string(), d.id.xfer_addr()))
                .collect();
            let inv: Vec<(String, usize)> = inv
                .into_iter()
                .map(|(uuid, n)| (names.get(&uuid).cloned().unwrap_or(uuid), n))
                .collect();
            (inv, lines)
        };

        let mut s = String::new();
        let _ = writeln!(
            s,
            "Metasave: Blocks waiting for reconstruction: {}",
            needed.len()
        );
        for v in &needed {
            let _ = writeln!(s, "{}", metasave_block_line(v, self.block_pool_id()));
        }
        let _ = writeln!(
            s,
            "Metasave: Blocks currently missing: {}",
            needed.iter().filter(|v| v.live == 0).count()
        );
        // Over-replicated blocks waiting for stale storages to report (Hadoop prints the
        // heading, then one line per block).
        let _ = writeln!(s, "Mis-replicated blocks that have been postponed:");
        for chunk in self.postponed_misreplicated_ids().chunks(VIEW_CHUNK) {
            for v in self.block_views(chunk).into_iter().flatten() {
                let _ = writeln!(s, "{}", metasave_block_line(&v, self.block_pool_id()));
            }
        }
        let _ = writeln!(s, "Metasave: Blocks being reconstructed: {}", pending.len());
        for (b, n) in &pending {
            let _ = writeln!(s, "{b}:{b} numReplicasInProgress={n}");
        }
        let _ = writeln!(
            s,
            "Metasave: Blocks {} waiting deletion from {} datanodes.",
            stats.pending_deletion,
            invalidate.len()
        );
        for (node, n) in &invalidate {
            let _ = writeln!(s, "{node} {n}");
        }
        let _ = writeln!(
            s,
            "Metasave: Blocks handed to DataNodes for deletion: {}",
            stats.pending_deletion_commands
        );
        let _ = writeln!(s, "Corrupt Blocks:");
        for v in &corrupt {
            for r in v
                .replicas
                .iter()
                .filter(|r| r.status == ReplicaStatus::Corrupt)
            {
                let _ = writeln!(
                    s,
                    "Block={}\tSize={}\tNode={}\tStorageID={}\tStorageState=NORMAL\tTotalReplicas={}\tReason={}",
                    v.block.id,
                    v.block.num_bytes,
                    r.xfer_addr,
                    r.storage_id,
                    v.replicas.len(),
                    r.corrupt_reason
                        .unwrap_or(CorruptReason::CorruptionReported)
                        .label()
                );
            }
        }
        let _ = writeln!(s, "Metasave: Number of datanodes: {}", dn_lines.len());
        for (_, line) in &dn_lines {
            let _ = writeln!(s, "{line}");
        }
        s
    }
}

fn metasave_block_line(v: &BlockView, pool: &str) -> String {
    let mut s = format!(
        "{}:{} (replicas: l: {} d: {} c: {} e: {}) ",
        pool,
        v.block,
        v.live,
        v.decommissioning + v.decommissioned,
        v.corrupt,
        v.excess
    );
    for r in &v.replicas {
        let tag = match r.status {
            ReplicaStatus::Corrupt => "(corrupt)",
            ReplicaStatus::Excess => "(excess)",
            ReplicaStatus::StaleNode => "(stale)",
            ReplicaStatus::Decommissioning | ReplicaStatus::Decommissioned => "(decommissioned)",
            ReplicaStatus::Live => "",
        };
        let _ = write!(s, "{}{} ", r.xfer_addr, tag);
    }
    s.trim_end().to_string()
}

/// Hadoop's StringUtils.byteDesc (TraditionalBinaryPrefix.long2String with two
/// decimals): "1023 B", "24 KB" for exact multiples, "1.50 GB" otherwise.
pub fn byte_desc(n: u64) -> String {
    const PREFIXES: [(&str, u32); 6] = [
        ("K", 10),
        ("M", 20),
        ("G", 30),
        ("T", 40),
        ("P", 50),
        ("E", 60),
    ];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut i = PREFIXES
        .iter()
        .rposition(|(_, shift)| n >= 1u64 << shift)
        .unwrap_or(0);
    let (mut sym, shift) = PREFIXES[i];
    if n & ((1u64 << shift) - 1) == 0 {
        return format!("{} {sym}B", n >> shift);
    }
    let mut s = format!("{:.2}", n as f64 / (1u64 << shift) as f64);
    if s.starts_with("1024") && i + 1 < PREFIXES.len() {
        i += 1;
        sym = PREFIXES[i].0;
        s = format!("{:.2}", n as f64 / (1u64 << PREFIXES[i].1) as f64);
    }
    format!("{s} {sym}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_desc_like_hadoop() {
        assert_eq!(byte_desc(0), "0 B");
        assert_eq!(byte_desc(1023), "1023 B");
        assert_eq!(byte_desc(24576), "24 KB");
        assert_eq!(byte_desc(750_055_424), "715.31 MB");
        assert_eq!(byte_desc(274_877_906_944), "256 GB");
        assert_eq!(byte_desc(207_929_917_440), "193.65 GB");
        assert_eq!(byte_desc(1_605_505_024), "1.50 GB");
    }

    #[test]
    fn labels() {
        assert_eq!(ReplicaStatus::StaleNode.label(), "STALE_NODE");
        assert_eq!(ReplicaStatus::Live.label(), "LIVE");
    }
}
