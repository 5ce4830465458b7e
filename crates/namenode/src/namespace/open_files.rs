//! listOpenFiles: the files open for write, in inode id order, one bounded page at a time
//! (`dfsadmin -listOpenFiles`).

use super::Namespace;

/// One file open for write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenFileEntry {
    pub id: u64,
    pub path: String,
    pub client_name: String,
    pub client_machine: String,
    /// The file's block ids (to tell which ones hold up a decommission).
    pub blocks: Vec<u64>,
}

/// Hadoop's DFSUtil.isParentEntry: `path` is `parent` or below it. A trailing `/` on
/// `parent` is ignored here (Hadoop's check would match nothing below such a parent).
pub fn is_parent_entry(path: &str, parent: &str) -> bool {
    let parent = match parent.trim_end_matches('/') {
        "" => return true,
        p => p,
    };
    path == parent
        || path
            .strip_prefix(parent)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl Namespace {
    /// Up to `limit` open files with an inode id above `after`, in id order, whose path is
    /// `under` or below it (empty: anywhere); true when open files beyond the last one
    /// examined remain.
    pub fn open_files_after(
        &self,
        after: u64,
        under: &str,
        limit: usize,
    ) -> (Vec<OpenFileEntry>, bool) {
        let mut ids: Vec<u64> = self
            .leases
            .iter()
            .flat_map(|(_, files)| files)
            .filter(|id| *id > after)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let mut out = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            if out.len() >= limit {
                return (out, i < ids.len());
            }
            let Some(f) = self.dir.get(*id).and_then(|i| i.as_file()) else {
                continue;
            };
            let Some(uc) = f.uc() else { continue };
            let path = self.dir.path_of(*id);
            if !is_parent_entry(&path, under) {
                continue;
            }
            out.push(OpenFileEntry {
                id: *id,
                path,
                client_name: uc.client_name.clone(),
                client_machine: uc.client_machine.clone(),
                blocks: f.blocks.iter().map(|b| b.id).collect(),
            });
        }
        (out, false)
    }
}

#[cfg(test)]
mod tests {
    use super::is_parent_entry;

    #[test]
    fn parent_entries() {
        assert!(is_parent_entry("/a/b", "/"));
        assert!(is_parent_entry("/a/b", ""));
        assert!(is_parent_entry("/a/b", "/a"));
        assert!(is_parent_entry("/a/b", "/a/"));
        assert!(is_parent_entry("/a/b", "/a/b"));
        assert!(!is_parent_entry("/a/bc", "/a/b"));
        assert!(!is_parent_entry("/a", "/a/b"));
    }
}
