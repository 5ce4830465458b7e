//! setXAttr, getXAttrs, listXAttrs, removeXAttr (Hadoop's FSDirXAttrOp): namespace rules
//! from `fsdir::xattr`, WRITE on the inode to change a user attribute (the owner on a
//! sticky directory), READ to get, EXECUTE on the parent to list; the size and count limits.

use super::{Namespace, Now};
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::permission::{Caller, Check, EXECUTE, READ, STICKY, WRITE, not_a_directory};
use crate::fsdir::xattr::{self, XAttr, XAttrNs};
use crate::fsdir::{FsPath, Resolved};

/// setXAttr's flag bits (XAttrSetFlagProto).
pub const XATTR_CREATE: u32 = 1;
pub const XATTR_REPLACE: u32 = 2;

impl Namespace {
    fn check_xattrs_enabled(&self) -> FsResult<()> {
        if self.cfg.xattrs_enabled {
            return Ok(());
        }
        Err(FsError::Io(
            "The XAttr operation has been rejected.  Support for XAttrs has been disabled by \
             setting dfs.namenode.xattrs.enabled to false."
                .into(),
        ))
    }

    fn resolve_xattr_path(&self, caller: &Caller, src: &str) -> FsResult<(FsPath, Resolved)> {
        self.check_xattrs_enabled()?;
        let path = FsPath::parse(src)?;
        let r = self.resolve(&path);
        if let Some(e) = not_a_directory(&path, &r, false) {
            return Err(e);
        }
        self.checker(caller).check_traverse(&r)?;
        Ok((path, r))
    }

    fn xattr_target(&self, path: &FsPath, r: &Resolved) -> FsResult<u64> {
        r.last()
            .filter(|id| self.dir.contains(*id))
            .ok_or_else(|| FsError::FileNotFound(format!("cannot find {path}")))
    }

    /// Changing an attribute: WRITE on the inode for the user namespace, or ownership of a
    /// sticky directory.
    fn check_xattr_change(&self, caller: &Caller, r: &Resolved, x: &XAttr) -> FsResult<()> {
        if x.ns != XAttrNs::User {
            return Ok(());
        }
        let checker = self.checker(caller);
        let sticky_dir = r
            .last()
            .and_then(|id| self.dir.get(id))
            .is_some_and(|i| i.is_dir() && i.perm.mode & STICKY != 0);
        if sticky_dir {
            checker.check_owner(r.last())
        } else {
            checker.check(
                r,
                Check {
                    access: Some(WRITE),
                    ..Check::default()
                },
            )
        }
    }

    pub fn set_xattr(
        &mut self,
        caller: &Caller,
        src: &str,
        x: XAttr,
        flag: u32,
        now: Now,
    ) -> FsResult<()> {
        self.check_xattrs_enabled()?;
        let size = x.name.len() + x.value.as_ref().map_or(0, Vec::len);
        if size > self.cfg.max_xattr_size {
            return Err(FsError::IllegalArgument(format!(
                "The XAttr is too big. The maximum combined size of the name and value is {}, but the total size is {size}",
                self.cfg.max_xattr_size
            )));
        }
        xattr::check_api_access(&x, caller.superuser)?;
        let (path, r) = self.resolve_xattr_path(caller, src)?;
        self.check_safe_mode(&format!("Cannot set XAttr on {path}"))?;
        self.check_xattr_change(caller, &r, &x)?;
        let id = self.xattr_target(&path, &r)?;
        let inode = self
            .dir
            .get(id)
            .ok_or_else(|| FsError::not_found(path.as_str()))?;
        let exists = inode.xattrs().iter().any(|o| o.same_name(&x));
        let name = x.prefixed_name();
        if flag & (XATTR_CREATE | XATTR_REPLACE) == 0 {
            return Err(FsError::IllegalArgument("A flag must be specified.".into()));
        }
        if exists && flag & XATTR_REPLACE == 0 {
            return Err(FsError::Io(format!(
                "XAttr: {name} already exists. The REPLACE flag must be specified."
            )));
        }
        if !exists && flag & XATTR_CREATE == 0 {
            return Err(FsError::Io(format!(
                "XAttr: {name} does not exist. The CREATE flag must be specified."
            )));
        }
        if !exists && xattr::counts_against_limit(&x) {
            let visible = inode
                .xattrs()
                .iter()
                .filter(|o| xattr::counts_against_limit(o))
                .count();
            if visible + 1 > self.cfg.max_xattrs_per_inode {
                return Err(FsError::Io(format!(
                    "Cannot add additional XAttr to inode, would exceed limit of {}",
                    self.cfg.max_xattrs_per_inode
                )));
            }
        }
        self.log_and_apply(EditOp::SetXAttr { id, xattr: x }, now.mono)?;
        Ok(())
    }

    /// getXAttrs: every attribute the caller may see when `names` is empty, else exactly
    /// those (each must exist).
    pub fn get_xattrs(&self, caller: &Caller, src: &str, names: &[XAttr]) -> FsResult<Vec<XAttr>> {
        let (path, r) = self.resolve_xattr_path(caller, src)?;
        for x in names {
            xattr::check_api_access(x, caller.superuser)?;
        }
        self.checker(caller).check_access(r.last(), READ)?;
        let id = self.xattr_target(&path, &r)?;
        let all: Vec<&XAttr> = self
            .dir
            .get(id)
            .map(|i| {
                i.xattrs()
                    .iter()
                    .filter(|x| xattr::visible(x, caller.superuser))
                    .collect()
            })
            .unwrap_or_default();
        if names.is_empty() {
            return Ok(all.into_iter().cloned().collect());
        }
        names
            .iter()
            .map(|want| {
                all.iter()
                    .find(|x| x.same_name(want))
                    .map(|x| (*x).clone())
                    .ok_or_else(|| {
                        FsError::Io("At least one of the attributes provided was not found.".into())
                    })
            })
            .collect()
    }

    /// listXAttrs: the names (no values) the caller may see; EXECUTE on the parent.
    pub fn list_xattrs(&self, caller: &Caller, src: &str) -> FsResult<Vec<XAttr>> {
        let (path, r) = self.resolve_xattr_path(caller, src)?;
        self.checker(caller).check(
            &r,
            Check {
                parent: Some(EXECUTE),
                ..Check::default()
            },
        )?;
        let id = self.xattr_target(&path, &r)?;
        Ok(self
            .dir
            .get(id)
            .map(|i| {
                i.xattrs()
                    .iter()
                    .filter(|x| xattr::visible(x, caller.superuser))
                    .map(|x| XAttr {
                        value: None,
                        ..x.clone()
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    pub fn remove_xattr(&mut self, caller: &Caller, src: &str, x: XAttr, now: Now) -> FsResult<()> {
        self.check_xattrs_enabled()?;
        xattr::check_api_access(&x, caller.superuser)?;
        let (path, r) = self.resolve_xattr_path(caller, src)?;
        self.check_safe_mode(&format!("Cannot remove XAttr entry on {path}"))?;
        self.check_xattr_change(caller, &r, &x)?;
        let id = self.xattr_target(&path, &r)?;
        let exists = self
            .dir
            .get(id)
            .is_some_and(|i| i.xattrs().iter().any(|o| o.same_name(&x)));
        if !exists {
            return Err(FsError::Io(
                "No matching attributes found for remove operation".into(),
            ));
        }
        self.log_and_apply(
            EditOp::RemoveXAttr {
                id,
                ns: x.ns,
                name: x.name,
            },
            now.mono,
        )?;
        Ok(())
    }
}
