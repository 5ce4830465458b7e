//! truncate and concat joined to the block manager: blocks past a truncate's new length
//! are removed and a truncate inside a block starts the recovery that cuts its replicas,
//! both once the truncate is durable; concat hands the moved blocks to the target.

use rhdfs_blockmanager::BlockUcState;

use super::{Applied, Effects, Namesystem, to_block};
use crate::error::{FsError, FsResult};
use crate::fsdir::permission::Caller;
use crate::namespace::OpenFile;

impl Namesystem {
    /// truncate: true when the file has its new length at once, false when the client
    /// waits for the block recovery to close it.
    pub async fn truncate(
        &self,
        caller: &Caller,
        src: &str,
        new_length: i64,
        client_name: &str,
    ) -> FsResult<bool> {
        let now = self.now();
        let machine = caller.machine.clone();
        let run = || {
            self.with_ns_op("truncate", |ns| {
                ns.truncate(caller, src, new_length, client_name, &machine, now)
            })
        };
        let t = match run() {
            Err(FsError::RecoveryInProgress(_)) if self.release_path(src).await? => run()?,
            other => other?,
        };
        // The cut blocks go, and the replicas are cut, only once the truncate is durable.
        self.commit(Applied::new(
            "truncate",
            (),
            Effects::RemoveBlocks(t.removed),
        ))
        .await?;
        if let Some(of) = &t.recover {
            self.start_truncate_recovery(of)?;
            self.sync_edits().await?;
        }
        Ok(t.done)
    }

    /// The last block of a file being truncated goes back under construction at its
    /// current replicas (Hadoop's convertLastBlockToUnderConstruction) and its recovery
    /// starts. Returns true when a command was queued for a primary DataNode.
    pub(crate) fn start_truncate_recovery(&self, of: &OpenFile) -> FsResult<bool> {
        let Some(last) = of.blocks.last() else {
            return Ok(false);
        };
        if matches!(
            self.bm.get_block(last.id),
            Some((_, BlockUcState::Complete | BlockUcState::Committed))
        ) {
            let replication = self.with_ns(|ns| {
                ns.dir()
                    .get(of.file)
                    .and_then(|i| i.as_file())
                    .map_or(1, |f| f.replication())
            });
            let locations = self.locations(last.id);
            self.bm
                .add_block_under_construction(to_block(last), replication, &locations);
        }
        self.start_block_recovery(of, last)
    }

    /// concat: the sources' blocks join the target (at its replication) once durable.
    pub fn concat(&self, caller: &Caller, target: &str, srcs: &[String]) -> FsResult<Applied<()>> {
        let now = self.now();
        let c = self.with_ns_op("concat", |ns| ns.concat(caller, target, srcs, now))?;
        Ok(Applied::new(
            "concat",
            (),
            Effects::SetReplication(c.moved, c.replication),
        ))
    }
}
