//! The namespace state behind the namesystem lock: the inode tree, leases, id and
//! generation-stamp counters and the manual safe-mode flag.
//!
//! Operations (in the submodules) validate a request against the state, turn it into
//! [`EditOp`]s and pass each to [`Namespace::log_and_apply`], the one place that
//! changes the state and feeds the journal.

mod acl;
mod attrs;
mod block_owners;
pub(crate) mod call_txid;
mod check;
mod concat;
mod create;
mod delete;
mod image;
mod mkdir;
mod open_files;
mod quota;
mod rename;
mod retried;
mod status;
mod synthetic;
mod truncate;
mod write_path;
mod xattr;

#[cfg(test)]
mod acl_tests;
#[cfg(test)]
mod quota_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod truncate_tests;

use std::time::Duration;

pub use acl::{AclChange, AclStatus};
pub use concat::Concatenated;
pub use create::{AppendResult, CreateArgs, flags, reopened_block};
pub use image::{IMAGE_PAYLOAD_MAGIC, ImageDecodeError, LoadedBlock};
pub use open_files::{OpenFileEntry, is_parent_entry};
pub use quota::{QUOTA_DONT_SET, QUOTA_RESET, Usage, file_space};
pub use status::{FileBlocks, FileStatus, Listing};
pub use synthetic::{SYNTHETIC_ROOT, SyntheticSpec};
pub use truncate::Truncated;
pub use write_path::{AddBlockPlan, CompletePlan, FileRef, OpenFile};

use crate::edit::{EditOp, Journal, NoJournal};
use crate::error::{FsError, FsResult};
use crate::fsdir::permission::{Caller, PermissionChecker};
use crate::fsdir::{
    DirInode, FileInode, FsDirectory, FsPath, Inode, InodeKind, Perm, ROOT_INODE_ID, Removed,
    Resolved, UnderConstruction,
};
use crate::leases::LeaseManager;

/// First contiguous block id handed out (2^30 + 1).
pub const FIRST_BLOCK_ID: u64 = (1 << 30) + 1;
/// First generation stamp handed out.
pub const FIRST_GENERATION_STAMP: u64 = 1001;

/// Settings the namespace needs (read from the configuration by the namesystem).
#[derive(Debug, Clone)]
pub struct NamespaceConfig {
    pub permissions_enabled: bool,
    /// The user who formatted/started the NameNode.
    pub superuser: String,
    /// `dfs.permissions.superusergroup`.
    pub supergroup: String,
    /// `dfs.ls.limit`.
    pub ls_limit: usize,
    pub max_component_length: usize,
    pub max_directory_items: usize,
    pub min_block_size: u64,
    pub max_blocks_per_file: usize,
    pub min_replication: u16,
    pub max_replication: u16,
    pub soft_limit: Duration,
    pub hard_limit: Duration,
    /// `dfs.namenode.accesstime.precision` in ms (0 = access times off).
    pub access_time_precision: u64,
    /// `dfs.content-summary.limit`: inodes counted per lock hold by a content summary (0 =
    /// the whole subtree in one hold).
    pub content_summary_limit: usize,
    /// `dfs.namenode.acls.enabled`.
    pub acls_enabled: bool,
    /// `dfs.namenode.posix.acl.inheritance.enabled`.
    pub posix_acl_inheritance: bool,
    /// `dfs.quota.by.storage.type.enabled`.
    pub type_quotas_enabled: bool,
    /// `dfs.namenode.xattrs.enabled`.
    pub xattrs_enabled: bool,
    /// `dfs.namenode.fs-limits.max-xattrs-per-inode`.
    pub max_xattrs_per_inode: usize,
    /// `dfs.namenode.fs-limits.max-xattr-size` (name + value bytes).
    pub max_xattr_size: usize,
}

