//! getAclStatus, modifyAclEntries, removeAclEntries, removeDefaultAcl, removeAcl, setAcl
//! (Hadoop's FSDirAclOp): the owner or the superuser changes an ACL; the change is one
//! `EditOp::SetAcl` carrying the new mode and stored entries.

use super::{Namespace, Now};
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::FsPath;
use crate::fsdir::acl::{self, AclEntry};
use crate::fsdir::permission::{Caller, Check, STICKY, not_a_directory};

/// What getAclStatus answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclStatus {
    pub owner: String,
    pub group: String,
    pub sticky: bool,
    /// The stored entries (no `user::`, `mask::`, `other::` of the access scope).
    pub entries: Vec<AclEntry>,
    pub mode: u16,
}

/// Which ACL change a call makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AclChange {
    Modify,
    RemoveEntries,
    RemoveDefault,
    RemoveAll,
    Set,
}

impl AclChange {
    fn what(self) -> &'static str {
        match self {
            AclChange::Modify => "Cannot modify ACL entries on",
            AclChange::RemoveEntries => "Cannot remove ACL entries on",
            AclChange::RemoveDefault => "Cannot remove default ACL entries on",
            AclChange::RemoveAll => "Cannot remove ACL on",
            AclChange::Set => "Cannot set ACL on",
        }
    }
}

impl Namespace {
    /// AclException when dfs.namenode.acls.enabled is false.
    pub(crate) fn check_acls_enabled(&self) -> FsResult<()> {
        if self.cfg.acls_enabled {
            return Ok(());
        }
        Err(FsError::Acl(
            "The ACL operation has been rejected.  Support for ACLs has been disabled by \
             setting dfs.namenode.acls.enabled to false."
                .into(),
        ))
    }

    pub fn get_acl_status(&self, caller: &Caller, src: &str) -> FsResult<AclStatus> {
        self.check_acls_enabled()?;
        let path = FsPath::parse(src)?;
        let r = self.resolve(&path);
        if let Some(e) = not_a_directory(&path, &r, false) {
            return Err(e);
        }
        self.checker(caller).check_traverse(&r)?;
        let inode = r
            .last()
            .and_then(|id| self.dir.get(id))
            .ok_or_else(|| FsError::FileNotFound(format!("cannot find {path}")))?;
        Ok(AclStatus {
            owner: inode.perm.owner.to_string(),
            group: inode.perm.group.to_string(),
            sticky: inode.perm.mode & STICKY != 0,
            entries: inode.acl().to_vec(),
            mode: inode.perm.mode,
        })
    }

    /// One of the five ACL changes; `spec` is ignored by RemoveDefault and RemoveAll.
    pub fn change_acl(
        &mut self,
        caller: &Caller,
        src: &str,
        change: AclChange,
        spec: &[AclEntry],
        now: Now,
    ) -> FsResult<()> {
        self.check_acls_enabled()?;
        let path = FsPath::parse(src)?;
        self.check_safe_mode(&format!("{} {path}", change.what()))?;
        let r = self.resolve_checked(
            caller,
            &path,
            Check {
                owner: true,
                ..Check::default()
            },
        )?;
        let (id, inode) = r
            .last()
            .and_then(|id| Some((id, self.dir.get(id)?)))
            .ok_or_else(|| FsError::FileNotFound(format!("cannot find {path}")))?;
        let mode = inode.perm.mode;
        let existing = acl::logical_acl(mode, inode.acl());
        let new_acl = match change {
            AclChange::Modify => acl::merge_entries(&existing, spec)?,
            AclChange::RemoveEntries => acl::filter_entries(&existing, spec)?,
            AclChange::RemoveDefault => acl::filter_default(&existing)?,
            AclChange::Set => acl::replace_entries(&existing, spec)?,
            AclChange::RemoveAll => {
                // The mask's bits become the group bits again (Hadoop's removeAcl).
                let group = existing
                    .iter()
                    .find(|e| !e.default && e.kind == acl::AclType::Group && e.name.is_none())
                    .map_or(0, |e| u16::from(e.perm));
                let mode = if inode.acl().first().is_some_and(|e| !e.default) {
                    (mode & !0o070) | (group << 3)
                } else {
                    mode
                };
                if inode.acl().is_empty() {
                    return Ok(());
                }
                self.log_and_apply(
                    EditOp::SetAcl {
                        id,
                        mode,
                        entries: Vec::new(),
                    },
                    now.mono,
                )?;
                return Ok(());
            }
        };
        let (new_mode, entries) = acl::to_stored(&new_acl, mode, inode.is_dir())?;
        self.log_and_apply(
            EditOp::SetAcl {
                id,
                mode: new_mode,
                entries,
            },
            now.mono,
        )?;
        Ok(())
    }
}
