//! Read-only operations: file status, listings, block lists, content summaries.

use super::Namespace;
use crate::error::{FsError, FsResult};
use crate::fsdir::permission::{Caller, Check, EXECUTE, READ, not_a_directory};
use crate::fsdir::summary::{ContentSummary, SummaryWalk};
use crate::fsdir::{FileBlock, FsPath, Inode, InodeKind, PermissionStatus};

/// One file or directory as clients see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatus {
    pub id: u64,
    /// Local name (listing entries); empty for getFileInfo/create/append.
    pub name: Vec<u8>,
    pub is_dir: bool,
    pub length: u64,
    pub perm: PermissionStatus,
    pub mtime: u64,
    pub atime: u64,
    pub replication: u16,
    pub block_size: u64,
    pub children_num: u32,
    /// The inode has ACL entries (Hadoop's HAS_ACL flag).
    pub has_acl: bool,
    /// The file's blocks, when the caller asked for locations.
    pub blocks: Option<FileBlocks>,
}

/// A file's blocks with their offsets, for getBlockLocations and located listings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBlocks {
    pub file_id: u64,
    /// (block, offset in file), in order.
    pub blocks: Vec<(FileBlock, u64)>,
    pub under_construction: bool,
    pub replication: u16,
}

/// One page of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub entries: Vec<FileStatus>,
    pub remaining: u32,
}

impl Namespace {
    pub(crate) fn status_of(
        &self,
        id: u64,
        inode: &Inode,
        name: Vec<u8>,
        with_blocks: bool,
    ) -> FileStatus {
        let (is_dir, length, replication, block_size, children_num) = match &inode.kind {
            InodeKind::Dir(d) => (true, 0, 0, 0, d.children.len() as u32),
            InodeKind::File(f) => (false, f.length(), f.replication(), f.block_size(), 0),
        };
        FileStatus {
            id,
            name,
            is_dir,
            length,
            perm: inode.perm.status().clone(),
            mtime: inode.mtime,
            atime: inode.atime,
            replication,
            block_size,
            children_num,
            has_acl: !inode.acl().is_empty(),
            blocks: if with_blocks && !is_dir {
                self.blocks_of(id)
            } else {
                None
            },
        }
    }

    pub(crate) fn blocks_of(&self, id: u64) -> Option<FileBlocks> {
        let f = self.dir.get(id)?.as_file()?;
        let mut off = 0;
        let blocks = f
            .blocks
            .iter()
            .map(|b| {
                let e = (*b, off);
                off += b.num_bytes;
                e
            })
            .collect();
        Some(FileBlocks {
            file_id: id,
            blocks,
            under_construction: f.uc().is_some(),
            replication: f.replication(),
        })
    }

    /// getFileInfo: None when the path does not exist. A path that runs through a file is
    /// "not found" (None) for the superuser and AccessControlException for anyone else, as
    /// Hadoop's FSDirStatAndListingOp.getFileInfo answers (getListing and getBlockLocations
    /// throw to everyone).
    pub fn file_info(&self, caller: &Caller, src: &str) -> FsResult<Option<FileStatus>> {
        let path = FsPath::parse(src)?;
        let r = self.resolve(&path);
        if let Some(e) = not_a_directory(&path, &r, false) {
            return if caller.superuser { Ok(None) } else { Err(e) };
        }
        self.checker(caller).check_traverse(&r)?;
        Ok(r.last()
            .and_then(|id| Some((id, self.dir.get(id)?)))
            .map(|(id, i)| self.status_of(id, i, Vec::new(), false)))
    }

    /// getLocatedFileInfo: getFileInfo with the blocks attached.
    pub fn located_file_info(&self, caller: &Caller, src: &str) -> FsResult<Option<FileStatus>> {
        Ok(self.file_info(caller, src)?.map(|mut s| {
            if !s.is_dir {
                s.blocks = self.blocks_of(s.id);
            }
            s
        }))
    }

    /// getListing: None when the path does not exist; a file lists itself.
    pub fn listing(
        &self,
        caller: &Caller,
        src: &str,
        start_after: &[u8],
        need_location: bool,
    ) -> FsResult<Option<Listing>> {
        let path = FsPath::parse(src)?;
        let r = self.resolve(&path);
        if let Some(e) = not_a_directory(&path, &r, false) {
            return Err(e);
        }
        let Some((id, inode)) = r.last().and_then(|id| Some((id, self.dir.get(id)?))) else {
            self.checker(caller).check_traverse(&r)?;
            return Ok(None);
        };
        let Some(dir) = inode.as_dir() else {
            self.checker(caller).check_traverse(&r)?;
            let st = self.status_of(id, inode, Vec::new(), need_location);
            return Ok(Some(Listing {
                entries: vec![st],
                remaining: 0,
            }));
        };
        self.checker(caller).check(
            &r,
            Check {
                access: Some(READ | EXECUTE),
                ..Check::default()
            },
        )?;
        let mut range = self.dir.children_after(dir, Some(start_after));
        let mut entries = Vec::new();
        for (name, id) in range.by_ref().take(self.cfg.ls_limit.max(1)) {
            if let Some(child) = self.dir.get(id) {
                entries.push(self.status_of(id, child, name.to_vec(), need_location));
            }
        }
        let remaining = range.count() as u32;
        Ok(Some(Listing { entries, remaining }))
    }

