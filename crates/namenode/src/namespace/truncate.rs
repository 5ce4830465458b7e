//! truncate (Hadoop's FSDirTruncateOp): blocks wholly past the new length go at once; a
//! new length inside a block re-opens the file for the caller and leaves the last block
//! to a block recovery that cuts its replicas (`lease_recovery`), after which
//! commitBlockSynchronization closes the file at the new length.

use std::time::Duration;

use super::{Namespace, Now, OpenFile};
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::permission::{Caller, Check, WRITE};
use crate::fsdir::{FileBlock, FsPath, Removed, UnderConstruction};

/// What truncate did.
#[derive(Debug, Clone, Default)]
pub struct Truncated {
    /// Hadoop's answer: true when the file has its new length now (on a block boundary
    /// or unchanged), false when the client must wait for the block recovery.
    pub done: bool,
    /// Blocks past the new length (removed from the block manager once durable).
    pub removed: Vec<u64>,
    /// The re-opened file whose last block needs the truncating recovery.
    pub recover: Option<OpenFile>,
}

/// The blocks a file keeps at `new_length`, and the length its last kept block is cut to
/// when the new length falls inside it.
fn cut(blocks: &[FileBlock], new_length: u64) -> (usize, Option<u64>) {
    let mut start = 0u64;
    for (i, b) in blocks.iter().enumerate() {
        if start >= new_length {
            return (i, None);
        }
        let end = start + b.num_bytes;
        if end > new_length {
            return (i + 1, Some(new_length - start));
        }
        start = end;
    }
    (blocks.len(), None)
}

impl Namespace {
    /// truncate(src, newLength, clientName) with Hadoop's checks and messages.
    pub fn truncate(
        &mut self,
        caller: &Caller,
        src: &str,
        new_length: i64,
        client_name: &str,
        client_machine: &str,
        now: Now,
    ) -> FsResult<Truncated> {
        if new_length < 0 {
            return Err(FsError::IllegalArgument(format!(
                "Cannot truncate to a negative file size: {new_length}."
            )));
        }
        let new_length = new_length as u64;
        let path = FsPath::parse(src)?;
        self.check_safe_mode(&format!("Cannot truncate for {path}"))?;
        let r = self.resolve_checked(
            caller,
            &path,
            Check {
                access: Some(WRITE),
                ..Check::default()
            },
        )?;
        let id = r.last().ok_or_else(|| FsError::not_found(path.as_str()))?;
        let file = self
            .dir
            .get(id)
            .and_then(|i| i.as_file())
            .ok_or_else(|| FsError::FileNotFound(format!("Path is not a file: {path}")))?;
        if let Some(uc) = file.uc()
            && let Some(last_to) = uc.truncate_last_to
        {
            let n = file.blocks.len().saturating_sub(1);
            let before: u64 = file.blocks[..n].iter().map(|b| b.num_bytes).sum();
            if before + last_to == new_length {
                return Ok(Truncated::default());
            }
            return Err(FsError::AlreadyBeingCreated(format!(
                "Failed to TRUNCATE_FILE {path} for {client_name} on {client_machine} because {path} is being truncated."
            )));
        }
        if file.uc().is_some() {
            self.check_open_by_other(
                "TRUNCATE_FILE",
                &path,
                id,
                client_name,
                client_machine,
                now.mono,
            )?;
        }
        let old_length = file.length();
        if old_length == new_length {
            return Ok(Truncated {
                done: true,
                ..Truncated::default()
            });
        }
        if old_length < new_length {
            return Err(FsError::IllegalArgument(format!(
                "Cannot truncate to a larger file size. Current size: {old_length}, truncate size: {new_length}."
            )));
        }
        let removed = self.log_and_apply(
            EditOp::Truncate {
                file: id,
                new_length,
                mtime: now.wall_ms,
                client_name: client_name.to_string(),
                client_machine: client_machine.to_string(),
            },
            now.mono,
        )?;
        let recover = self.open_file_by_id(id);
        Ok(Truncated {
            done: recover.is_none(),
            removed: removed.blocks,
            recover,
        })
    }

    /// Applies `EditOp::Truncate` (live and on replay).
    pub(super) fn apply_truncate(
        &mut self,
        file: u64,
        new_length: u64,
        mtime: u64,
        client: (&str, &str),
        mono: Duration,
    ) -> FsResult<Removed> {
        let inode = self.dir.get_mut(file).ok_or_else(|| {
            FsError::Io(format!(
                "inconsistent namespace: truncate of missing inode {file}"
            ))
        })?;
        inode.mtime = mtime;
        let f = inode.as_file_mut().ok_or_else(|| {
            FsError::Io(format!(
                "inconsistent namespace: truncate of non-file {file}"
            ))
        })?;
        let (keep, last_to) = cut(&f.blocks, new_length);
        let gone: Vec<u64> = f.blocks.split_off(keep).iter().map(|b| b.id).collect();
        if let Some(len) = last_to {
            let (client_name, client_machine) = client;
            f.set_uc(Some(UnderConstruction {
                client_name: client_name.to_string(),
                client_machine: client_machine.to_string(),
                truncate_last_to: Some(len),
            }));
            self.leases.add(client_name, file, mono);
        }
        for b in &gone {
            self.block_owner.remove(*b);
        }
        Ok(Removed {
            blocks: gone,
            ..Removed::default()
        })
    }

    /// The file as truncate leaves it (for the quota charge of an op not yet applied).
    pub(super) fn truncated_copy(
        f: &crate::fsdir::FileInode,
        new_length: u64,
        client: (&str, &str),
    ) -> crate::fsdir::FileInode {
        let mut f = f.clone();
        let (keep, last_to) = cut(&f.blocks, new_length);
        f.blocks.truncate(keep);
        if let Some(len) = last_to {
            f.set_uc(Some(UnderConstruction {
                client_name: client.0.to_string(),
                client_machine: client.1.to_string(),
                truncate_last_to: Some(len),
            }));
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::cut;
    use crate::fsdir::FileBlock;

    #[test]
    fn cut_keeps_the_block_holding_the_new_end() {
        let b = |n| FileBlock {
            id: n,
            gs: 1,
            num_bytes: 100,
        };
        let blocks = [b(1), b(2), b(3)];
        assert_eq!(cut(&blocks, 300), (3, None));
        assert_eq!(cut(&blocks, 200), (2, None));
        assert_eq!(cut(&blocks, 150), (2, Some(50)));
        assert_eq!(cut(&blocks, 1), (1, Some(1)));
        assert_eq!(cut(&blocks, 0), (0, None));
    }
}
