//! The JSON bodies of WebHDFS responses, with the field names Hadoop's JSON utilities write
//! and its Java client reads.

use rhdfs_client::{ContentSummary, FileStatus, FsStats, ServerDefaults};
use rhdfs_conf::json::string;
use rhdfs_proto::hdfs::LocatedBlockProto;

/// `{"boolean":true}`.
pub fn boolean(b: bool) -> String {
    format!("{{\"boolean\":{b}}}")
}

/// `{"Path":"/user/x"}`.
pub fn path(p: &str) -> String {
    format!("{{\"Path\":{}}}", string(p))
}

/// `{"Location":"http://..."}` (the answer to a redirected op sent with `noredirect=true`).
pub fn location(url: &str) -> String {
    format!("{{\"Location\":{}}}", string(url))
}

/// One status object; `suffix` is the entry's name in a listing, "" for the queried path.
pub fn file_status_fields(st: &FileStatus, suffix: &str) -> String {
    let kind = if st.is_dir {
        "DIRECTORY"
    } else if st.is_symlink {
        "SYMLINK"
    } else {
        "FILE"
    };
    let mut s = format!(
        "{{\"accessTime\":{},\"blockSize\":{},\"childrenNum\":{},\"fileId\":{},\"group\":{},\"length\":{},\"modificationTime\":{},\"owner\":{},\"pathSuffix\":{},\"permission\":{},\"replication\":{},\"storagePolicy\":0,\"type\":\"{kind}\"",
        st.access_time,
        st.block_size,
        if st.is_dir { st.children_num.max(0) } else { 0 },
        st.file_id,
        string(&st.group),
        st.length,
        st.modification_time,
        string(&st.owner),
        string(suffix),
        string(&format!("{:o}", st.permission & 0o1777)),
        st.replication,
    );
    if st.has_acl {
        s.push_str(",\"aclBit\":true");
    }
    if let Some(target) = st.symlink.as_deref().filter(|_| st.is_symlink) {
        s.push_str(&format!(",\"symlink\":{}", string(target)));
    }
    s.push('}');
    s
}

/// `{"FileStatus":{...}}` (GETFILESTATUS).
pub fn file_status(st: &FileStatus) -> String {
    format!("{{\"FileStatus\":{}}}", file_status_fields(st, ""))
}

fn statuses(entries: &[(FileStatus, String)]) -> String {
    let list: Vec<String> = entries
        .iter()
        .map(|(st, suffix)| file_status_fields(st, suffix))
        .collect();
    format!("{{\"FileStatus\":[{}]}}", list.join(","))
}

/// `{"FileStatuses":{"FileStatus":[...]}}` (LISTSTATUS).
pub fn file_statuses(entries: &[(FileStatus, String)]) -> String {
    format!("{{\"FileStatuses\":{}}}", statuses(entries))
}

/// `{"DirectoryListing":{"partialListing":{"FileStatuses":{...}},"remainingEntries":N}}`
/// (LISTSTATUS_BATCH).
pub fn directory_listing(entries: &[(FileStatus, String)], remaining: u32) -> String {
    format!(
        "{{\"DirectoryListing\":{{\"partialListing\":{{\"FileStatuses\":{}}},\"remainingEntries\":{remaining}}}}}",
        statuses(entries)
    )
}

/// `typeQuota`: as Hadoop's JsonUtil, an entry (`{"consumed":N,"quota":Q}`) for each storage
/// type that takes a quota and has one set.
fn type_quota(cs: &ContentSummary) -> String {
    const QUOTA_TYPES: [&str; 5] = ["SSD", "DISK", "ARCHIVE", "PROVIDED", "NVDIMM"];
    let entries: Vec<String> = QUOTA_TYPES
        .iter()
        .filter_map(|t| {
            let u = cs.type_usage(t);
            (u.quota != -1).then(|| {
                format!(
                    "\"{t}\":{{\"consumed\":{},\"quota\":{}}}",
                    u.consumed, u.quota
                )
            })
        })
        .collect();
    format!("{{{}}}", entries.join(","))
}

/// `{"ContentSummary":{...}}` (GETCONTENTSUMMARY).
pub fn content_summary(cs: &ContentSummary) -> String {
    format!(
        "{{\"ContentSummary\":{{\"directoryCount\":{},\"fileCount\":{},\"length\":{},\"quota\":{},\"spaceConsumed\":{},\"spaceQuota\":{},\"typeQuota\":{}}}}}",
        cs.directory_count,
        cs.file_count,
        cs.length,
        cs.quota,
        cs.space_consumed,
        cs.space_quota,
        type_quota(cs)
    )
}

