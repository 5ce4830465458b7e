//! concat (Hadoop's FSDirConcatOp): the blocks of the source files are appended to the
//! target in the order given and the sources are removed; every file lives in the same
//! directory.

use super::{Namespace, Now};
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::permission::{Caller, Check, READ, WRITE};
use crate::fsdir::{FileInode, FsPath};

/// What concat did: the moved blocks now belong to `target` at its replication.
#[derive(Debug, Clone)]
pub struct Concatenated {
    pub target: u64,
    pub replication: u16,
    pub moved: Vec<u64>,
}

impl Namespace {
    /// concat(trg, srcs) with Hadoop's checks and messages.
    pub fn concat(
        &mut self,
        caller: &Caller,
        target: &str,
        srcs: &[String],
        now: Now,
    ) -> FsResult<Concatenated> {
        if target.is_empty() {
            return Err(FsError::JavaIllegalArgument(
                "Target file name is empty".into(),
            ));
        }
        if srcs.is_empty() {
            return Err(FsError::JavaIllegalArgument("No sources given".into()));
        }
        let tpath = FsPath::parse(target)?;
        self.check_safe_mode(&format!("Cannot concat {tpath}"))?;
        let r = self.resolve_checked(
            caller,
            &tpath,
            Check {
                access: Some(WRITE),
                ..Check::default()
            },
        )?;
        let (tid, tfile) = self.file_at(r.last(), &tpath)?;
        if tfile.uc().is_some() {
            return Err(FsError::IllegalArgument(format!(
                "concat: target file {tpath} is under construction"
            )));
        }
        let tparent = self.dir.get(tid).map(|i| i.parent());
        let (tblock_size, treplication) = (tfile.block_size(), tfile.replication());
        let mut ids: Vec<u64> = Vec::with_capacity(srcs.len());
        for src in srcs {
            let spath = FsPath::parse(src)?;
            let sr = self.resolve_checked(
                caller,
                &spath,
                Check {
                    access: Some(READ),
                    parent: Some(WRITE),
                    ..Check::default()
                },
            )?;
            let (sid, sfile) = self.file_at(sr.last(), &spath)?;
            if self.dir.get(sid).map(|i| i.parent()) != tparent {
                return Err(FsError::IllegalArgument(format!(
                    "Source file {spath} is not in the same directory with the target {tpath}"
                )));
            }
            if sid == tid {
                return Err(FsError::IllegalArgument(format!(
                    "concat: the src file {spath} is the same with the target file {tpath}"
                )));
            }
            if sfile.uc().is_some() || sfile.blocks.is_empty() {
                return Err(FsError::IllegalArgument(format!(
                    "concat: source file {spath} is invalid or empty or underConstruction"
                )));
            }
            if sfile.block_size() > tblock_size {
                return Err(FsError::IllegalArgument(format!(
                    "concat: source file {spath} has preferred block size {} which is greater than the target file's preferred block size {tblock_size}",
                    sfile.block_size()
                )));
            }
            if !ids.contains(&sid) {
                ids.push(sid);
            }
        }
        if ids.len() < srcs.len() {
            return Err(FsError::IllegalArgument(
                "concat: at least two of the source files are the same".into(),
            ));
        }
        let moved: Vec<u64> = ids
            .iter()
            .filter_map(|id| self.dir.get(*id).and_then(|i| i.as_file()))
            .flat_map(|f| f.blocks.iter().map(|b| b.id))
            .collect();
        self.log_and_apply(
            EditOp::Concat {
                target: tid,
                srcs: ids,
                mtime: now.wall_ms,
            },
            now.mono,
        )?;
        Ok(Concatenated {
            target: tid,
            replication: treplication,
            moved,
        })
    }

    fn file_at(&self, id: Option<u64>, path: &FsPath) -> FsResult<(u64, &FileInode)> {
        let id = id.ok_or_else(|| FsError::not_found(path.as_str()))?;
        let f = self
            .dir
            .get(id)
            .and_then(|i| i.as_file())
            .ok_or_else(|| FsError::FileNotFound(format!("Path is not a file: {path}")))?;
        Ok((id, f))
    }

    /// Applies `EditOp::Concat` (live and on replay).
    pub(super) fn apply_concat(&mut self, target: u64, srcs: &[u64], mtime: u64) -> FsResult<()> {
        let bad = || {
            FsError::Io(format!(
                "inconsistent namespace: cannot concat into {target}"
            ))
        };
        let mut blocks = Vec::new();
        for &src in srcs {
            let f = self
                .dir
                .get(src)
                .and_then(|i| i.as_file())
                .ok_or_else(bad)?;
            blocks.extend(f.blocks.iter().copied());
        }
        let parent = {
            let inode = self.dir.get_mut(target).ok_or_else(bad)?;
            inode.mtime = mtime;
            let f = inode.as_file_mut().ok_or_else(bad)?;
            f.blocks.extend(blocks.iter().copied());
            inode.parent()
        };
        for b in &blocks {
            self.block_owner.insert(b.id, target);
        }
        for &src in srcs {
            self.dir.remove_subtree(src);
        }
        if let Some(p) = self.dir.get_mut(parent) {
            p.mtime = mtime;
        }
        Ok(())
    }

    /// The quota change of a concat: the sources' items go, and their space is counted
    /// at the target's replication.
    pub(super) fn concat_usage_delta(&self, target: u64, srcs: &[u64]) -> super::Usage {
        let repl = self
            .dir
            .get(target)
            .and_then(|i| i.as_file())
            .map_or(1, |f| f.replication());
        let mut d = super::Usage::default();
        for &src in srcs {
            if let Some(f) = self.dir.get(src).and_then(|i| i.as_file()) {
                let mut g = f.clone();
                g.set_replication(repl);
                d.ns -= 1;
                d.ds += super::file_space(&g) as i64 - super::file_space(f) as i64;
            }
        }
        d
    }
}
