//! The DataNode's `/jmx` beans (Hadoop's names: DataNodeInfo, DataNodeActivity-<host>-<port>,
//! FSDatasetState, DataNodeVolume-<dir> (`volume_beans`), RpcActivityForPort<port>,
//! RpcDetailedActivityForPort<port>) and its
//! `/metrics` families, both read from one [`Status`].

use std::sync::atomic::Ordering;

use rhdfs_metrics::jmx::Val;
use rhdfs_metrics::{Bean, Exposition, build};

use super::Status;
use crate::metrics::Activity;

use super::SERVICE;

fn volume_info(st: &Status) -> String {
    let stats = st.dataset.storage_stats();
    let vols: Vec<String> = st
        .dataset
        .volumes()
        .iter()
        .zip(&stats)
        .map(|(v, s)| {
            format!(
                "{}:{{\"usedSpace\":{},\"freeSpace\":{},\"reservedSpace\":{},\"numBlocks\":{},\"storageType\":\"DISK\"}}",
                rhdfs_conf::json::string(&v.base.join("current").display().to_string()),
                s.dfs_used,
                s.space.available,
                v.reserved(),
                s.replicas
            )
        })
        .collect();
    format!("{{{}}}", vols.join(","))
}

/// The activity bean's name: Hadoop's `DataNodeActivity-<host>-<xfer port>`.
pub(crate) fn activity_name(st: &Status) -> String {
    format!(
        "DataNodeActivity-{}-{}",
        st.identity.host_name, st.identity.xfer_port
    )
}

