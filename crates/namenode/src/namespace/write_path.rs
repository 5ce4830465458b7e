//! The namespace half of the write path: leases, addBlock, complete, abandonBlock,
//! fsync, generation stamps for pipelines, lease release.
//!
//! The namesystem calls these under the namespace lock and talks to the block manager
//! between them (never waiting while holding the lock).

use std::time::Duration;

use super::{Namespace, Now};
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::permission::{Caller, Check, WRITE};
use crate::fsdir::{FileBlock, FsPath};

/// A file open for write, found through its lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRef {
    pub id: u64,
    pub path: String,
    pub replication: u16,
    pub block_size: u64,
    pub client_machine: String,
}

/// What addBlock has to do after the first (locked) step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddBlockPlan {
    /// A retried addBlock: hand out the existing, still empty last block again.
    Existing {
        file: FileRef,
        block: FileBlock,
        offset: u64,
    },
    /// Allocate a new block after `previous` (already committed here; the caller must
    /// see it minimally replicated first).
    New {
        file: FileRef,
        previous: Option<FileBlock>,
        /// The file's last block now (what step 2 expects to find).
        last_id: Option<u64>,
        offset: u64,
    },
}

/// What complete has to check after the first (locked) step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletePlan {
    /// The file is already closed (a retried complete): answer true.
    AlreadyClosed,
    /// Every listed block must reach min replication before the file closes.
    Check { file: FileRef, blocks: Vec<u64> },
}

/// An open file whose lease is to be released (recoverLease, hard limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenFile {
    pub file: u64,
    pub holder: String,
    pub blocks: Vec<FileBlock>,
    /// A truncate inside the last block waits for block recovery: its new length.
    pub truncate_last_to: Option<u64>,
}

pub(crate) fn block_name(b: &FileBlock) -> String {
    format!("blk_{}_{}", b.id, b.gs)
}

impl Namespace {
    /// HDFS's checkLease: the file (by `file_id` when non-zero, else by path) must be
    /// open for write by `holder`.
    pub fn check_lease(&self, src: &str, file_id: u64, holder: &str) -> FsResult<FileRef> {
        let holder_text = || match self.leases.files_of(holder).len() {
            0 => format!("Holder {holder} does not have any open files."),
            n => format!("[Lease.  Holder: {holder}, pending creates: {n}]"),
        };
        let id = if file_id != 0 {
            file_id
        } else {
            let path = FsPath::parse(src)?;
            match self.resolve(&path).last() {
                Some(id) => id,
                None => {
                    return Err(FsError::FileNotFound(format!(
                        "No lease on {src}: File does not exist. {}",
                        holder_text()
                    )));
                }
            }
        };
        let ident = format!("{src} (inode {id})");
        let Some(inode) = self.dir.get(id) else {
            return Err(FsError::FileNotFound(format!(
                "No lease on {ident}: File does not exist. {}",
                holder_text()
            )));
        };
        let Some(f) = inode.as_file() else {
            return Err(FsError::LeaseExpired(format!(
                "No lease on {ident}: INode is not a regular file. {}",
                holder_text()
            )));
        };
        let Some(uc) = f.uc() else {
            return Err(FsError::LeaseExpired(format!(
                "No lease on {ident}: File is not open for writing. {}",
                holder_text()
            )));
        };
        if uc.client_name != holder {
            return Err(FsError::LeaseExpired(format!(
                "Client (={holder}) is not the lease owner (={}: {src} (inode {id}))",
                uc.client_name
            )));
        }
        Ok(FileRef {
            id,
            path: self.dir.path_of(id),
            replication: f.replication(),
            block_size: f.block_size(),
            client_machine: uc.client_machine.clone(),
        })
    }

    fn file_blocks_of(&self, id: u64) -> FsResult<&[FileBlock]> {
        self.dir
            .get(id)
            .and_then(|i| i.as_file())
            .map(|f| f.blocks.as_slice())
            .ok_or_else(|| FsError::Io(format!("inode {id} is not a file")))
    }

