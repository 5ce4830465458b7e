//! setReplication, setPermission, setOwner, setTimes.

use super::{Namespace, Now};
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::FsPath;
use crate::fsdir::permission::{Caller, Check, WRITE, not_a_directory};

impl Namespace {
    fn resolve_for_attr(
        &self,
        caller: &Caller,
        src: &str,
        check: Check,
        what: &str,
    ) -> FsResult<(FsPath, Option<u64>)> {
        let path = FsPath::parse(src)?;
        self.check_safe_mode(&format!("{what} {path}"))?;
        let r = self.resolve(&path);
        if let Some(e) = not_a_directory(&path, &r, false) {
            return Err(e);
        }
        self.checker(caller).check(&r, check)?;
        Ok((path, r.last()))
    }

    /// setReplication: Ok(None) for a directory or a missing path; else the file's
    /// block ids (the block manager adjusts their replicas).
    pub fn set_replication(
        &mut self,
        caller: &Caller,
        src: &str,
        replication: u16,
        now: Now,
    ) -> FsResult<Option<Vec<u64>>> {
        self.verify_replication(src, replication, &caller.user)?;
        let check = Check {
            access: Some(WRITE),
            ..Check::default()
        };
        let (_, id) = self.resolve_for_attr(caller, src, check, "Cannot set replication for")?;
        let Some((id, blocks)) = id.and_then(|id| {
            let f = self.dir.get(id)?.as_file()?;
            Some((id, f.blocks.iter().map(|b| b.id).collect::<Vec<_>>()))
        }) else {
            return Ok(None);
        };
        self.log_and_apply(EditOp::SetReplication { id, replication }, now.mono)?;
        Ok(Some(blocks))
    }

    /// setPermission (owner or superuser).
    pub fn set_permission(
        &mut self,
        caller: &Caller,
        src: &str,
        mode: u16,
        now: Now,
    ) -> FsResult<()> {
        let check = Check {
            owner: true,
            ..Check::default()
        };
        let (path, id) = self.resolve_for_attr(caller, src, check, "Cannot set permission for")?;
        let id = id.ok_or_else(|| FsError::not_found(path.as_str()))?;
        self.log_and_apply(
            EditOp::SetPermission {
                id,
                mode: mode & 0o1777,
            },
            now.mono,
        )?;
        Ok(())
    }

    /// setOwner: only the superuser changes the owner; the owner may change the group
    /// to one of its own groups.
    pub fn set_owner(
        &mut self,
        caller: &Caller,
        src: &str,
        owner: Option<&str>,
        group: Option<&str>,
        now: Now,
    ) -> FsResult<()> {
        let check = Check {
            owner: true,
            ..Check::default()
        };
        let (path, id) = self.resolve_for_attr(caller, src, check, "Cannot set owner for")?;
        let id = id.ok_or_else(|| FsError::not_found(path.as_str()))?;
        if self.cfg.permissions_enabled && !caller.superuser {
            if let Some(o) = owner
                && o != caller.user
            {
                return Err(FsError::AccessControl(format!(
                    "User {} is not a super user (non-super user cannot change owner).",
                    caller.user
                )));
            }
            if let Some(g) = group
                && !caller.groups.iter().any(|x| x == g)
            {
                return Err(FsError::AccessControl(format!(
                    "User {} does not belong to {g}",
                    caller.user
                )));
            }
        }
        self.log_and_apply(
            EditOp::SetOwner {
                id,
                owner: owner.map(str::to_string),
                group: group.map(str::to_string),
            },
            now.mono,
        )?;
        Ok(())
    }

    /// setTimes: `None` leaves a time unchanged (the wire's -1). Needs WRITE access.
    pub fn set_times(
        &mut self,
        caller: &Caller,
        src: &str,
        mtime: Option<u64>,
        atime: Option<u64>,
        now: Now,
    ) -> FsResult<()> {
        let check = Check {
            access: Some(WRITE),
            ..Check::default()
        };
        let (path, id) = self.resolve_for_attr(caller, src, check, "Cannot set times")?;
        let id = id.ok_or_else(|| {
            FsError::FileNotFound(format!("File/Directory {path} does not exist."))
        })?;
        if mtime.is_none() && atime.is_none() {
            return Ok(());
        }
        self.log_and_apply(EditOp::SetTimes { id, mtime, atime }, now.mono)?;
        Ok(())
    }

    /// Records a read's access time (no permission check: the read was checked).
    pub fn touch_access_time(&mut self, id: u64, now: Now) -> FsResult<()> {
        if !self.access_time_due(id, now.wall_ms) {
            return Ok(());
        }
        self.log_and_apply(
            EditOp::SetTimes {
                id,
                mtime: None,
                atime: Some(now.wall_ms),
            },
            now.mono,
        )?;
        Ok(())
    }
}
