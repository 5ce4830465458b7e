//! create (startFile) and append, and the lease checks they share.

use super::{FileStatus, Namespace, Now};
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::permission::{Caller, Check, EXECUTE, WRITE, not_a_directory};
use crate::fsdir::{FileBlock, FsPath, PermissionStatus};

/// CreateFlag bits as they travel in createFlag.
pub mod flags {
    pub const CREATE: u32 = 0x01;
    pub const OVERWRITE: u32 = 0x02;
    pub const APPEND: u32 = 0x04;
    pub const NEW_BLOCK: u32 = 0x20;
}

/// The block an append re-opens for writing: the file's last block when it is partial and
/// the append did not ask for a new block (NEW_BLOCK). The active's block map and a
/// standby's replaying the append's edit both follow it.
pub fn reopened_block(file: &crate::fsdir::FileInode, new_block: bool) -> Option<FileBlock> {
    file.blocks
        .last()
        .filter(|b| !new_block && b.num_bytes < file.block_size())
        .copied()
}

/// Arguments of create.
#[derive(Debug, Clone)]
pub struct CreateArgs<'a> {
    pub src: &'a str,
    pub masked: u16,
    /// The client's mode before its umask (CreateRequestProto.unmasked), if sent.
    pub unmasked: Option<u16>,
    pub client_name: &'a str,
    pub client_machine: &'a str,
    pub flags: u32,
    pub create_parent: bool,
    pub replication: u16,
    pub block_size: u64,
}

/// What append found: the file's status and its last block when it is partial.
#[derive(Debug, Clone)]
pub struct AppendResult {
    pub status: FileStatus,
    /// (last block, its offset in the file), when the client should continue it.
    pub last_block: Option<(FileBlock, u64)>,
    pub file_id: u64,
}

impl Namespace {
    /// Checks a requested replication against dfs.replication.max / dfs.namenode.replication.min.
    pub(crate) fn verify_replication(
        &self,
        src: &str,
        replication: u16,
        client: &str,
    ) -> FsResult<()> {
        if replication > self.cfg.max_replication {
            return Err(FsError::Io(format!(
                "Requested replication factor of {replication} exceeds maximum of {} for {src} from {client}",
                self.cfg.max_replication
            )));
        }
        if replication < self.cfg.min_replication {
            return Err(FsError::Io(format!(
                "Requested replication factor of {replication} is less than the required minimum of {} for {src} from {client}",
                self.cfg.min_replication
            )));
        }
        Ok(())
    }

    /// HDFS's recoverLeaseInternal for an open file someone else wants: fails unless the
    /// holder's soft limit has passed, in which case it reports recovery in progress.
    pub(crate) fn check_open_by_other(
        &self,
        op: &str,
        path: &FsPath,
        file: u64,
        client: &str,
        machine: &str,
        mono: std::time::Duration,
    ) -> FsResult<()> {
        let Some(uc) = self
            .dir
            .get(file)
            .and_then(|i| i.as_file())
            .and_then(|f| f.uc().cloned())
        else {
            return Ok(());
        };
        if uc.client_name == client {
            return Err(FsError::AlreadyBeingCreated(format!(
                "Failed to {op} {path} for {client} on {machine} because current leaseholder is trying to recreate file."
            )));
        }
        if !self
            .leases
            .expired(&uc.client_name, mono, self.cfg.soft_limit)
        {
            return Err(FsError::AlreadyBeingCreated(format!(
                "Failed to {op} {path} for {client} on {machine} because this file lease is currently owned by {} on {}",
                uc.client_name, uc.client_machine
            )));
        }
        Err(FsError::RecoveryInProgress(format!(
            "Failed to {op} {path} for {client} on {machine} because lease recovery is in progress. Try again later."
        )))
    }

