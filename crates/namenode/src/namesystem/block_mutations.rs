//! Mutations that involve the block manager: the write path and removals.

use rhdfs_blockmanager::{BlockUcState, DatanodeId, DatanodeInfo, Location};

use super::{Applied, Effects, LocatedBlock, Namesystem, to_block};
use crate::error::{FsError, FsResult};
use crate::fsdir::FileBlock;
use crate::fsdir::permission::Caller;
use crate::namespace::{AddBlockPlan, AppendResult, CompletePlan, CreateArgs, FileStatus};

/// Arguments of addBlock.
#[derive(Debug, Clone, Default)]
pub struct AddBlockArgs {
    pub src: String,
    pub client_name: String,
    pub previous: Option<FileBlock>,
    pub excluded: Vec<DatanodeId>,
    pub file_id: u64,
    pub favored: Vec<String>,
}

/// What append returns.
#[derive(Debug, Clone)]
pub struct LocatedAppend {
    pub status: FileStatus,
    pub block: Option<LocatedBlock>,
}

impl Namesystem {
    /// create. A file whose writer passed the soft limit is released first if its
    /// blocks allow it.
    pub async fn create(
        &self,
        caller: &Caller,
        args: &CreateArgs<'_>,
    ) -> FsResult<Applied<FileStatus>> {
        let now = self.now();
        let result = self.with_ns_op("create", |ns| ns.create(caller, args, now));
        let (status, removed) = match result {
            Err(FsError::RecoveryInProgress(_)) if self.release_path(args.src).await? => {
                self.with_ns_op("create", |ns| ns.create(caller, args, now))?
            }
            other => other?,
        };
        // An overwritten file's blocks go only once the create is durable.
        Ok(Applied::new(
            "create",
            status,
            Effects::RemoveBlocks(removed),
        ))
    }

    /// append: takes the lease; the last partial block is re-opened for writing at its
    /// current replicas.
    pub async fn append(
        &self,
        caller: &Caller,
        src: &str,
        client_name: &str,
        flag: u32,
    ) -> FsResult<LocatedAppend> {
        let now = self.now();
        let machine = caller.machine.clone();
        let run = || {
            self.with_ns_op("append", |ns| {
                let r = ns.append(caller, src, client_name, &machine, flag, now)?;
                Ok(self.locate_append(r))
            })
        };
        match run() {
            Err(FsError::RecoveryInProgress(_)) if self.release_path(src).await? => run(),
            other => other,
        }
    }

    /// append's answer for a re-opened file: its last block, when the client continues it,
    /// is under construction in the block map at its current replicas.
    fn locate_append(&self, r: AppendResult) -> LocatedAppend {
        let block = r.last_block.map(|(b, off)| LocatedBlock {
            block: b,
            offset: off,
            locations: self.reopen_block(&b, r.status.replication),
            corrupt: false,
        });
        LocatedAppend {
            status: r.status,
            block,
        }
    }

    /// A block an append re-opened (`namespace::reopened_block`) under construction in the
    /// block map at its current replicas, which are returned; a block already not COMPLETE
    /// stays as it is. The active's append and a standby's replay of it both call this.
    pub(crate) fn reopen_block(&self, b: &FileBlock, replication: u16) -> Vec<Location> {
        let locations = self.locations(b.id);
        if matches!(
            self.bm.get_block(b.id),
            Some((_, BlockUcState::Complete)) | None
        ) {
            self.bm
                .add_block_under_construction(to_block(b), replication, &locations);
        }
        locations
    }

    /// A retried append whose edits another NameNode committed (HA): the answer as that
    /// append gave it, read from the namespace; None when the file is not open by
    /// `client_name` (the call did not complete).
    pub fn appended(
        &self,
        caller: &Caller,
        src: &str,
        client_name: &str,
        flag: u32,
    ) -> FsResult<Option<LocatedAppend>> {
        self.with_ns_op("append", |ns| {
            Ok(ns
                .appended(caller, src, client_name, flag)?
                .map(|r| self.locate_append(r)))
        })
    }

    /// A retried create whose edits another NameNode committed (HA): the created file's
    /// status; None when it is not open by `client_name`.
    pub fn created_status(
        &self,
        caller: &Caller,
        src: &str,
        client_name: &str,
    ) -> FsResult<Option<FileStatus>> {
        self.with_ns(|ns| ns.created_status(caller, src, client_name))
    }