    /// addBlock, step 1: checks the lease, commits `previous` and decides what to do.
    pub fn add_block_prepare(
        &mut self,
        src: &str,
        file_id: u64,
        holder: &str,
        previous: Option<FileBlock>,
        now: Now,
    ) -> FsResult<AddBlockPlan> {
        self.check_safe_mode(&format!("Cannot add block to {src}"))?;
        let file = self.check_lease(src, file_id, holder)?;
        let blocks = self.file_blocks_of(file.id)?;
        let n = blocks.len();
        let last = blocks.last().copied();
        let length: u64 = blocks.iter().map(|b| b.num_bytes).sum();
        match (previous, last) {
            (None, None) => {}
            (None, Some(l)) if l.num_bytes == 0 => {
                return Ok(AddBlockPlan::Existing {
                    offset: length,
                    block: l,
                    file,
                });
            }
            (None, Some(_)) => {}
            (Some(p), Some(l)) if p.id == l.id => {
                if p.gs < l.gs {
                    return Err(FsError::Io(format!(
                        "Cannot allocate block in {src}: passed 'previous' block {} has an older generation stamp than {}",
                        block_name(&p),
                        block_name(&l)
                    )));
                }
                self.log_and_apply(
                    EditOp::UpdateLastBlock {
                        file: file.id,
                        block: p,
                    },
                    now.mono,
                )?;
            }
            (Some(p), Some(l)) if n >= 2 && blocks[n - 2].id == p.id && l.num_bytes == 0 => {
                return Ok(AddBlockPlan::Existing {
                    offset: length,
                    block: l,
                    file,
                });
            }
            (Some(p), l) => {
                return Err(FsError::Io(format!(
                    "Cannot allocate block in {src}: passed 'previous' block {} does not match actual last block in file {}",
                    block_name(&p),
                    l.map(|b| block_name(&b)).unwrap_or_else(|| "null".into())
                )));
            }
        }
        if n >= self.cfg.max_blocks_per_file {
            return Err(FsError::Io(format!(
                "File has reached the limit on maximum number of blocks (dfs.namenode.fs-limits.max-blocks-per-file): {n} >= {}",
                self.cfg.max_blocks_per_file
            )));
        }
        let blocks = self.file_blocks_of(file.id)?;
        let offset = blocks.iter().map(|b| b.num_bytes).sum();
        let last_id = blocks.last().map(|b| b.id);
        Ok(AddBlockPlan::New {
            file,
            previous,
            last_id,
            offset,
        })
    }

    /// addBlock, step 2: allocates the block id and generation stamp and appends the
    /// block, provided the file's last block is still `expected_last`.
    pub fn add_block_allocate(
        &mut self,
        src: &str,
        file_id: u64,
        holder: &str,
        expected_last: Option<u64>,
        now: Now,
    ) -> FsResult<(FileRef, FileBlock, u64)> {
        self.check_safe_mode(&format!("Cannot add block to {src}"))?;
        let file = self.check_lease(src, file_id, holder)?;
        let blocks = self.file_blocks_of(file.id)?;
        if blocks.last().map(|b| b.id) != expected_last {
            return Err(FsError::Io(format!(
                "Cannot allocate block in {src}: the file changed during the call"
            )));
        }
        let offset = blocks.iter().map(|b| b.num_bytes).sum();
        let block = FileBlock {
            id: self.next_block_id(),
            gs: self.next_generation_stamp(),
            num_bytes: 0,
        };
        self.log_and_apply(
            EditOp::AddBlock {
                file: file.id,
                block,
            },
            now.mono,
        )?;
        Ok((file, block, offset))
    }

    /// complete, step 1: commits `last` and lists the blocks that must be replicated.
    pub fn complete_prepare(
        &mut self,
        src: &str,
        file_id: u64,
        holder: &str,
        last: Option<FileBlock>,
        now: Now,
    ) -> FsResult<CompletePlan> {
        self.check_safe_mode(&format!("Cannot complete file {src}"))?;
        let id = if file_id != 0 {
            Some(file_id)
        } else {
            FsPath::parse(src)
                .ok()
                .and_then(|p| self.resolve(&p).last())
        };
        if let Some(f) = id.and_then(|i| self.dir.get(i)).and_then(|i| i.as_file())
            && f.uc().is_none()
            && last.is_none_or(|l| f.blocks.last().is_some_and(|b| b.id == l.id))
        {
            return Ok(CompletePlan::AlreadyClosed);
        }
        let file = self.check_lease(src, file_id, holder)?;
        let blocks = self.file_blocks_of(file.id)?;
        let file_last = blocks.last().copied();
        let ids: Vec<u64> = blocks.iter().map(|b| b.id).collect();
        match (last, file_last) {
            (Some(l), Some(fl)) if l.id == fl.id => {
                self.log_and_apply(
                    EditOp::UpdateLastBlock {
                        file: file.id,
                        block: l,
                    },
                    now.mono,
                )?;
            }
            (None, _) => {}
            (Some(l), fl) => {
                return Err(FsError::Io(format!(
                    "Cannot complete {src}: block {} is not the last block of the file ({})",
                    block_name(&l),
                    fl.map(|b| block_name(&b)).unwrap_or_else(|| "null".into())
                )));
            }
        }
        Ok(CompletePlan::Check { file, blocks: ids })
    }

