//! Directory quotas: the usage cached per quota directory, kept right by `Namespace::apply`
//! (shared with replay), checked by `Namespace::log_and_apply` before an op is logged,
//! and `setQuota`.
//!
//! Usage of a subtree, as Hadoop counts it: every inode (the directory itself included)
//! is one namespace item; a file consumes length × replication, the last block of a file
//! open for write counted at the preferred block size. Only directories with a quota are
//! in the cache, so an op costs nothing when no quota is set anywhere and O(depth)
//! otherwise (plus the moved or removed subtree for rename and delete).
//!
//! Quotas by storage type: rhdfs has no storage policies and its DataNodes store on DISK
//! only, so every replica counts against DISK (as under Hadoop's default HOT policy) and the
//! other types consume nothing; DISK usage is the cached storage space.

use std::collections::HashMap;

use rhdfs_blockmanager::views::byte_desc;

use super::Namespace;
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::{
    DISK, FileInode, FsPath, Inode, InodeKind, QUOTA_UNSET, ROOT_INODE_ID, STORAGE_TYPES,
};

/// HdfsConstants.QUOTA_DONT_SET: leave this quota as it is.
pub const QUOTA_DONT_SET: i64 = i64::MAX;
/// HdfsConstants.QUOTA_RESET: clear this quota.
pub const QUOTA_RESET: i64 = -1;

/// Namespace items and storage space of a subtree (or a change to them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub ns: i64,
    pub ds: i64,
}

impl Usage {
    fn add(&mut self, o: Usage) {
        self.ns += o.ns;
        self.ds += o.ds;
    }
    fn neg(self) -> Usage {
        Usage {
            ns: -self.ns,
            ds: -self.ds,
        }
    }
}

/// The usage cache: quota directory id → usage of its subtree.
pub type QuotaCache = HashMap<u64, Usage>;

/// Storage space a file consumes (length × replication, an open file's last block at
/// its preferred size).
pub fn file_space(f: &FileInode) -> u64 {
    let n = f.blocks.len();
    let len: u64 = f
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if f.uc().is_some() && i + 1 == n {
                b.num_bytes.max(f.block_size())
            } else {
                b.num_bytes
            }
        })
        .sum();
    len * u64::from(f.replication())
}

fn inode_usage(inode: &Inode) -> Usage {
    Usage {
        ns: 1,
        ds: inode.as_file().map_or(0, |f| file_space(f) as i64),
    }
}

impl Namespace {
    /// Usage of the subtree of `id` by a full walk.
    pub fn subtree_usage(&self, id: u64) -> Usage {
        let mut u = Usage::default();
        let mut stack = vec![id];
        while let Some(cur) = stack.pop() {
            let Some(inode) = self.dir.get(cur) else {
                continue;
            };
            u.add(inode_usage(inode));
            if let InodeKind::Dir(d) = &inode.kind {
                stack.extend(d.children.values());
            }
        }
        u
    }

    /// The cached usage of a quota directory.
    pub fn cached_usage(&self, id: u64) -> Option<Usage> {
        self.quota_usage.get(&id).copied()
    }

    /// Recounts every quota directory's usage (after an image load).
    pub(crate) fn rebuild_quota_usage(&mut self) {
        let ids: Vec<u64> = self
            .dir
            .ids()
            .filter(|&id| {
                self.dir
                    .get(id)
                    .and_then(Inode::as_dir)
                    .is_some_and(|d| d.has_quota())
            })
            .collect();
        self.quota_usage = ids
            .into_iter()
            .map(|id| (id, self.subtree_usage(id)))
            .collect();
    }

    fn quota_on_path(&self, mut id: u64) -> bool {
        loop {
            if self.quota_usage.contains_key(&id) {
                return true;
            }
            if id == ROOT_INODE_ID {
                return false;
            }
            match self.dir.get(id) {
                Some(i) => id = i.parent(),
                None => return false,
            }
        }
    }

