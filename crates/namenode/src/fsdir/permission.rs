//! HDFS permission checks: traverse (x on every ancestor), access on the ancestor,
//! parent, inode and subtree, ownership, sticky bit, superuser.

use super::{FsDirectory, FsPath, Inode, Resolved};
use crate::error::{FsError, FsResult};

pub const READ: u16 = 4;
pub const WRITE: u16 = 2;
pub const EXECUTE: u16 = 1;
pub const STICKY: u16 = 0o1000;

/// The user making a call, as the namespace sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user: String,
    pub groups: Vec<String>,
    pub superuser: bool,
    /// Host address of the client (for lease messages).
    pub machine: String,
}

impl Caller {
    pub fn new(user: &str, groups: Vec<String>, superuser: bool) -> Self {
        Caller {
            user: user.to_string(),
            groups,
            superuser,
            machine: String::new(),
        }
    }
}

/// Which checks an operation needs (HDFS's checkPermission arguments).
#[derive(Debug, Default, Clone, Copy)]
pub struct Check {
    pub owner: bool,
    pub ancestor: Option<u16>,
    pub parent: Option<u16>,
    pub access: Option<u16>,
    pub sub_access: Option<u16>,
    /// Skip empty directories in the sub_access check (delete does).
    pub ignore_empty_dir: bool,
    pub sticky: bool,
}

/// Hadoop's FsAction name for a set of rwx bits.
pub fn action_name(bits: u16) -> &'static str {
    match bits & 7 {
        0 => "NONE",
        1 => "EXECUTE",
        2 => "WRITE",
        3 => "WRITE_EXECUTE",
        4 => "READ",
        5 => "READ_EXECUTE",
        6 => "READ_WRITE",
        _ => "ALL",
    }
}

/// `drwxr-xr-x`-style text of an inode's type and mode.
pub fn mode_string(is_dir: bool, mode: u16) -> String {
    let mut s = String::with_capacity(10);
    s.push(if is_dir { 'd' } else { '-' });
    for shift in [6u16, 3, 0] {
        let b = (mode >> shift) & 7;
        s.push(if b & 4 != 0 { 'r' } else { '-' });
        s.push(if b & 2 != 0 { 'w' } else { '-' });
        let x = b & 1 != 0;
        if shift == 0 && mode & STICKY != 0 {
            s.push(if x { 't' } else { 'T' });
        } else {
            s.push(if x { 'x' } else { '-' });
        }
    }
    s
}

/// Checks permissions of `caller` against the tree.
pub struct PermissionChecker<'a> {
    pub dir: &'a FsDirectory,
    pub caller: &'a Caller,
    pub enabled: bool,
}

