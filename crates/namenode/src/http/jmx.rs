//! The NameNode's `/jmx` beans with Hadoop's object names and attribute names
//! (NameNodeInfo, NameNodeStatus, FSNamesystem, FSNamesystemState, BlockStats,
//! NameNodeActivity, StartupProgress, RpcActivityForPort<port>,
//! RpcDetailedActivityForPort<port>), the block manager's lock holds (BlockManagerLocks) and
//! rhdfs's own DatanodeLiveness and BlockConsistency beans.

use rhdfs_blockmanager::DatanodeInfo;
use rhdfs_metrics::{Bean, Val, build};

use super::figures::Figures;

const NN: &str = "Hadoop:service=NameNode";

fn node_key(d: &DatanodeInfo) -> String {
    format!("{}:{}", d.id.host_name, d.id.xfer_port)
}

/// NameNodeInfo's LiveNodes: a JSON object keyed `host:xferPort`, as a string.
fn live_nodes(f: &Figures) -> String {
    let j = rhdfs_conf::json::string;
    let nodes: Vec<String> = f
        .live
        .iter()
        .map(|d| {
            let last_contact = f.now_ms.saturating_sub(d.last_update_ms) / 1000;
            let cap = d.capacity;
            let bpu = d.block_pool_used;
            let pct = if cap == 0 { 0.0 } else { bpu as f64 * 100.0 / cap as f64 };
            format!(
                "{}:{{\"infoAddr\":{},\"xferaddr\":{},\"location\":{},\"uuid\":{},\"lastContact\":{last_contact},\"usedSpace\":{},\"adminState\":{},\"nonDfsUsedSpace\":{},\"capacity\":{cap},\"numBlocks\":{},\"version\":{},\"used\":{},\"remaining\":{},\"blockScheduled\":{},\"blockPoolUsed\":{bpu},\"blockPoolUsedPercent\":{},\"volfails\":{},\"lastBlockReport\":{}{}}}",
                j(&node_key(d)),
                j(&format!("{}:{}", d.id.ip_addr, d.id.info_port)),
                j(&format!("{}:{}", d.id.ip_addr, d.id.xfer_port)),
                j(&d.location),
                j(&d.id.uuid),
                d.dfs_used,
                j(d.admin_state.hadoop_name()),
                d.non_dfs_used,
                d.num_blocks.unwrap_or(0),
                j(build::VERSION),
                d.dfs_used,
                d.remaining,
                d.blocks_scheduled,
                rhdfs_conf::json::number(pct),
                d.volume_failures,
                f.now_ms.saturating_sub(d.last_block_report_ms) / 60_000,
                volume_failure_json(d),
            )
        })
        .collect();
    format!("{{{}}}", nodes.join(","))
}

/// The VolumeFailureSummary keys Hadoop adds to a LiveNodes entry of a node with one.
fn volume_failure_json(d: &DatanodeInfo) -> String {
    let Some(s) = &d.volume_failure_summary else {
        return String::new();
    };
    let j = rhdfs_conf::json::string;
    let date = s.last_volume_failure_date;
    let locations: Vec<String> = s.failed_storage_locations.iter().map(|l| j(l)).collect();
    format!(
        ",\"failedStorageLocations\":[{}],\"lastVolumeFailureDate\":{date},\"estimatedCapacityLostTotal\":{}",
        locations.join(","),
        s.estimated_capacity_lost_total
    )
}