impl Default for NamespaceConfig {
    fn default() -> Self {
        NamespaceConfig {
            permissions_enabled: true,
            superuser: "hdfs".into(),
            supergroup: "supergroup".into(),
            ls_limit: 1000,
            max_component_length: 255,
            max_directory_items: 1_048_576,
            min_block_size: 1_048_576,
            max_blocks_per_file: 10_000,
            min_replication: 1,
            max_replication: 512,
            soft_limit: crate::leases::SOFT_LIMIT,
            hard_limit: Duration::from_secs(1200),
            access_time_precision: 3_600_000,
            content_summary_limit: 5_000,
            acls_enabled: true,
            posix_acl_inheritance: true,
            type_quotas_enabled: true,
            xattrs_enabled: true,
            max_xattrs_per_inode: 32,
            max_xattr_size: 16_384,
        }
    }
}

/// The current time as the namespace uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// Wall clock, ms since the epoch (inode times).
    pub wall_ms: u64,
    /// Monotonic reading (leases).
    pub mono: Duration,
}

/// The namespace.
#[derive(Debug)]
pub struct Namespace {
    dir: FsDirectory,
    leases: LeaseManager,
    /// The file of each block (block id -> inode id), dense by block id.
    block_owner: block_owners::BlockOwners,
    last_inode_id: u64,
    last_block_id: u64,
    last_gs: u64,
    cfg: NamespaceConfig,
    journal: Box<dyn Journal>,
    last_txid: u64,
    manual_safe_mode: bool,
    /// Why start-up safe mode is on (None when off); see `crate::safemode`.
    startup_safe_mode: Option<String>,
    startup_safe_mode_done: bool,
    /// Unknown replicas with a generation stamp above this are held (`EditOp::HoldOrphans`).
    orphan_floor: Option<u64>,
    /// Usage of each directory with a quota (`quota.rs`).
    quota_usage: quota::QuotaCache,
}

impl Namespace {
    /// A fresh namespace holding only `/`, owned by the superuser.
    pub fn new(cfg: NamespaceConfig, now: Now) -> Self {
        let dir = FsDirectory::new(&cfg.superuser, &cfg.supergroup, now.wall_ms);
        Namespace {
            dir,
            leases: LeaseManager::default(),
            block_owner: Default::default(),
            last_inode_id: ROOT_INODE_ID,
            last_block_id: FIRST_BLOCK_ID - 1,
            last_gs: FIRST_GENERATION_STAMP - 1,
            cfg,
            journal: Box::new(NoJournal::default()),
            last_txid: 0,
            manual_safe_mode: false,
            startup_safe_mode: None,
            startup_safe_mode_done: false,
            orphan_floor: None,
            quota_usage: Default::default(),
        }
    }

    /// Replaces the journal that receives applied ops.
    pub fn set_journal(&mut self, journal: Box<dyn Journal>) {
        self.journal = journal;
    }

    /// Transaction id of the last op handed to the journal.
    pub fn last_txid(&self) -> u64 {
        self.last_txid
    }

    pub fn config(&self) -> &NamespaceConfig {
        &self.cfg
    }

    pub fn dir(&self) -> &FsDirectory {
        &self.dir
    }

    pub fn leases(&self) -> &LeaseManager {
        &self.leases
    }

    /// The caller as the namespace sees them (superuser = the NN's user or a member of
    /// the supergroup).
    pub fn caller(&self, user: &str, groups: Vec<String>) -> Caller {
        let superuser = user == self.cfg.superuser || groups.contains(&self.cfg.supergroup);
        Caller::new(user, groups, superuser)
    }

    pub fn last_generation_stamp(&self) -> u64 {
        self.last_gs
    }

    pub fn last_block_id(&self) -> u64 {
        self.last_block_id
    }

    /// The file inode a block belongs to.
    pub fn block_owner(&self, block_id: u64) -> Option<u64> {
        self.block_owner.get(block_id)
    }

    /// The generation stamp above which unknown replicas are held, once replicas from the
    /// future were found (None: only the last generation stamp counts).
    pub fn orphan_floor(&self) -> Option<u64> {
        self.orphan_floor
    }