    /// The usage changes `op` makes, as (directory the change is charged from, delta),
    /// computed before it is applied. Empty when no quota directory is affected.
    fn quota_charges(&self, op: &EditOp) -> Vec<(u64, Usage)> {
        if self.quota_usage.is_empty() {
            return Vec::new();
        }
        let file_change = |file: u64, after: &dyn Fn(&FileInode) -> FileInode| {
            let Some(inode) = self.dir.get(file) else {
                return Vec::new();
            };
            let Some(f) = inode.as_file() else {
                return Vec::new();
            };
            if !self.quota_on_path(inode.parent()) {
                return Vec::new();
            }
            let d = file_space(&after(f)) as i64 - file_space(f) as i64;
            vec![(inode.parent(), Usage { ns: 0, ds: d })]
        };
        let removal = |id: u64, out: &mut Vec<(u64, Usage)>| {
            if let Some(inode) = self.dir.get(id)
                && self.quota_on_path(inode.parent())
            {
                out.push((inode.parent(), self.subtree_usage(id).neg()));
            }
        };
        let mut out = Vec::new();
        match op {
            EditOp::Mkdir { parent, .. } if self.quota_on_path(*parent) => {
                out.push((*parent, Usage { ns: 1, ds: 0 }));
            }
            EditOp::AddFile {
                parent, replaced, ..
            } => {
                if let Some(old) = replaced {
                    removal(*old, &mut out);
                }
                if self.quota_on_path(*parent) {
                    out.push((*parent, Usage { ns: 1, ds: 0 }));
                }
            }
            EditOp::AddBlock { file, block } => {
                out = file_change(*file, &|f| {
                    let mut f = f.clone();
                    f.blocks.push(*block);
                    f
                })
            }
            EditOp::UpdateLastBlock { file, block } => {
                out = file_change(*file, &|f| {
                    let mut f = f.clone();
                    if let Some(last) = f.blocks.last_mut() {
                        *last = *block;
                    }
                    f
                })
            }
            EditOp::AbandonBlock { file, .. } => {
                out = file_change(*file, &|f| {
                    let mut f = f.clone();
                    f.blocks.pop();
                    f
                })
            }
            EditOp::CloseFile { file, .. } => {
                out = file_change(*file, &|f| {
                    let mut f = f.clone();
                    f.set_uc(None);
                    f
                })
            }
            EditOp::ReopenFile {
                file,
                client_name,
                client_machine,
                ..
            } => {
                out = file_change(*file, &|f| {
                    let mut f = f.clone();
                    f.set_uc(Some(crate::fsdir::UnderConstruction {
                        client_name: client_name.clone(),
                        client_machine: client_machine.clone(),
                        truncate_last_to: None,
                    }));
                    f
                })
            }
            EditOp::SetReplication { id, replication } => {
                out = file_change(*id, &|f| {
                    let mut f = f.clone();
                    f.set_replication(*replication);
                    f
                })
            }
            EditOp::Truncate {
                file,
                new_length,
                client_name,
                client_machine,
                ..
            } => {
                out = file_change(*file, &|f| {
                    Namespace::truncated_copy(
                        f,
                        *new_length,
                        (client_name.as_str(), client_machine.as_str()),
                    )
                })
            }
            EditOp::Concat { target, srcs, .. } => {
                if let Some(p) = self.dir.get(*target).map(|i| i.parent())
                    && self.quota_on_path(p)
                {
                    out.push((p, self.concat_usage_delta(*target, srcs)));
                }
            }
            EditOp::Delete { id, .. } => removal(*id, &mut out),
            EditOp::Rename {
                id,
                dst_parent,
                replaced,
                ..
            } => {
                if let Some(old) = replaced {
                    removal(*old, &mut out);
                }
                let src_parent = self.dir.get(*id).map(|i| i.parent());
                let src_side = src_parent.is_some_and(|p| self.quota_on_path(p));
                let dst_side = self.quota_on_path(*dst_parent);
                if src_side || dst_side {
                    let u = self.subtree_usage(*id);
                    if let (true, Some(p)) = (src_side, src_parent) {
                        out.push((p, u.neg()));
                    }
                    if dst_side {
                        out.push((*dst_parent, u));
                    }
                }
            }
            _ => {}
        }
        out
    }

