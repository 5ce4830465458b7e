//! fsck: walks a subtree and reports in Hadoop's NamenodeFsck text format, as the
//! NameNode's `/fsck` HTTP endpoint serves it.
//!
//! The namespace lock is taken for one batch of directory entries at a time
//! (`LIST_BATCH`), and the block manager's for one chunk of blocks at a time (through
//! `BlockManager::block_views`), so a walk of a large namespace never holds either lock
//! for long.
//!
//! [`dfsadmin`] holds the client side of `dfsadmin -report` (the report text from
//! ClientProtocol answers).

pub mod dfsadmin;
pub mod format;

use std::fmt::Write as _;
use std::ops::Bound;
use std::time::Instant;

use rhdfs_blockmanager::views::{BlockView, ReplicaView};
use rhdfs_blockmanager::{BlockUcState, views::VIEW_CHUNK};

use crate::fsdir::{FsPath, InodeKind};
use crate::namesystem::Namesystem;
use format::{FsckResult, java_date};

/// Directory entries read per namespace lock hold.
pub const LIST_BATCH: usize = 1_000;

/// Hadoop's status strings (the fsck client scans the last line for them).
pub const HEALTHY_STATUS: &str = "is HEALTHY";
pub const CORRUPT_STATUS: &str = "is CORRUPT";
pub const NONEXISTENT_STATUS: &str = "does not exist";
pub const FAILURE_STATUS: &str = "FAILED";

/// The `/fsck` query parameters (NamenodeFsck's names).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsckOptions {
    pub path: String,
    pub files: bool,
    pub blocks: bool,
    pub locations: bool,
    pub racks: bool,
    pub replica_details: bool,
    pub open_for_write: bool,
    pub list_corrupt_file_blocks: bool,
    pub start_block_after: Option<String>,
    pub delete: bool,
    pub move_: bool,
    /// `ugi`: the user the client runs as.
    pub user: Option<String>,
}

impl FsckOptions {
    /// From decoded query parameters; unknown ones are ignored, as in Hadoop.
    pub fn from_params<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut o = FsckOptions {
            path: "/".into(),
            ..FsckOptions::default()
        };
        for (k, v) in params {
            match k {
                "path" => o.path = v.to_string(),
                "move" => o.move_ = true,
                "delete" => o.delete = true,
                "files" => o.files = true,
                "blocks" => o.blocks = true,
                "locations" => o.locations = true,
                "racks" => o.racks = true,
                "replicadetails" => o.replica_details = true,
                "openforwrite" => o.open_for_write = true,
                "listcorruptfileblocks" => o.list_corrupt_file_blocks = true,
                "startblockafter" => o.start_block_after = Some(v.to_string()),
                "ugi" => o.user = Some(v.to_string()),
                _ => {}
            }
        }
        o
    }
}

/// Settings fsck reads from the NameNode's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsckSettings {
    /// `dfs.replication`.
    pub default_replication: u16,
    /// `dfs.namenode.replication.min`.
    pub min_replication: u16,
}

/// Who asked: user (for "FSCK started by") and remote IP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsckRequester {
    pub user: String,
    pub remote_ip: String,
}

/// One directory entry read under the namespace lock.
enum Entry {
    Dir {
        name: Vec<u8>,
        id: u64,
    },
    File {
        name: Vec<u8>,
        length: u64,
        replication: u16,
        blocks: Vec<crate::fsdir::BlockInfo>,
        open: bool,
    },
}

struct Frame {
    path: String,
    id: u64,
    after: Option<Vec<u8>>,
}

fn storage_type_name(t: i32) -> &'static str {
    match t {
        2 => "SSD",
        3 => "ARCHIVE",
        4 => "RAM_DISK",
        5 => "PROVIDED",
        6 => "NVDIMM",
        _ => "DISK",
    }
}

fn child_path(parent: &str, name: &[u8]) -> String {
    let name = String::from_utf8_lossy(name);
    if parent.ends_with('/') {
        format!("{parent}{name}")
    } else {
        format!("{parent}/{name}")
    }
}

struct Walker<'a> {
    fs: &'a Namesystem,
    opts: &'a FsckOptions,
    settings: FsckSettings,
    pool: String,
    out: String,
    res: FsckResult,
    total_dirs: u64,
    to_delete: Vec<String>,
}