    /// The HoldOrphans op that moves the counters past future replicas up to block
    /// `max_id` and stamp `max_gs`, when they are not past them already.
    pub fn hold_orphans_op(&self, max_id: u64, max_gs: u64) -> Option<EditOp> {
        (max_id > self.last_block_id || max_gs > self.last_gs).then(|| EditOp::HoldOrphans {
            floor: self
                .orphan_floor
                .map_or(self.last_gs, |f| f.min(self.last_gs)),
            block_id: max_id.max(self.last_block_id),
            gs: max_gs.max(self.last_gs),
        })
    }

    pub fn total_files_and_dirs(&self) -> usize {
        self.dir.inode_count()
    }

    pub fn total_blocks(&self) -> usize {
        self.block_owner.len()
    }

    // ---- safe mode: manual, and start-up (driven by `crate::safemode`) ----

    pub fn in_safe_mode(&self) -> bool {
        self.manual_safe_mode || self.startup_safe_mode.is_some()
    }

    /// ENTER turns manual safe mode on; LEAVE turns both manual and start-up safe mode
    /// off (start-up safe mode then never comes back).
    pub fn set_manual_safe_mode(&mut self, on: bool) {
        self.manual_safe_mode = on;
        if !on {
            self.startup_safe_mode = None;
            self.startup_safe_mode_done = true;
        }
    }

    /// Publishes start-up safe mode's state (`Some(reason)` = on). Ignored once start-up
    /// safe mode ended; returns whether it is still on.
    pub fn set_startup_safe_mode(&mut self, reason: Option<String>) -> bool {
        if self.startup_safe_mode_done {
            return false;
        }
        self.startup_safe_mode_done = reason.is_none();
        self.startup_safe_mode = reason;
        !self.startup_safe_mode_done
    }

    /// The text `dfsadmin -safemode get` and SafeModeException give for start-up safe
    /// mode, when it is on.
    pub fn startup_safe_mode_reason(&self) -> Option<&str> {
        self.startup_safe_mode.as_deref()
    }

    /// Fails with SafeModeException when mutations are not allowed.
    pub fn check_safe_mode(&self, what: &str) -> FsResult<()> {
        if let (false, Some(reason)) = (self.manual_safe_mode, &self.startup_safe_mode) {
            return Err(FsError::SafeMode(format!(
                "{what}. Name node is in safe mode. {reason}"
            )));
        }
        if self.manual_safe_mode {
            return Err(FsError::SafeMode(format!(
                "{what}. Name node is in safe mode. It was turned on manually. \
                 Use \"hdfs dfsadmin -safemode leave\" to turn safe mode off."
            )));
        }
        Ok(())
    }

    // ---- allocation ----

    pub(crate) fn next_inode_id(&self) -> u64 {
        self.last_inode_id + 1
    }

    pub(crate) fn next_block_id(&self) -> u64 {
        self.last_block_id + 1
    }

    pub(crate) fn next_generation_stamp(&self) -> u64 {
        self.last_gs + 1
    }

    // ---- helpers for operations ----

    pub(crate) fn checker<'a>(&'a self, caller: &'a Caller) -> PermissionChecker<'a> {
        PermissionChecker {
            dir: &self.dir,
            caller,
            enabled: self.cfg.permissions_enabled,
        }
    }

    pub(crate) fn resolve(&self, path: &FsPath) -> Resolved {
        self.dir.resolve(path)
    }

    /// `path` resolved for an operation on an existing path: refused when it runs through a
    /// file (`not_a_directory`), then `check` made for `caller`.
    pub(crate) fn resolve_checked(
        &self,
        caller: &Caller,
        path: &FsPath,
        check: crate::fsdir::permission::Check,
    ) -> FsResult<Resolved> {
        let r = self.resolve(path);
        if let Some(e) = crate::fsdir::permission::not_a_directory(path, &r, false) {
            return Err(e);
        }
        self.checker(caller).check(&r, check)?;
        Ok(r)
    }

