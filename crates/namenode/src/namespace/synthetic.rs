//! A synthetic namespace for benchmarks: `files` closed files of one block each, under
//! `/nnload/d<dir>/f<file>`, written straight into the image encoding without building
//! a namespace first, so a NameNode can be started on millions of files within seconds
//! of asking (`rhdfs bench nn-memory`).
//!
//! File `k` (0-based) lives in directory `k / files_per_dir`, owns block
//! `FIRST_BLOCK_ID + k` with generation stamp `FIRST_GENERATION_STAMP`, and the
//! DataNodes that should hold it are the caller's business ([`SyntheticSpec::block`]
//! gives the block). Names are zero-padded to one width so that the image's order (each
//! directory's children by name) is the order they are generated in: the payload equals
//! what [`Namespace::encode_image`] writes after loading it.

use super::image::encode_inode;
use super::{FIRST_BLOCK_ID, FIRST_GENERATION_STAMP, Namespace, NamespaceConfig, Now};
use crate::codec::W;
use crate::fsdir::{
    DirInode, FileBlock, FileBlocks, FileInode, Inode, InodeKind, Perm, PermissionStatus,
    ROOT_INODE_ID,
};

/// The directory every synthetic file is under.
pub const SYNTHETIC_ROOT: &str = "/nnload";

/// What to generate.
#[derive(Debug, Clone)]
pub struct SyntheticSpec {
    pub files: u64,
    /// At least 1.
    pub files_per_dir: u64,
    pub replication: u16,
    /// Length of every file's one block.
    pub block_len: u64,
    /// The files' preferred block size.
    pub block_size: u64,
    pub owner: String,
    pub group: String,
    /// Modification and access time of every inode, ms since the epoch.
    pub time_ms: u64,
}

impl SyntheticSpec {
    fn per_dir(&self) -> u64 {
        self.files_per_dir.max(1)
    }

    /// Number of directories under [`SYNTHETIC_ROOT`].
    pub fn dirs(&self) -> u64 {
        self.files.div_ceil(self.per_dir())
    }

    /// The block of file `k`.
    pub fn block(&self, k: u64) -> FileBlock {
        FileBlock {
            id: FIRST_BLOCK_ID + k,
            gs: FIRST_GENERATION_STAMP,
            num_bytes: self.block_len,
        }
    }

    fn dir_name(&self, d: u64) -> String {
        format!("d{d:0w$}", w = digits(self.dirs().saturating_sub(1)))
    }

    fn file_name(&self, k: u64) -> String {
        format!("f{k:0w$}", w = digits(self.files.saturating_sub(1)))
    }

    /// The path of file `k`.
    pub fn path(&self, k: u64) -> String {
        format!(
            "{SYNTHETIC_ROOT}/{}/{}",
            self.dir_name(k / self.per_dir()),
            self.file_name(k)
        )
    }

    fn inode(&self, parent: u64, name: String, kind: InodeKind, mode: u16) -> Inode {
        Inode::new(
            parent,
            name.into_bytes().into(),
            Perm::intern(PermissionStatus {
                owner: self.owner.as_str().into(),
                group: self.group.as_str().into(),
                mode,
            }),
            self.time_ms,
            self.time_ms,
            kind,
        )
    }

    fn dir_kind() -> InodeKind {
        InodeKind::Dir(DirInode::default())
    }

    /// The image payload (txid 0) of a freshly formatted namespace (`cfg`, `now`) holding
    /// these files. Memory: the payload only.
    pub fn image(&self, cfg: NamespaceConfig, now: Now) -> Vec<u8> {
        let fresh = Namespace::new(cfg, now);
        let dirs = self.dirs();
        let inodes = 2 + dirs + self.files;
        let last_inode_id = ROOT_INODE_ID + 1 + dirs + self.files;
        let last_block_id = if self.files == 0 {
            fresh.last_block_id
        } else {
            FIRST_BLOCK_ID + self.files - 1
        };
        let mut w = W(Vec::with_capacity(
            64 + (inodes as usize).saturating_mul(40),
        ));
        w.0.extend_from_slice(super::IMAGE_PAYLOAD_MAGIC);
        w.u(0);
        w.u(last_inode_id);
        w.u(last_block_id);
        w.u(FIRST_GENERATION_STAMP.max(fresh.last_gs));
        w.u(inodes);
        if let Some(root) = fresh.dir.get(ROOT_INODE_ID) {
            encode_inode(&mut w, ROOT_INODE_ID, root);
        }
        let top = ROOT_INODE_ID + 1;
        let name = SYNTHETIC_ROOT.trim_start_matches('/').to_string();
        encode_inode(
            &mut w,
            top,
            &self.inode(ROOT_INODE_ID, name, Self::dir_kind(), 0o755),
        );
        let mut next_id = top + 1;
        for d in 0..dirs {
            let dir_id = next_id;
            next_id += 1;
            let dir = self.inode(top, self.dir_name(d), Self::dir_kind(), 0o755);
            encode_inode(&mut w, dir_id, &dir);
            let first = d * self.per_dir();
            for k in first..self.files.min(first + self.per_dir()) {
                let file = InodeKind::File(FileInode {
                    blocks: FileBlocks::one(self.replication, self.block_size, self.block(k)),
                });
                encode_inode(
                    &mut w,
                    next_id,
                    &self.inode(dir_id, self.file_name(k), file, 0o644),
                );
                next_id += 1;
            }
        }
        w.0
    }
}

/// Decimal digits of `n` (1 for 0).
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn test_config() -> NamespaceConfig {
        NamespaceConfig {
            superuser: "root".into(),
            ..NamespaceConfig::default()
        }
    }

    fn spec(files: u64, per_dir: u64) -> SyntheticSpec {
        SyntheticSpec {
            files,
            files_per_dir: per_dir,
            replication: 3,
            block_len: 1024,
            block_size: 128 << 20,
            owner: "bench".into(),
            group: "supergroup".into(),
            time_ms: 1_700_000_000_000,
        }
    }

    fn now() -> Now {
        Now {
            wall_ms: 1_700_000_000_000,
            mono: Duration::ZERO,
        }
    }

    #[test]
    fn loads_and_encodes_back_to_the_same_bytes() {
        for (files, per_dir) in [(0, 10), (1, 1), (25, 10), (1000, 7), (1001, 1000)] {
            let s = spec(files, per_dir);
            let payload = s.image(test_config(), now());
            let mut ns = Namespace::new(test_config(), now());
            ns.load_image(&payload, Duration::ZERO).unwrap();
            assert_eq!(ns.total_blocks() as u64, files, "{files}/{per_dir}");
            assert_eq!(ns.total_files_and_dirs() as u64, 2 + s.dirs() + files);
            let (txid, again) = ns.encode_image();
            assert_eq!(txid, 0);
            assert!(
                again == payload,
                "{files}/{per_dir}: re-encoded image differs"
            );
            let blocks = ns.loaded_blocks();
            assert_eq!(blocks.len() as u64, files);
            if files > 0 {
                let last = files - 1;
                let root = ns.caller("root", vec![]);
                let st = ns.file_info(&root, &s.path(last)).unwrap().unwrap();
                assert_eq!((st.length, st.replication), (1024, 3));
                assert_eq!(blocks.last().map(|b| b.block), Some(s.block(last)));
            }
        }
    }

    #[test]
    fn digits_are_decimal_widths() {
        assert_eq!(digits(0), 1);
        assert_eq!(digits(9), 1);
        assert_eq!(digits(10), 2);
        assert_eq!(digits(999_999), 6);
        assert_eq!(digits(1_000_000), 7);
    }
}