    /// create: a new file open for write by `client_name`. Returns its status (empty
    /// path) and the blocks of a file it replaced (to remove from the block manager).
    pub fn create(
        &mut self,
        caller: &Caller,
        a: &CreateArgs<'_>,
        now: Now,
    ) -> FsResult<(FileStatus, Vec<u64>)> {
        let path = FsPath::parse(a.src)?;
        if path.is_root() {
            return Err(FsError::FileAlreadyExists(format!(
                "{path} already exists as a directory"
            )));
        }
        self.check_safe_mode(&format!("Cannot create file{path}"))?;
        self.verify_replication(path.as_str(), a.replication, a.client_name)?;
        if a.block_size < self.cfg.min_block_size {
            return Err(FsError::Io(format!(
                "Specified block size is less than configured minimum value (dfs.namenode.fs-limits.min-block-size): {} < {}",
                a.block_size, self.cfg.min_block_size
            )));
        }
        let r = self.resolve(&path);
        if let Some(e) = not_a_directory(&path, &r, true) {
            return Err(e);
        }
        let overwrite = a.flags & flags::OVERWRITE != 0;
        let existing = r.last();
        if let Some(id) = existing
            && self.dir.get(id).is_some_and(|i| i.is_dir())
        {
            return Err(FsError::FileAlreadyExists(format!(
                "{path} already exists as a directory"
            )));
        }
        self.checker(caller).check(
            &r,
            Check {
                ancestor: Some(WRITE),
                access: if overwrite && existing.is_some() {
                    Some(WRITE)
                } else {
                    None
                },
                ..Check::default()
            },
        )?;
        if let Some(id) = existing
            && !overwrite
        {
            self.check_open_by_other(
                "CREATE_FILE",
                &path,
                id,
                a.client_name,
                a.client_machine,
                now.mono,
            )?;
            return Err(FsError::FileAlreadyExists(format!(
                "{path} for client {} already exists",
                a.client_machine
            )));
        }
        if existing.is_none() && a.flags & flags::CREATE == 0 {
            return Err(FsError::FileNotFound(format!(
                "Can't overwrite non-existent {path} for client {}",
                a.client_machine
            )));
        }
        if !a.create_parent {
            self.verify_parent_dir(&path, &r)?;
        }
        let n = path.components().len();
        let parent = match r.parent() {
            Some(p) => p,
            None => {
                let anc = r.ids[r.last_existing_ancestor()].unwrap_or(crate::fsdir::ROOT_INODE_ID);
                let pmode = self.dir.get(anc).map(|i| i.perm.mode).unwrap_or(0o755);
                let mode = (pmode | ((WRITE | EXECUTE) << 6)) & 0o777;
                self.create_missing(caller, &path, &r, n - 1, mode, now)?
            }
        };
        if existing.is_none() {
            self.check_new_child(parent, path.name())?;
        }
        let group = self
            .dir
            .get(parent)
            .map(|p| p.perm.group.clone())
            .unwrap_or_else(|| self.cfg.supergroup.as_str().into());
        let id = self.next_inode_id();
        let mode = self.create_mode(parent, a.masked, a.unmasked);
        let removed = self.log_and_apply(
            EditOp::AddFile {
                id,
                parent,
                name: path.name().to_vec(),
                perm: PermissionStatus {
                    owner: caller.user.as_str().into(),
                    group,
                    mode: mode & 0o1777,
                },
                mtime: now.wall_ms,
                replication: a.replication,
                block_size: a.block_size,
                client_name: a.client_name.to_string(),
                client_machine: a.client_machine.to_string(),
                replaced: existing,
            },
            now.mono,
        )?;
        let inode = self
            .dir
            .get(id)
            .ok_or_else(|| FsError::Io(format!("inode {id} vanished after create")))?;
        Ok((self.status_of(id, inode, Vec::new(), false), removed.blocks))
    }

    /// append: re-opens a closed file for `client_name`. Returns the status and, unless
    /// NEW_BLOCK was asked for, the last block when it is not full.
    pub fn append(
        &mut self,
        caller: &Caller,
        src: &str,
        client_name: &str,
        client_machine: &str,
        flag: u32,
        now: Now,
    ) -> FsResult<AppendResult> {
        let path = FsPath::parse(src)?;
        self.check_safe_mode(&format!("Cannot append to file{path}"))?;
        let r = self.resolve_checked(
            caller,
            &path,
            Check {
                access: Some(WRITE),
                ..Check::default()
            },
        )?;
        let id = r.last().ok_or_else(|| FsError::not_found(path.as_str()))?;
        let inode = self
            .dir
            .get(id)
            .ok_or_else(|| FsError::not_found(path.as_str()))?;
        let Some(file) = inode.as_file() else {
            return Err(FsError::FileNotFound(format!(
                "Failed to append to non-existent file {path} for client {client_machine}"
            )));
        };
        if file.uc().is_some() {
            self.check_open_by_other(
                "APPEND_FILE",
                &path,
                id,
                client_name,
                client_machine,
                now.mono,
            )?;
        }
        self.log_and_apply(
            EditOp::ReopenFile {
                file: id,
                client_name: client_name.to_string(),
                client_machine: client_machine.to_string(),
                new_block: flag & flags::NEW_BLOCK != 0,
            },
            now.mono,
        )?;
        self.append_result(id, flag)
            .ok_or_else(|| FsError::not_found(path.as_str()))
    }

    /// What append answers for file `id`, re-opened: its status, and its last block when
    /// that is partial and NEW_BLOCK was not asked for. None when `id` is not a file.
    pub(crate) fn append_result(&self, id: u64, flag: u32) -> Option<AppendResult> {
        let inode = self.dir.get(id)?;
        let file = inode.as_file()?;
        let last_block = reopened_block(file, flag & flags::NEW_BLOCK != 0)
            .map(|b| (b, file.length() - b.num_bytes));
        Some(AppendResult {
            status: self.status_of(id, inode, Vec::new(), false),
            last_block,
            file_id: id,
        })
    }
}