impl Walker<'_> {
    /// Reads up to LIST_BATCH entries of directory `id` after `after`.
    fn list(&self, id: u64, after: Option<&[u8]>) -> Vec<Entry> {
        self.fs.with_ns(|ns| {
            let dir = ns.dir();
            let Some(d) = dir.get(id).and_then(|i| i.as_dir()) else {
                return Vec::new();
            };
            let lower = match after {
                Some(a) => Bound::Excluded(a),
                None => Bound::Unbounded,
            };
            d.children
                .range::<[u8], _>((lower, Bound::Unbounded))
                .take(LIST_BATCH)
                .filter_map(|(name, cid)| {
                    let inode = dir.get(*cid)?;
                    Some(match &inode.kind {
                        InodeKind::Dir(_) => Entry::Dir {
                            name: name.clone(),
                            id: *cid,
                        },
                        InodeKind::File(f) => Entry::File {
                            name: name.clone(),
                            length: f.length(),
                            replication: f.replication,
                            blocks: f.blocks.clone(),
                            open: f.uc.is_some(),
                        },
                    })
                })
                .collect()
        })
    }

    fn enter_dir(&mut self, path: &str) {
        if self.opts.files {
            let _ = writeln!(self.out, "{path} <dir>");
        }
        self.total_dirs += 1;
    }

    /// Depth-first, in listing order, as Hadoop's recursive checkDir.
    fn walk_dir(&mut self, path: String, id: u64) {
        self.enter_dir(&path);
        let mut stack = vec![Frame {
            path,
            id,
            after: None,
        }];
        while let Some(top) = stack.last() {
            let entries = self.list(top.id, top.after.as_deref());
            if entries.is_empty() {
                stack.pop();
                continue;
            }
            let parent = top.path.clone();
            let mut descend = None;
            let mut last = None;
            for e in entries {
                match e {
                    Entry::Dir { name, id } => {
                        let p = child_path(&parent, &name);
                        last = Some(name);
                        descend = Some((p, id));
                        break;
                    }
                    Entry::File {
                        name,
                        length,
                        replication,
                        blocks,
                        open,
                    } => {
                        let p = child_path(&parent, &name);
                        self.check_file(&p, length, replication, &blocks, open);
                        last = Some(name);
                    }
                }
            }
            if let Some(top) = stack.last_mut() {
                top.after = last;
            }
            if let Some((p, id)) = descend {
                self.enter_dir(&p);
                stack.push(Frame {
                    path: p,
                    id,
                    after: None,
                });
            }
        }
    }

    fn views(&self, blocks: &[crate::fsdir::BlockInfo]) -> Vec<Option<BlockView>> {
        let ids: Vec<u64> = blocks.iter().map(|b| b.id).collect();
        let bm = self.fs.block_manager();
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(VIEW_CHUNK) {
            out.extend(bm.block_views(chunk));
        }
        out
    }

    fn replica_info(&self, reps: &[ReplicaView]) -> String {
        let o = self.opts;
        if !(o.locations || o.racks || o.replica_details) {
            return String::new();
        }
        let mut s = String::from(" [");
        for (i, r) in reps.iter().enumerate() {
            if o.racks {
                let _ = write!(s, "{}/{}", r.rack, r.xfer_addr);
            } else {
                let _ = write!(
                    s,
                    "DatanodeInfoWithStorage[{},{},{}]",
                    r.xfer_addr,
                    r.storage_id,
                    storage_type_name(r.storage_type)
                );
            }
            if o.replica_details {
                let _ = write!(s, "({})", r.status.label());
            }
            if i + 1 < reps.len() {
                s.push_str(", ");
            }
        }
        s.push(']');
        s
    }

    fn check_file(
        &mut self,
        path: &str,
        length: u64,
        replication: u16,
        blocks: &[crate::fsdir::BlockInfo],
        open: bool,
    ) {
        let nblocks = blocks.len() as u64;
        if open && !self.opts.open_for_write {
            self.res.total_open_files_size += length;
            self.res.total_open_files_blocks += nblocks;
            self.res.total_open_files += 1;
            return;
        }
        self.res.total_files += 1;
        self.res.total_size += length;
        self.res.total_blocks += nblocks;
        let policy = format!("replicated: replication={replication},");
        if self.opts.open_for_write && open {
            let _ = write!(
                self.out,
                "{path} {length} bytes, {policy} {nblocks} block(s), OPENFORWRITE: "
            );
        } else if self.opts.files {
            let _ = write!(
                self.out,
                "{path} {length} bytes, {policy} {nblocks} block(s): "
            );
        }
        let views = self.views(blocks);
        let last_incomplete = open
            && views
                .last()
                .is_some_and(|v| v.as_ref().is_none_or(|v| v.state != BlockUcState::Complete));
        let (mut missing, mut corrupt, mut missize, mut corrupt_size, mut under) =
            (0u64, 0u64, 0u64, 0u64, 0u64);
        let mut report = String::new();
        let min = u64::from(self.settings.min_replication);
        let target = u64::from(replication);
        let mut number = 0usize;
        let n = blocks.len();
        for (i, (b, v)) in blocks.iter().zip(&views).enumerate() {
            if last_incomplete && i + 1 == n {
                continue;
            }
            let (live, decommissioned, decommissioning, reps, is_corrupt, gs, len) = match v {
                Some(v) => (
                    v.live as u64,
                    v.decommissioned as u64,
                    v.decommissioning as u64,
                    v.replicas.as_slice(),
                    v.is_corrupt,
                    v.block.gs,
                    v.block.num_bytes,
                ),
                None => (0, 0, 0, &[][..], false, b.gs, b.num_bytes),
            };
            let ext = format!("{}:blk_{}_{}", self.pool, b.id, gs);
            self.res.decommissioned_replicas += decommissioned;
            self.res.decommissioning_replicas += decommissioning;
            let total = live + decommissioned + decommissioning;
            self.res.total_replicas += total;
            let is_missing = total == 0;
            self.res.num_expected_replicas += target;
            if total < min {
                self.res.num_under_min_replicated_blocks += 1;
            }
            if live > target {
                self.res.excessive_replicas += live - target;
                self.res.num_over_replicated_blocks += 1;
            }
            if is_corrupt {
                self.res.add_corrupt(len);
                corrupt += 1;
                corrupt_size += len;
                let _ = write!(
                    self.out,
                    "\n{path}: CORRUPT blockpool {} block blk_{}\n",
                    self.pool, b.id
                );
            }
            if total >= min {
                self.res.num_min_replicated_blocks += 1;
            }
            if total < target && !is_missing {
                self.res.missing_replicas += target - total;
                self.res.num_under_replicated_blocks += 1;
                under += 1;
                if !self.opts.files {
                    let _ = write!(self.out, "\n{path}: ");
                }
                let _ = writeln!(
                    self.out,
                    " Under replicated {ext}. Target Replicas is {target} but found {live} live replica(s), {decommissioned} decommissioned replica(s), {decommissioning} decommissioning replica(s)."
                );
            }
            let _ = write!(report, "{number}. {ext} len={len}");
            if is_missing && !is_corrupt {
                report.push_str(" MISSING!");
                self.res.add_missing(ext.clone(), len);
                missing += 1;
                missize += len;
            } else {
                let _ = write!(report, " Live_repl={live}");
                let info = self.replica_info(reps);
                if !info.is_empty() {
                    report.push(' ');
                    report.push_str(&info);
                }
            }
            report.push('\n');
            number += 1;
        }
        if last_incomplete && let (Some(b), Some(v)) = (blocks.last(), views.last()) {
            let (reps, gs, len) = match v {
                Some(v) => (v.replicas.as_slice(), v.block.gs, v.block.num_bytes),
                None => (&[][..], b.gs, b.num_bytes),
            };
            let _ = write!(
                report,
                "\nUnder Construction Block:\n{number}. {}:blk_{}_{} len={len} Expected_repl={}",
                self.pool,
                b.id,
                gs,
                reps.len()
            );
            let info = self.replica_info(reps);
            if !info.is_empty() {
                report.push(' ');
                report.push_str(&info);
            }
        }
        if missing > 0 || corrupt > 0 {
            if !self.opts.files {
                if missing > 0 {
                    let _ = write!(
                        self.out,
                        "\n{path}: MISSING {missing} blocks of total size {missize} B."
                    );
                }
                if corrupt > 0 {
                    let _ = write!(
                        self.out,
                        "\n{path}: CORRUPT {corrupt} blocks of total size {corrupt_size} B."
                    );
                }
            }
            self.res.corrupt_files += 1;
            if open {
                tracing::info!("Fsck: ignoring open file {path}");
            } else if self.opts.delete {
                self.to_delete.push(path.to_string());
            }
        }
        if self.opts.files {
            if missing > 0 || corrupt > 0 {
                if missing > 0 {
                    let _ = writeln!(
                        self.out,
                        " MISSING {missing} blocks of total size {missize} B"
                    );
                }
                if corrupt > 0 {
                    let _ = writeln!(
                        self.out,
                        " CORRUPT {corrupt} blocks of total size {corrupt_size} B"
                    );
                }
            } else if under == 0 {
                self.out.push_str(" OK\n");
            }
            if self.opts.blocks {
                let _ = writeln!(self.out, "{report}");
            }
        }
    }
}

