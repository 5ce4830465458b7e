//! One reading of everything the NameNode's `/jmx` and `/metrics` report, gathered in one
//! place (off the async threads: it takes the namespace and block-manager locks briefly
//! and reads the image directory) so both pages agree.

use std::net::SocketAddr;

use rhdfs_blockmanager::{DatanodeInfo, FsStats, LockStat, ReportKind};
use rhdfs_ipc::RpcSnapshot;
use rhdfs_metrics::HistogramSnapshot;

use crate::namesystem::Namesystem;

/// What the web port knows about the NameNode beyond the namesystem.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    pub host: String,
    pub rpc: Option<(SocketAddr, std::sync::Arc<rhdfs_ipc::RpcMetrics>)>,
    /// Wall-clock start, ms since the epoch.
    pub started_ms: u64,
    /// Last txid when the web port started (edits loaded by then).
    pub txid_at_start: u64,
}

pub(crate) struct Figures {
    pub facts: Facts,
    pub now_ms: u64,
    pub s: FsStats,
    pub inodes: u64,
    pub ns_blocks: u64,
    pub files_under_construction: u64,
    pub active_clients: u64,
    pub safe_mode: bool,
    pub safe_mode_reason: Option<String>,
    pub cluster_id: String,
    pub block_pool_id: String,
    pub postponed: u64,
    pub future_replicas: u64,
    pub future_bytes: u64,
    pub orphan_replicas: u64,
    pub orphan_bytes: u64,
    pub liveness: rhdfs_blockmanager::LivenessCounters,
    pub locks: Vec<LockStat>,
    pub total_load: u64,
    pub live: Vec<DatanodeInfo>,
    pub dead: Vec<DatanodeInfo>,
    pub last_txid: u64,
    pub txns_since_checkpoint: u64,
    pub txns_since_roll: u64,
    /// ms since the epoch; 0 when no image was written yet.
    pub last_checkpoint_ms: u64,
    pub syncs: HistogramSnapshot,
    pub name_dirs: Vec<String>,
    pub rpc: Option<(u16, RpcSnapshot)>,
    pub slow_peers: Option<String>,
    pub slow_disks: Option<String>,
    /// Start-up progress (None for a namesystem not started by `NameNode::start`).
    pub startup: Option<crate::startup::ProgressView>,
    /// The HA state as Hadoop names it (active, standby, observer).
    pub ha_state: &'static str,
    /// Reads served, waited for and refused as an observer (`ha::observer`).
    pub observer_reads: [u64; 3],
}

impl Figures {
    /// Reads them now (blocking).
    pub(crate) fn gather(fs: &Namesystem, facts: &Facts) -> Figures {
        let bm = fs.block_manager();
        let s = bm.fs_stats();
        let (inodes, ns_blocks, uc, clients, safe_mode, reason) = fs.with_ns(|ns| {
            let leases = ns.leases();
            (
                ns.dir().inode_count() as u64,
                ns.total_blocks() as u64,
                leases.iter().map(|(_, f)| f.count() as u64).sum::<u64>(),
                leases.len() as u64,
                ns.in_safe_mode(),
                ns.startup_safe_mode_reason().map(str::to_string),
            )
        });
        let (future, orphans) = (fs.future_replicas(), fs.orphan_counts());
        let mut locks = bm.lock_stats();
        locks.extend(fs.ns_lock_stats());
        let live = bm.datanode_report(ReportKind::Live);
        let dead = bm.datanode_report(ReportKind::Dead);
        let info = bm.namespace_info();
        let (mut last_txid, mut since_ckpt, mut since_roll, mut ckpt_ms) = (0, 0, 0, 0);
        let (mut syncs, mut name_dirs) = (HistogramSnapshot::default(), Vec::new());
        if let Some(d) = fs.durable() {
            let log = d.log();
            last_txid = log.last_txid();
            since_roll = log.segment_txns();
            syncs = log.sync_times();
            name_dirs = log
                .dirs()
                .active()
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            let (image_txid, written) = d.images().newest_image_written().unwrap_or((0, 0));
            since_ckpt = last_txid.saturating_sub(image_txid);
            ckpt_ms = written;
        }
        let rpc = facts
            .rpc
            .as_ref()
            .map(|(addr, m)| (addr.port(), m.snapshot()));
        let slow = bm.slow_nodes();
        Figures {
            now_ms: fs.clock().now_millis(),
            s,
            inodes,
            ns_blocks,
            files_under_construction: uc,
            active_clients: clients,
            safe_mode,
            safe_mode_reason: reason,
            cluster_id: info.cluster_id.clone(),
            block_pool_id: info.block_pool_id.clone(),
            postponed: bm.postponed_misreplicated_blocks() as u64,
            future_replicas: future.replicas,
            future_bytes: future.bytes,
            orphan_replicas: orphans.replicas,
            orphan_bytes: orphans.bytes,
            liveness: bm.liveness_counters(),
            locks,
            total_load: live.iter().map(|d| u64::from(d.xceiver_count)).sum(),
            live,
            dead,
            last_txid,
            txns_since_checkpoint: since_ckpt,
            txns_since_roll: since_roll,
            last_checkpoint_ms: ckpt_ms,
            syncs,
            name_dirs,
            rpc,
            slow_peers: slow.slow_peers_report(),
            slow_disks: slow.slow_disks_report(),
            startup: fs.startup_progress().map(|p| p.view()),
            ha_state: fs.ha_role().get().state_name(),
            observer_reads: {
                let r = fs.ha_role().observer_reads();
                [r.served(), r.waited(), r.refused()]
            },
            facts: facts.clone(),
        }
    }

    /// Hadoop's NameNodeInfo `Safemode`: empty when off, else the safe mode tip.
    pub(crate) fn safe_mode_text(&self) -> String {
        match (self.safe_mode, &self.safe_mode_reason) {
            (false, _) => String::new(),
            (true, Some(r)) => r.clone(),
            (true, None) => "Safe mode is ON.".into(),
        }
    }

    /// Non-DFS used on live nodes.
    pub(crate) fn non_dfs_used(&self) -> u64 {
        self.s
            .capacity
            .saturating_sub(self.s.used)
            .saturating_sub(self.s.remaining)
    }

    /// Calls to ClientProtocol/DatanodeProtocol method `m` so far.
    pub(crate) fn calls(&self, m: &str) -> Option<&HistogramSnapshot> {
        self.rpc
            .as_ref()
            .and_then(|(_, r)| r.methods.iter().find(|x| x.method == m))
            .map(|x| &x.processing)
    }
}