fn dead_nodes(f: &Figures) -> String {
    let j = rhdfs_conf::json::string;
    let nodes: Vec<String> = f
        .dead
        .iter()
        .map(|d| {
            format!(
                "{}:{{\"lastContact\":{},\"decommissioned\":{},\"adminState\":{},\"xferaddr\":{}}}",
                j(&node_key(d)),
                f.now_ms.saturating_sub(d.last_update_ms) / 1000,
                d.admin_state == rhdfs_blockmanager::AdminState::Decommissioned,
                j(d.admin_state.hadoop_name()),
                j(&format!("{}:{}", d.id.ip_addr, d.id.xfer_port)),
            )
        })
        .collect();
    format!("{{{}}}", nodes.join(","))
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn name_node_info(f: &Figures) -> Bean {
    let s = &f.s;
    let dirs: Vec<String> = f
        .name_dirs
        .iter()
        .map(|d| format!("{}:\"IMAGE_AND_EDITS\"", rhdfs_conf::json::string(d)))
        .collect();
    Bean::new(
        format!("{NN},name=NameNodeInfo"),
        "org.apache.hadoop.hdfs.server.namenode.FSNamesystem",
    )
    .with("Total", s.capacity)
    .with("ClusterId", f.cluster_id.as_str())
    .with("BlockPoolId", f.block_pool_id.as_str())
    .with("Version", build::version_with_revision())
    .with("SoftwareVersion", build::VERSION)
    .with("CompileInfo", build::compile_info())
    .with("Used", s.used)
    .with("Free", s.remaining)
    .with("Safemode", f.safe_mode_text())
    .with("NonDfsUsedSpace", f.non_dfs_used())
    .with("PercentUsed", pct(s.used, s.capacity))
    .with("PercentRemaining", pct(s.remaining, s.capacity))
    .with("BlockPoolUsedSpace", s.block_pool_used)
    .with("PercentBlockPoolUsed", pct(s.block_pool_used, s.capacity))
    .with("TotalBlocks", s.blocks_total)
    .with("TotalFiles", f.inodes)
    .with("NumberOfMissingBlocks", s.missing_blocks)
    .with(
        "NumberOfMissingBlocksWithReplicationFactorOne",
        s.missing_repl_one,
    )
    .with("LiveNodes", live_nodes(f))
    .with("DeadNodes", dead_nodes(f))
    .with("DecomNodes", "{}")
    .with(
        "NameDirStatuses",
        format!("{{\"active\":{{{}}},\"failed\":{{}}}}", dirs.join(",")),
    )
    .with("NNStartedTimeInMillis", f.facts.started_ms)
    .with("UpgradeFinalized", true)
    .with("Threads", rhdfs_metrics::process::read().threads)
}

fn name_node_status(f: &Figures) -> Bean {
    let host_port = match &f.facts.rpc {
        Some((a, _)) => format!("{}:{}", f.facts.host, a.port()),
        None => f.facts.host.clone(),
    };
    let mut b = Bean::new(
        format!("{NN},name=NameNodeStatus"),
        "org.apache.hadoop.hdfs.server.namenode.NameNode",
    )
    .with("NNRole", "NameNode")
    .with("HostAndPort", host_port)
    .with("SecurityEnabled", false)
    .with("State", f.ha_state)
    .with("LastHATransitionTime", 0u64)
    .with("BytesWithFutureGenerationStamps", f.future_bytes);
    if let Some(r) = &f.slow_peers {
        b.push("SlowPeersReport", r.as_str());
    }
    if let Some(r) = &f.slow_disks {
        b.push("SlowDisksReport", r.as_str());
    }
    b
}

fn fs_namesystem(f: &Figures) -> Bean {
    let s = &f.s;
    let gb = |b: u64| b as f64 / (1u64 << 30) as f64;
    Bean::new(format!("{NN},name=FSNamesystem"), "FSNamesystem")
        .with("tag.Context", "dfs")
        .with("tag.HAState", f.ha_state)
        .with("tag.Hostname", f.facts.host.as_str())
        .with("MissingBlocks", s.missing_blocks)
        .with("MissingReplOneBlocks", s.missing_repl_one)
        .with("CapacityTotal", s.capacity)
        .with("CapacityTotalGB", gb(s.capacity))
        .with("CapacityUsed", s.used)
        .with("CapacityUsedGB", gb(s.used))
        .with("CapacityRemaining", s.remaining)
        .with("CapacityRemainingGB", gb(s.remaining))
        .with("CapacityUsedNonDFS", f.non_dfs_used())
        .with("TotalLoad", f.total_load)
        .with("BlocksTotal", s.blocks_total)
        .with("FilesTotal", f.inodes)
        .with("NumFilesUnderConstruction", f.files_under_construction)
        .with("NumActiveClients", f.active_clients)
        .with("PendingReplicationBlocks", s.pending_reconstruction)
        .with("PendingReconstructionBlocks", s.pending_reconstruction)
        .with("UnderReplicatedBlocks", s.under_replicated)
        .with("LowRedundancyBlocks", s.under_replicated)
        .with("CorruptBlocks", s.corrupt_blocks)
        .with("PostponedMisreplicatedBlocks", f.postponed)
        .with("PendingDeletionBlocks", s.pending_deletion_blocks())
        .with("NumLiveDataNodes", s.live_datanodes)
        .with("NumDeadDataNodes", s.dead_datanodes)
        .with("NumStaleDataNodes", s.stale_datanodes)
        .with("NumDecomLiveDataNodes", s.decommissioned_datanodes)
        .with("NumDecommissioningDataNodes", s.decommissioning_datanodes)
        .with("StaleDataNodes", s.stale_datanodes)
        .with("VolumeFailuresTotal", s.volume_failures)
        .with("EstimatedCapacityLostTotal", s.capacity_lost)
        .with("LastCheckpointTime", f.last_checkpoint_ms)
        .with("TransactionsSinceLastCheckpoint", f.txns_since_checkpoint)
        .with("TransactionsSinceLastLogRoll", f.txns_since_roll)
        .with("LastWrittenTransactionId", f.last_txid)
        .with("TotalSyncCount", f.syncs.count)
        .with("BlocksInFuture", f.future_replicas)
        .with("BytesInFuture", f.future_bytes)
        .with("HeldOrphanReplicas", f.orphan_replicas)
        .with("HeldOrphanBytes", f.orphan_bytes)
}

fn fs_namesystem_state(f: &Figures) -> Bean {
    let s = &f.s;
    Bean::new(
        format!("{NN},name=FSNamesystemState"),
        "org.apache.hadoop.hdfs.server.namenode.FSNamesystem",
    )
    .with(
        "FSState",
        if f.safe_mode {
            "safeMode"
        } else {
            "Operational"
        },
    )
    .with("CapacityTotal", s.capacity)
    .with("CapacityUsed", s.used)
    .with("CapacityRemaining", s.remaining)
    .with("BlocksTotal", s.blocks_total)
    .with("FilesTotal", f.inodes)
    .with("PendingReplicationBlocks", s.pending_reconstruction)
    .with("PendingReconstructionBlocks", s.pending_reconstruction)
    .with("UnderReplicatedBlocks", s.under_replicated)
    .with("LowRedundancyBlocks", s.under_replicated)
    .with("TotalLoad", f.total_load)
    .with("NumLiveDataNodes", s.live_datanodes)
    .with("NumDeadDataNodes", s.dead_datanodes)
    .with("NumStaleDataNodes", s.stale_datanodes)
    .with("NumDecomLiveDataNodes", s.decommissioned_datanodes)
    .with("NumDecommissioningDataNodes", s.decommissioning_datanodes)
    .with("VolumeFailuresTotal", s.volume_failures)
    .with("EstimatedCapacityLostTotal", s.capacity_lost)
}

fn block_stats(f: &Figures) -> Bean {
    let s = &f.s;
    let stats = format!(
        "[{{\"key\":\"DISK\",\"value\":{{\"blockPoolUsed\":{},\"capacityRemaining\":{},\"capacityTotal\":{},\"capacityUsed\":{},\"capacityNonDfsUsed\":{},\"nodesInService\":{}}}}}]",
        s.block_pool_used,
        s.remaining,
        s.capacity,
        s.used,
        f.non_dfs_used(),
        s.live_datanodes
            .saturating_sub(s.decommissioning_datanodes + s.decommissioned_datanodes)
    );
    Bean::new(
        format!("{NN},name=BlockStats"),
        "org.apache.hadoop.hdfs.server.blockmanagement.BlockManager",
    )
    .with("StorageTypeStats", Val::Json(stats))
}

fn activity(f: &Figures) -> Bean {
    let mut b = Bean::new(format!("{NN},name=NameNodeActivity"), "NameNodeActivity")
        .with("tag.ProcessName", "NameNode")
        .with("tag.Context", "dfs")
        .with("tag.Hostname", f.facts.host.as_str());
    // Operation counters from the RPC server's per-method counts.
    for (attr, method) in [
        ("CreateFileOps", "create"),
        ("GetBlockLocations", "getBlockLocations"),
        ("GetListingOps", "getListing"),
        ("DeleteFileOps", "delete"),
        ("FileInfoOps", "getFileInfo"),
        ("AddBlockOps", "addBlock"),
        ("GetAdditionalDatanodeOps", "getAdditionalDatanode"),
        ("FilesRenamed", "rename2"),
        ("FilesAppended", "append"),
        ("FilesTruncated", "truncate"),
        ("GetLinkTargetOps", "getLinkTarget"),
    ] {
        b.push(attr, f.calls(method).map_or(0, |h| h.count));
    }
    let txns = f.last_txid.saturating_sub(f.facts.txid_at_start);
    b.push("TransactionsNumOps", txns);
    b.push("SyncsNumOps", f.syncs.count);
    b.push("SyncsAvgTime", f.syncs.mean_millis());
    let br = f.calls("blockReport").cloned().unwrap_or_default();
    b.push("BlockReportNumOps", br.count);
    b.push("BlockReportAvgTime", br.mean_millis());
    let hb = f.calls("sendHeartbeat").cloned().unwrap_or_default();
    b.push("HeartbeatNumOps", hb.count);
    b.push("HeartbeatAvgTime", hb.mean_millis());
    b
}

/// Hadoop's StartupProgressMetrics: overall ElapsedTime and PercentComplete, then per
/// phase `<Phase>Count`, `ElapsedTime`, `Total`, `PercentComplete` (see `crate::startup`).
fn startup_progress(f: &Figures) -> Bean {
    let mut b = Bean::new(format!("{NN},name=StartupProgress"), "StartupProgress")
        .with("tag.Hostname", f.facts.host.as_str());
    let Some(v) = &f.startup else {
        return b;
    };
    b.push("ElapsedTime", v.elapsed_ms);
    b.push("PercentComplete", v.percent_complete);
    for p in &v.phases {
        let name = p.phase.name();
        b.push(format!("{name}Count"), p.count);
        b.push(format!("{name}ElapsedTime"), p.elapsed_ms);
        b.push(format!("{name}Total"), p.total);
        b.push(format!("{name}PercentComplete"), p.percent_complete);
    }
    b
}

fn locks(f: &Figures) -> Bean {
    let mut b = Bean::new(format!("{NN},name=BlockManagerLocks"), "BlockManagerLocks");
    for st in &f.locks {
        let p = format!("{}.{}", st.lock, st.op);
        b.push(format!("{p}.Count"), st.count);
        b.push(format!("{p}.MaxHoldMicros"), st.max_hold.as_micros() as u64);
        b.push(
            format!("{p}.TotalHoldMicros"),
            st.total_hold.as_micros() as u64,
        );
        b.push(format!("{p}.MaxWaitMicros"), st.max_wait.as_micros() as u64);
    }
    b
}

/// Every bean, in a fixed order.
pub(crate) fn beans(f: &Figures) -> Vec<Bean> {
    let c = &f.liveness;
    let mut out = vec![
        name_node_info(f),
        name_node_status(f),
        fs_namesystem(f),
        fs_namesystem_state(f),
        block_stats(f),
        activity(f),
        startup_progress(f),
        locks(f),
        // Not one of Hadoop's beans: DataNode liveness events, hence the rhdfs domain.
        Bean::new(
            "rhdfs:service=NameNode,name=DatanodeLiveness",
            "DatanodeLiveness",
        )
        .with("Registrations", c.registrations)
        .with("DeclaredDead", c.declared_dead)
        .with("HeartbeatScans", c.heartbeat_scans)
        .with("HeartbeatScansSkipped", c.skipped_scans),
        // Not one of Hadoop's beans: the blocks map against the namespace (equal once
        // deletions are removed from the map), and the held orphans.
        Bean::new(
            "rhdfs:service=NameNode,name=BlockConsistency",
            "BlockConsistency",
        )
        .with("NamespaceBlocks", f.ns_blocks)
        .with("BlocksMapBlocks", f.s.blocks_total)
        .with("PendingRemovalBlocks", f.s.pending_removal)
        .with("HeldOrphanReplicas", f.orphan_replicas)
        .with("ReplicasInFuture", f.future_replicas),
        // Not one of Hadoop's beans: what this NameNode did with reads as an observer.
        Bean::new("rhdfs:service=NameNode,name=ObserverReads", "ObserverReads")
            .with("Served", f.observer_reads[0])
            .with("Waited", f.observer_reads[1])
            .with("Refused", f.observer_reads[2]),
    ];
    if let Some((port, r)) = &f.rpc {
        out.extend(r.beans("NameNode", *port, &f.facts.host));
    }
    out
}
