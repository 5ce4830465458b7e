//! delete.

use super::{Namespace, Now};
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::permission::{Caller, Check, WRITE, not_a_directory};
use crate::fsdir::{FsPath, Removed};

impl Namespace {
    /// delete(src, recursive): Ok(None) when nothing was deleted (missing path or `/`),
    /// else what was removed (its blocks go to the block manager after the lock).
    pub fn delete(
        &mut self,
        caller: &Caller,
        src: &str,
        recursive: bool,
        now: Now,
    ) -> FsResult<Option<Removed>> {
        let path = FsPath::parse(src)?;
        self.check_safe_mode(&format!("Cannot delete {path}"))?;
        let r = self.resolve(&path);
        if let Some(e) = not_a_directory(&path, &r, false) {
            return Err(e);
        }
        if !recursive
            && let Some(d) = r
                .last()
                .and_then(|id| self.dir.get(id))
                .and_then(|i| i.as_dir())
            && !d.children.is_empty()
        {
            return Err(FsError::PathIsNotEmptyDirectory(path.to_string()));
        }
        self.checker(caller).check(
            &r,
            Check {
                parent: Some(WRITE),
                sticky: true,
                sub_access: Some(0o7),
                ignore_empty_dir: true,
                ..Check::default()
            },
        )?;
        let Some(id) = r.last() else {
            return Ok(None);
        };
        if path.is_root() {
            tracing::warn!("failed to remove / because the root is not allowed to be deleted");
            return Ok(None);
        }
        let removed = self.log_and_apply(
            EditOp::Delete {
                id,
                mtime: now.wall_ms,
            },
            now.mono,
        )?;
        Ok(Some(removed))
    }
}
