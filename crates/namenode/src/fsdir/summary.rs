//! Content summaries and quota usage of a subtree.

use super::{FsDirectory, InodeKind, QUOTA_UNSET, TypeQuotas};

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

impl FsDirectory {
    /// Walks the subtree of `id`. For a file, counts just the file.
    pub fn content_summary(&self, id: u64) -> ContentSummary {
        let (quota, space_quota, type_quotas) = match self.get(id).and_then(|i| i.as_dir()) {
            Some(d) => (d.ns_quota(), d.ds_quota(), d.type_quotas().copied()),
            None => (QUOTA_UNSET, QUOTA_UNSET, None),
        };
        let mut s = ContentSummary {
            length: 0,
            file_count: 0,
            directory_count: 0,
            quota,
            space_consumed: 0,
            space_quota,
            type_quotas,
        };
        let mut stack = vec![id];
        while let Some(cur) = stack.pop() {
            let Some(inode) = self.get(cur) else { continue };
            match &inode.kind {
                InodeKind::Dir(d) => {
                    s.directory_count += 1;
                    stack.extend(d.children.values());
                }
                InodeKind::File(f) => {
                    let len = f.length();
                    s.file_count += 1;
                    s.length += len;
                    s.space_consumed += crate::namespace::file_space(f);
                }
            }
        }
        s
    }
}
