//! Namespace mutations as records. Every change to the namespace is expressed as one
//! [`EditOp`], applied by `Namespace::log_and_apply` and handed to the [`Journal`]:
//! the single place where the edit log (issue 4) hooks in. Ops carry resolved inode
//! ids, block ids and generation stamps, so replaying them needs no path resolution
//! and no id allocation.

use crate::error::FsResult;
use crate::fsdir::acl::AclEntry;
use crate::fsdir::xattr::{XAttr, XAttrNs};
use crate::fsdir::{FileBlock, PermissionStatus};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditOp {
    Mkdir {
        id: u64,
        parent: u64,
        name: Vec<u8>,
        perm: PermissionStatus,
        mtime: u64,
    },
    /// A new file, open for write by `client_name`; `replaced` is an existing file removed
    /// by OVERWRITE in the same step.
    AddFile {
        id: u64,
        parent: u64,
        name: Vec<u8>,
        perm: PermissionStatus,
        mtime: u64,
        replication: u16,
        block_size: u64,
        client_name: String,
        client_machine: String,
        replaced: Option<u64>,
    },
    /// A new block at the end of an open file (its id and GS are new).
    AddBlock {
        file: u64,
        block: FileBlock,
    },
    /// New length and/or GS of the file's last block (commit, fsync, pipeline update).
    UpdateLastBlock {
        file: u64,
        block: FileBlock,
    },
    /// Removes the file's last block.
    AbandonBlock {
        file: u64,
        block_id: u64,
    },
    /// Closes an open file and releases its lease.
    CloseFile {
        file: u64,
        mtime: u64,
        atime: u64,
    },
    /// Re-opens a closed file for append. `new_block`: the append asked for NEW_BLOCK, so a
    /// partial last block stays complete (Hadoop's OP_APPEND carries the same flag); records
    /// written before the flag existed read as false.
    ReopenFile {
        file: u64,
        client_name: String,
        client_machine: String,
        new_block: bool,
    },
    /// The open file's lease passes to `holder` (Hadoop's OP_REASSIGN_LEASE): lease
    /// recovery takes a file from a writer that is gone, so that writer can no longer
    /// add blocks to it or close it.
    ReassignLease {
        file: u64,
        holder: String,
    },
    /// A generation stamp handed out outside AddBlock (updateBlockForPipeline).
    SetGenstamp {
        gs: u64,
    },
    Delete {
        id: u64,
        mtime: u64,
    },
    /// Moves `id` to `dst_parent/dst_name`, removing `replaced` first when set.
    Rename {
        id: u64,
        dst_parent: u64,
        dst_name: Vec<u8>,
        replaced: Option<u64>,
        mtime: u64,
    },
    SetReplication {
        id: u64,
        replication: u16,
    },
    SetPermission {
        id: u64,
        mode: u16,
    },
    SetOwner {
        id: u64,
        owner: Option<String>,
        group: Option<String>,
    },
    SetTimes {
        id: u64,
        mtime: Option<u64>,
        atime: Option<u64>,
    },
    /// DataNodes hold replicas from the future (a namespace older than their data): the
    /// block id and generation stamp counters move past them (`block_id`, `gs`), so no new
    /// block reuses their ids, and unknown replicas newer than `floor` (the namespace's
    /// generation stamp when they were found, or an earlier floor) stay held across
    /// restarts until released (`rhdfs_blockmanager::orphans`).
    HoldOrphans {
        floor: u64,
        block_id: u64,
        gs: u64,
    },
    /// The operator released the held replicas (`dfsadmin -releaseOrphans`): the floor goes.
    ReleaseOrphans,
    /// setQuota: the directory's namespace and storage-space quotas as they now are
    /// (-1 = none).
    SetQuota {
        id: u64,
        ns_quota: i64,
        ds_quota: i64,
    },
    /// setQuota with a storage type: the directory's quota for that type (a
    /// `StorageTypeProto` value) as it now is (-1 = none).
    SetTypeQuota {
        id: u64,
        storage_type: u8,
        quota: i64,
    },
    /// The inode's new mode and stored ACL entries (empty: no extended ACL), as
    /// `fsdir::acl::to_stored` makes them.
    SetAcl {
        id: u64,
        mode: u16,
        entries: Vec<AclEntry>,
    },
    /// Sets (adds or replaces) one extended attribute.
    SetXAttr {
        id: u64,
        xattr: XAttr,
    },
    /// Removes one extended attribute.
    RemoveXAttr {
        id: u64,
        ns: XAttrNs,
        name: String,
    },
    /// truncate: blocks wholly past `new_length` go; when it falls inside a block the
    /// file is re-opened for `client_name` and that block waits for the block recovery
    /// that cuts it (`UnderConstruction::truncate_last_to`).
    Truncate {
        file: u64,
        new_length: u64,
        mtime: u64,
        client_name: String,
        client_machine: String,
    },
    /// concat: the blocks of `srcs` (files in the target's directory) are appended to
    /// `target` in this order and the sources removed.
    Concat {
        target: u64,
        srcs: Vec<u64>,
        mtime: u64,
    },
}

/// Receives every applied op, in order, and returns its transaction id. The durable
/// edit log implements this (appending `edit_codec::encode(op)`); a mutation must not be
/// acknowledged to a client before its txid is synced, which the caller does after
/// releasing the namespace lock (`Namespace::last_txid` tells which txid to wait for).
pub trait Journal: Send + Sync + std::fmt::Debug {
    fn record(&mut self, op: &EditOp) -> FsResult<u64>;

    /// Whether an op may be logged now; checked before the op changes the namespace, so a
    /// journal that refuses (a standby's) leaves the namespace untouched.
    fn accepts(&self) -> FsResult<()> {
        Ok(())
    }
}

/// A journal that keeps nothing (no edit log yet); it only numbers the ops.
#[derive(Debug, Default)]
pub struct NoJournal {
    txid: u64,
}

impl Journal for NoJournal {
    fn record(&mut self, _op: &EditOp) -> FsResult<u64> {
        self.txid += 1;
        Ok(self.txid)
    }
}

/// A journal that remembers ops in memory, shared with whoever holds a clone (tests).
#[derive(Debug, Default, Clone)]
pub struct MemoryJournal {
    pub ops: std::sync::Arc<parking_lot::Mutex<Vec<EditOp>>>,
}

impl Journal for MemoryJournal {
    fn record(&mut self, op: &EditOp) -> FsResult<u64> {
        let mut ops = self.ops.lock();
        ops.push(op.clone());
        Ok(ops.len() as u64)
    }
}