    /// addBlock: commits `previous`, waits briefly for it to be minimally replicated,
    /// chooses targets (no namespace lock held) and allocates the block.
    pub async fn add_block(&self, caller: &Caller, a: &AddBlockArgs) -> FsResult<LocatedBlock> {
        let now = self.now();
        let plan = self.with_ns_op("add_block", |ns| {
            let plan = ns.add_block_prepare(&a.src, a.file_id, &a.client_name, a.previous, now)?;
            if let AddBlockPlan::New {
                previous: Some(p), ..
            } = &plan
            {
                self.bm.commit_block(to_block(p))?;
            }
            Ok::<_, FsError>(plan)
        })?;
        let (file, previous, last_id) = match plan {
            AddBlockPlan::Existing { block, offset, .. } => {
                return Ok(LocatedBlock {
                    block,
                    offset,
                    locations: self.locations(block.id),
                    corrupt: false,
                });
            }
            AddBlockPlan::New {
                file,
                previous,
                last_id,
                ..
            } => (file, previous, last_id),
        };
        if let Some(p) = previous
            && !self.bm.try_complete_block(p.id)
        {
            let ok = self
                .bm
                .wait_for_min_replication(p.id, self.settings.replication_wait)
                .await;
            if !ok || !self.bm.try_complete_block(p.id) {
                return Err(FsError::NotReplicatedYet(file.path));
            }
        }
        let machine = if file.client_machine.is_empty() {
            caller.machine.clone()
        } else {
            file.client_machine.clone()
        };
        let targets = self.bm.choose_targets(
            &file.path,
            usize::from(file.replication),
            Some(machine.as_str()).filter(|m| !m.is_empty()),
            &a.excluded,
            &a.favored,
            file.block_size,
        )?;
        let now = self.now();
        let (file, block, offset) = self.with_ns_op("add_block", |ns| {
            let r = ns.add_block_allocate(&a.src, a.file_id, &a.client_name, last_id, now)?;
            self.bm
                .add_block_under_construction(to_block(&r.1), r.0.replication, &targets);
            Ok::<_, FsError>(r)
        })?;
        tracing::debug!(src = %file.path, block = block.id, "allocated block");
        Ok(LocatedBlock {
            block,
            offset,
            locations: targets,
            corrupt: false,
        })
    }

