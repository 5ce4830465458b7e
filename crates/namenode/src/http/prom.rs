//! The NameNode's `/metrics` (Prometheus text): namespace and block figures, DataNode
//! states, the edit log (sync time histogram, transactions since the last checkpoint and
//! roll, last checkpoint time), RPC (per-method calls and latency histograms, queue time,
//! call queue length, open connections), lock holds, liveness events, process and build.

use rhdfs_metrics::{Exposition, build};

use super::figures::Figures;

pub(crate) fn exposition(f: &Figures) -> String {
    let mut e = Exposition::new();
    build::expose(&mut e, "namenode");
    let s = &f.s;
    let gauges: [(&str, &str, u64); 28] = [
        (
            "rhdfs_namenode_capacity_total_bytes",
            "Configured capacity of live DataNodes.",
            s.capacity,
        ),
        (
            "rhdfs_namenode_capacity_used_bytes",
            "DFS used on live DataNodes.",
            s.used,
        ),
        (
            "rhdfs_namenode_capacity_remaining_bytes",
            "DFS remaining on live DataNodes.",
            s.remaining,
        ),
        (
            "rhdfs_namenode_capacity_used_non_dfs_bytes",
            "Space used on live DataNodes by other than DFS.",
            f.non_dfs_used(),
        ),
        (
            "rhdfs_namenode_blocks",
            "Blocks in the blocks map.",
            s.blocks_total,
        ),
        (
            "rhdfs_namenode_files",
            "Inodes (files and directories) in the namespace.",
            f.inodes,
        ),
        (
            "rhdfs_namenode_files_under_construction",
            "Files open for writing (under a lease).",
            f.files_under_construction,
        ),
        (
            "rhdfs_namenode_active_clients",
            "Clients holding a lease.",
            f.active_clients,
        ),
        (
            "rhdfs_namenode_under_replicated_blocks",
            "Blocks with fewer live replicas than expected.",
            s.under_replicated,
        ),
        (
            "rhdfs_namenode_pending_reconstruction_blocks",
            "Blocks with copies scheduled and not yet received.",
            s.pending_reconstruction,
        ),
        (
            "rhdfs_namenode_corrupt_blocks",
            "Blocks with corrupt replicas.",
            s.corrupt_blocks,
        ),
        (
            "rhdfs_namenode_missing_blocks",
            "Blocks with no live replica.",
            s.missing_blocks,
        ),
        (
            "rhdfs_namenode_postponed_misreplicated_blocks",
            "Over-replicated blocks waiting for stale storages to report.",
            f.postponed,
        ),
        (
            "rhdfs_namenode_pending_deletion_blocks",
            "Replicas waiting for deletion.",
            s.pending_deletion_blocks(),
        ),
        (
            "rhdfs_namenode_held_orphan_replicas",
            "Replicas of blocks the namespace does not know, held on the DataNodes instead of deleted.",
            f.orphan_replicas,
        ),
        (
            "rhdfs_namenode_held_orphan_bytes",
            "Bytes of the held orphan replicas.",
            f.orphan_bytes,
        ),
        (
            "rhdfs_namenode_replicas_in_future",
            "Held replicas with a generation stamp newer than the namespace's (they keep start-up safe mode on).",
            f.future_replicas,
        ),
        (
            "rhdfs_namenode_bytes_in_future",
            "Bytes of the held replicas with a generation stamp newer than the namespace's.",
            f.future_bytes,
        ),
        (
            "rhdfs_namenode_live_datanodes",
            "Live DataNodes.",
            s.live_datanodes,
        ),
        (
            "rhdfs_namenode_dead_datanodes",
            "Dead DataNodes.",
            s.dead_datanodes,
        ),
        (
            "rhdfs_namenode_stale_datanodes",
            "Live DataNodes whose last heartbeat is older than the stale interval.",
            s.stale_datanodes,
        ),
        (
            "rhdfs_namenode_decommissioning_datanodes",
            "Live DataNodes being decommissioned.",
            s.decommissioning_datanodes,
        ),
        (
            "rhdfs_namenode_decommissioned_datanodes",
            "Live DataNodes decommissioned.",
            s.decommissioned_datanodes,
        ),
        (
            "rhdfs_namenode_volume_failures",
            "Failed volumes of live DataNodes, as their heartbeats count them.",
            s.volume_failures,
        ),
        (
            "rhdfs_namenode_volume_failures_capacity_lost_bytes",
            "Estimated capacity lost to the failed volumes of live DataNodes.",
            s.capacity_lost,
        ),
        (
            "rhdfs_namenode_total_load",
            "Data transfer connections on live DataNodes.",
            f.total_load,
        ),
        (
            "rhdfs_namenode_last_written_transaction_id",
            "Last transaction id written to the edit log.",
            f.last_txid,
        ),
        (
            "rhdfs_namenode_transactions_since_last_checkpoint",
            "Transactions since the newest image.",
            f.txns_since_checkpoint,
        ),
    ];
    for (name, help, v) in gauges {
        e.gauge(name, help, v as f64);
    }
    e.gauge(
        "rhdfs_namenode_transactions_since_last_log_roll",
        "Transactions in the in-progress edit log segment.",
        f.txns_since_roll as f64,
    );
    e.gauge(
        "rhdfs_namenode_last_checkpoint_time_seconds",
        "When the newest image was written, seconds since the epoch (0: none yet).",
        f.last_checkpoint_ms as f64 / 1000.0,
    );
    e.gauge(
        "rhdfs_namenode_safe_mode",
        "1 while the NameNode is in safe mode.",
        if f.safe_mode { 1.0 } else { 0.0 },
    );
    e.histogram(
        "rhdfs_namenode_edit_log_sync_seconds",
        "Duration of the edit log's group flushes (write and fsync in every name directory).",
        &f.syncs,
    );
    let c = &f.liveness;
    e.counter(
        "rhdfs_namenode_datanode_registrations_total",
        "DataNode registrations (re-registrations included).",
        c.registrations as f64,
    );
    e.counter(
        "rhdfs_namenode_datanodes_declared_dead_total",
        "DataNodes the heartbeat checker declared dead.",
        c.declared_dead as f64,
    );
    e.counter(
        "rhdfs_namenode_heartbeat_scans_total",
        "Heartbeat checker passes that scanned.",
        c.heartbeat_scans as f64,
    );
    e.counter(
        "rhdfs_namenode_heartbeat_scans_skipped_total",
        "Heartbeat checker passes skipped after the checker was held up.",
        c.skipped_scans as f64,
    );
    let lock = |st: &rhdfs_blockmanager::LockStat| {
        vec![("lock", st.lock.to_string()), ("op", st.op.to_string())]
    };
    e.counters(
        "rhdfs_blockmanager_lock_holds_total",
        "Lock acquisitions per lock and operation.",
        f.locks.iter().map(|st| (lock(st), st.count as f64)),
    );
    e.gauges(
        "rhdfs_blockmanager_lock_max_hold_seconds",
        "Longest hold per lock and operation.",
        f.locks
            .iter()
            .map(|st| (lock(st), st.max_hold.as_secs_f64())),
    );
    e.counters(
        "rhdfs_blockmanager_lock_hold_seconds_total",
        "Total hold time per lock and operation.",
        f.locks
            .iter()
            .map(|st| (lock(st), st.total_hold.as_secs_f64())),
    );
    e.gauges(
        "rhdfs_blockmanager_lock_max_wait_seconds",
        "Longest wait per lock and operation.",
        f.locks
            .iter()
            .map(|st| (lock(st), st.max_wait.as_secs_f64())),
    );
    if let Some((_, r)) = &f.rpc {
        r.expose(&mut e, "rhdfs_namenode");
    }
    e.finish()
}