    /// Checks a new name against dfs.namenode.fs-limits.*.
    pub(crate) fn check_new_child(&self, parent: u64, name: &[u8]) -> FsResult<()> {
        if name.len() > self.cfg.max_component_length {
            return Err(FsError::PathComponentTooLong(format!(
                "The maximum path component name limit of {} in directory {} is exceeded: limit={} length={}",
                String::from_utf8_lossy(name),
                self.dir.path_of(parent),
                self.cfg.max_component_length,
                name.len()
            )));
        }
        let items = self
            .dir
            .get(parent)
            .and_then(Inode::as_dir)
            .map(|d| d.children.len())
            .unwrap_or(0);
        if items >= self.cfg.max_directory_items {
            return Err(FsError::MaxDirectoryItemsExceeded(format!(
                "The directory item limit of {} is exceeded: limit={} items={}",
                self.dir.path_of(parent),
                self.cfg.max_directory_items,
                items
            )));
        }
        Ok(())
    }

    /// The one place the namespace changes: applies `op` and hands it to the journal.
    /// Returns what the op removed from the tree (blocks go to the block manager after
    /// the namespace lock is released).
    pub fn log_and_apply(&mut self, op: EditOp, mono: Duration) -> FsResult<Removed> {
        self.journal.accepts()?;
        self.verify_quota(&op)?;
        let removed = self.apply(&op, mono)?;
        self.last_txid = self.journal.record(&op)?;
        call_txid::note(self.last_txid);
        Ok(removed)
    }

    /// Applies an edit another NameNode logged and the nameservice committed (a standby
    /// following the active): the replay path, returning what it removed so the block map
    /// can follow. The journal is not called: the edit is already logged.
    pub fn apply_committed(&mut self, op: &EditOp, txid: u64, mono: Duration) -> FsResult<Removed> {
        let removed = self.apply(op, mono)?;
        self.last_txid = txid;
        Ok(removed)
    }