    /// complete: commits `last`; true once every block has min replication (after a
    /// brief wait with no lock held), false otherwise (the client retries).
    pub async fn complete(
        &self,
        src: &str,
        client_name: &str,
        last: Option<FileBlock>,
        file_id: u64,
    ) -> FsResult<bool> {
        let now = self.now();
        let plan = self.with_ns_op("complete", |ns| {
            let plan = ns.complete_prepare(src, file_id, client_name, last, now)?;
            if let (CompletePlan::Check { .. }, Some(l)) = (&plan, last) {
                self.bm.commit_block(to_block(&l))?;
            }
            Ok::<_, FsError>(plan)
        })?;
        let blocks = match plan {
            CompletePlan::AlreadyClosed => return Ok(true),
            CompletePlan::Check { blocks, .. } => blocks,
        };
        let deadline = tokio::time::Instant::now() + self.settings.replication_wait;
        for id in blocks {
            if self.bm.try_complete_block(id) {
                continue;
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if !self.bm.wait_for_min_replication(id, left).await || !self.bm.try_complete_block(id)
            {
                tracing::info!(
                    src,
                    block = id,
                    "complete: block not yet minimally replicated"
                );
                return Ok(false);
            }
        }
        let now = self.now();
        self.with_ns_op("complete", |ns| {
            ns.complete_finish(src, file_id, client_name, now)
        })?;
        Ok(true)
    }

    /// abandonBlock: the block leaves the blocks map once the edit is durable.
    pub fn abandon_block(
        &self,
        block: &FileBlock,
        src: &str,
        holder: &str,
        file_id: u64,
    ) -> FsResult<Applied<()>> {
        let now = self.now();
        let abandoned = self.with_ns_op("abandon_block", |ns| {
            ns.abandon_block(src, file_id, holder, block.id, now)
        })?;
        let effects = if abandoned {
            Effects::Abandon(block.id)
        } else {
            Effects::None
        };
        Ok(Applied::new("abandon_block", (), effects))
    }

    /// fsync.
    pub fn fsync(
        &self,
        src: &str,
        client: &str,
        last_block_length: i64,
        file_id: u64,
    ) -> FsResult<()> {
        let now = self.now();
        self.with_ns_op("fsync", |ns| {
            ns.fsync(src, file_id, client, last_block_length, now)
        })
    }

    /// updateBlockForPipeline: the block with a new generation stamp.
    pub fn update_block_for_pipeline(
        &self,
        block: &FileBlock,
        client: &str,
    ) -> FsResult<LocatedBlock> {
        let now = self.now();
        let gs = self.with_ns_op("update_block_for_pipeline", |ns| {
            ns.update_block_for_pipeline(block, client, now)
        })?;
        Ok(LocatedBlock {
            block: FileBlock { gs, ..*block },
            offset: 0,
            locations: self.locations(block.id),
            corrupt: false,
        })
    }

    /// updatePipeline.
    pub fn update_pipeline(
        &self,
        client: &str,
        old: &FileBlock,
        new: &FileBlock,
        new_nodes: &[String],
        storage_ids: &[String],
    ) -> FsResult<()> {
        let now = self.now();
        self.with_ns_op("update_pipeline", |ns| {
            ns.update_pipeline(client, old, new, now)?;
            self.bm
                .update_pipeline(to_block(old), to_block(new), new_nodes, storage_ids);
            Ok(())
        })
    }

    /// getAdditionalDatanode: the existing pipeline plus `n` new nodes.
    #[allow(clippy::too_many_arguments)]
    pub fn get_additional_datanode(
        &self,
        src: &str,
        file_id: u64,
        block: &FileBlock,
        existing: &[DatanodeInfo],
        existing_storages: &[String],
        excludes: &[DatanodeId],
        n: usize,
        client: &str,
    ) -> FsResult<LocatedBlock> {
        let file = self.with_ns_op("get_additional_datanode", |ns| {
            ns.check_lease(src, file_id, client)
        })?;
        let existing_uuids: Vec<String> = existing.iter().map(|d| d.id.uuid.clone()).collect();
        let added = self.bm.additional_datanodes(
            &file.path,
            &existing_uuids,
            excludes,
            n,
            file.block_size,
        )?;
        let mut locations: Vec<Location> = existing
            .iter()
            .enumerate()
            .map(|(i, d)| Location {
                info: d.clone(),
                storage_id: existing_storages.get(i).cloned().unwrap_or_default(),
                storage_type: 1,
            })
            .collect();
        locations.extend(added);
        Ok(LocatedBlock {
            block: *block,
            offset: 0,
            locations,
            corrupt: false,
        })
    }

    /// delete: the removed subtree's blocks go to the block manager once the delete is
    /// durable (Hadoop: logSync, then removeBlocks).
    pub fn delete(&self, caller: &Caller, src: &str, recursive: bool) -> FsResult<Applied<bool>> {
        let now = self.now();
        let removed = self.with_ns_op("delete", |ns| ns.delete(caller, src, recursive, now))?;
        Ok(match removed {
            Some(r) => Applied::new("delete", true, Effects::RemoveBlocks(r.blocks)),
            None => Applied::plain("delete", false),
        })
    }

    pub fn rename(&self, caller: &Caller, src: &str, dst: &str) -> FsResult<bool> {
        let now = self.now();
        self.with_ns_op("rename", |ns| ns.rename(caller, src, dst, now))
    }

    /// rename2: a file replaced by OVERWRITE loses its blocks once the rename is durable.
    pub fn rename2(
        &self,
        caller: &Caller,
        src: &str,
        dst: &str,
        overwrite: bool,
    ) -> FsResult<Applied<()>> {
        let now = self.now();
        let removed =
            self.with_ns_op("rename2", |ns| ns.rename2(caller, src, dst, overwrite, now))?;
        Ok(Applied::new(
            "rename2",
            (),
            Effects::RemoveBlocks(removed.blocks),
        ))
    }

    pub fn mkdirs(
        &self,
        caller: &Caller,
        src: &str,
        masked: u16,
        unmasked: Option<u16>,
        create_parent: bool,
    ) -> FsResult<bool> {
        let now = self.now();
        self.with_ns_op("mkdirs", |ns| {
            ns.mkdirs_with_modes(caller, src, masked, unmasked, create_parent, now)
        })
    }

    /// setReplication: the block manager learns the new factor (and deletes surplus
    /// replicas) once the change is durable.
    pub fn set_replication(
        &self,
        caller: &Caller,
        src: &str,
        replication: u16,
    ) -> FsResult<Applied<bool>> {
        let now = self.now();
        let blocks = self.with_ns_op("set_replication", |ns| {
            ns.set_replication(caller, src, replication, now)
        })?;
        Ok(match blocks {
            Some(ids) => Applied::new(
                "set_replication",
                true,
                Effects::SetReplication(ids, replication),
            ),
            None => Applied::plain("set_replication", false),
        })
    }

    pub fn set_permission(&self, caller: &Caller, src: &str, mode: u16) -> FsResult<()> {
        let now = self.now();
        self.with_ns_op("set_permission", |ns| {
            ns.set_permission(caller, src, mode, now)
        })
    }

    pub fn set_owner(
        &self,
        caller: &Caller,
        src: &str,
        owner: Option<&str>,
        group: Option<&str>,
    ) -> FsResult<()> {
        let now = self.now();
        self.with_ns_op("set_owner", |ns| {
            ns.set_owner(caller, src, owner, group, now)
        })
    }

    pub fn set_times(
        &self,
        caller: &Caller,
        src: &str,
        mtime: Option<u64>,
        atime: Option<u64>,
    ) -> FsResult<()> {
        let now = self.now();
        self.with_ns_op("set_times", |ns| {
            ns.set_times(caller, src, mtime, atime, now)
        })
    }

    pub fn renew_lease(&self, client: &str) -> FsResult<()> {
        let now = self.now();
        self.with_ns_op("renew_lease", |ns| ns.renew_lease(client, now.mono))
    }
}
