//! getContentSummary / getQuotaUsage over a subtree of any size: counted in steps of
//! `dfs.content-summary.limit` inodes, the namespace lock given up between steps, as Hadoop's
//! ContentSummaryComputationContext yields it. In one hold, a summary of `/` with tens of
//! millions of inodes would stop every other call for as long as the walk takes.

use super::Namesystem;
use crate::error::FsResult;
use crate::fsdir::permission::Caller;
use crate::fsdir::summary::ContentSummary;

impl Namesystem {
    /// The content summary of `src`: the path's checks in one hold, then a hold per step
    /// (counting, and checking the subtree's directories), other tasks let run between them.
    pub async fn content_summary(&self, caller: &Caller, src: &str) -> FsResult<ContentSummary> {
        let mut walk = self.with_ns_op("content_summary", |ns| ns.summary_walk(caller, src))?;
        while !self.with_ns_op("content_summary", |ns| ns.summary_step(caller, &mut walk))? {
            tokio::task::yield_now().await;
        }
        Ok(walk.summary())
    }
}