/// What the path names.
enum Target {
    Dir(u64),
    File(Entry),
    Missing,
}

fn resolve(fs: &Namesystem, path: &str) -> Result<Target, String> {
    let p = FsPath::parse(path).map_err(|e| e.to_string())?;
    Ok(fs.with_ns(|ns| {
        let dir = ns.dir();
        let Some(id) = dir.resolve(&p).last() else {
            return Target::Missing;
        };
        match dir.get(id).map(|i| &i.kind) {
            Some(InodeKind::Dir(_)) => Target::Dir(id),
            Some(InodeKind::File(f)) => Target::File(Entry::File {
                name: Vec::new(),
                length: f.length(),
                replication: f.replication,
                blocks: f.blocks.clone(),
                open: f.uc.is_some(),
            }),
            None => Target::Missing,
        }
    }))
}

/// `-list-corruptfileblocks`: "Cookie:\t<n>", one "blk_<id>\t<path>" line per block with
/// no good replica under `path`, then the count line.
fn list_corrupt_file_blocks(fs: &Namesystem, opts: &FsckOptions, out: &mut String) {
    let skip: usize = opts
        .start_block_after
        .as_deref()
        .and_then(|c| c.trim().parse().ok())
        .unwrap_or(0);
    let blocks = fs.block_manager().corrupt_or_missing_blocks();
    let prefix = if opts.path.ends_with('/') {
        opts.path.clone()
    } else {
        format!("{}/", opts.path)
    };
    let mut lines = Vec::new();
    let mut cookie = 0usize;
    for chunk in blocks.chunks(LIST_BATCH) {
        let found: Vec<(u64, Option<String>)> = fs.with_ns(|ns| {
            chunk
                .iter()
                .map(|(b, inode)| {
                    let dir = ns.dir();
                    let path = dir.contains(*inode).then(|| dir.path_of(*inode));
                    (b.id, path)
                })
                .collect()
        });
        for (id, path) in found {
            let Some(path) = path else { continue };
            if path != opts.path && !path.starts_with(&prefix) {
                continue;
            }
            cookie += 1;
            if cookie <= skip {
                continue;
            }
            lines.push(format!("blk_{id}\t{path}"));
        }
    }
    let filler = if !lines.is_empty() {
        lines.len().to_string()
    } else if skip == 0 {
        "no".to_string()
    } else {
        "no more".to_string()
    };
    let _ = writeln!(out, "Cookie:\t{}", cookie.max(skip));
    for l in &lines {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(
        out,
        "\n\nThe filesystem under path '{}' has {filler} CORRUPT files",
        opts.path
    );
    out.push('\n');
}

/// Runs fsck and returns the whole report text. Synchronous (short lock holds, but a
/// long walk): call it from a blocking thread.
pub fn run(
    fs: &Namesystem,
    opts: &FsckOptions,
    settings: FsckSettings,
    who: &FsckRequester,
) -> String {
    let started = Instant::now();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "FSCK started by {} (auth:SIMPLE) from /{} for path {} at {}",
        who.user,
        who.remote_ip,
        opts.path,
        java_date(fs.now().wall_ms)
    );
    tracing::info!(user = %who.user, from = %who.remote_ip, path = %opts.path, "FSCK started");
    let fail = |out: &mut String, msg: &str| {
        let _ = writeln!(
            out,
            "FSCK ended at {} in {} milliseconds",
            java_date(fs.now().wall_ms),
            started.elapsed().as_millis()
        );
        let _ = writeln!(out, "{msg}");
        let _ = write!(out, "\n\nFsck on path '{}' {FAILURE_STATUS}", opts.path);
    };
    let target = match resolve(fs, &opts.path) {
        Ok(t) => t,
        Err(e) => {
            fail(&mut out, &e);
            return out;
        }
    };
    if matches!(target, Target::Missing) {
        let _ = write!(out, "\n\nPath '{}' {NONEXISTENT_STATUS}", opts.path);
        return out;
    }
    if opts.list_corrupt_file_blocks {
        list_corrupt_file_blocks(fs, opts, &mut out);
        return out;
    }
    if opts.move_ {
        fail(
            &mut out,
            "fsck -move is not supported by rhdfs: the remains of corrupt files cannot be copied to /lost+found",
        );
        return out;
    }
    let mut w = Walker {
        fs,
        opts,
        settings,
        pool: fs.block_pool_id().to_string(),
        out,
        res: FsckResult::default(),
        total_dirs: 0,
        to_delete: Vec::new(),
    };
    match target {
        Target::Dir(id) => w.walk_dir(opts.path.clone(), id),
        Target::File(Entry::File {
            length,
            replication,
            blocks,
            open,
            ..
        }) => w.check_file(&opts.path, length, replication, &blocks, open),
        Target::File(Entry::Dir { .. }) | Target::Missing => {}
    }
    let mut internal_error = false;
    if !w.to_delete.is_empty() {
        let caller = fs.with_ns(|ns| ns.caller(&who.user, Vec::new()));
        for p in &w.to_delete {
            match fs.delete(&caller, p, true) {
                Ok(_) => tracing::info!("Fsck: deleted corrupt file {p}"),
                Err(e) => {
                    tracing::error!("Fsck: error deleting corrupted file {p}: {e}");
                    internal_error = true;
                }
            }
        }
    }
    let nodes = fs.block_manager().node_counts();
    let healthy = w.res.is_healthy();
    let mut out = w.out;
    let _ = write!(
        out,
        "\nStatus: {}\n",
        if healthy { "HEALTHY" } else { "CORRUPT" }
    );
    let _ = writeln!(out, " Number of data-nodes:\t{}", nodes.live);
    let _ = writeln!(out, " Number of racks:\t\t{}", nodes.racks);
    let _ = writeln!(out, " Total dirs:\t\t\t{}", w.total_dirs);
    let _ = writeln!(out, " Total symlinks:\t\t0");
    let _ = writeln!(out, "\nReplicated Blocks:");
    let _ = writeln!(
        out,
        "{}",
        w.res
            .replicated_text(settings.default_replication, settings.min_replication)
    );
    let _ = writeln!(out, "\nErasure Coded Block Groups:");
    let _ = writeln!(out, "{}", FsckResult::default().erasure_coded_text());
    if internal_error {
        fail(&mut out, "fsck encountered internal errors!");
        return out;
    }
    let _ = writeln!(
        out,
        "FSCK ended at {} in {} milliseconds",
        java_date(fs.now().wall_ms),
        started.elapsed().as_millis()
    );
    let _ = write!(
        out,
        "\n\nThe filesystem under path '{}' {}",
        opts.path,
        if healthy {
            HEALTHY_STATUS
        } else {
            CORRUPT_STATUS
        }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_from_params() {
        let o = FsckOptions::from_params([
            ("ugi", "alice"),
            ("files", "1"),
            ("blocks", "1"),
            ("replicadetails", "1"),
            ("path", "/a b"),
        ]);
        assert_eq!(o.path, "/a b");
        assert!(o.files && o.blocks && o.replica_details && !o.locations);
        assert_eq!(o.user.as_deref(), Some("alice"));
        assert_eq!(FsckOptions::from_params([]).path, "/");
    }

    #[test]
    fn child_paths() {
        assert_eq!(child_path("/", b"a"), "/a");
        assert_eq!(child_path("/a", b"b"), "/a/b");
    }
}