    /// The net change per quota directory, deepest first along each charged path.
    fn net_by_quota_dir(&self, charges: &[(u64, Usage)]) -> Vec<(u64, Usage)> {
        let mut net: Vec<(u64, Usage)> = Vec::new();
        for &(from, delta) in charges {
            let mut id = from;
            loop {
                if self.quota_usage.contains_key(&id) {
                    match net.iter_mut().find(|(d, _)| *d == id) {
                        Some((_, u)) => u.add(delta),
                        None => net.push((id, delta)),
                    }
                }
                if id == ROOT_INODE_ID {
                    break;
                }
                match self.dir.get(id) {
                    Some(i) => id = i.parent(),
                    None => break,
                }
            }
        }
        net
    }

    /// Fails with NSQuotaExceededException / DSQuotaExceededException when `op` would
    /// take a quota directory past its quota (checked before the op is logged).
    pub(crate) fn verify_quota(&self, op: &EditOp) -> FsResult<()> {
        let charges = self.quota_charges(op);
        if charges.is_empty() {
            return Ok(());
        }
        for (id, delta) in self.net_by_quota_dir(&charges) {
            let (Some(used), Some(d)) = (
                self.quota_usage.get(&id),
                self.dir.get(id).and_then(Inode::as_dir),
            ) else {
                continue;
            };
            let path = self.dir.path_of(id);
            if d.ns_quota() >= 0 && delta.ns > 0 && used.ns + delta.ns > d.ns_quota() {
                return Err(FsError::NsQuotaExceeded(format!(
                    "The NameSpace quota (directories and files) of directory {path} is exceeded: quota={} file count={}",
                    d.ns_quota(),
                    used.ns + delta.ns
                )));
            }
            if d.ds_quota() >= 0 && delta.ds > 0 && used.ds + delta.ds > d.ds_quota() {
                let count = used.ds + delta.ds;
                return Err(FsError::DsQuotaExceeded(format!(
                    "The DiskSpace quota of {path} is exceeded: quota = {} B = {} but diskspace consumed = {} B = {}",
                    d.ds_quota(),
                    byte_desc(d.ds_quota() as u64),
                    count,
                    byte_desc(count.max(0) as u64)
                )));
            }
            let disk = d.type_quota(DISK);
            if disk >= 0 && delta.ds > 0 && used.ds + delta.ds > disk {
                let count = used.ds + delta.ds;
                return Err(FsError::TypeQuotaExceeded(format!(
                    "Quota by storage type : DISK on path : {path} is exceeded. quota = {} B = {} but space consumed = {} B = {}",
                    disk,
                    byte_desc(disk as u64),
                    count,
                    byte_desc(count.max(0) as u64)
                )));
            }
        }
        Ok(())
    }

    /// The usage changes `op` will make (to pass to [`Namespace::charge_quota`] after it
    /// is applied).
    pub(crate) fn pending_quota_charge(&self, op: &EditOp) -> Vec<(u64, Usage)> {
        let charges = self.quota_charges(op);
        if charges.is_empty() {
            return charges;
        }
        self.net_by_quota_dir(&charges)
    }

    /// Adds the net changes to the cache, dropping quota directories that are gone.
    pub(crate) fn charge_quota(&mut self, net: Vec<(u64, Usage)>) {
        for (id, delta) in net {
            if let Some(u) = self.quota_usage.get_mut(&id) {
                u.add(delta);
            }
        }
        if !self.quota_usage.is_empty() {
            let dir = &self.dir;
            self.quota_usage.retain(|id, _| dir.contains(*id));
        }
    }

    /// Applies a SetQuota / SetTypeQuota op's effect on the cache (after the directory's
    /// quotas were changed).
    pub(crate) fn quota_set(&mut self, id: u64) {
        let has = self
            .dir
            .get(id)
            .and_then(Inode::as_dir)
            .is_some_and(|d| d.has_quota());
        if !has {
            self.quota_usage.remove(&id);
        } else if !self.quota_usage.contains_key(&id) {
            let u = self.subtree_usage(id);
            self.quota_usage.insert(id, u);
        }
    }

