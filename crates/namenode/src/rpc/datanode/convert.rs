//! DatanodeProtocol messages as the block manager's domain types.

use rhdfs_blockmanager::{Block, StorageReport};
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
