//! Glob expansion against the namespace (`FileSystem::glob_status`), like Hadoop's Globber:
//! braces expanded first, then each component matched against directory listings.

use crate::error::Result;
use crate::filesystem::FileSystem;
use crate::glob;
use crate::path;
use crate::types::FileStatus;

impl FileSystem {
    /// The statuses matching `pattern`, sorted by path. A pattern without glob characters
    /// gives its own status, or nothing if it does not exist.
    pub async fn glob_status(&self, pattern: &str) -> Result<Vec<FileStatus>> {
        let parts = path::split_uri(pattern);
        let mut out = Vec::new();
        for alt in glob::expand_braces(&parts.path) {
            let abs = if alt.starts_with('/') {
                alt.clone()
            } else if alt.is_empty() {
                self.working_dir().to_string()
            } else {
                format!("{}/{}", self.working_dir(), alt)
            };
            if !glob::has_glob(&abs) {
                let literal = glob::unescape(&abs);
                if let Some(st) = self.get_file_info(&literal).await? {
                    out.push(st);
                }
                continue;
            }
            self.glob_one(&abs, &mut out).await?;
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out.dedup_by(|a, b| a.path == b.path);
        Ok(out)
    }

    async fn glob_one(&self, abs: &str, out: &mut Vec<FileStatus>) -> Result<()> {
        let comps: Vec<&str> = abs
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        // Candidates: (path, status if known).
        let mut cands: Vec<(String, Option<FileStatus>)> = vec![("/".to_string(), None)];
        for (i, comp) in comps.iter().enumerate() {
            let last = i + 1 == comps.len();
            let mut next = Vec::new();
            for (dir, _) in &cands {
                if glob::has_glob(comp) {
                    let entries = match self.list_status(dir).await {
                        Ok(e) => e,
                        Err(e) if e.is_file_not_found() => continue,
                        Err(e) => return Err(e),
                    };
                    let dir_st = self.get_file_info(dir).await?;
                    if !dir_st.is_some_and(|s| s.is_dir) {
                        continue;
                    }
                    for e in entries {
                        if glob::matches(comp, e.name()) && (last || e.is_dir) {
                            next.push((e.path.clone(), Some(e)));
                        }
                    }
                } else if *comp == ".." {
                    let p = path::parent(dir).unwrap_or("/").to_string();
                    next.push((p, None));
                } else {
                    next.push((path::join(dir, &glob::unescape(comp)), None));
                }
            }
            cands = next;
            if cands.is_empty() {
                return Ok(());
            }
        }
        for (p, st) in cands {
            match st {
                Some(s) => out.push(s),
                None => {
                    if let Some(s) = self.get_file_info(&p).await? {
                        out.push(s);
                    }
                }
            }
        }
        Ok(())
    }
}
