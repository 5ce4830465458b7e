//! DatanodeInfoProto rendering of a DataNode descriptor.

use rhdfs_proto::hdfs::{DatanodeIdProto, DatanodeInfoProto};

use crate::datanodes::{DatanodeDescriptor, DatanodeId, Liveness};

pub fn datanode_id(id: &DatanodeId) -> DatanodeIdProto {
    DatanodeIdProto {
        ip_addr: id.ip_addr.clone(),
        host_name: id.host_name.clone(),
        datanode_uuid: id.uuid.clone(),
        xfer_port: id.xfer_port,
        info_port: id.info_port,
        ipc_port: id.ipc_port,
        info_secure_port: Some(id.info_secure_port),
    }
}

pub fn datanode_id_from_proto(p: &DatanodeIdProto) -> DatanodeId {
    DatanodeId {
        uuid: p.datanode_uuid.clone(),
        ip_addr: p.ip_addr.clone(),
        host_name: p.host_name.clone(),
        xfer_port: p.xfer_port,
        info_port: p.info_port,
        info_secure_port: p.info_secure_port.unwrap_or(0),
        ipc_port: p.ipc_port,
    }
}

/// Hadoop's DatanodeInfo as clients and dfsadmin see it. A dead node reports zero
/// capacity and usage, as Hadoop's does once its storages are gone.
pub fn datanode_info(d: &DatanodeDescriptor, liveness: Liveness) -> DatanodeInfoProto {
    datanode_info_with_blocks(d, liveness, None)
}

/// As `datanode_info`, with the number of replicas the node holds (dfsadmin -report).
pub fn datanode_info_with_blocks(
    d: &DatanodeDescriptor,
    liveness: Liveness,
    num_blocks: Option<usize>,
) -> DatanodeInfoProto {
    let dead = liveness == Liveness::Dead;
    let num = |v: u64| Some(if dead { 0 } else { v });
    DatanodeInfoProto {
        id: datanode_id(&d.id),
        capacity: num(d.capacity()),
        dfs_used: num(d.dfs_used()),
        remaining: num(d.remaining()),
        block_pool_used: num(d.block_pool_used()),
        last_update: Some(d.last_update_ms),
        xceiver_count: Some(if dead { 0 } else { d.xceiver_count }),
        location: Some(d.network_location.clone()),
        non_dfs_used: num(d.non_dfs_used()),
        admin_state: Some(d.admin.to_proto()),
        cache_capacity: Some(0),
        cache_used: Some(0),
        last_update_monotonic: Some(d.last_update_mono.as_millis() as u64),
        last_block_report_time: Some(d.last_block_report_ms),
        last_block_report_monotonic: Some(d.last_block_report_mono.as_millis() as u64),
        num_blocks: num_blocks.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
        ..DatanodeInfoProto::default()
    }
}

/// `info` with the node's failed volumes (rhdfs's DatanodeInfoProto fields 1002-1005),
/// for datanode reports.
pub fn with_volume_failures(
    mut info: DatanodeInfoProto,
    d: &DatanodeDescriptor,
) -> DatanodeInfoProto {
    if d.volume_failures > 0 {
        info.rhdfs_volume_failures = Some(d.volume_failures);
    }
    if let Some(s) = &d.volume_failure_summary {
        info.rhdfs_failed_storage_locations = s.failed_storage_locations.clone();
        info.rhdfs_last_volume_failure_date = Some(s.last_volume_failure_date);
        info.rhdfs_estimated_capacity_lost = Some(s.estimated_capacity_lost_total);
    }
    info
}