    /// Applies one op to the state (also what replay will call).
    pub fn apply(&mut self, op: &EditOp, mono: Duration) -> FsResult<Removed> {
        let mut removed = Removed::default();
        let quota_charge = self.pending_quota_charge(op);
        match op {
            EditOp::Mkdir {
                id,
                parent,
                name,
                perm,
                mtime,
            } => {
                let inode = Inode::new(
                    *parent,
                    name.as_slice().into(),
                    Perm::intern(perm.clone()),
                    *mtime,
                    *mtime,
                    InodeKind::Dir(DirInode::default()),
                );
                let inode = self.inherit_default_acl(inode);
                self.attach(*id, inode, *mtime)?;
            }
            EditOp::AddFile {
                id,
                parent,
                name,
                perm,
                mtime,
                replication,
                block_size,
                client_name,
                client_machine,
                replaced,
            } => {
                if let Some(old) = replaced {
                    removed = self.remove(*old);
                }
                let inode = Inode::new(
                    *parent,
                    name.as_slice().into(),
                    Perm::intern(perm.clone()),
                    *mtime,
                    *mtime,
                    InodeKind::File(FileInode::new(
                        *replication,
                        *block_size,
                        Vec::new(),
                        Some(UnderConstruction {
                            client_name: client_name.clone(),
                            client_machine: client_machine.clone(),
                            truncate_last_to: None,
                        }),
                    )),
                );
                let inode = self.inherit_default_acl(inode);
                self.attach(*id, inode, *mtime)?;
                self.leases.add(client_name, *id, mono);
            }
            EditOp::AddBlock { file, block } => {
                let f = self.file_mut(*file)?;
                f.blocks.push(*block);
                self.block_owner.insert(block.id, *file);
                self.last_block_id = self.last_block_id.max(block.id);
                self.last_gs = self.last_gs.max(block.gs);
            }
            EditOp::UpdateLastBlock { file, block } => {
                let f = self.file_mut(*file)?;
                match f.blocks.last_mut() {
                    Some(last) if last.id == block.id => *last = *block,
                    _ => return Err(inconsistent(op)),
                }
                self.last_gs = self.last_gs.max(block.gs);
            }
            EditOp::AbandonBlock { file, block_id } => {
                let f = self.file_mut(*file)?;
                match f.blocks.last() {
                    Some(last) if last.id == *block_id => {
                        f.blocks.pop();
                    }
                    _ => return Err(inconsistent(op)),
                }
                self.block_owner.remove(*block_id);
            }
            EditOp::CloseFile { file, mtime, atime } => {
                let inode = self.dir.get_mut(*file).ok_or_else(|| inconsistent(op))?;
                inode.mtime = *mtime;
                inode.atime = *atime;
                let f = inode.as_file_mut().ok_or_else(|| inconsistent(op))?;
                if let Some(uc) = f.set_uc(None) {
                    self.leases.remove(&uc.client_name, *file);
                }
            }
            EditOp::ReopenFile {
                file,
                client_name,
                client_machine,
                ..
            } => {
                let f = self.file_mut(*file)?;
                f.set_uc(Some(UnderConstruction {
                    client_name: client_name.clone(),
                    client_machine: client_machine.clone(),
                    truncate_last_to: None,
                }));
                self.leases.add(client_name, *file, mono);
            }
            EditOp::ReassignLease { file, holder } => {
                let f = self.file_mut(*file)?;
                let uc = f.uc_mut().ok_or_else(|| inconsistent(op))?;
                let old = std::mem::replace(&mut uc.client_name, holder.clone());
                self.leases.reassign(&old, *file, holder, mono);
            }
            EditOp::SetGenstamp { gs } => self.last_gs = self.last_gs.max(*gs),
            EditOp::HoldOrphans {
                floor,
                block_id,
                gs,
            } => {
                self.orphan_floor = Some(self.orphan_floor.map_or(*floor, |f| f.min(*floor)));
                self.last_block_id = self.last_block_id.max(*block_id);
                self.last_gs = self.last_gs.max(*gs);
            }
            EditOp::ReleaseOrphans => self.orphan_floor = None,
            EditOp::Delete { id, mtime } => {
                let parent = self
                    .dir
                    .get(*id)
                    .map(|i| i.parent())
                    .ok_or_else(|| inconsistent(op))?;
                removed = self.remove(*id);
                if let Some(p) = self.dir.get_mut(parent) {
                    p.mtime = *mtime;
                }
            }
            EditOp::Rename {
                id,
                dst_parent,
                dst_name,
                replaced,
                mtime,
            } => {
                if let Some(old) = replaced {
                    removed = self.remove(*old);
                }
                let inode = self.dir.detach(*id).ok_or_else(|| inconsistent(op))?;
                let src_parent = inode.parent();
                if !self.dir.reattach(*id, inode, *dst_parent, dst_name.clone()) {
                    return Err(inconsistent(op));
                }
                for p in [src_parent, *dst_parent] {
                    if let Some(p) = self.dir.get_mut(p) {
                        p.mtime = *mtime;
                    }
                }
            }
            EditOp::SetReplication { id, replication } => {
                self.file_mut(*id)?.set_replication(*replication);
            }
            EditOp::SetPermission { id, mode } => {
                let inode = self.dir.get_mut(*id).ok_or_else(|| inconsistent(op))?;
                inode.perm = inode.perm.with_mode(*mode);
            }
            EditOp::SetOwner { id, owner, group } => {
                if !self.dir.set_owner(*id, owner.as_deref(), group.as_deref()) {
                    return Err(inconsistent(op));
                }
            }
            EditOp::SetTimes { id, mtime, atime } => {
                let inode = self.dir.get_mut(*id).ok_or_else(|| inconsistent(op))?;
                if let Some(m) = mtime {
                    inode.mtime = *m;
                }
                if let Some(a) = atime {
                    inode.atime = *a;
                }
            }
            EditOp::SetQuota {
                id,
                ns_quota,
                ds_quota,
            } => {
                let d = self
                    .dir
                    .get_mut(*id)
                    .and_then(Inode::as_dir_mut)
                    .ok_or_else(|| inconsistent(op))?;
                d.set_quota(*ns_quota, *ds_quota);
                self.quota_set(*id);
            }
            EditOp::SetTypeQuota {
                id,
                storage_type,
                quota,
            } => {
                let d = self
                    .dir
                    .get_mut(*id)
                    .and_then(Inode::as_dir_mut)
                    .ok_or_else(|| inconsistent(op))?;
                d.set_type_quota(*storage_type, *quota);
                self.quota_set(*id);
            }
            EditOp::SetAcl { id, mode, entries } => {
                let inode = self.dir.get_mut(*id).ok_or_else(|| inconsistent(op))?;
                inode.perm = inode.perm.with_mode(*mode);
                inode.update_ext(|e| e.acl = entries.clone());
            }
            EditOp::SetXAttr { id, xattr } => {
                let inode = self.dir.get_mut(*id).ok_or_else(|| inconsistent(op))?;
                inode.update_ext(|e| match e.xattrs.iter_mut().find(|x| x.same_name(xattr)) {
                    Some(x) => *x = xattr.clone(),
                    None => e.xattrs.push(xattr.clone()),
                });
            }
            EditOp::RemoveXAttr { id, ns, name } => {
                let inode = self.dir.get_mut(*id).ok_or_else(|| inconsistent(op))?;
                inode.update_ext(|e| e.xattrs.retain(|x| !(x.ns == *ns && x.name == *name)));
            }
            EditOp::Truncate {
                file,
                new_length,
                mtime,
                client_name,
                client_machine,
            } => {
                removed = self.apply_truncate(
                    *file,
                    *new_length,
                    *mtime,
                    (client_name.as_str(), client_machine.as_str()),
                    mono,
                )?;
            }
            EditOp::Concat {
                target,
                srcs,
                mtime,
            } => self.apply_concat(*target, srcs, *mtime)?,
        }
        self.charge_quota(quota_charge);
        Ok(removed)
    }