impl PermissionChecker<'_> {
    /// No checks at all: permissions off, or the superuser.
    pub(crate) fn bypass(&self) -> bool {
        !self.enabled || self.caller.superuser
    }

    fn has(&self, inode: &Inode, bits: u16) -> bool {
        let mode = inode.perm.mode;
        let acl = inode.acl();
        if !acl.is_empty() && !acl[0].default {
            return super::acl::acl_allows(
                mode,
                acl,
                *inode.perm.owner == *self.caller.user,
                &self.caller.user,
                |g| self.caller.groups.iter().any(|x| x == g),
                &inode.perm.group,
                bits as u8,
            );
        }
        let granted = if *inode.perm.owner == *self.caller.user {
            mode >> 6
        } else if self.caller.groups.iter().any(|g| **g == *inode.perm.group) {
            mode >> 3
        } else {
            mode
        };
        granted & bits & 7 == bits & 7
    }

    fn denied(&self, bits: u16, id: u64, inode: &Inode) -> FsError {
        FsError::AccessControl(format!(
            "Permission denied: user={}, access={}, inode=\"{}\":{}:{}:{}",
            self.caller.user,
            action_name(bits),
            self.dir.path_of(id),
            inode.perm.owner,
            inode.perm.group,
            mode_string(inode.is_dir(), inode.perm.mode)
        ))
    }

    /// One inode of a subtree access check (Hadoop's `subAccess`): a directory must grant
    /// `bits` (an empty one need not with `ignore_empty_dir`); files are not checked. The
    /// caller decides on [`PermissionChecker::bypass`].
    pub(crate) fn check_sub_dir(
        &self,
        id: u64,
        inode: &Inode,
        bits: u16,
        ignore_empty_dir: bool,
    ) -> FsResult<()> {
        let Some(d) = inode.as_dir() else {
            return Ok(());
        };
        let exempt = ignore_empty_dir && d.children.is_empty();
        if exempt || self.has(inode, bits) {
            Ok(())
        } else {
            Err(self.denied(bits, id, inode))
        }
    }

    /// `bits` on the inode itself (no traverse check).
    pub fn check_access(&self, id: Option<u64>, bits: u16) -> FsResult<()> {
        if self.bypass() {
            return Ok(());
        }
        self.check_inode(id, bits)
    }

    fn check_inode(&self, id: Option<u64>, bits: u16) -> FsResult<()> {
        let Some((id, inode)) = id.and_then(|i| Some((i, self.dir.get(i)?))) else {
            return Ok(());
        };
        if self.has(inode, bits) {
            Ok(())
        } else {
            Err(self.denied(bits, id, inode))
        }
    }

    /// x on every existing ancestor of the last component.
    pub fn check_traverse(&self, r: &Resolved) -> FsResult<()> {
        if self.bypass() {
            return Ok(());
        }
        let n = r.ids.len().saturating_sub(1);
        for id in r.ids[..n].iter().map_while(|x| *x) {
            if let Some(inode) = self.dir.get(id)
                && inode.is_dir()
                && !self.has(inode, EXECUTE)
            {
                return Err(self.denied(EXECUTE, id, inode));
            }
        }
        Ok(())
    }

    /// The full check an operation asks for (traverse included).
    pub fn check(&self, r: &Resolved, c: Check) -> FsResult<()> {
        if self.bypass() {
            return Ok(());
        }
        self.check_traverse(r)?;
        let n = r.ids.len();
        if let Some(bits) = c.ancestor {
            let i = r.last_existing_ancestor();
            self.check_inode(r.ids[i], bits)?;
        }
        if let Some(bits) = c.parent
            && n >= 2
        {
            self.check_inode(r.ids[n - 2], bits)?;
        }
        if c.sticky && n >= 2 {
            self.check_sticky(r.ids[n - 2], r.last())?;
        }
        if let Some(bits) = c.access {
            self.check_inode(r.last(), bits)?;
        }
        if let Some(bits) = c.sub_access
            && let Some(last) = r.last()
        {
            // Not `subtree`, which lists every id first: a delete of millions of inodes checks
            // them all in this hold. The first denied directory in listing order is named.
            self.dir.try_for_each_in_subtree(last, |id, inode| {
                self.check_sub_dir(id, inode, bits, c.ignore_empty_dir)
            })?;
        }
        if c.owner {
            self.check_owner(r.last())?;
        }
        Ok(())
    }

    /// The caller must own the inode (or be the superuser).
    pub fn check_owner(&self, id: Option<u64>) -> FsResult<()> {
        if self.bypass() {
            return Ok(());
        }
        let Some((id, inode)) = id.and_then(|i| Some((i, self.dir.get(i)?))) else {
            return Ok(());
        };
        if *inode.perm.owner == *self.caller.user {
            return Ok(());
        }
        Err(FsError::AccessControl(format!(
            "Permission denied. user={} is not the owner of inode={}",
            self.caller.user,
            self.dir.path_of(id)
        )))
    }

    fn check_sticky(&self, parent: Option<u64>, child: Option<u64>) -> FsResult<()> {
        let (Some((p_id, p)), Some((c_id, c))) = (
            parent.and_then(|i| Some((i, self.dir.get(i)?))),
            child.and_then(|i| Some((i, self.dir.get(i)?))),
        ) else {
            return Ok(());
        };
        if p.perm.mode & STICKY == 0
            || *p.perm.owner == *self.caller.user
            || *c.perm.owner == *self.caller.user
        {
            return Ok(());
        }
        Err(FsError::AccessControl(format!(
            "Permission denied by sticky bit: user={}, path=\"{}\":{}:{}:{}, parent=\"{}\":{}:{}:{}",
            self.caller.user,
            self.dir.path_of(c_id),
            c.perm.owner,
            c.perm.group,
            mode_string(c.is_dir(), c.perm.mode),
            self.dir.path_of(p_id),
            p.perm.owner,
            p.perm.group,
            mode_string(true, p.perm.mode)
        )))
    }
}

/// Error for a path that runs through a file: create-type operations get
/// ParentNotDirectoryException, the rest AccessControlException (as HDFS does).
pub fn not_a_directory(path: &FsPath, r: &Resolved, create: bool) -> Option<FsError> {
    let i = r.not_dir_at?;
    let msg = format!("{} (is not a directory)", path.prefix(i));
    Some(if create {
        FsError::ParentNotDirectory(msg)
    } else {
        FsError::AccessControl(msg)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_strings() {
        assert_eq!(mode_string(true, 0o755), "drwxr-xr-x");
        assert_eq!(mode_string(false, 0o644), "-rw-r--r--");
        assert_eq!(mode_string(true, 0o1777), "drwxrwxrwt");
        assert_eq!(mode_string(true, 0o1776), "drwxrwxrwT");
        assert_eq!(action_name(READ | EXECUTE), "READ_EXECUTE");
        assert_eq!(action_name(7), "ALL");
    }
}