    /// getBlockLocations' namespace half: the file's blocks (READ access needed).
    pub fn file_blocks(&self, caller: &Caller, src: &str) -> FsResult<FileBlocks> {
        let path = FsPath::parse(src)?;
        let r = self.resolve_checked(
            caller,
            &path,
            Check {
                access: Some(READ),
                ..Check::default()
            },
        )?;
        let (id, inode) = r
            .last()
            .and_then(|id| Some((id, self.dir.get(id)?)))
            .ok_or_else(|| FsError::not_found(path.as_str()))?;
        if inode.is_dir() {
            return Err(FsError::FileNotFound(format!("Path is not a file: {path}")));
        }
        self.blocks_of(id)
            .ok_or_else(|| FsError::not_found(path.as_str()))
    }

    /// checkAccess: `mode` (Hadoop's FsAction bits, rwx = 4|2|1) on an existing path, after
    /// the traverse checks; "Path not found" when it does not exist.
    pub fn check_access(&self, caller: &Caller, src: &str, mode: u16) -> FsResult<()> {
        let path = FsPath::parse(src)?;
        let r = self.resolve(&path);
        if let Some(e) = not_a_directory(&path, &r, false) {
            return Err(e);
        }
        self.checker(caller).check_traverse(&r)?;
        if r.last().and_then(|id| self.dir.get(id)).is_none() {
            return Err(FsError::FileNotFound("Path not found".into()));
        }
        self.checker(caller).check(
            &r,
            Check {
                access: Some(mode & 0o7),
                ..Check::default()
            },
        )
    }

    /// True when an access-time update is due for `src` after a read at `now_ms`.
    pub fn access_time_due(&self, id: u64, now_ms: u64) -> bool {
        let p = self.cfg.access_time_precision;
        p > 0
            && !self.manual_safe_mode
            && self
                .dir
                .get(id)
                .is_some_and(|i| now_ms > i.atime.saturating_add(p))
    }

    /// getContentSummary (READ_EXECUTE on every directory of the subtree), counted in one
    /// go; the RPC counts in steps (`summary_walk`).
    pub fn content_summary(&self, caller: &Caller, src: &str) -> FsResult<ContentSummary> {
        let mut walk = self.summary_walk(caller, src)?;
        self.summary_steps(caller, &mut walk, 0)?;
        Ok(walk.summary())
    }

    /// Starts a content summary of `src` (traverse checked); [`Namespace::summary_step`]
    /// counts it and checks READ_EXECUTE on every directory of the subtree as it goes, as
    /// Hadoop checks the subtree before counting — here a step at a time, so that a subtree
    /// of any size is never checked in one hold of the lock either.
    pub fn summary_walk(&self, caller: &Caller, src: &str) -> FsResult<SummaryWalk> {
        let path = FsPath::parse(src)?;
        let r = self.resolve_checked(caller, &path, Check::default())?;
        let id = r.last().ok_or_else(|| FsError::not_found(path.as_str()))?;
        let mut walk = self.dir.summary_walk(id);
        walk.set_quota(self.reported_ns_quota(id, walk.summary().quota));
        Ok(walk)
    }

    /// Counts `dfs.content-summary.limit` more inodes of `walk` for `caller`; true once it is
    /// done. AccessControlException for the first directory met that does not grant
    /// READ_EXECUTE.
    pub fn summary_step(&self, caller: &Caller, walk: &mut SummaryWalk) -> FsResult<bool> {
        self.summary_steps(caller, walk, self.cfg.content_summary_limit)
    }

    fn summary_steps(
        &self,
        caller: &Caller,
        walk: &mut SummaryWalk,
        limit: usize,
    ) -> FsResult<bool> {
        let checker = self.checker(caller);
        if checker.bypass() {
            return Ok(self.dir.summary_step(walk, limit));
        }
        self.dir.summary_step_checked(walk, limit, |id, inode| {
            checker.check_sub_dir(id, inode, READ | EXECUTE, false)
        })
    }

    /// getPreferredBlockSize.
    pub fn preferred_block_size(&self, caller: &Caller, src: &str) -> FsResult<u64> {
        let (_, inode) = self.existing(caller, src)?;
        inode
            .as_file()
            .map(|f| f.block_size())
            .ok_or_else(|| FsError::FileNotFound(format!("Path is not a file: {src}")))
    }

    /// isFileClosed.
    pub fn is_file_closed(&self, caller: &Caller, src: &str) -> FsResult<bool> {
        let (_, inode) = self.existing(caller, src)?;
        Ok(inode.as_file().is_none_or(|f| f.uc().is_none()))
    }

    /// getLinkTarget: rhdfs has no symlinks, so an existing path is never a link.
    pub fn link_target(&self, caller: &Caller, src: &str) -> FsResult<String> {
        let (path, _) = self.existing(caller, src)?;
        Err(FsError::Io(format!("Path {path} is not a symbolic link")))
    }

    /// Resolves an existing path (traverse checked) or fails with FileNotFoundException.
    pub(crate) fn existing(&self, caller: &Caller, src: &str) -> FsResult<(FsPath, &Inode)> {
        let path = FsPath::parse(src)?;
        let r = self.resolve(&path);
        if let Some(e) = not_a_directory(&path, &r, false) {
            return Err(e);
        }
        self.checker(caller).check_traverse(&r)?;
        let inode = r
            .last()
            .and_then(|id| self.dir.get(id))
            .ok_or_else(|| FsError::not_found(path.as_str()))?;
        Ok((path, inode))
    }
}
