//! Plain result types: file status, content summary, filesystem stats, server defaults.

use rhdfs_proto::hdfs::{
    ContentSummaryProto, FsServerDefaultsProto, GetFsStatsResponseProto, HdfsFileStatusProto,
    hdfs_file_status_proto::FileType,
};

/// One file or directory, with its full path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatus {
    /// Absolute path (normalised, without scheme and authority).
    pub path: String,
    pub length: u64,
    pub is_dir: bool,
    pub is_symlink: bool,
    pub symlink: Option<String>,
    /// Permission bits including sticky (01000).
    pub permission: u16,
    pub owner: String,
    pub group: String,
    /// Milliseconds since the epoch.
    pub modification_time: u64,
    pub access_time: u64,
    /// 0 for directories.
    pub replication: u16,
    /// 0 for directories.
    pub block_size: u64,
    pub file_id: u64,
    /// Directories: number of children (-1 if unknown).
    pub children_num: i32,
    /// The NameNode reported an ACL on this path.
    pub has_acl: bool,
}

impl FileStatus {
    /// Builds a status from the NameNode's proto; `parent_or_path` is the queried path when
    /// `p.path` is empty, else the directory the entry was listed in.
    pub fn from_proto(p: &HdfsFileStatusProto, parent_or_path: &str) -> Self {
        let local = String::from_utf8_lossy(&p.path).into_owned();
        let path = if local.is_empty() {
            parent_or_path.to_string()
        } else {
            crate::path::join(parent_or_path, &local)
        };
        FileStatus {
            path,
            length: p.length,
            is_dir: p.file_type == FileType::IsDir as i32,
            is_symlink: p.file_type == FileType::IsSymlink as i32,
            symlink: p
                .symlink
                .as_ref()
                .map(|s| String::from_utf8_lossy(s).into_owned()),
            permission: (p.permission.perm & 0o7777) as u16,
            owner: p.owner.clone(),
            group: p.group.clone(),
            modification_time: p.modification_time,
            access_time: p.access_time,
            replication: p.block_replication.unwrap_or(0) as u16,
            block_size: p.blocksize.unwrap_or(0),
            file_id: p.file_id.unwrap_or(0),
            children_num: p.children_num.unwrap_or(-1),
            has_acl: p.flags.unwrap_or(0) & 1 != 0,
        }
    }

    pub fn is_file(&self) -> bool {
        !self.is_dir && !self.is_symlink
    }

    /// The last path component.
    pub fn name(&self) -> &str {
        crate::path::name(&self.path)
    }
}

/// `rwxr-xr-x` style string of the low 9 bits plus sticky (`t`/`T` in the last place).
pub fn permission_string(perm: u16) -> String {
    let mut s = String::with_capacity(9);
    for shift in [6u16, 3, 0] {
        let bits = (perm >> shift) & 7;
        s.push(if bits & 4 != 0 { 'r' } else { '-' });
        s.push(if bits & 2 != 0 { 'w' } else { '-' });
        s.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    if perm & 0o1000 != 0 {
        let other_x = perm & 1 != 0;
        s.pop();
        s.push(if other_x { 't' } else { 'T' });
    }
    s
}

/// `getContentSummary` result. Quotas are `-1` when not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentSummary {
    pub length: u64,
    pub file_count: u64,
    pub directory_count: u64,
    pub quota: i64,
    pub space_consumed: u64,
    pub space_quota: i64,
    /// Quota and consumption per storage type, indexed by `StorageTypeProto` value − 1
    /// (names in [`STORAGE_TYPE_NAMES`]); quota `-1` where none is set.
    pub types: [TypeUsage; 6],
}

/// One storage type's quota (`-1`: none) and the space consumed on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeUsage {
    pub quota: i64,
    pub consumed: u64,
}

impl Default for TypeUsage {
    fn default() -> Self {
        TypeUsage {
            quota: -1,
            consumed: 0,
        }
    }
}

/// The storage types in `StorageTypeProto` order (value − 1).
pub const STORAGE_TYPE_NAMES: [&str; 6] =
    ["DISK", "SSD", "ARCHIVE", "RAM_DISK", "PROVIDED", "NVDIMM"];