pub(crate) fn beans(st: &Status) -> Vec<Bean> {
    let id = &st.identity;
    let now = super::now_ms();
    let bpid = st.actor.block_pool_id().unwrap_or_default();
    let nn_host = st
        .namenode
        .split(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let mut info = Bean::new(
        format!("{SERVICE},name=DataNodeInfo"),
        "org.apache.hadoop.hdfs.server.datanode.DataNode",
    )
    .with("Version", build::VERSION)
    .with("SoftwareVersion", build::VERSION)
    .with("RpcPort", id.ipc_port.to_string())
    .with("HttpPort", id.info_port.to_string())
    .with("DataPort", id.xfer_port.to_string())
    .with("DatanodeHostname", id.host_name.as_str())
    .with(
        "NamenodeAddresses",
        format!(
            "{{{}:{}}}",
            rhdfs_conf::json::string(&nn_host),
            rhdfs_conf::json::string(&bpid)
        ),
    )
    .with(
        "BPServiceActorInfo",
        format!(
            "[{{\"NamenodeAddress\":{},\"BlockPoolID\":{},\"ActorState\":{},\"LastHeartbeat\":\"{}\",\"LastBlockReport\":\"{}\"}}]",
            rhdfs_conf::json::string(&st.namenode),
            rhdfs_conf::json::string(&bpid),
            rhdfs_conf::json::string(st.actor_state()),
            super::secs_since(Activity::get(&st.activity.last_heartbeat_ms), now),
            super::secs_since(Activity::get(&st.activity.last_block_report_ms), now),
        ),
    )
    .with("VolumeInfo", volume_info(st))
    .with("ClusterId", st.actor.cluster_id().unwrap_or_default())
    .with("XceiverCount", st.xceivers.load(Ordering::Relaxed))
    .with("XmitsInProgress", u64::from(st.actor.xmits_in_progress()))
    // SIMPLE authentication is the only kind rhdfs speaks.
    .with("SecurityEnabled", false)
    .with("DNStartedTimeInMillis", st.started_ms)
    .with("DatanodeUuid", id.datanode_uuid.as_str());
    if let Some(m) = &st.slow {
        if let Some(s) = m.send_packet_downstream_avg_info() {
            info.push("SendPacketDownstreamAvgInfo", s);
        }
        if let Some(s) = m.slow_disks_json() {
            info.push("SlowDisks", s);
        }
    }

    let a = &st.activity;
    let g = Activity::get;
    let name = activity_name(st);
    let mut act = Bean::new(format!("{SERVICE},name={name}"), name.clone())
        .with("tag.SessionId", "")
        .with("tag.Context", "dfs")
        .with("tag.Hostname", id.host_name.as_str())
        .with("BytesWritten", g(&a.bytes_written))
        .with("BytesRead", g(&a.bytes_read))
        .with("BlocksWritten", g(&a.blocks_written))
        .with("BlocksRead", g(&a.blocks_read))
        .with("BlocksReplicated", g(&a.blocks_replicated))
        .with("BlocksVerified", g(&a.blocks_verified))
        .with(
            "BlockVerificationFailures",
            g(&a.block_verification_failures),
        )
        .with("VolumeFailures", g(&a.volume_failures))
        .with("DatanodeNetworkErrors", g(&a.network_errors));
    for (key, h) in [
        ("ReadBlockOp", &a.read_block_op),
        ("WriteBlockOp", &a.write_block_op),
        ("BlockChecksumOp", &a.block_checksum_op),
        ("Heartbeats", &a.heartbeats),
        ("BlockReports", &a.block_reports),
        ("IncrementalBlockReports", &a.incremental_block_reports),
    ] {
        let s = h.snapshot();
        act.push(format!("{key}NumOps"), s.count);
        act.push(format!("{key}AvgTime"), s.mean_millis());
    }
    act.push("HeartbeatsTotalNumOps", a.heartbeats.count());

    // Volumes in service only, as Hadoop's dataset lists them.
    let stats: Vec<_> = st
        .dataset
        .storage_stats()
        .into_iter()
        .filter(|s| !s.failed)
        .collect();
    let dirs: Vec<String> = st
        .dataset
        .volumes()
        .iter()
        .filter(|v| !v.is_failed())
        .map(|v| v.base.join("current").display().to_string())
        .collect();
    let failures = st.dataset.failure_summary();
    let failed_locations: Vec<String> = failures
        .as_ref()
        .map(|f| {
            f.locations
                .iter()
                .map(|l| rhdfs_conf::json::string(l))
                .collect()
        })
        .unwrap_or_default();
    let fsd = Bean::new(
        format!("{SERVICE},name=FSDatasetState"),
        "org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl",
    )
    .with(
        "Capacity",
        stats.iter().map(|s| s.space.capacity).sum::<u64>(),
    )
    .with("DfsUsed", stats.iter().map(|s| s.dfs_used).sum::<u64>())
    .with(
        "Remaining",
        stats.iter().map(|s| s.space.available).sum::<u64>(),
    )
    .with("NumBlocks", stats.iter().map(|s| s.replicas).sum::<u64>())
    .with(
        "StorageInfo",
        format!("FSDataset{{dirpath='[{}]'}}", dirs.join(", ")),
    )
    .with("NumFailedVolumes", st.dataset.num_failed_volumes())
    .with(
        "FailedStorageLocations",
        Val::Json(format!("[{}]", failed_locations.join(","))),
    )
    .with(
        "LastVolumeFailureDate",
        failures.as_ref().map_or(0, |f| f.last_date_ms),
    )
    .with(
        "EstimatedCapacityLostTotal",
        failures.as_ref().map_or(0, |f| f.capacity_lost),
    );

    let mut out = vec![info, act, fsd];
    out.extend(super::volume_beans::beans(st));
    out.extend(
        st.rpc
            .snapshot()
            .beans("DataNode", id.ipc_port, &id.host_name),
    );
    out
}

pub(crate) fn prometheus(st: &Status) -> String {
    let mut e = Exposition::new();
    build::expose(&mut e, "datanode");
    let a = &st.activity;
    let g = |c: &std::sync::atomic::AtomicU64| Activity::get(c) as f64;
    e.counter(
        "rhdfs_datanode_bytes_read_total",
        "Bytes of replica data sent to readers.",
        g(&a.bytes_read),
    );
    e.counter(
        "rhdfs_datanode_bytes_written_total",
        "Bytes of replica data received and written.",
        g(&a.bytes_written),
    );
    e.counter(
        "rhdfs_datanode_blocks_read_total",
        "Block reads served to the end of their range.",
        g(&a.blocks_read),
    );
    e.counter(
        "rhdfs_datanode_blocks_written_total",
        "Replicas written and finalized.",
        g(&a.blocks_written),
    );
    e.counter(
        "rhdfs_datanode_blocks_replicated_total",
        "Replicas copied to other DataNodes for the NameNode.",
        g(&a.blocks_replicated),
    );
    e.counter(
        "rhdfs_datanode_blocks_verified_total",
        "Replicas the block scanner checked against their checksums.",
        g(&a.blocks_verified),
    );
    e.counter(
        "rhdfs_datanode_block_verification_failures_total",
        "Replicas the block scanner found not matching their checksums.",
        g(&a.block_verification_failures),
    );
    e.counter(
        "rhdfs_datanode_network_errors_total",
        "Data transfer ops that failed on an I/O or protocol error.",
        g(&a.network_errors),
    );
    e.gauge(
        "rhdfs_datanode_xceivers",
        "Data transfer connections being served.",
        st.xceivers.load(Ordering::Relaxed) as f64,
    );
    e.gauge(
        "rhdfs_datanode_registered",
        "1 while registered with the NameNode.",
        if st.actor.is_registered() { 1.0 } else { 0.0 },
    );
    let ops = [
        ("read_block", a.read_block_op.snapshot()),
        ("write_block", a.write_block_op.snapshot()),
        ("block_checksum", a.block_checksum_op.snapshot()),
        ("transfer_block", a.transfer_block_op.snapshot()),
    ];
    e.histograms(
        "rhdfs_datanode_op_duration_seconds",
        "Duration of data transfer ops.",
        ops.iter().map(|(op, h)| (vec![("op", op.to_string())], h)),
    );
    let calls = [
        ("sendHeartbeat", a.heartbeats.snapshot()),
        ("blockReport", a.block_reports.snapshot()),
        (
            "blockReceivedAndDeleted",
            a.incremental_block_reports.snapshot(),
        ),
    ];
    e.histograms(
        "rhdfs_datanode_namenode_call_duration_seconds",
        "Round trip of the DataNode's calls to the NameNode (heartbeat latency included).",
        calls
            .iter()
            .map(|(m, h)| (vec![("method", m.to_string())], h)),
    );
    let stats = st.dataset.storage_stats();
    let vols: Vec<_> = st
        .dataset
        .volumes()
        .iter()
        .zip(&stats)
        .filter(|(v, _)| !v.is_failed())
        .collect();
    let label = |v: &crate::volume::Volume| {
        vec![
            ("volume", v.base.display().to_string()),
            ("storage_id", v.storage_id.clone()),
        ]
    };
    e.gauge(
        "rhdfs_datanode_volumes",
        "Volumes in service.",
        vols.len() as f64,
    );
    e.gauge(
        "rhdfs_datanode_failed_volumes",
        "Volumes failed since the start (at start-up included).",
        st.dataset.num_failed_volumes() as f64,
    );
    e.gauges(
        "rhdfs_datanode_volume_capacity_bytes",
        "Capacity of each volume (its file system's size).",
        vols.iter()
            .map(|(v, s)| (label(v), s.space.capacity as f64)),
    );
    e.gauges(
        "rhdfs_datanode_volume_available_bytes",
        "Space available on each volume.",
        vols.iter()
            .map(|(v, s)| (label(v), s.space.available as f64)),
    );
    e.gauges(
        "rhdfs_datanode_volume_used_bytes",
        "Bytes of replicas and their checksums on each volume.",
        vols.iter().map(|(v, s)| (label(v), s.dfs_used as f64)),
    );
    e.gauges(
        "rhdfs_datanode_volume_replicas",
        "Replicas on each volume.",
        vols.iter().map(|(v, s)| (label(v), s.replicas as f64)),
    );
    super::volume_beans::expose(st, &mut e);
    st.rpc.snapshot().expose(&mut e, "rhdfs_datanode");
    e.finish()
}