/// `{"QuotaUsage":{...}}` (GETQUOTAUSAGE): the quota half of a content summary.
pub fn quota_usage(cs: &ContentSummary) -> String {
    format!(
        "{{\"QuotaUsage\":{{\"fileAndDirectoryCount\":{},\"quota\":{},\"spaceConsumed\":{},\"spaceQuota\":{},\"typeQuota\":{}}}}}",
        cs.file_count + cs.directory_count,
        cs.quota,
        cs.space_consumed,
        cs.space_quota,
        type_quota(cs)
    )
}

/// `{"FsStatus":{"capacity":...,"used":...,"remaining":...}}` (GETSTATUS).
pub fn fs_status(s: &FsStats) -> String {
    format!(
        "{{\"FsStatus\":{{\"capacity\":{},\"used\":{},\"remaining\":{}}}}}",
        s.capacity, s.used, s.remaining
    )
}

/// `{"FileChecksum":{"algorithm":...,"bytes":hex,"length":N}}` (GETFILECHECKSUM).
pub fn file_checksum(algorithm: &str, bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{{\"FileChecksum\":{{\"algorithm\":{},\"bytes\":\"{hex}\",\"length\":{}}}}}",
        string(algorithm),
        bytes.len()
    )
}

/// `{"FsServerDefaults":{...}}` (GETSERVERDEFAULTS); `checksumType` is DataChecksum's id.
pub fn server_defaults(d: &ServerDefaults) -> String {
    format!(
        "{{\"FsServerDefaults\":{{\"blockSize\":{},\"bytesPerChecksum\":{},\"writePacketSize\":{},\"replication\":{},\"fileBufferSize\":{},\"encryptDataTransfer\":{},\"trashInterval\":{},\"checksumType\":{},\"keyProviderUri\":\"\",\"defaultStoragePolicyId\":7}}}}",
        d.block_size,
        d.bytes_per_checksum,
        d.write_packet_size,
        d.replication,
        d.file_buffer_size,
        d.encrypt_data_transfer,
        d.trash_interval,
        d.checksum_type
    )
}

fn string_array<I: IntoIterator<Item = S>, S: AsRef<str>>(items: I) -> String {
    let v: Vec<String> = items.into_iter().map(|s| string(s.as_ref())).collect();
    format!("[{}]", v.join(","))
}

/// `{"BlockLocations":{"BlockLocation":[...]}}` (GETFILEBLOCKLOCATIONS): per block its
/// offset, length, corrupt flag and, per replica, `ip:xferPort` (names), host name, rack path,
/// storage id and type.
pub fn block_locations(blocks: &[LocatedBlockProto]) -> String {
    let list: Vec<String> = blocks
        .iter()
        .map(|lb| {
            let names: Vec<String> = lb
                .locs
                .iter()
                .map(|d| format!("{}:{}", d.id.ip_addr, d.id.xfer_port))
                .collect();
            let hosts = lb.locs.iter().map(|d| d.id.host_name.as_str());
            let topology: Vec<String> = lb
                .locs
                .iter()
                .zip(&names)
                .map(|(d, n)| {
                    let rack = d.location.as_deref().unwrap_or("/default-rack");
                    format!("{}/{n}", rack.trim_end_matches('/'))
                })
                .collect();
            let types = (0..lb.locs.len())
                .map(|i| rhdfs_proto::storage_type_name(lb.storage_types.get(i).copied().unwrap_or(1)));
            format!(
                "{{\"cachedHosts\":[],\"corrupt\":{},\"hosts\":{},\"length\":{},\"names\":{},\"offset\":{},\"storageIds\":{},\"storageTypes\":{},\"topologyPaths\":{}}}",
                lb.corrupt,
                string_array(hosts),
                lb.b.num_bytes.unwrap_or(0),
                string_array(&names),
                lb.offset,
                string_array(&lb.storage_i_ds),
                string_array(types),
                string_array(&topology)
            )
        })
        .collect();
    format!(
        "{{\"BlockLocations\":{{\"BlockLocation\":[{}]}}}}",
        list.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> FileStatus {
        FileStatus {
            path: "/d/a \"b\"".into(),
            length: 24930,
            is_dir: false,
            is_symlink: false,
            symlink: None,
            permission: 0o644,
            owner: "alice".into(),
            group: "supergroup".into(),
            modification_time: 1_320_173_277_227,
            access_time: 1_320_171_722_771,
            replication: 3,
            block_size: 134_217_728,
            file_id: 16390,
            children_num: -1,
            has_acl: false,
        }
    }

    #[test]
    fn a_file_status() {
        assert_eq!(
            file_status(&file()),
            "{\"FileStatus\":{\"accessTime\":1320171722771,\"blockSize\":134217728,\"childrenNum\":0,\"fileId\":16390,\"group\":\"supergroup\",\"length\":24930,\"modificationTime\":1320173277227,\"owner\":\"alice\",\"pathSuffix\":\"\",\"permission\":\"644\",\"replication\":3,\"storagePolicy\":0,\"type\":\"FILE\"}}"
        );
    }

    #[test]
    fn listings_escape_names() {
        let mut dir = file();
        dir.is_dir = true;
        dir.permission = 0o1777;
        dir.children_num = 2;
        let body = file_statuses(&[(file(), "a \"b\"".into()), (dir, "t".into())]);
        assert!(
            body.starts_with("{\"FileStatuses\":{\"FileStatus\":[{"),
            "{body}"
        );
        assert!(body.contains("\"pathSuffix\":\"a \\\"b\\\"\""), "{body}");
        assert!(body.contains("\"permission\":\"1777\""), "{body}");
        assert!(body.contains("\"childrenNum\":2"), "{body}");
        assert!(body.contains("\"type\":\"DIRECTORY\""), "{body}");
        let batch = directory_listing(&[], 5);
        assert_eq!(
            batch,
            "{\"DirectoryListing\":{\"partialListing\":{\"FileStatuses\":{\"FileStatus\":[]}},\"remainingEntries\":5}}"
        );
    }

    #[test]
    fn block_locations_per_replica() {
        use rhdfs_proto::hdfs::{DatanodeIdProto, DatanodeInfoProto, ExtendedBlockProto};
        let dn = |ip: &str, rack: Option<&str>| DatanodeInfoProto {
            id: DatanodeIdProto {
                ip_addr: ip.into(),
                host_name: format!("h-{ip}"),
                xfer_port: 9866,
                ..Default::default()
            },
            location: rack.map(str::to_string),
            ..Default::default()
        };
        let lb = LocatedBlockProto {
            b: ExtendedBlockProto {
                num_bytes: Some(100),
                ..Default::default()
            },
            offset: 1024,
            locs: vec![dn("10.0.0.1", Some("/r1")), dn("10.0.0.2", None)],
            storage_i_ds: vec!["DS-1".into(), "DS-2".into()],
            storage_types: vec![1, 2],
            ..Default::default()
        };
        assert_eq!(
            block_locations(&[lb]),
            "{\"BlockLocations\":{\"BlockLocation\":[{\"cachedHosts\":[],\"corrupt\":false,\"hosts\":[\"h-10.0.0.1\",\"h-10.0.0.2\"],\"length\":100,\"names\":[\"10.0.0.1:9866\",\"10.0.0.2:9866\"],\"offset\":1024,\"storageIds\":[\"DS-1\",\"DS-2\"],\"storageTypes\":[\"DISK\",\"SSD\"],\"topologyPaths\":[\"/r1/10.0.0.1:9866\",\"/default-rack/10.0.0.2:9866\"]}]}}"
        );
        assert_eq!(
            block_locations(&[]),
            "{\"BlockLocations\":{\"BlockLocation\":[]}}"
        );
    }

    #[test]
    fn small_bodies() {
        assert_eq!(boolean(true), "{\"boolean\":true}");
        assert_eq!(path("/user/bob"), "{\"Path\":\"/user/bob\"}");
        assert_eq!(
            file_checksum("MD5-of-0MD5-of-512CRC32C", &[0, 0, 2, 0]),
            "{\"FileChecksum\":{\"algorithm\":\"MD5-of-0MD5-of-512CRC32C\",\"bytes\":\"00000200\",\"length\":4}}"
        );
        let cs = ContentSummary {
            length: 10,
            file_count: 2,
            directory_count: 1,
            quota: -1,
            space_consumed: 30,
            space_quota: -1,
            types: Default::default(),
        };
        assert_eq!(
            quota_usage(&cs),
            "{\"QuotaUsage\":{\"fileAndDirectoryCount\":3,\"quota\":-1,\"spaceConsumed\":30,\"spaceQuota\":-1,\"typeQuota\":{}}}"
        );
        assert_eq!(
            content_summary(&cs),
            "{\"ContentSummary\":{\"directoryCount\":1,\"fileCount\":2,\"length\":10,\"quota\":-1,\"spaceConsumed\":30,\"spaceQuota\":-1,\"typeQuota\":{}}}"
        );
        // Types with a quota set are listed, in StorageType order.
        let mut typed = cs;
        typed.types[0] = rhdfs_client::TypeUsage {
            quota: 1000,
            consumed: 30,
        };
        typed.types[1] = rhdfs_client::TypeUsage {
            quota: 50,
            consumed: 0,
        };
        assert_eq!(
            quota_usage(&typed),
            "{\"QuotaUsage\":{\"fileAndDirectoryCount\":3,\"quota\":-1,\"spaceConsumed\":30,\"spaceQuota\":-1,\"typeQuota\":{\"SSD\":{\"consumed\":0,\"quota\":50},\"DISK\":{\"consumed\":30,\"quota\":1000}}}}"
        );
    }
}