impl ContentSummary {
    /// The quota and consumption of the storage type called `name` (e.g. `DISK`).
    pub fn type_usage(&self, name: &str) -> TypeUsage {
        STORAGE_TYPE_NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .map_or_else(TypeUsage::default, |i| self.types[i])
    }
}

impl From<&ContentSummaryProto> for ContentSummary {
    fn from(p: &ContentSummaryProto) -> Self {
        let mut types = [TypeUsage::default(); 6];
        for t in p.type_quota_infos.iter().flat_map(|i| &i.type_quota_info) {
            let slot = usize::try_from(t.r#type.unwrap_or(1))
                .ok()
                .and_then(|v| v.checked_sub(1))
                .and_then(|i| types.get_mut(i));
            if let Some(slot) = slot {
                *slot = TypeUsage {
                    quota: t.quota as i64,
                    consumed: t.consumed,
                };
            }
        }
        ContentSummary {
            length: p.length,
            file_count: p.file_count,
            directory_count: p.directory_count,
            quota: p.quota as i64,
            space_consumed: p.space_consumed,
            space_quota: p.space_quota as i64,
            types,
        }
    }
}

/// `getFsStats` result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsStats {
    pub capacity: u64,
    pub used: u64,
    pub remaining: u64,
    pub under_replicated: u64,
    pub corrupt_blocks: u64,
    pub missing_blocks: u64,
    /// Replicas the NameNode has still to have deleted (0 when the field is absent).
    pub pending_deletion_blocks: u64,
}

impl From<&GetFsStatsResponseProto> for FsStats {
    fn from(p: &GetFsStatsResponseProto) -> Self {
        FsStats {
            capacity: p.capacity,
            used: p.used,
            remaining: p.remaining,
            under_replicated: p.under_replicated,
            corrupt_blocks: p.corrupt_blocks,
            missing_blocks: p.missing_blocks,
            pending_deletion_blocks: p.pending_deletion_blocks.unwrap_or(0),
        }
    }
}

/// `getServerDefaults` result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerDefaults {
    pub block_size: u64,
    pub bytes_per_checksum: u32,
    pub write_packet_size: u32,
    pub replication: u32,
    pub file_buffer_size: u32,
    pub encrypt_data_transfer: bool,
    /// Minutes; 0 = trash disabled on the server.
    pub trash_interval: u64,
    pub checksum_type: i32,
}

impl From<&FsServerDefaultsProto> for ServerDefaults {
    fn from(p: &FsServerDefaultsProto) -> Self {
        ServerDefaults {
            block_size: p.block_size,
            bytes_per_checksum: p.bytes_per_checksum,
            write_packet_size: p.write_packet_size,
            replication: p.replication,
            file_buffer_size: p.file_buffer_size,
            encrypt_data_transfer: p.encrypt_data_transfer.unwrap_or(false),
            trash_interval: p.trash_interval.unwrap_or(0),
            checksum_type: p.checksum_type.unwrap_or(1),
        }
    }
}

/// Where one block of a file lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockLocation {
    pub offset: u64,
    pub length: u64,
    pub block_id: u64,
    pub generation_stamp: u64,
    /// "ip:xferPort" of each replica, in the NameNode's order.
    pub hosts: Vec<String>,
    pub corrupt: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permissions() {
        assert_eq!(permission_string(0o755), "rwxr-xr-x");
        assert_eq!(permission_string(0o644), "rw-r--r--");
        assert_eq!(permission_string(0o1777), "rwxrwxrwt");
        assert_eq!(permission_string(0o1776), "rwxrwxrwT");
    }

    #[test]
    fn status_paths() {
        let mut p = HdfsFileStatusProto {
            file_type: FileType::IsFile as i32,
            length: 5,
            ..Default::default()
        };
        p.permission.perm = 0o644;
        let s = FileStatus::from_proto(&p, "/a/f");
        assert_eq!(s.path, "/a/f");
        assert!(s.is_file());
        p.path = bytes::Bytes::from_static(b"g");
        assert_eq!(FileStatus::from_proto(&p, "/").path, "/g");
        assert_eq!(FileStatus::from_proto(&p, "/a").name(), "g");
    }
}
