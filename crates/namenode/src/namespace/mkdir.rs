//! mkdirs, and the creation of missing ancestors shared with create.

use super::{Namespace, Now};
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::permission::{Caller, Check, EXECUTE, WRITE, not_a_directory};
use crate::fsdir::{FsPath, PermissionStatus, Resolved};

impl Namespace {
    /// mkdirs(src, masked, createParent). `masked` is the already-umasked mode.
    pub fn mkdirs(
        &mut self,
        caller: &Caller,
        src: &str,
        masked: u16,
        create_parent: bool,
        now: Now,
    ) -> FsResult<bool> {
        self.mkdirs_with_modes(caller, src, masked, None, create_parent, now)
    }

    /// mkdirs with the client's `unmasked` mode as well (MkdirsRequestProto.unmasked):
    /// under a parent with a default ACL it is the mode the new directory filters the
    /// inherited entries with (see [`Namespace::create_mode`]).
    pub fn mkdirs_with_modes(
        &mut self,
        caller: &Caller,
        src: &str,
        masked: u16,
        unmasked: Option<u16>,
        create_parent: bool,
        now: Now,
    ) -> FsResult<bool> {
        let path = FsPath::parse(src)?;
        let r = self.resolve(&path);
        if let Some(e) = not_a_directory(&path, &r, true) {
            return Err(e);
        }
        self.checker(caller).check_traverse(&r)?;
        if let Some(id) = r.last() {
            let is_dir = self.dir.get(id).is_some_and(|i| i.is_dir());
            if !is_dir {
                return Err(FsError::FileAlreadyExists(format!(
                    "Path is not a directory: {path}"
                )));
            }
            return Ok(true);
        }
        self.check_safe_mode(&format!("Cannot create directory {path}"))?;
        self.checker(caller).check(
            &r,
            Check {
                ancestor: Some(WRITE),
                ..Check::default()
            },
        )?;
        if !create_parent {
            self.verify_parent_dir(&path, &r)?;
        }
        let n = path.components().len();
        // Ancestors get the new directory's mode plus u+wx, so the caller can go on.
        let ancestor_mode = masked | ((WRITE | EXECUTE) << 6);
        let parent = self.create_missing(caller, &path, &r, n - 1, ancestor_mode & 0o777, now)?;
        let mode = self.create_mode(parent, masked, unmasked);
        self.add_dir(caller, parent, path.name(), mode & 0o1777, now)?;
        Ok(true)
    }

    /// The mode a new file or directory under `parent` is created with. As Hadoop with
    /// `dfs.namenode.posix.acl.inheritance.enabled` (POSIX semantics): when the parent
    /// has a default ACL, the umask does not apply and the client's unmasked mode filters
    /// the inherited entries; otherwise (or when the client sent no unmasked mode, as
    /// old clients do) the masked mode is the mode.
    pub(crate) fn create_mode(&self, parent: u64, masked: u16, unmasked: Option<u16>) -> u16 {
        match unmasked {
            Some(u)
                if self.cfg.posix_acl_inheritance
                    && self
                        .dir
                        .get(parent)
                        .is_some_and(|p| p.acl().iter().any(|e| e.default)) =>
            {
                u
            }
            _ => masked,
        }
    }

    /// HDFS's verifyParentDir: the parent must exist and be a directory.
    pub(crate) fn verify_parent_dir(&self, path: &FsPath, r: &Resolved) -> FsResult<()> {
        if path.components().len() < 2 {
            return Ok(());
        }
        match r.parent().and_then(|id| self.dir.get(id)) {
            None => Err(FsError::FileNotFound(format!(
                "Parent directory doesn't exist: {}",
                path.parent()
            ))),
            Some(p) if !p.is_dir() => Err(FsError::ParentNotDirectory(format!(
                "Parent path is not a directory: {}",
                path.parent()
            ))),
            Some(_) => Ok(()),
        }
    }

    /// Creates the missing directories among the first `upto` components of `path`
    /// with `mode`, and returns the inode id of the directory at `upto`.
    pub(crate) fn create_missing(
        &mut self,
        caller: &Caller,
        path: &FsPath,
        r: &Resolved,
        upto: usize,
        mode: u16,
        now: Now,
    ) -> FsResult<u64> {
        let mut cur = r.ids[0].unwrap_or(crate::fsdir::ROOT_INODE_ID);
        for i in 1..=upto {
            cur = match r.ids[i] {
                Some(id) => id,
                None => self.add_dir(caller, cur, &path.components()[i - 1], mode, now)?,
            };
        }
        Ok(cur)
    }

    fn add_dir(
        &mut self,
        caller: &Caller,
        parent: u64,
        name: &[u8],
        mode: u16,
        now: Now,
    ) -> FsResult<u64> {
        self.check_new_child(parent, name)?;
        let group = self
            .dir
            .get(parent)
            .map(|p| p.perm.group.clone())
            .unwrap_or_else(|| self.cfg.supergroup.as_str().into());
        let id = self.next_inode_id();
        self.log_and_apply(
            EditOp::Mkdir {
                id,
                parent,
                name: name.to_vec(),
                perm: PermissionStatus {
                    owner: caller.user.as_str().into(),
                    group,
                    mode,
                },
                mtime: now.wall_ms,
            },
            now.mono,
        )?;
        Ok(id)
    }
}