    /// A new inode under a directory with a default ACL takes its ACL from it (the op's
    /// mode then filters the copied entries instead of the umask).
    fn inherit_default_acl(&self, mut inode: Inode) -> Inode {
        let Some(parent) = self.dir.get(inode.parent()) else {
            return inode;
        };
        if let Some((mode, entries)) =
            crate::fsdir::acl::inherit(parent.acl(), inode.perm.mode, inode.is_dir())
        {
            inode.perm = inode.perm.with_mode(mode);
            inode.update_ext(|e| e.acl = entries);
        }
        inode
    }

    fn attach(&mut self, id: u64, inode: Inode, mtime: u64) -> FsResult<()> {
        let parent = inode.parent();
        if !self.dir.attach(id, inode) {
            return Err(FsError::Io(format!(
                "inconsistent namespace: cannot add inode {id} under {parent}"
            )));
        }
        self.last_inode_id = self.last_inode_id.max(id);
        if let Some(p) = self.dir.get_mut(parent) {
            p.mtime = mtime;
        }
        Ok(())
    }

    fn remove(&mut self, id: u64) -> Removed {
        let removed = self.dir.remove_subtree(id);
        for b in &removed.blocks {
            self.block_owner.remove(*b);
        }
        for (file, holder) in &removed.open_files {
            self.leases.remove(holder, *file);
        }
        removed
    }

    fn file_mut(&mut self, id: u64) -> FsResult<&mut FileInode> {
        self.dir
            .get_mut(id)
            .and_then(Inode::as_file_mut)
            .ok_or_else(|| FsError::Io(format!("inconsistent namespace: inode {id} is not a file")))
    }
}

fn inconsistent(op: &EditOp) -> FsError {
    FsError::Io(format!("inconsistent namespace: cannot apply {op:?}"))
}
