//! DatanodeProtocol messages as the block manager's domain types.

use rhdfs_blockmanager::slowpeers::{SlowDiskEntry, SlowPeerEntry};
use rhdfs_blockmanager::volume_failures::VolumeFailureSummary;
use rhdfs_blockmanager::{Block, StorageReport};
use rhdfs_proto::datanode::{SlowDiskReportProto, SlowPeerReportProto, VolumeFailureSummaryProto};
use rhdfs_proto::hdfs::{BlockProto, DatanodeStorageProto, StorageReportProto};

/// StorageTypeProto DISK, the type of a storage that names none.
pub const DISK: i32 = 1;

/// A heartbeat's storage report (older DataNodes send only the legacy storage uuid).
pub fn storage_report(r: &StorageReportProto) -> StorageReport {
    #[allow(deprecated)]
    let legacy_id = &r.storage_uuid;
    let (storage_id, storage_type) = storage_of(r.storage.as_ref(), legacy_id);
    StorageReport {
        storage_id,
        storage_type,
        failed: r.failed.unwrap_or(false),
        capacity: r.capacity.unwrap_or(0),
        dfs_used: r.dfs_used.unwrap_or(0),
        remaining: r.remaining.unwrap_or(0),
        block_pool_used: r.block_pool_used.unwrap_or(0),
        non_dfs_used: r.non_dfs_used,
    }
}

/// A storage's id and type: the DatanodeStorageProto when sent, else the legacy id on DISK.
pub fn storage_of(storage: Option<&DatanodeStorageProto>, legacy_id: &str) -> (String, i32) {
    match storage {
        Some(s) => (s.storage_uuid.clone(), s.storage_type.unwrap_or(DISK)),
        None => (legacy_id.to_string(), DISK),
    }
}

/// A block as the block manager names it (a missing length is 0).
pub fn block_of(b: &BlockProto) -> Block {
    Block::new(b.block_id, b.gen_stamp, b.num_bytes.unwrap_or(0))
}

/// A block as DataNode commands carry it.
pub fn block_proto(b: &Block) -> BlockProto {
    BlockProto {
        block_id: b.id,
        gen_stamp: b.gs,
        num_bytes: Some(b.num_bytes),
    }
}

/// A heartbeat's slow peer entry (fields 3-5 absent from DataNodes before Hadoop 3.4).
pub fn slow_peer(p: &SlowPeerReportProto) -> SlowPeerEntry {
    SlowPeerEntry {
        peer: p.data_node_id.clone().unwrap_or_default(),
        latency: p.aggregate_latency,
        median: p.median,
        mad: p.mad,
        upper_limit: p.upper_limit_latency,
    }
}

/// A heartbeat's slow disk entry.
pub fn slow_disk(d: &SlowDiskReportProto) -> SlowDiskEntry {
    SlowDiskEntry {
        base_path: d.base_path.clone().unwrap_or_default(),
        metadata_latency: d.mean_metadata_op_latency,
        read_latency: d.mean_read_io_latency,
        write_latency: d.mean_write_io_latency,
    }
}

pub fn volume_failure_summary(p: &VolumeFailureSummaryProto) -> VolumeFailureSummary {
    VolumeFailureSummary {
        failed_storage_locations: p.failed_storage_locations.clone(),
        last_volume_failure_date: p.last_volume_failure_date,
        estimated_capacity_lost_total: p.estimated_capacity_lost_total,
    }
}
