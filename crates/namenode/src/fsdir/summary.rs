//! Content summaries and quota usage of a subtree.

use std::convert::Infallible;

use super::{FsDirectory, Inode, InodeKind, QUOTA_UNSET, TypeQuotas};

/// What getContentSummary / getQuotaUsage report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentSummary {
    pub length: u64,
    pub file_count: u64,
    /// Includes the directory itself.
    pub directory_count: u64,
    pub quota: i64,
    /// Σ length × replication (an open file's last block at its preferred size).
    pub space_consumed: u64,
    pub space_quota: i64,
    /// The directory's quotas by storage type, if any is set.
    pub type_quotas: Option<TypeQuotas>,
}

/// A content summary counted in steps: a walk of a large subtree gives the namespace lock up
/// between steps (Hadoop's `dfs.content-summary.limit`), so it never holds it for the whole
/// subtree. Inodes removed between steps are skipped and ids are never reused, so a walk
/// over a changing subtree counts what it finds, as Hadoop's does.
#[derive(Debug)]
pub struct SummaryWalk {
    summary: ContentSummary,
    /// Inodes still to visit.
    stack: Vec<u64>,
}

impl SummaryWalk {
    /// The counts so far (all of them once [`FsDirectory::summary_step`] said done).
    pub fn summary(&self) -> ContentSummary {
        self.summary
    }

    /// Sets the namespace quota reported (see `Namespace::reported_ns_quota`).
    pub fn set_quota(&mut self, quota: i64) {
        self.summary.quota = quota;
    }
}

impl FsDirectory {
    /// The whole subtree of `id` counted at once. For a file, counts just the file.
    pub fn content_summary(&self, id: u64) -> ContentSummary {
        let mut walk = self.summary_walk(id);
        self.summary_step(&mut walk, 0);
        walk.summary()
    }

    /// Starts a walk of the subtree of `id` (its quotas read now).
    pub fn summary_walk(&self, id: u64) -> SummaryWalk {
        let (quota, space_quota, type_quotas) = match self.get(id).and_then(|i| i.as_dir()) {
            Some(d) => (d.ns_quota(), d.ds_quota(), d.type_quotas().copied()),
            None => (QUOTA_UNSET, QUOTA_UNSET, None),
        };
        SummaryWalk {
            summary: ContentSummary {
                length: 0,
                file_count: 0,
                directory_count: 0,
                quota,
                space_consumed: 0,
                space_quota,
                type_quotas,
            },
            stack: vec![id],
        }
    }

    /// Counts up to `limit` more inodes of `walk` (every one left when `limit` is 0); true
    /// once the subtree is done.
    pub fn summary_step(&self, walk: &mut SummaryWalk, limit: usize) -> bool {
        match self.summary_step_checked(walk, limit, |_, _| Ok::<(), Infallible>(())) {
            Ok(done) => done,
            Err(never) => match never {},
        }
    }

    /// [`FsDirectory::summary_step`] with every inode reached passed to `check` before it is
    /// counted; the walk stops at the first error.
    pub fn summary_step_checked<E>(
        &self,
        walk: &mut SummaryWalk,
        limit: usize,
        mut check: impl FnMut(u64, &Inode) -> Result<(), E>,
    ) -> Result<bool, E> {
        let s = &mut walk.summary;
        let mut visited = 0;
        while limit == 0 || visited < limit {
            let Some(cur) = walk.stack.pop() else {
                return Ok(true);
            };
            visited += 1;
            let Some(inode) = self.get(cur) else { continue };
            check(cur, inode)?;
            match &inode.kind {
                InodeKind::Dir(d) => {
                    s.directory_count += 1;
                    walk.stack.extend(d.children.values());
                }
                InodeKind::File(f) => {
                    let len = f.length();
                    s.file_count += 1;
                    s.length += len;
                    s.space_consumed += crate::namespace::file_space(f);
                }
            }
        }
        Ok(walk.stack.is_empty())
    }
}
