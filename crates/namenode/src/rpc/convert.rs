//! Namespace types to and from Hadoop's protobuf messages.

use bytes::Bytes;
use rhdfs_blockmanager::Location;
use rhdfs_proto::common::TokenProto;
use rhdfs_proto::hdfs::{
    ContentSummaryProto, ExtendedBlockProto, FsPermissionProto, HdfsFileStatusProto,
    LocatedBlockProto, LocatedBlocksProto, StorageTypeQuotaInfoProto, StorageTypeQuotaInfosProto,
    hdfs_file_status_proto::FileType,
};

use super::datanode_info::datanode_info_to_proto;
use crate::fsdir::FileBlock;
use crate::fsdir::summary::ContentSummary;
use crate::namespace::FileStatus;
use crate::namesystem::{LocatedBlock, LocatedBlocks};

/// A quota as it travels: -1 ("unset") as the uint64 of its two's complement.
pub fn quota(q: i64) -> u64 {
    q as u64
}

pub fn block_from_proto(b: &ExtendedBlockProto) -> FileBlock {
    FileBlock {
        id: b.block_id,
        gs: b.generation_stamp,
        num_bytes: b.num_bytes.unwrap_or(0),
    }
}

pub fn block_to_proto(pool: &str, b: &FileBlock) -> ExtendedBlockProto {
    ExtendedBlockProto {
        pool_id: pool.to_string(),
        block_id: b.id,
        generation_stamp: b.gs,
        num_bytes: Some(b.num_bytes),
    }
}

/// A LocatedBlockProto: empty token, one storage id/type per location, no blockIndices.
pub fn located_block(pool: &str, lb: &LocatedBlock) -> LocatedBlockProto {
    located_from_parts(pool, &lb.block, lb.offset, &lb.locations, lb.corrupt)
}

pub fn located_from_parts(
    pool: &str,
    b: &FileBlock,
    offset: u64,
    locs: &[Location],
    corrupt: bool,
) -> LocatedBlockProto {
    LocatedBlockProto {
        b: block_to_proto(pool, b),
        offset,
        locs: locs
            .iter()
            .map(|l| datanode_info_to_proto(&l.info))
            .collect(),
        corrupt,
        block_token: TokenProto::default(),
        is_cached: Vec::new(),
        storage_types: locs.iter().map(|l| l.storage_type).collect(),
        storage_i_ds: locs.iter().map(|l| l.storage_id.clone()).collect(),
        block_indices: None,
        block_tokens: Vec::new(),
    }
}

pub fn located_blocks(pool: &str, lbs: &LocatedBlocks) -> LocatedBlocksProto {
    LocatedBlocksProto {
        file_length: lbs.file_length,
        blocks: lbs.blocks.iter().map(|b| located_block(pool, b)).collect(),
        under_construction: lbs.under_construction,
        last_block: lbs.last.as_ref().map(|b| located_block(pool, b)),
        is_last_block_complete: lbs.last_complete,
        file_encryption_info: None,
        ec_policy: None,
    }
}

/// An HdfsFileStatusProto; `locations` attached when given.
/// HdfsFileStatusProto.Flags.HAS_ACL.
pub const HAS_ACL_FLAG: u32 = 1;

pub fn file_status(st: &FileStatus, locations: Option<LocatedBlocksProto>) -> HdfsFileStatusProto {
    HdfsFileStatusProto {
        file_type: if st.is_dir {
            FileType::IsDir
        } else {
            FileType::IsFile
        } as i32,
        path: Bytes::from(st.name.clone()),
        length: st.length,
        permission: FsPermissionProto {
            // Hadoop's extended short: bit 12 marks an ACL.
            perm: u32::from(st.perm.mode) | if st.has_acl { 1 << 12 } else { 0 },
        },
        owner: st.perm.owner.to_string(),
        group: st.perm.group.to_string(),
        modification_time: st.mtime,
        access_time: st.atime,
        symlink: None,
        block_replication: Some(u32::from(st.replication)),
        blocksize: Some(st.block_size),
        locations,
        file_id: Some(st.id),
        children_num: Some(if st.is_dir { st.children_num as i32 } else { 0 }),
        file_encryption_info: None,
        storage_policy: Some(0),
        ec_policy: None,
        flags: Some(if st.has_acl { HAS_ACL_FLAG } else { 0 }),
        namespace: None,
    }
}

/// The storage types that take a quota, in Hadoop's `StorageType` order (RAM_DISK, being
/// transient, takes none), as `StorageTypeProto` values.
const QUOTA_TYPES: [i32; 5] = [2, 1, 3, 5, 6];

/// Per-type quotas and consumption, present (as Hadoop sends it) once a type quota is set
/// or something is consumed. Every replica is on DISK (see `namespace::quota`).
pub fn type_quota_infos(cs: &ContentSummary) -> Option<StorageTypeQuotaInfosProto> {
    if cs.type_quotas.is_none() && cs.space_consumed == 0 {
        return None;
    }
    let type_quota = |t: i32| {
        cs.type_quotas
            .as_ref()
            .map_or(crate::fsdir::QUOTA_UNSET, |q| q.get(t as u8))
    };
    Some(StorageTypeQuotaInfosProto {
        type_quota_info: QUOTA_TYPES
            .iter()
            .map(|&t| StorageTypeQuotaInfoProto {
                r#type: Some(t),
                quota: quota(type_quota(t)),
                consumed: if t == i32::from(crate::fsdir::DISK) {
                    cs.space_consumed
                } else {
                    0
                },
            })
            .collect(),
    })
}

pub fn content_summary(cs: &ContentSummary) -> ContentSummaryProto {
    ContentSummaryProto {
        length: cs.length,
        file_count: cs.file_count,
        directory_count: cs.directory_count,
        quota: quota(cs.quota),
        space_consumed: cs.space_consumed,
        space_quota: quota(cs.space_quota),
        type_quota_infos: type_quota_infos(cs),
        snapshot_length: None,
        snapshot_file_count: None,
        snapshot_directory_count: None,
        snapshot_space_consumed: None,
        // As Hadoop's NameNode: "Replicated" for a (non-striped) file; a directory without
        // an erasure coding policy of its own or above it has none ("").
        erasure_coding_policy: Some(if cs.directory_count == 0 {
            "Replicated".to_string()
        } else {
            String::new()
        }),
    }
}
