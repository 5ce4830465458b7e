//! What an fsck request asks for (the `/fsck` query parameters), the settings it reads
//! from the configuration, who asked, and Hadoop's fixed strings and limits.

use crate::fsdir::permission::Caller;

/// Directory entries read per namespace lock hold.
pub const LIST_BATCH: usize = 1_000;

/// Hadoop's status strings (the fsck client scans the last line for them).
pub const HEALTHY_STATUS: &str = "is HEALTHY";
pub const CORRUPT_STATUS: &str = "is CORRUPT";
pub const DECOMMISSIONING_STATUS: &str = "is DECOMMISSIONING";
pub const DECOMMISSIONED_STATUS: &str = "is DECOMMISSIONED";
pub const NONEXISTENT_STATUS: &str = "does not exist";
pub const FAILURE_STATUS: &str = "FAILED";

/// `dfs.corruptfilesreturned.max`'s default: corrupt blocks listed per request.
pub const MAX_CORRUPT_FILE_BLOCKS_RETURNED: usize = 500;

/// The `/fsck` query parameters (NamenodeFsck's names).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsckOptions {
    pub path: String,
    pub files: bool,
    pub blocks: bool,
    pub locations: bool,
    pub racks: bool,
    pub replica_details: bool,
    pub open_for_write: bool,
    pub list_corrupt_file_blocks: bool,
    /// `listorphans` (rhdfs's `-list-orphans`): the held orphan replicas.
    pub list_orphans: bool,
    pub start_block_after: Option<String>,
    pub delete: bool,
    pub move_: bool,
    pub storage_policies: bool,
    /// `showprogress`: deprecated in Hadoop (progress is always shown); only noted.
    pub show_progress: bool,
    /// `blockId`: the ids given to `-blockId`, as Hadoop splits them (on spaces).
    pub block_ids: Option<Vec<String>>,
    /// The user: `user.name`, else the first name of `ugi` (JspHelper's order).
    pub user: Option<String>,
}

impl FsckOptions {
    /// From decoded query parameters; unknown ones are ignored, as in Hadoop.
    pub fn from_params<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut o = FsckOptions {
            path: "/".into(),
            ..FsckOptions::default()
        };
        let (mut user_name, mut ugi) = (None, None);
        for (k, v) in params {
            match k {
                "path" => o.path = v.to_string(),
                "move" => o.move_ = true,
                "delete" => o.delete = true,
                "files" => o.files = true,
                "blocks" => o.blocks = true,
                "locations" => o.locations = true,
                "racks" => o.racks = true,
                "replicadetails" => o.replica_details = true,
                "storagepolicies" => o.storage_policies = true,
                "showprogress" => o.show_progress = true,
                "openforwrite" => o.open_for_write = true,
                "listcorruptfileblocks" => o.list_corrupt_file_blocks = true,
                "listorphans" => o.list_orphans = true,
                "startblockafter" => o.start_block_after = Some(v.to_string()),
                "blockId" => {
                    // Java's String.split(" "): trailing empty strings dropped.
                    let mut ids: Vec<String> = v.split(' ').map(str::to_string).collect();
                    while ids.last().is_some_and(String::is_empty) {
                        ids.pop();
                    }
                    o.block_ids = Some(ids);
                }
                "user.name" => user_name = Some(v.to_string()),
                "ugi" => ugi = v.split(',').next().map(str::to_string),
                _ => {}
            }
        }
        o.user = user_name.or(ugi).filter(|u| !u.is_empty());
        o
    }
}

/// Settings fsck reads from the NameNode's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsckSettings {
    /// `dfs.replication`.
    pub default_replication: u16,
    /// `dfs.namenode.replication.min`.
    pub min_replication: u16,
}

/// Who asked: the caller (user, groups, superuser) and the remote IP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsckRequester {
    pub caller: Caller,
    pub remote_ip: String,
}