    /// setQuota (superuser only; the RPC layer checks that): `QUOTA_DONT_SET` leaves a
    /// quota as it is, `QUOTA_RESET` clears it.
    pub fn set_quota(
        &mut self,
        src: &str,
        ns_quota: i64,
        ds_quota: i64,
        mono: std::time::Duration,
    ) -> FsResult<()> {
        self.check_safe_mode(&format!("Cannot set quota on {src}"))?;
        let bad = |q: i64| q < 0 && q != QUOTA_DONT_SET && q != QUOTA_RESET;
        if bad(ns_quota) || bad(ds_quota) {
            return Err(FsError::JavaIllegalArgument(format!(
                "Illegal value for nsQuota or ssQuota : {ns_quota} and {ds_quota}"
            )));
        }
        let path = FsPath::parse(src)?;
        let r = self.resolve(&path);
        let id = r
            .last()
            .ok_or_else(|| FsError::FileNotFound(format!("Directory does not exist: {src}")))?;
        let d = self
            .dir
            .get(id)
            .and_then(Inode::as_dir)
            .ok_or_else(|| FsError::PathIsNotDirectory(src.to_string()))?;
        if id == ROOT_INODE_ID && ns_quota == QUOTA_RESET {
            return Err(FsError::JavaIllegalArgument(
                "Cannot clear namespace quota on root.".into(),
            ));
        }
        let pick = |new: i64, old: i64| if new == QUOTA_DONT_SET { old } else { new };
        let (ns, ds) = (pick(ns_quota, d.ns_quota()), pick(ds_quota, d.ds_quota()));
        if (ns, ds) == (d.ns_quota(), d.ds_quota()) {
            return Ok(());
        }
        self.log_and_apply(
            EditOp::SetQuota {
                id,
                ns_quota: ns,
                ds_quota: ds,
            },
            mono,
        )?;
        Ok(())
    }

    /// setQuota with a storage type (`dfsadmin -setSpaceQuota -storageType T`, or
    /// `-clrSpaceQuota -storageType T` with `QUOTA_RESET`): the type's space quota only, the
    /// namespace quota must be `QUOTA_DONT_SET`; refused when
    /// `dfs.quota.by.storage.type.enabled` is false.
    pub fn set_type_quota(
        &mut self,
        src: &str,
        ns_quota: i64,
        storage_type: i32,
        quota: i64,
        mono: std::time::Duration,
    ) -> FsResult<()> {
        self.check_safe_mode(&format!("Cannot set quota on {src}"))?;
        let bad = |q: i64| q < 0 && q != QUOTA_DONT_SET && q != QUOTA_RESET;
        if bad(ns_quota) || bad(quota) {
            return Err(FsError::JavaIllegalArgument(format!(
                "Illegal value for nsQuota or ssQuota : {ns_quota} and {quota}"
            )));
        }
        let enabled = self.cfg.type_quotas_enabled;
        if !enabled || ns_quota != QUOTA_DONT_SET {
            return Err(FsError::UnsupportedAction(format!(
                "Failed to set quota by storage type because either dfs.quota.by.storage.type.enabled is set to {enabled} or nsQuota value is illegal {ns_quota}"
            )));
        }
        let name = usize::try_from(storage_type)
            .ok()
            .and_then(|t| t.checked_sub(1))
            .and_then(|i| STORAGE_TYPES.get(i))
            .ok_or_else(|| {
                FsError::JavaIllegalArgument(format!("Invalid storage type {storage_type}"))
            })?;
        let ty = storage_type as u8;
        if *name == "RAM_DISK" {
            return Err(FsError::UnsupportedAction(format!(
                "Quota by storage type {name} on path : {src} is not supported."
            )));
        }
        let path = FsPath::parse(src)?;
        let r = self.resolve(&path);
        let id = r
            .last()
            .ok_or_else(|| FsError::FileNotFound(format!("Directory does not exist: {src}")))?;
        let d = self
            .dir
            .get(id)
            .and_then(Inode::as_dir)
            .ok_or_else(|| FsError::PathIsNotDirectory(src.to_string()))?;
        let new = if quota == QUOTA_DONT_SET {
            d.type_quota(ty)
        } else {
            quota
        };
        if new == d.type_quota(ty) {
            return Ok(());
        }
        self.log_and_apply(
            EditOp::SetTypeQuota {
                id,
                storage_type: ty,
                quota: new,
            },
            mono,
        )?;
        Ok(())
    }

    /// The namespace quota a directory reports: the root's is Long.MAX_VALUE unless set.
    pub fn reported_ns_quota(&self, id: u64, ns_quota: i64) -> i64 {
        if id == ROOT_INODE_ID && ns_quota == QUOTA_UNSET {
            i64::MAX
        } else {
            ns_quota
        }
    }
}
