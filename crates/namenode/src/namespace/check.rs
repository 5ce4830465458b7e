//! A consistency check of the namespace: tree links, block ownership and leases agree.

use super::Namespace;
use crate::fsdir::ROOT_INODE_ID;

impl Namespace {
    /// Everything inconsistent in the namespace, one line each (empty when sound).
    pub fn check_consistency(&self) -> Vec<String> {
        let mut bad = Vec::new();
        let dir = &self.dir;
        let mut blocks_seen = 0usize;
        for id in dir.ids() {
            let Some(inode) = dir.get(id) else { continue };
            if id != ROOT_INODE_ID {
                match dir.child(inode.parent(), &inode.name) {
                    Some(c) if c == id => {}
                    _ => bad.push(format!(
                        "inode {id} is not linked from its parent {}",
                        inode.parent()
                    )),
                }
            }
            if let Some(d) = inode.as_dir() {
                let mut prev: Option<&[u8]> = None;
                for (name, child) in dir.children_after(d, None) {
                    match dir.get(child) {
                        Some(c) if c.parent() == id => {}
                        _ => bad.push(format!(
                            "directory {id} links a missing or foreign child {child}"
                        )),
                    }
                    if prev.is_some_and(|p| p >= name) {
                        bad.push(format!(
                            "directory {id}'s children are not in name order at {child}"
                        ));
                    }
                    prev = Some(name);
                }
            }
            if let Some(f) = inode.as_file() {
                for b in &f.blocks {
                    blocks_seen += 1;
                    if self.block_owner.get(b.id) != Some(id) {
                        bad.push(format!("block {} of file {id} is not owned by it", b.id));
                    }
                    if b.id > self.last_block_id || b.gs > self.last_gs {
                        bad.push(format!(
                            "block {} of file {id} is beyond the allocated ids",
                            b.id
                        ));
                    }
                }
                if let Some(uc) = f.uc()
                    && !self.leases.files_of(&uc.client_name).contains(&id)
                {
                    bad.push(format!(
                        "open file {id} is missing from {}'s lease",
                        uc.client_name
                    ));
                }
            }
        }
        if blocks_seen != self.block_owner.len() {
            bad.push(format!(
                "{} blocks are owned but files hold {blocks_seen}",
                self.block_owner.len()
            ));
        }
        for (holder, files) in self.leases.iter() {
            for f in files {
                let open_by = dir
                    .get(f)
                    .and_then(|i| i.as_file())
                    .and_then(|x| x.uc())
                    .map(|u| u.client_name.as_str());
                if open_by != Some(holder) {
                    bad.push(format!(
                        "lease of {holder} names file {f}, which it does not hold open"
                    ));
                }
            }
        }
        bad
    }
}
