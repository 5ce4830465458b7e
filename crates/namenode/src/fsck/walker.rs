//! The subtree walk: directory entries read a batch per namespace lock hold, each file's
//! blocks checked against the block manager's views, Hadoop's per-file and per-block lines.

use std::fmt::Write as _;

use rhdfs_blockmanager::views::{BlockView, ReplicaView};
use rhdfs_blockmanager::{BlockUcState, views::VIEW_CHUNK};

use super::format::FsckResult;
use super::lost_found::MoveJob;
use super::options::*;
use super::policy::{DEFAULT_POLICY, StoragePolicySummary};
use crate::fsdir::permission::{Caller, Check, EXECUTE, READ};
use crate::fsdir::{FsPath, InodeKind, Resolved};
use crate::namesystem::Namesystem;

/// One directory entry read under the namespace lock.
pub(super) enum Entry {
    Dir {
        name: Vec<u8>,
        id: u64,
    },
    File {
        name: Vec<u8>,
        length: u64,
        replication: u16,
        mode: u16,
        blocks: Vec<crate::fsdir::FileBlock>,
        open: bool,
        /// The caller may not read the file (getBlockLocations' AccessControlException).
        denied: Option<String>,
    },
}

pub(super) struct Frame {
    path: String,
    id: u64,
    after: Option<Vec<u8>>,
}