    /// complete, step 2: closes the file and releases the lease.
    pub fn complete_finish(
        &mut self,
        src: &str,
        file_id: u64,
        holder: &str,
        now: Now,
    ) -> FsResult<()> {
        let file = self.check_lease(src, file_id, holder)?;
        self.log_and_apply(
            EditOp::CloseFile {
                file: file.id,
                mtime: now.wall_ms,
                atime: now.wall_ms,
            },
            now.mono,
        )?;
        Ok(())
    }

    /// abandonBlock: drops the file's last block when it is `block_id`; true if dropped.
    pub fn abandon_block(
        &mut self,
        src: &str,
        file_id: u64,
        holder: &str,
        block_id: u64,
        now: Now,
    ) -> FsResult<bool> {
        self.check_safe_mode(&format!(
            "Cannot abandon block blk_{block_id} for file{src}"
        ))?;
        let file = self.check_lease(src, file_id, holder)?;
        if self.file_blocks_of(file.id)?.last().map(|b| b.id) != Some(block_id) {
            return Ok(false);
        }
        self.log_and_apply(
            EditOp::AbandonBlock {
                file: file.id,
                block_id,
            },
            now.mono,
        )?;
        Ok(true)
    }

    /// fsync: records the visible length of the last block.
    pub fn fsync(
        &mut self,
        src: &str,
        file_id: u64,
        holder: &str,
        last_block_length: i64,
        now: Now,
    ) -> FsResult<()> {
        self.check_safe_mode(&format!("Cannot fsync file {src}"))?;
        let file = self.check_lease(src, file_id, holder)?;
        let Ok(len) = u64::try_from(last_block_length) else {
            return Ok(());
        };
        if len == 0 {
            return Ok(());
        }
        if let Some(mut last) = self.file_blocks_of(file.id)?.last().copied() {
            last.num_bytes = len;
            self.log_and_apply(
                EditOp::UpdateLastBlock {
                    file: file.id,
                    block: last,
                },
                now.mono,
            )?;
        }
        Ok(())
    }

    /// HDFS's checkUCBlock: `block` is the last block of a file open by `holder`.
    fn check_uc_block(&self, block: &FileBlock, holder: &str) -> FsResult<(u64, FileBlock)> {
        let not_uc = || {
            FsError::Io(format!(
                "The file {} belonged to does not exist or it is not under construction.",
                block_name(block)
            ))
        };
        let file = self
            .block_owner(block.id)
            .ok_or_else(|| FsError::Io(format!("{} does not exist.", block_name(block))))?;
        let f = self
            .dir
            .get(file)
            .and_then(|i| i.as_file())
            .ok_or_else(not_uc)?;
        let uc = f.uc().ok_or_else(not_uc)?;
        if uc.client_name != holder {
            return Err(FsError::LeaseExpired(format!(
                "Lease mismatch on {} used by {holder} but is accessed by {}",
                block_name(block),
                uc.client_name
            )));
        }
        let stored = f
            .blocks
            .iter()
            .find(|b| b.id == block.id)
            .copied()
            .ok_or_else(|| FsError::Io(format!("{} does not exist.", block_name(block))))?;
        Ok((file, stored))
    }

    /// updateBlockForPipeline: a new generation stamp for the block's pipeline.
    pub fn update_block_for_pipeline(
        &mut self,
        block: &FileBlock,
        holder: &str,
        now: Now,
    ) -> FsResult<u64> {
        self.check_safe_mode(&format!(
            "Cannot get next generation stamp for {}",
            block_name(block)
        ))?;
        self.check_uc_block(block, holder)?;
        let gs = self.next_generation_stamp();
        self.log_and_apply(EditOp::SetGenstamp { gs }, now.mono)?;
        Ok(gs)
    }

