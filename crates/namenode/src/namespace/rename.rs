//! rename (the old call, returning false on failure) and rename2 (throwing).

use super::{Namespace, Now};
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::permission::{Caller, Check, WRITE, not_a_directory};
use crate::fsdir::{FsPath, Removed, Resolved};

impl Namespace {
    fn rename_permissions(&self, caller: &Caller, sr: &Resolved, dr: &Resolved) -> FsResult<()> {
        let c = self.checker(caller);
        c.check(
            sr,
            Check {
                parent: Some(WRITE),
                sticky: true,
                ..Check::default()
            },
        )?;
        c.check(
            dr,
            Check {
                ancestor: Some(WRITE),
                ..Check::default()
            },
        )
    }

    /// The old rename: false (not an exception) when the rename cannot happen; into an
    /// existing directory it moves the source under it.
    pub fn rename(&mut self, caller: &Caller, src: &str, dst: &str, now: Now) -> FsResult<bool> {
        let spath = FsPath::parse(src)?;
        let mut dpath = FsPath::parse(dst)?;
        self.check_safe_mode(&format!("Cannot rename {spath}"))?;
        let sr = self.resolve(&spath);
        if let Some(e) = not_a_directory(&spath, &sr, false) {
            return Err(e);
        }
        let mut dr = self.resolve(&dpath);
        if let Some(e) = not_a_directory(&dpath, &dr, true) {
            return Err(e);
        }
        if let Some(d) = dr.last()
            && self.dir.get(d).is_some_and(|i| i.is_dir())
            && !spath.is_root()
        {
            dpath = dpath.child(spath.name());
            dr = self.resolve(&dpath);
        }
        self.rename_permissions(caller, &sr, &dr)?;
        let Some(id) = sr.last() else {
            tracing::debug!("failed to rename {spath} to {dpath} because source does not exist");
            return Ok(false);
        };
        if spath.is_root() {
            return Ok(false);
        }
        if spath == dpath {
            return Ok(true);
        }
        if dpath.is_under(&spath) || dr.last().is_some() || dpath.is_root() {
            return Ok(false);
        }
        let Some(dst_parent) = dr
            .parent()
            .filter(|p| self.dir.get(*p).is_some_and(|i| i.is_dir()))
        else {
            return Ok(false);
        };
        self.check_new_child(dst_parent, dpath.name())?;
        self.log_and_apply(
            EditOp::Rename {
                id,
                dst_parent,
                dst_name: dpath.name().to_vec(),
                replaced: None,
                mtime: now.wall_ms,
            },
            now.mono,
        )?;
        Ok(true)
    }

    /// rename2(src, dst, overwrite): throws on every failure, never moves "into" a
    /// directory. Returns what an overwritten destination held.
    pub fn rename2(
        &mut self,
        caller: &Caller,
        src: &str,
        dst: &str,
        overwrite: bool,
        now: Now,
    ) -> FsResult<Removed> {
        let spath = FsPath::parse(src)?;
        let dpath = FsPath::parse(dst)?;
        self.check_safe_mode(&format!("Cannot rename {spath}"))?;
        let sr = self.resolve(&spath);
        if let Some(e) = not_a_directory(&spath, &sr, false) {
            return Err(e);
        }
        let dr = self.resolve(&dpath);
        if let Some(e) = not_a_directory(&dpath, &dr, true) {
            return Err(e);
        }
        self.rename_permissions(caller, &sr, &dr)?;
        let Some(id) = sr.last() else {
            return Err(FsError::FileNotFound(format!(
                "rename source {spath} is not found."
            )));
        };
        if spath.is_root() {
            return Err(FsError::Io("rename source cannot be the root".into()));
        }
        if spath == dpath {
            return Err(FsError::FileAlreadyExists(format!(
                "The source {spath} and destination {dpath} are the same"
            )));
        }
        if dpath.is_under(&spath) {
            return Err(FsError::Io(format!(
                "Rename destination {dpath} is a directory or file under source {spath}"
            )));
        }
        if dpath.is_root() {
            return Err(FsError::Io("rename destination cannot be the root".into()));
        }
        let src_is_dir = self.dir.get(id).is_some_and(|i| i.is_dir());
        let replaced = dr.last();
        if let Some(d) = replaced {
            let dinode = self
                .dir
                .get(d)
                .ok_or_else(|| FsError::Io(format!("inode {d} vanished")))?;
            if !overwrite {
                return Err(FsError::FileAlreadyExists(format!(
                    "rename destination {dpath} already exists"
                )));
            }
            if dinode.is_dir() != src_is_dir {
                return Err(FsError::Io(format!(
                    "Source {spath} and destination {dpath} must both be directories"
                )));
            }
            if dinode.as_dir().is_some_and(|x| !x.children.is_empty()) {
                return Err(FsError::Io(format!(
                    "rename destination directory is not empty: {dpath}"
                )));
            }
        }
        let dst_parent = match dr.parent().and_then(|p| Some((p, self.dir.get(p)?))) {
            None => {
                return Err(FsError::FileNotFound(format!(
                    "rename destination parent {dpath} not found."
                )));
            }
            Some((_, p)) if !p.is_dir() => {
                return Err(FsError::ParentNotDirectory(format!(
                    "rename destination parent {dpath} is a file."
                )));
            }
            Some((p, _)) => p,
        };
        if replaced.is_none() {
            self.check_new_child(dst_parent, dpath.name())?;
        }
        self.log_and_apply(
            EditOp::Rename {
                id,
                dst_parent,
                dst_name: dpath.name().to_vec(),
                replaced,
                mtime: now.wall_ms,
            },
            now.mono,
        )
    }
}