pub(super) fn child_path(parent: &str, name: &[u8]) -> String {
    let name = String::from_utf8_lossy(name);
    if parent.ends_with('/') {
        format!("{parent}{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// `Resolved` of a child of the directory resolved as `dir`.
pub(super) fn child_resolved(dir: &Resolved, id: u64) -> Resolved {
    let mut ids = dir.ids.clone();
    ids.push(Some(id));
    Resolved {
        ids,
        not_dir_at: None,
    }
}

pub(super) struct Walker<'a> {
    pub(super) fs: &'a Namesystem,
    pub(super) opts: &'a FsckOptions,
    pub(super) caller: &'a Caller,
    pub(super) settings: FsckSettings,
    pub(super) pool: String,
    pub(super) out: String,
    pub(super) res: FsckResult,
    pub(super) total_dirs: u64,
    pub(super) to_delete: Vec<String>,
    pub(super) to_move: Vec<MoveJob>,
    pub(super) storage: Option<StoragePolicySummary>,
    /// The AccessControlException that stopped the walk.
    pub(super) error: Option<String>,
}

impl Walker<'_> {
    /// Reads up to LIST_BATCH entries of directory `path` (inode `id`) after `after`,
    /// checking the caller's r-x on it as getListing does.
    pub(super) fn list(
        &self,
        path: &str,
        id: u64,
        after: Option<&[u8]>,
    ) -> Result<Vec<Entry>, String> {
        let p = FsPath::parse(path).map_err(|e| e.to_string())?;
        self.fs.with_ns_op("fsck", |ns| {
            let r = ns.resolve(&p);
            let checker = ns.checker(self.caller);
            checker
                .check(
                    &r,
                    Check {
                        access: Some(READ | EXECUTE),
                        ..Check::default()
                    },
                )
                .map_err(|e| e.to_string())?;
            let dir = ns.dir();
            let Some(d) = dir.get(id).and_then(|i| i.as_dir()) else {
                return Ok(Vec::new());
            };
            Ok(dir
                .children_after(d, after)
                .take(LIST_BATCH)
                .filter_map(|(name, cid)| {
                    let inode = dir.get(cid)?;
                    Some(match &inode.kind {
                        InodeKind::Dir(_) => Entry::Dir {
                            name: name.to_vec(),
                            id: cid,
                        },
                        InodeKind::File(f) => {
                            let read = Check {
                                access: Some(READ),
                                ..Check::default()
                            };
                            Entry::File {
                                name: name.to_vec(),
                                length: f.length(),
                                replication: f.replication(),
                                mode: inode.perm.mode,
                                blocks: f.blocks.to_vec(),
                                open: f.uc().is_some(),
                                denied: checker
                                    .check(&child_resolved(&r, cid), read)
                                    .err()
                                    .map(|e| e.to_string()),
                            }
                        }
                    })
                })
                .collect())
        })
    }

    /// Hadoop prints an empty line every 1000 entries checked (progress).
    pub(super) fn tick(&mut self) {
        if (self.total_dirs + self.res.total_files).is_multiple_of(1000) {
            self.out.push('\n');
        }
    }

    pub(super) fn enter_dir(&mut self, path: &str) {
        self.tick();
        if self.opts.files {
            let _ = writeln!(self.out, "{path} <dir>");
        }
        self.total_dirs += 1;
    }

    /// Depth-first, in listing order, as Hadoop's recursive checkDir.
    pub(super) fn walk_dir(&mut self, path: String, id: u64) {
        self.enter_dir(&path);
        let mut stack = vec![Frame {
            path,
            id,
            after: None,
        }];
        while let Some(top) = stack.last() {
            let entries = match self.list(&top.path, top.id, top.after.as_deref()) {
                Ok(e) => e,
                Err(e) => {
                    self.error = Some(e);
                    return;
                }
            };
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
                        mode,
                        blocks,
                        open,
                        denied,
                    } => {
                        if let Some(e) = denied {
                            self.error = Some(e);
                            return;
                        }
                        let p = child_path(&parent, &name);
                        self.tick();
                        self.check_file(&p, length, replication, mode, &blocks, open);
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

    pub(super) fn views(&self, blocks: &[crate::fsdir::FileBlock]) -> Vec<Option<BlockView>> {
        let ids: Vec<u64> = blocks.iter().map(|b| b.id).collect();
        let bm = self.fs.block_manager();
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(VIEW_CHUNK) {
            out.extend(bm.block_views(chunk));
        }
        out
    }

    pub(super) fn replica_info(&self, reps: &[ReplicaView]) -> String {
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
                    rhdfs_proto::storage_type_name(r.storage_type)
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

    /// The block's located replicas, as getBlockLocations gives them.
    pub(super) fn locations(&self, id: u64) -> Vec<rhdfs_blockmanager::Location> {
        self.fs
            .block_manager()
            .block_locations(id)
            .map(|l| l.locations)
            .unwrap_or_default()
    }

    pub(super) fn check_file(
        &mut self,
        path: &str,
        length: u64,
        replication: u16,
        mode: u16,
        blocks: &[crate::fsdir::FileBlock],
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
        } else if self.res.total_files.is_multiple_of(100) {
            self.out.push('.');
        }
        let views = self.views(blocks);
        let last_incomplete = open
            && views
                .last()
                .is_some_and(|v| v.as_ref().is_none_or(|v| v.state != BlockUcState::Complete));
        let (mut missing, mut corrupt, mut missize, mut corrupt_size, mut under) =
            (0u64, 0u64, 0u64, 0u64, 0u64);
        let mut mis_replicated = 0u64;
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
            // Rack spread (the block manager's RackSpread, Hadoop's verifyBlockPlacement).
            if let Some(why) = v
                .as_ref()
                .and_then(|v| v.rack_spread.violation(replication))
            {
                self.res.num_mis_replicated_blocks += 1;
                mis_replicated += 1;
                if !self.opts.files {
                    if under == 0 {
                        self.out.push('\n');
                    }
                    let _ = write!(self.out, "{path}: ");
                }
                let _ = writeln!(
                    self.out,
                    " Replica placement policy is violated for {ext}. {why}"
                );
            }
            if self.storage.is_some() {
                let types: Vec<i32> = self
                    .locations(b.id)
                    .iter()
                    .map(|l| l.storage_type)
                    .collect();
                if let Some(s) = self.storage.as_mut() {
                    s.add(&types, DEFAULT_POLICY);
                }
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
            } else {
                if self.opts.move_ {
                    let blocks = blocks.iter().map(|b| (*b, self.locations(b.id))).collect();
                    self.to_move.push(MoveJob {
                        path: path.to_string(),
                        mode,
                        blocks,
                    });
                }
                if self.opts.delete {
                    self.to_delete.push(path.to_string());
                }
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
            } else if under == 0 && mis_replicated == 0 {
                self.out.push_str(" OK\n");
            }
            if self.opts.blocks {
                let _ = writeln!(self.out, "{report}");
            }
        }
    }
}