    /// updatePipeline: the block now has `new`'s GS and length. Returns the file id.
    pub fn update_pipeline(
        &mut self,
        holder: &str,
        old: &FileBlock,
        new: &FileBlock,
        now: Now,
    ) -> FsResult<u64> {
        self.check_safe_mode(&format!("Pipeline not updated for {}", block_name(old)))?;
        let (file, stored) = self.check_uc_block(old, holder)?;
        if new.id != old.id
            || new.gs <= stored.gs
            || new.num_bytes < stored.num_bytes
            || new.gs > self.last_gs
        {
            return Err(FsError::Io(format!(
                "Update {} (len = {}) to an older state: {} (len = {})",
                block_name(old),
                stored.num_bytes,
                block_name(new),
                new.num_bytes
            )));
        }
        if self.file_blocks_of(file)?.last().map(|b| b.id) != Some(new.id) {
            return Err(FsError::Io(format!(
                "{} is not the last block of its file",
                block_name(old)
            )));
        }
        self.log_and_apply(EditOp::UpdateLastBlock { file, block: *new }, now.mono)?;
        Ok(file)
    }

    /// renewLease.
    pub fn renew_lease(&mut self, holder: &str, mono: Duration) -> FsResult<()> {
        self.check_safe_mode(&format!("Cannot renew lease for {holder}"))?;
        self.leases.renew(holder, mono);
        Ok(())
    }

    /// recoverLease, step 1: None when the file is already closed.
    pub fn recover_lease_prepare(&self, caller: &Caller, src: &str) -> FsResult<Option<OpenFile>> {
        let path = FsPath::parse(src)?;
        self.check_safe_mode(&format!("Cannot recover the lease of {path}"))?;
        let r = self.resolve_checked(
            caller,
            &path,
            Check {
                access: Some(WRITE),
                ..Check::default()
            },
        )?;
        let (id, inode) = r
            .last()
            .and_then(|id| Some((id, self.dir.get(id)?)))
            .ok_or_else(|| FsError::not_found(path.as_str()))?;
        let f = inode
            .as_file()
            .ok_or_else(|| FsError::FileNotFound(format!("Path is not a file: {path}")))?;
        Ok(self.open_file(id, f))
    }

    fn open_file(&self, id: u64, f: &crate::fsdir::FileInode) -> Option<OpenFile> {
        f.uc().map(|uc| OpenFile {
            file: id,
            holder: uc.client_name.clone(),
            blocks: f.blocks.to_vec(),
            truncate_last_to: uc.truncate_last_to,
        })
    }

    /// The open file `id` (for the lease monitor).
    pub fn open_file_by_id(&self, id: u64) -> Option<OpenFile> {
        let f = self.dir.get(id)?.as_file()?;
        self.open_file(id, f)
    }

    /// Closes an open file on behalf of lease recovery: the last block takes `last`
    /// (its length as the DataNodes reported it), or is dropped when `last` is None and
    /// `drop_last` is set. Nothing happens if the file's holder changed meanwhile.
    pub fn release_lease(
        &mut self,
        of: &OpenFile,
        last: Option<FileBlock>,
        drop_last: bool,
        now: Now,
    ) -> FsResult<bool> {
        match self.open_file_by_id(of.file) {
            Some(cur)
                if cur.holder == of.holder
                    && cur.blocks.last().map(|b| b.id) == of.blocks.last().map(|b| b.id) => {}
            _ => return Ok(false),
        }
        if let Some(l) = last {
            self.log_and_apply(
                EditOp::UpdateLastBlock {
                    file: of.file,
                    block: l,
                },
                now.mono,
            )?;
        } else if drop_last && let Some(l) = of.blocks.last() {
            self.log_and_apply(
                EditOp::AbandonBlock {
                    file: of.file,
                    block_id: l.id,
                },
                now.mono,
            )?;
        }
        self.log_and_apply(
            EditOp::CloseFile {
                file: of.file,
                mtime: now.wall_ms,
                atime: now.wall_ms,
            },
            now.mono,
        )?;
        Ok(true)
    }

    /// Passes the open file's lease to `holder` (lease recovery). Nothing happens when
    /// the file's holder changed meanwhile or already is `holder`; true when it passed.
    pub fn reassign_lease(&mut self, of: &OpenFile, holder: &str, now: Now) -> FsResult<bool> {
        match self.open_file_by_id(of.file) {
            Some(cur) if cur.holder == of.holder && cur.holder != holder => {}
            _ => return Ok(false),
        }
        self.log_and_apply(
            EditOp::ReassignLease {
                file: of.file,
                holder: holder.to_string(),
            },
            now.mono,
        )?;
        tracing::info!(
            file = of.file,
            "lease of {} on the file passed to {holder} for its recovery",
            of.holder
        );
        Ok(true)
    }

    /// Holders past the hard limit, with their files.
    pub fn hard_expired_leases(&self, mono: Duration) -> Vec<(String, Vec<u64>)> {
        self.leases.expired_holders(mono, self.cfg.hard_limit)
    }
}
